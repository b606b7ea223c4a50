// 6. Hostile SMTP clients (docs/security.md). Two measurements, each against the
// same run without the attack:
//  a) the server's own event-loop delay (a preload reports it), /health_check
//     latency and the 250 latency of ordinary mail while mails built to be slow to
//     parse arrive (40,000 parts, 3,000-deep nesting, 60,000 header lines);
//  b) the server's RSS while 150 clients each hold an unfinished 3 MB DATA, with
//     the shipped per-client connection cap and with it lifted (then the in-flight
//     byte budget is what holds), and whether /health_check kept answering.
// Targets: delay p99 < 50 ms, /health_check < 1 s throughout, RSS growth < 300 MB.
//
//   node --import tsx bench/src/hostile.ts [--quick]
import { readFileSync, statSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createAddress, httpRequest } from './lib/http.js';
import { messageTemplate } from './lib/messages.js';
import { CHILDREN_DIR } from './lib/paths.js';
import { makeTempDir, memoryOf, sleep } from './lib/procs.js';
import { verdict, type Bench, type Row } from './lib/report.js';
import { SmtpConnection } from './lib/smtp-client.js';
import { fmt, MB, percentile, round } from './lib/stats.js';
import { startTempInbox, type TempInbox } from './lib/temp-inbox.js';

const DELAY_P99_TARGET_MS = 50;
const HEALTH_TARGET_MS = 1000;
const RSS_GROWTH_TARGET = 300 * MB;
const HOLDERS = 150;
const HOLD_BYTES = 3 * 1000 * 1000;

interface Server extends TempInbox {
  delayFile: string;
}

/** A bench server that reports its own event-loop delay (children/loop-delay.mjs). */
async function startServer(name: string, env: Record<string, string>): Promise<Server> {
  const dataDir = makeTempDir('data');
  const delayFile = join(dataDir, 'loop-delay.json');
  const server = await startTempInbox({ name, dataDir, preload: join(CHILDREN_DIR, 'loop-delay.mjs'), env: { LOOP_DELAY_FILE: delayFile, ...env } });
  return { ...server, delayFile };
}

/** Asks the server for its loop delay since the last ask (and resets it). */
async function loopDelay(server: Server): Promise<{ p99: number; max: number; mean: number }> {
  const before = (() => {
    try {
      return statSync(server.delayFile).mtimeMs;
    } catch {
      return 0;
    }
  })();
  process.kill(server.child.pid, 'SIGUSR2');
  const deadline = Date.now() + 5000;
  for (;;) {
    try {
      if (statSync(server.delayFile).mtimeMs !== before) return JSON.parse(readFileSync(server.delayFile, 'utf8')) as { p99: number; max: number; mean: number };
    } catch {
      // not written yet
    }
    if (Date.now() > deadline) throw new Error('the server did not report its event-loop delay');
    await sleep(20);
  }
}

/** Polls /health_check every 100 ms until stopped; a 5 s time-out counts as 5,000 ms and a failure. */
function healthPoller(httpUrl: string) {
  const latencies: number[] = [];
  let failures = 0;
  let running = true;
  const done = (async () => {
    while (running) {
      const t = performance.now();
      const ok = await Promise.race([
        httpRequest(`${httpUrl}/health_check`).then((r) => r.status === 200, () => false),
        sleep(5000).then(() => false),
      ]);
      latencies.push(performance.now() - t);
      if (!ok) failures++;
      await sleep(100);
    }
  })();
  return {
    async stop() {
      running = false;
      await done;
      return { max: Math.max(...latencies), p99: percentile(latencies, 99), samples: latencies.length, failures };
    },
  };
}

function manyParts(parts: number): Buffer {
  const out = ['Subject: many parts', 'Content-Type: multipart/mixed; boundary="b"', '', ''];
  for (let i = 0; i < parts; i++) out.push('--b', `Content-Type: application/octet-stream; name="p${i}.bin"`, '', 'x');
  out.push('--b--', '');
  return Buffer.from(out.join('\r\n'));
}

function deepNesting(depth: number): Buffer {
  const out = ['Subject: deep', 'Content-Type: multipart/mixed; boundary="b0"', ''];
  for (let i = 1; i < depth; i++) out.push(`--b${i - 1}`, `Content-Type: multipart/mixed; boundary="b${i}"`, '');
  out.push(`--b${depth - 1}`, 'Content-Type: text/plain', '', 'bottom');
  for (let i = depth - 1; i >= 0; i--) out.push(`--b${i}--`);
  out.push('');
  return Buffer.from(out.join('\r\n'));
}

function manyHeaders(count: number): Buffer {
  const out = ['Subject: headers'];
  for (let i = 0; i < count; i++) out.push(`X-H${i}: v`);
  out.push('', 'body', '');
  return Buffer.from(out.join('\r\n'));
}

