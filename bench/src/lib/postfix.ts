// Postfix as an anchor of the SMTP ingest (smtp-anchors.ts): Debian's package, as its own
// instance, never the machine's. A private config_directory and queue_directory under a
// temp dir, listening on 127.0.0.1 on a free port, every recipient of the bench's domain
// delivered by the virtual agent to one Maildir (virtual_mailbox_maps static:). Started
// with `postfix -c <dir> start`, stopped with `postfix -c <dir> stop`, also when a step
// fails; the bench's exit handler stops it too (procs.ts onExit).
//
// What is changed from Debian's defaults, and why: chroot off (the private queue has no
// copy of /etc for a jail); process limits at 300 (the default 100 smtpd would leave the
// bench's 200 connections waiting for a greeting); logs to a file (maillog_file, no
// syslog here); no DNS look-ups (nothing leaves the machine). Everything that decides
// the cost of a mail is Debian's: the queue file fsync'd by cleanup before the 250,
// in_flow_delay, the qmgr, trivial-rewrite and virtual delivery with its own fsync.
import { execFileSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort, makeTempDir, onExit, removeTempDir, sleep } from './procs.js';
import { untilGreets } from './smtp-client.js';

export const POSTFIX_BIN = '/usr/sbin/postfix';

export interface Postfix {
  port: number;
  dir: string;
  /** The master process; every daemon of the instance is its child. */
  masterPid(): number;
  /** CPU seconds (user + system) of the master and every process under it, those that ended included. */
  cpuSeconds(): number;
  /** Mail in the instance's queue not yet delivered (files under incoming/, active/, deferred/). */
  queued(): number;
  /** Messages delivered to the Maildir so far. */
  delivered(): number;
  stop(): Promise<void>;
}

/** Why Postfix cannot be used here, or undefined when it can. */
export function postfixMissing(): string | undefined {
  if (!existsSync(POSTFIX_BIN)) return `${POSTFIX_BIN} not installed (apt-get install postfix)`;
  if (process.getuid?.() !== 0) return 'Postfix needs root to start an instance of its own';
  try {
    execFileSync('id', ['postfix'], { stdio: 'ignore' });
  } catch {
    return 'no "postfix" user (the Debian package creates it)';
  }
  return undefined;
}

const id = (flag: '-u' | '-g', user: string) => Number(execFileSync('id', [flag, user], { encoding: 'utf8' }).trim());

/** The services of Debian's master.cf that a delivery to a virtual Maildir uses, chroot off; smtpd on `port`. */
function masterCf(port: number): string {
  const unix = [
    'pickup    unix  n - n 60   1 pickup',
    'cleanup   unix  n - n -    0 cleanup',
    'qmgr      unix  n - n 300  1 qmgr',
    'rewrite   unix  - - n -    - trivial-rewrite',
    'bounce    unix  - - n -    0 bounce',
    'defer     unix  - - n -    0 bounce',
    'trace     unix  - - n -    0 bounce',
    'verify    unix  - - n -    1 verify',
    'flush     unix  n - n 1000? 0 flush',
    'proxymap  unix  - - n -    - proxymap',
    'proxywrite unix - - n -    1 proxymap',
    'smtp      unix  - - n -    - smtp',
    'relay     unix  - - n -    - smtp',
    'showq     unix  n - n -    - showq',
    'error     unix  - - n -    - error',
    'retry     unix  - - n -    - error',
    'discard   unix  - - n -    - discard',
    'local     unix  - n n -    - local',
    'virtual   unix  - n n -    - virtual',
    'anvil     unix  - - n -    1 anvil',
    'scache    unix  - - n -    1 scache',
    'postlog   unix-dgram n - n - 1 postlogd',
  ];
  return [`127.0.0.1:${port} inet n - n - - smtpd`, ...unix].join('\n') + '\n';
}

function mainCf(dir: string, domain: string, uid: number, gid: number): string {
  const settings: Record<string, string> = {
    compatibility_level: '3.6',
    queue_directory: join(dir, 'queue'),
    data_directory: join(dir, 'data'),
    meta_directory: '/etc/postfix',
    mail_owner: 'postfix',
    setgid_group: 'postdrop',
    myhostname: 'postfix.bench',
    mydomain: 'bench',
    mydestination: '',
    inet_interfaces: '127.0.0.1',
    inet_protocols: 'ipv4',
    mynetworks: '127.0.0.0/8',
    relay_domains: '',
    virtual_mailbox_domains: domain,
    virtual_mailbox_base: join(dir, 'mail'),
    // Every recipient of the domain: one Maildir (a trailing slash means Maildir).
    virtual_mailbox_maps: 'static:inbox/',
    virtual_uid_maps: `static:${uid}`,
    virtual_gid_maps: `static:${gid}`,
    virtual_mailbox_limit: '0',
    message_size_limit: String(10 * 1024 * 1024 + 64 * 1024),
    default_process_limit: '300',
    maillog_file: join(dir, 'postfix.log'),
    maillog_file_prefixes: dir,
    smtp_dns_support_level: 'disabled',
    smtpd_peername_lookup: 'no',
    biff: 'no',
    append_dot_mydomain: 'no',
    smtpd_banner: '$myhostname ESMTP',
    alias_maps: '',
    alias_database: '',
    local_recipient_maps: '',
  };
  return Object.entries(settings)
    .map(([k, v]) => `${k} = ${v}`)
    .join('\n') + '\n';
}

