// What the operators' admin reads and writes through the store (a role of Store, store.ts):
// blocks, the addresses' overview and the figures of the admin's stats.
import type { AddressRecord } from './mail-rows.js';

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

/** Mails counted at delivery for one recipient domain and one sender domain (domain_mail_hours, migration 0024). */
export interface DomainMailCount {
  /** The recipient's domain, lower-cased; a subdomain of a pool domain counts under the pool domain. */
  domain: string;
  /** The envelope sender's domain, lower-cased; '' for the null sender. */
  senderDomain: string;
  /** Mails since the window's start. */
  mails: number;
  /** Of those, mails since `recentSince`. */
  recent: number;
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
  /**
   * Mails counted at delivery per recipient domain and sender domain in the hours from
   * `since` on (deletion and purge take nothing back), with how many of them came from
   * `recentSince` on; one row per pair, in no order. Reads the hourly counts, not the mails.
   */
  domainMailCounts(since: number, recentSince: number): Promise<DomainMailCount[]>;
  /** Addresses per domain (lower-cased; a subdomain of a pool domain under the pool domain, as when the address was made), in no order; counted as addresses come and go, not read from them. */
  addressesPerDomain(): Promise<{ domain: string; addresses: number }[]>;
}
