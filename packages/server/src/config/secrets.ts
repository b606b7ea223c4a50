// JWT_SECRET and SESSION_SECRET default to values generated once and kept in
// DATA_DIR, so tokens and sessions survive a restart without any set-up.
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface Secrets {
  jwtSecret: string;
  sessionSecret: string;
}

/** Fewer different characters than this in a secret is a trivial one ("aaaa…", "abab…"). */
export const MIN_DISTINCT_CHARS = 6;

/** What a refused secret's line says of one that is long enough but trivial. */
export const WEAK_SECRET_HINT = `not trivially weak: at least ${MIN_DISTINCT_CHARS} different characters, no repeated pattern or run, such as the output of openssl rand -hex 32`;

/** Whether `values` repeats a unit of at most half its length ("abcabcab…"). */
function periodic(values: readonly number[]): boolean {
  for (let p = 1; p <= values.length / 2; p++) {
    let i = p;
    while (i < values.length && values[i] === values[i - p]) i++;
    if (i === values.length) return true;
  }
  return false;
}

/**
 * Whether a secret is trivially guessable, whatever its length: fewer than
 * MIN_DISTINCT_CHARS different characters, a repeated pattern ("abcabc…",
 * "a1b2c3…"), or mostly runs ("abcdefghijklmnopqrstuvwxyz…", "0246…"). A random
 * value (openssl rand -hex 16, the generated ones below) is refused with a chance
 * below 1 in 10^12.
 */
export function isWeakSecret(secret: string): boolean {
  const codes = [...secret].map((c) => c.codePointAt(0)!);
  if (new Set(codes).size < MIN_DISTINCT_CHARS) return true;
  const steps = codes.slice(1).map((c, i) => c - codes[i]!);
  const sameStep = steps.filter((d, i) => i > 0 && d === steps[i - 1]).length;
  return periodic(codes) || periodic(steps) || sameStep * 2 >= steps.length - 1;
}

export function resolveSecrets(dataDir: string, given: Partial<Secrets>): Secrets {
  if (given.jwtSecret && given.sessionSecret) return { jwtSecret: given.jwtSecret, sessionSecret: given.sessionSecret };
  const file = join(dataDir, 'secrets.json');
  let stored: Partial<Secrets> = {};
  try {
    stored = JSON.parse(readFileSync(file, 'utf8')) as Partial<Secrets>;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw new Error(`Cannot read ${file}: ${(err as Error).message}`);
  }
  const secrets: Secrets = {
    jwtSecret: stored.jwtSecret ?? randomBytes(32).toString('base64url'),
    sessionSecret: stored.sessionSecret ?? randomBytes(32).toString('base64url'),
  };
  if (stored.jwtSecret !== secrets.jwtSecret || stored.sessionSecret !== secrets.sessionSecret) {
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    writeFileSync(file, JSON.stringify(secrets, null, 2) + '\n', { mode: 0o600 });
  }
  return { jwtSecret: given.jwtSecret ?? secrets.jwtSecret, sessionSecret: given.sessionSecret ?? secrets.sessionSecret };
}
