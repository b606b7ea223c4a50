// The young generation of worker threads. `npm start` fixes the server thread's young
// generation with V8 flags (`--min-semi-space-size=8 --max-semi-space-size=8`, README
// "Memory"), but V8's flags belong to the process: every worker thread's heap took the
// same two 8 MB semi-spaces, and a worker's resourceLimits.maxYoungGenerationSizeMb was
// overridden by them. Cleared once the server thread's heap is made (a heap reads them
// only when it is made), they leave each worker thread's young generation to its own
// resourceLimits (parse.ts, auth.ts) or to V8's default, which starts at 1 MB.
// docs/decisions.md "Memory of the threads".
import { setFlagsFromString } from 'node:v8';

/** Call before the first worker thread starts; the server thread's own heap keeps its flags. */
export function leaveYoungGenerationsToWorkers(): void {
  setFlagsFromString('--min-semi-space-size=0');
  setFlagsFromString('--max-semi-space-size=0');
}
