// The domain pool's rules (docs/operating.md "Domains and rotation", "Random subdomains"):
// which domain a new address gets, which recipients' domains mail is taken for, and the
// names a pool domain may have. Pure: the pool itself is read by mail/domain-pool.ts.
import { randomInt } from 'node:crypto';
import { AppError, badRequest } from './errors.js';
import { SANDBOX_DOMAIN } from './sandboxes.js';

export const DOMAIN_SELECTIONS = ['first', 'random', 'round-robin'] as const;
/** How POST /api/new_address without a domain picks one of the active domains (DOMAIN_SELECTION). */
export type DomainSelection = (typeof DOMAIN_SELECTIONS)[number];

export const POOL_DOMAIN_STATES = ['active', 'disabled', 'retired'] as const;
export type PoolState = (typeof POOL_DOMAIN_STATES)[number];

/** What the rules need of a pool domain (storage's PoolDomainRecord is one). */
export interface PoolEntry {
  domain: string;
  state: PoolState;
  subdomains: boolean;
  retiredUntil: number | null;
}

const LABEL = '[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?';
const DOMAIN_RE = new RegExp(`^(?=.{1,253}$)${LABEL}(\\.${LABEL})+$`);
const LABEL_RE = new RegExp(`^${LABEL}$`);

/** A domain as the pool keeps it (lower-cased, no final dot); a bad_request AppError when it cannot be one. */
export function poolDomainName(raw: unknown): string {
  if (typeof raw !== 'string' || raw.trim() === '') throw badRequest('"domain" must be a domain name such as mail.example.com.');
  const domain = raw.trim().toLowerCase().replace(/\.$/, '');
  if (!DOMAIN_RE.test(domain)) {
    throw badRequest('Invalid domain: use two or more labels of a-z, 0-9 and "-" (each 1-63 characters, not starting or ending with "-"), 253 characters at most.');
  }
  if (domain === SANDBOX_DOMAIN) throw badRequest(`${SANDBOX_DOMAIN} holds the sandboxes' mail and cannot be a pool domain.`);
  return domain;
}

/** The domain of `domain` in the pool: itself, or the pool domain it is a one-label subdomain of (when that one has subdomains on). */
export function poolEntryOf<T extends PoolEntry>(pool: readonly T[], domain: string): { entry: T; subdomain: boolean } | undefined {
  const exact = pool.find((d) => d.domain === domain);
  if (exact) return { entry: exact, subdomain: false };
  const dot = domain.indexOf('.');
  if (dot <= 0 || !LABEL_RE.test(domain.slice(0, dot))) return undefined;
  const parent = pool.find((d) => d.domain === domain.slice(dot + 1));
  return parent?.subdomains ? { entry: parent, subdomain: true } : undefined;
}

/** The pool domain `domain` is, or is under at any depth (the longest such); undefined outside the pool. What figures and refusal counts count it under. */
export function poolDomainUnder(domain: string, pool: readonly string[]): string | undefined {
  let under: string | undefined;
  for (const p of pool) if ((domain === p || domain.endsWith(`.${p}`)) && p.length > (under?.length ?? 0)) under = p;
  return under;
}

/** Mail to a retired domain past its grace: refused at RCPT with a permanent 550 (smtp/rcpt-to.ts). */
export class RetiredDomainError extends AppError {
  override name = 'RetiredDomainError';
  constructor(readonly domain: string) {
    super('forbidden', `The domain ${domain} is retired and takes no more mail.`);
  }
}

/** Whether a pool domain takes mail at `now`: a retired one until its retiredUntil. */
export const takesMail = (entry: PoolEntry, now: number): boolean => entry.state !== 'retired' || (entry.retiredUntil !== null && now < entry.retiredUntil);

const LETTERS = 'abcdefghijklmnopqrstuvwxyz';
const LABEL_ALPHABET = `${LETTERS}0123456789`;

/** A random subdomain label: 4 to 6 characters of a-z and 0-9, starting with a letter (k3x9). */
export function randomLabel(): string {
  const length = 4 + randomInt(3);
  let out = LETTERS[randomInt(LETTERS.length)]!;
  for (let i = 1; i < length; i++) out += LABEL_ALPHABET[randomInt(LABEL_ALPHABET.length)];
  return out;
}

/** The active domain a new address without a domain gets; `turn` counts the picks so far (round-robin). */
export function pickDomain<T>(active: readonly T[], selection: DomainSelection, turn: number): T | undefined {
  if (active.length === 0) return undefined;
  if (selection === 'random') return active[randomInt(active.length)];
  if (selection === 'round-robin') return active[turn % active.length];
  return active[0];
}
