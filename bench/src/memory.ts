// 5. Memory: resident memory (VmRSS of the server process) after ingesting
// 100,000 3 KB mails over SMTP, and how much one 10 MB message raises it
// (peak during delivery, from VmHWM after resetting it, and sampled VmRSS).
// Targets: at most 200 MB after the ingest; the rise at most 3x the message size.
import { performance } from 'node:perf_hooks';
import { createAddress, getJson, httpRequest } from './lib/http.js';
import { bigMessage, messageTemplate } from './lib/messages.js';
import { memoryOf, resetPeak, sleep } from './lib/procs.js';
import { verdict, type Bench, type Row } from './lib/report.js';
import { blast, sendOnce } from './lib/smtp-client.js';
import { fmt, MB, round } from './lib/stats.js';
import { startTempInbox, type TempInbox } from './lib/temp-inbox.js';
import { startSmtpSink } from './lib/baselines.js';
import { benchSchema, dropSchema, PG_URL, pgReachable } from './lib/pg.js';

const RSS_TARGET = 200 * MB;
const BIG_FACTOR = 3;
const BIG_BYTES = 10 * 1000 * 1000;

/** The pauses that let RSS settle between steps: a fifth as long in quick mode, whose figures catch rot, not regressions. */
let settleFactor = 1;
const settle = (ms: number) => sleep(ms * settleFactor);

/** Runs `work` while sampling the process's RSS every 5 ms; returns the peak rise over the RSS before it. */
async function peakDuring<T>(pid: number, work: () => Promise<T>): Promise<{ result: T; before: number; peak: number; after: number; hwmReset: boolean }> {
  const hwmReset = resetPeak(pid);
  const before = memoryOf(pid).rss;
  let sampled = before;
  let running = true;
  const sampler = (async () => {
    while (running) {
      sampled = Math.max(sampled, memoryOf(pid).rss);
      await sleep(5);
    }
  })();
  const result = await work().finally(() => (running = false));
  await sampler;
  await settle(1000);
  const m = memoryOf(pid);
  return { result, before, peak: Math.max(sampled, hwmReset ? m.hwm : 0), after: m.rss, hwmReset };
}

/** The newest mail of the inbox read with GET /api/mail/{uuid}, while `pid`'s RSS is sampled. */
async function readBack(pid: number, httpUrl: string, jwt: string) {
  const list = await getJson<{ results: { uuid: string }[] }>(`${httpUrl}/api/mails?limit=1&offset=0`, jwt);
  const uuid = list.results[0]!.uuid;
  return peakDuring(pid, async () => {
    const res = await httpRequest(`${httpUrl}/api/mail/${uuid}`, { headers: { authorization: `Bearer ${jwt}` } });
    if (res.status !== 200) throw new Error(`GET big mail -> ${res.status}`);
    return res.body.length;
  });
}

