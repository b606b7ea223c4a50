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
import { MAX_ATTACHMENTS_LISTED } from './metadata.js';
import { createBatchParser } from './parse-batches.js';
import { createParseRunner, type Seat } from './parse-runner.js';
import { nothing, parsedOf, type ParsedAttachment, type ParsedMessage } from './parsed-message.js';
import { buildView } from './parsed-view.js';
import type { ViewResult } from './parse-worker.js';
import { isSmall } from './small-messages.js';

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

export type { ParsedAttachment, ParsedMessage } from './parsed-message.js';
export { isSmall, SMALL_MAX_BOUNDARY_LINES } from './small-messages.js';

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
  /** Starts the parsing threads now if no parse has yet (they start with the first one otherwise). */
  warm(): void;
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

export function createMessageParser(opts: ParserOptions = {}): MessageParser {
  const threads = Math.max(1, Math.floor(opts.threads ?? 1));
  const timeoutMs = opts.timeoutMs ?? DEFAULT_PARSE_TIMEOUT_MS;
  const maxWaitMs = opts.maxWaitMs ?? DEFAULT_MAX_WAIT_MS;
  const runner = createParseRunner({ threads, maxWaitMs, maxHeapMb: opts.maxHeapMb });
  const { run } = runner;

  /** One message in a task of its own, then (if that fails) its header block in another. */
  async function parseAlone(raw: Buffer, seat: Seat = {}): Promise<ParsedMessage> {
    const full = await run({ op: 'parse' }, raw, timeoutMs, seat);
    if (typeof full === 'object') return parsedOf(full, full.items[0]!);
    // No thread free for that long: reading the header block would wait as long again.
    if (full === 'unstarted') return nothing();
    const head = await run({ op: 'headers' }, raw.subarray(0, HEADER_BLOCK_BYTES), HEADERS_TIMEOUT_MS, { client: seat.client });
    if (typeof head !== 'object') return nothing();
    // Not spread: that would read the metadata getter (a JSON parse) for nothing.
    const parsed = parsedOf(head, head.items[0]!);
    parsed.attachments = [];
    parsed.degraded = true;
    return parsed;
  }

  const parseBatched = createBatchParser({ runner, threads, timeoutMs, maxWaitMs, parseAlone });

  return {
    parse(raw, client) {
      if (!isSmall(raw)) return parseAlone(raw, { client });
      return parseBatched(raw, client);
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
    viewParses: () => runner.viewsGiven(),
    warm: () => runner.warm(),
    close: () => runner.close(),
  };
}
