// The bot challenge POST /api/new_address asks for in `cf_token`, chosen by CHALLENGE
// (docs/decisions.md "Bot challenge"): Cloudflare Turnstile (turnstile.ts), a
// self-hosted ALTCHA proof of work (proof-of-work.ts), or none.
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { ChallengeConfig } from '../config/index.js';
import { createProofOfWork, powHmacKey } from './proof-of-work.js';
import { createTurnstile } from './turnstile.js';
import { createUsedChallenges } from './used-challenges.js';
import type { Challenge } from './types.js';

export type { Challenge } from './types.js';

export function createBotChallenge(config: ChallengeConfig, deps: { sessionSecret: string; redis: Redis | undefined; keyPrefix: string; now: () => number; logger: Logger }): Challenge {
  switch (config.mode) {
    case 'turnstile':
      // loadConfig refuses CHALLENGE=turnstile without the secret.
      return createTurnstile({ secret: config.turnstileSecretKey ?? '', verifyUrl: config.turnstileVerifyUrl });
    case 'pow':
      return createProofOfWork({
        hmacKey: powHmacKey(deps.sessionSecret),
        maxNumber: config.powMaxNumber,
        ttlMs: config.powChallengeTtlMs,
        now: deps.now,
        used: createUsedChallenges({ ...(deps.redis ? { redis: deps.redis } : {}), keyPrefix: deps.keyPrefix, now: deps.now, logger: deps.logger }),
      });
    case 'off':
      return { mode: 'off', verify: async () => undefined };
  }
}
