// One batch of scripts/test.mjs: the files given, in the order given, TEST_BATCH_CONCURRENCY
// at a time, through node:test's run() (`node --test` with paths sorts them, which would
// start the longest files last). Started with `--import tsx`, which each file's process
// inherits. The reporter is node's own: spec on a terminal, TAP otherwise. At the end the
// slowest files are listed with the time their cases took, so a slow phase shows its cause.
import { relative } from 'node:path';
import { run } from 'node:test';
import { spec, tap } from 'node:test/reporters';

const files = process.argv.slice(2);
const concurrency = Number(process.env.TEST_BATCH_CONCURRENCY ?? 1);
const stream = run({ files, concurrency });
/** @type {Map<string, number>} milliseconds the top-level cases of each file took */
const took = new Map();
const count = (data) => {
  if (data.nesting === 0 && data.file && data.details?.duration_ms !== undefined) {
    took.set(data.file, (took.get(data.file) ?? 0) + data.details.duration_ms);
  }
};
stream.on('test:pass', count);
stream.on('test:fail', (data) => {
  count(data);
  if (!data.todo) process.exitCode = 1;
});
const out = stream.compose(process.stdout.isTTY ? spec : tap);
out.pipe(process.stdout, { end: false });
out.on('end', () => {
  const slowest = [...took].sort((a, b) => b[1] - a[1]).slice(0, 20);
  if (slowest.length < 2) return;
  console.log('# slowest files (seconds their cases took):');
  for (const [file, ms] of slowest) console.log(`#   ${(ms / 1000).toFixed(1).padStart(6)}  ${relative(process.cwd(), file)}`);
});
