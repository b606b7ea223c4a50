// SMTP AUTH in sink mode (docs/decisions.md "Sandboxes"): what the receiver needs of the
// logins it offers AUTH PLAIN and AUTH LOGIN (RFC 4954) for, declared here and given by
// server.ts, so that SMTP imports neither the sandboxes feature nor storage. An
// authenticated session's mail is captured whole for its login, never relayed.
import ipaddr from 'ipaddr.js';
import type { MessageBuffer } from '../mail/message-buffer.js';
import type { ReceivedTrace } from '../mail/received.js';
import { reply, type SmtpError } from './replies.js';

/** A fault a login injects at one stage: reply `errorCode` in `probability` percent of the commands. */
export interface SmtpChaosTrigger {
  errorCode: number;
  probability: number;
}

/** The faults of one login's own sessions. */
export interface SmtpChaos {
  authentication?: SmtpChaosTrigger | undefined;
  sender?: SmtpChaosTrigger | undefined;
  recipient?: SmtpChaosTrigger | undefined;
  data?: SmtpChaosTrigger | undefined;
  delayMs?: number | undefined;
  disconnectProbability?: number | undefined;
}

export type ChaosStage = 'authentication' | 'sender' | 'recipient' | 'data';

export interface SmtpAccount {
  id: number;
  name: string;
  chaos: SmtpChaos;
}

export type SmtpLoginResult = { ok: true; account: SmtpAccount } | { ok: false; reason: 'wrong' | 'locked'; retryAfterSec?: number | undefined };

export interface SmtpCapture {
  /** MAIL FROM, '' for the null sender. */
  sender: string;
  /** Every RCPT TO accepted, in order. */
  recipients: string[];
  message: MessageBuffer;
  /** As the per-client limits count clients. */
  client: string;
  trace: Omit<ReceivedTrace, 'recipient' | 'id' | 'date'>;
}

/** The logins SMTP AUTH checks and the sink their mail goes to. */
export interface SmtpLogin {
  /** Whether AUTH is offered (some login exists); read at each connection, so it must answer at once. */
  offered(): boolean;
  /** Checks a name and password for a client (its IP address), with the lock-out. */
  login(name: string, password: string, client: string): Promise<SmtpLoginResult>;
  /** The account's faults as they are now, read at each MAIL FROM; undefined when it no longer exists. */
  current(account: SmtpAccount): Promise<SmtpAccount | undefined>;
  /** Stores one message for the account with its envelope. */
  capture(account: SmtpAccount, mail: SmtpCapture): Promise<void>;
}

export interface SmtpAuthOptions {
  login: SmtpLogin;
  /** SMTP_AUTH_ALLOW_INSECURE: AUTH without TLS from any client, not only loopback. */
  allowInsecure: boolean;
}

/** Longest pause a login's chaos may add before a reply. */
export const MAX_CHAOS_DELAY_MS = 30_000;

const isLoopback = (ip: string): boolean => {
  if (!ipaddr.isValid(ip)) return false;
  let addr = ipaddr.parse(ip);
  if (addr.kind() === 'ipv6' && (addr as ipaddr.IPv6).isIPv4MappedAddress()) addr = (addr as ipaddr.IPv6).toIPv4Address();
  return addr.range() === 'loopback';
};

/** What this module calls of smtp-server's SMTPConnection. */
interface AuthConnection {
  secure: boolean;
  remoteAddress: string;
  send(code: number, message: string): void;
  handler_AUTH(command: Buffer, callback: () => void): void;
}

/**
 * Refuses AUTH on a connection without TLS from a client that is not on loopback (unless
 * allowed): 538 5.7.11 before any credentials are sent (RFC 4954 §4, §6). smtp-server's own
 * check is off (allowInsecureAuth), since it cannot tell loopback from other clients.
 */
export function guardAuth(connection: unknown, allowInsecure: boolean): void {
  const c = connection as AuthConnection;
  const handler = c.handler_AUTH;
  c.handler_AUTH = function (this: AuthConnection, command, callback) {
    if (!this.secure && !allowInsecure && !isLoopback(this.remoteAddress)) {
      this.send(538, '5.7.11 Encryption required: issue STARTTLS before AUTH');
      return callback();
    }
    handler.call(this, command, callback);
  };
}

/** A fault of the account's chaos at `stage`: a reply to answer, 'drop' to close without one, or undefined for none. */
export function chaosFault(chaos: SmtpChaos, stage: ChaosStage, random: () => number = Math.random): SmtpError | 'drop' | undefined {
  const p = chaos.disconnectProbability ?? 0;
  if (p > 0 && random() * 100 < p) return 'drop';
  const trigger = chaos[stage];
  if (!trigger || trigger.probability <= 0 || random() * 100 >= trigger.probability) return undefined;
  const code = trigger.errorCode;
  return reply(code, `${Math.floor(code / 100)}.0.0`, 'Fault injected by this sandbox\'s chaos settings');
}

/** The pause the account's chaos puts before each reply, bounded. */
export const chaosDelay = (chaos: SmtpChaos): number => Math.min(Math.max(0, chaos.delayMs ?? 0), MAX_CHAOS_DELAY_MS);
