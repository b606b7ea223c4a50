// MIME parsing off the event loop: each message is parsed once, on arrival, in a
// worker thread (parse-worker.ts, postal-mime 4) within a time budget counted from
// when a thread takes it up, so one queued behind a slow message keeps it all. A message
// that takes longer has its worker ended and is described by its header block
// alone, read by a fresh worker under a short budget of its own; past that, by
// nothing. So no message, however it is built, holds the server's thread.
//
// Small messages that arrive while every thread is busy travel together: one task
// carries up to BATCH_MESSAGES of them, under one budget. A trip to a thread and
// back costs several times the parse of a typical 3 KB mail, so under load this is
// most of the parser's cost saved. A batch that fails or runs out of its budget is
// parsed again one message at a time, so a hostile message costs only itself.
//
// GET /api/mail/{uuid}/parsed uses the same threads and budget (view): the worker
// builds the parsed view (parsed-view.ts) and serialises it; past the budget, the
// header block's view, marked degraded. A view waits in the large lane, its client's
// turn among the others', and its message is read from the store only once it has a
// thread: what waits holds no message (parsed-views.ts bounds how many wait).
import { Piscina } from 'piscina';
import type { MailMetadata } from '@temp-inbox/api';
import { buildMetadata, MAX_ATTACHMENTS_LISTED } from './metadata.js';
import { createParseLanes, type Lane } from './parse-lanes.js';
import { createTaskStarts } from '../task-starts.js';
import { forWorker } from '../worker-input.js';
import { buildView } from './parsed-view.js';
import type { ParseTask, StartedMessage, ViewResult, WorkerItem, WorkerResult } from './parse-worker.js';

export { buildMetadata, parseMessage } from './metadata.js';
export {
  MAX_ATTACHMENTS_LISTED,
  MAX_CODES,
  MAX_FIELD_CHARS,
  MAX_FILENAME_CHARS,
  MAX_LINK_CHARS,
  MAX_LINKS,
  MAX_METADATA_BYTES,
  MAX_RECIPIENTS_LISTED,
  PARSE_OPTIONS,
} from './metadata.js';

export interface ParsedAttachment {
  filename: string;
  contentType: string;
  content: Buffer;
}

export interface ParsedMessage {
  /** Metadata of the message, every field bounded; `size` is 0 (the caller sets it per stored copy). */
  metadata: MailMetadata;
  /** The From: address when it is a single mailbox (not a group). */
  fromAddress: string | undefined;
  /** Message-ID header including angle brackets, or ''. */
  messageId: string;
  /** Decoded bytes of exactly the attachments metadata.attachments lists, in that order. */
  attachments: ParsedAttachment[];
  /** The parse ran out of its budget or failed: only the header block was read. */
  degraded: boolean;
  /** What search finds the mail by: the words of its subject, people and decoded text, each once (search-text.ts). */
  searchText: string;
  /** The tags its X-Tags header names, cleaned and bounded (metadata.ts headerTags); a sandbox's mail is given them. */
  tags: string[];
}

/** The parsed view of a message (parsed-view.ts), as the JSON bytes of a ParsedMailContent. */
export interface MessageView {
  json: Buffer;
  /** Only the header block could be read (the parse ran out of budget or was refused). */
  degraded: boolean;
}

export interface ParserOptions {
  /** Worker threads (default 1). */
  threads?: number;
  /** Budget of one parse, counted from when a thread takes it up; past it the worker is ended. */
  timeoutMs?: number;
  /** Longest a message may wait for a free thread; past it, it is stored with empty metadata (default 60 s). */
  maxWaitMs?: number;
  /** Heap limit of each worker; a parse that needs more fails like one out of time. */
  maxHeapMb?: number;
}

export interface MessageParser {
  /**
   * Never rejects, whatever the bytes. `client`: who sent it (the SMTP client's key); the
   * clients whose messages wait for a thread take turns (parse-lanes.ts).
   */
  parse(raw: Buffer, client?: string): Promise<ParsedMessage>;
  /** Attachment `index` of a stored message (mail kept before attachments were stored); undefined when unknown. */
  readAttachment(raw: Buffer, index: number): Promise<ParsedAttachment | undefined>;
  /**
   * The parsed view of a stored message whose metadata lists `attachmentsListed` attachments, under the
   * same budget as a parse (past it, its header block's); undefined when no thread was free for that long.
   * `load` reads the message once a thread is given (it rejects: so does this); `client`: whose turn it waits for.
   */
  view(load: () => Promise<Buffer>, attachmentsListed: number, client?: string): Promise<MessageView | undefined>;
  /** Views given to a thread so far (a counter that only grows), for the metrics and tests. */
  viewParses(): number;
  /** Ends the workers; later calls answer as if every parse failed. */
  close(): Promise<void>;
}

