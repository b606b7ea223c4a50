// The young generation of worker threads (src/workers/worker-heap.ts): V8's semi-space
// flags, which `npm start` sets for the server's thread, belong to the whole process and
// override a worker's resourceLimits; once cleared, a worker's own limit holds, and the
// server's thread keeps its flags. Run in a child process started with those flags.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const workerHeap = fileURLToPath(new URL('../../src/workers/worker-heap.ts', import.meta.url));

// New space's size in MB (V8 reports a semi-space's): of the thread itself, then of a worker limited to a 3 MB young
// generation started before the flags are cleared, and of one started after.
const script = `
import { Worker } from 'node:worker_threads';
import { getHeapSpaceStatistics } from 'node:v8';
import { leaveYoungGenerationsToWorkers } from ${JSON.stringify(workerHeap)};
const newSpace = () => getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size / 1048576;
const code = "Promise.all([import('node:worker_threads'), import('node:v8')]).then(([{ parentPort }, v8]) => parentPort.postMessage(v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size / 1048576));";
const inWorker = () => new Promise((resolve, reject) => {
  const w = new Worker(code, { eval: true, resourceLimits: { maxYoungGenerationSizeMb: 3 } });
  w.once('message', (mb) => { void w.terminate(); resolve(mb); });
  w.once('error', reject);
});
const before = await inWorker();
leaveYoungGenerationsToWorkers();
const after = await inWorker();
console.log(JSON.stringify({ main: newSpace(), before, after }));
`;

describe("worker threads' young generation", () => {
  it("follows the worker's own limit once the process's semi-space flags are cleared; the server's thread keeps 8 MB semi-spaces", () => {
    const out = execFileSync(process.execPath, ['--min-semi-space-size=8', '--max-semi-space-size=8', '--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8' });
    const { main, before, after } = JSON.parse(out.trim().split('\n').pop()!) as { main: number; before: number; after: number };
    assert.ok(main >= 8, `the server's thread: ${main} MB of new space`);
    assert.ok(before >= 8, `a worker before: the flags' 8 MB semi-spaces (${before} MB of new space)`);
    assert.ok(after <= 2, `a worker after: its own 3 MB young generation (${after} MB of new space)`);
  });
});
