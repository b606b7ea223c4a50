// Webhooks and their delivery outbox as the store keeps them (a role of Store, store.ts).
import type { MailSummary } from './mail-rows.js';

/** An address's webhook (docs/api.md "Webhooks"): at most one per address. */
export interface WebhookRecord {
  id: number;
  addressId: number;
  url: string;
  /** whsec_…: the key its deliveries are signed with. */
  secret: string;
  /** When the URL and secret were set (a PUT sets both). */
  createdAt: number;
}

/** The fields of a mail a webhook delivery carries (the list item's), and its report summary once kept. */
export type WebhookMail = Pick<MailSummary, 'id' | 'uuid' | 'source' | 'address' | 'metadata' | 'messageId' | 'createdAt' | 'envelope'> & {
  /** JSON text of its ReportSummary, when one was kept by the time the delivery was claimed. */
  reportSummary?: string;
};

/** A queued delivery a node has claimed (with a lease), with what it needs to send it. */
export interface ClaimedDelivery {
  id: number;
  /** null: the operator's WEBHOOK_URL. */
  webhookId: number | null;
  /** The address's webhook's URL and secret; null for the operator's. */
  url: string | null;
  secret: string | null;
  /** Attempts started before this one (counted when claimed: one that never finished counts too). */
  attempts: number;
  /** Its webhook's (or the operator's WEBHOOK_URL's) latest attempts in a row that timed out. */
  timeouts: number;
  /** When it was queued (the mail's arrival): retries stop a fixed time after it. */
  createdAt: number;
  addressId: number;
  /** The mail's list fields (also when its owner has deleted it since). */
  mail: WebhookMail;
}

/** What finishDelivery leaves on the delivery's webhook (or the operator's WEBHOOK_URL) for its next attempt. */
export interface WebhookRelease {
  /** No attempt of the webhook starts before this (0: at once); after time-outs, a hold. */
  notBefore: number;
  /** Its attempts in a row that timed out, this one included. */
  timeouts: number;
}

export type WebhookOutcome = 'delivered' | 'failed' | 'gave_up';

/** One attempt to deliver a mail to a webhook, as GET /api/webhook/deliveries lists it. */
export interface WebhookAttempt {
  /** null: the operator's WEBHOOK_URL (listed to nobody). */
  webhookId: number | null;
  addressId: number;
  mailUuid: string;
  url: string;
  /** 1 for the first. */
  attempt: number;
  at: number;
  outcome: WebhookOutcome;
  /** The HTTP status answered, or null for none. */
  status: number | null;
  durationMs: number;
  error: string | null;
  /** When it is tried again (failed only). */
  nextAt: number | null;
}

/**
 * Webhooks and their delivery outbox (docs/decisions.md "Webhooks"). insertMails queues a
 * delivery per stored mail for the address's webhook (and for the operator's with
 * NewMail.operatorWebhook) in the mail's own transaction; nodes claim due deliveries with
 * a lease, so each is sent by one node at a time.
 */
export interface WebhookStore {
  /** Sets the address's webhook, replacing the URL and secret of one it has (its queued deliveries follow it). */
  putWebhook(addressId: number, url: string, secret: string, createdAt: number): Promise<WebhookRecord>;
  getWebhook(addressId: number): Promise<WebhookRecord | undefined>;
  /** Removes the address's webhook with its queued deliveries and its attempts; false when it had none. */
  deleteWebhook(addressId: number): Promise<boolean>;
  /**
   * Leases up to `limit` deliveries due at `now` (next attempt reached, no live lease) to
   * `owner`, and counts each as an attempt started. Webhooks take turns: the earliest due
   * delivery of each webhook that may start one (none in flight on any node, no hold
   * running), the webhook served longest ago first (a new one counts as served when it
   * was set); the operator's WEBHOOK_URL (only with `operator`) is one webhook among them,
   * leased and held the same way; none of `busyWebhooks` (held by this node already). A claimed
   * delivery's webhook is leased with it, so no caller starts another attempt to it until
   * that one is finished or its lease runs out. The lease lasts leaseMs doubled for each
   * attempt the delivery had before (at most 64 times): one whose attempts keep ending
   * with no record, its node gone in the middle, comes back later each time. Two callers
   * never get the same delivery, nor deliveries of the same webhook (nor two of the
   * operator's), while a lease lasts.
   */
  claimDeliveries(claim: { owner: string; now: number; leaseMs: number; limit: number; busyWebhooks: number[]; operator: boolean }): Promise<ClaimedDelivery[]>;
  /**
   * Records an attempt of a delivery leased to `owner`: a failed one is scheduled again at
   * attempt.nextAt and its lease released; delivered or given up, it leaves the queue.
   * Its webhook, while leased to `owner`, is released with `release`. The attempt is
   * recorded even when the lease was lost (false) or the delivery is gone.
   */
  finishDelivery(owner: string, deliveryId: number, attempt: WebhookAttempt, release: WebhookRelease): Promise<boolean>;
  /**
   * When the next delivery can be claimed after `after` (the operator's only with
   * `operator`): the earliest next attempt later than `after`, or for a leased one (or one
   * whose webhook is leased or held) the end of that lease or hold (a node that died
   * leaves it then); undefined when none is. A delivery due
   * by `after` is left out: it was due at the caller's claim, so it waits for an attempt to
   * its webhook, and the lease of that attempt is a time of its own here.
   */
  nextDeliveryAt(operator: boolean, after: number): Promise<number | undefined>;
  /** The address's webhook's most recent attempts, newest first. */
  listWebhookAttempts(addressId: number, limit: number): Promise<WebhookAttempt[]>;
  /** Removes attempts made before attemptsBefore and unleased deliveries queued before queuedBefore. */
  pruneWebhooks(cutoffs: { attemptsBefore: number; queuedBefore: number; now: number }): Promise<{ attempts: number; deliveries: number }>;
}
