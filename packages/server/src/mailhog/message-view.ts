// One MailHog message's JSON (shapes.ts) from a stored mail. A message up to INLINE_BYTES is
// reshaped on the event loop (well under a millisecond); a larger one (up to
// MAX_MESSAGE_BYTES, 10 MB by default, whose JSON holds it twice) in a worker thread of its
// own, so that splitting and escaping it never holds the event loop (message-worker.ts).
import { moduleWorkerUrl } from '../workers/module-worker.js';
import { runOneShot } from '../workers/one-shot.js';
import { message, type MailhogSource } from './shapes.js';

/** Messages up to this size are reshaped inline. */
export const INLINE_BYTES = 64 * 1024;

export type MailhogJob = Omit<MailhogSource, 'data'>;

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** The stored bytes as text: UTF-8 when they are valid UTF-8, else one character per byte (as GET /api/mail/{uuid}). */
export function textOf(raw: Buffer): string {
  try {
    return utf8.decode(raw);
  } catch {
    return raw.toString('latin1');
  }
}

/** The JSON text of one message. */
export const reshape = (job: MailhogJob, raw: Buffer): string => JSON.stringify(message({ ...job, data: textOf(raw) }));

export async function messageJson(job: MailhogJob, raw: Buffer): Promise<Buffer> {
  if (raw.length <= INLINE_BYTES) return Buffer.from(reshape(job, raw));
  return runOneShot(moduleWorkerUrl(import.meta.url, 'message-worker'), job, raw);
}
