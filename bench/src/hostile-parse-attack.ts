// 6a. Ordinary mail beside hostile senders (docs/benchmarks.md "6. Hostile SMTP clients"),
// part of the hostile bench. Two hostile clients (127.0.0.2, 127.0.0.3), each at the shipped
// per-client SMTP limits (loopback not trusted: 10 connections, its share of the in-flight
// budget, its message and byte rates), send mails built to be slow to parse in a loop over
// every connection it may open: 40,000 parts, 3,000-deep nesting, 60,000 header lines and
// 4,500 empty parts in under 64 KiB (children/hostile-senders.ts, a process of its own, so
// that its megabytes do not delay the bench's clock). Meanwhile ordinary 3 KB mail is due at 20 a second
// from eight other clients (127.0.1.1-8, a connection each), and /health_check is polled.
// Measured with PARSE_THREADS 1 and 2, each on a server of its own: the ordinary mail's
// 250 latency p50 and p99 (from when it was due, so a stalled server is not hidden by a
// sender that slows down with it), the server's event-loop delay and the slowest
// /health_check, against a baseline phase without the hostile senders (PARSE_THREADS 1).
// Target: the ordinary mail's 250 p99 < 50 ms while the hostile senders push.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { AttackStats } from './children/hostile-senders.js';
import { createAddress } from './lib/http.js';
import { messageTemplate } from './lib/messages.js';
import { healthPoller, loopDelay, startProbedServer, type HealthStats, type LoopDelay, type ProbedServer } from './lib/probed-server.js';
import { CHILDREN_DIR } from './lib/paths.js';
import { sleep, startChild, waitForOutput } from './lib/procs.js';
import { verdict, type Row } from './lib/report.js';
import { blast, SmtpConnection } from './lib/smtp-client.js';
import { fmt, percentile, round } from './lib/stats.js';
import { isMain, runAlone } from './lib/run-alone.js';

const DELAY_P99_TARGET_MS = 50;
const HEALTH_TARGET_MS = 1000;
const ORDINARY_P99_TARGET_MS = 50;
const ORDINARY_PER_SECOND = 20;
/** Eight ordinary clients, one connection each: 2.5 mails a second each, within their message rate over both phases. */
const ORDINARY_CLIENTS = Array.from({ length: 8 }, (_, i) => `127.0.1.${i + 1}`);
const HOSTILE_CLIENTS = ['127.0.0.2', '127.0.0.3'];
/** SMTP_MAX_CLIENTS_PER_IP as shipped: every connection a hostile client may open. */
const HOSTILE_CONNECTIONS = 10;
const THREADS = [1, 2];

/** The shipped per-client SMTP limits (the bench lifts them elsewhere), loopback not trusted. */
const SHIPPED_CLIENT_LIMITS: Record<string, string> = {
  SMTP_TRUSTED_NETWORKS: '',
  SMTP_MAX_CLIENTS_PER_IP: String(HOSTILE_CONNECTIONS),
  SMTP_RATE_MESSAGES: '120/60',
  SMTP_RATE_RECIPIENTS: '600/60',
  SMTP_RATE_BYTES: '209715200/60',
};

interface MailStats {
  p50: number;
  p99: number;
  max: number;
  /** Mails answered 250. */
  sent: number;
  failed: number;
  /** Mails due but still waiting for a free connection when the phase ended (counted with the time they had waited). */
  unsent: number;
}

