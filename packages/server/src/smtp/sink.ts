// The receiver's hooks for SMTP AUTH and authenticated (sink mode) sessions (smtp/auth.ts,
// docs/decisions.md "Sandboxes"). A session that logs in may name any recipient, up to the
// recipient limit; its message is captured once for its login with the whole envelope and
// never relayed. Unauthenticated sessions never reach these hooks. The login's chaos
// settings inject its faults into its own sessions only.
import type { SMTPServerAddress, SMTPServerAuthentication, SMTPServerAuthenticationResponse, SMTPServerSession } from 'smtp-server';
import type { FastifyBaseLogger } from 'fastify';
import { clientKey, type WindowLimiter } from '../limits/window-limiter.js';
import type { MessageBuffer } from '../mail/message-buffer.js';
import type { Metrics } from '../observability/metrics.js';
import { chaosDelay, chaosFault, type ChaosStage, type SmtpAccount, type SmtpAuthOptions } from './auth.js';
import { reply, type SmtpError } from './replies.js';

type Callback = (err?: Error | null) => void;

export interface SinkDeps {
  auth: SmtpAuthOptions;
  log: FastifyBaseLogger;
  metrics?: Metrics | undefined;
  recipients?: WindowLimiter | undefined;
  hostname: string;
  /** Whether the server offers STARTTLS at all. */
  tls: boolean;
  /** Closes the session's connection without a reply (a chaos disconnect). */
  drop(session: SMTPServerSession): void;
  /** Runs `step` after `ms`, unless the session's connection closed by then (a step never runs for a gone client). */
  later(session: SMTPServerSession, step: () => void, ms: number): void;
}

/** The account an authenticated session logged in as, or undefined for any other session. */
export const accountOf = (session: SMTPServerSession): SmtpAccount | undefined => {
  const user: unknown = session.user;
  return user && typeof user === 'object' && 'chaos' in user ? (user as SmtpAccount) : undefined;
};

/** The receiver's hooks for authenticated (sink mode) sessions and AUTH itself. */
export interface Sink {
  /** AUTH is offered only while some login exists (EHLO is unchanged otherwise). */
  connected(session: SMTPServerSession): void;
  onAuth(credentials: SMTPServerAuthentication, session: SMTPServerSession, callback: (err: Error | null | undefined, response?: SMTPServerAuthenticationResponse) => void): void;
  /** MAIL FROM of an authenticated session, once the receiver's checks passed: the account's current faults. */
  mailFrom(account: SmtpAccount, session: SMTPServerSession, callback: Callback): void;
  /** RCPT TO of an authenticated session: any address, counted against the client's recipient limit. */
  rcptTo(account: SmtpAccount, _address: SMTPServerAddress, session: SMTPServerSession, callback: Callback): void;
  /** The end of DATA of an authenticated session: the message captured for the account (resolves to the 250's text). */
  capture(account: SmtpAccount, session: SMTPServerSession, message: MessageBuffer, sender: string): Promise<string>;
}

