// One webhook POST (docs/security.md "Webhooks"): to the addresses the guard checked and
// no other (the connection's look-up is answered with them, so the Host header and TLS
// name stay the URL's), within a deadline, following no redirect, reading at most
// MAX_RESPONSE_BYTES of the answer and throwing it away.
import { request as httpRequest, type ClientRequest, type IncomingMessage, type RequestOptions } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { createConnection as netConnect, isIP, type LookupFunction, type Socket } from 'node:net';
import { connect as tlsConnect, type ConnectionOptions } from 'node:tls';
import type { ResolvedAddress } from './guard.js';

/** The most of a receiver's answer that is read; the rest is not waited for. */
export const MAX_RESPONSE_BYTES = 64 * 1024;

export interface PostResult {
  /** The receiver's HTTP status, or null when it answered none. */
  status: number | null;
  /** 2xx. */
  ok: boolean;
  /** Why it is not ok, as a sentence; null when ok. */
  error: string | null;
  /** It ran until its deadline without an answer: the receiver holds connections open (dispatcher.ts holds such a webhook back). */
  timedOut?: boolean;
}

export interface PostRequest {
  url: URL;
  /** Checked by the guard; the connection goes to these (IPv4 first) and nowhere else. */
  addresses: ResolvedAddress[];
  headers: Record<string, string>;
  body: string;
  /** Time left for the whole exchange. */
  timeoutMs: number;
  /** POST (a webhook) unless given: the report's link check asks HEAD or GET, with no body. */
  method?: 'POST' | 'HEAD' | 'GET';
  userAgent?: string;
}

const USER_AGENT = 'temp-inbox-webhooks/1';

/**
 * A look-up that answers with the checked addresses whatever name is asked. It answers
 * on a later turn of the event loop, never inside the call: answered at once, the connect
 * ran inside http.request(), and an address the host cannot route (an IPv6 one on a host
 * without IPv6) failed there, its error emitted before the request had a listener for it,
 * which ended the process.
 */
function pinnedLookup(addresses: ResolvedAddress[]): LookupFunction {
  return (_hostname, options, callback) => {
    const cb = callback as unknown as (err: Error | null, address: string | { address: string; family: number }[], family?: number) => void;
    setImmediate(() => {
      if ((options as { all?: boolean }).all) cb(null, addresses.map((a) => ({ address: a.address, family: a.family })));
      else cb(null, addresses[0]!.address, addresses[0]!.family);
    });
  };
}

function describeError(err: NodeJS.ErrnoException): string {
  switch (err.code) {
    case 'ECONNREFUSED':
      return 'The connection was refused.';
    case 'ECONNRESET':
    case 'EPIPE':
      return 'The receiver closed the connection before answering.';
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
    case 'EADDRNOTAVAIL':
      // Most often an address family this server has no route for (an IPv6 address on a host without IPv6).
      return `The receiver's address could not be reached from this server (${err.code}).`;
    default:
      if (err.code?.startsWith('ERR_TLS') || /CERT|SSL|TLS/.test(err.code ?? '')) return `The TLS handshake failed (${err.code}).`;
      return err.code ? `The request failed (${err.code}).` : 'The request failed.';
  }
}

/**
 * The connection for one request, made here rather than by an agent so that its socket
 * has an error listener from the moment it exists: whatever fails, and whenever, ends
 * this attempt and nothing else.
 */
function connector(tls: boolean, onError: (err: NodeJS.ErrnoException) => void, made: (socket: Socket) => void): NonNullable<RequestOptions['createConnection']> {
  return (opts) => {
    const host = String(opts.host ?? '');
    // As https.Agent does: the URL's name is the TLS server name (SNI), an IP address none.
    const socket: Socket = tls ? tlsConnect({ ...(opts as ConnectionOptions), servername: isIP(host) ? '' : host }) : netConnect(opts as Parameters<typeof netConnect>[0]);
    socket.on('error', onError);
    made(socket);
    return socket;
  };
}

export function postWebhook(req: PostRequest): Promise<PostResult> {
  return new Promise((resolve) => {
    let settled = false;
    let request: ClientRequest | undefined;
    let response: IncomingMessage | undefined;
    let socket: Socket | undefined;
    const finish = (result: PostResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      // Whatever is left of the exchange (an endless body, a half-open socket) is dropped.
      response?.destroy();
      request?.destroy();
      socket?.destroy();
      resolve(result);
    };
    const answered = (status: number): PostResult => {
      if (status >= 200 && status < 300) return { status, ok: true, error: null };
      if (status >= 300 && status < 400) return { status, ok: false, error: `The receiver answered ${status}, a redirect; redirects are not followed.` };
      return { status, ok: false, error: `The receiver answered ${status}.` };
    };
    const failed = (err: NodeJS.ErrnoException) => {
      if (response) finish(answered(response.statusCode ?? 0));
      else finish({ status: null, ok: false, error: describeError(err) });
    };
    const timer = setTimeout(() => {
      if (response) finish(answered(response.statusCode ?? 0));
      else finish({ status: null, ok: false, error: `No answer within ${Math.round(req.timeoutMs / 100) / 10} s.`, timedOut: true });
    }, Math.max(0, req.timeoutMs));

    const tls = req.url.protocol === 'https:';
    try {
      const method = req.method ?? 'POST';
      const bodyHeaders: Record<string, string> = method === 'POST' ? { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(req.body)) } : {};
      const options: RequestOptions & { autoSelectFamily: boolean } = {
        method,
        headers: { ...req.headers, ...bodyHeaders, 'user-agent': req.userAgent ?? USER_AGENT },
        lookup: pinnedLookup(req.addresses),
        // Every checked address is tried (IPv4 first), as for any name with several.
        autoSelectFamily: true,
        // A connection of its own for each attempt (no agent): nothing is reused from a look-up made for another.
        createConnection: connector(tls, failed, (s) => (socket = s)),
        maxHeaderSize: 16 * 1024,
      };
      request = (tls ? httpsRequest : httpRequest)(req.url, options);
      request.on('error', failed);
      request.on('response', (res) => {
        response = res;
        const result = answered(res.statusCode ?? 0);
        let read = 0;
        res.on('data', (chunk: Buffer) => {
          read += chunk.length;
          if (read >= MAX_RESPONSE_BYTES) finish(result);
        });
        res.on('end', () => finish(result));
        res.on('error', () => finish(result));
        res.on('close', () => finish(result));
      });
      request.end(method === 'POST' ? req.body : undefined);
    } catch (err) {
      failed(err as NodeJS.ErrnoException);
    }
  });
}
