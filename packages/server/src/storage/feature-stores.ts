// What the features store beyond addresses and their mail (roles of Store, store.ts): the
// mail.tm API's passwords, kept parse outcomes, report summaries, sandboxes and the Mailpit
// API's tags.
import type { MailSummary } from './mail-rows.js';

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
  /** A live mail of the address without its message, the degraded view kept for it and its report summary (JSON text; undefined: none). */
  getMailHead(addressId: number, uuid: string): Promise<{ mail: MailSummary; degradedView: Buffer | undefined; reportSummary: string | undefined } | undefined>;
  /** Keeps (or replaces) the JSON of a mail's degraded parsed view; it goes with the mail. Nothing for an unknown mail. */
  keepDegradedView(mailId: number, view: Buffer): Promise<void>;
}

/**
 * The report summary of a mail (docs/api.md "Deliverability report"): each section's
 * verdict and the spam score, kept with the mail once its report was built, and read by
 * getMailHead and the webhook deliveries it goes out with.
 */
export interface ReportSummaryStore {
  /**
   * Keeps `summary` (JSON text of a ReportSummary) with each of the mails that has none
   * yet (the first kept stays), and makes their webhook deliveries that wait for it
   * (NewMail.webhooksDueAt, not yet attempted) due at `now`; null keeps nothing and only
   * makes those due (no summary is coming). A mail that is gone is skipped. Resolves to how
   * many deliveries it made due.
   */
  keepReportSummary(mails: readonly { id: number; addressId: number }[], summary: string | null, now: number): Promise<number>;
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
