// Cloudflare Turnstile (CHALLENGE=turnstile; docs/decisions.md "Bot challenge"): a form
// POST of secret, response and remoteip; rejected or missing -> 400; verifier
// unreachable, failing or slower than 5 s -> 503 (fail closed).
import { badRequest, unavailable } from '../domain/errors.js';
import type { Challenge } from './types.js';

export function createTurnstile(opts: { secret: string; verifyUrl: string; timeoutMs?: number }): Challenge {
  const timeoutMs = opts.timeoutMs ?? 5000;
  return {
    mode: 'turnstile',
    async verify(token, remoteIp) {
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
