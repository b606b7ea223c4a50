// The mail service: addresses, delivery and reading. It knows nothing of SMTP or
// HTTP; both call it, and its errors are domain errors (domain/errors.ts).
import { randomFillSync } from 'node:crypto';
import { v7 as uuidv7 } from 'uuid';
import { LRUCache } from 'lru-cache';
import { conflict, notFound, unauthorized } from '../domain/errors.js';
import { normalizeDomain, normalizeName, randomName, splitAddress, type NamePolicy } from '../domain/names.js';
import type { Tokens } from '../domain/tokens.js';
import type { MailMetadata } from '@temp-inbox/api';
import type { AddressRecord, MailBody, MailRecord, MailSummary, PurgeResult, Store } from '../storage/store.js';
import type { EventBus } from './events.js';
import type { MessageParser } from './parse.js';
import type { MessageBuffer } from './message-buffer.js';
import { receivedHeader, type ReceivedTrace } from './received.js';

/** An address mail can be delivered to, as resolveRecipient found it. */
export type Recipient = AddressRecord;

export interface DecodedAttachment {
  filename: string;
  contentType: string;
  content: Buffer;
}

export interface Envelope {
  /** MAIL FROM; empty string for the null sender <>. */
  sender: string;
  recipients: Recipient[];
  /** The message as received (joined once, behind the Received: line). */
  message: MessageBuffer;
  trace: Omit<ReceivedTrace, 'recipient' | 'id' | 'date'>;
}

export interface AuthenticatedAddress extends AddressRecord {
  /**
   * A token that changes whenever the live mail of this address may have changed
   * (delivery, deletion, sweep, another process's write), read when the request
   * was authenticated; undefined when the store cannot tell, and then nothing
   * built from its mail may be reused.
   */
  mailSetVersion: string | undefined;
}

export interface DeliveredMail {
  addressId: number;
  uuid: string;
}

export interface MailServiceOptions {
  store: Store;
  tokens: Tokens;
  names: NamePolicy;
  mailTtlMs: number;
  addressTtlMs: number;
  /** Sessions live as long as their cookie. */
  sessionTtlMs: number;
  /** Parses each message off the event loop, within a time budget. */
  parser: MessageParser;
  /** Longest token verified at all (a longer one is refused unread); default 4096. */
  tokenMaxLength?: number;
  /** Per-address quota: live mails and their bytes; 0 = no limit. */
  quota?: { maxMails: number; maxBytes: number };
  /** Where changes to an address's mail are announced (push and long-poll). */
  bus?: EventBus;
  now?: () => number;
}

export type MailService = ReturnType<typeof createMailService>;

const MAX_RANDOM_ATTEMPTS = 8;
/** RFC 5321 §4.5.3.1.3: a path is at most 256 octets; longer is cut, not refused. */
const MAX_SOURCE_CHARS = 256;
/** RFC 5322 §2.1.1: a header line is at most 998 characters. */
const MAX_MESSAGE_ID_CHARS = 998;

// uuid's v7() draws 16 bytes from WebCrypto on every call (2-3 µs each, a few per
// cent of a delivery); its `random` option takes them from this pool instead, filled
// 4 KiB at a time. Within one millisecond the order of such uuids is random rather
// than monotonic, which the uuid index does not need: only the time prefix must grow.
const RANDOM_POOL_BYTES = 4096;
let randomPool = Buffer.alloc(0);
let randomAt = 0;
function timeOrderedUuid(): string {
  if (randomAt + 16 > randomPool.length) {
    randomPool = randomFillSync(Buffer.allocUnsafe(RANDOM_POOL_BYTES));
    randomAt = 0;
  }
  const random = randomPool.subarray(randomAt, (randomAt += 16));
  return uuidv7({ random });
}

