// Query parameters. Integers arrive as strings. docs/decisions.md: integers only,
// "anything else is 400" — so plain decimal digits ("0x10", " 1e1", "Infinity" are
// refused), converted before the route's schema checks presence and range. Text
// filters are bounded (docs/api.md, GET /api/mails/wait).
import type { FastifyRequest, preValidationAsyncHookHandler } from 'fastify';
import { badRequest } from '../domain/errors.js';

export function strictIntegers(...keys: string[]): preValidationAsyncHookHandler {
  return async (request) => {
    const query = request.query as Record<string, unknown>;
    for (const key of keys) {
      const value = query[key];
      if (typeof value !== 'string') continue;
      if (!/^\d+$/.test(value) || !Number.isFinite(Number(value))) throw badRequest(`Invalid request: ${key} must be a whole number.`);
      query[key] = Number(value);
    }
  };
}

/**
 * Text parameters of at most `max` characters, each given once; anything else is a 400
 * that says which parameter and why (rather than the schema validator's wording).
 */
export function boundedStrings(max: number, ...keys: string[]): preValidationAsyncHookHandler {
  return async (request) => {
    const query = request.query as Record<string, unknown>;
    for (const key of keys) {
      const value = query[key];
      if (value === undefined) continue;
      if (typeof value !== 'string') throw badRequest(`Invalid request: give ${key} once.`);
      if (value.length > max) throw badRequest(`Invalid request: ${key} must be at most ${max} characters.`);
    }
  };
}

/**
 * `start` and `limit` of a compatible API's list (Mailpit's, MailHog's): whole numbers,
 * `limit` taken as at most `maxLimit`, missing or 0 as `defaultLimit`.
 */
export function pageOf(request: FastifyRequest, defaultLimit: number, maxLimit: number): { start: number; limit: number } {
  const query = request.query as Record<string, unknown>;
  const integer = (key: string, fallback: number): number => {
    const v = query[key];
    if (v === undefined || v === '') return fallback;
    if (typeof v !== 'string' || !/^\d{1,15}$/.test(v)) throw badRequest(`${key} must be a whole number.`);
    return Number(v);
  };
  return { start: integer('start', 0), limit: Math.min(integer('limit', defaultLimit), maxLimit) || defaultLimit };
}
