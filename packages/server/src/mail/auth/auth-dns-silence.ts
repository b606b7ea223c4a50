// Name servers that answer nothing at all (auth-dns.ts): a look-up still unanswered when the
// resolver first asks again makes it ask the servers for the root's NS records. When that goes
// unanswered too and nothing else was answered meanwhile, the servers are silent: the look-ups
// waiting for them end at once, and new ones fail at once, while the root question is asked
// again `recheckMs` after the last; the first answer of any kind ends that.
import type { Resolver } from 'node:dns/promises';

/** A look-up that no name server answered at all; any other outcome, SERVFAIL too, is an answer. */
export const NO_REPLY = new Set(['ETIMEOUT', 'ECONNREFUSED']);

export interface ServerSilence {
  /** The servers answered nothing, not even the root question, since they last did. */
  readonly silent: boolean;
  /** Some answer came from the servers (an error that is a reply counts). */
  heard(): void;
  /** Asks the servers for the root's NS records (once at a time). */
  check(): void;
  /** While silent: whether the root question is due again. */
  recheckDue(): boolean;
  /** A look-up waiting for the servers: `end` is called when they are found silent; returns what stops that. */
  wait(end: () => void): () => void;
}

export function createServerSilence(resolver: Resolver, opts: { recheckMs: number; onSilence?: ((silent: boolean) => void) | undefined }): ServerSilence {
  /** The servers answered nothing, not even the root question, since `lastHeard`. */
  let silent = false;
  /** performance.now() of the last answer of any kind, and of the end of the last root question. */
  let lastHeard = -Infinity;
  let lastCheck = -Infinity;
  let checking = false;
  /** Mails' look-ups waiting for the servers: ended at once when those are found silent. */
  const waiting = new Set<() => void>();

  function setSilent(now: boolean): void {
    if (now === silent) return;
    silent = now;
    if (silent) for (const end of [...waiting]) end();
    opts.onSilence?.(silent);
  }

  function heard(): void {
    lastHeard = performance.now();
    setSilent(false);
  }

  /** Asks the servers for the root's NS records: silent if that goes unanswered and nothing else was answered meanwhile. */
  function check(): void {
    if (checking) return;
    checking = true;
    const asked = performance.now();
    resolver.resolve('.', 'NS').then(heard, (err: { code?: string }) => {
      if (!NO_REPLY.has(String(err?.code))) heard();
      else if (lastHeard < asked) setSilent(true);
    }).finally(() => {
      checking = false;
      lastCheck = performance.now();
    });
  }

  return {
    get silent() {
      return silent;
    },
    heard,
    check,
    recheckDue: () => performance.now() - lastCheck >= opts.recheckMs,
    wait(end) {
      waiting.add(end);
      return () => waiting.delete(end);
    },
  };
}