/** Ordinary mail at a steady pace over one connection; returns the 250 latencies. */
function ordinaryMail(smtpPort: number, to: string, perSecond: number) {
  const latencies: number[] = [];
  let errors = 0;
  let running = true;
  const template = messageTemplate(3 * 1024, `ord${Date.now()}`);
  const done = (async () => {
    const c = await SmtpConnection.open(smtpPort);
    for (let i = 0; running; i++) {
      const t = performance.now();
      try {
        await c.send('sender@example.com', to, template(i, to));
        latencies.push(performance.now() - t);
      } catch {
        errors++;
      }
      await sleep(Math.max(0, 1000 / perSecond - (performance.now() - t)));
    }
    await c.close();
  })();
  return {
    async stop() {
      running = false;
      await done;
      return { p99: percentile(latencies, 99), count: latencies.length, errors };
    },
  };
}

/** Sends hostile mails in a loop over `connections` connections until stopped. */
function attack(smtpPort: number, to: string, connections: number) {
  const kinds = [manyParts(40_000), deepNesting(3_000), manyHeaders(60_000)];
  let sent = 0;
  let refused = 0;
  let running = true;
  const done = Promise.all(
    Array.from({ length: connections }, async (_, c) => {
      let conn = await SmtpConnection.open(smtpPort);
      for (let i = c; running; i++) {
        try {
          await conn.send('attacker@example.net', to, kinds[i % kinds.length]!);
          sent++;
        } catch {
          refused++;
          await conn.close().catch(() => undefined);
          conn = await SmtpConnection.open(smtpPort);
        }
      }
      await conn.close().catch(() => undefined);
    }),
  );
  return {
    async stop() {
      running = false;
      await done;
      return { sent, refused };
    },
  };
}

async function phase(server: Server, to: string, seconds: number, hostile: boolean) {
  await loopDelay(server); // starts the window
  const health = healthPoller(server.httpUrl);
  const ordinary = ordinaryMail(server.smtpPort, to, 20);
  const attacker = hostile ? attack(server.smtpPort, to, 2) : undefined;
  await sleep(seconds * 1000);
  const attackStats = await attacker?.stop();
  const mail = await ordinary.stop();
  const h = await health.stop();
  const delay = await loopDelay(server);
  return { delay, health: h, mail, attack: attackStats };
}

/** Opens one client that starts a DATA and sends `bytes` of it without the final dot. */
function holdTransaction(port: number, to: string, bytes: number): Promise<{ socket: Socket; admitted: boolean; reply: string }> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: '127.0.0.1' });
    let buf = '';
    let settled = false;
    const settle = (admitted: boolean) => {
      if (settled) return;
      settled = true;
      resolve({ socket, admitted, reply: buf.split('\r\n').filter(Boolean).pop() ?? '' });
    };
    socket.setEncoding('latin1');
    socket.on('error', () => settle(false));
    socket.on('close', () => settle(false));
    socket.on('data', (d: string) => {
      buf += d;
      if (/^(4|5)\d\d /m.test(buf)) return settle(false);
      if (buf.startsWith('220') && !buf.includes('EHLO-SENT')) {
        buf += 'EHLO-SENT';
        socket.write(`EHLO holder.bench\r\nMAIL FROM:<h@example.net>\r\nRCPT TO:<${to}>\r\nDATA\r\n`);
      }
      if (/^354 /m.test(buf)) {
        const chunk = Buffer.alloc(64 * 1024, 'x');
        let left = bytes;
        socket.write('Subject: unfinished\r\n\r\n');
        const pump = () => {
          while (left > 0) {
            const n = Math.min(left, chunk.length);
            left -= n;
            if (!socket.write(chunk.subarray(0, n))) return socket.once('drain', pump);
          }
          settle(true);
        };
        pump();
      }
    });
  });
}

async function holders(env: Record<string, string>, name: string, quick: boolean) {
  const server = await startServer(name, env);
  try {
    const { address } = await createAddress(server.httpUrl);
    await sleep(500);
    const before = memoryOf(server.child.pid).rss;
    const health = healthPoller(server.httpUrl);
    const held = await Promise.all(Array.from({ length: HOLDERS }, () => holdTransaction(server.smtpPort, address, HOLD_BYTES)));
    // Let the server take in what was sent.
    await sleep(quick ? 1500 : 3000);
    const during = memoryOf(server.child.pid).rss;
    const h = await health.stop();
    for (const x of held) x.socket.destroy();
    await sleep(1500);
    const after = memoryOf(server.child.pid).rss;
    return {
      before,
      during,
      after,
      growth: during - before,
      admitted: held.filter((x) => x.admitted).length,
      refused: held.filter((x) => !x.admitted).length,
      health: h,
    };
  } finally {
    await server.stop();
  }
}