function readCpu(pid: number): { own: number; children: number; ppid: number } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // utime, stime, cutime, cstime are fields 14-17 (indexes 11-14 here); ppid field 4 (index 1).
    return { own: (Number(f[11]) + Number(f[12])) / 100, children: (Number(f[13]) + Number(f[14])) / 100, ppid: Number(f[1]) };
  } catch {
    return undefined;
  }
}

/** Starts an instance of its own; throws (having stopped it) when it does not greet. */
export async function startPostfix(domain: string): Promise<Postfix> {
  const dir = makeTempDir('postfix');
  const conf = join(dir, 'etc');
  const uid = id('-u', 'postfix');
  const gid = id('-g', 'postfix');
  for (const d of ['etc', 'queue', 'data', 'mail']) mkdirSync(join(dir, d), { recursive: true });
  // mkdtemp makes it 0700: the daemons run as the postfix user and must reach their directories.
  chmodSync(dir, 0o755);
  chownSync(join(dir, 'data'), uid, gid);
  chownSync(join(dir, 'mail'), uid, gid);
  const port = await freePort();
  writeFileSync(join(conf, 'main.cf'), mainCf(dir, domain, uid, gid));
  writeFileSync(join(conf, 'master.cf'), masterCf(port));
  const postfix = (...args: string[]) => execFileSync(POSTFIX_BIN, ['-c', conf, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 60_000 });
  let started = false;
  const stop = async () => {
    if (!started) return;
    started = false;
    try {
      postfix('stop');
    } catch {
      /* already gone */
    }
    // `stop` returns before every daemon has ended; the master's lock tells.
    for (let i = 0; i < 100 && masterAlive(); i++) await sleep(50);
    removeTempDir(dir);
  };
  const pidFile = join(dir, 'queue', 'pid', 'master.pid');
  const masterPid = () => Number(readFileSync(pidFile, 'utf8').trim());
  const masterAlive = () => {
    try {
      return existsSync(`/proc/${masterPid()}`);
    } catch {
      return false;
    }
  };
  const undo = onExit(() => {
    try {
      execFileSync(POSTFIX_BIN, ['-c', conf, 'stop'], { stdio: 'ignore', timeout: 10_000 });
    } catch {
      /* gone */
    }
  });
  try {
    // `check` creates the queue's directories with their owners (postfix-files), then `start`.
    postfix('check');
    started = true;
    postfix('start');
    await untilGreets(port, 200, 50, 'Postfix');
  } catch (err) {
    let log = '';
    try {
      log = readFileSync(join(dir, 'postfix.log'), 'utf8').slice(-2000);
    } catch {
      /* none */
    }
    await stop();
    undo();
    const e = err as Error & { stderr?: string };
    throw new Error(`Postfix did not start: ${e.message}${e.stderr ? `\n${e.stderr}` : ''}\n${log}`);
  }
  const cpuSeconds = () => {
    const master = masterPid();
    let total = 0;
    for (const name of readdirSync('/proc')) {
      if (!/^\d+$/.test(name)) continue;
      const pid = Number(name);
      const c = readCpu(pid);
      if (!c) continue;
      // The master, and its children with what their ended children used; the master's own
      // cutime/cstime hold what its ended children (an smtpd that quit, a cleanup) used.
      if (pid === master || c.ppid === master) total += c.own + c.children;
    }
    return total;
  };
  const countIn = (sub: string) => {
    const walk = (d: string): number => {
      let n = 0;
      try {
        for (const e of readdirSync(d, { withFileTypes: true })) n += e.isDirectory() ? walk(join(d, e.name)) : 1;
      } catch {
        /* not there */
      }
      return n;
    };
    return walk(join(dir, 'queue', sub));
  };
  return {
    port,
    dir,
    masterPid,
    cpuSeconds,
    queued: () => countIn('incoming') + countIn('active') + countIn('deferred') + countIn('maildrop'),
    delivered: () => {
      try {
        return readdirSync(join(dir, 'mail', 'inbox', 'new')).length;
      } catch {
        return 0;
      }
    },
    async stop() {
      await stop();
      undo();
    },
  };
}
