// Small messages (small-messages.ts) wait here for the end of the turn of the event loop in
// which they arrived, and then for a thread from the small lane; the batch is made when the
// thread is given, of whatever waits then (so mail that arrived during a large parse goes
// right after it, parse-lanes.ts). A batch that fails or runs out of its budget is parsed
// again one message at a time, so a hostile message costs only itself.
import { nothing, parsedOf, type ParsedMessage } from './parsed-message.js';
import type { ParseRunner, Seat } from './parse-runner.js';
import { BATCH_BYTES, BATCH_MESSAGES } from './small-messages.js';

/** The wait of a batch for a thread is bounded by its messages' own (expire below). */
const NEVER = new AbortController().signal;

export interface BatchOptions {
  runner: ParseRunner;
  threads: number;
  timeoutMs: number;
  maxWaitMs: number;
  /** One message in a task of its own (parse.ts), for a batch of one and for a failed batch's messages. */
  parseAlone: (raw: Buffer, seat?: Seat) => Promise<ParsedMessage>;
}

/** Parses a small message in a batch with the others that wait with it; never rejects. */
export function createBatchParser({ runner, threads, timeoutMs, maxWaitMs, parseAlone }: BatchOptions): (raw: Buffer, client: string | undefined) => Promise<ParsedMessage> {
  const { run, lanes } = runner;
  // Small messages wait here for the end of the turn of the event loop in which they
  // arrived, and then for a thread from the small lane; the batch is made when the
  // thread is given, of whatever waits then (so mail that arrived during a large
  // parse goes right after it, parse-lanes.ts). Messages completed in one turn (several
  // connections' reads) so share one trip to the thread: about 6% less CPU a mail at
  // the ingest bench's load (docs/benchmarks-journal.md "Still open").
  type Waiting = { raw: Buffer; client: string | undefined; resolve: (p: ParsedMessage) => void; since: number };
  let waiting: Waiting[] = [];
  /** Batches that have a thread; and whether one is asking the small lane for a thread. */
  let batchesOut = 0;
  let asking = false;
  let sendScheduled = false;
  const sendAtTurnEnd = () => {
    sendScheduled = false;
    sendBatches();
  };
  /** Waited as long as a task may wait for a thread: described by nothing, as such a task would be. */
  function expire(): void {
    const now = performance.now();
    if (waiting.length === 0 || now - waiting[0]!.since <= maxWaitMs) return;
    for (const m of waiting.filter((m) => now - m.since > maxWaitMs)) m.resolve(nothing());
    waiting = waiting.filter((m) => now - m.since <= maxWaitMs);
  }
  function sendBatches(): void {
    expire();
    if (asking || waiting.length === 0 || batchesOut >= threads) return;
    asking = true;
    void lanes.enter('small', NEVER).then((slot) => {
      asking = false;
      // Closed: answered as if every parse failed.
      if (!slot) return void waiting.splice(0).forEach((m) => m.resolve(nothing()));
      expire();
      if (waiting.length === 0) return slot();
      let bytes = 0;
      let n = 0;
      while (n < waiting.length && n < BATCH_MESSAGES && (n === 0 || bytes + waiting[n]!.raw.length <= BATCH_BYTES)) bytes += waiting[n++]!.raw.length;
      const batch = waiting.slice(0, n);
      waiting = waiting.slice(n);
      batchesOut++;
      void parseBatch(batch, slot).finally(() => {
        batchesOut--;
        sendBatches();
      });
      // More than one batch waits, and another thread may be free for it.
      sendBatches();
    });
  }
  async function parseBatch(batch: Waiting[], slot: () => void): Promise<void> {
    if (batch.length === 1) return batch[0]!.resolve(await parseAlone(batch[0]!.raw, { slot }));
    const r = await run({ op: 'batch', sizes: batch.map((m) => m.raw.length) }, Buffer.concat(batch.map((m) => m.raw)), timeoutMs, { slot });
    if (typeof r === 'object') return batch.forEach((m, i) => m.resolve(parsedOf(r, r.items[i]!)));
    if (r === 'unstarted') return batch.forEach((m) => m.resolve(nothing()));
    // One of them failed or held the thread too long: each alone, so only that one pays.
    await Promise.all(batch.map(async (m) => m.resolve(await parseAlone(m.raw, { client: m.client }))));
  }

  return (raw, client) =>
    new Promise((resolve) => {
      waiting.push({ raw, client, resolve, since: performance.now() });
      if (sendScheduled) return;
      sendScheduled = true;
      setImmediate(sendAtTurnEnd);
    });
}
