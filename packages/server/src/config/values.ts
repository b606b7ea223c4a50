// Parsers of environment values: each returns the value or throws a ConfigError
// whose message says what the variable accepts (never the value it was given).
import { isIP } from 'node:net';
import { Type, type TInteger } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { parseDuration } from './duration.js';
import { isWeakSecret, WEAK_SECRET_HINT } from './secrets.js';
import { parseWebhookUrl, WebhookUrlError } from '../domain/webhook-url.js';
import { parseNetwork } from '../limits/networks.js';

export class ConfigError extends Error {
  override name = 'ConfigError';
}

export interface RateLimitRule {
  /** Requests allowed per window; 0 disables the limit. */
  max: number;
  windowSeconds: number;
}

export type TrustProxy = boolean | number | string | string[];

/** Origins allowed cross-origin access: any ('*', never with credentials) or these. */
export type CorsOrigins = '*' | string[];

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

/** A whole number in decimal digits that the TypeBox schema accepts; `accepts` is the error's wording. */
function integer(schema: TInteger, accepts: string): (raw: string) => number {
  return (raw) => {
    const n = /^\d{1,16}$/.test(raw) ? Number(raw) : NaN;
    if (!Value.Check(schema, n)) throw new ConfigError(accepts);
    return n;
  };
}

export const port = integer(Type.Integer({ minimum: 0, maximum: 65535 }), 'a port number 0..65535');
export const positiveInt = integer(Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }), 'a positive whole number');
/** 0 (no limit) or a positive whole number. */
export const count = integer(Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER }), 'a whole number, 0 for no limit');

export function atLeast(raw: string, min: number): number {
  return integer(Type.Integer({ minimum: min, maximum: Number.MAX_SAFE_INTEGER }), `a whole number of at least ${min}`)(raw);
}

export function between(raw: string, min: number, max: number): number {
  return integer(Type.Integer({ minimum: min, maximum: max }), `a whole number from ${min} to ${max}`)(raw);
}

export function host(raw: string): string {
  if (raw === '' || /\s/.test(raw)) throw new ConfigError('an IP address or host name');
  return raw;
}

/** A file-system path: anything but empty or a NUL byte (spaces are fine). */
export function path(raw: string): string {
  if (raw === '' || raw.includes('\0')) throw new ConfigError('a directory path');
  return raw;
}

export function bool(raw: string): boolean {
  const v = raw.toLowerCase();
  if (['true', '1', 'yes', 'on'].includes(v)) return true;
  if (['false', '0', 'no', 'off'].includes(v)) return false;
  throw new ConfigError('true or false');
}


export function duration(raw: string): number {
  const ms = parseDuration(raw);
  if (ms === undefined) throw new ConfigError('a duration such as 90s, 15m, 1.5h, 7d or 1w');
  return ms;
}

export function optional(raw: string): string | undefined {
  return raw === '' ? undefined : raw;
}

const DOMAIN_RE = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/;

export function domains(raw: string): string[] {
  const list = raw.split(',').map((d) => d.trim().toLowerCase()).filter((d) => d !== '');
  if (list.length === 0 || !list.every((d) => DOMAIN_RE.test(d))) throw new ConfigError('a comma-separated list of domain names');
  return [...new Set(list)];
}

export function parseRateLimit(raw: string): RateLimitRule {
  if (raw === '0') return { max: 0, windowSeconds: 1 };
  const m = /^(\d+)\/(\d+)$/.exec(raw);
  if (!m || Number(m[1]) < 1 || Number(m[2]) < 1) throw new ConfigError('<max>/<seconds> with both at least 1, or 0 to disable');
  return { max: Number(m[1]), windowSeconds: Number(m[2]) };
}

/** Fastify's trustProxy forms: true/false, a hop count, or addresses/CIDRs. */
export function parseTrustProxy(raw: string): TrustProxy | undefined {
  if (raw === '') return undefined;
  const v = raw.toLowerCase();
  // "true" would believe the left-most X-Forwarded-For entry, which the client writes itself.
  if (v === 'true') throw new ConfigError('a hop count (such as 1) or the proxies\' addresses; trusting every proxy is refused because it lets clients choose their own address');
  if (v === 'false') return false;
  if (/^\d+$/.test(v)) return Number(v);
  const list = raw.split(',').map((s) => s.trim()).filter(Boolean);
  const ok = list.every((entry) => {
    const [ip, bits, extra] = entry.split('/');
    if (extra !== undefined || ip === undefined) return false;
    if (['loopback', 'linklocal', 'uniquelocal'].includes(ip) && bits === undefined) return true;
    const family = isIP(ip);
    if (family === 0) return false;
    return bits === undefined || (/^\d+$/.test(bits) && Number(bits) <= (family === 4 ? 32 : 128));
  });
  if (!ok || list.length === 0) throw new ConfigError('a hop count, or a comma list of IPs/CIDRs (loopback, linklocal, uniquelocal allowed)');
  return list.length === 1 ? list[0] : list;
}


