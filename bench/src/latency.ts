// 3. Delivery latency: from SMTP 250 to the mail being listed by
// GET /api/mails (and to its push event, when the server has /api/events), at
// 100 messages/s (open loop, 10 connections, one address per connection).
// Target: p99 at most 50 ms.
import { request, type IncomingMessage } from 'node:http';
import { performance } from 'node:perf_hooks';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startBareHttp, type Baseline } from './lib/baselines.js';
import { createAddress, httpRequest } from './lib/http.js';
import { messageTemplate } from './lib/messages.js';
import { makeTempDir, sleep } from './lib/procs.js';
import { verdict, type Bench, type Row } from './lib/report.js';
import { SmtpConnection } from './lib/smtp-client.js';
import { fmt, median, percentile, round } from './lib/stats.js';
import { startTempInbox, type TempInbox } from './lib/temp-inbox.js';

const TARGET_P99_MS = 50;
const RATE = 100;
const CONNECTIONS = 10;

interface Sample {
  /** DATA end -> 250. */
  smtpMs: number;
  /** 250 -> a GET /api/mails response that lists it. */
  listedMs: number;
  /** How many list requests it took (1 = listed on the first look). */
  polls: number;
  /** 250 -> push event (negative: the event came before the 250). */
  pushMs?: number;
}

/** An SSE stream; calls onEvent with each event's type, data and arrival time. */
export function openEvents(url: string, jwt: string, onEvent: (type: string, data: string, at: number) => void): Promise<{ close(): void } | undefined> {
  return new Promise((resolve) => {
    const req = request(url, { headers: { authorization: `Bearer ${jwt}`, accept: 'text/event-stream' } }, (res: IncomingMessage) => {
      if (res.statusCode !== 200 || !String(res.headers['content-type']).startsWith('text/event-stream')) {
        res.resume();
        resolve(undefined);
        return;
      }
      res.setEncoding('utf8');
      let buf = '';
      res.on('data', (d: string) => {
        const at = performance.now();
        buf = (buf + d).replace(/\r\n/g, '\n');
        let i;
        while ((i = buf.indexOf('\n\n')) >= 0) {
          const block = buf.slice(0, i);
          buf = buf.slice(i + 2);
          const lines = block.split('\n');
          const type = lines.find((l) => l.startsWith('event:'))?.slice(6).trim() ?? 'message';
          const data = lines
            .filter((l) => l.startsWith('data:'))
            .map((l) => l.slice(5).trim())
            .join('\n');
          if (data) onEvent(type, data, at);
        }
      });
      res.on('error', () => undefined);
      resolve({ close: () => req.destroy() });
    });
    req.on('error', () => resolve(undefined));
    req.end();
  });
}

