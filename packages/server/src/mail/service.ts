// The mail service: addresses, delivery and reading. It knows nothing of SMTP or
// HTTP; both call it, and its errors are domain errors (domain/errors.ts).
import { randomFillSync } from 'node:crypto';
import { v7 as uuidv7 } from 'uuid';
import { conflict, notFound, unauthorized } from '../domain/errors.js';
import { allowedName, normalizeDomain, normalizeName, randomName, splitAddress, type NamePolicy } from '../domain/names.js';
import { isSandboxAddress } from '../domain/sandboxes.js';
import type { Tokens } from '../domain/tokens.js';
import type { MailMetadata } from '@temp-inbox/api';
import type { AddressRecord, MailBody, MailEnvelope, MailReader, MailRecord, MailSummary, PurgeResult } from '../storage/store.js';
import { PartsGoneError } from '../storage/parts.js';
import type { ParsedSearch } from '../storage/search-query.js';
import type { VersionedStore } from '../storage/caching-store.js';
import type { BlockList, BlockMatch } from '../blocks/block-list.js';
import type { EventBus } from './events/events.js';
import type { MailAuthenticator } from './auth/auth.js';
import type { MessageParser } from './parse/parse.js';
import type { MessageBuffer } from './message-buffer.js';
import { receivedHeader, type ReceivedTrace } from './received.js';
import { createParsedViews, type ParsedMailView, type ParsedViewLimits } from './parse/parsed-views.js';

/** An address mail can be delivered to, as resolveRecipient found it. */
export interface Recipient extends AddressRecord {
  /** The address as the sender gave it at RCPT (lower-cased), e.g. name+tag@domain. */
  rcpt: string;
  /** A catch-all address nobody created yet: created (unclaimed) when its mail is stored; its id is 0 until then. */
  pending?: true;
}

export interface DecodedAttachment {
  filename: string;
  contentType: string;
  content: Buffer;
}

/** An attachment's name and type, and its decoded bytes to read a piece at a time. */
export interface AttachmentStream {
  filename: string;
  contentType: string;
  bytes: number;
  pieces(): AsyncIterable<Buffer> | Iterable<Buffer>;
}

