// One webhook POST (docs/security.md "Webhooks"): to the addresses the guard checked and
// no other (the connection's look-up is answered with them, so the Host header and TLS
// name stay the URL's), within a deadline, following no redirect, reading at most
// MAX_RESPONSE_BYTES of the answer and throwing it away.
import { request as httpRequest, type ClientRequest, type IncomingMessage, type RequestOptions } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
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
}

export interface PostRequest {
  url: URL;
  /** Checked by the guard; the connection goes to these (IPv4 first) and nowhere else. */
  addresses: ResolvedAddress[];
  headers: Record<string, string>;
  body: string;
  /** Time left for the whole exchange. */
  timeoutMs: number;
}

const USER_AGENT = 'temp-inbox-webhooks/1';

/** A look-up that answers with the checked addresses whatever name is asked. */
function pinnedLookup(addresses: ResolvedAddress[]): LookupFunction {
  return (_hostname, options, callback) => {
    const cb = callback as unknown as (err: Error | null, address: string | { address: string; family: number }[], family?: number) => void;
    if ((options as { all?: boolean }).all) cb(null, addresses.map((a) => ({ address: a.address, family: a.family })));
    else cb(null, addresses[0]!.address, addresses[0]!.family);
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
      return 'The receiver could not be reached.';
    default:
      if (err.code?.startsWith('ERR_TLS') || /CERT|SSL|TLS/.test(err.code ?? '')) return `The TLS handshake failed (${err.code}).`;
      return err.code ? `The request failed (${err.code}).` : 'The request failed.';
  }
}

export function postWebhook(req: PostRequest): Promise<PostResult> {
  return new Promise((resolve) => {
    let settled = false;
    let request: ClientRequest | undefined;
    let response: IncomingMessage | undefined;
    const finish = (result: PostResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      // Whatever is left of the exchange (an endless body, a half-open socket) is dropped.
      response?.destroy();
      request?.destroy();
      resolve(result);
    };
    const answered = (status: number): PostResult => {
      if (status >= 200 && status < 300) return { status, ok: true, error: null };
      if (status >= 300 && status < 400) return { status, ok: false, error: `The receiver answered ${status}, a redirect; redirects are not followed.` };
      return { status, ok: false, error: `The receiver answered ${status}.` };
    };
    const timer = setTimeout(() => {
      if (response) finish(answered(response.statusCode ?? 0));
      else finish({ status: null, ok: false, error: `No answer within ${Math.round(req.timeoutMs / 100) / 10} s.` });
    }, Math.max(0, req.timeoutMs));

    const send = req.url.protocol === 'https:' ? httpsRequest : httpRequest;
    try {
      const options: RequestOptions & { autoSelectFamily: boolean } = {
        method: 'POST',
        headers: { ...req.headers, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(req.body)), 'user-agent': USER_AGENT },
        lookup: pinnedLookup(req.addresses),
        // Every checked address is tried (IPv4 first), as for any name with several.
        autoSelectFamily: true,
        // A connection of its own for each attempt: nothing is reused from a look-up made for another.
        agent: false,
        maxHeaderSize: 16 * 1024,
      };
      request = send(req.url, options);
    } catch (err) {
      finish({ status: null, ok: false, error: describeError(err as NodeJS.ErrnoException) });
      return;
    }
    request.on('error', (err: NodeJS.ErrnoException) => {
      if (response) finish(answered(response.statusCode ?? 0));
      else finish({ status: null, ok: false, error: describeError(err) });
    });
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
    request.end(req.body);
  });
}
