// MIME parsing off the event loop: each message is parsed once, on arrival, in a
// worker thread (parse-worker.ts, postal-mime 4) within a time budget. A message
// that takes longer has its worker ended and is described by its header block
// alone, read by a fresh worker under a short budget of its own; past that, by
// nothing. So no message, however it is built, holds the server's thread.
import { Piscina } from 'piscina';
import type { MailMetadata } from '@temp-inbox/api';
import { buildMetadata } from './metadata.js';
import type { ParseTask, WorkerResult } from './parse-worker.js';

export { buildMetadata, parseMessage } from './metadata.js';

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
  /** The parse ran out of its budget (or failed): only the header block was read. */
  degraded: boolean;
}

export interface ParserOptions {
  threads?: number;
  /** Budget of one parse; past it the worker is ended. */
  timeoutMs?: number;
}

export interface MessageParser {
  /** Never rejects, whatever the bytes. */
  parse(raw: Buffer): Promise<ParsedMessage>;
  /** Attachment `index` of a stored message (mail kept before attachments were stored); undefined when unknown. */
  readAttachment(raw: Buffer, index: number): Promise<ParsedAttachment | undefined>;
  close(): Promise<void>;
}

/** Budget of the header-block fallback. */
const HEADERS_TIMEOUT_MS = 1000;

const FROM_SOURCE = import.meta.url.endsWith('.ts');

function attachmentsOf(r: WorkerResult): ParsedAttachment[] {
  return r.attachments.map((a) => ({ filename: a.filename, contentType: a.contentType, content: Buffer.from(r.contents, a.offset, a.length) }));
}

export function createMessageParser(opts: ParserOptions = {}): MessageParser {
  const threads = opts.threads ?? 1;
  const timeoutMs = opts.timeoutMs ?? 5000;
  const pool = new Piscina<ParseTask, WorkerResult>({
    filename: new URL(FROM_SOURCE ? './parse-worker.ts' : './parse-worker.js', import.meta.url).href,
    minThreads: threads,
    maxThreads: threads,
    // From source the worker needs the TypeScript loader; never the process's V8 flags.
    execArgv: FROM_SOURCE ? ['--import', 'tsx'] : [],
    // Parsing is CPU-bound: one task at a time per thread.
    concurrentTasksPerWorker: 1,
  });

  /** Runs a task within `ms`; undefined when it failed or ran out of time (its worker is then ended). */
  async function run(task: ParseTask, ms: number): Promise<WorkerResult | undefined> {
    try {
      return await pool.run(task, { signal: AbortSignal.timeout(ms) });
    } catch {
      return undefined;
    }
  }

  const nothing = (): ParsedMessage => ({ metadata: buildMetadata(undefined, 0), fromAddress: undefined, messageId: '', attachments: [], degraded: true });

  return {
    async parse(raw) {
      const full = await run({ op: 'parse', raw }, timeoutMs);
      if (full) return { metadata: full.metadata, fromAddress: full.fromAddress, messageId: full.messageId, attachments: attachmentsOf(full), degraded: false };
      const head = await run({ op: 'headers', raw }, HEADERS_TIMEOUT_MS);
      if (!head) return nothing();
      return { metadata: head.metadata, fromAddress: head.fromAddress, messageId: head.messageId, attachments: [], degraded: true };
    },
    async readAttachment(raw, index) {
      const r = await run({ op: 'attachment', raw, index }, timeoutMs);
      return r ? attachmentsOf(r)[0] : undefined;
    },
    close: () => pool.close({ force: true }),
  };
}
