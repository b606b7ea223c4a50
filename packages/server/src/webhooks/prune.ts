// Old webhook attempts and deliveries nobody can send (the operator's, after WEBHOOK_URL was
// removed from every node) are removed now and then, and stale ones at start.
import type { Logger } from 'pino';
import type { WebhookStore } from '../storage/store.js';

/** How often old attempts and stale deliveries are removed. */
const PRUNE_EVERY_MS = 60 * 60_000;

/** Prunes now and every PRUNE_EVERY_MS; returns what stops it. */
export function startPruning(opts: { store: WebhookStore; logger: Logger; now: () => number; keepAttemptsMs: number; retryForMs: number; leaseMs: number }): () => void {
  const { store, logger, now } = opts;
  const prune = () => {
    const t = now();
    store
      .pruneWebhooks({ attemptsBefore: t - opts.keepAttemptsMs, queuedBefore: t - opts.retryForMs - opts.leaseMs - PRUNE_EVERY_MS, now: t })
      .then(
        (r) => (r.attempts || r.deliveries) && logger.info(r, 'webhook attempts pruned'),
        (err: unknown) => logger.warn({ err }, 'webhook attempts could not be pruned'),
      );
  };
  prune();
  const pruneTimer = setInterval(prune, PRUNE_EVERY_MS);
  pruneTimer.unref();
  return () => clearInterval(pruneTimer);
}
