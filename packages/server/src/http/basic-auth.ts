// HTTP Basic authentication as a sandbox (the Mailpit- and MailHog-compatible APIs;
// docs/api.md "Moving from Mailpit or MailHog"): the sandbox's name and password, checked
// by SandboxService.login (a slow hash in constant time, with its lock-out). A client that
// polls would pay a slow hash on every request (0.1 s of a thread each, two at once per
// node), so a login that succeeded is remembered for LOGIN_MEMORY_MS as an HMAC of the
// name and password under a key of this process: a request with the same pair is compared
// against it in constant time instead, while the sandbox (read again each time) still has
// the password it had then. A wrong pair is never remembered; it always goes through login
// and counts towards the lock-out.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { FastifyRequest, onRequestAsyncHookHandler, RouteShorthandOptions } from 'fastify';
import type { TSchema } from '@sinclair/typebox';
import type { RateLimitRoute } from '../config/index.js';
import { AppError } from '../domain/errors.js';
import type { Sandbox, SandboxService } from '../sandboxes/types.js';
import { clientKey } from './rate-limit.js';

/** How long a successful login is taken again without the slow hash (a changed password ends it at once: passwordStamp). */
export const LOGIN_MEMORY_MS = 30_000;
/** Logins remembered at most (each a few hundred bytes). */
const LOGINS_REMEMBERED = 10_000;
/** Longest Authorization header read; a name and a password of their longest fit (1024 characters each, UTF-8, base64). */
const MAX_HEADER_CHARS = 12_000;

/** A 401 that asks for Basic credentials (WWW-Authenticate), in plain text like every error. */
export class BasicAuthRequired extends AppError {
  constructor(message: string) {
    super('unauthorized', message);
  }
}

export interface BasicAuth {
  /** The sandbox the request's credentials open; BasicAuthRequired (401) or a 429 with Retry-After otherwise. */
  sandboxOf(request: FastifyRequest): Promise<Sandbox>;
}

/** The name and password of an `Authorization: Basic` header, or undefined when there is none or it is malformed. */
export function basicCredentials(header: string | undefined): { name: string; password: string } | undefined {
  if (header === undefined || header.length > MAX_HEADER_CHARS) return undefined;
  const m = /^Basic[ \t]+([A-Za-z0-9+/]+={0,2})[ \t]*$/i.exec(header);
  if (!m) return undefined;
  const decoded = Buffer.from(m[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return undefined;
  return { name: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

export function createBasicAuth(sandboxes: SandboxService): BasicAuth {
  const key = randomBytes(32);
  const remembered = new LRUCache<string, { mac: Buffer; sandboxId: number; passwordStamp: string }>({ max: LOGINS_REMEMBERED, ttl: LOGIN_MEMORY_MS, ttlResolution: 1000 });
  const macOf = (name: string, password: string) => createHmac('sha256', key).update(name).update('\0').update(password).digest();
  const ask = "Send the sandbox's name and password with HTTP Basic authentication.";

  return {
    async sandboxOf(request) {
      const given = basicCredentials(request.headers.authorization);
      if (!given) throw new BasicAuthRequired(request.headers.authorization === undefined ? ask : `Malformed Authorization header. ${ask}`);
      const name = given.name.toLowerCase();
      const mac = macOf(name, given.password);
      const known = remembered.get(name);
      if (known && timingSafeEqual(known.mac, mac)) {
        const sandbox = await sandboxes.get(known.sandboxId);
        if (sandbox && sandbox.name === name && sandbox.passwordStamp === known.passwordStamp) return sandbox;
        remembered.delete(name);
      }
      const login = await sandboxes.login(name, given.password, clientKey(request.ip));
      if (login.ok) {
        remembered.set(name, { mac, sandboxId: login.sandbox.id, passwordStamp: login.sandbox.passwordStamp });
        return login.sandbox;
      }
      if (login.reason === 'locked') throw new AppError('rate_limited', 'Too many wrong passwords; wait before trying again.', login.retryAfterSec ?? 60);
      throw new BasicAuthRequired(`Wrong sandbox name or password. ${ask}`);
    },
  };
}

const opened = new WeakMap<FastifyRequest, Sandbox>();

/** The onRequest hook that opens the request's sandbox, or answers 401 with WWW-Authenticate. */
export function sandboxHook(auth: BasicAuth, realm: string): onRequestAsyncHookHandler {
  return async (request, reply) => {
    try {
      opened.set(request, await auth.sandboxOf(request));
    } catch (err) {
      if (err instanceof BasicAuthRequired) reply.header('www-authenticate', `Basic realm="${realm}", charset="UTF-8"`);
      throw err;
    }
  };
}

/** The sandbox the request's credentials opened (its route's onRequest ran sandboxHook). */
export function sandboxOf(request: FastifyRequest): Sandbox {
  const sandbox = opened.get(request);
  if (!sandbox) throw new BasicAuthRequired('Send the sandbox name and password with HTTP Basic authentication.');
  return sandbox;
}

/** The options of a route: hidden from our OpenAPI document, rate-limited, then authenticated. */
export function routeOptions(rateLimit: RateLimitRoute, hook: onRequestAsyncHookHandler, extra: Partial<RouteShorthandOptions> = {}): RouteShorthandOptions {
  return { schema: { hide: true }, config: { rateLimit }, onRequest: hook, ...extra };
}

/** A route's options with the schema of its 200 answer (@temp-inbox/api), still left out of the OpenAPI document. */
export function answering(opts: RouteShorthandOptions, schema: TSchema): RouteShorthandOptions {
  return { ...opts, schema: { ...opts.schema, response: { 200: schema } } };
}
