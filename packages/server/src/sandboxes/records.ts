// A sandbox as the service answers it (from its stored row), and the checks of what an
// operator gives one: its name, its password and its limits (each a 400 when wrong).
import { createHash } from 'node:crypto';
import { badRequest } from '../domain/errors.js';
import { SANDBOX_NAME_RULE, sandboxName, sandboxPasswordProblem } from '../domain/sandboxes.js';
import type { SandboxRecord } from '../storage/store.js';
import { readChaos } from './chaos.js';
import type { Sandbox } from './types.js';

export const toSandbox = (r: SandboxRecord): Sandbox => ({
  id: r.id,
  name: r.name,
  addressId: r.addressId,
  address: r.address,
  maxMails: r.maxMails,
  maxBytes: r.maxBytes,
  retentionMs: r.retentionMs,
  chaos: readChaos(r.chaos),
  createdAt: r.createdAt,
  passwordStamp: createHash('sha256').update(r.passwordHash).digest('base64url').slice(0, 22),
});

/** Largest limits an operator may give a sandbox (well within a 64-bit column and a double). */
const MAX_LIMIT = 2 ** 50;

export function limit(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < 0 || value > MAX_LIMIT) throw badRequest(`${name} must be a whole number from 0 (no limit) to ${MAX_LIMIT}.`);
  return value;
}

export function checkedName(raw: string): string {
  const n = sandboxName(raw);
  if (!n) throw badRequest(`Invalid sandbox name: use ${SANDBOX_NAME_RULE}.`);
  return n;
}

export function checkedPassword(raw: string): string {
  const problem = sandboxPasswordProblem(raw);
  if (problem) throw badRequest(problem);
  return raw;
}