export const hostile: Bench = async (ctx) => {
  const seconds = ctx.quick ? 3 : 10;
  const rows: Row[] = [];
  // Parsing is what is measured: the per-client SMTP limits (which would refuse the attacker sooner) stay lifted.
  const server = await startServer('temp-inbox-hostile', {});
  let baseline;
  let attacked;
  try {
    const { address } = await createAddress(server.httpUrl);
    ctx.log(`baseline: ordinary mail and health polls for ${seconds} s`);
    baseline = await phase(server, address, seconds, false);
    ctx.log(`attack: the same while hostile mails arrive for ${seconds} s`);
    attacked = await phase(server, address, seconds, true);
    ctx.log(`hostile mails sent ${attacked.attack!.sent}, refused ${attacked.attack!.refused}`);
  } finally {
    await server.stop();
  }
  rows.push(
    {
      bench: 'hostile',
      measure: 'event-loop delay p99 while hostile mail arrives (ms)',
      ours: fmt(attacked.delay.p99),
      baseline: fmt(baseline.delay.p99),
      result: fmt(attacked.delay.p99),
      target: `< ${DELAY_P99_TARGET_MS}`,
      verdict: verdict(attacked.delay.p99 < DELAY_P99_TARGET_MS),
      values: { attackP99: round(attacked.delay.p99), attackMax: round(attacked.delay.max), baselineP99: round(baseline.delay.p99), baselineMax: round(baseline.delay.max), hostileSent: attacked.attack!.sent },
    },
    {
      bench: 'hostile',
      measure: '/health_check max while hostile mail arrives (ms)',
      ours: fmt(attacked.health.max),
      baseline: fmt(baseline.health.max),
      result: `${fmt(attacked.health.max)} (${attacked.health.failures} failed)`,
      target: `< ${HEALTH_TARGET_MS}`,
      verdict: verdict(attacked.health.max < HEALTH_TARGET_MS && attacked.health.failures === 0),
      values: { attackMax: round(attacked.health.max), baselineMax: round(baseline.health.max), failures: attacked.health.failures },
    },
    {
      bench: 'hostile',
      measure: 'ordinary mail 250 latency p99 (ms)',
      ours: fmt(attacked.mail.p99),
      baseline: fmt(baseline.mail.p99),
      result: `${fmt(attacked.mail.p99 / baseline.mail.p99)}×`,
      target: 'info',
      verdict: 'info',
      values: { attack: round(attacked.mail.p99), baseline: round(baseline.mail.p99), errors: attacked.mail.errors },
    },
  );

  for (const [label, env] of [
    ['shipped caps', { SMTP_MAX_CLIENTS_PER_IP: '10' }],
    ['per-client cap lifted (the in-flight budget holds)', { SMTP_MAX_CLIENTS_PER_IP: '1000' }],
  ] as const) {
    ctx.log(`${HOLDERS} unfinished ${HOLD_BYTES / 1e6} MB transactions, ${label}`);
    const r = await holders(env, 'temp-inbox-holders', ctx.quick);
    ctx.log(`RSS ${fmt(r.before / MB)} -> ${fmt(r.during / MB)} MB (after closing ${fmt(r.after / MB)} MB); ${r.admitted} sent their bytes, ${r.refused} refused`);
    rows.push({
      bench: 'hostile',
      measure: `RSS growth, ${HOLDERS} unfinished 3 MB DATA, ${label} (MB)`,
      ours: fmt(r.growth / MB),
      baseline: fmt(r.before / MB),
      result: `${fmt(r.growth / MB)} (${r.refused} refused; health max ${fmt(r.health.max)} ms)`,
      target: `< ${RSS_GROWTH_TARGET / MB}; health < ${HEALTH_TARGET_MS}`,
      verdict: verdict(r.growth < RSS_GROWTH_TARGET && r.health.max < HEALTH_TARGET_MS && r.health.failures === 0),
      values: { before: r.before, during: r.during, after: r.after, admitted: r.admitted, refused: r.refused, healthMax: round(r.health.max) },
    });
  }
  return { rows, details: { seconds, baseline, attacked } };
};

// Run alone: node --import tsx bench/src/hostile.ts [--quick]
if (import.meta.url === `file://${process.argv[1]}`) {
  const { table } = await import('./lib/report.js');
  const { stopAllChildren, removeAllTempDirs } = await import('./lib/procs.js');
  try {
    const out = await hostile({ quick: process.argv.includes('--quick'), log: (m) => process.stdout.write(`hostile: ${m}\n`) });
    process.stdout.write(`${table(out.rows)}\n`);
  } finally {
    await stopAllChildren();
    removeAllTempDirs();
  }
}
