// One job in a worker thread of its own: the input bytes moved in, the answer's bytes moved
// back, the worker ended. For reshaping one large message into another API's JSON (the
// Mailpit- and MailHog-compatible APIs) off the event loop; small ones are reshaped inline.
// The worker module answers with oneShotAnswer().
import { parentPort, workerData } from 'node:worker_threads';
import { AppError } from '../domain/errors.js';
import { startModuleWorker } from './module-worker.js';

/** A worker that has not answered by then is ended, and the client asked to retry. */
const WORKER_TIMEOUT_MS = 30_000;

export async function runOneShot(url: URL, data: unknown, input: Buffer): Promise<Buffer> {
  const worker = startModuleWorker(url, { workerData: data });
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
      // Moved, not copied: the input is not used here again.
      const bytes = new Uint8Array(input.byteLength);
      bytes.set(input);
      worker.postMessage(bytes, [bytes.buffer]);
    });
  } finally {
    void worker.terminate();
  }
}

/** In the worker module: answers the one job with `reshape(workerData, input)`. */
export function oneShotAnswer<T>(reshape: (data: T, input: Buffer) => Buffer | string): void {
  parentPort!.once('message', (bytes: Uint8Array) => {
    const out = reshape(workerData as T, Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
    // A Buffer may share Node's pool: its bytes are copied into one of their own to be moved.
    const answer = typeof out === 'string' ? new TextEncoder().encode(out) : Uint8Array.prototype.slice.call(out);
    parentPort!.postMessage(answer, [answer.buffer]);
  });
}