export function createSink(deps: SinkDeps): Sink {
  const { auth, log, metrics } = deps;
  const off = deps.tls ? ['AUTH'] : ['AUTH', 'STARTTLS'];

  /** Runs the account's chaos at a stage: its pause, then a fault or `next`. */
  const withChaos = (account: SmtpAccount, stage: ChaosStage, session: SMTPServerSession, fail: (err: SmtpError) => void, next: () => void) => {
    const run = () => {
      const fault = chaosFault(account.chaos, stage);
      if (fault === 'drop') return deps.drop(session);
      if (fault) return fail(fault);
      next();
    };
    const delay = chaosDelay(account.chaos);
    // Not a bare timer: a delayed DATA step must not store a message once its client has gone (it would resend it).
    if (delay > 0) deps.later(session, run, delay);
    else run();
  };

  return {
    /** AUTH is offered only while some login exists (EHLO is unchanged otherwise). */
    connected(session: SMTPServerSession): void {
      if (!auth.login.offered()) session.disabledCommands = off;
    },

    onAuth(credentials: SMTPServerAuthentication, session: SMTPServerSession, callback: (err: Error | null | undefined, response?: SMTPServerAuthenticationResponse) => void): void {
      if (credentials.method !== 'PLAIN' && credentials.method !== 'LOGIN') return callback(reply(504, '5.5.4', 'Unrecognized authentication type'));
      // PLAIN's authzid (RFC 4616 §2): no login may act as another, so one that names another fails, before any hash.
      const authzid = (credentials as { authzid?: unknown }).authzid;
      if (typeof authzid === 'string' && authzid !== '' && authzid.toLowerCase() !== (credentials.username ?? '').toLowerCase()) {
        metrics?.smtpAuth('wrong');
        return callback(reply(535, '5.7.8', 'Authentication credentials invalid: the authorization identity must be the login itself'));
      }
      auth.login
        .login(credentials.username ?? '', credentials.password ?? '', session.remoteAddress)
        .then((result) => {
          if (!result.ok) {
            metrics?.smtpAuth(result.reason);
            log.info({ session: session.id, remote: session.remoteAddress, reason: result.reason }, 'SMTP AUTH refused');
            if (result.reason === 'locked') {
              return callback(reply(421, '4.7.0', `Too many failed logins; try again in ${result.retryAfterSec ?? 60} seconds`));
            }
            return callback(reply(535, '5.7.8', 'Authentication credentials invalid'));
          }
          withChaos(result.account, 'authentication', session, (err) => callback(err), () => {
            metrics?.smtpAuth('ok');
            callback(null, { user: result.account });
          });
        })
        .catch((err: unknown) => {
          // A full password-hashing queue is a load condition the client retries, not a fault of the server.
          const busy = (err as { code?: unknown } | null)?.code === 'rate_limited' || (err as { code?: unknown } | null)?.code === 'unavailable';
          if (busy) log.info({ session: session.id, remote: session.remoteAddress, reason: (err as Error).message }, 'SMTP AUTH deferred');
          else log.error({ err }, 'SMTP AUTH failed');
          callback(reply(454, '4.7.0', 'Temporary authentication failure'));
        });
    },

    /** MAIL FROM of an authenticated session, once the receiver's checks passed: the account's current faults. */
    mailFrom(account: SmtpAccount, session: SMTPServerSession, callback: Callback): void {
      auth.login.current(account).then(
        (now) => {
          if (!now) return callback(reply(421, '4.7.0', 'This login no longer exists; closing'));
          // The session follows changes of its login's chaos from its next transaction on.
          account.chaos = now.chaos;
          withChaos(account, 'sender', session, callback, () => callback());
        },
        (err: unknown) => {
          log.error({ err }, 'SMTP login look-up failed');
          callback(reply(451, '4.3.0', 'Temporary failure, try again later'));
        },
      );
    },

    /** RCPT TO of an authenticated session: any address, counted against the client's recipient limit. */
    rcptTo(account: SmtpAccount, _address: SMTPServerAddress, session: SMTPServerSession, callback: Callback): void {
      const limiter = deps.recipients;
      (limiter ? limiter.consume(clientKey(session.remoteAddress)) : Promise.resolve(0)).then(
        (wait) => {
          if (wait) return callback(reply(452, '4.7.0', `Too many recipients from your address; try again in ${wait} seconds`));
          withChaos(account, 'recipient', session, callback, () => callback());
        },
        (err: unknown) => {
          log.error({ err }, 'SMTP recipient rate limit failed');
          callback(reply(451, '4.3.0', 'Temporary failure, try again later'));
        },
      );
    },

    /** The end of DATA of an authenticated session: the message captured for the account (resolves to the 250's text). */
    capture(account: SmtpAccount, session: SMTPServerSession, message: MessageBuffer, sender: string): Promise<string> {
      return new Promise<void>((resolve, reject) => withChaos(account, 'data', session, reject, resolve)).then(async () => {
        const recipients = session.envelope.rcptTo.map((r) => r.address);
        await auth.login.capture(account, {
          sender,
          recipients,
          message,
          client: clientKey(session.remoteAddress),
          trace: {
            helo: session.hostNameAppearsAs || 'unknown',
            remoteAddress: session.remoteAddress,
            hostname: deps.hostname,
            protocol: (session.transmissionType as string | undefined) ?? 'ESMTPA',
          },
        });
        return `Ok: captured for ${account.name}, ${recipients.length} recipient${recipients.length === 1 ? '' : 's'}, not relayed`;
      });
    },
  };
}
