// The domain pool as this node uses it (docs/operating.md "Domains and rotation"): read
// from the database, so every node follows every change without a restart. Like the
// blocks, each node follows it (storage/followed-list.ts): its version read at most
// REFRESH_MS after the last read, the whole pool only when it moved; a change made through
// this node reloads it at once, so the admin's answer comes after its own node applies it.
import type { Logger } from 'pino';
import { badRequest, conflict, notFound, unavailable } from '../domain/errors.js';
import { pickDomain, poolDomainName, poolDomainUnder, poolEntryOf, randomLabel, RetiredDomainError, takesMail, type DomainSelection } from '../domain/domain-pool.js';
import { followList } from '../storage/followed-list.js';
import type { DomainPoolStore, PoolDomainRecord, PoolDomainState } from '../storage/store.js';

/** How old the pool may be when it is used: the longest a change made on another node takes to apply here. */
export const REFRESH_MS = 1000;

export interface DomainPoolOptions {
  selection: DomainSelection;
  /** DOMAIN_RETIRE_GRACE: how long a retired domain still takes mail. */
  retireGraceMs: number;
  logger?: Logger | undefined;
  /** The service's time (retirement, the records' times). */
  now: () => number;
  /** Measures the pool's age (monotonic by default, whatever the service's time says). */
  clock?: () => number;
}

/** Where a new address goes: a pool domain, or a one-label subdomain of one (`host`). */
export interface AddressDomain {
  /** The domain part of the new address. */
  host: string;
  /** The pool domain has subdomains on and the request named none: the address gets a random label. */
  randomSubdomain: boolean;
}

export interface DomainPool {
  readonly selection: DomainSelection;
  /** MAIL_DOMAINS (with MAIL_SUBDOMAINS) at the first start of a database; later starts leave the pool alone. */
  seed(domains: readonly string[], subdomains: (domain: string) => boolean): Promise<void>;
  /** Every pool domain, in the order added. */
  list(): Promise<PoolDomainRecord[]>;
  /** The active domains' names, the default first. */
  activeDomains(): Promise<string[]>;
  /**
   * The domain of a new address: `requested` (an active pool domain or a subdomain of one with
   * subdomains on), else one by the selection. `exact`: never a random subdomain of it (mail.tm's accounts).
   */
  forNewAddress(requested: string | undefined, exact?: boolean): Promise<AddressDomain>;
  /** The pool domain mail to `domain` is taken for; undefined when none; throws RetiredDomainError past a retirement's grace. */
  forMail(domain: string): Promise<{ entry: PoolDomainRecord; subdomain: boolean } | undefined>;
  add(domain: unknown, subdomains: boolean): Promise<PoolDomainRecord>;
  update(domain: string, change: { state?: PoolDomainState | undefined; subdomains?: boolean | undefined }): Promise<PoolDomainRecord>;
  remove(domain: string): Promise<void>;
  /**
   * The pool domain `domain` is, or is under at any depth, in the pool as last read (no wait);
   * undefined for a domain outside the pool. What a refusal is counted under.
   */
  poolDomainOf(domain: string): string | undefined;
}

export function createDomainPool(store: DomainPoolStore, opts: DomainPoolOptions): DomainPool {
  const { fresh, reload, current } = followList<PoolDomainRecord[]>({
    version: () => store.poolVersion(),
    read: () => store.listPoolDomains(),
    initial: [],
    refreshMs: REFRESH_MS,
    what: 'the domain pool',
    logger: opts.logger,
    clock: opts.clock,
  });
  let turn = 0;

  const active = async () => (await fresh()).filter((d) => d.state === 'active');

  async function forNewAddress(requested: string | undefined, exact = false): Promise<AddressDomain> {
    const domains = await active();
    const list = domains.map((d) => d.domain).join(', ') || '(none)';
    if (requested === undefined || requested === '') {
      const picked = pickDomain(domains, opts.selection, turn++);
      // Not the request's fault: the operators took every domain out of service.
      if (!picked) throw unavailable('This server has no domain that takes new addresses right now; try again later.');
      return { host: picked.domain, randomSubdomain: picked.subdomains };
    }
    const host = requested.toLowerCase();
    const found = poolEntryOf(await fresh(), host);
    if (!found) throw badRequest(`Unknown domain; this server accepts: ${list}.`);
    if (found.entry.state !== 'active') throw badRequest(`The domain ${found.entry.domain} takes no new addresses (it is ${found.entry.state}); this server accepts: ${list}.`);
    return { host, randomSubdomain: found.entry.subdomains && !found.subdomain && !exact };
  }

  async function forMail(domain: string) {
    const found = poolEntryOf(await fresh(), domain);
    if (found && !takesMail(found.entry, opts.now())) throw new RetiredDomainError(found.entry.domain);
    return found;
  }

  async function changed<T>(result: T): Promise<T> {
    await reload();
    return result;
  }

  return {
    selection: opts.selection,
    async seed(domains, subdomains) {
      const seeded = await store.seedPoolDomains(
        domains.map((domain) => ({ domain, subdomains: subdomains(domain) })),
        opts.now(),
      );
      if (seeded) opts.logger?.info({ domains }, 'the domain pool seeded from MAIL_DOMAINS');
      await reload();
    },
    list: fresh,
    activeDomains: async () => (await active()).map((d) => d.domain),
    forNewAddress,
    forMail,
    async add(raw, subdomains) {
      const domain = poolDomainName(raw);
      const added = await store.addPoolDomain({ domain, subdomains, addedAt: opts.now() });
      if (!added) throw conflict(`The pool already has ${domain}.`);
      return changed(added);
    },
    async update(domain, change) {
      const at = opts.now();
      const updated = await store.updatePoolDomain(domain.toLowerCase(), { ...change, at, retiredUntil: at + opts.retireGraceMs });
      if (!updated) throw notFound(`The pool has no domain ${domain}.`);
      return changed(updated);
    },
    async remove(domain) {
      if (!(await store.deletePoolDomain(domain.toLowerCase()))) throw notFound(`The pool has no domain ${domain}.`);
      await changed(undefined);
    },
    poolDomainOf: (domain) => poolDomainUnder(domain, current().map((d) => d.domain)),
  };
}

/** The random label of a new address at a pool domain with subdomains on. */
export const subdomainHost = (target: AddressDomain): string => (target.randomSubdomain ? `${randomLabel()}.${target.host}` : target.host);
