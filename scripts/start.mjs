#!/usr/bin/env node
// `npm start`: install what the service runs and build it when the inputs changed
// (setup.mjs --service: not the test, bench or lint tools), then run the server in this
// same process, so a restart costs one Node start-up, not three.
import { setupOrExit } from './setup.mjs';

setupOrExit({ scope: 'service' });
await import('../packages/server/dist/main.js');
