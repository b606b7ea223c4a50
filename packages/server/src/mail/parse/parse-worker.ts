// Runs in the parser's worker threads (parse.ts): parses one message and answers
// with its metadata and the decoded bytes of the attachments that metadata lists,
// all of them in one buffer moved (not copied) back to the server's thread; or, for
// GET /api/mail/{uuid}/parsed, with its parsed view (parsed-view.ts) as JSON bytes.
import { parentPort } from 'node:worker_threads';
import { Piscina } from 'piscina';
import PostalMime, { type Email } from 'postal-mime';
import { attachmentFacts, NO_ATTACHMENTS, type AttachmentFacts } from './attachment-facts.js';
import { installConcatBlob } from './concat-blob.js';
import { buildMetadata, headerTags, parseHeaderBlock, partialMetadataJson, PARSE_OPTIONS } from './metadata.js';
import { searchWordsOf } from './search-text.js';
import { buildView, headersOf, readHeaderBlock } from './parsed-view.js';

// postal-mime gathers every decoded part in a Blob; Node's is slow at that (concat-blob.ts).
installConcatBlob();

/** `announce`: the task may have waited for this thread, so the server is told when it starts (parse.ts). */
export type ParseTask = { id: number; raw: Uint8Array; announce: boolean } & (
  | { op: 'parse' | 'headers' }
  | { op: 'attachment'; index: number }
  /** Several small messages back to back in `raw`, each `sizes[i]` bytes: parsed in turn, answered together. */
  | { op: 'batch'; sizes: number[] }
  /** The parsed view; 'view-headers' reads the header block alone (a message whose 'view' ran out of budget). */
  | { op: 'view' | 'view-headers'; attachmentsListed: number }
);

/** Posted when a task starts running, so that its budget excludes the time it waited for a thread. */
export interface StartedMessage {
  parseTaskStarted: number;
}

export interface WorkerAttachment {
  filename: string;
  contentType: string;
  offset: number;
  length: number;
}

export interface WorkerItem {
  /** The metadata's JSON without its size (metadata.ts partialMetadataJson): a string crosses to the server's thread cheaper than the object, and is stored as it is. */
  metadataJson: string;
  fromAddress: string | undefined;
  messageId: string;
  /** Where each listed attachment's bytes are in `contents`. */
  attachments: WorkerAttachment[];
  /** The parser refused the message (limits, malformed): only its header block was read. */
  degraded: boolean;
  /** What search finds the mail by: the words of its search text (search-text.ts searchWordsOf). */
  searchText: string;
  /** The tags its X-Tags header names (metadata.ts headerTags). */
  tags: string[];
  /** Every attachment's size, extension and first bytes, for the attachment policy (attachment-facts.ts). */
  facts: AttachmentFacts;
}

export interface WorkerResult {
  /** One per message of the task (one, except for a batch). */
  items: WorkerItem[];
  /** Every listed attachment's bytes of every item, back to back. */
  contents: ArrayBuffer;
}

/** A parsed view (parsed-view.ts), serialised here rather than on the server's thread. */
export interface ViewResult {
  /** UTF-8 JSON of a ParsedMailContent. */
  json: ArrayBuffer;
  degraded: boolean;
}

function bytesOf(content: ArrayBuffer | Uint8Array | string): Uint8Array {
  if (typeof content === 'string') return Buffer.from(content);
  return content instanceof ArrayBuffer ? new Uint8Array(content) : content;
}

/** Gathers the attachments' bytes of a task's messages, to be joined into one buffer. */
class Contents {
  private chunks: Uint8Array[] = [];
  private length = 0;
  add(bytes: Uint8Array): number {
    const at = this.length;
    this.chunks.push(bytes);
    this.length += bytes.byteLength;
    return at;
  }
  join(): ArrayBuffer {
    // One attachment that has a buffer of its own (postal-mime gives each a fresh one) is moved as it is.
    const only = this.chunks.length === 1 ? this.chunks[0]! : undefined;
    if (only && only.buffer instanceof ArrayBuffer && only.byteOffset === 0 && only.byteLength === only.buffer.byteLength) return only.buffer;
    const out = new Uint8Array(this.length);
    let at = 0;
    for (const c of this.chunks) {
      out.set(c, at);
      at += c.byteLength;
    }
    return out.buffer;
  }
}

