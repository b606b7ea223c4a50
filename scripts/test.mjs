// `npm test`: every *.test.ts under packages/*/test (helpers/, fixtures/ and playwright/
// hold no test files of node:test), with node's test runner (scripts/test-batch.mjs),
// TEST_CONCURRENCY files at a time, then the few files of ALONE one at a time
// (docs/architecture.md "Running the suite"). Arguments after `--` narrow the run to files whose path contains one of them.
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { upToDate } from './setup.mjs';
import { buildTestMirror, MIRROR } from './test-build.mjs';
import { groupFiles } from './test-groups.mjs';
import { probeAll } from '../packages/server/test/helpers/probe-services.mjs';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SKIP = new Set(['helpers', 'fixtures', 'playwright', 'node_modules']);

// Files that run one at a time after the parallel batch, each for a reason that another
// file beside it would break. Keep it short: a file that can be made to hold beside
// others is made to.
// Those that time the event loop, a p99 or a budget against wall-clock bounds: beside
// three other files on two cores they measured the machine, not the code (a clean-clone
// run: the event loop "held 458 ms", a p99 of 421 ms).
// They run in two lanes side by side, each one file at a time: the files that compute
// while they time (parsing, search, large answers) in the first, and in the second those
// that mostly wait while they time (DNS time-outs, stalled readers), which leave the first
// lane its core.
const TIMED = 'times the event loop or a latency against a wall-clock bound';
const WAITS = 'times waits (DNS time-outs, stalled readers) against wall-clock bounds, and computes little: it runs beside the first lane';
const ALONE = new Map([
  ...[
    'packages/server/test/http/large-mail-read.test.ts',
    'packages/server/test/http/search/search-load.test.ts',
    'packages/server/test/http/search/search-budget.test.ts',
    'packages/server/test/mail/parse/parse.test.ts',
    'packages/server/test/mail/parse/hostile-mail.test.ts',
    'packages/server/test/mail/parse/parsed-view-storm.test.ts',
    'packages/server/test/smtp/data-escapes.test.ts',
    'packages/server/test/smtp/attachment-policy-worst-case.test.ts',
    'packages/server/test/memory/young-garbage.test.ts',
  ].map((f) => [f, TIMED]),
  ...[
    'packages/server/test/http/unread-answers.test.ts',
    'packages/server/test/mail/auth/auth-dns-silence.test.ts',
    'packages/server/test/mail/auth/mail-auth.test.ts',
  ].map((f) => [f, WAITS]),
]);

// The longest files start first (scripts/test-batch.mjs keeps this order), so that the
// parallel batch does not end with one of them still running alone (npm installs, tsc,
// Chromium, CLI processes); the rest follow in path order.
const SLOW_FIRST = [
  'packages/client/test/packaging.test.ts',
  // Starts real rspamd and spamd processes (a cold rspamd takes about 12 s to answer).
  'packages/server/test/report/spam-scanner.test.ts',
  'packages/client/test/readme-examples.test.ts',
  'packages/client/test/cli.test.ts',
  'packages/client/test/playwright.test.ts',
  'packages/client/test/cli-bin.test.ts',
  'packages/server/test/http/cors-browser.test.ts',
  'packages/client/test/cli-messages.test.ts',
  'packages/client/test/api-types.test.ts',
  'packages/client/test/sdk.test.ts',
  'packages/web/test/',
];

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
const rank = (f) => {
  const i = SLOW_FIRST.findIndex((s) => f.startsWith(s));
  return i === -1 ? SLOW_FIRST.length : i;
};
const parallel = files.filter((f) => !ALONE.has(f)).sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
const alone = files.filter((f) => ALONE.has(f));

// Two processes a core (4 on 2 cores, at most 8): a test process computes about half of
// its time and waits on timers, child processes and round trips the rest (the CPU figures
// this prints). With 3 on 2 cores the cores were busy 79% of the parallel batch; the files
// that time the event loop or a p99 against wall-clock bounds, which 4 at once once
// starved, run alone after it (ALONE).
const fallback = Math.min(8, Math.max(2, availableParallelism() * 2));
const concurrency = Number(process.env.TEST_CONCURRENCY ?? fallback);
if (!Number.isInteger(concurrency) || concurrency < 1) {
  console.error(`temp-inbox tests: TEST_CONCURRENCY must be a whole number of at least 1, not ${process.env.TEST_CONCURRENCY}`);
  process.exit(1);
}

/** Runs one batch with node's test runner; resolves with its exit code. */
// `held`: its output is printed whole when it ends, so that two batches side by side do not
// mix their lines.
function batch(name, list, atOnce, held = false) {
  console.log(`temp-inbox tests: ${name}: ${list.length} ${list.length === 1 ? 'process' : 'processes'}, ${atOnce} at a time`);
  const started = Date.now();
  return new Promise((resolve) => {
    const flags = mirrored ? ['--enable-source-maps'] : ['--import', 'tsx'];
    const hooks = [...flags, '--import', pathToFileURL(join(ROOT, 'scripts/test-cpu.mjs')).href];
    const child = spawn(process.execPath, [...hooks, join(ROOT, 'scripts/test-batch.mjs'), ...list], {
      cwd: ROOT,
      env: { ...process.env, ...workers, TEST_SERVICES: services, TEST_BATCH_CONCURRENCY: String(atOnce), TEST_CPU_LOG: cpuLog },
      stdio: held ? ['ignore', 'pipe', 'pipe'] : 'inherit',
    });
    const output = [];
    child.stdout?.on('data', (chunk) => output.push(chunk));
    child.stderr?.on('data', (chunk) => output.push(chunk));
    child.on('close', (code, signal) => {
      if (held) process.stdout.write(Buffer.concat(output));
      console.log(`temp-inbox tests: ${name} done in ${Math.round((Date.now() - started) / 1000)} s${code === 0 ? '' : ' (failed)'}`);
      resolve(code ?? (signal ? 1 : 0));
    });
  });
}

