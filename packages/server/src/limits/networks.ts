// Lists of networks (SMTP_TRUSTED_NETWORKS): a client address inside one of them
// is the operator's own host or network.
import ipaddr from 'ipaddr.js';

type Network = [ipaddr.IPv4 | ipaddr.IPv6, number];

/** Addresses whose answer a matcher keeps. */
const ANSWERS_KEPT = 4096;

/** One entry of a network list, an address (a network of one) or address/bits; undefined when it is neither. */
export function parseNetwork(entry: string): Network | undefined {
  try {
    if (entry.includes('/')) return ipaddr.parseCIDR(entry);
    if (!ipaddr.isValid(entry)) return undefined;
    const addr = ipaddr.parse(entry);
    return [addr, addr.kind() === 'ipv4' ? 32 : 128];
  } catch {
    return undefined;
  }
}

/** Whether an address is in one of the networks (an IPv4-mapped IPv6 address as its IPv4 address). */
export function networkMatcher(list: readonly string[]): (ip: string) => boolean {
  const networks = list.map((entry) => parseNetwork(entry)).filter((n): n is Network => n !== undefined);
  if (networks.length === 0) return () => false;
  const inList = (ip: string): boolean => {
    if (!ipaddr.isValid(ip)) return false;
    let addr = ipaddr.parse(ip);
    if (addr.kind() === 'ipv6' && (addr as ipaddr.IPv6).isIPv4MappedAddress()) addr = (addr as ipaddr.IPv6).toIPv4Address();
    return networks.some(([net, bits]) => net.kind() === addr.kind() && addr.match(net, bits));
  };
  // The answers for the addresses seen lately: each SMTP transaction asks more than once, and
  // each parse of an address builds a dozen objects. Emptied when full, so it stays bounded.
  const answers = new Map<string, boolean>();
  return (ip) => {
    let answer = answers.get(ip);
    if (answer === undefined) {
      if (answers.size >= ANSWERS_KEPT) answers.clear();
      answer = inList(ip);
      answers.set(ip, answer);
    }
    return answer;
  };
}
