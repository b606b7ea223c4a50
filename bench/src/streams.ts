// 10. Event streams: `250` → push event (GET /api/events) while many streams are open
// on one node. Three phases on one server, in turn: one stream on each of 10
// addresses (the baseline, as the latency bench has it), one on each of 1,000
// addresses, then ten on each of them (10,000 streams, the node's shipped
// EVENTS_PER_NODE). In each, mail arrives at 100 messages/s (open loop, 10 SMTP
// connections) to the addresses with streams, and every stream of the address must
// get the mail's event. Targets: p99 ≤ 2 ms with 1,000 streams open; all 10,000
// open and every event delivered to every stream. Beside them: the server's memory
// per open stream and its event-loop delay in each phase.
import { performance } from 'node:perf_hooks';
import { join } from 'node:path';
import { createAddress } from './lib/http.js';
import { LOOP_DELAY_PRELOAD, loopDelaySince, type LoopDelay } from './lib/loop-delay.js';
import { messageTemplate } from './lib/messages.js';
import { makeTempDir, memoryOf, sleep } from './lib/procs.js';
import { verdict, type Bench, type Row } from './lib/report.js';
import { SmtpConnection } from './lib/smtp-client.js';
import { fmt, MB, percentile, round } from './lib/stats.js';
import { startTempInbox, type TempInbox } from './lib/temp-inbox.js';
import { openEvents } from './latency.js';

const TARGET_P99_MS = 2;
const RATE = 100;
const SMTP_CONNECTIONS = 10;
const PER_ADDRESS_WIDE = 10;
/** Streams and addresses are made this many at a time. */
const OPENING = 100;

interface Phase {
  name: string;
  streams: number;
  /** 250 → event, one sample per stream that got the event. */
  latencies: number[];
  /** Events expected (mails × streams of their address) and received. */
  expected: number;
  received: number;
  loop: LoopDelay;
  rssBytes: number;
}

async function inBatches<T>(count: number, make: (i: number) => Promise<T>): Promise<T[]> {
  const out: T[] = [];
  for (let i = 0; i < count; i += OPENING) out.push(...(await Promise.all(Array.from({ length: Math.min(OPENING, count - i) }, (_, k) => make(i + k)))));
  return out;
}

