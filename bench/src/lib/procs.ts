// Child processes and temporary directories, tracked so that every one of them is
// stopped or removed at the end, whatever happened: a bench that throws, times
// out or is interrupted must not leave a server or a 1 GB database behind.
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { ROOT } from './paths.js';

export interface Child {
  name: string;
  process: ChildProcess;
  pid: number;
  /** File that receives the child's stdout and stderr. */
  logFile: string;
  /** Resolves with the exit code (or signal name) once the process has ended. */
  exited: Promise<number | string>;
  /** SIGTERM, then SIGKILL after graceMs; resolves once the process is gone. */
  stop(graceMs?: number): Promise<void>;
  /** The last bytes of its output, for error messages. */
  tail(bytes?: number): string;
}

const live = new Set<Child>();
const tempDirs = new Set<string>();

export function makeTempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), `temp-inbox-bench-${prefix}-`));
  tempDirs.add(dir);
  return dir;
}

export function removeTempDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
  tempDirs.delete(dir);
}

let logDir: string | undefined;
function logPath(name: string): string {
  logDir ??= makeTempDir('logs');
  return join(logDir, `${name.replace(/[^a-z0-9_-]+/gi, '_')}-${Date.now()}-${Math.random().toString(36).slice(2, 6)}.log`);
}

export interface SpawnOptions {
  name: string;
  args: string[];
  env?: Record<string, string>;
  /** Run through tsx (for the TypeScript children in bench/src/children). */
  tsx?: boolean;
  cwd?: string;
  /** Extra node flags, e.g. --max-old-space-size. */
  nodeFlags?: string[];
}

/** Starts `node [--import tsx] ...args` with output going to a log file (never a pipe the load generator must drain). */
export function startChild(opts: SpawnOptions): Child {
  const logFile = logPath(opts.name);
  const fd = openSync(logFile, 'w');
  const nodeArgs = [...(opts.nodeFlags ?? []), ...(opts.tsx ? ['--import', 'tsx'] : []), ...opts.args];
  const proc = spawn(process.execPath, nodeArgs, {
    cwd: opts.cwd ?? ROOT,
    env: { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? '/tmp', NODE_ENV: 'production', ...opts.env },
    stdio: ['ignore', fd, fd],
  });
  closeSync(fd);
  const exited = new Promise<number | string>((resolve) => proc.once('exit', (code, signal) => resolve(code ?? signal ?? -1)));
  const child: Child = {
    name: opts.name,
    process: proc,
    pid: proc.pid ?? -1,
    logFile,
    exited,
    async stop(graceMs = 10_000) {
      if (proc.exitCode !== null || proc.signalCode !== null) return;
      proc.kill('SIGTERM');
      const timer = setTimeout(() => proc.kill('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
    },
    tail(bytes = 2000) {
      try {
        const text = readFileSync(logFile, 'utf8');
        return text.slice(-bytes);
      } catch {
        return '';
      }
    },
  };
  live.add(child);
  void exited.then(() => live.delete(child));
  proc.on('error', () => undefined);
  return child;
}

/** Waits until the child's output matches `pattern`; throws when it exits first or on timeout. */
export async function waitForOutput(child: Child, pattern: RegExp, timeoutMs = 60_000): Promise<RegExpExecArray> {
  const deadline = Date.now() + timeoutMs;
  let ended: number | string | undefined;
  void child.exited.then((c) => (ended = c));
  for (;;) {
    let text = '';
    try {
      text = readFileSync(child.logFile, 'utf8');
    } catch {
      /* not yet */
    }
    const m = pattern.exec(text);
    if (m) return m;
    if (ended !== undefined) throw new Error(`${child.name} exited (${ended}) before it was ready:\n${child.tail()}`);
    if (Date.now() > deadline) throw new Error(`${child.name} was not ready after ${timeoutMs} ms:\n${child.tail()}`);
    await sleep(25);
  }
}

/** Runs a child to completion; resolves with its output, throws on a non-zero exit or timeout. */
export async function runChild(opts: SpawnOptions, timeoutMs: number): Promise<string> {
  const child = startChild(opts);
  const timer = setTimeout(() => child.process.kill('SIGKILL'), timeoutMs);
  const code = await child.exited;
  clearTimeout(timer);
  const out = readFileSync(child.logFile, 'utf8');
  if (code !== 0) throw new Error(`${opts.name} failed (${code}):\n${out.slice(-3000)}`);
  return out;
}

/** Stops every child still running (SIGTERM, then SIGKILL). */
export async function stopAllChildren(): Promise<void> {
  await Promise.all([...live].map((c) => c.stop(5_000)));
}

const exitHooks = new Set<() => void>();

/** A synchronous clean-up to run at process exit or on a signal (a server that is not a child, e.g. Postfix); returns its removal. */
export function onExit(hook: () => void): () => void {
  exitHooks.add(hook);
  return () => exitHooks.delete(hook);
}

/** Last resort at process exit: synchronous SIGKILL of whatever is left, and temp dirs removed. */
function killAllSync(): void {
  for (const hook of [...exitHooks]) {
    exitHooks.delete(hook);
    try {
      hook();
    } catch {
      /* best effort */
    }
  }
  for (const c of live) {
    try {
      c.process.kill('SIGKILL');
    } catch {
      /* gone */
    }
  }
  for (const d of tempDirs) rmSync(d, { recursive: true, force: true });
}
process.on('exit', killAllSync);
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.once(signal, () => {
    process.stderr.write(`\nbench: ${signal}, stopping children\n`);
    killAllSync();
    process.exit(130);
  });
}

export function removeAllTempDirs(): void {
  for (const d of [...tempDirs]) removeTempDir(d);
  logDir = undefined;
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** A port that was free a moment ago (for servers, such as MailDev, that cannot listen on port 0). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolve(port));
    });
  });
}

