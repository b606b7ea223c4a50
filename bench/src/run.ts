// Orchestrator: runs the benches one after another, prints one table and writes
// bench/results/<timestamp>[-quick].json. Exit code 0 when every bench ran
// (missed targets are results, not failures); 1 when a bench crashed.
//
//   node --import tsx bench/src/run.ts [--quick] [--only=api-read,latency]
import { mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join, relative } from 'node:path';
import { performance } from 'node:perf_hooks';
import { apiRead } from './api-read.js';
import { authIngest } from './auth-ingest.js';
import { codes } from './codes.js';
import { dataWait } from './data-wait.js';
import { growth } from './growth.js';
import { hostile } from './hostile.js';
import { latency } from './latency.js';
import { buildFingerprint, machineInfo } from './lib/machine.js';
import { RESULTS_DIR, ROOT } from './lib/paths.js';
import { removeAllTempDirs, stopAllChildren } from './lib/procs.js';
import { table, type Bench, type BenchOutput, type Row } from './lib/report.js';
import { memory } from './memory.js';
import { reportIngest } from './report-ingest.js';
import { search } from './search.js';
import { smtpAnchors } from './smtp-anchors.js';
import { smtpIngest } from './smtp-ingest.js';
import { startup } from './startup.js';
import { streams } from './streams.js';

const BENCHES: Record<string, Bench> = {
  'api-read': apiRead,
  'smtp-ingest': smtpIngest,
  'smtp-anchors': smtpAnchors,
  latency,
  'data-wait': dataWait,
  streams,
  growth,
  memory,
  hostile,
  startup,
  codes,
  search,
  'auth-ingest': authIngest,
  'report-ingest': reportIngest,
};

const argv = process.argv.slice(2);
const quick = argv.includes('--quick');
const onlyArg = argv.find((a) => a.startsWith('--only='));
const only = onlyArg ? onlyArg.slice('--only='.length).split(',').filter(Boolean) : Object.keys(BENCHES);
const unknown = only.filter((n) => !(n in BENCHES));
if (unknown.length || argv.some((a) => a !== '--quick' && !a.startsWith('--only='))) {
  process.stderr.write(`usage: run.ts [--quick] [--only=${Object.keys(BENCHES).join(',')}]\n`);
  process.exit(2);
}

/**
 * A bench that overruns this is stopped (its children killed) and reported as crashed.
 * The quick hostile bench takes about 95 s on a loaded 2-core machine: hence 180 s.
 */
const TIMEOUT_MS = quick ? 180_000 : 20 * 60_000;

const started = new Date();
const t0 = performance.now();
const machine = machineInfo();
const buildAtStart = buildFingerprint();
const log = (name: string) => (m: string) => process.stdout.write(`[${((performance.now() - t0) / 1000).toFixed(1).padStart(6)}s] ${name}: ${m}\n`);

process.stdout.write(
  `temp-inbox bench (${quick ? 'quick' : 'full'}) — ${started.toISOString()}\n` +
    `${machine.cpuModel}, ${machine.nproc} cores, ${(machine.totalMemoryBytes / 2 ** 30).toFixed(1)} GiB, node ${machine.node}, load ${machine.loadavgAtStart.map((l) => l.toFixed(2)).join(' ')}\n\n`,
);

const results: Record<string, { ok: boolean; seconds: number; error?: string } & Partial<BenchOutput>> = {};
const rows: Row[] = [];
for (const name of only) {
  const bench = BENCHES[name]!;
  const b0 = performance.now();
  log(name)('start');
  let timer: NodeJS.Timeout | undefined;
  try {
    const out = await Promise.race([
      bench({ quick, log: log(name) }),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`timed out after ${TIMEOUT_MS / 1000} s`)), TIMEOUT_MS);
      }),
    ]);
    results[name] = { ok: true, seconds: (performance.now() - b0) / 1000, ...out };
    rows.push(...out.rows);
    log(name)(`done in ${((performance.now() - b0) / 1000).toFixed(1)} s`);
  } catch (err) {
    const message = err instanceof Error ? (err.stack ?? err.message) : String(err);
    results[name] = { ok: false, seconds: (performance.now() - b0) / 1000, error: message };
    rows.push({ bench: name, measure: 'CRASHED', ours: '', baseline: '', result: (err as Error).message?.split('\n')[0] ?? '', target: '', verdict: 'not measured' });
    log(name)(`CRASHED: ${message}`);
  } finally {
    clearTimeout(timer);
    // Whatever the bench left running (a crash, a timeout) is stopped here.
    await stopAllChildren();
  }
}
removeAllTempDirs();

const buildAtEnd = buildFingerprint();
const rebuilt = buildAtStart !== buildAtEnd;
const crashed = Object.entries(results).filter(([, r]) => !r.ok).map(([n]) => n);
process.stdout.write(`\n${table(rows)}\n\n`);
mkdirSync(RESULTS_DIR, { recursive: true });
const stamp = started.toISOString().replace(/:/g, '-').replace(/\.\d+Z$/, 'Z');
const file = join(RESULTS_DIR, `${stamp}${quick ? '-quick' : ''}.json`);
writeFileSync(
  file,
  JSON.stringify(
    {
      mode: quick ? 'quick' : 'full',
      date: started.toISOString(),
      seconds: (performance.now() - t0) / 1000,
      machine: { ...machine, loadavgAtEnd: loadavg() },
      build: { atStart: buildAtStart, atEnd: buildAtEnd, rebuiltDuringRun: rebuilt },
      rows,
      benches: results,
    },
    null,
    2,
  ) + '\n',
);
if (rebuilt) process.stdout.write('WARNING: packages/*/dist was rebuilt during the run; servers started after that ran other code.\n');
const missed = rows.filter((r) => r.verdict === 'missed').length;
process.stdout.write(`wrote ${relative(ROOT, file)}; ${rows.filter((r) => r.verdict === 'met').length} met, ${missed} missed (targets)${crashed.length ? `; CRASHED: ${crashed.join(', ')}` : ''}\n`);
process.exit(crashed.length ? 1 : 0);
