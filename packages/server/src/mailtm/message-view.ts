// GET /messages/{id} of the mail.tm-compatible API: the mail's parsed view (from the
// parser's worker, as GET /api/mail/{uuid}/parsed has it) reshaped into mail.tm's Message.
// A view holds the whole text and HTML, up to about twice the message (20 MB for the
// default MAX_MESSAGE_BYTES): a large one is reshaped in a worker thread of its own, so
// that reading it back never holds the event loop (message-worker.ts).
import type { ParsedMailContent } from '@temp-inbox/api';
import { moduleWorkerUrl } from '../workers/module-worker.js';
import { runWorker } from '../workers/one-shot.js';
import { message, resource, messageIri, type Format, type StoredMail } from './shapes.js';

/** Views up to this size are reshaped on the event loop (a fraction of a millisecond per 100 KiB). */
const INLINE_BYTES = 512 * 1024;

export interface MessageJob {
  format: Format;
  stored: StoredMail;
  accountId: string;
  retentionMs: number;
}

/** The response bytes of one message. */
export function reshape(job: MessageJob, view: ParsedMailContent): string {
  return JSON.stringify(resource(job.format, 'Message', messageIri(job.stored.uuid), message(job.stored, job.accountId, view, job.retentionMs)));
}

export async function messageBody(job: MessageJob, content: Buffer): Promise<Buffer> {
  if (content.length <= INLINE_BYTES) return Buffer.from(reshape(job, JSON.parse(content.toString('utf8')) as ParsedMailContent));
  return runWorker(moduleWorkerUrl(import.meta.url, 'message-worker'), job, content);
}
