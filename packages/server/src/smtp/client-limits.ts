// The checks of what one client may take that are not tied to one command's parsing
// (docs/security.md "SMTP"): whether MAIL FROM may start a transaction now (its share
// of the in-flight budget, the store's free space, its bytes of the day), and the
// bytes a message takes from its per-window and per-day budgets. Every refusal is a
// 452 that passes: a share is released, space is freed, a window ends.
import { clientKey, type WindowLimiter } from '../limits/window-limiter.js';
import { networkMatcher } from '../limits/networks.js';
import type { InflightBudget } from './inflight-budget.js';
import type { SmtpError } from './replies.js';
import { refusalReply } from './refusals.js';

/** Per client and window; absent = no limit. */
export interface SmtpLimits {
  messages?: WindowLimiter | undefined;
  recipients?: WindowLimiter | undefined;
  bytes?: WindowLimiter | undefined;
  /** Catch-all addresses nobody created yet, per recipient accepted. */
  newAddresses?: WindowLimiter | undefined;
  /** Message bytes per client and day. */
  dailyBytes?: WindowLimiter | undefined;
  /** Transactions per sending domain (the MAIL FROM domain, lower-cased), from every client: SENDER_DOMAIN_RATE_LIMIT. */
  senderDomain?: WindowLimiter | undefined;
}

/** What the receiver knows of the store's disk, wired in server.ts. */
export interface StorageGate {
  level(): Promise<'ok' | 'low' | 'full'>;
  /** A delivery failed with this error (a full disk is noted). */
  failed(err: unknown): void;
}

/** The 421 of a message that does not fit the in-flight budget, or its client's share of it. */
export const BUDGET_EXCEEDED = ['4.3.1', 'Too much mail in progress here; try again in a few minutes'] as const;
export const SHARE_EXCEEDED = ['4.7.0', 'Too much mail in progress from your address; try again in a few minutes'] as const;

export interface ClientLimits {
  /** The operator's own networks (SMTP_TRUSTED_NETWORKS): no per-client connection cap, no share of the in-flight budget. */
  trusted(ip: string): boolean;
  /** Why MAIL FROM cannot start a transaction now, or undefined. */
  mailFromRefusal(remoteAddress: string): Promise<SmtpError | undefined>;
  /** Takes a message's bytes from the client's budgets of the window and of the day: the refusal of the first that is spent. */
  chargeBytes(client: string, size: number): Promise<SmtpError | undefined>;
  /** Takes bytes that will not be stored (an oversize message's) from the same budgets. */
  chargeRead(client: string, size: number): void;
}

export function createClientLimits(opts: { trustedNetworks: readonly string[]; budget: InflightBudget; limits: SmtpLimits; storage?: StorageGate | undefined }): ClientLimits {
  const trusted = networkMatcher(opts.trustedNetworks);
  const { budget, limits, storage } = opts;
  const spentToday = (wait: number) => refusalReply('rate_limit', 452, '4.7.0', `Your address has sent its bytes for today; try again in ${wait} seconds`);
  return {
    trusted,
    async mailFromRefusal(remoteAddress) {
      const client = clientKey(remoteAddress);
      if (!trusted(remoteAddress) && budget.clientFull(client)) return refusalReply('busy', 452, ...SHARE_EXCEEDED);
      if (storage && (await storage.level()) !== 'ok') return refusalReply('busy', 452, '4.3.1', 'Insufficient storage here; try again later');
      const wait = await limits.dailyBytes?.peek(client);
      return wait ? spentToday(wait) : undefined;
    },
    async chargeBytes(client, size) {
      const [window, day] = await Promise.all([limits.bytes?.consume(client, size), limits.dailyBytes?.consume(client, size)]);
      if (window) return refusalReply('rate_limit', 452, '4.7.0', `Too many bytes from your address; try again in ${window} seconds`);
      return day ? spentToday(day) : undefined;
    },
    chargeRead(client, size) {
      void limits.bytes?.consume(client, size).catch(() => 0);
      void limits.dailyBytes?.consume(client, size).catch(() => 0);
    },
  };
}
