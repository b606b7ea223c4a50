// `npm test`: every *.test.ts under packages/*/test (helpers/, fixtures/ and playwright/
// hold no test files of node:test), with node's test runner. TEST_CONCURRENCY sets how
// many files run at once (docs/architecture.md "Running the suite"); arguments after `--`
// narrow the run to files whose path contains one of them.
import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SKIP = new Set(['helpers', 'fixtures', 'playwright', 'node_modules']);

function testFiles(dir) {
  const out = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.isDirectory()) {
      if (!SKIP.has(entry.name)) out.push(...testFiles(join(dir, entry.name)));
    } else if (entry.name.endsWith('.test.ts')) out.push(join(dir, entry.name));
  }
  return out;
}

const packages = join(ROOT, 'packages');
let files = readdirSync(packages, { withFileTypes: true })
  .filter((d) => d.isDirectory())
  .flatMap((d) => {
    try {
      return testFiles(join(packages, d.name, 'test'));
    } catch {
      return [];
    }
  })
  .map((f) => relative(ROOT, f))
  .sort();
const only = process.argv.slice(2);
if (only.length > 0) files = files.filter((f) => only.some((o) => f.includes(o)));
if (files.length === 0) {
  console.error(`temp-inbox tests: no test file matches ${only.join(' ')}`);
  process.exit(1);
}
const concurrency = Number(process.env.TEST_CONCURRENCY ?? 1);
if (!Number.isInteger(concurrency) || concurrency < 1) {
  console.error(`temp-inbox tests: TEST_CONCURRENCY must be a whole number of at least 1, not ${process.env.TEST_CONCURRENCY}`);
  process.exit(1);
}
console.log(`temp-inbox tests: ${files.length} files, ${concurrency} at a time`);
const started = Date.now();
const child = spawn(process.execPath, ['--import', 'tsx', '--test', `--test-concurrency=${concurrency}`, ...files], {
  cwd: ROOT,
  stdio: 'inherit',
});
child.on('exit', (code, signal) => {
  console.log(`temp-inbox tests: done in ${Math.round((Date.now() - started) / 1000)} s`);
  process.exit(code ?? (signal ? 1 : 0));
});
