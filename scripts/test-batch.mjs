// One batch of scripts/test.mjs: the files given, in the order given, TEST_BATCH_CONCURRENCY
// at a time, through node:test's run() (`node --test` with paths sorts them, which would
// start the longest files last). Started with `--import tsx` and `--import test-cpu.mjs`
// (each file's time), which each file's process inherits. The reporter is node's own: spec
// on a terminal, TAP otherwise.
import { run } from 'node:test';
import { spec, tap } from 'node:test/reporters';

const files = process.argv.slice(2);
const concurrency = Number(process.env.TEST_BATCH_CONCURRENCY ?? 1);
const stream = run({ files, concurrency });
stream.on('test:fail', (data) => {
  if (!data.todo) process.exitCode = 1;
});
stream.compose(process.stdout.isTTY ? spec : tap).pipe(process.stdout);
