// The mail service: addresses, delivery and reading. It knows nothing of SMTP or
// HTTP; both call it, and its errors are domain errors (domain/errors.ts).
import { notFound } from '../domain/errors.js';
import type { NamePolicy } from '../domain/names.js';
import { isSandboxAddress } from '../domain/sandboxes.js';
import type { Tombstones } from '../domain/tombstones.js';
import type { AttachmentPolicy } from './attachment-policy.js';
import type { DomainPool } from './domain-pool.js';
import type { SpamCheck } from './spam-check.js';
import { REFUSALS_KEPT_MS } from './refusal-counts.js';
import type { Tokens } from '../domain/tokens.js';
import type { AddressRecord, MailReader, MailRecord, MailSummary, PurgeResult } from '../storage/store.js';
import type { ParsedSearch } from '../storage/search-query.js';
import type { VersionedStore } from '../storage/caching-store.js';
import type { BlockList, BlockMatch } from '../blocks/block-list.js';
import { createAddressBook, type AuthenticatedAddress, type NewAddressRequest, type Recipient } from './addresses.js';
import { createAttachmentReader, type AttachmentStream, type DecodedAttachment } from './attachments.js';
import { createDelivery, type ArrivedMessage, type DeliveredMail, type Envelope } from './delivery.js';
import type { EventBus } from './events/events.js';
import type { MailAuthenticator } from './auth/auth.js';
import type { MessageParser } from './parse/parse.js';
import { createParsedViews, type ParsedMailView, type ParsedViewLimits } from './parse/parsed-views.js';

export type { AuthenticatedAddress, Recipient } from './addresses.js';
export type { AttachmentStream, DecodedAttachment } from './attachments.js';
export type { ArrivedMessage, DeliveredMail, Envelope } from './delivery.js';
export type { ParsedMailView } from './parse/parsed-views.js';

export interface MailServiceOptions {
  /** Address look-ups and mail-set versions come from it (storage/caching-store.ts). */
  store: VersionedStore;
  tokens: Tokens;
  names: NamePolicy;
  /** The domain pool (domain-pool.ts): where new addresses go, which domains take mail. */
  pool: DomainPool;
  mailTtlMs: number;
  addressTtlMs: number;
  /** Sessions live as long as their cookie. */
  sessionTtlMs: number;
  /** What attachments a delivered message may carry (ATTACHMENT_*; mail/attachment-policy.ts); absent: any. */
  attachmentPolicy?: AttachmentPolicy;
  /**
   * A deleted or expired address leaves a tombstone and its name is not given out again
   * (ADDRESS_TOMBSTONE_TTL; docs/decisions.md "Deleted address"); absent: names are free again.
   */
  tombstones?: Tombstones;
  /** The random names new addresses are given (domain/names.ts by default); tests give their own. */
  randomName?: (() => string) | undefined;
  /** SPAM_REFUSE_SCORE with a scanner (spam-check.ts): mail scoring at or over it is refused at DATA. Absent: none is. */
  spamCheck?: SpamCheck | undefined;
  /** Parses each message off the event loop, within a time budget. */
  parser: MessageParser;
  /** Parsed views waiting or parsing at once, per client and in all (PARSE_VIEWS_PER_CLIENT, PARSE_VIEWS_WAITING). */
  parsedViews?: ParsedViewLimits;
  /** A parse outcome that could not be kept (mail/parse/parsed-views.ts). */
  onKeepError?: (err: unknown) => void;
  /** SPF, DKIM, DMARC and ARC verdicts of each message, off the event loop (AUTH_CHECKS; absent: none are stored). */
  authenticator?: MailAuthenticator | undefined;
  /** Longest token verified at all (a longer one is refused unread); default 4096. */
  tokenMaxLength?: number;
  /** Per-address quota: live mails and their bytes; 0 = no limit. */
  quota?: { maxMails: number; maxBytes: number };
  /** Where changes to an address's mail are announced (push and long-poll). */
  bus?: EventBus;
  /** name+tag@domain reaches name@domain (default true). */
  plusAddressing?: boolean;
  /** Mail to any allowed name at the domains creates that address, unclaimed (default false). */
  catchAll?: boolean;
  /** The operators' blocks of senders, domains and client IPs (docs/decisions.md "Blocks"). */
  blocks?: BlockList;
  /**
   * Webhook deliveries (docs/decisions.md "Webhooks"): the store queues one for each mail
   * whose address has a webhook, and for every mail with `operator` (WEBHOOK_URL), in the
   * mail's own transaction; `queued` is called after a commit that queued some, to send them at once.
   */
  outbox?: { operator: boolean; queued: () => void };
  /**
   * Reports built after arrival (SPAM_SCANNER; report/arrival.ts): each stored message is
   * handed over after its commit, before deliver() resolves, and `arrived` only queues it
   * (nothing of it runs before the 250). Its webhook deliveries are first due
   * `webhookWaitMs` after the arrival, sooner once its report summary is kept.
   */
  arrivals?: { webhookWaitMs: number; arrived(message: ArrivedMessage): void };
  now?: () => number;
}

