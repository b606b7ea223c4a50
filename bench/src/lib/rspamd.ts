// Debian's rspamd for the report-ingest bench, configured as the report's tests run it
// (packages/server/test/helpers/spam-scanners.ts, which the bench may not import): its
// scanning worker only, on a free loopback port (another on a bind failure), DNS to a
// closed port with 0.1 s per look-up, fuzzy and monitoring off, and the compiled rules in
// the same cache under the temp dir, so a machine that ran the tests starts it warm.
import { execFileSync, spawn } from 'node:child_process';
import { chownSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { freePort } from './procs.js';

export const RSPAMD = '/usr/bin/rspamd';

export interface Rspamd {
  /** As SPAM_SCANNER takes it. */
  url: string;
  /** Its process group (main process and workers), for CPU accounting. */
  pid: number;
  close(): Promise<void>;
}

const BIND_ERROR = /address already in use|EADDRINUSE|cannot bind|cannot listen/i;

async function startOnce(port: number): Promise<Rspamd | 'taken'> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-rspamd-'));
  const local = join(dir, 'local.d');
  const cache = join(tmpdir(), 'temp-inbox-rspamd-cache');
  for (const d of [local, join(dir, 'run'), join(dir, 'log'), cache]) mkdirSync(d, { recursive: true });
  const files: Record<string, string> = {
    'worker-normal.inc': `bind_socket = "127.0.0.1:${port}";\ncount = 1;\n`,
    'worker-controller.inc': 'enabled = false;\n',
    'worker-proxy.inc': 'enabled = false;\n',
    'logging.inc': 'type = "console";\nlevel = "error";\n',
    'options.inc': 'dns { nameserver = ["127.0.0.1:9"]; timeout = 0.1s; retransmits = 0; }\ndisable_monitoring = true;\n',
    'fuzzy_check.conf': 'enabled = false;\n',
    'redis.conf': '',
  };
  for (const [name, text] of Object.entries(files)) writeFileSync(join(local, name), text);
  const args = ['-f', `--var=LOCAL_CONFDIR=${dir}`, `--var=RUNDIR=${join(dir, 'run')}`, `--var=DBDIR=${cache}`, `--var=LOGDIR=${join(dir, 'log')}`];
  if (userInfo().uid === 0) {
    const [uid, gid] = ['-u', '-g'].map((f) => Number(execFileSync('id', [f, '_rspamd'], { encoding: 'utf8' }).trim()));
    for (const d of [dir, local, join(dir, 'run'), join(dir, 'log'), cache]) chownSync(d, uid!, gid!);
    args.push('-u', '_rspamd', '-g', '_rspamd');
  }
  const child = spawn(RSPAMD, args, { detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  const keep = (d: Buffer) => (log = (log + d.toString()).slice(-20_000));
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  const close = async () => {
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
  const deadline = Date.now() + 600_000;
  for (;;) {
    if (BIND_ERROR.test(log)) return close().then(() => 'taken' as const);
    if (child.exitCode !== null) throw new Error(`rspamd exited (${child.exitCode}):\n${log}`);
    try {
      if (/\bpong\b/.test(await (await fetch(`http://127.0.0.1:${port}/ping`)).text())) return { url: `rspamd://127.0.0.1:${port}`, pid: child.pid!, close };
    } catch {
      // Not listening yet.
    }
    if (Date.now() > deadline) {
      await close();
      throw new Error(`rspamd did not answer within 600 s:\n${log}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** rspamd on a free port; tried again on another when the port was taken before it bound. */
export async function startRspamd(): Promise<Rspamd> {
  for (let attempt = 1; ; attempt++) {
    const started = await startOnce(await freePort());
    if (started !== 'taken') return started;
    if (attempt >= 5) throw new Error('rspamd found its port taken five times');
  }
}

export const rspamdInstalled = (): boolean => existsSync(RSPAMD);
