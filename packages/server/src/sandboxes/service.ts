// The sandboxes service (docs/decisions.md "Sandboxes"): SMTP logins whose mail is captured
// into an address of their own, <name>@sandbox.invalid, which unauthenticated SMTP never
// reaches (it is in no domain pool). Every route of an address then works on a sandbox's
// mail unchanged. Passwords are slow hashes (domain/passwords.ts), checked in constant
// time whether the name exists, behind a lock-out per client and per login.
import { createHash } from 'node:crypto';
import { networksOf } from '../limits/attempt-limiter.js';
import { clientKey } from '../limits/window-limiter.js';
import type { FailureLock } from '../limits/failure-lock.js';
import { badRequest } from '../domain/errors.js';
import { hashPassword, MAX_PASSWORD_CHARS, prepareDecoy, verifyPassword } from '../domain/passwords.js';
import { SANDBOX_DOMAIN, SANDBOX_NAME_RULE, sandboxName, sandboxPasswordProblem } from '../domain/sandboxes.js';
import type { EventBus } from '../mail/events/events.js';
import { MessageBuffer } from '../mail/message-buffer.js';
import type { ReceivedTrace } from '../mail/received.js';
import type { MailService } from '../mail/service.js';
import type { SandboxRecord, SandboxStore } from '../storage/store.js';
import { checkChaos, readChaos } from './chaos.js';
import type { ChaosConfig, Sandbox, SandboxEnvelope, SandboxLogin, SandboxService } from './types.js';

/** Limits of a sandbox created without its own (SANDBOX_MAX_MAILS, SANDBOX_MAX_BYTES, SANDBOX_RETENTION). */
export interface SandboxDefaults {
  maxMails: number;
  maxBytes: number;
  retentionMs: number;
}

export interface SandboxServiceOptions {
  store: SandboxStore;
  mail: Pick<MailService, 'deliver' | 'deleteAddress' | 'tokenFor'>;
  defaults: SandboxDefaults;
  /** Failed logins per client (its IPv4 address or IPv6 /64) and per login name. */
  locks: { client: FailureLock; login: FailureLock };
  /** Announces the mails a quota removed. */
  bus?: EventBus | undefined;
  /** Largest message stored through store() (MAX_MESSAGE_BYTES). */
  maxMessageBytes: number;
  hostname: string;
  now?: () => number;
  /** How long this node trusts its knowledge that sandboxes exist (other nodes may create the first). */
  recheckMs?: number;
}

/** The SMTP trace of a captured message, as the receiver gives it. */
export type CaptureTrace = Omit<ReceivedTrace, 'recipient' | 'id' | 'date'>;

export interface SandboxesService extends SandboxService {
  /** Whether AUTH is offered: what this node last read (re-read in the background every few seconds). */
  offered(): boolean;
  /** The sandbox as it is now (its chaos), read at each SMTP transaction. */
  current(id: number): Promise<Sandbox | undefined>;
  /** Stores one message captured by SMTP (smtp/sink.ts). */
  capture(sandbox: Pick<Sandbox, 'id'>, message: MessageBuffer, envelope: SandboxEnvelope, client: string, trace: CaptureTrace): Promise<string>;
  /** SANDBOXES at start-up: creates each, or sets its password (its mail and limits are kept). */
  apply(list: { name: string; password: string }[]): Promise<Sandbox[]>;
}