/** The mail service as SMTP, HTTP and the features call it: addresses, delivery, reading and the sweep. */
export interface MailService {
  /** The domain pool new addresses and mail go through. */
  readonly domains: DomainPool;
  createAddress(req: NewAddressRequest): Promise<{ address: AddressRecord; jwt: string }>;
  authenticate(jwt: string): Promise<AuthenticatedAddress>;
  resolveRecipient(address: string): Promise<Recipient | undefined>;
  deliver(env: Envelope): Promise<DeliveredMail[]>;
  /**
   * Starts the threads a delivery needs (the parser's, the checks'), if nothing has yet: an
   * SMTP client connected. They start with the first task otherwise, so a server never sent
   * mail never spends their start (about 100 ms of CPU each).
   */
  warm(): void;
  getMail(addressId: number, uuid: string): Promise<MailRecord>;
  /** The mail with its raw message left in the store, to be read a part at a time (a large answer never holds it whole). */
  openMail(addressId: number, uuid: string): Promise<MailReader>;
  /** The parsed view of a mail; `client`: who asks (an IPv4 address, an IPv6 /64), for the per-client limits. */
  readParsed(addressId: number, uuid: string, client: string): Promise<ParsedMailView>;
  /** Views the parser was given so far (a counter that only grows). */
  viewParses(): number;
  /** Parsed views waiting or parsing now. */
  viewsOpen(): number;
  tokenFor(a: AddressRecord): Promise<string>;
  /** The operator's block that refuses mail from this client address and envelope sender ('' = null sender), if any: SMTP answers 550 5.7.1. */
  blockedSender(ip: string, sender: string): Promise<BlockMatch | undefined>;
  /**
   * Deletes an address with its mail; it leaves a tombstone unless `opts.tombstone` is false
   * (an address never handed out, such as one whose creation failed half-way) or it is a sandbox's.
   */
  deleteAddress(addressId: number, opts?: { tombstone?: boolean }): Promise<boolean>;
  /** Removes the tombstone of `address` (its name is free again), or every tombstone when omitted; how many went. */
  purgeTombstones(address?: string): Promise<number>;
  listMails(addressId: number, limit: number, offset: number): Promise<{ results: MailSummary[]; count: number }>;
  /** The address's live mail that matches every term of `query` (docs/api.md "GET /api/mails/search"; a string is parsed, bad syntax is a 400). */
  searchMails(addressId: number, query: string | ParsedSearch, limit: number, offset: number): Promise<{ results: MailSummary[]; count: number }>;
  deleteMail(addressId: number, uuid: string): Promise<void>;
  /** Marks a live mail of the address read or unread (docs/decisions.md "Seen"); another address's mail is not found. */
  setSeen(addressId: number, uuid: string, seen: boolean): Promise<MailSummary>;
  clearInbox(addressId: number): Promise<number>;
  /** Whether the address is under its quota (a message that crosses it is still taken: RCPT cannot know its size). */
  hasRoom(recipient: Recipient): Promise<boolean>;
  /** One attachment as its metadata lists it, from the bytes kept at delivery (never a parse of the message). */
  openAttachment(addressId: number, uuid: string, attachmentId: string): Promise<AttachmentStream>;
  getAttachment(addressId: number, uuid: string, attachmentId: string): Promise<DecodedAttachment>;
  /** Retention sweep (docs/decisions.md "Retention"). */
  sweep(): Promise<PurgeResult>;
}

