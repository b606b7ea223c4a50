// 3b. The wait behind the 250: from the end of DATA (the client wrote the final ".") to
// the 250, for 3 KB mail at 100 messages/s (open loop, 10 connections), against the
// durable sink (the same smtp-server, each message appended and fdatasync'd before its
// 250, group commit: children/durable-sink.ts) at the same rate, in alternating rounds.
// What temp-inbox does in that wait: the parse and the verdicts (worker threads), the
// insert and its commit, the WAL's sync. Target: p99 at most 10 ms.
// Quick mode: one round of 1 s each.
import { startDurableSink, type Baseline } from './lib/baselines.js';
import { createAddress } from './lib/http.js';
import { interleave } from './lib/load.js';
import { messageTemplate } from './lib/messages.js';
import { sleep } from './lib/procs.js';
import { verdict, type Bench } from './lib/report.js';
import { isMain, runAlone } from './lib/run-alone.js';
import { SmtpConnection } from './lib/smtp-client.js';
import { fmt, median, percentile, round } from './lib/stats.js';
import { startTempInbox, type TempInbox } from './lib/temp-inbox.js';

const TARGET_P99_MS = 10;
const RATE = 100;
const CONNECTIONS = 10;
const MESSAGE_BYTES = 3 * 1024;

/** `seconds` of mail at RATE over `conns` (message n due at start + n/RATE, whatever came before): each one's end of DATA → 250, in ms. */
async function openLoop(conns: SmtpConnection[], to: string[], seconds: number, message: (i: number, to: string) => Buffer, offset: number): Promise<number[]> {
  const waits: number[] = [];
  const queues = conns.map(() => Promise.resolve());
  const start = performance.now();
  const count = Math.round(seconds * RATE);
  for (let n = 0; n < count; n++) {
    const wait = start + (n * 1000) / RATE - performance.now();
    if (wait > 1) await sleep(wait);
    const k = n % conns.length;
    queues[k] = queues[k]!.then(async () => {
      const reply = await conns[k]!.send('loadgen@bench.example.com', to[k]!, message(offset + n, to[k]!));
      waits.push(reply.at - reply.dataEnd!);
    });
  }
  await Promise.all(queues);
  return waits;
}

export const dataWait: Bench = async (ctx) => {
  const p = ctx.quick ? { seconds: 1, warmup: 0.5, rounds: 1 } : { seconds: 10, warmup: 3, rounds: 3 };
  let server: TempInbox | undefined;
  let sink: Baseline | undefined;
  const opened: SmtpConnection[] = [];
  try {
    // DATA_WAIT_ENV (JSON): server settings for a diagnostic run, e.g. {"AUTH_CHECKS":"off"}.
    server = await startTempInbox({ name: 'temp-inbox-data-wait', env: JSON.parse(process.env['DATA_WAIT_ENV'] ?? '{}') as Record<string, string> });
    const inboxes = await Promise.all(Array.from({ length: CONNECTIONS }, () => createAddress(server!.httpUrl)));
    const to = inboxes.map((i) => i.address);
    sink = await startDurableSink();
    const open = async (port: number) => {
      const conns = await Promise.all(Array.from({ length: CONNECTIONS }, () => SmtpConnection.open(port)));
      opened.push(...conns);
      return conns;
    };
    const subjects = { 'temp-inbox': await open(server.smtpPort), 'durable sink': await open(sink.port) };
    const template = messageTemplate(MESSAGE_BYTES, `wait${Date.now()}`);
    let offset = 0;
    const phase = (conns: SmtpConnection[], seconds: number) => async () => {
      const waits = await openLoop(conns, to, seconds, template, offset);
      offset += waits.length;
      return waits;
    };
    ctx.log(`warm-up (${p.warmup} s each)`);
    for (const conns of Object.values(subjects)) await phase(conns, p.warmup)();
    const runs = Object.fromEntries(Object.entries(subjects).map(([name, conns]) => [name, phase(conns, p.seconds)]));
    const samples = await interleave(p.rounds, runs);
    const all = (name: string) => (samples[name] ?? []).flat();
    const ours = all('temp-inbox');
    const base = all('durable sink');
    const p99 = percentile(ours, 99);
    const figure = (xs: number[]) => `p50 ${fmt(median(xs))} ms, p99 ${fmt(percentile(xs, 99))} ms, max ${fmt(Math.max(...xs))} ms`;
    return {
      rows: [
        {
          bench: 'data-wait',
          measure: `end of DATA → 250, 3 KB, ${RATE} msg/s, ${CONNECTIONS} conns`,
          ours: figure(ours),
          baseline: `durable sink: ${figure(base)}`,
          result: `p99 ${fmt(p99)} ms (${fmt(p99 / percentile(base, 99), 1)}× the sink's)`,
          target: `p99 ≤ ${TARGET_P99_MS} ms`,
          verdict: verdict(p99 <= TARGET_P99_MS),
          values: { p50: round(median(ours), 3), p99: round(p99, 3), max: round(Math.max(...ours), 3), sinkP50: round(median(base), 3), sinkP99: round(percentile(base, 99), 3), messages: ours.length },
        },
      ],
      details: { params: { ...p, rate: RATE, connections: CONNECTIONS, messageBytes: MESSAGE_BYTES }, samples },
    };
  } finally {
    for (const c of opened) await c.close().catch(() => c.destroy());
    await sink?.stop();
    await server?.stop();
  }
};

// Run alone: node --import tsx bench/src/data-wait.ts [--quick]
if (isMain(import.meta.url)) await runAlone('data-wait', (quick, log) => dataWait({ quick, log }));
