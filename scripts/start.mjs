#!/usr/bin/env node
// `npm start`: install and build when the inputs changed (setup.mjs), then run the
// server in this same process, so a restart costs one Node start-up, not three.
import { setupOrExit } from './setup.mjs';

setupOrExit();
await import('../packages/server/dist/main.js');