function item(email: Email | undefined, degraded: boolean, contents: Contents, pick?: number): WorkerItem {
  const metadata = buildMetadata(email, 0);
  // Only the attachments the metadata lists are kept (it may have dropped some to fit).
  const listed = metadata.attachments.length;
  const wanted = (email?.attachments ?? []).slice(0, listed).filter((_, i) => pick === undefined || i === pick);
  const attachments = wanted.map((a, i) => {
    const bytes = bytesOf(a.content);
    return { filename: metadata.attachments[pick ?? i]?.filename ?? '', contentType: a.mimeType || 'application/octet-stream', offset: contents.add(bytes), length: bytes.byteLength };
  });
  const from = email?.from && !email.from.group ? email.from.address : undefined;
  const facts = pick === undefined && email ? attachmentFacts(email.attachments.map((a) => ({ filename: a.filename, bytes: bytesOf(a.content) }))) : NO_ATTACHMENTS;
  return { metadataJson: partialMetadataJson(metadata), fromAddress: from, messageId: email?.messageId ?? '', attachments, degraded, searchText: pick === undefined ? searchWordsOf(email) : '', tags: headerTags(email), facts };
}

/** Parses one message; past a limit (nesting, header bytes) or unparseable, its header block alone describes it. */
async function parseOne(raw: Uint8Array): Promise<{ email: Email | undefined; degraded: boolean }> {
  try {
    // Given a view, postal-mime copies the bytes it covers; given the whole buffer (moved here, or
    // the SMTP side's shared one, which it only reads), it reads it in place.
    const whole = raw.byteOffset === 0 && raw.byteLength === raw.buffer.byteLength;
    const input = whole ? (raw.buffer as ArrayBuffer) : raw;
    return { email: await PostalMime.parse(input, PARSE_OPTIONS), degraded: false };
  } catch {
    return { email: await parseHeaderBlock(raw), degraded: true };
  }
}

const encoder = new TextEncoder();

async function viewTask(raw: Uint8Array, attachmentsListed: number, headersOnly: boolean): Promise<ViewResult> {
  const { email, degraded } = headersOnly ? { email: await parseHeaderBlock(raw), degraded: true } : await parseOne(raw);
  const headers = degraded ? readHeaderBlock(raw) : headersOf(email);
  let bytes = encoder.encode(JSON.stringify(buildView(email, { attachmentsListed, degraded, headers })));
  // Only a buffer the bytes fill alone may be moved.
  if (bytes.byteOffset !== 0 || bytes.byteLength !== bytes.buffer.byteLength) bytes = bytes.slice();
  return { json: bytes.buffer as ArrayBuffer, degraded };
}

export default async function parseTask(task: ParseTask) {
  if (task.announce) parentPort?.postMessage({ parseTaskStarted: task.id } satisfies StartedMessage);
  if (task.op === 'view' || task.op === 'view-headers') {
    const view = await viewTask(task.raw, task.attachmentsListed, task.op === 'view-headers');
    return Piscina.move({ [Piscina.transferableSymbol]: view.json, [Piscina.valueSymbol]: view } as unknown as ArrayBuffer) as unknown as ViewResult;
  }
  const contents = new Contents();
  const items: WorkerItem[] = [];
  if (task.op === 'headers') items.push(item(await parseHeaderBlock(task.raw), true, contents));
  else if (task.op === 'batch') {
    let at = 0;
    for (const size of task.sizes) {
      const { email, degraded } = await parseOne(task.raw.subarray(at, (at += size)));
      items.push(item(email, degraded, contents));
    }
  } else {
    const { email, degraded } = await parseOne(task.raw);
    items.push(task.op === 'attachment' ? item(degraded ? undefined : email, degraded, contents, task.index) : item(email, degraded, contents));
  }
  const out: WorkerResult = { items, contents: contents.join() };
  // Moved, not copied: the result object travels by value, its one buffer is transferred.
  return Piscina.move({ [Piscina.transferableSymbol]: out.contents, [Piscina.valueSymbol]: out } as unknown as ArrayBuffer) as unknown as WorkerResult;
}
