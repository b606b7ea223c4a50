#!/usr/bin/env node
// `npm start`: install what the service runs and build it when the inputs changed
// (setup.mjs --service: not the test, bench or lint tools), then run the server in this
// same process, so a restart costs one Node start-up, not three. `node scripts/start.mjs`
// does the same without npm's own start-up (about 0.1 s on a quiet machine, a second
// on a loaded one: docs/benchmarks.md "Restart").
import module from 'node:module';
import { setupOrExit } from './setup.mjs';

setupOrExit({ scope: 'service' });
// Node 22.1 and later keep the compiled code of every module the server loads (in the
// OS temp dir, checked against each file's contents), which takes about a tenth off a
// restart's CPU; Node 20 has no such cache and starts as before.
module.enableCompileCache?.();
await import('../packages/server/dist/main.js');