export const latency: Bench = async (ctx) => {
  const seconds = ctx.quick ? 2 : 30;
  const total = seconds * RATE;
  const warmup = (ctx.quick ? 0.5 : 5) * RATE;
  let server: TempInbox | undefined;
  let bare: Baseline | undefined;
  const streams: { close(): void }[] = [];
  const conns: SmtpConnection[] = [];
  try {
    server = await startTempInbox({ name: 'temp-inbox-latency' });
    const base = server.httpUrl;
    const inboxes = await Promise.all(Array.from({ length: CONNECTIONS }, () => createAddress(base)));
    const tag = `lat${Date.now()}`;
    const template = messageTemplate(3 * 1024, tag);

    // Push, when the server has it: one event stream per inbox. Each `mail` event is
    // matched to its message by Message-ID.
    const pushAt = new Map<string, number>();
    for (const inbox of inboxes) {
      const s = await openEvents(`${base}/api/events`, inbox.jwt, (type, data, at) => {
        if (type === 'mail') pushAt.set((JSON.parse(data) as { message_id: string }).message_id, at);
      });
      if (s) streams.push(s);
      else break;
    }
    const push = streams.length === CONNECTIONS;
    ctx.log(push ? 'push: /api/events is there, measuring it too' : 'push: no /api/events in this build; measuring listing only');

    // Noise floor: a bare node:http server asked at the same rate, at the same time.
    // Its p99 is what this machine adds to any request while the bench runs.
    const dir = makeTempDir('bare');
    writeFileSync(join(dir, 'ping'), '{"results":[],"count":0}');
    bare = await startBareHttp([{ prefix: '/', file: join(dir, 'ping'), contentType: 'application/json; charset=utf-8' }]);

    for (let c = 0; c < CONNECTIONS; c++) conns.push(await SmtpConnection.open(server.smtpPort));
    type Measured = Sample & { k: number; at250: number; messageId: string };

    /** Open loop: message n of the phase is due at start + n/RATE, whatever happened to the ones before. */
    const runPhase = async (first: number, count: number) => {
      const samples: Measured[] = [];
      const floor: number[] = [];
      const pending: Promise<void>[] = [];
      const queues: Promise<void>[] = inboxes.map(() => Promise.resolve());
      const deliverAndPoll = async (i: number, k: number) => {
        const inbox = inboxes[k]!;
        const t0 = performance.now();
        const reply = await conns[k]!.send('loadgen@bench.example.com', inbox.address, template(i, inbox.address));
        const at250 = reply.at;
        const wanted = `<${tag}.${i}@bench.example.com>`;
        const sample: Measured = { k, at250, messageId: wanted, smtpMs: at250 - t0, listedMs: NaN, polls: 0 };
        samples.push(sample);
        const poll = (async () => {
          for (;;) {
            sample.polls++;
            const res = await httpRequest(`${base}/api/mails?limit=5&offset=0`, { headers: { authorization: `Bearer ${inbox.jwt}` } });
            if (res.status !== 200) throw new Error(`list -> ${res.status}`);
            const body = JSON.parse(res.body.toString('utf8')) as { results: { message_id: string }[] };
            if (body.results.some((r) => r.message_id === wanted)) {
              sample.listedMs = res.at - at250;
              return;
            }
            if (performance.now() - at250 > 10_000) throw new Error(`mail ${wanted} not listed 10 s after its 250`);
          }
        })();
        poll.catch(() => undefined); // handled: awaited below
        pending.push(poll);
      };
      const start = performance.now();
      for (let n = 0; n < count; n++) {
        const due = start + (n * 1000) / RATE;
        const wait = due - performance.now();
        if (wait > 1) await sleep(wait);
        const k = n % CONNECTIONS;
        const sent = performance.now();
        const probe = httpRequest(`http://127.0.0.1:${bare!.port}/api/mails?limit=5&offset=0`).then((r) => {
          floor.push(r.at - sent);
        });
        probe.catch(() => undefined);
        pending.push(probe);
        queues[k] = queues[k]!.then(() => deliverAndPoll(first + n, k));
        queues[k]!.catch(() => undefined); // handled: awaited below
      }
      await Promise.all(queues);
      await Promise.all(pending);
      return { samples, floor, start, achieved: count / ((performance.now() - start) / 1000) };
    };

    ctx.log(`warm-up: ${warmup} messages at ${RATE}/s`);
    await runPhase(1_000_000, warmup);
    ctx.log(`${total} messages at ${RATE}/s over ${CONNECTIONS} connections`);
    const { samples, floor, start, achieved } = await runPhase(0, total);
    if (push) await sleep(500);

    for (const s of samples) {
      const at = pushAt.get(s.messageId);
      if (at !== undefined) (s as Sample).pushMs = at - s.at250;
    }
    const listed = samples.map((s) => s.listedMs);
    const p50 = percentile(listed, 50);
    const p99 = percentile(listed, 99);
    const firstLook = samples.filter((s) => s.polls === 1).length / samples.length;
    const smtp = samples.map((s) => s.smtpMs);
    const rows: Row[] = [
      {
        bench: 'latency',
        measure: `250 → listed, ${RATE} msg/s`,
        ours: `p50 ${fmt(p50)} ms, p99 ${fmt(p99)} ms`,
        baseline: `noise floor: bare GET p50 ${fmt(percentile(floor, 50))}, p99 ${fmt(percentile(floor, 99))} ms`,
        result: `p99 ${fmt(p99)} ms`,
        target: `p99 ≤ ${TARGET_P99_MS} ms`,
        verdict: verdict(p99 <= TARGET_P99_MS),
        values: { p50: round(p50, 3), p99: round(p99, 3), max: round(Math.max(...listed), 3), listedOnFirstLook: round(firstLook, 4), achievedRate: round(achieved), smtpP50: round(median(smtp), 3), smtpP99: round(percentile(smtp, 99), 3), floorP50: round(percentile(floor, 50), 3), floorP99: round(percentile(floor, 99), 3) },
      },
    ];
    if (push) {
      const pushed = samples.map((s) => (s as Sample).pushMs).filter((x): x is number => x !== undefined);
      const pp99 = percentile(pushed, 99);
      rows.push({
        bench: 'latency',
        measure: `250 → push event, ${RATE} msg/s`,
        ours: `p50 ${fmt(percentile(pushed, 50))} ms, p99 ${fmt(pp99)} ms`,
        baseline: '',
        result: `p99 ${fmt(pp99)} ms (${pushed.length}/${samples.length} events)`,
        target: `p99 ≤ ${TARGET_P99_MS} ms`,
        verdict: pushed.length === samples.length ? verdict(pp99 <= TARGET_P99_MS) : 'missed',
        values: { p50: round(percentile(pushed, 50), 3), p99: round(pp99, 3), events: pushed.length, messages: samples.length },
      });
    } else {
      rows.push({ bench: 'latency', measure: '250 → push event', ours: 'no /api/events yet', baseline: '', result: '', target: `p99 ≤ ${TARGET_P99_MS} ms`, verdict: 'not measured' });
    }
    return {
      rows,
      details: {
        params: { seconds, warmupMessages: warmup, rate: RATE, connections: CONNECTIONS, messageBytes: 3 * 1024 },
        achievedRate: achieved,
        listedOnFirstLook: firstLook,
        smtpMs: { p50: median(smtp), p99: percentile(smtp, 99), max: Math.max(...smtp) },
        listedMs: { p50, p90: percentile(listed, 90), p99, max: Math.max(...listed) },
        noiseFloorMs: { p50: percentile(floor, 50), p90: percentile(floor, 90), p99: percentile(floor, 99), max: Math.max(...floor) },
        // When the slow ones happened (seconds from the start), to tell periodic stalls from noise.
        slowListed: samples.filter((x) => x.listedMs > 20).map((x) => ({ at: round((x.at250 - start) / 1000, 3), ms: round(x.listedMs, 1), smtpMs: round(x.smtpMs, 1) })),
        push,
      },
    };
  } finally {
    for (const s of streams) s.close();
    for (const c of conns) await c.close().catch(() => c.destroy());
    await bare?.stop();
    await server?.stop();
  }
};
