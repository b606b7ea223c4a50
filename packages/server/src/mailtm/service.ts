// The mail.tm-compatible API's accounts (docs/decisions.md "mail.tm accounts"): an account
// is one of our addresses with a password. Registration goes through the mail service's
// createAddress (the name policy, reserved names, domains, the catch-all's claim), the
// password is kept as a slow hash beside the address, and a login answers the address's
// own JWT, so the token works on our API, in the web UI and here alike.
import { AppError, unauthorized } from '../domain/errors.js';
import { splitAddress } from '../domain/names.js';
import { RetiredNameError } from '../domain/tombstones.js';
import type { MailService } from '../mail/service.js';
import type { VersionedStore } from '../storage/caching-store.js';
import type { AddressRecord } from '../storage/store.js';
import { networksOf } from '../limits/attempt-limiter.js';
import { createMailtmIds, type MailtmIds } from './ids.js';
import type { LoginGuard } from './login-guard.js';
import { hashPassword, MAX_PASSWORD_CHARS, verifyPassword } from '../domain/passwords.js';
import type { AccountFields, Violation } from './shapes.js';

/** A posted account that breaks a rule: answered 422 with the violations (shapes.ts violationsBody). */
export class MailtmViolations extends Error {
  override name = 'MailtmViolations';
  constructor(readonly violations: Violation[]) {
    super(violations.map((v) => `${v.propertyPath}: ${v.message}`).join('\n'));
  }
}

// Symfony's constraint codes, which API Platform puts in each violation.
const NOT_BLANK = 'c1051bb4-d103-4f74-8988-acbcafc7fdc3';
const NOT_EMAIL = 'bd79c0ab-ddba-46cc-a703-a7a4b08de310';
const TOO_LONG = 'd94b19cc-114f-4f44-9cc4-4138e80a87b9';
const ALREADY_USED = '23bd9dbf-6b9b-41cd-a99e-4844bcf3077f';

/** Longest address taken (RFC 5321 §4.5.3.1.3: a path is at most 256 octets). */
const MAX_ADDRESS_CHARS = 254;
/** mail.tm's quota when ours is unlimited (ADDRESS_MAX_BYTES=0): the largest 32-bit integer, which every client can hold. */
const UNLIMITED_QUOTA = 2 ** 31 - 1;

export interface MailtmServiceOptions {
  store: VersionedStore;
  mail: MailService;
  /** JWT_SECRET: the key of the ids (ids.ts). */
  secret: string;
  /** ADDRESS_MAX_BYTES (0: no limit). */
  quotaBytes: number;
  /** MAIL_TTL: a message's retentionDate. */
  mailTtlMs: number;
  /** ADDRESS_TTL: an account lives as long as its address. */
  addressTtlMs: number;
  /** The limits on failed logins per account and per network (login-guard.ts); absent: none. */
  loginGuard?: LoginGuard | undefined;
  now?: () => number;
}

export interface MailtmDomain {
  id: string;
  domain: string;
  createdAt: number;
}

/** The mail.tm API's accounts over our addresses: domains, registration, logins and account views. */
export interface MailtmService {
  ids: MailtmIds;
  /** The pool's active domains (mail.tm's /domains), the default first. */
  domains(): Promise<MailtmDomain[]>;
  domain(id: string): Promise<MailtmDomain | undefined>;
  accountId(a: AddressRecord): string;
  account(a: AddressRecord): Promise<AccountFields>;
  /**
   * POST /accounts: creates the address (the rules of POST /api/new_address) and keeps the
   * password's hash with it. Hashed first, so that no address is left without its password
   * when hashing is refused; an address whose password could not be stored is deleted again.
   */
  register(body: { address?: unknown; password?: unknown }, ip?: string): Promise<{ address: AddressRecord; account: AccountFields }>;
  /**
   * POST /token: the account's JWT for its address and password; 401 "Invalid credentials." for anything else.
   * `ip`: the client's; its failed guesses count against the address and its networks (login-guard.ts).
   */
  login(body: { address?: unknown; password?: unknown }, ip?: string): Promise<{ id: string; token: string }>;
}

