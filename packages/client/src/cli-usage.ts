// What the parts of the `temp-inbox` command share: its exit codes, its output, the usage
// error (exit 2 with a pointer to the help) and the checks of option values.
import { parseDuration } from './duration.js';

export const EXIT = { ok: 0, error: 1, usage: 2, timeout: 3 } as const;

export interface Io {
  out(text: string): void;
  err(text: string): void;
  env: Record<string, string | undefined>;
}

/** A usage error: exit 2 with a sentence and a pointer to the help. */
export class UsageError extends Error {}

/** --timeout: the server's duration grammar (./duration.ts), in milliseconds. */
export function timeoutOption(text: string): number {
  const ms = parseDuration(text);
  if (ms === undefined) throw new UsageError(`The --timeout option takes a duration such as 30s, 500ms, 2m, 1.5h or 1d, not "${text}".`);
  return ms;
}

export function wholeNumber(name: string, text: string, min: number, max = Number.MAX_SAFE_INTEGER): number {
  if (!/^\d+$/.test(text) || Number(text) < min || Number(text) > max) throw new UsageError(`The --${name} option takes a whole number from ${min} to ${max}, not "${text}".`);
  return Number(text);
}