export const DEFAULT_PARSE_TIMEOUT_MS = 5000;
/** Twelve full budgets: only a pool flooded with hostile mail, or one whose workers cannot start, waits that long. */
const DEFAULT_MAX_WAIT_MS = 60_000;
/** Budget of the header-block fallback (64 KiB of headers parse in well under 100 ms). */
const HEADERS_TIMEOUT_MS = 1000;
/** The fallback reads no more than this of a message (metadata.ts parseHeaderBlock), so no more is copied to it. */
const HEADER_BLOCK_BYTES = 64 * 1024;
/** A legitimate 10 MB message needs well under this; a hostile one is stopped by it rather than by the host. */
const DEFAULT_MAX_HEAP_MB = 512;
/**
 * A parse's objects die with it, so a small young generation is collected cheaply; V8's
 * own would grow to 16 MB semi-spaces under load. Effective once the process's semi-space
 * flags are cleared (workers/worker-heap.ts): the server's RSS after 30,000 mails fell
 * from about 195 to 170 MB with the checks' thread's below, at the same rate.
 */
const YOUNG_GENERATION_MB = 6;

const FROM_SOURCE = import.meta.url.endsWith('.ts');

/** Threads more than `threads` that small messages may have while a large one holds a thread. */
const SPARE_THREADS = 1;
/** A spare thread idle this long is ended (its memory returned: about 25 MB). */
const SPARE_IDLE_MS = 30_000;
/** Small messages get the spare only once a large parse has run this long (a legitimate one takes milliseconds). */
const SPARE_AFTER_MS = 100;

/** Messages up to this size may share a task with others. */
const BATCH_MESSAGE_BYTES = 64 * 1024;
/** At most this many messages, and this many bytes, per task. */
const BATCH_MESSAGES = 32;
const BATCH_BYTES = 512 * 1024;

/**
 * A small message with more lines that open with "--" (MIME boundaries) than this is
 * parsed as a large one, alone and in the large lane. Parts cost the parser about 14 µs
 * each: 64 KiB of empty parts (5,000) held a thread for 70–270 ms, and such mail sent in a
 * loop had ordinary mail, batched with it in the small lane, wait behind all of it.
 * Ordinary mail has a few boundary lines; a message wrongly counted here is only parsed
 * alone.
 */
export const SMALL_MAX_BOUNDARY_LINES = 256;
const BOUNDARY_LINE = Buffer.from('\n--');

/** More than SMALL_MAX_BOUNDARY_LINES lines open with "--" (a scan of the bytes, no parse). */
function manyParts(raw: Buffer): boolean {
  let n = 0;
  for (let at = raw.indexOf(BOUNDARY_LINE); at !== -1; at = raw.indexOf(BOUNDARY_LINE, at + BOUNDARY_LINE.length)) {
    if (++n > SMALL_MAX_BOUNDARY_LINES) return true;
  }
  return false;
}

/** Small enough to share a task with others, and to wait in the small lane. */
export function isSmall(raw: Buffer): boolean {
  return raw.length <= BATCH_MESSAGE_BYTES && !manyParts(raw);
}

/** The wait of a batch for a thread is bounded by its messages' own (expire in createMessageParser). */
const NEVER = new AbortController().signal;

/** Batches, header blocks and messages that may share a task go in the small lane; the rest wait in the large one. */
function laneOf(what: { op: string }, raw: Buffer): Lane {
  if (what.op === 'batch' || what.op === 'headers' || what.op === 'view-headers') return 'small';
  return isSmall(raw) ? 'small' : 'large';
}

function parsedOf(r: WorkerResult, it: WorkerItem): ParsedMessage {
  return {
    metadata: it.metadata,
    fromAddress: it.fromAddress,
    messageId: it.messageId,
    attachments: it.attachments.map((a) => ({ filename: a.filename, contentType: a.contentType, content: Buffer.from(r.contents, a.offset, a.length) })),
    degraded: it.degraded,
    searchText: it.searchText,
    tags: it.tags,
  };
}