// Each file's wall time and CPU (its own and its child processes'), written by test-cpu.mjs.
const cpuLog = join(tmpdir(), `temp-inbox-test-times-${process.pid}.jsonl`);
// With the build current (npm test's setup made it), the servers the tests start from source
// start their worker threads from the build, each without tsx's start-up
// (packages/server/src/workers/module-worker.ts); with it stale, from source as before.
const workers = process.env.TEMP_INBOX_WORKERS || !upToDate('all') ? {} : { TEMP_INBOX_WORKERS: 'dist' };
if (!process.env.TEMP_INBOX_WORKERS && !workers.TEMP_INBOX_WORKERS) console.log('temp-inbox tests: the build is not current (npm test builds first), so worker threads start from source');

// The test processes run the mirror's JavaScript (scripts/test-build.mjs) with plain Node and
// source maps, so that a failure names the TypeScript line; with TEST_MIRROR=0 the sources
// run through tsx instead, as a single file is run by hand.
const mirrored = process.env.TEST_MIRROR !== '0';
const testPath = (f) => (mirrored ? join(MIRROR, f.replace(/\.ts$/, '.js')) : join(ROOT, f));

// A process per file, except under the mirror, where most short files run a few to a
// process (scripts/test-groups.mjs): TEST_GROUP_SIZE at most (1: a process per file).
const groupSize = Number(process.env.TEST_GROUP_SIZE ?? 4);
if (!Number.isInteger(groupSize) || groupSize < 1) {
  console.error(`temp-inbox tests: TEST_GROUP_SIZE must be a whole number of at least 1, not ${process.env.TEST_GROUP_SIZE}`);
  process.exit(1);
}
/** The processes that run `list`: `{ path, members }` (the repository paths of the test files in it). */
function unitsOf(list, groupable) {
  if (!mirrored || groupSize === 1) return list.map((f) => ({ path: testPath(f), members: [f] }));
  return groupFiles({ root: ROOT, files: list, size: groupSize, dir: join(MIRROR, '.groups'), compiled: testPath, groupable });
}
const membersOf = new Map();

/** What a process ran, in the repository's terms: a test file's path, or a group's files. */
function sourceOf(file) {
  const members = membersOf.get(file);
  if (members && members.length > 1) return `${members.length} files: ${members.map((m) => m.replace(/^packages\/[^/]+\/test\//, '')).join(', ')}`;
  return file.startsWith(`${MIRROR}/`) ? relative(MIRROR, file).replace(/\.js$/, '.ts') : relative(ROOT, file);
}

/** The slowest files with their CPU: a file that mostly waits shows little CPU for its time. */
function printSlowest() {
  let rows;
  try {
    rows = readFileSync(cpuLog, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  } catch {
    return;
  }
  rmSync(cpuLog, { force: true });
  // TEST_TIMES names a file that gets every file's figures, one JSON object a line.
  if (process.env.TEST_TIMES) writeFileSync(process.env.TEST_TIMES, rows.map((r) => `${JSON.stringify({ ...r, file: sourceOf(r.file), files: membersOf.get(r.file) })}\n`).join(''));
  rows.sort((a, b) => b.wall - a.wall);
  const cpu = rows.reduce((s, r) => s + r.cpu, 0);
  const wall = rows.reduce((s, r) => s + r.wall, 0);
  console.log(`temp-inbox tests: ${rows.length} ${rows.length === 1 ? 'process' : 'processes'} took ${Math.round(wall)} s in all and ${Math.round(cpu)} s of CPU; the slowest (wall s, CPU s):`);
  for (const r of rows.slice(0, 25)) console.log(`  ${r.wall.toFixed(1).padStart(6)} ${r.cpu.toFixed(1).padStart(6)}  ${sourceOf(r.file)}`);
}

const started = Date.now();
if (mirrored) {
  const compiled = await buildTestMirror();
  console.log(`temp-inbox tests: compiled ${compiled} TypeScript files into ${relative(ROOT, MIRROR)}/ (plain Node runs them) in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}
// PostgreSQL, Redis and Chromium are probed once for the whole run; every test file reads
// the answer from TEST_SERVICES (packages/server/test/helpers/services.ts).
const services = process.env.TEST_SERVICES ?? JSON.stringify(await probeAll());
let failed = false;
const units = unitsOf(parallel, (f) => rank(f) === SLOW_FIRST.length);
for (const u of units) membersOf.set(u.path, u.members);
if (units.length < parallel.length) console.log(`temp-inbox tests: ${parallel.length} files of the parallel batch run in ${units.length} processes (groups of up to ${groupSize}: scripts/test-groups.mjs)`);
if (units.length > 0) failed = (await batch('parallel batch', units.map((u) => u.path), concurrency)) !== 0;
if (alone.length > 0) {
  for (const f of alone) console.log(`temp-inbox tests: alone: ${f}: ${ALONE.get(f)}`);
  const lanes = [alone.filter((f) => ALONE.get(f) === TIMED), alone.filter((f) => ALONE.get(f) === WAITS)].filter((l) => l.length > 0);
  for (const f of alone) membersOf.set(testPath(f), [f]);
  const codes = await Promise.all(lanes.map((lane, i) => batch(`one at a time, lane ${i + 1} of ${lanes.length}`, lane.map(testPath), 1, lanes.length > 1)));
  failed = codes.some((c) => c !== 0) || failed;
}
printSlowest();
console.log(`temp-inbox tests: ${failed ? 'FAILED' : 'passed'}, all done in ${Math.round((Date.now() - started) / 1000)} s`);
process.exit(failed ? 1 : 0);