/** `*` alone, or a comma list of origins (scheme://host[:port]), each as browsers send it in Origin. */
export function parseCorsOrigins(raw: string): CorsOrigins | undefined {
  if (raw === '') return undefined;
  if (raw === '*') return '*';
  const accepts = 'a comma list of origins such as https://app.example (scheme, host and optional port; no path), or * alone';
  const list = raw.split(',').map((s) => s.trim()).filter(Boolean);
  if (list.length === 0) throw new ConfigError(accepts);
  return [
    ...new Set(
      list.map((entry) => {
        if (!/^https?:\/\/[^/?#@\s]+\/?$/i.test(entry) || !URL.canParse(entry)) throw new ConfigError(accepts);
        return new URL(entry).origin;
      }),
    ),
  ];
}

/** Resolvers listed at most in DNS_SERVERS. */
export const MAX_DNS_SERVERS = 8;

/**
 * DNS_SERVERS: a comma list of `ip` or `ip:port`, an IPv6 address bare or as
 * `[addr]:port`; each in the form node:dns's setServers takes. Unset: the system's.
 */
export function parseDnsServers(raw: string): string[] | undefined {
  if (raw.trim() === '') return undefined;
  const accepts = `a comma list of up to ${MAX_DNS_SERVERS} resolvers, each an IP address with an optional port (192.0.2.1, 192.0.2.1:53, 2001:db8::1, [2001:db8::1]:53)`;
  const list = raw.split(',').map((s) => s.trim());
  if (list.length > MAX_DNS_SERVERS || list.some((s) => s === '')) throw new ConfigError(accepts);
  const validPort = (p: string) => /^\d{1,5}$/.test(p) && Number(p) >= 1 && Number(p) <= 65535;
  return list.map((entry) => {
    const v6 = /^\[([^\]]+)\](?::(\d+))?$/.exec(entry);
    if (v6) {
      if (isIP(v6[1]!) !== 6 || (v6[2] !== undefined && !validPort(v6[2]))) throw new ConfigError(accepts);
      return v6[2] === undefined ? v6[1]! : `[${v6[1]}]:${Number(v6[2])}`;
    }
    if (isIP(entry) !== 0) return entry;
    const v4 = /^([^:]+):(\d+)$/.exec(entry);
    if (!v4 || isIP(v4[1]!) !== 4 || !validPort(v4[2]!)) throw new ConfigError(accepts);
    return `${v4[1]}:${Number(v4[2])}`;
  });
}

/** A webhook URL of the form parseWebhookUrl accepts (where it points is checked at start and at delivery). */
export function webhookUrl(raw: string): string {
  try {
    return parseWebhookUrl(raw).url.href;
  } catch (err) {
    if (!(err instanceof WebhookUrlError)) throw err;
    // The reason names no part of the value: a URL may carry a token.
    const reason = err.message.replace(/^The webhook URL/, 'this one').replace(/\.$/, '');
    throw new ConfigError(`an http:// or https:// URL without user name, password or fragment, on a port browsers may fetch; ${reason}`);
  }
}

export function secret(raw: string): string | undefined {
  if (raw === '') return undefined;
  if (raw.length < 32) throw new ConfigError('a secret of at least 32 characters (or leave it unset to generate one)');
  if (isWeakSecret(raw)) throw new ConfigError(`a secret of at least 32 characters, ${WEAK_SECRET_HINT} (or leave it unset to generate one)`);
  return raw;
}

/** A comma list of networks (192.0.2.0/24, 2001:db8::/32, or a single address); empty: none. */
export function networks(raw: string): string[] {
  const list = raw.split(',').map((s) => s.trim()).filter(Boolean);
  if (!list.every((entry) => parseNetwork(entry) !== undefined)) throw new ConfigError('a comma list of IP addresses or networks such as 127.0.0.0/8, ::1/128, 192.0.2.0/24 (empty for none)');
  return list;
}

/** Free space to keep on a disk: at least `bytes`, or `percent` of the disk, whichever is smaller. */
export interface FreeSpace {
  bytes: number;
  percent: number;
}

/** `<bytes>`, `<n>%` of the disk, or 0 for no check. */
export function freeSpace(raw: string): FreeSpace {
  const percent = /^(\d{1,2}(?:\.\d{1,2})?)%$/.exec(raw);
  if (percent) return { bytes: Number.MAX_SAFE_INTEGER, percent: Number(percent[1]) };
  if (/^\d{1,16}$/.test(raw)) return { bytes: Number(raw), percent: 100 };
  throw new ConfigError('a number of bytes, a percentage of the disk such as 5%, or 0 for no check');
}
