// A sandbox's chaos settings (docs/api.md "Sandboxes"): checked once when they are set,
// so that SMTP reads only well-formed faults. Mailpit's triggers (Sender, Recipient,
// Authentication) and ours (DATA, a delay, a disconnect).
import { badRequest } from '../domain/errors.js';
import type { ChaosConfig, ChaosTrigger } from './types.js';

/** Longest delay a sandbox's chaos may put before each reply (as smtp/auth.ts MAX_CHAOS_DELAY_MS). */
export const MAX_CHAOS_DELAY_MS = 30_000;

const STAGES = ['authentication', 'sender', 'recipient', 'data'] as const;
const KEYS = new Set<string>([...STAGES, 'delayMs', 'disconnectProbability']);

const percent = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v) && v >= 0 && v <= 100;

function trigger(name: string, v: unknown): ChaosTrigger | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'object' || Array.isArray(v)) throw badRequest(`chaos.${name} must be an object {errorCode, probability}.`);
  const { errorCode, probability, ...rest } = v as Record<string, unknown>;
  if (Object.keys(rest).length) throw badRequest(`chaos.${name} has an unknown field "${Object.keys(rest)[0]!.slice(0, 40)}".`);
  if (typeof errorCode !== 'number' || !Number.isInteger(errorCode) || errorCode < 400 || errorCode > 599) {
    throw badRequest(`chaos.${name}.errorCode must be an SMTP reply code from 400 to 599.`);
  }
  if (!percent(probability)) throw badRequest(`chaos.${name}.probability must be a number from 0 to 100 (percent).`);
  // A trigger that never fires is no trigger.
  return probability === 0 ? undefined : { errorCode, probability };
}

/** The chaos settings a client sent, checked; throws a 400 that says what is wrong. */
export function checkChaos(input: unknown): ChaosConfig {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) throw badRequest('The chaos settings must be a JSON object.');
  const raw = input as Record<string, unknown>;
  const unknown = Object.keys(raw).find((k) => !KEYS.has(k));
  if (unknown !== undefined) throw badRequest(`Unknown chaos setting "${unknown.slice(0, 40)}"; known: ${[...KEYS].join(', ')}.`);
  const out: ChaosConfig = {};
  for (const stage of STAGES) {
    const t = trigger(stage, raw[stage]);
    if (t) out[stage] = t;
  }
  const { delayMs, disconnectProbability } = raw;
  if (delayMs !== undefined && delayMs !== null) {
    if (typeof delayMs !== 'number' || !Number.isInteger(delayMs) || delayMs < 0 || delayMs > MAX_CHAOS_DELAY_MS) {
      throw badRequest(`chaos.delayMs must be a whole number of milliseconds from 0 to ${MAX_CHAOS_DELAY_MS}.`);
    }
    if (delayMs > 0) out.delayMs = delayMs;
  }
  if (disconnectProbability !== undefined && disconnectProbability !== null) {
    if (!percent(disconnectProbability)) throw badRequest('chaos.disconnectProbability must be a number from 0 to 100 (percent).');
    if (disconnectProbability > 0) out.disconnectProbability = disconnectProbability;
  }
  return out;
}

/** Stored chaos text back to settings; anything unreadable is no chaos. */
export function readChaos(text: string): ChaosConfig {
  try {
    return checkChaos(JSON.parse(text));
  } catch {
    return {};
  }
}
