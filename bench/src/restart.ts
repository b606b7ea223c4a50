// Restart: how long the service takes to answer /health_check after the command, on a
// checkout whose install and build are current (scripts/setup.mjs skips both), side by
// side with starting the built server directly. The commands take turns (A B C A B C …)
// so that a change in the machine's load hits each alike; the first round is a warm-up
// and is not counted. Each command runs in its own process group, is polled every
// 10 ms and is stopped with SIGTERM once it answers; the CPU it used up to then (every
// process of its group: npm, a shell, Node) is read from /proc.
//
//   node --import tsx bench/src/restart.ts [--rounds=10] [--root=DIR] [--no-npm]
//
// --root measures another checkout (a fresh clone after `npm start`, whose
// node_modules holds only what the service needs); the default is this one.
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { ROOT } from './lib/paths.js';
import { freePort, makeTempDir, removeAllTempDirs, sleep } from './lib/procs.js';
import { fmt, median } from './lib/stats.js';

const argv = process.argv.slice(2);
const option = (name: string) => argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const rounds = Number(option('rounds') ?? 10);
const root = resolve(option('root') ?? ROOT);
if (!Number.isInteger(rounds) || rounds < 1 || argv.some((a) => !/^--(rounds|root)=|^--no-npm$/.test(a))) {
  process.stderr.write('usage: restart.ts [--rounds=N] [--root=DIR] [--no-npm]\n');
  process.exit(2);
}

/** The node flags of the root package.json's "start" script (`node [flags] scripts/start.mjs`). */
function startFlags(): string[] {
  const start = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts['start'] ?? '';
  const m = /^node((?:\s+--\S+)*)\s+scripts\/start\.mjs$/.exec(start.trim());
  if (!m) throw new Error(`${root}/package.json "start" is not "node [--flags] scripts/start.mjs": ${start}`);
  return m[1]!.trim().split(/\s+/).filter(Boolean);
}

interface Command {
  label: string;
  command: string;
  args: string[];
}

const flags = startFlags();
const COMMANDS: Command[] = [
  { label: 'node scripts/start.mjs', command: process.execPath, args: [...flags, 'scripts/start.mjs'] },
  { label: 'node packages/server/dist/main.js', command: process.execPath, args: [...flags, 'packages/server/dist/main.js'] },
  ...(argv.includes('--no-npm') ? [] : [{ label: 'npm start', command: 'npm', args: ['start', '--silent'] }]),
];

/** CPU seconds (user + system, with reaped children's) of every process in process group `pgid` (Linux /proc). */
function groupCpuSeconds(pgid: number): number {
  let ticks = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue; // Ended between the listing and the read.
    }
    // After "pid (comm) ": state, ppid, pgrp, … utime, stime, cutime, cstime at indexes 11 to 14.
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(f[2]) === pgid) ticks += Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]);
  }
  return ticks / 100;
}

/** Runs one command until /health_check answers 200; its wall time and CPU to then. */
async function timeToHealthy(cmd: Command, dataDir: string): Promise<{ ms: number; cpu: number }> {
  const port = await freePort();
  const started = performance.now();
  const child = spawn(cmd.command, cmd.args, {
    cwd: root,
    detached: true,
    env: { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? dataDir, HTTP_HOST: '127.0.0.1', HTTP_PORT: String(port), SMTP_HOST: '127.0.0.1', SMTP_PORT: '0', DATA_DIR: dataDir, LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-2000)));
  let gone = false;
  const exited = new Promise<void>((done) => child.once('exit', () => ((gone = true), done())));
  try {
    for (;;) {
      if (gone) throw new Error(`${cmd.label} exited before answering:\n${stderr}`);
      const ok = await fetch(`http://127.0.0.1:${port}/health_check`).then(
        (r) => r.status === 200,
        () => false,
      );
      if (ok) return { ms: performance.now() - started, cpu: groupCpuSeconds(child.pid!) };
      if (performance.now() - started > 60_000) throw new Error(`${cmd.label} did not answer within 60 s:\n${stderr}`);
      await sleep(10);
    }
  } finally {
    try {
      process.kill(-child.pid!, 'SIGTERM');
    } catch {
      // Already gone.
    }
    await exited;
  }
}

if (!existsSync(join(root, 'packages/server/dist/main.js'))) throw new Error(`${root} is not built: run \`npm start\` (or \`npm run setup\`) there first`);
const check = spawn(process.execPath, ['scripts/setup.mjs', '--check', '--service'], { cwd: root, stdio: 'ignore' });
const checkCode = await new Promise<number | null>((done) => check.once('exit', done));
if (checkCode !== 0) throw new Error(`the service setup of ${root} is not current (\`node scripts/setup.mjs --check --service\` exit ${checkCode}): \`npm start\` would install and build`);

const load0 = loadavg();
process.stdout.write(`restart to /health_check in ${root}: ${rounds} rounds after a warm-up, node ${process.version}, load ${load0.map((l) => l.toFixed(2)).join(' ')}\n`);
const dataDir = makeTempDir('restart');
const samples = new Map<string, { ms: number[]; cpu: number[] }>(COMMANDS.map((c) => [c.label, { ms: [], cpu: [] }]));
try {
  for (let round = 0; round <= rounds; round++) {
    const line: string[] = [];
    for (const cmd of COMMANDS) {
      const r = await timeToHealthy(cmd, dataDir);
      line.push(`${cmd.label} ${fmt(r.ms, 0)} ms (CPU ${r.cpu.toFixed(2)} s)`);
      if (round > 0) {
        samples.get(cmd.label)!.ms.push(r.ms);
        samples.get(cmd.label)!.cpu.push(r.cpu);
      }
    }
    process.stdout.write(`${round === 0 ? 'warm-up' : `round ${round}`}: ${line.join(', ')}\n`);
  }
} finally {
  removeAllTempDirs();
}

const direct = median(samples.get(COMMANDS[1]!.label)!.ms);
process.stdout.write(`\nmedians over ${rounds} rounds (load ${loadavg().map((l) => l.toFixed(2)).join(' ')} at the end):\n`);
for (const cmd of COMMANDS) {
  const { ms, cpu } = samples.get(cmd.label)!;
  const m = median(ms);
  process.stdout.write(
    `  ${cmd.label.padEnd(34)} ${fmt(median(ms), 0).padStart(6)} ms (min ${fmt(Math.min(...ms), 0)}, max ${fmt(Math.max(...ms), 0)}), ${(m / direct).toFixed(2)}× direct, CPU ${median(cpu).toFixed(2)} s\n`,
  );
}