export const memory: Bench = async (ctx) => {
  const count = ctx.quick ? 1_000 : 100_000;
  settleFactor = ctx.quick ? 0.2 : 1;
  let server: TempInbox | undefined;
  try {
    server = await startTempInbox({ name: 'temp-inbox-memory' });
    const pid = server.child.pid;
    const inboxes = await Promise.all(Array.from({ length: 10 }, () => createAddress(server!.httpUrl)));
    await settle(500);
    const atStart = memoryOf(pid).rss;

    ctx.log(`ingesting ${count} 3 KB mails`);
    const t0 = performance.now();
    let hwmIngest = 0;
    const sampler = setInterval(() => (hwmIngest = Math.max(hwmIngest, memoryOf(pid).rss)), 250);
    const ingest = await blast({
      port: server.smtpPort,
      connections: 10,
      messages: count,
      recipient: (_i, c) => inboxes[c]!.address,
      message: messageTemplate(3 * 1024, `mem${Date.now()}`),
    }).finally(() => clearInterval(sampler));
    ctx.log(`ingested at ${fmt(ingest.rate)} msg/s in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    await settle(2000);
    const afterIngest = memoryOf(pid);

    ctx.log('one 10 MB message');
    const big = bigMessage(BIG_BYTES, inboxes[0]!.address);
    const deliver = await peakDuring(pid, () => sendOnce(server!.smtpPort, inboxes[0]!.address, big));
    const rise = deliver.peak - deliver.before;

    // Reading it back (informational): GET /api/mail/{uuid} returns the raw message as JSON.
    const read = await readBack(pid, server.httpUrl, inboxes[0]!.jwt);
    const readRise = read.peak - read.before;
    await server.stop();
    server = undefined;

    // The same message into the no-op smtp-server sink (informational): what the SMTP
    // library alone adds while reading it (its DATA parser copies every chunk, and V8
    // frees those copies only at its next collection).
    const sink = await startSmtpSink();
    let sinkDeliver: Awaited<ReturnType<typeof peakDuring>>;
    try {
      await blast({ port: sink.port, connections: 10, messages: Math.min(count, 10_000), recipient: () => 'sink@bench.example.com', message: messageTemplate(3 * 1024, `memsink${Date.now()}`) });
      await settle(2000);
      sinkDeliver = await peakDuring(sink.child.pid, () => sendOnce(sink.port, 'sink@bench.example.com', big));
    } finally {
      await sink.stop();
    }
    const sinkRise = sinkDeliver.peak - sinkDeliver.before;

    // The same message into a server on PostgreSQL (informational): its first and its
    // second, since memory the first leaves behind shows as a smaller second rise.
    let onPg: { first: Awaited<ReturnType<typeof peakDuring>>; second: Awaited<ReturnType<typeof peakDuring>>; read: Awaited<ReturnType<typeof readBack>> } | undefined;
    if (await pgReachable()) {
      const schema = benchSchema('memory');
      let pgServer: TempInbox | undefined;
      try {
        pgServer = await startTempInbox({ name: 'temp-inbox-memory-postgres', env: { DATABASE_URL: PG_URL, DATABASE_SCHEMA: schema } });
        const pgPid = pgServer.child.pid;
        const to = await createAddress(pgServer.httpUrl);
        await blast({ port: pgServer.smtpPort, connections: 10, messages: Math.min(count, 2_000), recipient: () => to.address, message: messageTemplate(3 * 1024, `mempg${Date.now()}`) });
        await settle(2000);
        const once = () => peakDuring(pgPid, () => sendOnce(pgServer!.smtpPort, to.address, big));
        const first = await once();
        await settle(1000);
        const second = await once();
        await settle(1000);
        onPg = { first, second, read: await readBack(pgPid, pgServer.httpUrl, to.jwt) };
      } finally {
        await pgServer?.stop();
        await dropSchema(schema);
      }
    } else ctx.log(`PostgreSQL: not reachable at ${PG_URL}; its row is not measured`);

    const rows: Row[] = [
      {
        bench: 'memory',
        measure: `RSS after ingesting ${count.toLocaleString('en-US')} mails`,
        ours: `${fmt(afterIngest.rss / MB)} MB (peak ${fmt(Math.max(hwmIngest, afterIngest.hwm) / MB)} MB)`,
        baseline: `${fmt(atStart / MB)} MB at start`,
        result: `${fmt(afterIngest.rss / MB)} MB`,
        target: '≤ 200 MB',
        verdict: verdict(afterIngest.rss <= RSS_TARGET),
        values: { rssBytes: afterIngest.rss, peakBytes: Math.max(hwmIngest, afterIngest.hwm), startBytes: atStart, messages: count, ingestRate: round(ingest.rate) },
      },
      {
        bench: 'memory',
        measure: `one ${fmt(big.length / 1e6, 1)} MB message: peak RSS rise`,
        ours: `+${fmt(rise / MB)} MB peak, +${fmt((deliver.after - deliver.before) / MB)} MB after 1 s`,
        baseline: `${fmt(deliver.before / MB)} MB before`,
        result: `${fmt(rise / big.length)}× its size`,
        target: `≤ ${BIG_FACTOR}×`,
        verdict: verdict(rise <= BIG_FACTOR * big.length),
        values: { before: deliver.before, peak: deliver.peak, after: deliver.after, messageBytes: big.length, factor: round(rise / big.length, 3), hwmReset: deliver.hwmReset },
      },
      {
        bench: 'memory',
        measure: 'the same message into the no-op sink',
        ours: `+${fmt(sinkRise / MB)} MB peak (smtp-server alone)`,
        baseline: `${fmt(sinkDeliver.before / MB)} MB before`,
        result: `${fmt(sinkRise / big.length)}× its size`,
        target: '(none)',
        verdict: 'info',
        values: { before: sinkDeliver.before, peak: sinkDeliver.peak, after: sinkDeliver.after, factor: round(sinkRise / big.length, 3) },
      },
      {
        bench: 'memory',
        measure: 'reading it back (GET /api/mail)',
        ours: `+${fmt(readRise / MB)} MB peak`,
        baseline: `${fmt(read.before / MB)} MB before`,
        result: `${fmt(readRise / big.length)}× its size`,
        target: '(none)',
        verdict: 'info',
        values: { before: read.before, peak: read.peak, after: read.after, responseBytes: read.result, factor: round(readRise / big.length, 3) },
      },
    ];
    if (onPg) {
      const [first, second] = [onPg.first.peak - onPg.first.before, onPg.second.peak - onPg.second.before];
      rows.push({
        bench: 'memory',
        measure: 'the same message on PostgreSQL, first and second',
        ours: `+${fmt(first / MB)} MB, then +${fmt(second / MB)} MB`,
        baseline: `${fmt(onPg.first.before / MB)} MB before`,
        result: `${fmt(first / big.length)}×, then ${fmt(second / big.length)}× its size`,
        target: '(none)',
        verdict: 'info',
        values: { firstBefore: onPg.first.before, firstPeak: onPg.first.peak, secondBefore: onPg.second.before, secondPeak: onPg.second.peak, first: round(first / big.length, 3), second: round(second / big.length, 3) },
      });
      const pgReadRise = onPg.read.peak - onPg.read.before;
      rows.push({
        bench: 'memory',
        measure: 'reading it back on PostgreSQL (GET /api/mail)',
        ours: `+${fmt(pgReadRise / MB)} MB peak`,
        baseline: `${fmt(onPg.read.before / MB)} MB before`,
        result: `${fmt(pgReadRise / big.length)}× its size`,
        target: '(none)',
        verdict: 'info',
        values: { before: onPg.read.before, peak: onPg.read.peak, ratio: round(pgReadRise / big.length, 3) },
      });
    } else {
      rows.push({ bench: 'memory', measure: 'the same message on PostgreSQL', ours: '', baseline: '', result: `no PostgreSQL at ${PG_URL}`, target: '(none)', verdict: 'not measured' });
    }
    return { rows, details: { count, ingest, atStart, afterIngest, hwmIngest, deliver: { ...deliver, result: undefined }, read: { ...read, result: undefined }, sink: { ...sinkDeliver, result: undefined } } };
  } finally {
    await server?.stop();
  }
};
