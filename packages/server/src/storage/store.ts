// The storage contract every backend implements (SQLite here; PostgreSQL behind
// the same interface): Store and its roles. The roles of the operators, of webhooks and of
// the features are declared in operator-store.ts, webhook-store.ts and feature-stores.ts,
// the rows in mail-rows.ts; all are exported from here too. Rows are storage types; the
// HTTP layer maps them to the API schemas, never sending a row as is.
import type { ParseOutcomeStore, PasswordStore, ReportSummaryStore, SandboxStore, TagStore } from './feature-stores.js';
import type { AddressRecord, AddressUsage, AttachmentReader, MailRecord, MailReader, MailSummary, NewMail, StoredAttachment } from './mail-rows.js';
import type { OperatorStore } from './operator-store.js';
import type { ParsedSearch } from './search-query.js';
import type { RefusalStore } from './refusal-store.js';
import type { TombstoneCheck, TombstoneMark, TombstoneStore } from './tombstone-store.js';
import type { DomainPoolStore } from './domain-pool-store.js';
import type { WebhookStore } from './webhook-store.js';

export type {
  AddressRecord,
  AddressUsage,
  AttachmentReader,
  MailBody,
  MailEnvelope,
  MailReader,
  MailRecord,
  MailSummary,
  NewMail,
  StoredAttachment,
} from './mail-rows.js';
export type { AddressOverview, BlockKind, BlockRecord, OperatorStore, StorageUsage } from './operator-store.js';
export { DAY_MS } from './operator-store.js';
export type { ClaimedDelivery, WebhookAttempt, WebhookMail, WebhookOutcome, WebhookRecord, WebhookRelease, WebhookStore } from './webhook-store.js';
export type { TombstoneCheck, TombstoneMark, TombstoneStore } from './tombstone-store.js';
export type { DomainPoolStore, PoolDomainChange, PoolDomainRecord, PoolDomainState } from './domain-pool-store.js';
export type { RefusalCount, RefusalStore } from './refusal-store.js';
export type { AddressPassword, ParseOutcomeStore, PasswordStore, ReportSummaryStore, SandboxRecord, SandboxStore, TagStore } from './feature-stores.js';

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

export interface PurgeResult {
  mails: number;
  addresses: number;
  sessions: number;
}

/** Addresses: created, claimed, looked up and deleted (with their mail and memberships). */
export interface AddressStore {
  /**
   * Creates an address; undefined when a live address already has that name. An
   * `unclaimed` one (made by the catch-all on first mail) can be claimed once. With
   * `tombstone`, also undefined when a tombstone of that key holds the name (checked
   * atomically with the insert: a deletion committing meanwhile is seen).
   */
  createAddress(address: string, createdAt: number, opts?: { unclaimed?: boolean; tombstone?: TombstoneCheck }): Promise<AddressRecord | undefined>;
  /** Takes an unclaimed address (once: it is claimed from then on); undefined when there is none of that name. */
  claimAddress(address: string): Promise<AddressRecord | undefined>;
  getAddress(id: number): Promise<AddressRecord | undefined>;
  findAddress(address: string): Promise<AddressRecord | undefined>;
  /**
   * Removes an address, all its mail and its session memberships; with `tombstone`, leaves
   * the address's tombstone in the same transaction (replacing an older one of that key).
   */
  deleteAddress(id: number, tombstone?: TombstoneMark): Promise<boolean>;
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
   * mail only past the sandbox's own retention counted back from `now` (when given). With
   * `tombstones`, each purged address that was claimed (not one the catch-all made and
   * nobody took) leaves its tombstone in the same transaction.
   */
  purge(cutoffs: { mailBefore: number; addressBefore: number; sessionBefore: number; now?: number; tombstones?: TombstoneMark }): Promise<PurgeResult>;
}

/**
 * Everything a backend implements: the roles above and the connection itself. A caller
 * that needs one role takes that interface (a Store is each of them).
 */
export interface Store extends AddressStore, MailStore, SessionStore, PurgeStore, OperatorStore, WebhookStore, PasswordStore, ParseOutcomeStore, ReportSummaryStore, SandboxStore, TagStore, TombstoneStore, RefusalStore, DomainPoolStore {
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