/** Resident and peak resident memory of a process, in bytes (Linux /proc). */
export function memoryOf(pid: number): { rss: number; hwm: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN) * 1024;
  return { rss: kb('VmRSS'), hwm: kb('VmHWM') };
}

/** Resets the peak-RSS mark (VmHWM) of a process; false when the kernel refuses. */
export function resetPeak(pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

/** CPU time (user + system) in a /proc stat file (a process's or a thread's), in seconds; NaN when it cannot be read. */
function cpuSecondsIn(statFile: string): number {
  try {
    const stat = readFileSync(statFile, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // After "pid (comm) ", utime and stime are fields 14 and 15, i.e. indexes 11 and 12 here (clock ticks of 1/100 s).
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return NaN;
  }
}

/** CPU time (user + system) a process has used so far, in seconds (Linux /proc). */
export function cpuSecondsOf(pid: number): number {
  return cpuSecondsIn(`/proc/${pid}/stat`);
}

/** CPU seconds of each thread of process `pid` (by thread id; the main thread's id is the pid). */
export function cpuSecondsByThread(pid: number): Map<number, number> {
  const out = new Map<number, number>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    const seconds = cpuSecondsIn(`/proc/${pid}/task/${tid}/stat`);
    // NaN: the thread ended between the listing and the read.
    if (!Number.isNaN(seconds)) out.set(Number(tid), seconds);
  }
  return out;
}

/** Runs `work` and adds the share of one core the process `pid` used meanwhile (1 = one full core). */
export async function withCpu<T extends object>(pid: number, work: () => Promise<T>): Promise<T & { serverCpu: number }> {
  const c0 = cpuSecondsOf(pid);
  const t0 = performance.now();
  const r = await work();
  const cpu = (cpuSecondsOf(pid) - c0) / ((performance.now() - t0) / 1000);
  return { ...r, serverCpu: Math.round(cpu * 100) / 100 };
}