export function createMailService(opts: MailServiceOptions) {
  const { store, tokens, names, parser } = opts;
  const now = opts.now ?? Date.now;
  const bus = opts.bus;

  // Mail-set versions, for reusing responses built from stored mail: a per-address
  // counter bumped by every change this process makes to that address's mail, and
  // an epoch bumped by every sweep that purged something. Changes made by another
  // process show in the store's external write mark.
  const versions = new Map<number, number>();
  let epoch = 0;
  const bump = (addressId: number) => versions.set(addressId, (versions.get(addressId) ?? 0) + 1);

  async function createAddress(req: { name?: string | undefined; domain?: string | undefined }): Promise<{ address: AddressRecord; jwt: string }> {
    const domain = normalizeDomain(req.domain, names);
    let record: AddressRecord | undefined;
    if (req.name !== undefined) {
      const local = normalizeName(req.name, names);
      record = await store.createAddress(`${local}@${domain}`, now());
      if (!record) throw conflict('That address is already taken; choose another name or omit "name" for a random one.');
    } else {
      for (let i = 0; i < MAX_RANDOM_ATTEMPTS && !record; i++) record = await store.createAddress(`${randomName()}@${domain}`, now());
      if (!record) throw conflict('Could not find a free random name; try again.');
    }
    return { address: record, jwt: await tokens.sign({ address: record.address, addressId: record.id }) };
  }

  // Addresses recently authenticated, each with the mail-set version it was read
  // at: deleting an address bumps that version, so an entry is valid while it holds.
  const knownAddresses = new LRUCache<number, { record: AddressRecord; version: string }>({
    max: 10_000,
    ttl: 2 * 60_000, // idle entries go; a polling client keeps its own
    updateAgeOnGet: true,
    ttlResolution: 1000, // see tokens.ts
  });
  let knownAddressSets = 0;

  // Recipients recently resolved, by address, each with the address version it was
  // read at: a counter bumped only when this process deletes the address, the sweep
  // epoch and the store's external write mark (deliveries leave it alone, so a busy
  // inbox keeps its entry). A miss is never remembered: an address may appear at any time.
  const deletions = new Map<number, number>();
  let deletionsTotal = 0;
  const recipients = new LRUCache<string, { record: AddressRecord; version: string }>({
    max: 10_000,
    ttl: 2 * 60_000,
    updateAgeOnGet: true,
    ttlResolution: 1000, // see tokens.ts
  });
  let recipientSets = 0;
  function addressVersion(addressId: number): string | undefined {
    const mark = store.externalWriteMark();
    return mark === undefined ? undefined : `${mark}.${epoch}.${deletions.get(addressId) ?? 0}`;
  }

  function mailSetVersion(addressId: number): string | undefined {
    const mark = store.externalWriteMark();
    return mark === undefined ? undefined : `${mark}.${epoch}.${versions.get(addressId) ?? 0}`;
  }

  /** Resolves a JWT to its live address; a deleted or recreated address's token is refused. */
  async function authenticate(jwt: string): Promise<AuthenticatedAddress> {
    if (jwt.length > (opts.tokenMaxLength ?? 4096)) throw unauthorized('Invalid or expired token.');
    const claims = await tokens.verify(jwt, now());
    if (!claims) throw unauthorized('Invalid or expired token.');
    // Read before the address and before any query made for this request.
    const version = mailSetVersion(claims.addressId);
    const known = knownAddresses.get(claims.addressId);
    let record: AddressRecord | undefined;
    if (known && version !== undefined && known.version === version) record = known.record;
    else {
      record = await store.getAddress(claims.addressId);
      knownAddresses.delete(claims.addressId);
      if (record && version !== undefined) {
        knownAddresses.set(record.id, { record, version });
        // Idle entries are dropped now and then rather than by a timer per entry.
        if (++knownAddressSets % 1024 === 0) knownAddresses.purgeStale();
      }
    }
    if (!record || record.address !== claims.address || now() - record.createdAt > opts.addressTtlMs) throw unauthorized('This address no longer exists.');
    return { ...record, mailSetVersion: version };
  }

  /** The live address mail to `address` is delivered to, or undefined (RFC 5321 §3.3: refuse at RCPT). */
  async function resolveRecipient(address: string): Promise<AddressRecord | undefined> {
    const parts = splitAddress(address);
    if (!parts || !names.domains.includes(parts.domain)) return undefined;
    const name = `${parts.local}@${parts.domain}`;
    const known = recipients.get(name);
    let record: AddressRecord | undefined;
    if (known && known.version === addressVersion(known.record.id)) record = known.record;
    else {
      // Read before the look-up: a deletion or sweep that lands during it leaves nothing remembered.
      const mark = store.externalWriteMark();
      const startEpoch = epoch;
      const startDeletions = deletionsTotal;
      record = await store.findAddress(name);
      recipients.delete(name);
      if (record && mark !== undefined && startEpoch === epoch && startDeletions === deletionsTotal) {
        recipients.set(name, { record, version: `${mark}.${startEpoch}.${deletions.get(record.id) ?? 0}` });
        if (++recipientSets % 1024 === 0) recipients.purgeStale();
      }
    }
    return record && now() - record.createdAt <= opts.addressTtlMs ? record : undefined;
  }

  async function deliver(env: Envelope): Promise<DeliveredMail[]> {
    const createdAt = now();
    // Time-ordered (RFC 9562 version 7): each insert appends to the uuid index
    // instead of touching a random page of it, which keeps ingest fast in a large store.
    const uuids = env.recipients.map(() => timeOrderedUuid());
    // The random tail of the uuid (its head is the time) names the delivery in Received:.
    const traceFor = (i: number) =>
      receivedHeader({ ...env.trace, recipient: env.recipients[i]!.address, id: uuids[i]!.slice(-8), date: new Date(createdAt) });
    const raw = env.message.take();
    // Parsed once per message, in a worker; stored once, however many recipients it has.
    const parsed = await parser.parse(raw);
    // Bounded like the metadata, so no field of a list item can grow without limit.
    const source = (env.sender || parsed.fromAddress || '').slice(0, MAX_SOURCE_CHARS);
    const messageId = parsed.messageId.slice(0, MAX_MESSAGE_ID_CHARS);
    const body: MailBody = { raw, attachments: parsed.attachments.map((a) => a.content) };
    const rows = env.recipients.map((rcpt, i) => {
      const trace = traceFor(i);
      // Only `size` differs per copy (the Received: line).
      const metadata = JSON.stringify({ ...parsed.metadata, size: trace.length + raw.length } satisfies MailMetadata);
      return { uuid: uuids[i]!, addressId: rcpt.id, address: rcpt.address, source, messageId, metadata, trace, body, createdAt };
    });
    let ids: number[];
    try {
      ids = await store.insertMails(rows);
    } finally {
      // Also on failure: a commit whose acknowledgement was lost may still have happened.
      for (const r of rows) bump(r.addressId);
    }
    if (bus) {
      rows.forEach((r, i) =>
        bus.publish(r.addressId, {
          type: 'mail',
          mail: { id: ids[i]!, uuid: r.uuid, source: r.source, address: r.address, metadata: r.metadata, messageId: r.messageId, createdAt: r.createdAt },
        }),
      );
    }
    return rows.map((r) => ({ addressId: r.addressId, uuid: r.uuid }));
  }

  async function getMail(addressId: number, uuid: string): Promise<MailRecord> {
    const mail = await store.getMail(addressId, uuid);
    if (!mail) throw notFound('No such mail.');
    return mail;
  }

  return {
    createAddress,
    authenticate,
    resolveRecipient,
    deliver,
    getMail,
    tokenFor: (a: AddressRecord) => tokens.sign({ address: a.address, addressId: a.id }, now()),
    mailSetVersion,
    async deleteAddress(addressId: number): Promise<boolean> {
      let deleted: boolean;
      try {
        deleted = await store.deleteAddress(addressId);
      } finally {
        bump(addressId);
        deletions.set(addressId, (deletions.get(addressId) ?? 0) + 1);
        deletionsTotal++;
      }
      if (deleted) bus?.publish(addressId, { type: 'address_deleted' });
      return deleted;
    },
    // An offset past any possible count is just an empty page; capped so that 1e20
    // never reaches a 64-bit SQL OFFSET (where it is a database error, not a 400).
    listMails: (addressId: number, limit: number, offset: number): Promise<{ results: MailSummary[]; count: number }> =>
      store.listMails(addressId, limit, Math.min(offset, Number.MAX_SAFE_INTEGER)),
    async deleteMail(addressId: number, uuid: string): Promise<void> {
      let deleted: boolean;
      try {
        deleted = await store.softDeleteMail(addressId, uuid);
      } finally {
        bump(addressId);
      }
      if (!deleted) throw notFound('No such mail.');
      bus?.publish(addressId, { type: 'mail_deleted', uuid });
    },
    async clearInbox(addressId: number): Promise<number> {
      let cleared: number;
      try {
        cleared = await store.clearMails(addressId);
      } finally {
        bump(addressId);
      }
      bus?.publish(addressId, { type: 'inbox_cleared' });
      return cleared;
    },
    /** Whether the address is under its quota (a message that crosses it is still taken: RCPT cannot know its size). */
    async hasRoom(recipient: Recipient): Promise<boolean> {
      const quota = opts.quota;
      if (!quota || (quota.maxMails === 0 && quota.maxBytes === 0)) return true;
      const usage = await store.addressUsage(recipient.id);
      return (quota.maxMails === 0 || usage.count < quota.maxMails) && (quota.maxBytes === 0 || usage.bytes < quota.maxBytes);
    },
    /** One attachment as its metadata lists it, from the bytes kept at delivery (never a parse of the message). */
    async getAttachment(addressId: number, uuid: string, attachmentId: string): Promise<DecodedAttachment> {
      // Only the ids the metadata lists ("0", "1", ...): "00" or "01" are unknown ids, 404.
      if (!/^(0|[1-9]\d{0,5})$/.test(attachmentId)) throw notFound('No such attachment.');
      const index = Number(attachmentId);
      const stored = await store.getAttachment(addressId, uuid, index);
      const info = stored && (JSON.parse(stored.metadata) as MailMetadata).attachments[index];
      if (!stored || !info) throw notFound('No such attachment.');
      // Mail stored before attachments were kept: parsed again, in a worker, within its budget.
      const content = stored.legacy ? (await parser.readAttachment((await getMail(addressId, uuid)).raw, index))?.content : stored.content;
      if (!content) throw notFound('No such attachment.');
      return { filename: info.filename, contentType: info.content_type, content };
    },
    /** Retention sweep (docs/decisions.md "Retention"). */
    async sweep(): Promise<PurgeResult> {
      const t = now();
      try {
        return await store.purge({ mailBefore: t - opts.mailTtlMs, addressBefore: t - opts.addressTtlMs, sessionBefore: t - opts.sessionTtlMs });
      } finally {
        // A new epoch invalidates every version, so the counters can start again.
        versions.clear();
        deletions.clear();
        epoch++;
      }
    },
  };
}
