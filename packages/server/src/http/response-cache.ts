// Reuse of serialised read responses. Clients poll: a QA test asks for its inbox
// every few hundred milliseconds until the code arrives, and almost every answer
// is the same bytes as the last one. A response is reused only while its address's
// mail-set version (MailService.mailSetVersion) is unchanged, so a mail is listed
// on the first request after its 250 and a deleted one is gone on the next; when the
// store cannot say (PostgreSQL, shared by several nodes), nothing is reused.

export interface ResponseCache {
  /** The body stored under key for exactly this version, if any. */
  get(key: string, version: string): string | undefined;
  set(key: string, version: string, body: string): void;
}

export interface ResponseCacheLimits {
  /** Total characters of the bodies kept. */
  maxChars: number;
  /** Larger bodies are not kept. */
  maxEntryChars: number;
}

export const DEFAULT_RESPONSE_CACHE_LIMITS: ResponseCacheLimits = { maxChars: 8 * 1024 * 1024, maxEntryChars: 256 * 1024 };

export function createResponseCache(limits: ResponseCacheLimits = DEFAULT_RESPONSE_CACHE_LIMITS): ResponseCache {
  // A Map iterates in insertion order; re-inserting on a hit makes it an LRU list.
  const entries = new Map<string, { version: string; body: string }>();
  let chars = 0;
  const remove = (key: string) => {
    const e = entries.get(key);
    if (!e) return;
    entries.delete(key);
    chars -= e.body.length;
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
      if (body.length > limits.maxEntryChars) return;
      while (chars + body.length > limits.maxChars && entries.size > 0) remove(entries.keys().next().value!);
      entries.set(key, { version, body });
      chars += body.length;
    },
  };
}
