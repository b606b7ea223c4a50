// GET /messages/{id} of the mail.tm-compatible API: the mail's parsed view (from the
// parser's worker, as GET /api/mail/{uuid}/parsed has it) reshaped into mail.tm's Message.
// A view holds the whole text and HTML, up to about twice the message (20 MB for the
// default MAX_MESSAGE_BYTES): a large one is reshaped in a worker thread of its own, so
// that reading it back never holds the event loop (message-worker.ts).
import type { ParsedMailContent } from '@temp-inbox/api';
import { AppError } from '../domain/errors.js';
import { moduleWorkerUrl, startModuleWorker } from '../workers/module-worker.js';
import { message, resource, messageIri, type Format, type StoredMail } from './shapes.js';

/** Views up to this size are reshaped on the event loop (a fraction of a millisecond per 100 KiB). */
const INLINE_BYTES = 512 * 1024;
/** A worker that has not answered by then is ended, and the client asked to retry. */
const WORKER_TIMEOUT_MS = 30_000;

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
  const worker = startModuleWorker(moduleWorkerUrl(import.meta.url, 'message-worker'), { workerData: job });
  try {
    return await new Promise<Buffer>((resolve, reject) => {
      const timer = setTimeout(() => reject(new AppError('unavailable', 'Reading the message took too long; retry in a moment.', 5)), WORKER_TIMEOUT_MS);
      worker.once('message', (bytes: Uint8Array) => {
        clearTimeout(timer);
        resolve(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
      });
      worker.once('error', (err) => {
        clearTimeout(timer);
        reject(err);
      });
      // Moved, not copied: the view is not used here again.
      const bytes = new Uint8Array(content.byteLength);
      bytes.set(content);
      worker.postMessage(bytes, [bytes.buffer]);
    });
  } finally {
    void worker.terminate();
  }
}
