// 2b. SMTP ingest against durable anchors: temp-inbox (every mail's WAL synced before its
// 250), a durable sink (the same smtp-server, each message appended to a file and
// fdatasync'd before its 250, group commit: children/durable-sink.ts) and Postfix
// (Debian's package, an instance of its own with a virtual Maildir: lib/postfix.ts), all
// three fsync before the 250. 3 KB messages over 10, 50 and 200 connections, closed loop,
// the subjects and connection counts in alternating rounds. Reported: temp-inbox ÷ durable
// sink, temp-inbox ÷ Postfix, and each subject's CPU per mail (all threads of its process;
// for Postfix, its master and every daemon under it, counted once its queue is empty, so
// its deliveries are in). On a shared machine the CPU per mail is the figure to trust;
// rates move with the neighbours.
// Targets: ≥ 0.4 of the durable sink at 10 connections, ≥ 0.5 at 50 and 200; ≥ 3× Postfix at 50 and 200.
// Quick mode: 50 connections only, one round of 1 s, no Postfix (its start alone is 2-3 s).
import { startDurableSink, type Baseline } from './lib/baselines.js';
import { createAddress } from './lib/http.js';
import { interleave } from './lib/load.js';
import { messageTemplate } from './lib/messages.js';
import { DOMAIN } from './lib/paths.js';
import { postfixMissing, startPostfix, type Postfix } from './lib/postfix.js';
import { cpuSecondsOf, sleep } from './lib/procs.js';
import { verdict, type Bench, type Row } from './lib/report.js';
import { blast } from './lib/smtp-client.js';
import { fmt, median, round } from './lib/stats.js';
import { startTempInbox, type TempInbox } from './lib/temp-inbox.js';
import { isMain, runAlone } from './lib/run-alone.js';

const MESSAGE_BYTES = 3 * 1024;
const ADDRESSES = 10;
const SINK_TARGET: Record<number, number> = { 10: 0.4, 50: 0.5, 200: 0.5 };
const POSTFIX_TARGET: Record<number, number | undefined> = { 10: undefined, 50: 3, 200: 3 };
/** Postfix delivers after its 250s; a round's CPU is read once its queue is empty, or after this. */
const DRAIN_MS = 15_000;

interface Sample {
  messages: number;
  rate: number;
  /** CPU microseconds per mail, all threads (Postfix: all its processes). */
  cpuUs: number;
}

interface Subject {
  port: number;
  cpuSeconds(): number;
  /** Resolves once the subject has finished the work of the mails it answered. */
  settle?(): Promise<void>;
}