/** Metadata of a message nothing could be read from. */
function nothing(): ParsedMessage {
  return { metadata: buildMetadata(undefined, 0), fromAddress: undefined, messageId: '', attachments: [], degraded: true, searchText: '', tags: [] };
}

export function createMessageParser(opts: ParserOptions = {}): MessageParser {
  const threads = Math.max(1, Math.floor(opts.threads ?? 1));
  const timeoutMs = opts.timeoutMs ?? DEFAULT_PARSE_TIMEOUT_MS;
  const maxWaitMs = opts.maxWaitMs ?? DEFAULT_MAX_WAIT_MS;
  let closed = false;
  // Each task's budget starts when its worker takes it up, not while it waits for a thread (task-starts.ts).
  let nextId = 0;
  const starters = new Map<number, () => void>();
  // A task that failed or was cut short leaves its thread ended: the pool is cold until one answers again.
  const starts = createTaskStarts(threads);
  // Small messages and large ones wait in lanes of their own; while a large one has been
  // parsed for SPARE_AFTER_MS, small ones have a spare thread (parse-lanes.ts).
  const lanes = createParseLanes(threads, SPARE_THREADS, SPARE_AFTER_MS);

  function startPool(): Piscina<ParseTask, WorkerResult | ViewResult> {
    const p = new Piscina<ParseTask, WorkerResult | ViewResult>({
      filename: new URL(FROM_SOURCE ? './parse-worker.ts' : './parse-worker.js', import.meta.url).href,
      minThreads: threads,
      // The spare is started when small mail waits while a large parse runs long, and ended once idle.
      maxThreads: threads + SPARE_THREADS,
      idleTimeout: SPARE_IDLE_MS,
      // From source the worker needs the TypeScript loader; never the process's V8 flags.
      execArgv: FROM_SOURCE ? ['--import', 'tsx'] : [],
      // Parsing is CPU-bound: one task at a time per thread.
      concurrentTasksPerWorker: 1,
      // Tasks reach an idle thread by message alone. piscina's default ('sync') also parks the
      // thread on Atomics.wait and wakes it with Atomics.notify: a second system call on the
      // server's thread for every task, for nothing (ingest about a tenth faster without it).
      atomics: 'disabled',
      resourceLimits: { maxOldGenerationSizeMb: opts.maxHeapMb ?? DEFAULT_MAX_HEAP_MB, maxYoungGenerationSizeMb: YOUNG_GENERATION_MB },
    });
    p.on('message', (m: Partial<StartedMessage> | null) => {
      if (typeof m?.parseTaskStarted === 'number') starters.get(m.parseTaskStarted)?.();
    });
    // Piscina gives up on workers that die while starting, leaving its queue to wait forever: start afresh.
    p.on('error', () => {
      if (p === pool && !closed && p.threads.length === 0) {
        pool = startPool();
        void p.destroy();
      }
    });
    return p;
  }
  let pool = startPool();
  let viewsGiven = 0;

  /** Where a task sits: a thread the caller already has, or the client whose turn it waits for (in `lane`, if given). */
  type Seat = { slot?: (() => void) | undefined; client?: string | undefined; lane?: Lane };
  type Op =
    | { op: 'parse' | 'headers' }
    | { op: 'attachment'; index: number }
    | { op: 'batch'; sizes: number[] }
    | { op: 'view' | 'view-headers'; attachmentsListed: number };
  /**
   * A task's result, or 'failed' (error, or over `ms` of work: its worker is ended), or 'unstarted' (no thread for maxWaitMs).
   * `slot`: a thread the caller already has from the lanes (given back here); otherwise the task
   * waits in its lane, in `client`'s turn. `raw` may be read only once the thread is given (then `lane` is
   * needed); what it rejects with, this rejects with.
   */
  async function run<R extends WorkerResult | ViewResult = WorkerResult>(
    what: Op,
    raw: Buffer | (() => Promise<Buffer>),
    ms: number,
    { slot, client, lane }: Seat = {},
  ): Promise<R | 'failed' | 'unstarted'> {
    const id = nextId++;
    const abort = new AbortController();
    let started = false;
    // The wait for a thread, in its lane and then (if the thread is cold) for it to start, is bounded by maxWaitMs.
    let timer: NodeJS.Timeout | undefined = setTimeout(() => abort.abort(), maxWaitMs);
    const start = () => {
      started = true;
      clearTimeout(timer);
      timer = setTimeout(() => abort.abort(), ms);
    };
    const leave = slot ?? (await lanes.enter(lane ?? laneOf(what, raw as Buffer), abort.signal, client));
    // Closed: the lanes give nothing, and a destroyed pool would start new workers for a late task.
    if (!leave || closed) {
      leave?.();
      clearTimeout(timer);
      return 'unstarted';
    }
    let message: Buffer;
    try {
      message = typeof raw === 'function' ? await raw() : raw;
    } catch (err) {
      leave();
      clearTimeout(timer);
      throw err;
    }
    let settled: (() => void) | undefined;
    try {
      if (what.op === 'view') viewsGiven++;
      const { bytes, transferList } = await forWorker(message);
      // Decided just before piscina is given the task, which it posts to a free thread at once.
      const announce = starts.mayWait();
      if (announce) {
        starters.set(id, () => {
          starts.running();
          start();
        });
      } else start();
      const task: ParseTask = { ...what, id, raw: bytes, announce };
      settled = starts.given();
      const result = (await pool.run(task, { signal: abort.signal, transferList })) as R;
      starts.running();
      return result;
    } catch {
      starts.cold();
      return started || !abort.signal.aborted ? 'failed' : 'unstarted';
    } finally {
      settled?.();
      leave();
      starters.delete(id);
      clearTimeout(timer);
    }
  }

  /** One message in a task of its own, then (if that fails) its header block in another. */
  async function parseAlone(raw: Buffer, seat: Seat = {}): Promise<ParsedMessage> {
    const full = await run({ op: 'parse' }, raw, timeoutMs, seat);
    if (typeof full === 'object') return parsedOf(full, full.items[0]!);
    // No thread free for that long: reading the header block would wait as long again.
    if (full === 'unstarted') return nothing();
    const head = await run({ op: 'headers' }, raw.subarray(0, HEADER_BLOCK_BYTES), HEADERS_TIMEOUT_MS, { client: seat.client });
    if (typeof head !== 'object') return nothing();
    return { ...parsedOf(head, head.items[0]!), attachments: [], degraded: true };
  }

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

  return {
    parse(raw, client) {
      if (!isSmall(raw)) return parseAlone(raw, { client });
      return new Promise((resolve) => {
        waiting.push({ raw, client, resolve, since: performance.now() });
        if (sendScheduled) return;
        sendScheduled = true;
        setImmediate(sendAtTurnEnd);
      });
    },
    async readAttachment(raw, index) {
      if (!Number.isInteger(index) || index < 0 || index >= MAX_ATTACHMENTS_LISTED) return undefined;
      const r = await run({ op: 'attachment', index }, raw, timeoutMs);
      return typeof r === 'object' ? parsedOf(r, r.items[0]!).attachments[0] : undefined;
    },
    async view(load, attachmentsListed, client) {
      const viewOf = (r: ViewResult): MessageView => ({ json: Buffer.from(r.json), degraded: r.degraded });
      let raw: Buffer | undefined;
      // In the large lane whatever its size: a slow view then leaves arriving mail the spare thread.
      const full = await run<ViewResult>({ op: 'view', attachmentsListed }, async () => (raw = await load()), timeoutMs, { client, lane: 'large' });
      if (typeof full === 'object') return viewOf(full);
      if (full === 'unstarted' || !raw) return undefined;
      // A copy of the header block: the whole message is not held while the fallback waits.
      const block = Buffer.from(raw.subarray(0, HEADER_BLOCK_BYTES));
      raw = undefined;
      const head = await run<ViewResult>({ op: 'view-headers', attachmentsListed: 0 }, block, HEADERS_TIMEOUT_MS, { client });
      if (typeof head === 'object') return viewOf(head);
      if (head === 'unstarted') return undefined;
      // Not even the header block could be read: a view of nothing (cheap, no parse).
      return { json: Buffer.from(JSON.stringify(buildView(undefined, { attachmentsListed: 0, degraded: true, headers: [] }))), degraded: true };
    },
    viewParses: () => viewsGiven,
    // Running parses are cut short too: close must not wait out a hostile message's budget.
    close: () => {
      closed = true;
      lanes.close();
      return pool.destroy();
    },
  };
}