export function createMailService(opts: MailServiceOptions): MailService {
  const { store, tokens, parser } = opts;
  const now = opts.now ?? Date.now;
  const bus = opts.bus;
  const addresses = createAddressBook({ ...opts, now });
  const { createAddress, authenticate, resolveRecipient } = addresses;
  const deliver = createDelivery({ ...opts, now, createPending: addresses.createPending });
  const { openAttachment, getAttachment } = createAttachmentReader({ store, parser });

  async function getMail(addressId: number, uuid: string): Promise<MailRecord> {
    const mail = await store.getMail(addressId, uuid);
    if (!mail) throw notFound('No such mail.');
    return mail;
  }

  // A mail parsed again, in a worker within the parse budget, or its kept degraded view (docs/decisions.md "Parsed mail").
  const parsedViews = createParsedViews({
    store,
    parser,
    limits: opts.parsedViews ?? { perClient: 4, total: 64 },
    ...(opts.onKeepError ? { onKeepError: opts.onKeepError } : {}),
  });

  /** What deleting the address leaves: a tombstone, but for a sandbox's address (its name is the sandbox's to reuse). */
  async function tombstoneFor(addressId: number) {
    const record = await store.getAddress(addressId);
    return record && !isSandboxAddress(record.address) ? opts.tombstones?.mark(now()) : undefined;
  }

  return {
    domains: opts.pool,
    createAddress,
    authenticate,
    resolveRecipient,
    warm() {
      parser.warm();
      opts.authenticator?.warm();
    },
    deliver,
    getMail,
    /** The mail with its raw message left in the store, to be read a part at a time (a large answer never holds it whole). */
    async openMail(addressId: number, uuid: string): Promise<MailReader> {
      const mail = await store.openMail(addressId, uuid);
      if (!mail) throw notFound('No such mail.');
      return mail;
    },
    /** The parsed view of a mail; `client`: who asks (an IPv4 address, an IPv6 /64), for the per-client limits. */
    readParsed: (addressId: number, uuid: string, client: string) => parsedViews.read(addressId, uuid, client),
    /** Views the parser was given so far (a counter that only grows). */
    viewParses: () => parser.viewParses(),
    /** Parsed views waiting or parsing now. */
    viewsOpen: () => parsedViews.open(),
    tokenFor: (a: AddressRecord) => tokens.sign({ address: a.address, addressId: a.id }, now()),
    /** The operator's block that refuses mail from this client address and envelope sender ('' = null sender), if any: SMTP answers 550 5.7.1. */
    blockedSender: async (ip: string, sender: string) => opts.blocks?.match(ip, sender),
    async deleteAddress(addressId: number, del: { tombstone?: boolean } = {}): Promise<boolean> {
      const mark = opts.tombstones && del.tombstone !== false ? await tombstoneFor(addressId) : undefined;
      const deleted = await store.deleteAddress(addressId, mark);
      if (deleted) bus?.publish(addressId, { type: 'address_deleted' });
      return deleted;
    },
    async purgeTombstones(address?: string): Promise<number> {
      if (address === undefined) return store.purgeTombstones({});
      return opts.tombstones ? store.purgeTombstones({ key: opts.tombstones.keyOf(address) }) : 0;
    },
    // An offset past any possible count is just an empty page; capped so that 1e20
    // never reaches a 64-bit SQL OFFSET (where it is a database error, not a 400).
    listMails: (addressId: number, limit: number, offset: number): Promise<{ results: MailSummary[]; count: number }> =>
      store.listMails(addressId, limit, Math.min(offset, Number.MAX_SAFE_INTEGER)),
    /** The address's live mail that matches every term of `query` (docs/api.md "GET /api/mails/search"; a string is parsed, bad syntax is a 400). */
    searchMails: (addressId: number, query: ParsedSearch | string, limit: number, offset: number): Promise<{ results: MailSummary[]; count: number }> =>
      store.searchMails(addressId, query, limit, Math.min(offset, Number.MAX_SAFE_INTEGER)),
    async deleteMail(addressId: number, uuid: string): Promise<void> {
      const deleted = await store.softDeleteMail(addressId, uuid);
      if (!deleted) throw notFound('No such mail.');
      bus?.publish(addressId, { type: 'mail_deleted', uuid });
    },
    /** Marks a live mail of the address read or unread (docs/decisions.md "Seen"); another address's mail is not found. */
    async setSeen(addressId: number, uuid: string, seen: boolean): Promise<MailSummary> {
      const mail = await store.setSeen(addressId, uuid, seen);
      if (!mail) throw notFound('No such mail.');
      bus?.publish(addressId, { type: 'mail_seen', uuid, seen, mail });
      return mail;
    },
    async clearInbox(addressId: number): Promise<number> {
      const cleared = await store.clearMails(addressId);
      bus?.publish(addressId, { type: 'inbox_cleared' });
      return cleared;
    },
    /** Whether the address is under its quota (a message that crosses it is still taken: RCPT cannot know its size). */
    async hasRoom(recipient: Recipient): Promise<boolean> {
      const quota = opts.quota;
      if (recipient.pending) return true;
      if (!quota || (quota.maxMails === 0 && quota.maxBytes === 0)) return true;
      const usage = await store.addressUsage(recipient.id);
      return (quota.maxMails === 0 || usage.count < quota.maxMails) && (quota.maxBytes === 0 || usage.bytes < quota.maxBytes);
    },
    /** One attachment as its metadata lists it, from the bytes kept at delivery (never a parse of the message). */
    openAttachment,
    getAttachment,
    /** Retention sweep (docs/decisions.md "Retention"). */
    async sweep(): Promise<PurgeResult> {
      const t = now();
      const tombstones = opts.tombstones?.mark(t);
      // Tombstones past ADDRESS_TOMBSTONE_TTL hold nothing any more: they go too.
      const expired = opts.tombstones?.expiredBefore(t);
      if (expired !== undefined) await store.purgeTombstones({ before: expired });
      const purged = await store.purge({ mailBefore: t - opts.mailTtlMs, addressBefore: t - opts.addressTtlMs, sessionBefore: t - opts.sessionTtlMs, now: t, ...(tombstones ? { tombstones } : {}) });
      // Hourly refusal counts past the longest window the admin reads.
      await store.purgeRefusals(t - REFUSALS_KEPT_MS);
      return purged;
    },
  };
}
