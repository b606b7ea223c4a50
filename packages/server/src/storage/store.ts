// The storage contract every backend implements (SQLite here; PostgreSQL behind
// the same interface). Rows are storage types; the HTTP layer maps them to the
// API schemas, never sending a row as is.
import type { ParsedSearch } from './search-query.js';

export interface AddressRecord {
  id: number;
  /** Lower-cased local@domain. */
  address: string;
  createdAt: number;
}

/**
 * One received message as stored once, however many recipients it has: the bytes
 * as received and the decoded attachments its metadata lists (in that order), so
 * that a download never parses the message again.
 */
export interface MailBody {
  raw: Buffer;
  attachments: readonly Buffer[];
}

export interface NewMail {
  uuid: string;
  addressId: number;
  address: string;
  source: string;
  messageId: string;
  /** JSON text of MailMetadata. */
  metadata: string;
  /** This recipient's Received: line; the stored raw message is trace + body.raw. */
  trace: Buffer;
  /** Shared by the mails of one delivery: stored once per insertMails call (by identity). */
  body: MailBody;
  createdAt: number;
  /** What searchMails finds the mail by (subject, people, decoded text); none: found by nothing. */
  searchText?: string;
  /** Queue a delivery to the operator's WEBHOOK_URL too (the address's own webhook, if any, is always queued). */
  operatorWebhook?: boolean;
  /** The SMTP envelope, kept for a sandbox's mail (one mail for every recipient). */
  envelope?: MailEnvelope;
}

/** MAIL FROM ('' for the null sender) and every RCPT TO of a message a sandbox captured. */
export interface MailEnvelope {
  from: string;
  to: string[];
}

export interface MailSummary {
  id: number;
  uuid: string;
  source: string;
  address: string;
  metadata: string;
  messageId: string;
  createdAt: number;
  /** Marked read (setSeen); false when it is stored. */
  seen: boolean;
  /** Set for a sandbox's mail only (NewMail.envelope). */
  envelope?: MailEnvelope;
}

export interface MailRecord extends MailSummary {
  raw: Buffer;
}

/** A live mail with its raw message to read a piece at a time, so that a large message is never held whole. */
export interface MailReader extends MailSummary {
  /** The raw message's size in bytes. */
  bytes: number;
  /**
   * The raw message's pieces in order, each read from the store when asked for (a part,
   * storage/parts.ts); may be called again to read them again. Throws PartsGoneError when
   * the mail is purged while it is read.
   */
  pieces(): AsyncIterable<Buffer>;
}

export interface SessionRecord {
  id: string;
  activeAddressId: number | null;
  /** When the session was created or last renewed (adding an address or rotating renews it). */
  createdAt: number;
}

export interface SessionAddressRecord {
  addressId: number;
  address: string;
  createdAt: number;
}

/** What an address's live mail takes, for its quota. */
export interface AddressUsage {
  count: number;
  bytes: number;
}

/** A live mail's metadata and one attachment's decoded bytes (null when it has no such attachment). */
export interface StoredAttachment {
  metadata: string;
  content: Buffer | null;
  /** Stored before attachments were kept at delivery: content is null, parse the raw message instead. */
  legacy: boolean;
}

/** A stored attachment to read a piece at a time (Store.openAttachment). */
export interface AttachmentReader {
  metadata: string;
  /** As StoredAttachment's: stored before attachments were kept (no bytes: parse the raw message instead). */
  legacy: boolean;
  /** The decoded bytes' size; null when none are stored (legacy, or no attachment of that index). */
  bytes: number | null;
  /** The bytes' pieces in order, each read when asked for; throws PartsGoneError when the mail is purged meanwhile. */
  pieces(): AsyncIterable<Buffer>;
}

export interface PurgeResult {
  mails: number;
  addresses: number;
  sessions: number;
}

/** What an operator's block refuses at SMTP MAIL FROM (docs/decisions.md "Blocks"). */
export type BlockKind = 'sender' | 'domain' | 'ip';

