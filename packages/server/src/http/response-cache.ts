// Reuse of serialised read responses, kept as the bytes that are sent. Clients poll: a QA test asks for its inbox
// every few hundred milliseconds until the code arrives, and almost every answer
// is the same bytes as the last one. A response is reused only while its address's
// mail-set version (VersionedStore.mailSetVersion, storage/caching-store.ts) is unchanged, so a mail is listed
// on the first request after its 250 and a deleted one is gone on the next; when the
// store cannot say (PostgreSQL, shared by several nodes), nothing is reused.

import { LRUCache } from 'lru-cache';

export interface ResponseCache {
  /** The body stored under key for exactly this version, if any. */
  get(key: string, version: string): Buffer | undefined;
  set(key: string, version: string, body: Buffer): void;
  /** Bytes of the bodies held. */
  bytes(): number;
  /** Stops the purge timer and drops every entry. */
  close(): void;
}

export interface ResponseCacheLimits {
  /** Total bytes of the bodies kept. */
  maxBytes: number;
  /** Larger bodies are not kept. */
  maxEntryBytes: number;
  /**
   * An entry not asked for in this long is dropped (a poll every few seconds keeps
   * its page; a mail read once, or a page made stale by a new delivery, goes), so
   * what is held follows the last minute's traffic rather than filling up to maxBytes.
   */
  idleMs: number;
}

export const DEFAULT_RESPONSE_CACHE_LIMITS: ResponseCacheLimits = { maxBytes: 8 * 1024 * 1024, maxEntryBytes: 256 * 1024, idleMs: 30_000 };

interface Entry {
  version: string;
  body: Buffer;
}

export function createResponseCache(limits: ResponseCacheLimits = DEFAULT_RESPONSE_CACHE_LIMITS): ResponseCache {
  const entries = new LRUCache<string, Entry>({
    maxSize: limits.maxBytes,
    maxEntrySize: limits.maxEntryBytes,
    sizeCalculation: (e) => Math.max(1, e.body.length),
    ttl: limits.idleMs,
    updateAgeOnGet: true,
    // The clock is re-read at most this often (lru-cache's default of 1 ms arms a
    // timer every millisecond under load): 1% of the idle period is fine enough.
    ttlResolution: Math.max(1, Math.floor(limits.idleMs / 100)),
  });
  // lru-cache's own autopurge sets a timer per entry; one sweep of the stale ones
  // every half idle period does the same for the cost of one timer.
  const purge = setInterval(() => entries.purgeStale(), Math.max(1000, Math.floor(limits.idleMs / 2)));
  purge.unref();
  return {
    get(key, version) {
      const e = entries.get(key);
      if (!e) return undefined;
      if (e.version !== version) {
        entries.delete(key);
        return undefined;
      }
      return e.body;
    },
    set(key, version, body) {
      if (body.length > limits.maxEntryBytes) {
        entries.delete(key);
        return;
      }
      // A small Buffer is a slice of Node's shared 8 KiB pool; keeping it would keep
      // the whole slab alive, so an entry gets memory of its own.
      if (body.byteOffset !== 0 || body.buffer.byteLength !== body.length) body = Buffer.from(Uint8Array.prototype.slice.call(body).buffer);
      entries.set(key, { version, body });
    },
    bytes() {
      return entries.calculatedSize;
    },
    close() {
      clearInterval(purge);
      entries.clear();
    },
  };
}