export const smtpAnchors: Bench = async (ctx) => {
  const p = ctx.quick ? { seconds: 1, warmup: 0.3, rounds: 1, connections: [50] } : { seconds: 3, warmup: 1, rounds: 5, connections: [10, 50, 200] };
  let server: TempInbox | undefined;
  let sink: Baseline | undefined;
  let postfix: Postfix | undefined;
  let postfixSkipped = ctx.quick ? 'skipped in quick mode (a full run measures it)' : postfixMissing();
  try {
    server = await startTempInbox({ name: 'temp-inbox-anchors' });
    const addresses = (await Promise.all(Array.from({ length: ADDRESSES }, () => createAddress(server!.httpUrl)))).map((a) => a.address);
    if (!addresses.every((a) => a.endsWith(`@${DOMAIN}`))) throw new Error(`addresses not at ${DOMAIN}: ${addresses[0]}`);
    sink = await startDurableSink();
    if (!postfixSkipped) {
      try {
        postfix = await startPostfix(DOMAIN);
      } catch (err) {
        postfixSkipped = (err as Error).message.split('\n').slice(0, 4).join(' ');
      }
    }
    if (postfixSkipped) ctx.log(`Postfix: ${postfixSkipped}`);
    if (ctx.quick) ctx.log('quick mode: 50 connections only, one round of 1 s (a full run: 10, 50 and 200 connections, 5 rounds of 3 s)');

    const subjects: Record<string, Subject> = {
      'temp-inbox': { port: server.smtpPort, cpuSeconds: () => cpuSecondsOf(server!.child.pid) },
      'durable sink': { port: sink.port, cpuSeconds: () => cpuSecondsOf(sink!.child.pid) },
    };
    if (postfix) {
      const pf = postfix;
      subjects['Postfix'] = {
        port: pf.port,
        cpuSeconds: () => pf.cpuSeconds(),
        async settle() {
          const deadline = performance.now() + DRAIN_MS;
          while (pf.queued() > 0 && performance.now() < deadline) await sleep(50);
        },
      };
    }
    const template = messageTemplate(MESSAGE_BYTES, `anchors${Date.now()}`);
    let offset = 0;
    const run = (s: Subject, connections: number, seconds: number) => async (): Promise<Sample> => {
      const c0 = s.cpuSeconds();
      const r = await blast({ port: s.port, connections, seconds, offset, recipient: (i) => addresses[i % ADDRESSES]!, message: template });
      await s.settle?.();
      const cpu = s.cpuSeconds() - c0;
      offset += r.messages;
      return { messages: r.messages, rate: round(r.rate, 1), cpuUs: round((cpu / r.messages) * 1e6, 0) };
    };
    const key = (name: string, c: number) => `${name} ${c}`;
    ctx.log(`warm-up (${p.warmup} s each)`);
    for (const c of p.connections) for (const s of Object.values(subjects)) await run(s, c, p.warmup)();
    const runs: Record<string, () => Promise<Sample>> = {};
    for (const c of p.connections) for (const [name, s] of Object.entries(subjects)) runs[key(name, c)] = run(s, c, p.seconds);
    const samples = await interleave(p.rounds, runs, (m) => ctx.log(m));
    const rate = (name: string, c: number) => median((samples[key(name, c)] ?? []).map((s) => s.rate));
    const cpu = (name: string, c: number) => median((samples[key(name, c)] ?? []).map((s) => s.cpuUs));
    const figure = (name: string, c: number) => `${fmt(rate(name, c))} msg/s, ${fmt(cpu(name, c))} µs CPU/mail`;

    const rows: Row[] = [];
    for (const c of p.connections) {
      const ours = rate('temp-inbox', c);
      const s = rate('durable sink', c);
      rows.push({
        bench: 'smtp-anchors',
        measure: `3 KB msgs, ${c} conns, vs durable sink (fsync before 250)`,
        ours: figure('temp-inbox', c),
        baseline: `${figure('durable sink', c)} (append + fdatasync, group commit)`,
        result: `ratio ${fmt(ours / s)}; CPU ${fmt(cpu('temp-inbox', c) / cpu('durable sink', c), 1)}× the sink's`,
        target: `≥ ${SINK_TARGET[c]}`,
        verdict: verdict(ours / s >= SINK_TARGET[c]!),
        values: { connections: c, ours: round(ours), baseline: round(s), ratio: round(ours / s, 3), oursCpuUs: cpu('temp-inbox', c), baselineCpuUs: cpu('durable sink', c) },
      });
      const target = POSTFIX_TARGET[c];
      if (!postfix) {
        rows.push({ bench: 'smtp-anchors', measure: `3 KB msgs, ${c} conns, vs Postfix`, ours: figure('temp-inbox', c), baseline: `not run: ${postfixSkipped}`, result: '', target: target ? `≥ ${target}×` : '(none)', verdict: 'not measured' });
        continue;
      }
      const pf = rate('Postfix', c);
      rows.push({
        bench: 'smtp-anchors',
        measure: `3 KB msgs, ${c} conns, vs Postfix (fsync before 250)`,
        ours: figure('temp-inbox', c),
        baseline: `${figure('Postfix', c)} (Debian's Postfix, virtual Maildir)`,
        result: `${fmt(ours / pf)}×; CPU ${fmt(cpu('temp-inbox', c) / cpu('Postfix', c))}× Postfix's`,
        target: target ? `≥ ${target}×` : '(none)',
        verdict: target ? verdict(ours / pf >= target) : 'info',
        values: { connections: c, ours: round(ours), baseline: round(pf), ratio: round(ours / pf, 3), oursCpuUs: cpu('temp-inbox', c), baselineCpuUs: cpu('Postfix', c) },
      });
    }
    return { rows, details: { params: { ...p, messageBytes: MESSAGE_BYTES, addresses: ADDRESSES }, samples, postfixSkipped: postfixSkipped ?? null } };
  } finally {
    await postfix?.stop();
    await sink?.stop();
    await server?.stop();
  }
};

// Run alone: node --import tsx bench/src/smtp-anchors.ts [--quick]
if (isMain(import.meta.url)) await runAlone('smtp-anchors', (quick, log) => smtpAnchors({ quick, log }));
