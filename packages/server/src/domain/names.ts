// Address name rules (docs/decisions.md "Names", "Domains").
import { randomInt } from 'node:crypto';
import { badRequest, forbidden } from './errors.js';

const NAME_RE = /^[a-z0-9]([a-z0-9._-]{0,62}[a-z0-9])?$/;
const RANDOM_ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';

export interface NamePolicy {
  customNames: boolean;
  blocklist: ReadonlySet<string>;
}

/** Validates a requested local part; returns it lower-cased. */
export function normalizeName(requested: string, policy: NamePolicy): string {
  if (!policy.customNames) throw forbidden('Custom names are disabled on this server; omit "name" to get a random address.');
  const name = requested.toLowerCase();
  if (!wellFormedName(name)) {
    throw badRequest('Invalid name: use 1-64 characters of a-z, 0-9, ".", "_" or "-", starting and ending with a letter or digit, without "..".');
  }
  if (policy.blocklist.has(foldName(name))) throw badRequest('That name is reserved; choose another one.');
  return name;
}

const wellFormedName = (name: string) => NAME_RE.test(name) && !name.includes('..');

/** Whether a lower-cased local part is one an address may have (well formed, not reserved): what a catch-all accepts. */
export function allowedName(name: string, policy: Pick<NamePolicy, 'blocklist'>): boolean {
  return wellFormedName(name) && !policy.blocklist.has(foldName(name));
}

/**
 * A name as the blocklist compares it: lower-cased, without ".", "-" and "_", so that
 * "Admin.istrator" or "post-master" cannot slip past "administrator" or "postmaster".
 */
export function foldName(name: string): string {
  return name.toLowerCase().replace(/[._-]/g, '');
}

export function randomName(length = 10): string {
  let out = '';
  for (let i = 0; i < length; i++) out += RANDOM_ALPHABET[randomInt(RANDOM_ALPHABET.length)];
  return out;
}

/** Splits and lower-cases an address; undefined when it is not local@domain. */
export function splitAddress(address: string): { local: string; domain: string } | undefined {
  const at = address.lastIndexOf('@');
  if (at <= 0 || at === address.length - 1) return undefined;
  return { local: address.slice(0, at).toLowerCase(), domain: address.slice(at + 1).toLowerCase() };
}
