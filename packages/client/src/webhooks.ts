// An inbox's webhook (PUT, GET and DELETE /api/webhook, GET /api/webhook/deliveries):
// every mail the address receives is POSTed to its URL as JSON, signed as the Standard
// Webhooks specification says, with the secret `set` answers once. Reached as
// `inbox.webhook`; the inbox's token is its authority.
import { path, routes } from './api-routes.js';
import type { Webhook, WebhookCreated, WebhookDeliveriesResponse, WebhookDelivery, WebhookOutcome } from './api-types.js';
import { TempInboxError } from './errors.js';

/** What the webhook calls need of the client: its JSON call (TempInboxClient.json). */
export interface WebhookCaller {
  json<T>(method: string, path: string, opts?: { token?: string; body?: unknown }): Promise<T | undefined>;
}

export interface InboxWebhookInfo {
  /** Where every mail the address receives is POSTed. */
  url: string;
  /** When the URL, and its secret, was set. */
  createdAt: Date;
}

export interface InboxWebhookCreated extends InboxWebhookInfo {
  /** whsec_…: the key of the webhook-signature HMAC. Given only here; every `set` makes a new one. */
  secret: string;
}

/** One delivery attempt, as GET /api/webhook/deliveries lists it. */
export interface WebhookAttempt {
  /** The webhook-id header: the same for every attempt of one mail. */
  webhookId: string;
  mailUuid: string;
  url: string;
  /** 1 for the first attempt of a mail, 2 for the first retry, … */
  attempt: number;
  at: Date;
  outcome: WebhookOutcome;
  /** The receiver's HTTP status, or null when it answered none. */
  status: number | null;
  durationMs: number;
  /** Why it failed, in a sentence; null when delivered. */
  error: string | null;
  /** When the mail is tried again (failed only). */
  nextAttemptAt: Date | null;
}

const info = (w: Webhook): InboxWebhookInfo => ({ url: w.url, createdAt: new Date(w.created_at) });

const attempt = (d: WebhookDelivery): WebhookAttempt => ({
  webhookId: d.webhook_id,
  mailUuid: d.mail_uuid,
  url: d.url,
  attempt: d.attempt,
  at: new Date(d.at),
  outcome: d.outcome,
  status: d.status,
  durationMs: d.duration_ms,
  error: d.error,
  nextAttemptAt: d.next_attempt_at === null ? null : new Date(d.next_attempt_at),
});

/** What `call` resolves to, or `otherwise` when the service answered 404 (the inbox has no webhook). */
async function unlessNone<T, U>(call: Promise<T>, otherwise: U): Promise<T | U> {
  try {
    return await call;
  } catch (err) {
    if (err instanceof TempInboxError && err.status === 404) return otherwise;
    throw err;
  }
}

export class InboxWebhook {
  readonly #client: WebhookCaller;
  readonly #token: string;

  constructor(client: WebhookCaller, token: string) {
    this.#client = client;
    this.#token = token;
  }

  /**
   * Sets the URL every mail of the inbox is POSTed to, replacing any before; resolves with
   * it and its new signing secret. The service refuses (TempInboxError 400) a URL that is
   * not http(s), has credentials, or whose host is or resolves to a non-public address
   * (unless it runs with WEBHOOK_ALLOW_PRIVATE=true).
   */
  async set(url: string): Promise<InboxWebhookCreated> {
    const w = await this.#client.json<WebhookCreated>('PUT', path(routes.webhook), { token: this.#token, body: { url } });
    return { ...info(w!), secret: w!.secret };
  }

  /** The webhook (never its secret), or undefined when the inbox has none. */
  async get(): Promise<InboxWebhookInfo | undefined> {
    return unlessNone(this.#client.json<Webhook>('GET', path(routes.webhook), { token: this.#token }).then((w) => info(w!)), undefined);
  }

  /** Removes the webhook, dropping deliveries not yet made; false when there was none. */
  async remove(): Promise<boolean> {
    return unlessNone(this.#client.json('DELETE', path(routes.webhook), { token: this.#token }).then(() => true), false);
  }

  /** The recent delivery attempts, newest first (`limit` 1..100, default 50; kept 7 days). */
  async deliveries(opts: { limit?: number } = {}): Promise<WebhookAttempt[]> {
    const query = opts.limit === undefined ? '' : `?limit=${encodeURIComponent(String(opts.limit))}`;
    const body = await this.#client.json<WebhookDeliveriesResponse>('GET', `${path(routes.webhookDeliveries)}${query}`, { token: this.#token });
    return body!.results.map(attempt);
  }
}
