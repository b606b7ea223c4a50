// 6. Hostile SMTP clients (docs/security.md). Two measurements, each against a
// baseline taken in the same run:
//  a) ordinary mail from other clients, the event-loop delay and /health_check while two
//     clients at the per-client limits send mails built to be slow to parse, with
//     PARSE_THREADS 1 and 2 (hostile-parse-attack.ts);
//  b) the server's RSS while 150 clients each hold an unfinished 3 MB DATA, with
//     the shipped per-client connection cap and with it lifted (then the in-flight
//     byte budget is what holds), and whether /health_check kept answering;
//  c) two clients (127.0.0.2, 127.0.0.3) holding ten unfinished 10 MB DATA each, with
//     a byte every 20 s: whether a third client's mail still gets its 250 (each
//     client's share of the in-flight budget), and how long until the slow transfers
//     are ended (SMTP_DATA_MIN_RATE over SMTP_DATA_RATE_WINDOW);
//  d) HTTP readers that ask for a 10 MB mail and never read (hostile-readers.ts);
//  e) one client holding the parser pool with slow parsed views, and f) costly searches
//     while /health_check is polled (hostile-parse-search.ts).
// Targets: delay p99 < 50 ms, /health_check < 1 s throughout, RSS growth < 300 MB.
// Refused connections and transactions are counted, never treated as errors.
//
//   node --import tsx bench/src/hostile.ts [--quick]
import { connect, type Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { createAddress } from './lib/http.js';
import { healthPoller, rssSampler, startProbedServer as startServer, type HealthStats } from './lib/probed-server.js';
import { memoryOf, sleep } from './lib/procs.js';
import { verdict, type Bench, type Row } from './lib/report.js';
import { fmt, MB, round } from './lib/stats.js';
import { parseAttack } from './hostile-parse-attack.js';
import { parseAndSearch } from './hostile-parse-search.js';
import { unreadAnswers } from './hostile-readers.js';
import { isMain, runAlone } from './lib/run-alone.js';

const HEALTH_TARGET_MS = 1000;
const RSS_GROWTH_TARGET = 300 * MB;
const HOLDERS = 150;
const HOLD_BYTES = 3 * 1000 * 1000;

interface Holder {
  socket: Socket;
  state: 'greeting' | 'commands' | 'sending' | 'held' | 'refused';
  /** The refusing reply's code ("421 4.7.0") or how the connection ended. */
  why: string;
  /** Resolves once every byte was handed to the kernel or the server refused. */
  ready: Promise<void>;
}

/** One client that starts a DATA and sends `bytes` of it without the final dot, then holds the connection. */
function holdTransaction(port: number, to: string, bytes: number, localAddress?: string): Holder {
  const socket = connect({ port, host: '127.0.0.1', ...(localAddress ? { localAddress } : {}) });
  let resolveReady!: () => void;
  const holder: Holder = { socket, state: 'greeting', why: '', ready: new Promise<void>((r) => (resolveReady = r)) };
  const refuse = (why: string) => {
    if (holder.state === 'refused') return;
    holder.state = 'refused';
    holder.why = why;
    socket.destroy();
    resolveReady();
  };
  const pump = () => {
    const chunk = Buffer.alloc(64 * 1024, 'x');
    let left = bytes;
    socket.write('Subject: unfinished\r\n\r\n');
    const more = () => {
      while (left > 0 && holder.state === 'sending') {
        const n = Math.min(left, chunk.length);
        left -= n;
        if (!socket.write(chunk.subarray(0, n))) return void socket.once('drain', more);
      }
      if (holder.state === 'sending') {
        holder.state = 'held';
        resolveReady();
      }
    };
    more();
  };
  let buf = '';
  socket.setEncoding('latin1');
  socket.on('error', (err: NodeJS.ErrnoException) => refuse(`closed (${err.code ?? err.message})`));
  socket.on('close', () => refuse(holder.state === 'held' ? 'closed while held' : 'closed'));
  socket.on('data', (d: string) => {
    buf += d;
    for (let eol = buf.indexOf('\r\n'); eol >= 0; eol = buf.indexOf('\r\n')) {
      const line = buf.slice(0, eol);
      buf = buf.slice(eol + 2);
      const code = Number(line.slice(0, 3));
      if (line[3] === '-') continue;
      // Grouped by reply code and enhanced status ("421 4.3.1"); the text varies with the host name.
      if (code >= 400) return refuse(/^\d{3}(?: \d\.\d{1,3}\.\d{1,3})?/.exec(line)![0]);
      if (code === 220 && holder.state === 'greeting') {
        holder.state = 'commands';
        // Pipelined (RFC 2920): the replies to EHLO, MAIL and RCPT come before the 354.
        socket.write(`EHLO holder.bench\r\nMAIL FROM:<holder@example.net>\r\nRCPT TO:<${to}>\r\nDATA\r\n`);
      } else if (code === 354 && holder.state === 'commands') {
        holder.state = 'sending';
        pump();
      }
    }
  });
  return holder;
}

interface HoldResult {
  before: number;
  /** RSS after the clients had sent their bytes and the server had a moment to take them in. */
  held: number;
  /** The highest RSS sampled while the clients were connected. */
  peak: number;
  /** RSS 1.5 s after the clients closed (informational: freed memory need not go back to the OS). */
  after: number;
  growth: number;
  /** Clients holding an unfinished DATA with every byte sent. */
  holding: number;
  /** Clients still sending when measured (the server had stopped reading them). */
  stalled: number;
  refused: number;
  /** Refusals by reply code ("421 4.7.0") or "closed". */
  why: Record<string, number>;
  health: HealthStats;
  seconds: number;
}

async function holdMany(env: Record<string, string>, quick: boolean): Promise<HoldResult> {
  const server = await startServer('temp-inbox-holders', env);
  const holders: Holder[] = [];
  let health: ReturnType<typeof healthPoller> | undefined;
  let sampler: ReturnType<typeof rssSampler> | undefined;
  try {
    const { address } = await createAddress(server.httpUrl);
    await sleep(500);
    const pid = server.child.pid;
    const before = memoryOf(pid).rss;
    health = healthPoller(server.httpUrl);
    sampler = rssSampler(pid);
    const t0 = performance.now();
    for (let i = 0; i < HOLDERS; i++) holders.push(holdTransaction(server.smtpPort, address, HOLD_BYTES));
    // A server that stops reading leaves a client "sending" for good; it is counted as stalled.
    await Promise.race([Promise.all(holders.map((h) => h.ready)), sleep(quick ? 10_000 : 20_000)]);
    // Let the server take in what was sent.
    await sleep(quick ? 1500 : 3000);
    const held = memoryOf(pid).rss;
    const states = holders.map((h) => ({ state: h.state, why: h.why }));
    const h = await health.stop();
    health = undefined;
    const peak = sampler.stop();
    sampler = undefined;
    const seconds = (performance.now() - t0) / 1000;
    for (const x of holders) x.socket.destroy();
    await sleep(1500);
    const after = memoryOf(pid).rss;
    const why: Record<string, number> = {};
    for (const s of states) if (s.state === 'refused') why[s.why] = (why[s.why] ?? 0) + 1;
    return {
      before,
      held,
      peak,
      after,
      growth: Math.max(held, peak) - before,
      holding: states.filter((s) => s.state === 'held').length,
      stalled: states.filter((s) => s.state === 'sending' || s.state === 'commands' || s.state === 'greeting').length,
      refused: states.filter((s) => s.state === 'refused').length,
      why,
      health: h,
      seconds,
    };
  } finally {
    for (const x of holders) x.socket.destroy();
    sampler?.stop();
    await health?.stop();
    await server.stop();
  }
}

/** One mail of `bytes` from `localAddress`: its final reply line (or why there was none) and how long it took. */
function mailFrom(port: number, to: string, bytes: number, localAddress: string): Promise<{ reply: string; ms: number }> {
  const t0 = performance.now();
  return new Promise((resolve) => {
    const socket = connect({ port, host: '127.0.0.1', localAddress });
    let buf = '';
    let sent = false;
    const done = (reply: string) => {
      socket.destroy();
      resolve({ reply, ms: performance.now() - t0 });
    };
    socket.setEncoding('latin1');
    socket.setTimeout(60_000, () => done('timed out'));
    socket.on('error', (err: NodeJS.ErrnoException) => done(`closed (${err.code ?? err.message})`));
    socket.on('close', () => done('closed'));
    socket.on('data', (d: string) => {
      buf += d;
      for (let eol = buf.indexOf('\r\n'); eol >= 0; eol = buf.indexOf('\r\n')) {
        const line = buf.slice(0, eol);
        buf = buf.slice(eol + 2);
        if (line[3] === '-') continue;
        const code = Number(line.slice(0, 3));
        if (code === 220 && !sent) socket.write(`EHLO third.bench\r\nMAIL FROM:<third@example.net>\r\nRCPT TO:<${to}>\r\nDATA\r\n`);
        else if (code === 354) {
          sent = true;
          socket.write(`Subject: third client\r\n\r\n${'t'.repeat(bytes)}\r\n.\r\n`);
        } else if (code >= 400 || sent) return done(/^\d{3}(?: \d\.\d{1,3}\.\d{1,3})?/.exec(line)![0]);
      }
    });
  });
}

interface SlowPairResult {
  third: { reply: string; ms: number };
  holding: number;
  refused: number;
  why: Record<string, number>;
  /** Seconds from the holders' last byte until every one was closed, or undefined when some were still open at the deadline. */
  endedAfter: number | undefined;
  windowSeconds: number;
}

const SLOW_CLIENTS = ['127.0.0.2', '127.0.0.3'];
const SLOW_PER_CLIENT = 10;
const SLOW_BYTES = 10 * 1000 * 1000;

/** c): two clients hold ten unfinished 10 MB DATA each, dripping a byte every 20 s, at the shipped limits. */
async function slowPair(quick: boolean): Promise<SlowPairResult> {
  const windowSeconds = quick ? 5 : 30;
  // Shipped limits for strangers: the bench's lifted connection cap back to 10, and loopback not trusted.
  const server = await startServer('temp-inbox-slow-pair', { SMTP_TRUSTED_NETWORKS: '', SMTP_MAX_CLIENTS_PER_IP: '10', SMTP_DATA_RATE_WINDOW: `${windowSeconds}s` });
  const holders: Holder[] = [];
  const drip = setInterval(() => {
    for (const h of holders) if (h.state === 'held') h.socket.write('z');
  }, 20_000);
  try {
    const { address } = await createAddress(server.httpUrl);
    for (const ip of SLOW_CLIENTS) for (let i = 0; i < SLOW_PER_CLIENT; i++) holders.push(holdTransaction(server.smtpPort, address, SLOW_BYTES, ip));
    await Promise.race([Promise.all(holders.map((h) => h.ready)), sleep(30_000)]);
    const lastByte = performance.now();
    const third = await mailFrom(server.smtpPort, address, 100_000, '127.0.0.4');
    const holding = holders.filter((h) => h.state === 'held').length;
    const deadline = lastByte + (3 * windowSeconds + 10) * 1000;
    while (holders.some((h) => h.state !== 'refused') && performance.now() < deadline) await sleep(200);
    const endedAfter = holders.every((h) => h.state === 'refused') ? (performance.now() - lastByte) / 1000 : undefined;
    const why: Record<string, number> = {};
    for (const h of holders) if (h.state === 'refused') why[h.why] = (why[h.why] ?? 0) + 1;
    return { third, holding, refused: holders.length - holding, why, endedAfter, windowSeconds };
  } finally {
    clearInterval(drip);
    for (const x of holders) x.socket.destroy();
    await server.stop();
  }
}

const whyText = (why: Record<string, number>) =>
  Object.entries(why)
    .sort((a, b) => b[1] - a[1])
    .map(([k, v]) => `${v}× ${k}`)
    .join('; ');

export const hostile: Bench = async (ctx) => {
  const rows: Row[] = [];
  const attack = await parseAttack(ctx.quick, ctx.log);
  rows.push(...attack.rows);
  const holdResults: Record<string, HoldResult> = {};
  for (const [label, env] of [
    // The holders connect from 127.0.0.1, which SMTP_TRUSTED_NETWORKS exempts by default: emptied, they are strangers.
    ['shipped caps', { SMTP_MAX_CLIENTS_PER_IP: '10', SMTP_TRUSTED_NETWORKS: '' }],
    ['per-client cap lifted', { SMTP_MAX_CLIENTS_PER_IP: '1000', SMTP_CLIENT_INFLIGHT_BYTES: '134217728', SMTP_TRUSTED_NETWORKS: '' }],
  ] as const) {
    ctx.log(`${HOLDERS} unfinished ${HOLD_BYTES / 1e6} MB transactions, ${label}`);
    const r = await holdMany(env, ctx.quick);
    ctx.log(
      `RSS ${fmt(r.before / MB)} MB before, ${fmt(r.held / MB)} MB held (peak ${fmt(r.peak / MB)} MB), ${fmt(r.after / MB)} MB after closing; ` +
        `${r.holding} holding, ${r.stalled} stalled, ${r.refused} refused (${whyText(r.why) || 'none'}); /health_check max ${fmt(r.health.max)} ms, ${r.health.failures} failed`,
    );
    rows.push({
      bench: 'hostile',
      measure: `RSS growth, ${HOLDERS} unfinished 3 MB DATA, ${label} (MB)`,
      ours: `+${fmt(r.growth / MB)} (${r.holding} held, ${r.stalled} stalled, ${r.refused} refused)`,
      baseline: `${fmt(r.before / MB)} before`,
      result: `+${fmt(r.growth / MB)}; /health_check max ${fmt(r.health.max)} ms, ${r.health.failures} failed`,
      target: `< ${RSS_GROWTH_TARGET / MB}; health < ${HEALTH_TARGET_MS}`,
      verdict: verdict(r.growth < RSS_GROWTH_TARGET && r.health.max < HEALTH_TARGET_MS && r.health.failures === 0),
      values: {
        before: r.before,
        held: r.held,
        peak: r.peak,
        after: r.after,
        growthMB: round(r.growth / MB),
        holding: r.holding,
        stalled: r.stalled,
        refused: r.refused,
        refusedBy: whyText(r.why),
        healthMax: round(r.health.max),
        healthFailures: r.health.failures,
      },
    });
    holdResults[label] = r;
  }
  ctx.log(`${SLOW_CLIENTS.length} clients × ${SLOW_PER_CLIENT} unfinished ${SLOW_BYTES / 1e6} MB DATA, a byte every 20 s; a third client's mail`);
  const slow = await slowPair(ctx.quick);
  const ended = slow.endedAfter === undefined ? 'not all ended' : `all ended after ${fmt(slow.endedAfter)} s`;
  ctx.log(`third client: ${slow.third.reply} in ${fmt(slow.third.ms)} ms; ${slow.holding} holding, ${slow.refused} refused (${whyText(slow.why) || 'none'}); ${ended}`);
  rows.push(
    {
      bench: 'hostile',
      measure: `a third client's mail while ${SLOW_CLIENTS.length} clients hold ${SLOW_PER_CLIENT} unfinished 10 MB DATA each`,
      ours: `${slow.third.reply} in ${fmt(slow.third.ms)} ms`,
      baseline: '',
      result: `${slow.third.reply}; holders: ${whyText(slow.why) || 'none refused'}`,
      target: '250',
      verdict: verdict(slow.third.reply.startsWith('250')),
      values: { reply: slow.third.reply, ms: round(slow.third.ms), holding: slow.holding, refused: slow.refused, refusedBy: whyText(slow.why) },
    },
    {
      bench: 'hostile',
      measure: `slow transfers (a byte every 20 s) ended, SMTP_DATA_RATE_WINDOW ${slow.windowSeconds} s`,
      ours: ended,
      baseline: '',
      result: ended,
      // A transfer that stopped after a window that brought enough is caught at the end of the next: two windows at most (and 2 s of slack).
      target: `< ${2 * slow.windowSeconds + 2} s`,
      verdict: verdict(slow.endedAfter !== undefined && slow.endedAfter < 2 * slow.windowSeconds + 2),
      values: { endedAfter: slow.endedAfter === undefined ? -1 : round(slow.endedAfter), windowSeconds: slow.windowSeconds },
    },
  );
  const unread = await unreadAnswers(ctx.quick, ctx.log);
  rows.push(...unread.rows);
  const parseSearch = await parseAndSearch(ctx.quick, ctx.log);
  rows.push(...parseSearch.rows);
  return {
    rows,
    details: { parseAttack: attack.details, holders: holdResults, slow, unread: unread.details, parseSearch: parseSearch.details },
  };
};

// Run alone: node --import tsx bench/src/hostile.ts [--quick]
if (isMain(import.meta.url)) await runAlone('hostile', (quick, log) => hostile({ quick, log }));
