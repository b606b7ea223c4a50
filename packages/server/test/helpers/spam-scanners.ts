// Real spam scanners for the report's tests and the bench: Debian's rspamd and
// SpamAssassin's spamd (apt install rspamd spamd), each started here on a free loopback
// port with a configuration of its own, and stopped by close(). Missing: the suite is
// skipped with a loud line, or fails when REQUIRE_SERVICES=1 (as helpers/services.ts does
// for the others).
//
// The port is picked free and then handed to the scanner, which binds it a moment later:
// another process may take it in between. A start whose scanner could not bind (it says
// so, or exits, or another server answers there) is tried again on a new port, a few
// times; readiness is the scanner's own protocol answering (spamd's PONG, rspamd's
// "pong"), not just a port that accepts.
import { spawn, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, connect } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';

export interface RunningScanner {
  /** As SPAM_SCANNER takes it. */
  url: string;
  port: number;
  /** The scanner's process group (its main process and its workers), for CPU accounting. */
  pid: number;
  close(): Promise<void>;
}

const BINARIES = { rspamd: ['/usr/bin/rspamd'], spamd: ['/usr/sbin/spamd', '/usr/bin/spamd'] } as const;

/** Starts tried on a new port after a bind failure. */
const BIND_TRIES = 5;

/** false when the scanner is installed, else why (throws under REQUIRE_SERVICES=1). */
export function scannerMissing(name: keyof typeof BINARIES): string | false {
  if (BINARIES[name].some((p) => existsSync(p))) return false;
  const reason = `${name} is not installed (apt install ${name === 'rspamd' ? 'rspamd' : 'spamd spamassassin'})`;
  if (process.env.REQUIRE_SERVICES === '1') throw new Error(`REQUIRE_SERVICES=1: ${reason}`);
  process.stderr.write(`\n*** SKIPPED: ${reason} ***\n\n`);
  return reason;
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

const isRoot = () => userInfo().uid === 0;
const uidOf = (user: string) => Number(execFileSync('id', ['-u', user], { encoding: 'utf8' }).trim());
const gidOf = (user: string) => Number(execFileSync('id', ['-g', user], { encoding: 'utf8' }).trim());

/** The scanner could not listen on its port: the start is tried again on another. */
class BindFailed extends Error {}

/** What scanners print when their port is taken. */
const BIND_ERROR = /address already in use|EADDRINUSE|cannot bind|could not create (?:INET|IO::Socket)|cannot listen/i;

/** A scanner process: its output kept (the last 20 KB), its exit seen. */
function spawnScanner(binary: string, args: string[]) {
  let log = '';
  let exited: number | null | undefined;
  const child = spawn(binary, args, { detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  const keep = (d: Buffer) => (log = (log + d.toString()).slice(-20_000));
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  // Never outlives this process (a test file that ends while its scanner is still starting, say).
  const reap = () => {
    try {
      process.kill(-child.pid!, 'SIGTERM');
    } catch {
      // Already gone.
    }
  };
  process.once('exit', reap);
  child.once('exit', (code) => {
    exited = code ?? -1;
    process.off('exit', reap);
  });
  return { child, log: () => log, exited: () => exited };
}

/**
 * Resolves once `ready()` holds, polling every 100 ms. Throws BindFailed when the scanner
 * says its port is taken or exits saying so; an Error when it exits otherwise or after `ms`.
 */
async function readyOrExit(p: ReturnType<typeof spawnScanner>, what: string, ready: () => Promise<boolean>, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (BIND_ERROR.test(p.log())) throw new BindFailed(`${what} could not bind:\n${p.log()}`);
    if (p.exited() !== undefined) throw new Error(`${what} exited (${p.exited()}) before it listened:\n${p.log()}`);
    if (await ready()) return;
    if (Date.now() > deadline) throw new Error(`${what} did not listen within ${ms / 1000} s:\n${p.log()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Where a start listens: `firstPort` for its first try (a test's taken port), then free ones. */
export interface ScannerStart {
  firstPort?: number;
  /** rspamd's name server (host:port); default a closed port, every look-up failing within 0.1 s. */
  dns?: string;
}

/** Starts on fresh ports until one start binds (BIND_TRIES at most); the others are stopped first. */
async function withFreshPorts(opts: ScannerStart, start: (port: number) => Promise<RunningScanner>): Promise<RunningScanner> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await start(attempt === 1 && opts.firstPort !== undefined ? opts.firstPort : await freePort());
    } catch (err) {
      if (!(err instanceof BindFailed) || attempt >= BIND_TRIES) throw err;
    }
  }
}

/** A line of a protocol answered over TCP: resolves to what came back within 2 s ('' for nothing). */
const ask = (port: number, line: string) =>
  new Promise<string>((resolve) => {
    let got = '';
    const s = connect({ host: '127.0.0.1', port }, () => s.write(line));
    const done = () => {
      clearTimeout(timer);
      s.destroy();
      resolve(got);
    };
    const timer = setTimeout(done, 2000);
    s.on('data', (d: Buffer) => (got += d.toString('latin1')));
    s.on('end', done);
    s.on('error', done);
  });

function stopper(child: ChildProcess, dir: string): () => Promise<void> {
  return async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const gone = new Promise((r) => child.once('exit', r));
      try {
        process.kill(-child.pid!, 'SIGTERM');
      } catch {
        // Already gone.
      }
      await gone;
    }
    rmSync(dir, { recursive: true, force: true });
  };
}

/** Ends a start that failed (its process group), then rethrows. */
async function failed(stop: () => Promise<void>, err: unknown): Promise<never> {
  await stop();
  throw err;
}

export function startSpamd(opts: ScannerStart = {}): Promise<RunningScanner> {
  return withFreshPorts(opts, async (port) => {
    const dir = mkdtempSync(join(tmpdir(), 'ti-spamd-'));
    const args = ['-x', '-L', `--listen=127.0.0.1:${port}`, '--max-children=1', '--syslog=stderr', `--pidfile=${join(dir, 'spamd.pid')}`];
    if (isRoot()) args.push('-u', 'debian-spamd');
    const p = spawnScanner(BINARIES.spamd.find((b) => existsSync(b))!, args);
    const close = stopper(p.child, dir);
    // Its own PONG: another server on a port taken meanwhile would not answer it.
    const pong = async () => /^SPAMD\/[\d.]+ 0 PONG/.test(await ask(port, 'PING SPAMC/1.5\r\n\r\n'));
    await readyOrExit(p, 'spamd', pong, 120_000).catch((err: unknown) => failed(close, err));
    return { url: `spamd://127.0.0.1:${port}`, port, pid: p.child.pid!, close };
  });
}

/**
 * rspamd with only its scanning worker (no controller, no proxy: one port to bind, two
 * processes fewer) and no network (DNS to a closed port unless `dns`, each look-up given
 * 0.1 s and no retry, so a scan waits 0.1 s rather than 1 s for the DMARC look-up it
 * makes; fuzzy and monitoring off). Its first start compiles the rules' regular expressions
 * into Hyperscan databases (10 s of CPU here, 12 s to its first pong; longer while other
 * tests share the cores) and keeps them in its DBDIR: one directory under the system's temp
 * dir, kept between runs, from which later starts answer in 1.3 s using 0.6 s of CPU.
 * `disable_hyperscan` does not spare the compile in rspamd 3.4 (measured: the same 16 s and
 * the same files), so it is not set.
 */
export function startRspamd(opts: ScannerStart = {}): Promise<RunningScanner> {
  return withFreshPorts(opts, async (normal) => {
    const dir = mkdtempSync(join(tmpdir(), 'ti-rspamd-'));
    const local = join(dir, 'local.d');
    const cache = join(tmpdir(), 'temp-inbox-rspamd-cache');
    for (const d of [local, join(dir, 'run'), join(dir, 'log'), cache]) mkdirSync(d, { recursive: true });
    const files: Record<string, string> = {
      'worker-normal.inc': `bind_socket = "127.0.0.1:${normal}";\ncount = 1;\n`,
      'worker-controller.inc': 'enabled = false;\n',
      'worker-proxy.inc': 'enabled = false;\n',
      'logging.inc': 'type = "console";\nlevel = "error";\n',
      // No network: DNS goes to a closed port (or the caller's server), the fuzzy servers and the DNS monitoring are off.
      'options.inc': `dns { nameserver = ["${opts.dns ?? '127.0.0.1:9'}"]; timeout = 0.1s; retransmits = 0; }\ndisable_monitoring = true;\n`,
      'fuzzy_check.conf': 'enabled = false;\n',
      'redis.conf': '',
    };
    for (const [name, text] of Object.entries(files)) writeFileSync(join(local, name), text);
    const args = ['-f', `--var=LOCAL_CONFDIR=${dir}`, `--var=RUNDIR=${join(dir, 'run')}`, `--var=DBDIR=${cache}`, `--var=LOGDIR=${join(dir, 'log')}`];
    if (isRoot()) {
      const [uid, gid] = [uidOf('_rspamd'), gidOf('_rspamd')];
      for (const d of [dir, local, join(dir, 'run'), join(dir, 'log'), cache]) chownSync(d, uid, gid);
      args.push('-u', '_rspamd', '-g', '_rspamd');
    }
    const p = spawnScanner(BINARIES.rspamd[0], args);
    const close = stopper(p.child, dir);
    // rspamd's own answer to /ping ("pong"): another HTTP server on a port taken meanwhile would not give it.
    const pong = async () => /\bpong\b/.test(await ask(normal, 'GET /ping HTTP/1.0\r\n\r\n'));
    await readyOrExit(p, 'rspamd', pong, 600_000).catch((err: unknown) => failed(close, err));
    return { url: `rspamd://127.0.0.1:${normal}`, port: normal, pid: p.child.pid!, close };
  });
}