/** Ordinary mail due at a steady rate over the first free connection, one connection per client of `clients`. */
async function ordinaryMail(smtpPort: number, to: string, perSecond: number, clients: string[]) {
  const latencies: number[] = [];
  let failed = 0;
  let running = true;
  let n = 0;
  const backlog: number[] = [];
  const wakers: (() => void)[] = [];
  const open = new Set<SmtpConnection>();
  const template = messageTemplate(3 * 1024, `ord${Date.now()}`);
  const first = await Promise.allSettled(clients.map((ip) => SmtpConnection.open(smtpPort, '127.0.0.1', ip)));
  if (!first.some((r) => r.status === 'fulfilled')) throw new Error(`no SMTP connection for ordinary mail: ${(first[0] as PromiseRejectedResult).reason}`);
  const take = async (): Promise<number | undefined> => {
    while (running) {
      const due = backlog.shift();
      if (due !== undefined) return due;
      await new Promise<void>((resolve) => wakers.push(resolve));
    }
    return undefined;
  };
  const t0 = performance.now();
  const ticker = (async () => {
    for (let k = 0; running; k++) {
      const due = t0 + (k * 1000) / perSecond;
      const wait = due - performance.now();
      if (wait > 0) await sleep(wait);
      if (!running) break;
      backlog.push(due);
      wakers.shift()?.();
    }
  })();
  const workers = first.map(async (r, i) => {
    let conn: SmtpConnection | undefined = r.status === 'fulfilled' ? r.value : undefined;
    if (conn) open.add(conn);
    for (;;) {
      const due = await take();
      if (due === undefined) break;
      try {
        if (!conn) {
          conn = await SmtpConnection.open(smtpPort, '127.0.0.1', clients[i]);
          open.add(conn);
        }
        const reply = await conn.send('sender@example.com', to, template(n++, to));
        latencies.push(reply.at - due);
      } catch {
        if (running) failed++;
        conn?.destroy();
        if (conn) open.delete(conn);
        conn = undefined;
      }
    }
    if (conn) {
      open.delete(conn);
      await conn.close().catch(() => conn!.destroy());
    }
  });
  return {
    async stop(): Promise<MailStats> {
      running = false;
      const end = performance.now();
      for (const w of wakers.splice(0)) w();
      await ticker;
      // Sends still under way get a few seconds to finish, then their connections are cut.
      const all = Promise.all(workers);
      await Promise.race([all, sleep(5000)]);
      for (const c of open) c.destroy();
      await all;
      // A mail that never got a connection waited at least this long; leaving it out would flatter the p99.
      const waited = [...latencies, ...backlog.map((due) => end - due)];
      return { p50: percentile(waited, 50), p99: percentile(waited, 99), max: waited.length ? Math.max(...waited) : NaN, sent: latencies.length, failed, unsent: backlog.length };
    },
  };
}

/** The hostile senders (children/hostile-senders.ts), in a process of their own; stop() ends them and reads their counts. */
function hostileSenders(port: number, to: string) {
  const child = startChild({ name: 'hostile-senders', tsx: true, args: [join(CHILDREN_DIR, 'hostile-senders.ts'), JSON.stringify({ port, to, clients: HOSTILE_CLIENTS, connections: HOSTILE_CONNECTIONS })] });
  return {
    sending: waitForOutput(child, /^SENDING /m, 60_000),
    async stop(): Promise<AttackStats> {
      await child.stop();
      const m = /^RESULT (.*)$/m.exec(readFileSync(child.logFile, 'utf8'));
      if (!m) throw new Error(`the hostile senders printed no result:\n${child.tail()}`);
      return JSON.parse(m[1]!) as AttackStats;
    },
  };
}

export interface PhaseResult {
  delay: LoopDelay;
  health: HealthStats;
  mail: MailStats;
  attack?: AttackStats;
}

