// Real spam scanners for the report's tests: Debian's rspamd and SpamAssassin's spamd
// (apt install rspamd spamd), each started here on free loopback ports with a
// configuration of its own, and stopped by close(). Missing: the suite is skipped with a
// loud line, or fails when REQUIRE_SERVICES=1 (as helpers/services.ts does for the others).
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
  close(): Promise<void>;
}

const BINARIES = { rspamd: ['/usr/bin/rspamd'], spamd: ['/usr/sbin/spamd', '/usr/bin/spamd'] } as const;

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

/** Resolves once `ready()` holds, polling every 100 ms; rejects when the process exits first or after `ms`. */
async function readyOrExit(child: ChildProcess, what: string, ready: () => Promise<boolean>, ms: number, log: () => string): Promise<void> {
  const deadline = Date.now() + ms;
  let exited: number | null | undefined;
  child.once('exit', (code) => (exited = code));
  for (;;) {
    if (exited !== undefined) throw new Error(`${what} exited (${exited}) before it listened:\n${log()}`);
    if (await ready()) return;
    if (Date.now() > deadline) throw new Error(`${what} did not listen within ${ms / 1000} s:\n${log()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const accepts = (port: number) =>
  new Promise<boolean>((resolve) => {
    const s = connect({ host: '127.0.0.1', port }, () => {
      s.destroy();
      resolve(true);
    });
    s.on('error', () => resolve(false));
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

export async function startSpamd(): Promise<RunningScanner> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'ti-spamd-'));
  const args = ['-x', '-L', `--listen=127.0.0.1:${port}`, '--max-children=1', '--syslog=stderr', `--pidfile=${join(dir, 'spamd.pid')}`];
  if (isRoot()) args.push('-u', 'debian-spamd');
  let log = '';
  const child = spawn(BINARIES.spamd.find((p) => existsSync(p))!, args, { detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout!.on('data', (d: Buffer) => (log += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (log += d.toString()));
  await readyOrExit(child, 'spamd', () => accepts(port), 120_000, () => log);
  return { url: `spamd://127.0.0.1:${port}`, port, close: stopper(child, dir) };
}

/**
 * rspamd compiles its regular expressions on first start (minutes on a loaded 2-core
 * machine) and keeps them in its DBDIR: one directory under the system's temp dir is kept
 * between runs, so only the first run pays.
 */
export async function startRspamd(): Promise<RunningScanner> {
  const [normal, controller, proxy] = [await freePort(), await freePort(), await freePort()];
  const dir = mkdtempSync(join(tmpdir(), 'ti-rspamd-'));
  const local = join(dir, 'local.d');
  const cache = join(tmpdir(), 'temp-inbox-rspamd-cache');
  for (const d of [local, join(dir, 'run'), join(dir, 'log'), cache]) mkdirSync(d, { recursive: true });
  const files: Record<string, string> = {
    'worker-normal.inc': `bind_socket = "127.0.0.1:${normal}";\ncount = 1;\n`,
    'worker-controller.inc': `bind_socket = "127.0.0.1:${controller}";\ncount = 1;\n`,
    'worker-proxy.inc': `bind_socket = "127.0.0.1:${proxy}";\ncount = 1;\n`,
    'logging.inc': 'type = "console";\nlevel = "error";\n',
    // No network: DNS goes to a closed port, the fuzzy servers are off.
    'options.inc': 'dns { nameserver = ["127.0.0.1:9"]; timeout = 1s; retransmits = 1; }\n',
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
  let log = '';
  const child = spawn(BINARIES.rspamd[0], args, { detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout!.on('data', (d: Buffer) => (log = (log + d.toString()).slice(-20_000)));
  child.stderr!.on('data', (d: Buffer) => (log = (log + d.toString()).slice(-20_000)));
  const pong = async () => {
    try {
      const res = await fetch(`http://127.0.0.1:${normal}/ping`);
      return res.ok;
    } catch {
      return false;
    }
  };
  await readyOrExit(child, 'rspamd', pong, 600_000, () => log);
  return { url: `rspamd://127.0.0.1:${normal}`, port: normal, close: stopper(child, dir) };
}
