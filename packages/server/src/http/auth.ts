// Credentials (docs/api.md "Authentication"; docs/decisions.md "JWT", "Cookies").
import { fastifyCookie } from '@fastify/cookie';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { unauthorized } from '../domain/errors.js';
import { JWT_LIFETIME_SECONDS } from '../domain/tokens.js';
import type { AuthenticatedAddress, MailService } from '../mail/service.js';
import { SESSION_LIFETIME_SECONDS } from '../sessions/service.js';

const BEARER_RE = /^Bearer ([A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+)$/;

/**
 * The address the request is authenticated as. The header must be exactly
 * `Authorization: Bearer <jwt>`; any other header value is 401 even when a valid
 * cookie is sent too. Without the header, the `jwt` cookie is accepted.
 */
export async function authenticate(request: FastifyRequest, mail: MailService): Promise<AuthenticatedAddress> {
  return mail.authenticate(credentialOf(request));
}

/** The JWT the request carries (see authenticate), or a 401. */
export function credentialOf(request: FastifyRequest): string {
  const header = request.headers.authorization;
  let token: string | undefined;
  if (header !== undefined) {
    token = BEARER_RE.exec(header)?.[1];
    if (!token) throw unauthorized('Malformed Authorization header; send exactly "Authorization: Bearer <jwt>".');
  } else {
    token = cookieOf(request, 'jwt');
    if (!token) throw unauthorized('Missing credentials; send "Authorization: Bearer <jwt>".');
  }
  return token;
}

/**
 * A request cookie. Routes registered with @fastify/cookie have parsed them already;
 * the mail routes, which take a Bearer header far more often, parse only here, with the
 * plugin's own parser (one cookie grammar for both).
 */
function cookieOf(request: FastifyRequest, name: string): string | undefined {
  const parsed = (request as { cookies?: Record<string, string | undefined> | null }).cookies;
  if (parsed) return parsed[name];
  const header = request.headers.cookie;
  return header === undefined ? undefined : fastifyCookie.parse(header)[name];
}

const cookieBase = (request: FastifyRequest) => ({ httpOnly: true, sameSite: 'lax' as const, path: '/', secure: request.protocol === 'https' });

export function setJwtCookie(request: FastifyRequest, reply: FastifyReply, jwt: string): void {
  reply.setCookie('jwt', jwt, { ...cookieBase(request), maxAge: JWT_LIFETIME_SECONDS });
}

export function setSessionCookie(request: FastifyRequest, reply: FastifyReply, sessionId: string): void {
  reply.setCookie('session_id', sessionId, { ...cookieBase(request), maxAge: SESSION_LIFETIME_SECONDS, signed: true });
}

/** Whether the request's `jwt` cookie holds exactly this token. */
export function jwtCookieIs(request: FastifyRequest, token: string): boolean {
  return cookieOf(request, 'jwt') === token;
}

export function clearJwtCookie(request: FastifyRequest, reply: FastifyReply): void {
  reply.clearCookie('jwt', cookieBase(request));
}

export function clearAuthCookies(request: FastifyRequest, reply: FastifyReply): void {
  reply.clearCookie('jwt', cookieBase(request));
  reply.clearCookie('session_id', cookieBase(request));
}

/** The session id of a correctly signed session_id cookie, or undefined (missing or forged). */
export function sessionIdOf(request: FastifyRequest): string | undefined {
  const value = request.cookies['session_id'];
  if (!value) return undefined;
  const unsigned = request.unsignCookie(value);
  return unsigned.valid && unsigned.value ? unsigned.value : undefined;
}
