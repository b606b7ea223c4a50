// One job in a worker thread of its own: the input bytes moved in, the answer's bytes moved
// back, the worker ended. For reshaping one large message into another API's JSON (the
// Mailpit- and MailHog-compatible APIs) off the event loop; small ones are reshaped inline.
// The worker module answers with oneShotAnswer().
import { parentPort, workerData } from 'node:worker_threads';
import { AppError } from '../domain/errors.js';
import { startModuleWorker } from './module-worker.js';

/** A worker that has not answered by then is ended, and the client asked to retry. */
const WORKER_TIMEOUT_MS = 30_000;
/**
 * Workers at once in this process, and jobs waiting for one: each holds a thread and a
 * message of up to MAX_MESSAGE_BYTES, so that many requests at once must not start one
 * each (one per open HTTP connection would be thousands). Past both: 503 with Retry-After.
 */
export const MAX_ONE_SHOTS = 4;
export const MAX_ONE_SHOTS_WAITING = 32;

let running = 0;
const waiting: (() => void)[] = [];

/** Workers of this module running now (for tests of the cap). */
export const oneShotsRunning = (): number => running;

async function slot(): Promise<void> {
  if (running < MAX_ONE_SHOTS) {
    running++;
    return;
  }
  if (waiting.length >= MAX_ONE_SHOTS_WAITING) throw new AppError('unavailable', 'Too many large messages are being read at once; retry in a moment.', 1);
  // The slot is handed over by release(): `running` stays counted.
  await new Promise<void>((resolve) => waiting.push(resolve));
}

function release(): void {
  const next = waiting.shift();
  if (next) next();
  else running--;
}

export async function runOneShot(url: URL, data: unknown, input: Buffer, timeoutMs = WORKER_TIMEOUT_MS): Promise<Buffer> {
  await slot();
  try {
    return await runWorker(url, data, input, timeoutMs);
  } finally {
    release();
  }
}

/** One job in a worker of its own, outside the cap above (for callers bounded elsewhere: the mail.tm message view). */
export async function runWorker(url: URL, data: unknown, input: Buffer, timeoutMs = WORKER_TIMEOUT_MS): Promise<Buffer> {
  const worker = startModuleWorker(url, { workerData: data });
  try {
    return await new Promise<Buffer>((resolve, reject) => {
      const timer = setTimeout(() => reject(new AppError('unavailable', 'Reading the message took too long; retry in a moment.', 5)), timeoutMs);
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
