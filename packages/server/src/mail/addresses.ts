// Addresses as the mail service sees them: created (a chosen or a random name), resolved
// from a token, and found for a recipient at RCPT (plus-addressing, the catch-all's
// pending addresses, created with their first mail).
import { conflict, unauthorized } from '../domain/errors.js';
import { allowedName, normalizeName, randomName, splitAddress, type NamePolicy } from '../domain/names.js';
import { isSandboxAddress } from '../domain/sandboxes.js';
import { RetiredNameError, type Tombstones } from '../domain/tombstones.js';
import type { Tokens } from '../domain/tokens.js';
import type { AddressRecord } from '../storage/store.js';
import type { VersionedStore } from '../storage/caching-store.js';
import { subdomainHost, type DomainPool } from './domain-pool.js';

/** An address mail can be delivered to, as resolveRecipient found it. */
export interface Recipient extends AddressRecord {
  /** The address as the sender gave it at RCPT (lower-cased), e.g. name+tag@domain. */
  rcpt: string;
  /** A catch-all address nobody created yet: created (unclaimed) when its mail is stored; its id is 0 until then. */
  pending?: true;
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

/** What the addresses' part of the mail service is given (mail/service.ts MailServiceOptions). */
export interface AddressBookOptions {
  store: VersionedStore;
  tokens: Tokens;
  names: NamePolicy;
  /** The domains new addresses are made at and mail is taken for (domain-pool.ts). */
  pool: DomainPool;
  addressTtlMs: number;
  tokenMaxLength?: number | undefined;
  plusAddressing?: boolean | undefined;
  catchAll?: boolean | undefined;
  /** A deleted or expired address's name is not given out again (docs/decisions.md "Deleted address"); absent: it is. */
  tombstones?: Tombstones | undefined;
  /** The random names tried, in turn; tests give a sequence of their own to meet a retired one. */
  randomName?: (() => string) | undefined;
  now: () => number;
}

/** A new address: its name and domain (absent: random, by the pool's selection). `exactDomain`: name@domain as asked, never a random subdomain of it. */
export interface NewAddressRequest {
  name?: string | undefined;
  domain?: string | undefined;
  exactDomain?: boolean | undefined;
}

export interface AddressBook {
  createAddress(req: NewAddressRequest): Promise<{ address: AddressRecord; jwt: string }>;
  authenticate(jwt: string): Promise<AuthenticatedAddress>;
  resolveRecipient(address: string): Promise<Recipient | undefined>;
  /** A pending catch-all recipient's address, created now; any other recipient as it is. */
  createPending(recipient: Recipient): Promise<Recipient>;
}

const MAX_RANDOM_ATTEMPTS = 8;

export function createAddressBook(opts: AddressBookOptions): AddressBook {
  const { store, tokens, names, now, tombstones, pool } = opts;

  async function createAddress(req: NewAddressRequest): Promise<{ address: AddressRecord; jwt: string }> {
    // The domain is checked before the name, as it always was.
    const target = await pool.forNewAddress(req.domain, req.exactDomain);
    const name = req.name === undefined ? undefined : normalizeName(req.name, names);
    let record: AddressRecord | undefined;
    if (name !== undefined) {
      const address = `${name}@${subdomainHost(target)}`;
      const tombstone = tombstones?.check(address, now());
      record = await store.createAddress(address, now(), tombstone ? { tombstone } : {});
      // With the catch-all on, an address its first mail created goes to whoever asks for it first.
      if (!record && opts.catchAll) record = await store.claimAddress(address);
      if (!record && tombstone && (await store.hasTombstone(tombstone.key, tombstone.since))) throw new RetiredNameError();
      if (!record) throw conflict('That address is already taken; choose another name or omit "name" for a random one.');
    } else {
      // A random name with a tombstone is skipped like a taken one.
      for (let i = 0; i < MAX_RANDOM_ATTEMPTS && !record; i++) {
        const address = `${(opts.randomName ?? randomName)()}@${subdomainHost(target)}`;
        const tombstone = tombstones?.check(address, now());
        record = await store.createAddress(address, now(), tombstone ? { tombstone } : {});
      }
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
    if (!parts) return undefined;
    // Past a retirement's grace this throws RetiredDomainError: refused for good, not as an unknown address.
    const domain = await pool.forMail(parts.domain);
    if (!domain) return undefined;
    const base = (opts.plusAddressing ?? true) ? parts.local.split('+', 1)[0]! : parts.local;
    if (!base) return undefined;
    const name = `${base}@${parts.domain}`;
    const record = await store.findAddress(name);
    const rcpt = `${parts.local}@${parts.domain}`;
    // The catch-all makes addresses only where new ones may be made: an active domain itself.
    if (!record && opts.catchAll && !domain.subdomain && domain.entry.state === 'active' && allowedName(base, names)) {
      // The catch-all does not bring back a retired name: its mail is refused like an unknown address's.
      const tombstone = tombstones?.check(name, now());
      if (tombstone && (await store.hasTombstone(tombstone.key, tombstone.since))) return undefined;
      return { id: 0, address: name, createdAt: now(), rcpt, pending: true };
    }
    return record && now() - record.createdAt <= opts.addressTtlMs ? { ...record, rcpt } : undefined;
  }

  /** A pending catch-all recipient's address, created now; two first mails at once: one creates it, the other finds it. */
  async function createPending(recipient: Recipient): Promise<Recipient> {
    if (!recipient.pending) return recipient;
    const record = (await store.createAddress(recipient.address, now(), { unclaimed: true })) ?? (await store.findAddress(recipient.address));
    if (!record) throw new Error(`catch-all address ${recipient.address} could not be created`);
    return { ...record, rcpt: recipient.rcpt };
  }

  return { createAddress, authenticate, resolveRecipient, createPending };
}