export const streams: Bench = async (ctx) => {
  const addressCount = ctx.quick ? 100 : 1000;
  const seconds = ctx.quick ? 2 : 10;
  let server: TempInbox | undefined;
  const open: { close(): void }[] = [];
  const conns: SmtpConnection[] = [];
  try {
    // The preload writes the delay here, in the server's data directory (removed with it).
    const dataDir = makeTempDir('data');
    const delayFile = join(dataDir, 'loop-delay.json');
    server = await startTempInbox({
      name: 'temp-inbox-streams',
      dataDir,
      preload: LOOP_DELAY_PRELOAD,
      // The load generator is one client holding every stream; the node's own cap stays as shipped.
      env: { EVENTS_PER_CLIENT: String(addressCount * PER_ADDRESS_WIDE), LOOP_DELAY_FILE: delayFile },
    });
    const base = server.httpUrl;
    const pid = server.child.pid;
    ctx.log(`making ${addressCount} addresses`);
    const inboxes = await inBatches(addressCount, () => createAddress(base));
    const tag = `streams${Date.now()}`;
    const template = messageTemplate(3 * 1024, tag);
    for (let c = 0; c < SMTP_CONNECTIONS; c++) conns.push(await SmtpConnection.open(server.smtpPort));

    // Every stream's events land here: Message-ID → arrival times, one per stream.
    const arrivals = new Map<string, number[]>();
    const onEvent = (type: string, data: string, at: number) => {
      if (type !== 'mail') return;
      const id = (JSON.parse(data) as { message_id: string }).message_id;
      const list = arrivals.get(id);
      if (list) list.push(at);
      else arrivals.set(id, [at]);
    };
    let refused = 0;
    const openOn = async (k: number) => {
      const s = await openEvents(`${base}/api/events`, inboxes[k]!.jwt, onEvent);
      if (s) open.push(s);
      else refused++;
    };

    let sent = 0;
    /** Mail at RATE for `seconds` to `targets` (address indexes) in turn; each address has `perAddress` streams. */
    const measure = async (name: string, targets: number, perAddress: number): Promise<Phase> => {
      await sleep(500);
      await loopDelaySince(pid, delayFile);
      const total = seconds * RATE;
      const at250 = new Map<string, number>();
      const queues: Promise<void>[] = conns.map(() => Promise.resolve());
      const t0 = performance.now();
      for (let n = 0; n < total; n++) {
        const due = t0 + (n * 1000) / RATE;
        const wait = due - performance.now();
        if (wait > 0) await sleep(wait);
        const i = sent++;
        const k = i % targets;
        const c = i % SMTP_CONNECTIONS;
        queues[c] = queues[c]!.then(async () => {
          const reply = await conns[c]!.send('loadgen@bench.example.com', inboxes[k]!.address, template(i, inboxes[k]!.address));
          at250.set(`<${tag}.${i}@bench.example.com>`, reply.at);
        });
      }
      await Promise.all(queues);
      await sleep(1000); // the last events
      const loop = await loopDelaySince(pid, delayFile);
      const latencies: number[] = [];
      let received = 0;
      for (const [id, t] of at250) {
        const got = arrivals.get(id) ?? [];
        received += got.length;
        for (const a of got) latencies.push(a - t);
      }
      const phase = { name, streams: open.length, latencies, expected: at250.size * perAddress, received, loop, rssBytes: memoryOf(pid).rss };
      ctx.log(`${name}: ${open.length} streams, p99 ${fmt(percentile(latencies, 99))} ms, ${received}/${phase.expected} events, loop p99 ${fmt(loop.p99)} ms`);
      return phase;
    };

    const rssBefore = memoryOf(pid).rss;
    await inBatches(10, openOn);
    const few = await measure('10 streams', 10, 1);
    await inBatches(addressCount - 10, (i) => openOn(i + 10));
    const thousand = await measure(`${open.length} streams`, addressCount, 1);
    const rssThousand = memoryOf(pid).rss;
    for (let r = 1; r < PER_ADDRESS_WIDE; r++) await inBatches(addressCount, openOn);
    const opened = open.length;
    const rssWide = memoryOf(pid).rss;
    const wide = await measure(`${opened} streams`, addressCount, PER_ADDRESS_WIDE);
    const wanted = addressCount * PER_ADDRESS_WIDE;

    const p = (ph: Phase, q: number) => percentile(ph.latencies, q);
    const describe = (ph: Phase) => `p50 ${fmt(p(ph, 50))} ms, p99 ${fmt(p(ph, 99))} ms, ${ph.received}/${ph.expected} events`;
    const size = ctx.quick ? ' (quick: fewer streams, not judged)' : '';
    const rows: Row[] = [
      {
        bench: 'streams',
        measure: `250 → push event, ${thousand.streams.toLocaleString('en-US')} streams open, ${RATE} msg/s${size}`,
        ours: describe(thousand),
        baseline: `10 streams: ${describe(few)}`,
        result: `p99 ${fmt(p(thousand, 99))} ms`,
        target: `p99 ≤ ${TARGET_P99_MS} ms`,
        verdict: ctx.quick ? 'info' : thousand.received === thousand.expected ? verdict(p(thousand, 99) <= TARGET_P99_MS) : 'missed',
        values: { streams: thousand.streams, min: round(Math.min(...thousand.latencies), 3), p50: round(p(thousand, 50), 3), p99: round(p(thousand, 99), 3), events: thousand.received, expected: thousand.expected, baselineP99: round(p(few, 99), 3) },
      },
      {
        bench: 'streams',
        measure: `${wanted.toLocaleString('en-US')} streams on one node (${PER_ADDRESS_WIDE} per address), ${RATE} msg/s${size}`,
        ours: `${opened.toLocaleString('en-US')} open, ${refused} refused; ${describe(wide)}`,
        baseline: '',
        result: `${opened}/${wanted} open, ${wide.received}/${wide.expected} events`,
        target: 'all open, every event delivered',
        verdict: ctx.quick ? 'info' : verdict(opened === wanted && wide.received === wide.expected),
        values: { opened, wanted, refused, min: round(Math.min(...wide.latencies), 3), p50: round(p(wide, 50), 3), p99: round(p(wide, 99), 3), events: wide.received, expected: wide.expected },
      },
      {
        bench: 'streams',
        measure: 'server memory per open stream',
        ours: `${fmt((rssWide - rssThousand) / (opened - thousand.streams) / 1024)} KB (RSS ${fmt(rssBefore / MB)} → ${fmt(rssThousand / MB)} → ${fmt(rssWide / MB)} MB)`,
        baseline: '',
        result: `${fmt((rssWide - rssThousand) / (opened - thousand.streams) / 1024)} KB a stream`,
        target: '(none)',
        verdict: 'info',
        values: { rssBefore, rssThousand, rssWide, streamsThousand: thousand.streams, streamsWide: opened },
      },
      {
        bench: 'streams',
        measure: 'event-loop delay during each phase (ms)',
        ours: `${wide.streams.toLocaleString('en-US')} streams: p99 ${fmt(wide.loop.p99)}, max ${fmt(wide.loop.max)}`,
        baseline: `10: p99 ${fmt(few.loop.p99)}, max ${fmt(few.loop.max)}; ${thousand.streams.toLocaleString('en-US')}: p99 ${fmt(thousand.loop.p99)}, max ${fmt(thousand.loop.max)}`,
        result: `p99 ${fmt(wide.loop.p99)}`,
        target: '(none)',
        verdict: 'info',
        values: { fewP99: round(few.loop.p99, 2), fewMax: round(few.loop.max, 2), thousandP99: round(thousand.loop.p99, 2), thousandMax: round(thousand.loop.max, 2), wideP99: round(wide.loop.p99, 2), wideMax: round(wide.loop.max, 2) },
      },
    ];
    return { rows, details: { params: { addressCount, seconds, rate: RATE }, phases: [few, thousand, wide].map(({ latencies, ...ph }) => ({ ...ph, samples: latencies.length })) } };
  } finally {
    for (const s of open) s.close();
    for (const c of conns) await c.close().catch(() => undefined);
    await server?.stop();
  }
};
