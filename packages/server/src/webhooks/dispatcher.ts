// The webhook dispatcher (docs/decisions.md "Webhooks"): one per node. It claims due
// deliveries from the outbox with a lease, webhooks taking turns and one attempt in
// flight per webhook on all nodes, sends a few at a time, records each attempt, and
// schedules a failed one again with exponential back-off and jitter until `retryForMs`
// after the mail arrived, then gives up (recorded); a webhook whose attempts time out is
// held back (timeoutHold). The operator's WEBHOOK_URL is one webhook among them, on the
// same terms (docs/security.md "Webhooks"): its receiver is no more trusted to answer. It never holds up delivery of mail: the SMTP side only queues
// (in the mail's transaction) and wakes it. A claim counts the attempt before anything is
// sent, so a delivery whose node died in the middle is taken by any node once its lease
// (longer at each such attempt) has run out, and never sent in a tight loop.
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { Metrics } from '../observability/metrics.js';
import type { ClaimedDelivery, WebhookStore } from '../storage/store.js';
import { createAttempts } from './attempt.js';
import type { Lookup } from './guard.js';
import { startPruning } from './prune.js';

export interface WebhookTuning {
  /** The whole attempt, DNS included (default 5 s). */
  timeoutMs: number;
  /** Retries stop this long after the mail arrived (default 24 h). */
  retryForMs: number;
  /** The wait after the n-th failed attempt (n = 1, 2, …), jitter included. */
  backoff: (attempt: number) => number;
  /**
   * How long a webhook whose latest n attempts in a row timed out (n = 1, 2, …) is held
   * before its next one, jitter included (default 30 s doubling to 30 min): a receiver that
   * never answers would otherwise hold a delivery slot for timeoutMs at every mail.
   */
  timeoutHold: (timeouts: number) => number;
  /** Deliveries in flight at once on this node (default 16). */
  concurrency: number;
  /** How long a claimed delivery is this node's before another may take it (default 60 s; well above timeoutMs). */
  leaseMs: number;
  /** The longest the dispatcher sleeps without looking at the outbox (default 1 s): it also picks up other nodes' orphans. */
  pollMs: number;
  /** Attempts are kept this long (default 7 days). */
  keepAttemptsMs: number;
  /** Resolves host names (default: DNS through c-ares, guard.ts dnsLookup). */
  lookup: Lookup;
}

/** Exponential back-off with "equal jitter": half the step is fixed, half random, so retries of many deliveries spread out. */
export function exponentialBackoff(baseMs = 5000, maxMs = 3_600_000): (attempt: number) => number {
  return (attempt) => {
    const step = Math.min(maxMs, baseMs * 2 ** Math.min(attempt - 1, 30));
    return Math.round(step / 2 + Math.random() * (step / 2));
  };
}

export interface DispatcherOptions extends WebhookTuning {
  store: WebhookStore;
  logger: Logger;
  metrics?: Metrics | undefined;
  now: () => number;
  /** WEBHOOK_ALLOW_PRIVATE. */
  allowPrivate: boolean;
  /** WEBHOOK_URL and WEBHOOK_SECRET; without them this node leaves the operator's deliveries to nodes that have them. */
  operator?: { url: string; secret: string } | undefined;
}

export interface Dispatcher {
  /** Looks at the outbox now (a mail was just queued, or an attempt finished). */
  wake(): void;
  /** Stops claiming and waits for the attempts in flight (each ends within timeoutMs). */
  stop(): Promise<void>;
}

/** A delivery the dispatcher could not record (database away) is tried again after this. */
const RETRY_AFTER_ERROR_MS = 1000;

export function createDispatcher(opts: DispatcherOptions): Dispatcher {
  const { store, logger, now } = opts;
  const owner = randomUUID();
  const operator = opts.operator !== undefined;
  const send = createAttempts(opts, owner);
  const inFlight = new Set<Promise<void>>();
  /** Webhooks with an attempt in flight here: one at a time each, so one slow receiver cannot take every slot. */
  const busy = new Set<number>();
  /** The operator's WEBHOOK_URL has an attempt in flight here (the same rule). */
  let operatorBusy = false;
  let stopped = false;
  let pumping: Promise<void> | undefined;
  let again = false;
  let timer: NodeJS.Timeout | undefined;

  const schedule = (ms: number) => {
    clearTimeout(timer);
    if (stopped) return;
    timer = setTimeout(wake, Math.max(0, Math.min(ms, opts.pollMs)));
    timer.unref();
  };

  function wake(): void {
    if (stopped) return;
    if (pumping) {
      again = true;
      return;
    }
    pumping = pump().finally(() => {
      pumping = undefined;
    });
  }

  async function pump(): Promise<void> {
    let sleep = opts.pollMs;
    try {
      do {
        again = false;
        const free = opts.concurrency - inFlight.size;
        if (free <= 0) break;
        const at = now();
        const claimed = await store.claimDeliveries({ owner, now: at, leaseMs: opts.leaseMs, limit: free, busyWebhooks: [...busy], operator: operator && !operatorBusy });
        for (const d of claimed) start(d);
        if (claimed.length < free) {
          // Nothing more is due: sleep until the next one is (a retry, or the end of a lease
          // another node holds), a poll's worth at most, for what other nodes queue. One due
          // by the claim's time but not claimed waits for an attempt to its webhook: ours
          // wakes us when it ends, another node's lease has its own end among those times
          // (and an earlier end is seen at the next poll). One that fell due since the claim
          // (a lease ran out meanwhile) is claimed at once.
          const next = await store.nextDeliveryAt(operator, at);
          sleep = next === undefined ? opts.pollMs : Math.max(0, next - now());
        }
      } while (again && !stopped);
    } catch (err) {
      logger.error({ err }, 'webhook outbox could not be read');
      sleep = RETRY_AFTER_ERROR_MS;
    }
    schedule(sleep);
  }

  function start(d: ClaimedDelivery): void {
    if (d.webhookId !== null) busy.add(d.webhookId);
    else operatorBusy = true;
    const attempt = send(d)
      .catch((err: unknown) => logger.error({ err, delivery: d.id }, 'webhook attempt could not be recorded'))
      .finally(() => {
        inFlight.delete(attempt);
        if (d.webhookId !== null) busy.delete(d.webhookId);
        else operatorBusy = false;
        wake();
      });
    inFlight.add(attempt);
  }

  // Old attempts and deliveries nobody can send are removed now and then; stale ones at start too.
  const stopPruning = startPruning(opts);
  wake();

  return {
    wake,
    async stop() {
      stopped = true;
      clearTimeout(timer);
      stopPruning();
      await pumping;
      await Promise.all([...inFlight]);
    },
  };
}
