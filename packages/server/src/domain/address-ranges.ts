// Which IP addresses a request the service makes may go to (docs/security.md "Webhooks"):
// the rule the webhook guard applies at every delivery and the configuration applies to
// WEBHOOK_URL at start. In the domain, so that configuration stays a leaf.
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/** Why an address is refused, as a sentence's object: "a loopback address". */
export type AddressVerdict = { allowed: true } | { allowed: false; reason: string };

export const ADDRESS_REASONS: Record<string, string> = {
  unspecified: 'an unspecified address',
  broadcast: 'a broadcast address',
  multicast: 'a multicast address',
  linkLocal: 'a link-local address (such as the cloud metadata service at 169.254.169.254)',
  loopback: 'a loopback address',
  carrierGradeNat: 'a carrier-grade NAT address',
  private: 'a private-network address',
  uniqueLocal: 'a private-network (unique local) address',
  ipv4Mapped: 'an IPv4-mapped IPv6 address',
  reserved: 'a reserved address',
};

/** What WEBHOOK_ALLOW_PRIVATE=true lets through: the ranges an intranet's own services use. */
const PRIVATE_RANGES = new Set(['loopback', 'private', 'uniqueLocal', 'carrierGradeNat']);

/** 2000::/3, the IPv6 global unicast space: anything outside it that ipaddr.js calls unicast (::/96, IPv4-compatible) is not a public host. */
const GLOBAL_UNICAST_V6 = ipaddr.parseCIDR('2000::/3');

/**
 * The guard's decision for one IP address: allowed only when it is a public unicast
 * address. Refused: loopback, private (RFC 1918, fc00::/7), link-local (169.254/16 with
 * the cloud metadata address, fe80::/10), carrier-grade NAT (100.64/10), multicast,
 * broadcast, unspecified, IPv4-mapped IPv6 (::ffff:0:0/96), NAT64 and the other
 * addresses that embed an IPv4 one, and reserved and documentation ranges. With
 * `allowPrivate` (WEBHOOK_ALLOW_PRIVATE, for intranets and tests) loopback, private and
 * carrier-grade NAT addresses are allowed too, and an IPv4-mapped address is judged as
 * the IPv4 address it carries; link-local (where the metadata service is), multicast,
 * broadcast, unspecified and reserved addresses never are.
 */
export function checkAddress(ip: string, allowPrivate: boolean): AddressVerdict {
  // Canonical forms only (node:net's parser): ipaddr.js would also read "0x7f.1" or "127.1".
  if (isIP(ip) === 0) return { allowed: false, reason: 'not an IP address' };
  const addr = ipaddr.parse(ip);
  if (addr.kind() === 'ipv6' && (addr as ipaddr.IPv6).isIPv4MappedAddress()) {
    if (!allowPrivate) return { allowed: false, reason: ADDRESS_REASONS['ipv4Mapped']! };
    return checkAddress((addr as ipaddr.IPv6).toIPv4Address().toString(), true);
  }
  let range: string = addr.range();
  if (range === 'unicast' && addr.kind() === 'ipv6' && !addr.match(GLOBAL_UNICAST_V6)) range = 'reserved';
  if (range === 'unicast' || (allowPrivate && PRIVATE_RANGES.has(range))) return { allowed: true };
  return { allowed: false, reason: ADDRESS_REASONS[range] ?? 'a reserved address' };
}
