// HTTP connections open at once: HTTP_MAX_CONNECTIONS in all and
// HTTP_MAX_CONNECTIONS_PER_CLIENT from one peer (IPv4 address, IPv6 /64). Connections
// held open by the thousand otherwise took every file descriptor: /health_check was
// refused and SMTP sent no greeting (docs/security.md "HTTP connections").
//
// A connection is counted by its socket's peer, the only address known before a request:
// X-Forwarded-For comes later and is the client's word. So a proxy that TRUST_PROXY trusts
// is not capped per client (all its clients come from its address): a peer TRUST_PROXY
// lists, or with a hop count a peer on loopback or a private network, where a proxy such
// as deploy/nginx sits. The total still counts them, and the proxy caps its own clients.
//
// One over a cap is refused before Node's HTTP parser sees it: an HTTP answer written
// raw (429 past the client's cap, 503 past the total, with Retry-After), whatever the
// request, and the connection closed.
import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import ipaddr from 'ipaddr.js';
import type { HttpConfig, TrustProxy } from '../config/index.js';
import { createOpenCounter } from '../limits/open-counter.js';
import { clientKey } from './rate-limit.js';

/** HTTP_MAX_CONNECTIONS, HTTP_MAX_CONNECTIONS_PER_CLIENT and TRUST_PROXY, of the http section. */
export type ConnectionLimits = Pick<HttpConfig, 'maxConnections' | 'maxConnectionsPerClient' | 'trustProxy'>;

/** Seconds a refused client is told to wait. */
const RETRY_AFTER_SECONDS = 5;
/** How long a refused connection may take to read its answer before it is dropped. */
const REFUSED_LINGER_MS = 1000;

/** proxy-addr's names for ranges, as TRUST_PROXY accepts them. */
const NAMED_RANGES: Record<string, string[]> = {
  loopback: ['127.0.0.1/8', '::1/128'],
  linklocal: ['169.254.0.0/16', 'fe80::/10'],
  uniquelocal: ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', 'fc00::/7'],
};

type Parsed = ipaddr.IPv4 | ipaddr.IPv6;

function parseIp(ip: string): Parsed | undefined {
  if (!ipaddr.isValid(ip)) return undefined;
  const addr = ipaddr.parse(ip);
  return addr.kind() === 'ipv6' && (addr as ipaddr.IPv6).isIPv4MappedAddress() ? (addr as ipaddr.IPv6).toIPv4Address() : addr;
}

/** Whether a socket peer is a proxy that TRUST_PROXY trusts (and so is not capped per client). */
export function trustedPeer(trust: TrustProxy | undefined): (ip: string) => boolean {
  if (typeof trust === 'number') {
    if (trust < 1) return () => false;
    return (ip) => ['loopback', 'private', 'uniqueLocal'].includes(parseIp(ip)?.range() ?? '');
  }
  if (typeof trust !== 'string' && !Array.isArray(trust)) return () => false;
  const entries = (Array.isArray(trust) ? trust : [trust]).flatMap((entry) => NAMED_RANGES[entry] ?? [entry]);
  const networks = entries.map((entry): [Parsed, number] => {
    if (entry.includes('/')) return ipaddr.parseCIDR(entry);
    const addr = parseIp(entry)!;
    return [addr, addr.kind() === 'ipv4' ? 32 : 128];
  });
  return (ip) => {
    const addr = parseIp(ip);
    return addr !== undefined && networks.some(([net, bits]) => net.kind() === addr.kind() && addr.match(net, bits));
  };
}

/** Answers a refused connection raw, reads and drops what it sends, and closes it. */
function refuse(socket: Socket, status: string, message: string): void {
  socket.on('error', () => {});
  socket.resume();
  const body = `${message}\n`;
  socket.end(
    `HTTP/1.1 ${status}\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\n` +
      `retry-after: ${RETRY_AFTER_SECONDS}\r\nconnection: close\r\n\r\n${body}`,
  );
  setTimeout(() => socket.destroy(), REFUSED_LINGER_MS).unref();
}

/**
 * Puts the caps in front of the server's own connection listeners (Node's HTTP parser):
 * a connection within them is handed on, one past them is refused.
 */
export function capConnections(server: Server, limits: ConnectionLimits): { open(): number } {
  const handlers = server.listeners('connection') as ((socket: Socket) => void)[];
  server.removeAllListeners('connection');
  const perClient = createOpenCounter(limits.maxConnectionsPerClient);
  const trusted = trustedPeer(limits.trustProxy);
  let open = 0;
  server.on('connection', (socket: Socket) => {
    if (open >= limits.maxConnections) return refuse(socket, '503 Service Unavailable', 'Too many connections to this server; retry in a moment.');
    const peer = socket.remoteAddress ?? '';
    const release = trusted(peer) ? () => {} : perClient.admit(clientKey(peer));
    if (!release) {
      return refuse(socket, '429 Too Many Requests', `At most ${limits.maxConnectionsPerClient} connections may be open from one client; reuse one (keep-alive) or close one first.`);
    }
    open++;
    socket.once('close', () => {
      open--;
      release();
    });
    for (const handler of handlers) handler.call(server, socket);
  });
  return { open: () => open };
}
