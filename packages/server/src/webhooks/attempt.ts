// One attempt of a claimed webhook delivery (docs/decisions.md "Webhooks"): its URL checked
// again and resolved through the SSRF guard, the signed POST, then the outcome recorded in
// the outbox (delivered, failed with its next time by back-off, or given up), a webhook whose
// attempts time out held back, a metric and a log line.
import type { Logger } from 'pino';
import type { Metrics } from '../observability/metrics.js';
import type { ClaimedDelivery, WebhookOutcome, WebhookRelease, WebhookStore } from '../storage/store.js';
import { resolveTarget, WebhookRefusedError, type Lookup } from './guard.js';
import { mailReceivedBody, messageId, signedHeaders } from './payload.js';
import { postWebhook, type PostResult } from './sender.js';
import { parseWebhookUrl, WebhookUrlError } from '../domain/webhook-url.js';

/** What an attempt is given (dispatcher.ts DispatcherOptions). */
export interface AttemptOptions {
  store: WebhookStore;
  logger: Logger;
  metrics?: Metrics | undefined;
  now: () => number;
  allowPrivate: boolean;
  operator?: { url: string; secret: string } | undefined;
  timeoutMs: number;
  retryForMs: number;
  backoff: (attempt: number) => number;
  timeoutHold: (timeouts: number) => number;
  lookup: Lookup;
}

/** Sends a delivery claimed by `owner` and records the attempt; rejects only when it could not be recorded. */
export function createAttempts(opts: AttemptOptions, owner: string): (d: ClaimedDelivery) => Promise<void> {
  const { store, logger, now } = opts;

  async function send(d: ClaimedDelivery): Promise<void> {
    const url = d.webhookId === null ? opts.operator?.url : d.url;
    const secret = d.webhookId === null ? opts.operator?.secret : d.secret;
    const at = now();
    const started = performance.now();
    let result: PostResult;
    if (url == null || secret == null) {
      result = { status: null, ok: false, error: 'The webhook is no longer configured.' };
    } else {
      result = await attempt(url, secret, d);
    }
    const durationMs = Math.round(performance.now() - started);
    const number = d.attempts + 1;
    const ended = now();
    // A webhook whose attempts run out of time is held back, all its deliveries with it.
    const release: WebhookRelease = result.timedOut ? { timeouts: d.timeouts + 1, notBefore: ended + opts.timeoutHold(d.timeouts + 1) } : { timeouts: 0, notBefore: 0 };
    let outcome: WebhookOutcome = 'delivered';
    let nextAt: number | null = null;
    if (!result.ok) {
      nextAt = Math.max(ended + opts.backoff(number), release.notBefore);
      outcome = nextAt > d.createdAt + opts.retryForMs ? 'gave_up' : 'failed';
      if (outcome === 'gave_up') nextAt = null;
    }
    const held = await store.finishDelivery(owner, d.id, {
      webhookId: d.webhookId,
      addressId: d.addressId,
      mailUuid: d.mail.uuid,
      url: url ?? '',
      attempt: number,
      at,
      outcome,
      status: result.status,
      durationMs,
      error: result.error,
      nextAt,
    }, release);
    opts.metrics?.webhookAttempt(d.webhookId === null ? 'operator' : 'address', outcome);
    const line = { delivery: d.id, mail: d.mail.uuid, hook: d.webhookId === null ? 'operator' : 'address', attempt: number, outcome, status: result.status, error: result.error, ms: durationMs };
    // Its webhook or mail was removed meanwhile, or (a stall past the lease) another node has taken it over and may send it again.
    if (!held) logger.warn(line, 'webhook delivery was no longer leased to this node when its attempt ended');
    else if (outcome === 'gave_up') logger.info(line, 'webhook delivery given up');
    // An owner's receiver failing is the owner's business (GET /api/webhook/deliveries); the operator's is the operator's.
    else if (outcome === 'failed') logger[d.webhookId === null ? 'warn' : 'debug'](line, 'webhook delivery failed');
    else logger.debug(line, 'webhook delivered');
  }

  async function attempt(rawUrl: string, secret: string, d: ClaimedDelivery): Promise<PostResult> {
    const deadline = performance.now() + opts.timeoutMs;
    try {
      // Checked again at every attempt: a name's DNS may have changed since the URL was set.
      const target = parseWebhookUrl(rawUrl);
      const addresses = await resolveTarget(target, { allowPrivate: opts.allowPrivate, lookup: opts.lookup, timeoutMs: opts.timeoutMs });
      const body = mailReceivedBody(d.mail);
      return await postWebhook({
        url: target.url,
        addresses,
        headers: signedHeaders(secret, messageId(d.mail.uuid), body, new Date()),
        body,
        timeoutMs: deadline - performance.now(),
      });
    } catch (err) {
      // The guard's and the URL check's messages are sentences meant for the owner.
      if (err instanceof WebhookRefusedError) return { status: null, ok: false, error: err.message, timedOut: err.timedOut };
      return { status: null, ok: false, error: err instanceof WebhookUrlError ? err.message : 'The request could not be made.' };
    }
  }

  return send;
}
