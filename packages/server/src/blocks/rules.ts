// What an operator's block may name, normalised to the form it is matched in
// (docs/decisions.md "Blocks"): an envelope sender, a sender domain (with its
// subdomains), or a client IP address or CIDR range.
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import { badRequest } from '../domain/errors.js';
import type { BlockKind } from '../storage/store.js';

const DOMAIN_RE = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/;
/** A local part as MAIL FROM carries it, unquoted: printable, no spaces, no "@", "<" or ">". */
const LOCAL_RE = /^[\x21-\x7e]{1,64}$/;

/** Ranges wider than these are refused: blocking a /4 is a typo far more often than a decision. */
export const WIDEST_PREFIX = { ipv4: 8, ipv6: 16 } as const;

export function wellFormedDomain(domain: string): boolean {
  return DOMAIN_RE.test(domain);
}

/** The block's value as stored and matched; a 400 that says what the kind takes otherwise. */
export function normalizeBlockValue(kind: BlockKind, raw: string): string {
  const value = raw.trim();
  if (kind === 'sender') {
    const at = value.lastIndexOf('@');
    const local = value.slice(0, at);
    const domain = value.slice(at + 1).toLowerCase();
    if (at <= 0 || !LOCAL_RE.test(local) || /[@<>]/.test(local) || !wellFormedDomain(domain)) {
      throw badRequest('Invalid sender: give an envelope sender address such as alice@spam.example.');
    }
    return `${local.toLowerCase()}@${domain}`;
  }
  if (kind === 'domain') {
    const domain = value.toLowerCase();
    if (!wellFormedDomain(domain)) throw badRequest('Invalid domain: give a domain name such as spam.example (its subdomains are blocked with it).');
    return domain;
  }
  return normalizeIpRange(value);
}

/** An IP address or CIDR range as its network address and prefix length; a single address without one. */
function normalizeIpRange(value: string): string {
  const invalid = () => badRequest('Invalid IP address or CIDR range: give one such as 192.0.2.7, 198.51.100.0/24 or 2001:db8::/48.');
  const [address = '', bits, extra] = value.split('/');
  if (extra !== undefined || isIP(address) === 0 || address.includes('%')) throw invalid();
  if (bits !== undefined && !/^\d{1,3}$/.test(bits)) throw invalid();
  let addr: ipaddr.IPv4 | ipaddr.IPv6 = ipaddr.parse(address);
  let prefix = bits === undefined ? (addr.kind() === 'ipv4' ? 32 : 128) : Number(bits);
  // An IPv4 address written as IPv6 (::ffff:192.0.2.7) is the IPv4 client it names.
  if (addr instanceof ipaddr.IPv6 && addr.isIPv4MappedAddress()) {
    if (prefix < 96) throw invalid();
    addr = addr.toIPv4Address();
    prefix -= 96;
  }
  const kind = addr.kind();
  const max = kind === 'ipv4' ? 32 : 128;
  if (prefix > max) throw invalid();
  if (prefix < WIDEST_PREFIX[kind]) throw badRequest(`That range is too wide: an IPv4 range may be /${WIDEST_PREFIX.ipv4} at the widest, an IPv6 range /${WIDEST_PREFIX.ipv6}.`);
  if (prefix === max) return addr.toString();
  const network = kind === 'ipv4' ? ipaddr.IPv4.networkAddressFromCIDR(`${addr.toString()}/${prefix}`) : ipaddr.IPv6.networkAddressFromCIDR(`${addr.toString()}/${prefix}`);
  return `${network.toString()}/${prefix}`;
}
