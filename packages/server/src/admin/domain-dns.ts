// The MX check of a pool domain (GET /api/admin/domains/:domain/dns; docs/operating.md
// "DNS records"): whether the domain's mail comes here. It asks DNS_SERVERS (or the
// system's servers) with node:dns's Resolver, as the authentication checks do, for the MX
// records, and without any for the domain's own A/AAAA records (RFC 5321 §5.1: the domain is
// then its own mail exchanger). Bounded: an answer that does not come in time is a finding
// ("no answer"), never an error of the request.
import { Resolver } from 'node:dns/promises';
import { randomLabel } from '../domain/domain-pool.js';

export interface MxFinding {
  domain: string;
  mx: { exchange: string; priority: number }[];
  pointsHere: boolean;
  expected: string[];
  message: string;
}

export interface MxCheckOptions {
  /** ip or ip:port each (DNS_SERVERS); undefined: the system's. */
  servers: string[] | undefined;
  /** The host names that are this service (MX_HOSTNAMES, else SMTP_HOSTNAME), lower-case. */
  expected: string[];
  /** The whole check's budget (default 5 s). */
  timeoutMs?: number;
}

/** `subdomains`: the domain gives random subdomains, so the check also asks whether a wildcard MX covers them. */
export type MxCheck = (domain: string, opts?: { subdomains?: boolean }) => Promise<MxFinding>;

const DEFAULT_TIMEOUT_MS = 5000;
/** "No such name" and "no such record": the domain has none, not a failure to ask. */
const NONE = new Set(['ENOTFOUND', 'ENODATA']);

const host = (name: string) => name.toLowerCase().replace(/\.$/, '');

class Timeout extends Error {}

export function createMxCheck(opts: MxCheckOptions): MxCheck {
  const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const expected = opts.expected.map(host);

  /** The records of one name, [] when it has none; throws on a failure to ask (time-out, SERVFAIL). */
  async function records<T>(ask: () => Promise<T[]>): Promise<T[]> {
    try {
      return await ask();
    } catch (err) {
      if (NONE.has((err as { code?: string }).code ?? '')) return [];
      throw err;
    }
  }

  async function look(resolver: Resolver, domain: string): Promise<Omit<MxFinding, 'domain' | 'expected'>> {
    const mx = (await records(() => resolver.resolveMx(domain))).map((r) => ({ exchange: host(r.exchange), priority: r.priority })).sort((a, b) => a.priority - b.priority);
    if (mx.length === 0) {
      const addresses = [...(await records(() => resolver.resolve4(domain))), ...(await records(() => resolver.resolve6(domain)))];
      if (addresses.length === 0) return { mx, pointsHere: false, message: `${domain} has no MX record and no A or AAAA record: no mail can reach it.` };
      // RFC 5321 §5.1: without MX records the domain itself takes its mail.
      const implicit = [{ exchange: domain, priority: 0 }];
      const here = expected.includes(domain);
      return { mx: implicit, pointsHere: here, message: here ? `${domain} has no MX record; its own A/AAAA record (RFC 5321 §5.1) is this service.` : `${domain} has no MX record, and its own A/AAAA record is not one of ${expected.join(', ')}.` };
    }
    // RFC 7505: a single MX of "." says the domain takes no mail.
    if (mx.length === 1 && mx[0]!.exchange === '') return { mx, pointsHere: false, message: `${domain} has a null MX (RFC 7505): it says it takes no mail.` };
    const ours = mx.filter((r) => expected.includes(r.exchange));
    if (ours.length === 0) return { mx, pointsHere: false, message: `The MX records of ${domain} name ${mx.map((r) => r.exchange).join(', ')}, none of which is ${expected.join(', ')}.` };
    const best = ours[0]!.priority === mx[0]!.priority;
    return {
      mx,
      pointsHere: true,
      message: best ? `The MX of ${domain} points here (${ours[0]!.exchange}).` : `An MX of ${domain} points here (${ours[0]!.exchange}), but ${mx[0]!.exchange} is preferred over it.`,
    };
  }

  /** What the MX of a random label says about the wildcard MX random subdomains need. */
  async function wildcard(resolver: Resolver, domain: string): Promise<string> {
    const probe = `${randomLabel()}.${domain}`;
    const mx = (await records(() => resolver.resolveMx(probe))).map((r) => host(r.exchange));
    if (mx.length === 0) return ` Random subdomains are on, but ${probe} has no MX record: add "*.${domain}. MX 10 ${expected[0]}.".`;
    return mx.some((m) => expected.includes(m)) ? ' The wildcard MX of its random subdomains points here too.' : ` Random subdomains are on, but the MX of ${probe} names ${mx.join(', ')}.`;
  }

  return async (domain, { subdomains = false } = {}) => {
    const resolver = new Resolver({ timeout: Math.min(timeoutMs, 2000), tries: 2 });
    if (opts.servers?.length) resolver.setServers(opts.servers);
    let timer: NodeJS.Timeout | undefined;
    try {
      const deadline = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Timeout()), timeoutMs)));
      const both = Promise.all([look(resolver, domain), subdomains ? wildcard(resolver, domain) : '']);
      const [finding, extra] = await Promise.race([both, deadline]);
      return { domain, expected, ...finding, message: finding.message + extra };
    } catch (err) {
      const why = err instanceof Timeout ? `no answer within ${timeoutMs / 1000} s` : `the DNS servers answered ${(err as { code?: string }).code ?? 'with an error'}`;
      return { domain, expected, mx: [], pointsHere: false, message: `The MX records of ${domain} could not be read: ${why}.` };
    } finally {
      clearTimeout(timer);
      resolver.cancel();
    }
  };
}