const toSandbox = (r: SandboxRecord): Sandbox => ({
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

function limit(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < 0 || value > MAX_LIMIT) throw badRequest(`${name} must be a whole number from 0 (no limit) to ${MAX_LIMIT}.`);
  return value;
}

export function createSandboxService(opts: SandboxServiceOptions): SandboxesService {
  const { store, mail, locks } = opts;
  const now = opts.now ?? Date.now;
  // Built now, so that the first unknown-name login takes one hash like any other (a failure is retried then).
  prepareDecoy().catch(() => undefined);
  const recheckMs = opts.recheckMs ?? 5000;
  let known = false;
  let checkedAt = -Infinity;
  let counting: Promise<void> | undefined;

  const recount = (): Promise<void> =>
    (counting ??= store
      .countSandboxes()
      .then(
        (n) => {
          known = n > 0;
          checkedAt = performance.now();
        },
        // A failed count keeps what was known; the next connection asks again.
        () => undefined,
      )
      .finally(() => {
        counting = undefined;
      }));

  const name = (raw: string): string => {
    const n = sandboxName(raw);
    if (!n) throw badRequest(`Invalid sandbox name: use ${SANDBOX_NAME_RULE}.`);
    return n;
  };
  const password = (raw: string): string => {
    const problem = sandboxPasswordProblem(raw);
    if (problem) throw badRequest(problem);
    return raw;
  };

  async function put(input: Parameters<SandboxService['put']>[0]): Promise<Sandbox> {
    const n = name(input.name);
    const hash = await hashPassword(password(input.password));
    const existing = await store.findSandbox(n);
    const base = existing ?? opts.defaults;
    const record = await store.putSandbox({
      name: n,
      address: `${n}@${SANDBOX_DOMAIN}`,
      passwordHash: hash,
      maxMails: limit('maxMails', input.maxMails, base.maxMails),
      maxBytes: limit('maxBytes', input.maxBytes, base.maxBytes),
      retentionMs: limit('retentionMs', input.retentionMs, base.retentionMs),
      at: now(),
    });
    await recount();
    return toSandbox(record);
  }

  async function get(id: number): Promise<Sandbox | undefined> {
    const r = await store.getSandbox(id);
    return r && toSandbox(r);
  }

  async function store1(sandboxId: number, message: MessageBuffer, envelope: SandboxEnvelope, client: string, trace: CaptureTrace): Promise<string> {
    const record = await store.getSandbox(sandboxId);
    if (!record) throw badRequest('No such sandbox.');
    const [delivered] = await mail.deliver({
      sender: envelope.from,
      recipients: [{ id: record.addressId, address: record.address, createdAt: record.createdAt, rcpt: record.address }],
      message,
      client,
      trace,
      capture: { from: envelope.from, to: envelope.to },
    });
    // Past its quota the oldest mails go, as Mailpit's max messages does; the newest always stays.
    if (record.maxMails > 0 || record.maxBytes > 0) {
      const removed = await store.trimMails(record.addressId, record.maxMails, record.maxBytes);
      for (const uuid of removed) opts.bus?.publish(record.addressId, { type: 'mail_deleted', uuid });
    }
    return delivered!.uuid;
  }

  return {
    async any() {
      await recount();
      return known;
    },
    offered() {
      if (performance.now() - checkedAt > recheckMs) void recount();
      return known;
    },
    async login(rawName, pass, client) {
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
    },
    get,
    current: get,
    async findByName(raw) {
      const n = sandboxName(raw);
      const r = n ? await store.findSandbox(n) : undefined;
      return r && toSandbox(r);
    },
    async list() {
      return (await store.listSandboxes()).map(toSandbox);
    },
    put,
    async setPassword(id, pass) {
      const hash = await hashPassword(password(pass));
      return store.setSandboxPassword(id, hash, now());
    },
    async setChaos(id, chaos: ChaosConfig) {
      const r = await store.setSandboxChaos(id, JSON.stringify(checkChaos(chaos)), now());
      return r && toSandbox(r);
    },
    async delete(id) {
      const r = await store.getSandbox(id);
      // The sandbox goes with its address and all its mail (ON DELETE CASCADE).
      const deleted = r ? await mail.deleteAddress(r.addressId) : false;
      await recount();
      return deleted;
    },
    store(sandbox, raw, envelope, meta) {
      const message = new MessageBuffer(opts.maxMessageBytes);
      message.push(raw);
      return store1(sandbox.id, message, envelope, clientKey(meta.remoteAddress), {
        helo: 'api',
        remoteAddress: meta.remoteAddress,
        hostname: opts.hostname,
        protocol: 'HTTP',
      });
    },
    capture: (sandbox, message, envelope, client, trace) => store1(sandbox.id, message, envelope, client, trace),
    token: (sandbox) => mail.tokenFor({ id: sandbox.addressId, address: sandbox.address, createdAt: sandbox.createdAt }),
    async apply(list) {
      const out: Sandbox[] = [];
      for (const entry of list) {
        const existing = await store.findSandbox(entry.name);
        if (existing) {
          await store.setSandboxPassword(existing.id, await hashPassword(password(entry.password)), now());
          out.push(toSandbox(existing));
        } else out.push(await put(entry));
      }
      await recount();
      return out;
    },
  };
}