export interface Envelope {
  /** MAIL FROM; empty string for the null sender <>. */
  sender: string;
  recipients: Recipient[];
  /** The message as received (joined once, behind the Received: line). */
  message: MessageBuffer;
  /** Who sent it, as the per-client limits count clients (an IPv4 address, an IPv6 /64): the parser's waiting messages take turns by it. */
  client: string;
  trace: Omit<ReceivedTrace, 'recipient' | 'id' | 'date'>;
  /** A sandbox's capture (docs/decisions.md "Sandboxes"): the whole envelope is kept on the mail and its recipients are searchable. */
  capture?: MailEnvelope;
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

export type { ParsedMailView } from './parse/parsed-views.js';

export interface DeliveredMail {
  addressId: number;
  uuid: string;
}

export interface MailServiceOptions {
  /** Address look-ups and mail-set versions come from it (storage/caching-store.ts). */
  store: VersionedStore;
  tokens: Tokens;
  names: NamePolicy;
  mailTtlMs: number;
  addressTtlMs: number;
  /** Sessions live as long as their cookie. */
  sessionTtlMs: number;
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
  now?: () => number;
}

/** The mail service as SMTP, HTTP and the features call it: addresses, delivery, reading and the sweep. */
export interface MailService {
  createAddress(req: { name?: string | undefined; domain?: string | undefined }): Promise<{ address: AddressRecord; jwt: string }>;
  authenticate(jwt: string): Promise<AuthenticatedAddress>;
  resolveRecipient(address: string): Promise<Recipient | undefined>;
  deliver(env: Envelope): Promise<DeliveredMail[]>;
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
  deleteAddress(addressId: number): Promise<boolean>;
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

export function createMailService(opts: MailServiceOptions): MailService {
  const { store, tokens, names, parser } = opts;
  const now = opts.now ?? Date.now;
  const bus = opts.bus;
  let deliveriesWoken = 0;

  async function createAddress(req: { name?: string | undefined; domain?: string | undefined }): Promise<{ address: AddressRecord; jwt: string }> {
    const domain = normalizeDomain(req.domain, names);
    let record: AddressRecord | undefined;
    if (req.name !== undefined) {
      const local = normalizeName(req.name, names);
      record = await store.createAddress(`${local}@${domain}`, now());
      // With the catch-all on, an address its first mail created goes to whoever asks for it first.
      if (!record && opts.catchAll) record = await store.claimAddress(`${local}@${domain}`);
      if (!record) throw conflict('That address is already taken; choose another name or omit "name" for a random one.');
    } else {
      for (let i = 0; i < MAX_RANDOM_ATTEMPTS && !record; i++) record = await store.createAddress(`${randomName()}@${domain}`, now());
      if (!record) throw conflict('Could not find a free random name; try again.');
    }
    return { address: record, jwt: await tokens.sign({ address: record.address, addressId: record.id }, now()) };
  }

  /** Resolves a JWT to its live address; a deleted or recreated address's token is refused. */
  async function authenticate(jwt: string): Promise<AuthenticatedAddress> {
    if (jwt.length > (opts.tokenMaxLength ?? 4096)) throw unauthorized('Invalid or expired token.');
    const claims = await tokens.verify(jwt, now());
    if (!claims) throw unauthorized('Invalid or expired token.');
    // Read before the address and before any query made for this request.
    const version = store.mailSetVersion(claims.addressId);
    const record = await store.getAddress(claims.addressId);
    // A sandbox's address lives as long as its sandbox (docs/decisions.md "Sandboxes").
    if (!record || record.address !== claims.address || (now() - record.createdAt > opts.addressTtlMs && !isSandboxAddress(record.address))) {
      throw unauthorized('This address no longer exists.');
    }
    return { ...record, mailSetVersion: version };
  }

  /**
   * The live address mail to `address` is delivered to, or undefined (RFC 5321 §3.3:
   * refuse at RCPT). With plus-addressing, name+tag reaches name; with the catch-all,
   * an allowed name nobody created is accepted as pending and created only when its
   * mail is stored (docs/decisions.md "Plus-addressing and catch-all"): RCPT alone creates nothing.
   */
  async function resolveRecipient(address: string): Promise<Recipient | undefined> {
    const parts = splitAddress(address);
    if (!parts || !names.domains.includes(parts.domain)) return undefined;
    const base = (opts.plusAddressing ?? true) ? parts.local.split('+', 1)[0]! : parts.local;
    if (!base) return undefined;
    const name = `${base}@${parts.domain}`;
    const record = await store.findAddress(name);
    const rcpt = `${parts.local}@${parts.domain}`;
    if (!record && opts.catchAll && allowedName(base, names)) return { id: 0, address: name, createdAt: now(), rcpt, pending: true };
    return record && now() - record.createdAt <= opts.addressTtlMs ? { ...record, rcpt } : undefined;
  }

  /** A pending catch-all recipient's address, created now; two first mails at once: one creates it, the other finds it. */
  async function createPending(recipient: Recipient): Promise<Recipient> {
    if (!recipient.pending) return recipient;
    const record = (await store.createAddress(recipient.address, now(), { unclaimed: true })) ?? (await store.findAddress(recipient.address));
    if (!record) throw new Error(`catch-all address ${recipient.address} could not be created`);
    return { ...record, rcpt: recipient.rcpt };
  }

  async function deliver(env: Envelope): Promise<DeliveredMail[]> {
    const createdAt = now();
    const operatorWebhook = opts.outbox?.operator === true;
    // Time-ordered (RFC 9562 version 7): each insert appends to the uuid index
    // instead of touching a random page of it, which keeps ingest fast in a large store.
    const uuids = env.recipients.map(() => timeOrderedUuid());
    // The random tail of the uuid (its head is the time) names the delivery in Received:.
    const traceFor = (i: number) =>
      receivedHeader({ ...env.trace, recipient: env.recipients[i]!.rcpt, id: uuids[i]!.slice(-8), date: new Date(createdAt) });
    const raw = env.message.take();
    // Parsed once per message, in a worker; stored once, however many recipients it has. The
    // authentication checks run beside the parse, in a worker of their own, before the 250
    // (docs/decisions.md "Authentication verdicts").
    const [parsed, auth] = await Promise.all([
      parser.parse(raw, env.client),
      opts.authenticator?.check(raw, { ip: env.trace.remoteAddress, helo: env.trace.helo, sender: env.sender }),
    ]);
    // Bounded like the metadata, so no field of a list item can grow without limit.
    const source = (env.sender || parsed.fromAddress || '').slice(0, MAX_SOURCE_CHARS);
    const messageId = parsed.messageId.slice(0, MAX_MESSAGE_ID_CHARS);
    const body: MailBody = { raw, attachments: parsed.attachments.map((a) => a.content) };
    // A catch-all address is created with its first mail, once that mail is ready to store.
    const recipients = env.recipients.some((r) => r.pending) ? await Promise.all(env.recipients.map(createPending)) : env.recipients;
    const rows = recipients.map((rcpt, i) => {
      const trace = traceFor(i);
      // Only `size` (the Received: line) and `delivered_to` differ per copy.
      const metadata = JSON.stringify({ ...parsed.metadata, size: trace.length + raw.length, delivered_to: rcpt.rcpt, ...(auth ? { auth } : {}) } satisfies MailMetadata);
      const capture = env.capture;
      const searchText = capture ? `${parsed.searchText}\n${capture.to.join(' ')}` : parsed.searchText;
      return { uuid: uuids[i]!, addressId: rcpt.id, address: rcpt.address, source, messageId, metadata, trace, body, createdAt, searchText, operatorWebhook, ...(capture ? { envelope: capture } : {}) };
    });
    const ids = await store.insertMails(rows);
    // A sandbox's mail is given the tags of its X-Tags header (Mailpit's), before the 250.
    if (env.capture && parsed.tags.length > 0) {
      for (const r of rows) await store.setMailTags(r.addressId, [r.uuid], parsed.tags);
    }
    // The dispatcher looks at the outbox only when some delivery was queued since it last did.
    const queued = store.deliveriesQueued();
    if (queued !== deliveriesWoken) {
      deliveriesWoken = queued;
      opts.outbox?.queued();
    }
    if (bus) {
      rows.forEach((r, i) =>
        bus.publish(r.addressId, {
          type: 'mail',
          mail: { id: ids[i]!, uuid: r.uuid, source: r.source, address: r.address, metadata: r.metadata, messageId: r.messageId, createdAt: r.createdAt, seen: false, ...(r.envelope ? { envelope: r.envelope } : {}) },
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

  /**
   * Attachment `attachmentId` (an index the metadata lists) with its bytes left in the store,
   * to be read a part at a time; 404 when there is none.
   */
  async function openAttachment(addressId: number, uuid: string, attachmentId: string): Promise<AttachmentStream> {
    // Only the ids the metadata lists ("0", "1", ...): "00" or "01" are unknown ids, 404.
    if (!/^(0|[1-9]\d{0,5})$/.test(attachmentId)) throw notFound('No such attachment.');
    const index = Number(attachmentId);
    const stored = await store.openAttachment(addressId, uuid, index);
    const info = stored && (JSON.parse(stored.metadata) as MailMetadata).attachments[index];
    if (!stored || !info) throw notFound('No such attachment.');
    const named = { filename: info.filename, contentType: info.content_type };
    if (stored.bytes !== null) return { ...named, bytes: stored.bytes, pieces: stored.pieces };
    if (!stored.legacy) throw notFound('No such attachment.');
    // Mail stored before attachments were kept: parsed again, in a worker, within its budget.
    const content = (await parser.readAttachment((await getMail(addressId, uuid)).raw, index))?.content;
    if (!content) throw notFound('No such attachment.');
    return { ...named, bytes: content.length, pieces: () => [content] };
  }

  // A mail parsed again, in a worker within the parse budget, or its kept degraded view (docs/decisions.md "Parsed mail").
  const parsedViews = createParsedViews({
    store,
    parser,
    limits: opts.parsedViews ?? { perClient: 4, total: 64 },
    ...(opts.onKeepError ? { onKeepError: opts.onKeepError } : {}),
  });

  return {
    createAddress,
    authenticate,
    resolveRecipient,
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
    async deleteAddress(addressId: number): Promise<boolean> {
      const deleted = await store.deleteAddress(addressId);
      if (deleted) bus?.publish(addressId, { type: 'address_deleted' });
      return deleted;
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
    async getAttachment(addressId: number, uuid: string, attachmentId: string): Promise<DecodedAttachment> {
      const { pieces, bytes: _bytes, ...named } = await openAttachment(addressId, uuid, attachmentId);
      const read: Buffer[] = [];
      try {
        for await (const piece of pieces()) read.push(piece);
      } catch (err) {
        if (err instanceof PartsGoneError) throw notFound('No such attachment.');
        throw err;
      }
      return { ...named, content: read.length === 1 ? read[0]! : Buffer.concat(read) };
    },
    /** Retention sweep (docs/decisions.md "Retention"). */
    async sweep(): Promise<PurgeResult> {
      const t = now();
      return store.purge({ mailBefore: t - opts.mailTtlMs, addressBefore: t - opts.addressTtlMs, sessionBefore: t - opts.sessionTtlMs, now: t });
    },
  };
}
