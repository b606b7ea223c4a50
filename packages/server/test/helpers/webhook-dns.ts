// A real DNS server (dns2, UDP on 127.0.0.1) whose A and AAAA records a webhook test sets
// and changes, and the service's own resolver (guard.ts dnsLookup) asking it and nothing
// else: the `lookup` the service is given in place of the one that asks the system's name
// servers, so that "a name resolving to 127.0.0.1", "a name whose answer changes after
// the PUT" or "a name server that never answers" are tested without one DNS packet
// leaving the loopback range. `lookups` counts the service's look-ups.
import dns2 from 'dns2';
import { dnsLookup, type Lookup } from '../../src/webhooks/guard.js';

// DNS reply codes (RFC 1035 4.1.1): dns2 3.0's types do not declare its Packet.RCODE.
const RCODE = { SERVFAIL: 2, NXDOMAIN: 3 } as const;

const { Packet } = dns2;

export interface WebhookDns {
  /** name (lower case, no final dot) -> its addresses, IPv4 and IPv6 mixed. */
  zone: Map<string, string[]>;
  /** Names asked for and never answered. */
  silent: Set<string>;
  /** 127.0.0.1:port, as a Resolver's setServers takes it. */
  server: string;
  /** The resolver to give the service (StartOptions.webhooks.lookup). */
  lookup: Lookup;
  /** Host names the service looked up, in order. */
  lookups: string[];
  close(): Promise<void>;
}

/** `port`: 0 for any free one; 53 where a test's own network namespace has it free (and /etc/resolv.conf points there). */
export async function startWebhookDns(port = 0): Promise<WebhookDns> {
  const zone = new Map<string, string[]>();
  const silent = new Set<string>();
  const lookups: string[] = [];
  const server = dns2.createUDPServer((request, send) => {
    const [question] = request.questions;
    if (!question) return;
    const name = question.name.toLowerCase().replace(/\.$/, '');
    if (silent.has(name)) return;
    const response = Packet.createResponseFromRequest(request);
    const addresses = zone.get(name);
    if (!addresses) response.header.rcode = RCODE.NXDOMAIN;
    for (const address of addresses ?? []) {
      const v6 = address.includes(':');
      if (question.type !== (v6 ? Packet.TYPE.AAAA : Packet.TYPE.A)) continue;
      response.answers.push({ name: question.name, type: v6 ? Packet.TYPE.AAAA : Packet.TYPE.A, class: Packet.CLASS.IN, ttl: 1, address } as never);
    }
    void (send as (r: unknown) => Promise<unknown>)(response).catch(() => undefined);
  });
  await server.listen(port, '127.0.0.1');
  // The service's own resolver (guard.ts dnsLookup), asking this server only.
  const address = `127.0.0.1:${server.address().port}`;
  const resolve = dnsLookup({ servers: [address], queryTimeoutMs: 1000, tries: 1 });
  const lookup: Lookup = (host) => {
    lookups.push(host);
    return resolve(host);
  };
  return {
    zone,
    silent,
    server: address,
    lookup,
    lookups,
    async close() {
      server.close();
    },
  };
}
