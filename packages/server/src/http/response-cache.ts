// Reuse of serialised read responses, kept as the bytes that are sent. Clients poll: a QA test asks for its inbox
// every few hundred milliseconds until the code arrives, and almost every answer
// is the same bytes as the last one. A response is reused only while its address's
// mail-set version (MailService.mailSetVersion) is unchanged, so a mail is listed
// on the first request after its 250 and a deleted one is gone on the next; when the
// store cannot say (PostgreSQL, shared by several nodes), nothing is reused.

export interface ResponseCache {
  /** The body stored under key for exactly this version, if any. */
  get(key: string, version: string): Buffer | undefined;
  set(key: string, version: string, body: Buffer): void;
}

export interface ResponseCacheLimits {
  /** Total bytes of the bodies kept. */
  maxBytes: number;
  /** Larger bodies are not kept. */
  maxEntryBytes: number;
}

export const DEFAULT_RESPONSE_CACHE_LIMITS: ResponseCacheLimits = { maxBytes: 8 * 1024 * 1024, maxEntryBytes: 256 * 1024 };

export function createResponseCache(limits: ResponseCacheLimits = DEFAULT_RESPONSE_CACHE_LIMITS): ResponseCache {
  // A Map iterates in insertion order; re-inserting on a hit makes it an LRU list.
  const entries = new Map<string, { version: string; body: Buffer }>();
  let bytes = 0;
  const remove = (key: string) => {
    const e = entries.get(key);
    if (!e) return;
    entries.delete(key);
    bytes -= e.body.length;
  };
  return {
    get(key, version) {
      const e = entries.get(key);
      if (!e) return undefined;
      if (e.version !== version) {
        remove(key);
        return undefined;
      }
      entries.delete(key);
      entries.set(key, e);
      return e.body;
    },
    set(key, version, body) {
      remove(key);
      if (body.length > limits.maxEntryBytes) return;
      // A small Buffer is a slice of Node's shared 8 KiB pool; keeping it would keep
      // the whole slab alive, so an entry gets memory of its own.
      if (body.byteOffset !== 0 || body.buffer.byteLength !== body.length) body = Buffer.from(Uint8Array.prototype.slice.call(body).buffer);
      while (bytes + body.length > limits.maxBytes && entries.size > 0) remove(entries.keys().next().value!);
      entries.set(key, { version, body });
      bytes += body.length;
    },
  };
}
