// Runs in the parser's worker threads (parse.ts): parses one message and answers
// with its metadata and the decoded bytes of the attachments that metadata lists,
// all of them in one buffer moved (not copied) back to the server's thread.
import { parentPort } from 'node:worker_threads';
import { Piscina } from 'piscina';
import PostalMime, { type Email } from 'postal-mime';
import { installConcatBlob } from './concat-blob.js';
import { buildMetadata, contentBytes, parseHeaderBlock, PARSE_OPTIONS } from './metadata.js';

// postal-mime gathers every decoded part in a Blob; Node's is slow at that (concat-blob.ts).
installConcatBlob();

export type ParseTask = { id: number; raw: Uint8Array } & ({ op: 'parse' | 'headers' } | { op: 'attachment'; index: number });

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

export interface WorkerResult {
  metadata: ReturnType<typeof buildMetadata>;
  fromAddress: string | undefined;
  messageId: string;
  attachments: WorkerAttachment[];
  /** Every listed attachment's bytes, back to back. */
  contents: ArrayBuffer;
  /** The parser refused the message (limits, malformed): only its header block was read. */
  degraded: boolean;
}

function bytesOf(content: ArrayBuffer | Uint8Array | string): Uint8Array {
  if (typeof content === 'string') return Buffer.from(content);
  return content instanceof ArrayBuffer ? new Uint8Array(content) : content;
}

function result(email: Email | undefined, degraded: boolean, pick?: number): WorkerResult {
  const metadata = buildMetadata(email, 0);
  // Only the attachments the metadata lists are kept (it may have dropped some to fit).
  const listed = metadata.attachments.length;
  const wanted = (email?.attachments ?? []).slice(0, listed).filter((_, i) => pick === undefined || i === pick);
  const total = wanted.reduce((n, a) => n + contentBytes(a.content), 0);
  const contents = new ArrayBuffer(total);
  const view = new Uint8Array(contents);
  let offset = 0;
  const attachments = wanted.map((a, i) => {
    const bytes = bytesOf(a.content);
    view.set(bytes, offset);
    const entry = { filename: metadata.attachments[pick ?? i]?.filename ?? '', contentType: a.mimeType || 'application/octet-stream', offset, length: bytes.byteLength };
    offset += bytes.byteLength;
    return entry;
  });
  const from = email?.from && !email.from.group ? email.from.address : undefined;
  return { metadata, fromAddress: from, messageId: email?.messageId ?? '', attachments, contents, degraded };
}

export default async function parseTask(task: ParseTask) {
  parentPort?.postMessage({ parseTaskStarted: task.id } satisfies StartedMessage);
  let out: WorkerResult;
  if (task.op === 'headers') out = result(await parseHeaderBlock(task.raw), true);
  else {
    let email: Email | undefined;
    let degraded = false;
    try {
      email = await PostalMime.parse(task.raw, PARSE_OPTIONS);
    } catch {
      // Past a limit (nesting, header bytes) or unparseable: the header block alone describes it.
      email = await parseHeaderBlock(task.raw);
      degraded = true;
    }
    out = task.op === 'attachment' ? result(degraded ? undefined : email, degraded, task.index) : result(email, degraded);
  }
  // Moved, not copied: the result object travels by value, its one buffer is transferred.
  return Piscina.move({ [Piscina.transferableSymbol]: out.contents, [Piscina.valueSymbol]: out } as unknown as ArrayBuffer) as unknown as WorkerResult;
}
