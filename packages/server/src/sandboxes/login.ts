// A sandbox's SMTP login (docs/decisions.md "Sandboxes"): the password's slow hash checked in
// constant time whether the name exists (a decoy hash otherwise), each guess counted before
// the check against the client's and the login's lock-outs, and given back when it succeeds.
import { networksOf } from '../limits/attempt-limiter.js';
import { clientKey } from '../limits/window-limiter.js';
import type { FailureLock } from '../limits/failure-lock.js';
import { MAX_PASSWORD_CHARS, verifyPassword } from '../domain/passwords.js';
import { sandboxName } from '../domain/sandboxes.js';
import type { SandboxStore } from '../storage/store.js';
import { toSandbox } from './records.js';
import type { SandboxLogin } from './types.js';

export interface LoginOptions {
  store: SandboxStore;
  /** Failed logins per client (its IPv4 address or IPv6 /64) and per login name. */
  locks: { client: FailureLock; login: FailureLock };
}

export function createLogin({ store, locks }: LoginOptions): (rawName: string, pass: string, client: string) => Promise<SandboxLogin> {
  return async function login(rawName, pass, client) {
    const ck = clientKey(client);
    // The login's key: its name as stored, or what was typed (bounded) for a name that cannot exist.
    const n = sandboxName(rawName);
    const lk = n ?? rawName.toLowerCase().slice(0, 64);
    // Counted before the check (given back when it succeeds): guesses sent at once cannot overshoot.
    const [byClient, byLogin] = await Promise.all([locks.client.attempt(ck), locks.login.attempt(lk)]);
    const locked = Math.max(byClient, byLogin);
    if (locked) {
      // Refused unchecked: not a guess for the key that was not locked.
      await Promise.all([byClient ? undefined : locks.client.succeeded(ck), byLogin ? undefined : locks.login.succeeded(lk)]);
      return { ok: false, reason: 'locked', retryAfterSec: locked };
    }
    const record = n ? await store.findSandbox(n) : undefined;
    // The same work for an unknown name, a too long password and a wrong one (a decoy hash).
    const tooLong = pass.length > MAX_PASSWORD_CHARS;
    // The hash waits its network's turn in the queue (at most a few from one network), so guesses
    // from one network's many clients cannot fill the queue for every other login.
    const ok = await verifyPassword(tooLong ? '' : pass, tooLong ? undefined : record?.passwordHash, networksOf(client).network).catch(async (err: unknown) => {
      // Refused before any hash ran (the queue is full): not a guess.
      await Promise.all([locks.client.succeeded(ck), locks.login.succeeded(lk)]);
      throw err;
    });
    if (!ok || !record) return { ok: false, reason: 'wrong' } satisfies SandboxLogin;
    await Promise.all([locks.client.succeeded(ck), locks.login.succeeded(lk)]);
    return { ok: true, sandbox: toSandbox(record) };
  };
}
