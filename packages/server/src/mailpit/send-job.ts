// POST /api/v1/send's body, read and composed (compose.ts): on the event loop when it is
// small, in a worker thread of its own when it is large (up to about 4/3 of
// MAX_MESSAGE_BYTES of JSON with base64 attachments), so that neither its JSON nor its
// base64 is decoded on the event loop (send-worker.ts). The answer crosses back as bytes:
// 'E' and the 400's text, or 'K', the length of a JSON head (envelope, tags), the head and
// the message.
import { AppError } from '../domain/errors.js';
import { moduleWorkerUrl } from '../workers/module-worker.js';
import { runOneShot } from '../workers/one-shot.js';
import { composeMessage, type Composed } from './compose.js';

/** Bodies up to this size are read inline. */
export const INLINE_BYTES = 64 * 1024;

export interface SendJob {
  maxBytes: number;
  /** ms since the epoch: the message's Date. */
  now: number;
  hostname: string;
}

/** The composed message as bytes (see the module comment). */
export function composeBytes(job: SendJob, body: Buffer): Buffer {
  let composed: Composed;
  try {
    let parsed: unknown;
    try {
      parsed = JSON.parse(body.toString('utf8'));
    } catch {
      throw new AppError('bad_request', 'The request body is not valid JSON.');
    }
    composed = composeMessage(parsed, { maxBytes: job.maxBytes, now: new Date(job.now), hostname: job.hostname });
  } catch (err) {
    if (err instanceof AppError && err.code === 'bad_request') return Buffer.from(`E${err.message}`);
    throw err;
  }
  const head = Buffer.from(JSON.stringify({ envelope: composed.envelope, tags: composed.tags }));
  const size = Buffer.alloc(4);
  size.writeUInt32BE(head.length);
  return Buffer.concat([Buffer.from('K'), size, head, composed.raw]);
}

function decode(bytes: Buffer): Composed {
  if (bytes[0] === 0x45) throw new AppError('bad_request', bytes.subarray(1).toString('utf8'));
  const length = bytes.readUInt32BE(1);
  const head = JSON.parse(bytes.subarray(5, 5 + length).toString('utf8')) as Pick<Composed, 'envelope' | 'tags'>;
  return { ...head, raw: bytes.subarray(5 + length) };
}

export async function composeSend(job: SendJob, body: Buffer): Promise<Composed> {
  if (body.length <= INLINE_BYTES) return decode(composeBytes(job, body));
  return decode(await runOneShot(moduleWorkerUrl(import.meta.url, 'send-worker'), job, body));
}
