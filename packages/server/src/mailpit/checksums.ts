// The Checksums (MD5, SHA1, SHA256, hex) of a message's attachments, as Mailpit's summary
// lists them, from the decoded bytes kept at delivery. Up to INLINE_BYTES in all they are
// hashed on the event loop (a fraction of a millisecond); more in a worker thread of its
// own (checksum-worker.ts), so that hashing 10 MB never holds the event loop.
import { createHash } from 'node:crypto';
import { moduleWorkerUrl } from '../workers/module-worker.js';
import { runOneShot } from '../workers/one-shot.js';

export const INLINE_BYTES = 64 * 1024;

export interface Checksums {
  MD5: string;
  SHA1: string;
  SHA256: string;
}

const digest = (algorithm: string, bytes: Buffer) => createHash(algorithm).update(bytes).digest('hex');

/** The checksums of each part of `joined`, cut at `lengths`, as JSON. */
export function checksumJson(lengths: number[], joined: Buffer): string {
  const out: Checksums[] = [];
  let at = 0;
  for (const length of lengths) {
    const part = joined.subarray(at, at + length);
    at += length;
    out.push({ MD5: digest('md5', part), SHA1: digest('sha1', part), SHA256: digest('sha256', part) });
  }
  return JSON.stringify(out);
}

export async function checksumsOf(parts: Buffer[]): Promise<Checksums[]> {
  const lengths = parts.map((p) => p.length);
  const joined = Buffer.concat(parts);
  const json = joined.length <= INLINE_BYTES ? checksumJson(lengths, joined) : (await runOneShot(moduleWorkerUrl(import.meta.url, 'checksum-worker'), lengths, joined)).toString('utf8');
  return JSON.parse(json) as Checksums[];
}
