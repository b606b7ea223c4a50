// What the route groups of /api/admin/* are registered with (admin.ts), and what their
// declarations share: the schema's error answers and the path ids' checks.
import type { FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import type { AdminService } from '../../admin/service.js';
import { badRequest } from '../../domain/errors.js';
import { errorResponse } from '../errors.js';

export interface AdminRouteOptions {
  admin: AdminService;
  /** The admin token's check, the onRequest hook of every admin route. */
  route: { onRequest: onRequestAsyncHookHandler };
  /** Names the action a request performs; the returned entry is logged when its answer is sent. */
  act(request: FastifyRequest, action: string, details?: Record<string, unknown>): Record<string, unknown>;
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A path id: a positive whole number, else a 400 (docs/decisions.md "Admin"). */
export function idOf(raw: string, what: string): number {
  const id = /^[1-9]\d{0,15}$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isSafeInteger(id)) throw badRequest(`Invalid ${what} id: a positive whole number.`);
  return id;
}

export function uuidOf(raw: string): string {
  if (!UUID_RE.test(raw)) throw badRequest('Invalid mail uuid.');
  return raw.toLowerCase();
}

export const iso = (ms: number) => new Date(ms).toISOString();

export const tags = ['admin'];
// The admin routes stay out of the public OpenAPI document; docs/api.md describes them.
export const hide = true;
export const unauthorizedResponse = errorResponse('Missing or wrong admin token.');
export const rateLimited = errorResponse('Rate limit exceeded; see Retry-After.');
export const badInput = (what: string) => errorResponse(what);
