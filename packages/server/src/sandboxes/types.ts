// The sandboxes capability's declared interface: an inbox that belongs to an SMTP login.
// A sandbox keeps its mail in an address record of its own (the reserved domain
// SANDBOX_DOMAIN, never in the mail domain pool), so every mail route, wait, event and
// webhook of an address works on a sandbox unchanged. Callers (SMTP, HTTP, the compatible
// APIs) import these types, never the implementation.

/** The reserved domain of sandbox addresses (RFC 2606): no pool domain can ever be it. */
export { SANDBOX_DOMAIN } from '../domain/sandboxes.js';

/** A fault a sandbox injects at one SMTP stage: reply `errorCode` with `probability` percent. */
export interface ChaosTrigger {
  /** An SMTP reply code, 400..599. */
  errorCode: number;
  /** 0..100, percent of the commands of that stage that get the fault. */
  probability: number;
}

/** Faults one sandbox injects into its own authenticated sessions only. */
export interface ChaosConfig {
  authentication?: ChaosTrigger;
  sender?: ChaosTrigger;
  recipient?: ChaosTrigger;
  data?: ChaosTrigger;
  /** Delay before each reply of the sandbox's sessions, in ms (bounded). */
  delayMs?: number;
  /** 0..100, percent of commands after which the connection is dropped without a reply. */
  disconnectProbability?: number;
}

export interface Sandbox {
  id: number;
  /** The SMTP login: lower-cased, a valid local part. */
  name: string;
  /** The address record that holds the sandbox's mail. */
  addressId: number;
  /** `${name}@${SANDBOX_DOMAIN}`. */
  address: string;
  /** Most mails kept; the oldest are removed past it. */
  maxMails: number;
  /** Most bytes kept; the oldest are removed past it. */
  maxBytes: number;
  /** How long its mail is kept. */
  retentionMs: number;
  chaos: ChaosConfig;
  createdAt: number;
  /** Changes whenever its password does (a digest of the stored hash, never the hash): lets a remembered login be refused at once after a rotation. */
  passwordStamp: string;
}

/** The envelope of a message a sandbox captured (sender and every recipient, Bcc-only ones too). */
export interface SandboxEnvelope {
  /** MAIL FROM, '' for the null sender. */
  from: string;
  to: string[];
}

export type SandboxLogin =
  | { ok: true; sandbox: Sandbox }
  /** `locked`: too many wrong guesses for this client or this login; retry after `retryAfterSec`. */
  | { ok: false; reason: 'wrong' | 'locked'; retryAfterSec?: number };

export interface SandboxService {
  /** Whether any sandbox exists (SMTP offers AUTH only then). */
  any(): Promise<boolean>;
  /**
   * Checks a name and password against the stored slow hash, in constant time whether or
   * not the name exists, with lock-out per client (its address/prefix) and per login.
   */
  login(name: string, password: string, client: string): Promise<SandboxLogin>;
  get(id: number): Promise<Sandbox | undefined>;
  findByName(name: string): Promise<Sandbox | undefined>;
  list(): Promise<Sandbox[]>;
  /** Creates or (same name) updates the password and limits. */
  put(input: { name: string; password: string; maxMails?: number; maxBytes?: number; retentionMs?: number }): Promise<Sandbox>;
  setPassword(id: number, password: string): Promise<boolean>;
  setChaos(id: number, chaos: ChaosConfig): Promise<Sandbox | undefined>;
  delete(id: number): Promise<boolean>;
  /**
   * Stores one message in the sandbox with its envelope (SMTP sink mode, Mailpit's
   * POST /api/v1/send): parsed, indexed and announced as any delivery; never relayed.
   * Applies the sandbox's quota (oldest removed). Resolves to the new mail's uuid.
   */
  store(sandbox: Sandbox, raw: Buffer, envelope: SandboxEnvelope, meta: { remoteAddress: string }): Promise<string>;
  /** A JWT of the sandbox's address: every /api route of an address then works on the sandbox (POST /api/sandbox/token). */
  token(sandbox: Sandbox): Promise<string>;
}
