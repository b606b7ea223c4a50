// The sandboxes service (docs/decisions.md "Sandboxes"): SMTP logins whose mail is captured
// into an address of their own, <name>@sandbox.invalid, which unauthenticated SMTP never
// reaches (it is in no domain pool). Every route of an address then works on a sandbox's
// mail unchanged. Passwords are slow hashes (domain/passwords.ts), checked in constant
// time whether the name exists, behind a lock-out per client and per login.
import { clientKey } from '../limits/window-limiter.js';
import type { FailureLock } from '../limits/failure-lock.js';
import { hashPassword, prepareDecoy } from '../domain/passwords.js';
import { SANDBOX_DOMAIN, sandboxName } from '../domain/sandboxes.js';
import type { EventBus } from '../mail/events/events.js';
import { MessageBuffer } from '../mail/message-buffer.js';
import type { MailService } from '../mail/service.js';
import type { SandboxStore } from '../storage/store.js';
import { captureInto, type CaptureOptions, type CaptureTrace } from './capture.js';
import { checkChaos } from './chaos.js';
import { createLogin } from './login.js';
import { checkedName, checkedPassword, limit, toSandbox } from './records.js';
import type { ChaosConfig, Sandbox, SandboxEnvelope, SandboxService } from './types.js';

export type { CaptureTrace } from './capture.js';

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

  const login = createLogin({ store, locks });
  const captured: CaptureOptions = { store, mail, bus: opts.bus };

  async function put(input: Parameters<SandboxService['put']>[0]): Promise<Sandbox> {
    const n = checkedName(input.name);
    const hash = await hashPassword(checkedPassword(input.password));
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

  return {
    async any() {
      await recount();
      return known;
    },
    offered() {
      if (performance.now() - checkedAt > recheckMs) void recount();
      return known;
    },
    login,
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
      const hash = await hashPassword(checkedPassword(pass));
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
      return captureInto(captured, sandbox.id, message, envelope, clientKey(meta.remoteAddress), {
        helo: 'api',
        remoteAddress: meta.remoteAddress,
        hostname: opts.hostname,
        protocol: 'HTTP',
      });
    },
    capture: (sandbox, message, envelope, client, trace) => captureInto(captured, sandbox.id, message, envelope, client, trace),
    token: (sandbox) => mail.tokenFor({ id: sandbox.addressId, address: sandbox.address, createdAt: sandbox.createdAt }),
    async apply(list) {
      const out: Sandbox[] = [];
      for (const entry of list) {
        const existing = await store.findSandbox(entry.name);
        if (existing) {
          await store.setSandboxPassword(existing.id, await hashPassword(checkedPassword(entry.password)), now());
          out.push(toSandbox(existing));
        } else out.push(await put(entry));
      }
      await recount();
      return out;
    },
  };
}
