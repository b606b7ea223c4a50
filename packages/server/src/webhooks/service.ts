// The webhook service: what PUT, GET and DELETE /api/webhook and GET
// /api/webhook/deliveries do for an authenticated address (docs/api.md "Webhooks"). Its
// errors are domain errors (domain/errors.ts); the dispatcher sends the deliveries.
import { badRequest, notFound, unauthorized } from '../domain/errors.js';
import type { WebhookAttempt, WebhookRecord, WebhookStore } from '../storage/store.js';
import { resolveTarget, WebhookRefusedError, type Lookup } from './guard.js';
import { newSecret } from './payload.js';
import { parseWebhookUrl, WebhookUrlError } from '../domain/webhook-url.js';

export interface WebhookServiceOptions {
  store: WebhookStore;
  /** WEBHOOK_ALLOW_PRIVATE. */
  allowPrivate: boolean;
  lookup: Lookup;
  /** How long a URL's host name may take to resolve when it is set. */
  resolveTimeoutMs: number;
  now: () => number;
}

/** An address's webhook (PUT, GET, DELETE /api/webhook) and its recent attempts. */
export interface WebhookService {
  /**
   * Sets the address's webhook to `rawUrl` once the guard has checked where it points,
   * with a new secret (docs/decisions.md "Webhooks": every PUT rotates it); the answer
   * is the only place the secret is ever shown.
   */
  set(addressId: number, rawUrl: string): Promise<WebhookRecord>;
  get(addressId: number): Promise<WebhookRecord>;
  /** Removes the webhook; its queued deliveries are dropped and its attempts forgotten. */
  remove(addressId: number): Promise<void>;
  /** The webhook's most recent attempts, newest first (none without a webhook). */
  deliveries(addressId: number, limit: number): Promise<WebhookAttempt[]>;
}

const NONE = 'This address has no webhook; set one with PUT /api/webhook.';

/** A write that lost its address to a concurrent deletion (SQLite or PostgreSQL foreign key). */
const addressGone = (err: unknown) => {
  const code = (err as { code?: unknown })?.code;
  return code === '23503' || code === 'SQLITE_CONSTRAINT_FOREIGNKEY';
};

export function createWebhookService(opts: WebhookServiceOptions): WebhookService {
  const { store, now } = opts;
  return {
    /**
     * Sets the address's webhook to `rawUrl` once the guard has checked where it points,
     * with a new secret (docs/decisions.md "Webhooks": every PUT rotates it); the answer
     * is the only place the secret is ever shown.
     */
    async set(addressId: number, rawUrl: string): Promise<WebhookRecord> {
      let target;
      try {
        target = parseWebhookUrl(rawUrl);
        await resolveTarget(target, { allowPrivate: opts.allowPrivate, lookup: opts.lookup, timeoutMs: opts.resolveTimeoutMs });
      } catch (err) {
        if (err instanceof WebhookUrlError || err instanceof WebhookRefusedError) throw badRequest(err.message);
        throw err;
      }
      try {
        return await store.putWebhook(addressId, target.url.href, newSecret(), now());
      } catch (err) {
        if (addressGone(err)) throw unauthorized('This address no longer exists.');
        throw err;
      }
    },
    async get(addressId: number): Promise<WebhookRecord> {
      const webhook = await store.getWebhook(addressId);
      if (!webhook) throw notFound(NONE);
      return webhook;
    },
    /** Removes the webhook; its queued deliveries are dropped and its attempts forgotten. */
    async remove(addressId: number): Promise<void> {
      if (!(await store.deleteWebhook(addressId))) throw notFound(NONE);
    },
    /** The webhook's most recent attempts, newest first (none without a webhook). */
    deliveries: (addressId: number, limit: number): Promise<WebhookAttempt[]> => store.listWebhookAttempts(addressId, limit),
  };
}
