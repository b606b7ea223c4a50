// The worker of message-view.ts: reshapes one large parsed view into mail.tm's Message
// off the event loop, and sends the response bytes back (moved, not copied).
import { parentPort, workerData } from 'node:worker_threads';
import type { ParsedMailContent } from '@temp-inbox/api';
import { reshape, type MessageJob } from './message-view.js';

parentPort!.once('message', (bytes: Uint8Array) => {
  const view = JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8')) as ParsedMailContent;
  const out = new TextEncoder().encode(reshape(workerData as MessageJob, view));
  parentPort!.postMessage(out, [out.buffer]);
});