export interface BlockRecord {
  id: number;
  kind: BlockKind;
  /** Normalised (blocks/rules.ts): lower-cased; an IP range as network address and prefix length. */
  value: string;
  note: string;
  createdAt: number;
}

/** An address as the admin lists it: with its live mail's count, size and newest arrival. */
export interface AddressOverview extends AddressRecord {
  unclaimed: boolean;
  mails: number;
  bytes: number;
  /** created_at of its newest live mail; null when it has none. */
  lastMailAt: number | null;
}

export interface StorageUsage {
  addresses: number;
  /** Live mails and their size (as the quota counts it). */
  mails: number;
  mailBytes: number;
  /** What the database takes on disk (SQLite: its pages; PostgreSQL: the schema's tables with their indexes). */
  databaseBytes: number;
}

/** Milliseconds in a UTC day: mail is counted per day number floor(created_at / DAY_MS). */
export const DAY_MS = 86_400_000;

/** What the operators' admin reads and writes (docs/decisions.md "Admin"). */
export interface OperatorStore {
  /** Addresses whose name contains `contains` (lower-case; '' = all), newest first (by id), and how many match. */
  listAddresses(contains: string, limit: number, offset: number): Promise<{ results: AddressOverview[]; count: number }>;
  /** Adds a block; undefined when one of that kind and value exists. */
  addBlock(block: { kind: BlockKind; value: string; note: string; createdAt: number }): Promise<BlockRecord | undefined>;
  /** Every block, newest first. */
  listBlocks(): Promise<BlockRecord[]>;
  deleteBlock(id: number): Promise<boolean>;
  /**
   * A token that changes whenever a block is added or removed (by any process), cheaper
   * to read than the list: each node compares it before reloading the list.
   */
  blocksVersion(): Promise<string>;
  /**
   * Mails stored per UTC day (day number = floor(createdAt / DAY_MS)) from `fromDay` on,
   * counted by insertMails, so neither deletion nor purge takes them back; days without
   * mail are absent. Oldest first.
   */
  mailsPerDay(fromDay: number): Promise<{ day: number; mails: number }[]>;
  /** The envelope senders of the most mail stored since `since` (deleted or not, until purged), most first, ties by sender. */
  topSenders(since: number, limit: number): Promise<{ sender: string; mails: number }[]>;
  storageUsage(): Promise<StorageUsage>;
}

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

/** The fields of a mail a webhook delivery carries (the list item's). */
export type WebhookMail = Pick<MailSummary, 'id' | 'uuid' | 'source' | 'address' | 'metadata' | 'messageId' | 'createdAt' | 'envelope'>;

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

/** A password of an address, for the mail.tm-compatible API (docs/decisions.md "mail.tm accounts"). */
export interface AddressPassword {
  /** The encoded slow hash (domain/passwords.ts), never the password. */
  hash: string;
  /** When it was set. */
  updatedAt: number;
}

/** What the mail.tm-compatible API stores beyond an address: its password. */
export interface PasswordStore {
  /** Sets (or replaces) the address's password hash; false when there is no such address. It goes with the address. */
  setAddressPassword(addressId: number, hash: string, at: number): Promise<boolean>;
  getAddressPassword(addressId: number): Promise<AddressPassword | undefined>;
}

/**
 * The outcome of a parse of a stored mail that could read only its header block (out of
 * its budget, or refused by the parser): kept with the mail, so that such a mail is never
 * parsed again for its parsed view, on any node (docs/decisions.md "Parsed mail").
 */
export interface ParseOutcomeStore {
  /** A live mail of the address without its message, and the degraded view kept for it (undefined: none). */
  getMailHead(addressId: number, uuid: string): Promise<{ mail: MailSummary; degradedView: Buffer | undefined } | undefined>;
  /** Keeps (or replaces) the JSON of a mail's degraded parsed view; it goes with the mail. Nothing for an unknown mail. */
  keepDegradedView(mailId: number, view: Buffer): Promise<void>;
}