async function phase(server: ProbedServer, to: string, seconds: number, hostile: boolean): Promise<PhaseResult> {
  // The hostile senders first: every ordinary mail of the phase is sent while they push.
  const attacker = hostile ? hostileSenders(server.smtpPort, to) : undefined;
  let ordinary: Awaited<ReturnType<typeof ordinaryMail>> | undefined;
  let health: ReturnType<typeof healthPoller> | undefined;
  try {
    await attacker?.sending;
    await loopDelay(server); // starts the window
    ordinary = await ordinaryMail(server.smtpPort, to, ORDINARY_PER_SECOND, ORDINARY_CLIENTS);
    health = healthPoller(server.httpUrl);
    await sleep(seconds * 1000);
    const [mail, h, attackStats] = await Promise.all([ordinary.stop(), health.stop(), attacker?.stop()]);
    ordinary = undefined;
    health = undefined;
    const delay = await loopDelay(server);
    return { delay, health: h, mail, ...(attackStats ? { attack: attackStats } : {}) };
  } finally {
    await Promise.all([ordinary?.stop(), health?.stop(), attacker?.stop().catch(() => undefined)]);
  }
}

function describePhase(name: string, p: PhaseResult): string {
  const a = p.attack ? `; hostile mails ${p.attack.accepted} accepted, ${p.attack.refused} refused ${JSON.stringify(p.attack.replies)}` : '';
  return (
    `${name}: loop delay p99 ${fmt(p.delay.p99)} ms, max ${fmt(p.delay.max)} ms; /health_check max ${fmt(p.health.max)} ms ` +
    `(${p.health.failures} failed of ${p.health.samples}); ordinary 250 p50 ${fmt(p.mail.p50)} ms, p99 ${fmt(p.mail.p99)} ms ` +
    `(${p.mail.sent} sent, ${p.mail.failed} failed, ${p.mail.unsent} never sent)${a}`
  );
}

/** A server with PARSE_THREADS `threads`: the attack phase, after a baseline phase when `baseline`. */
async function measure(threads: number, seconds: number, baseline: boolean, log: (m: string) => void): Promise<{ baseline?: PhaseResult; attacked: PhaseResult }> {
  const server = await startProbedServer(`temp-inbox-hostile-parse-${threads}`, { ...SHIPPED_CLIENT_LIMITS, PARSE_THREADS: String(threads) });
  try {
    const { address } = await createAddress(server.httpUrl);
    // Warm-up, so that the baseline is not the server's first mails (compilation, the parser thread starting); within 127.0.0.1's message rate.
    await blast({ port: server.smtpPort, connections: 2, messages: 100, recipient: () => address, message: messageTemplate(3 * 1024, `warm${Date.now()}`) });
    let base: PhaseResult | undefined;
    if (baseline) {
      log(`PARSE_THREADS=${threads}, baseline: ordinary mail (${ORDINARY_PER_SECOND}/s from ${ORDINARY_CLIENTS.length} clients) and health polls for ${seconds} s`);
      base = await phase(server, address, seconds, false);
      log(describePhase('baseline', base));
    }
    log(`PARSE_THREADS=${threads}, attack: the same while ${HOSTILE_CLIENTS.length} clients send hostile mails over ${HOSTILE_CONNECTIONS} connections each for ${seconds} s`);
    const attacked = await phase(server, address, seconds, true);
    log(describePhase('attack', attacked));
    return { ...(base ? { baseline: base } : {}), attacked };
  } finally {
    await server.stop();
  }
}

const ratio = (a: number, b: number) => (b > 0 ? `${fmt(a / b)}×` : '—');

