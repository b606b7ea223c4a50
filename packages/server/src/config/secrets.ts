// JWT_SECRET and SESSION_SECRET default to values generated once and kept in
// DATA_DIR, so tokens and sessions survive a restart without any set-up.
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface Secrets {
  jwtSecret: string;
  sessionSecret: string;
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