/** A sandbox as stored (docs/decisions.md "Sandboxes"): an SMTP login and the address that holds its mail. */
export interface SandboxRecord {
  id: number;
  name: string;
  /** The encoded slow hash (domain/passwords.ts), never the password. */
  passwordHash: string;
  addressId: number;
  address: string;
  maxMails: number;
  maxBytes: number;
  retentionMs: number;
  /** JSON text of its chaos settings ('{}': none). */
  chaos: string;
  createdAt: number;
  updatedAt: number;
}

/** What the sandboxes feature stores: each sandbox goes with its address (deleting the address deletes it). */
export interface SandboxStore {
  /**
   * Creates the sandbox with its address (`address`, created when missing), or, when one of
   * that name exists, sets its password hash and limits; in one transaction.
   */
  putSandbox(input: { name: string; address: string; passwordHash: string; maxMails: number; maxBytes: number; retentionMs: number; at: number }): Promise<SandboxRecord>;
  getSandbox(id: number): Promise<SandboxRecord | undefined>;
  findSandbox(name: string): Promise<SandboxRecord | undefined>;
  /** Every sandbox, by name. */
  listSandboxes(): Promise<SandboxRecord[]>;
  countSandboxes(): Promise<number>;
  setSandboxPassword(id: number, passwordHash: string, at: number): Promise<boolean>;
  setSandboxChaos(id: number, chaos: string, at: number): Promise<SandboxRecord | undefined>;
  /**
   * Soft-deletes the oldest live mails of the address until at most `maxMails` remain and
   * they take at most `maxBytes` (0: no limit), never the newest; resolves to their uuids.
   */
  trimMails(addressId: number, maxMails: number, maxBytes: number): Promise<string[]>;
}

/** Tags of mails (the Mailpit-compatible API's tags): a mail's tags go with it; only live mail is tagged or listed. */
export interface TagStore {
  /** Replaces the tags of those of `uuids` that are live mails of the address; resolves to how many were. */
  setMailTags(addressId: number, uuids: string[], tags: string[]): Promise<number>;
  /** The tags of the address's mails `mailIds` (by id; a mail without tags is absent), each list in order. */
  mailTags(addressId: number, mailIds: number[]): Promise<Map<number, string[]>>;
  /** Every tag of the address's live mail, in order, with how many of its mails have it. */
  listTags(addressId: number): Promise<{ tag: string; mails: number }[]>;
  /** Renames a tag on every mail of the address that has it; resolves to how many had it. */
  renameTag(addressId: number, from: string, to: string): Promise<number>;
  /** Removes a tag from every mail of the address (the mails stay); resolves to how many had it. */
  deleteTag(addressId: number, tag: string): Promise<number>;
}

/** Addresses: created, claimed, looked up and deleted (with their mail and memberships). */
export interface AddressStore {
  /**
   * Creates an address; undefined when a live address already has that name. An
   * `unclaimed` one (made by the catch-all on first mail) can be claimed once.
   */
  createAddress(address: string, createdAt: number, opts?: { unclaimed?: boolean }): Promise<AddressRecord | undefined>;
  /** Takes an unclaimed address (once: it is claimed from then on); undefined when there is none of that name. */
  claimAddress(address: string): Promise<AddressRecord | undefined>;
  getAddress(id: number): Promise<AddressRecord | undefined>;
  findAddress(address: string): Promise<AddressRecord | undefined>;
  /** Removes an address, all its mail and its session memberships. */
  deleteAddress(id: number): Promise<boolean>;
}

