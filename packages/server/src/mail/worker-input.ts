// How a message's bytes reach a worker thread (the parser's, parse.ts, and the
// authentication checks', auth.ts). A large message is in a SharedArrayBuffer that it
// fills exactly (message-buffer.ts): the worker reads it where it is, no copy. Any other
// is copied into a buffer of its own, which is moved: posting the view itself would
// clone its whole backing buffer (up to the SMTP size limit, or Buffer's shared pool).
import { isSharedWhole } from './message-buffer.js';

/** Bytes copied per turn of the event loop: one copy of 10 MB takes 10-20 ms, a slice of 1 MiB one or two. */
const COPY_SLICE_BYTES = 1024 * 1024;

export interface WorkerInput {
  bytes: Uint8Array;
  /** What to move with the task (nothing for a shared buffer). */
  transferList: ArrayBuffer[];
}

export async function forWorker(raw: Uint8Array): Promise<WorkerInput> {
  if (isSharedWhole(raw)) return { bytes: raw, transferList: [] };
  const copy = new ArrayBuffer(raw.byteLength);
  const view = new Uint8Array(copy);
  for (let at = 0; at < raw.byteLength; at += COPY_SLICE_BYTES) {
    if (at > 0) await new Promise((resolve) => setImmediate(resolve));
    view.set(raw.subarray(at, at + COPY_SLICE_BYTES), at);
  }
  return { bytes: view, transferList: [copy] };
}
