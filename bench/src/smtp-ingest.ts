// 2. SMTP ingest: 3 KB messages over 10 pooled connections into temp-inbox,
// a no-op smtp-server sink and MailDev, alternating in the same run.
// Targets: at least 0.7 of the sink's rate; at least 2x MailDev's.
// temp-inbox runs at its default durability (SQLITE_SYNCHRONOUS=FULL: every mail's
// WAL synced before its 250), and a second one with NORMAL beside it, so the
// price of the sync is measured in the same run (informational). And both temp-inbox
// and MailDev again over 40 connections (informational): at 10, temp-inbox's closed
// loop waits on each mail's hand-overs between threads as much as on CPU, MailDev's
// on CPU alone (docs/benchmarks-journal.md "Still open"). Last, one mail at a time over a
// connection of its own, from connect to the 221 of QUIT, temp-inbox and MailDev in
// turn (informational): what an application that connects for each mail waits.
import { startMailDev, startSmtpSink, type Baseline } from './lib/baselines.js';
import { createAddress } from './lib/http.js';
import { interleave } from './lib/load.js';
import { messageTemplate } from './lib/messages.js';
import { verdict, type Bench, type Row } from './lib/report.js';
import { blast, sendOnce, type BlastResult } from './lib/smtp-client.js';
import { withCpu } from './lib/procs.js';
import { fmt, median, percentile, round } from './lib/stats.js';
import { startTempInbox, type TempInbox } from './lib/temp-inbox.js';

const SINK_TARGET = 0.7;
const MAILDEV_TARGET = 2;
export const MESSAGE_BYTES = 3 * 1024;
export const CONNECTIONS = 10;
const WIDE_CONNECTIONS = 40;

/** Milliseconds for each of `count` mails, one at a time, each over a connection of its own (connect to the 221 of QUIT). */
async function onePerConnection(port: number, to: string, count: number, message: (i: number) => Buffer): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < count; i++) {
    const t0 = performance.now();
    await sendOnce(port, to, message(i));
    times.push(performance.now() - t0);
  }
  return times;
}