/** The mail of addresses: stored (with its webhook deliveries), listed, searched, read and deleted. */
export interface MailStore {
  /**
   * Stores the mails in one transaction and resolves with their ids after it commits.
   * One address's mails commit in increasing id order, whoever delivers them, so
   * "newer than the largest id seen" never skips a mail.
   */
  insertMails(mails: NewMail[]): Promise<number[]>;
  /**
   * How many webhook deliveries insertMails has queued through this store so far (a counter that
   * only grows; a transaction rolled back may have counted). The mail service wakes the
   * dispatcher after a delivery only when it moved: most mail has no webhook, and looking
   * at the outbox after each cost about 2% of the server's thread.
   */
  deliveriesQueued(): number;
  /** Live mails, newest first (ties by id), and the total count of live mails. */
  listMails(addressId: number, limit: number, offset: number): Promise<{ results: MailSummary[]; count: number }>;
  getMail(addressId: number, uuid: string): Promise<MailRecord | undefined>;
  /** The mail as getMail finds it, its raw message left in the store to be read a part at a time. */
  openMail(addressId: number, uuid: string): Promise<MailReader | undefined>;
  /**
   * Live mails of the address that match every term of `query` (storage/search-query.ts:
   * words of the search text, fields of the mail; a string is parsed first, and bad
   * syntax is a bad_request AppError), newest first, and their count. A search past
   * its time budget is an unavailable AppError.
   */
  searchMails(addressId: number, query: ParsedSearch | string, limit: number, offset: number): Promise<{ results: MailSummary[]; count: number }>;
  /** Attachment `index` of a live mail; undefined when there is no such live mail of the address. */
  getAttachment(addressId: number, uuid: string, index: number): Promise<StoredAttachment | undefined>;
  /** The attachment as getAttachment finds it, its bytes left in the store to be read a part at a time. */
  openAttachment(addressId: number, uuid: string, index: number): Promise<AttachmentReader | undefined>;
  /** Count and raw bytes of the address's live mail. */
  addressUsage(addressId: number): Promise<AddressUsage>;
  softDeleteMail(addressId: number, uuid: string): Promise<boolean>;
  /**
   * Marks a live mail of the address read (true) or unread (false) and returns it as it
   * is now; undefined when the address has no such live mail (another address's uuid included).
   */
  setSeen(addressId: number, uuid: string, seen: boolean): Promise<MailSummary | undefined>;
  clearMails(addressId: number): Promise<number>;
}

/** Browser sessions and the addresses each holds. */
export interface SessionStore {
  createSession(id: string, createdAt: number): Promise<void>;
  getSession(id: string): Promise<SessionRecord | undefined>;
  /**
   * Adds an address to a session, makes it active and renews the session (createdAt = addedAt).
   * When the session then holds more than `max` addresses, the oldest memberships are dropped.
   */
  addSessionAddress(sessionId: string, addressId: number, addedAt: number, max: number): Promise<void>;
  listSessionAddresses(sessionId: string): Promise<SessionAddressRecord[]>;
  /** Moves a session to a new id (the old one stops existing), sets its active address and renews it. */
  rotateSession(oldId: string, newId: string, activeAddressId: number, renewedAt: number): Promise<boolean>;
  deleteSession(id: string): Promise<boolean>;
}

/** Retention: what is past its time is removed. */
export interface PurgeStore {
  /**
   * Purges mail created before mailBefore, addresses created before addressBefore, soft-deleted
   * mail and sessions older than sessionBefore. A sandbox's address is never purged, and its
   * mail only past the sandbox's own retention counted back from `now` (when given).
   */
  purge(cutoffs: { mailBefore: number; addressBefore: number; sessionBefore: number; now?: number }): Promise<PurgeResult>;
}

/**
 * Everything a backend implements: the roles above and the connection itself. A caller
 * that needs one role takes that interface (a Store is each of them).
 */
export interface Store extends AddressStore, MailStore, SessionStore, PurgeStore, OperatorStore, WebhookStore, PasswordStore, ParseOutcomeStore, SandboxStore, TagStore {
  readonly kind: string;

  /**
   * A number that changes whenever another connection (another process) has
   * committed to the database since the last call, read cheaply; undefined when
   * the backend cannot tell (several nodes share it), and then no response built
   * from stored mail may be reused.
   */
  externalWriteMark(): number | undefined;

  /** Throws when the database does not answer. */
  ping(): Promise<void>;
  close(): Promise<void>;
}