export function createMailtmService(opts: MailtmServiceOptions): MailtmService {
  const { store, mail } = opts;
  const now = opts.now ?? Date.now;
  const ids = createMailtmIds(opts.secret);
  // The pool's active domains, as new accounts may take them (mail/domain-pool.ts).
  async function domains(): Promise<MailtmDomain[]> {
    const pool = await mail.domains.list();
    return pool.filter((d) => d.state === 'active').map((d) => ({ id: ids.domain(d.domain), domain: d.domain, createdAt: d.addedAt }));
  }

  /** The fields of the account of a live address. */
  async function account(a: AddressRecord): Promise<AccountFields> {
    const [usage, password] = await Promise.all([store.addressUsage(a.id), store.getAddressPassword(a.id)]);
    return {
      id: ids.account(a),
      address: a.address,
      quota: opts.quotaBytes > 0 ? opts.quotaBytes : UNLIMITED_QUOTA,
      used: usage.bytes,
      createdAt: a.createdAt,
      updatedAt: Math.max(a.createdAt, password?.updatedAt ?? 0),
    };
  }

  /** The violations of a posted account's address and password (none: undefined), before anything is stored. */
  function check(address: unknown, password: unknown, active: readonly string[]): { local: string; domain: string; password: string } {
    const violations: Violation[] = [];
    let parts: { local: string; domain: string } | undefined;
    if (typeof address !== 'string' || address.trim() === '') violations.push({ propertyPath: 'address', message: 'This value should not be blank.', code: NOT_BLANK });
    else if (address.length > MAX_ADDRESS_CHARS || !(parts = splitAddress(address)) || /\s/.test(address)) {
      violations.push({ propertyPath: 'address', message: 'This value is not a valid email address.', code: NOT_EMAIL });
    } else if (!active.includes(parts.domain)) {
      violations.push({ propertyPath: 'address', message: `The domain "${parts.domain}" is not valid; this server accepts: ${active.join(', ')}.` });
    }
    if (typeof password !== 'string' || password === '') violations.push({ propertyPath: 'password', message: 'This value should not be blank.', code: NOT_BLANK });
    else if (password.length > MAX_PASSWORD_CHARS) {
      violations.push({ propertyPath: 'password', message: `This value is too long. It should have ${MAX_PASSWORD_CHARS} characters or less.`, code: TOO_LONG });
    }
    if (violations.length > 0) throw new MailtmViolations(violations);
    return { ...parts!, password: password as string };
  }

  return {
    ids,
    domains,
    domain: async (id: string) => (await domains()).find((d) => d.id === id),
    accountId: (a: AddressRecord) => ids.account(a),
    account,

    /**
     * POST /accounts: creates the address (the rules of POST /api/new_address) and keeps the
     * password's hash with it. Hashed first, so that no address is left without its password
     * when hashing is refused; an address whose password could not be stored is deleted again.
     */
    async register(body: { address?: unknown; password?: unknown }, ip = ''): Promise<{ address: AddressRecord; account: AccountFields }> {
      const wanted = check(body.address, body.password, await mail.domains.activeDomains());
      const hash = await hashPassword(wanted.password, networksOf(ip).network);
      let created: AddressRecord;
      try {
        // The account is the address asked for: never a random subdomain of its domain.
        created = (await mail.createAddress({ name: wanted.local, domain: wanted.domain, exactDomain: true })).address;
      } catch (err) {
        if (!(err instanceof AppError)) throw err;
        // A retired name (docs/decisions.md "Deleted address") says so, not "already used": nobody holds it now.
        if (err instanceof RetiredNameError) throw new MailtmViolations([{ propertyPath: 'address', message: err.message, code: ALREADY_USED }]);
        if (err.code === 'conflict') throw new MailtmViolations([{ propertyPath: 'address', message: 'This value is already used.', code: ALREADY_USED }]);
        if (err.code === 'bad_request' || err.code === 'forbidden') throw new MailtmViolations([{ propertyPath: 'address', message: err.message }]);
        throw err;
      }
      try {
        if (!(await store.setAddressPassword(created.id, hash, now()))) throw new Error('The address vanished before its password was stored.');
      } catch (err) {
        // Never handed out: no tombstone holds its name.
        await mail.deleteAddress(created.id, { tombstone: false }).catch(() => undefined);
        throw err;
      }
      return { address: created, account: await account(created) };
    },

    /**
     * POST /token: the account's JWT for its address and password; 401 "Invalid credentials." for anything else.
     * `ip`: the client's; its failed guesses count against the address and its networks (login-guard.ts).
     */
    async login(body: { address?: unknown; password?: unknown }, ip = ''): Promise<{ id: string; token: string }> {
      const { address, password } = body;
      if (typeof address !== 'string' || typeof password !== 'string' || address.length > MAX_ADDRESS_CHARS || password.length > MAX_PASSWORD_CHARS) {
        throw unauthorized('Invalid credentials.');
      }
      const parts = splitAddress(address);
      const name = parts ? `${parts.local}@${parts.domain}` : address.toLowerCase();
      // Counted by the name asked for, before it is looked up: an address that does not exist is locked alike.
      const attempt = await opts.loginGuard?.begin(name, ip);
      let ok: boolean;
      let record: AddressRecord | undefined;
      try {
        const found = parts && (await store.findAddress(name));
        record = found && now() - found.createdAt <= opts.addressTtlMs ? found : undefined;
        const stored = record && (await store.getAddressPassword(record.id));
        // Checked (against a decoy without an account) either way, so that time does not tell which.
        ok = (await verifyPassword(password, stored?.hash, networksOf(ip).network)) && record !== undefined;
      } catch (err) {
        await attempt?.cancel();
        throw err;
      }
      if (!ok || !record) throw unauthorized('Invalid credentials.');
      await attempt?.succeeded();
      return { id: ids.account(record), token: await mail.tokenFor(record) };
    },
  };
}
