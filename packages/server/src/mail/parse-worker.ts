// Runs in the parser's worker threads (parse.ts): parses one message and answers
// with its metadata and the decoded bytes of the attachments that metadata lists,
// all of them in one buffer moved (not copied) back to the server's thread.
import { Piscina } from 'piscina';
import type { Email } from 'postal-mime';
import { buildMetadata, contentBytes, parseHeaderBlock, parseMessage } from './metadata.js';

export type ParseTask = { op: 'parse' | 'headers'; raw: Uint8Array } | { op: 'attachment'; raw: Uint8Array; index: number };

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
}

function bytesOf(content: ArrayBuffer | Uint8Array | string): Uint8Array {
  if (typeof content === 'string') return Buffer.from(content);
  return content instanceof ArrayBuffer ? new Uint8Array(content) : content;
}

function result(email: Email | undefined, listed: number, pick?: number): WorkerResult {
  const metadata = buildMetadata(email, 0);
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
  return { metadata, fromAddress: from, messageId: email?.messageId ?? '', attachments, contents };
}

export default async function parseTask(task: ParseTask) {
  let out: WorkerResult;
  if (task.op === 'headers') out = result(await parseHeaderBlock(task.raw), 0);
  else {
    const email = await parseMessage(task.raw);
    // Only the attachments the metadata lists are kept (it may have dropped some to fit).
    const listed = buildMetadata(email, 0).attachments.length;
    if (task.op === 'attachment') out = result(email, listed, task.index < listed ? task.index : -1);
    else out = result(email, listed);
  }
  // Moved, not copied: the result object travels by value, its one buffer is transferred.
  return Piscina.move({ [Piscina.transferableSymbol]: out.contents, [Piscina.valueSymbol]: out } as unknown as ArrayBuffer) as unknown as WorkerResult;
}
