// Bot challenge for POST /api/new_address (docs/decisions.md "Bot challenge"): a form
// POST of secret, response and remoteip; rejected or missing -> 400; verifier
// unreachable, failing or slower than 5 s -> 503 (fail closed).
import { badRequest, unavailable } from '../domain/errors.js';

export interface Challenge {
  readonly enabled: boolean;
  verify(token: string | undefined, remoteIp: string): Promise<void>;
}

export function createChallenge(opts: { secret: string | undefined; verifyUrl: string; timeoutMs?: number }): Challenge {
  const timeoutMs = opts.timeoutMs ?? 5000;
  return {
    enabled: opts.secret !== undefined,
    async verify(token, remoteIp) {
      if (opts.secret === undefined) return;
      if (!token) throw badRequest('Missing cf_token: this server requires a bot-challenge token to create addresses.');
      let outcome: { success?: unknown };
      try {
        const res = await fetch(opts.verifyUrl, {
          method: 'POST',
          body: new URLSearchParams({ secret: opts.secret, response: token, remoteip: remoteIp }),
          signal: AbortSignal.timeout(timeoutMs),
        });
        if (!res.ok) throw new Error(`verifier answered ${res.status}`);
        outcome = (await res.json()) as { success?: unknown };
      } catch {
        throw unavailable('The bot-challenge verifier could not be reached; try again shortly.');
      }
      if (outcome.success !== true) throw badRequest('The bot-challenge token was rejected; solve the challenge again.');
    },
  };
}