export const smtpIngest: Bench = async (ctx) => {
  const p = ctx.quick ? { seconds: 1, warmup: 0.3, rounds: 1 } : { seconds: 5, warmup: 1, rounds: 5 };
  let server: TempInbox | undefined;
  let normal: TempInbox | undefined;
  let sink: Baseline | undefined;
  let maildev: Baseline | undefined;
  try {
    server = await startTempInbox({ name: 'temp-inbox-ingest' });
    const addresses = await Promise.all(Array.from({ length: CONNECTIONS }, () => createAddress(server!.httpUrl)));
    normal = await startTempInbox({ name: 'temp-inbox-ingest-normal', env: { SQLITE_SYNCHRONOUS: 'NORMAL' } });
    const normalAddresses = await Promise.all(Array.from({ length: CONNECTIONS }, () => createAddress(normal!.httpUrl)));
    sink = await startSmtpSink();
    let maildevError: string | undefined;
    try {
      maildev = await startMailDev();
    } catch (err) {
      maildevError = (err as Error).message;
      ctx.log(`MailDev did not start: ${maildevError}`);
    }

    const template = messageTemplate(MESSAGE_BYTES, `ingest${Date.now()}`);
    const sizeCheck = template(0, addresses[0]!.address).length;
    let offset = 0;
    const run = (port: number, pid: number, seconds: number, connections: number) => async () => {
      const to = port === normal!.smtpPort ? normalAddresses : addresses;
      const r = await withCpu(pid, () => blast({ port, connections, seconds, offset, recipient: (_i, c) => to[c % CONNECTIONS]!.address, message: template }));
      offset += r.messages;
      return r;
    };
    const targets: Record<string, [port: number, pid: number, connections: number]> = {
      'temp-inbox': [server.smtpPort, server.child.pid, CONNECTIONS],
      'temp-inbox NORMAL': [normal.smtpPort, normal.child.pid, CONNECTIONS],
      'smtp-server sink': [sink.port, sink.child.pid, CONNECTIONS],
      'temp-inbox 40 conns': [server.smtpPort, server.child.pid, WIDE_CONNECTIONS],
    };
    if (maildev) {
      targets['MailDev'] = [maildev.port, maildev.child.pid, CONNECTIONS];
      targets['MailDev 40 conns'] = [maildev.port, maildev.child.pid, WIDE_CONNECTIONS];
    }
    ctx.log(`warm-up (${p.warmup} s each)`);
    for (const [port, pid, connections] of Object.values(targets)) await run(port, pid, p.warmup, connections)();
    const samples = await interleave(
      p.rounds,
      Object.fromEntries(Object.entries(targets).map(([name, [port, pid, connections]]) => [name, run(port, pid, p.seconds, connections)])),
      (m) => ctx.log(m),
    );
    const single: Record<string, number[]> = { 'temp-inbox': [], MailDev: [] };
    if (maildev) {
      const count = ctx.quick ? 10 : 40;
      ctx.log(`one mail per connection: ${p.rounds} × ${count} each, in turn`);
      for (let r = 0; r < p.rounds; r++) {
        const next = (to: string) => (i: number) => template(offset + i, to);
        single['temp-inbox']!.push(...(await onePerConnection(server.smtpPort, addresses[0]!.address, count, next(addresses[0]!.address))));
        single['MailDev']!.push(...(await onePerConnection(maildev.port, addresses[0]!.address, count, next(addresses[0]!.address))));
        offset += count;
      }
    }
    const rate = (name: string) => median((samples[name] ?? []).map((s: BlastResult) => s.rate));
    const cpu = (name: string) => median((samples[name] ?? []).map((s) => s.serverCpu));
    const ours = rate('temp-inbox');
    const sinkRate = rate('smtp-server sink');
    const rows: Row[] = [
      {
        bench: 'smtp-ingest',
        measure: `${fmt(sizeCheck / 1024, 1)} KB msgs, ${CONNECTIONS} conns, vs sink`,
        ours: `${fmt(ours)} msg/s`,
        baseline: `${fmt(sinkRate)} msg/s (no-op smtp-server)`,
        result: `ratio ${fmt(ours / sinkRate)}`,
        target: `≥ ${SINK_TARGET}`,
        verdict: verdict(ours / sinkRate >= SINK_TARGET),
        values: { ours: round(ours), baseline: round(sinkRate), ratio: round(ours / sinkRate, 3), oursCpu: cpu('temp-inbox'), baselineCpu: cpu('smtp-server sink') },
      },
    ];
    const normalRate = rate('temp-inbox NORMAL');
    rows.push({
      bench: 'smtp-ingest',
      measure: `${fmt(sizeCheck / 1024, 1)} KB msgs, ${CONNECTIONS} conns, FULL vs NORMAL durability`,
      ours: `${fmt(ours)} msg/s (FULL, default)`,
      baseline: `${fmt(normalRate)} msg/s (SQLITE_SYNCHRONOUS=NORMAL)`,
      result: `ratio ${fmt(ours / normalRate)}`,
      target: '(none)',
      verdict: 'info',
      values: { ours: round(ours), baseline: round(normalRate), ratio: round(ours / normalRate, 3), oursCpu: cpu('temp-inbox'), baselineCpu: cpu('temp-inbox NORMAL') },
    });
    if (maildev) {
      const md = rate('MailDev');
      rows.push({
        bench: 'smtp-ingest',
        measure: `${fmt(sizeCheck / 1024, 1)} KB msgs, ${CONNECTIONS} conns, vs MailDev`,
        ours: `${fmt(ours)} msg/s`,
        baseline: `${fmt(md)} msg/s (MailDev 3.0.0)`,
        result: `${fmt(ours / md)}×`,
        target: `≥ ${MAILDEV_TARGET}×`,
        verdict: verdict(ours / md >= MAILDEV_TARGET),
        values: { ours: round(ours), baseline: round(md), ratio: round(ours / md, 3), oursCpu: cpu('temp-inbox'), baselineCpu: cpu('MailDev') },
      });
      const wide = rate('temp-inbox 40 conns');
      const mdWide = rate('MailDev 40 conns');
      rows.push({
        bench: 'smtp-ingest',
        measure: `${fmt(sizeCheck / 1024, 1)} KB msgs, ${WIDE_CONNECTIONS} conns, vs MailDev`,
        ours: `${fmt(wide)} msg/s`,
        baseline: `${fmt(mdWide)} msg/s (MailDev 3.0.0)`,
        result: `${fmt(wide / mdWide)}×`,
        target: '(none)',
        verdict: 'info',
        values: { ours: round(wide), baseline: round(mdWide), ratio: round(wide / mdWide, 3), oursCpu: cpu('temp-inbox 40 conns'), baselineCpu: cpu('MailDev 40 conns') },
      });
      const [oneOurs, oneMd] = [median(single['temp-inbox']!), median(single['MailDev']!)];
      rows.push({
        bench: 'smtp-ingest',
        measure: `${fmt(sizeCheck / 1024, 1)} KB msg over a connection of its own, one at a time (connect to QUIT)`,
        ours: `p50 ${fmt(oneOurs, 1)} ms, p95 ${fmt(percentile(single['temp-inbox']!, 95), 1)} ms`,
        baseline: `p50 ${fmt(oneMd, 1)} ms, p95 ${fmt(percentile(single['MailDev']!, 95), 1)} ms (MailDev 3.0.0)`,
        result: `${fmt(oneMd / oneOurs, 1)}× faster`,
        target: '(none)',
        verdict: 'info',
        values: { ours: round(oneOurs, 2), baseline: round(oneMd, 2), ratio: round(oneMd / oneOurs, 2), count: single['temp-inbox']!.length },
      });
    } else {
      rows.push({ bench: 'smtp-ingest', measure: 'vs MailDev', ours: `${fmt(ours)} msg/s`, baseline: 'MailDev did not start', result: '', target: `≥ ${MAILDEV_TARGET}×`, verdict: 'not measured', values: { error: maildevError ?? '' } });
    }
    return { rows, details: { params: { ...p, connections: CONNECTIONS, messageBytes: sizeCheck }, samples, onePerConnection: single, maildevError } };
  } finally {
    await maildev?.stop();
    await sink?.stop();
    await normal?.stop();
    await server?.stop();
  }
};
