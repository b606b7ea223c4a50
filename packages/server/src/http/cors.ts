// Cross-origin access from browsers (CORS_ORIGINS; docs/decisions.md "CORS"), through
// @fastify/cors. Unset (the default): nothing is registered, so no response carries a
// CORS header and a preflight is a 404: browsers refuse every cross-origin read.
// `*`: any origin, never with credentials (browsers then send no cookie, and a page
// must use a Bearer token). A list: exactly those origins, each answered with its own
// origin and `Vary: Origin`, with credentials (the jwt cookie); any other origin gets
// no CORS header and its preflight a 404, as when CORS is off.
import cors from '@fastify/cors';
import type { FastifyInstance } from 'fastify';
import type { CorsOrigins } from '../config/index.js';

/** What a page may send: the token, a JSON body, EventSource's reconnect id. */
const ALLOWED_HEADERS = ['authorization', 'content-type', 'last-event-id'];
/** What a page may read besides the simple headers: when to retry after a 429 or 503, the request id, an attachment's file name. */
export const EXPOSED_HEADERS = ['retry-after', 'x-request-id', 'content-disposition'];
/** How long a browser may reuse a preflight's answer (seconds). */
const PREFLIGHT_MAX_AGE = 600;

export async function registerCors(app: FastifyInstance, origins: CorsOrigins | undefined): Promise<void> {
  if (origins === undefined) return;
  const listed = origins === '*' ? undefined : new Set(origins);
  await app.register(cors, {
    origin: listed ? (origin, cb) => cb(null, origin !== undefined && listed.has(origin) ? origin : false) : '*',
    credentials: listed !== undefined,
    // Every method a route takes: PATCH marks mail read (and mail.tm's messages seen), PUT sets a webhook.
    methods: ['GET', 'HEAD', 'POST', 'PATCH', 'PUT', 'DELETE'],
    allowedHeaders: ALLOWED_HEADERS,
    exposedHeaders: EXPOSED_HEADERS,
    maxAge: PREFLIGHT_MAX_AGE,
  });
}
