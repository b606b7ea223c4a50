// The domain pool (a role of Store, store.ts; docs/operating.md "Domains and rotation"):
// the domains new addresses are made at and mail is taken for, in the database so that
// every node sees a change. mail/domain-pool.ts keeps it in memory and follows poolVersion.

/** active: takes new addresses; disabled: no new addresses; retired: no new addresses, and no mail past retiredUntil. */
export type PoolDomainState = 'active' | 'disabled' | 'retired';

export interface PoolDomainRecord {
  domain: string;
  state: PoolDomainState;
  /** New addresses get a random subdomain, and mail to any one-label subdomain is taken. */
  subdomains: boolean;
  addedAt: number;
  stateChangedAt: number;
  /** When a retired domain stops taking mail; null unless retired. */
  retiredUntil: number | null;
}

/** A change of PATCH /api/admin/domains/:domain: what is absent stays as it is. */
export interface PoolDomainChange {
  state?: PoolDomainState | undefined;
  subdomains?: boolean | undefined;
  /** The time of the change: the new stateChangedAt when the state changes. */
  at: number;
  /** The retiredUntil a domain gets when it becomes retired. */
  retiredUntil: number;
}

export interface DomainPoolStore {
  /** Every domain of the pool, in the order they were added (the seed's order first). */
  listPoolDomains(): Promise<PoolDomainRecord[]>;
  /** A token that changes whenever the pool changes (on any node), cheaper to read than the list. */
  poolVersion(): Promise<string>;
  /** Adds `domains` unless the pool was seeded before (once per database, even when emptied since); whether it seeded. */
  seedPoolDomains(domains: { domain: string; subdomains: boolean }[], at: number): Promise<boolean>;
  /** Adds an active domain; undefined when the pool already has it. */
  addPoolDomain(domain: { domain: string; subdomains: boolean; addedAt: number }): Promise<PoolDomainRecord | undefined>;
  /** Changes a domain; undefined when the pool has no such domain. */
  updatePoolDomain(domain: string, change: PoolDomainChange): Promise<PoolDomainRecord | undefined>;
  deletePoolDomain(domain: string): Promise<boolean>;
}