function rowsOf(threads: number, attacked: PhaseResult, baseline: PhaseResult, seconds: number): Row[] {
  const t = `PARSE_THREADS=${threads}`;
  const m = attacked.mail;
  const att = attacked.attack!;
  return [
    {
      bench: 'hostile',
      measure: `ordinary mail 250 latency, ${ORDINARY_PER_SECOND}/s from other clients, hostile senders at the per-client limits, ${t} (ms)`,
      ours: `p50 ${fmt(m.p50)}, p99 ${fmt(m.p99)} (${m.sent} sent, ${m.failed + m.unsent} not)`,
      baseline: `p50 ${fmt(baseline.mail.p50)}, p99 ${fmt(baseline.mail.p99)} (no hostile senders)`,
      result: `p99 ${fmt(m.p99)} (${ratio(m.p99, baseline.mail.p99)} baseline)`,
      target: `p99 < ${ORDINARY_P99_TARGET_MS}`,
      verdict: verdict(m.p99 < ORDINARY_P99_TARGET_MS && m.failed + m.unsent === 0),
      values: { threads, p50: round(m.p50), p99: round(m.p99), max: round(m.max), baselineP50: round(baseline.mail.p50), baselineP99: round(baseline.mail.p99), sent: m.sent, failed: m.failed, unsent: m.unsent },
    },
    {
      bench: 'hostile',
      measure: `event-loop delay while hostile mail arrives, ${t} (ms)`,
      ours: `p99 ${fmt(attacked.delay.p99)}, max ${fmt(attacked.delay.max)}`,
      baseline: `p99 ${fmt(baseline.delay.p99)}, max ${fmt(baseline.delay.max)}`,
      result: `p99 ${fmt(attacked.delay.p99)} (${ratio(attacked.delay.p99, baseline.delay.p99)} baseline)`,
      target: `p99 < ${DELAY_P99_TARGET_MS}`,
      verdict: verdict(attacked.delay.p99 < DELAY_P99_TARGET_MS),
      values: { threads, attackP99: round(attacked.delay.p99), attackMax: round(attacked.delay.max), baselineP99: round(baseline.delay.p99), baselineMax: round(baseline.delay.max) },
    },
    {
      bench: 'hostile',
      measure: `/health_check max while hostile mail arrives, ${t} (ms)`,
      ours: `max ${fmt(attacked.health.max)} (${attacked.health.failures}/${attacked.health.samples} failed)`,
      baseline: `max ${fmt(baseline.health.max)} (${baseline.health.failures}/${baseline.health.samples} failed)`,
      result: `${fmt(attacked.health.max)} (${ratio(attacked.health.max, baseline.health.max)} baseline)`,
      target: `< ${HEALTH_TARGET_MS}, none failed`,
      verdict: verdict(attacked.health.max < HEALTH_TARGET_MS && attacked.health.failures === 0),
      values: { threads, attackMax: round(attacked.health.max), baselineMax: round(baseline.health.max), failures: attacked.health.failures, samples: attacked.health.samples },
    },
    {
      bench: 'hostile',
      measure: `hostile mails answered in ${seconds} s, ${t}`,
      ours: `${att.accepted} accepted (250), ${att.refused} refused`,
      baseline: '',
      result: Object.entries(att.replies)
        .map(([k, r]) => `${k}: ${Object.entries(r).map(([c, n]) => `${n}× ${c}`).join(', ') || 'none answered'}`)
        .join('; '),
      target: '(none)',
      verdict: 'info',
      values: { threads, accepted: att.accepted, refused: att.refused },
    },
  ];
}

/** The parse attack at PARSE_THREADS 1 and 2; the baseline phase (no hostile senders) runs once, at 1. */
export async function parseAttack(quick: boolean, log: (m: string) => void): Promise<{ rows: Row[]; details: Record<string, unknown> }> {
  const seconds = quick ? 3 : 10;
  const rows: Row[] = [];
  const details: Record<string, unknown> = { seconds, ordinaryPerSecond: ORDINARY_PER_SECOND, ordinaryClients: ORDINARY_CLIENTS, hostileClients: HOSTILE_CLIENTS, hostileConnections: HOSTILE_CONNECTIONS };
  let baseline: PhaseResult | undefined;
  for (const threads of THREADS) {
    const r = await measure(threads, seconds, baseline === undefined, log);
    baseline ??= r.baseline!;
    details[`threads${threads}`] = r;
    rows.push(...rowsOf(threads, r.attacked, baseline, seconds));
  }
  return { rows, details };
}

// Run alone: node --import tsx bench/src/hostile-parse-attack.ts [--quick]
if (isMain(import.meta.url)) await runAlone('hostile', parseAttack);
