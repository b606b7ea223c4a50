// SMTP receiver: smtp-server's hooks call the mail service, which knows nothing
// of SMTP. MAIL FROM from a blocked client or sender gets 550 5.7.1 (docs/decisions.md
// "Blocks"). Every client is bounded (docs/security.md): connections per client and
// in all, message bytes held in memory in all and per client, the length and the
// rate of a transaction, refused recipients per session, messages, recipients, bytes
// and new catch-all addresses per client and window, bytes per client and day, and
// the free space of the store's disk.
// smtp-server adds the RFC 3463 enhanced status code for each reply code
// (550 -> 5.1.1, 451 -> 4.3.0, maxRecipients -> 452 4.5.3) unless replies.ts gives one.
import { readFileSync } from 'node:fs';
import type { AddressInfo, Socket } from 'node:net';
import { SMTPServer, type SMTPServerAddress, type SMTPServerOptions, type SMTPServerSession } from 'smtp-server';
import type { FastifyBaseLogger } from 'fastify';
import type { SMTPConnectionOptions } from 'smtp-server/lib/smtp-connection.js';
import { clientKey } from '../limits/window-limiter.js';
import type { MailService, Recipient } from '../mail/service.js';
import type { Metrics } from '../observability/metrics.js';
import { createOpenCounter } from '../limits/open-counter.js';
import { createClientLimits } from './client-limits.js';
import { refuseSocket } from './client-guard.js';
import { createInflightBudget } from './inflight-budget.js';
import { reply } from './replies.js';
import { guardAuth, type SmtpAuthOptions } from './auth.js';
import type { SmtpOptions } from './options.js';
import { createSink } from './sink.js';
import { createCommandGuard, type GuardedConnection } from './command-guard.js';
// Replaces smtp-server's removal of escape dots before any connection reads DATA.
import './data-escapes.js';
import { dataHook } from './data.js';
import type { HookContext } from './hook-context.js';
import { mailFromHook } from './mail-from.js';
import { rcptToHook } from './rcpt-to.js';
import { createSessionStates } from './session-state.js';
import { connectWithGreeting } from './greeting.js';
import { groupReplies } from './reply-grouping.js';

export type { SmtpOptions } from './options.js';

export { BAD_RECIPIENTS_FREE } from './rcpt-to.js';

export interface SmtpReceiver {
  listen(): Promise<number>;
  /** SMTP connections open now (the shutdown report counts them). */
  sessions(): number;
  close(): Promise<void>;
}

export function createSmtpReceiver(opts: SmtpOptions, mail: MailService, log: FastifyBaseLogger, metrics?: Metrics): SmtpReceiver {
  const states = createSessionStates();
  const perClient = createOpenCounter(opts.maxClientsPerIp);
  const budget = createInflightBudget(opts.inflightBytes, opts.clientInflightBytes);
  const clients = createClientLimits({ trustedNetworks: opts.trustedNetworks, budget, limits: opts.limits, storage: opts.storage });
  const trusted = clients.trusted;
  const commands = createCommandGuard({ commandTimeoutMs: opts.commandTimeoutMs, maxJunkCommands: opts.maxJunkCommands });
  const auth: SmtpAuthOptions | undefined = opts.login ? { login: opts.login, allowInsecure: opts.authAllowInsecure } : undefined;
  const countRefusal = opts.countRefusal ?? (() => undefined);
  const tls = opts.tlsCert && opts.tlsKey ? { cert: readFileSync(opts.tlsCert), key: readFileSync(opts.tlsKey) } : undefined;

  class GuardedServer extends SMTPServer {
    override connect(socket: Socket, socketOptions?: SMTPConnectionOptions | null): void {
      const ip = socketOptions?.remoteAddress ?? socket.remoteAddress ?? '';
      // The operator's own networks are exempt from the per-client cap (Postfix's smtpd_client_event_limit_exceptions).
      if (!trusted(ip)) {
        const release = perClient.admit(clientKey(ip));
        if (!release) {
          metrics?.smtpConnectionRefused();
          countRefusal('rate_limit', undefined);
          return refuseSocket(socket, `421 4.7.0 ${opts.hostname} Too many connections from your address; try again later`);
        }
        socket.once('close', release);
      }
      groupReplies(socket, tls !== undefined);
      const connection = connectWithGreeting(this, opts.greetingDelayMs, () => super.connect(socket, socketOptions)) as GuardedConnection | undefined;
      if (connection) {
        commands.watch(connection);
        if (auth) guardAuth(connection, auth.allowInsecure);
        socket.once('close', () => commands.forget(connection));
      }
    }
  }

  /** Ends a session from outside its command flow with a reply and closes the connection (421 closes it by itself). */
  const closeSession = (session: SMTPServerSession, message: string, code = 421) => {
    for (const c of server.connections) {
      if (c.session !== session) continue;
      c.send(code, message);
      if (code !== 421) c.close();
    }
  };

  // Authenticated sessions (sink mode): their hooks live in sink.ts.
  const sink = auth
    ? createSink({
        auth,
        log,
        metrics,
        recipients: opts.limits.recipients,
        hostname: opts.hostname,
        tls: tls !== undefined,
        drop: (session) => {
          for (const c of server.connections) if (c.session === session) (c as unknown as { _socket: Socket })._socket.destroy();
        },
        later: (session, step, ms) => {
          // smtp-server forgets a connection as its socket closes, before onClose (which clears the session's timers).
          const open = () => [...server.connections].some((c) => c.session === session);
          if (!open()) return;
          const s = states.stateOf(session);
          const t = setTimeout(() => {
            s.delays.delete(t);
            if (open()) step();
          }, ms);
          s.delays.add(t);
        },
      })
    : undefined;

  // What each accepted RCPT resolved to, so DATA stores without a second look-up.
  const resolved = new WeakMap<SMTPServerAddress, Recipient>();
  const ctx: HookContext = { opts, mail, log, metrics, budget, clients, states, auth, sink, resolved, closeSession, countRefusal };

  const server: SMTPServer = new GuardedServer({
    ...serverSettings(opts, auth !== undefined, tls),

    // Nothing to check here (refusals happen in connect() above), so the connection is
    // ready as soon as greeting.ts says: smtp-server's default answers a tick later, and
    // a client that sent in that tick was taken for an early talker.
    onConnect(session, callback) {
      sink?.connected(session);
      // The parser's and the checks' threads start while the client says EHLO, MAIL and RCPT.
      mail.warm();
      callback();
    },

    onMailFrom: mailFromHook(ctx),

    onAuth(credentials, session, callback) {
      if (!sink) return callback(reply(502, '5.5.1', 'AUTH is not offered here'));
      sink.onAuth(credentials, session, callback);
    },

    onRcptTo: rcptToHook(ctx),

    onData: dataHook(ctx),

    onClose(session) {
      states.forget(session.id);
    },
  });
  // A failed bind is listen()'s rejection (the start-up error names SMTP_PORT), not a connection's.
  server.on('error', (err) => (err as NodeJS.ErrnoException).syscall === 'listen' || log.warn({ err }, 'smtp connection error'));

  return {
    listen() {
      return new Promise((resolve, reject) => {
        server.server.once('error', reject);
        server.listen(opts.port, opts.host, () => {
          server.server.off('error', reject);
          resolve((server.server.address() as AddressInfo).port);
        });
      });
    },
    sessions: () => server.connections.size,
    close() {
      commands.close();
      states.endAll();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

/** smtp-server's settings: names, sizes, extensions and timeouts (the hooks are the receiver's). */
function serverSettings(opts: SmtpOptions, auth: boolean, tls: { cert: Buffer; key: Buffer } | undefined): SMTPServerOptions {
  return {
    name: opts.hostname,
    // smtp-server puts "ESMTP" before the banner itself: "220 <host> ESMTP temp-inbox, receive only".
    banner: 'temp-inbox, receive only',
    size: opts.maxMessageBytes,
    // Without this smtp-server leaves oversize to onData, whose 552 it maps to 5.2.2;
    // with it, it answers 552 5.3.4 itself (RFC 3463).
    rejectOversized: true,
    maxRecipients: opts.maxRecipients,
    maxCommandLength: opts.maxLineBytes,
    maxClients: opts.maxClients,
    hideENHANCEDSTATUSCODES: false,
    hideDSN: true,
    authOptional: true,
    // With logins, AUTH is offered per session (sink.connected) and refused without TLS off loopback (auth.ts guardAuth).
    authMethods: ['PLAIN', 'LOGIN'],
    allowInsecureAuth: true,
    disabledCommands: auth ? (tls ? [] : ['STARTTLS']) : tls ? ['AUTH'] : ['AUTH', 'STARTTLS'],
    ...(tls ?? {}),
    disableReverseLookup: true,
    logger: false,
    socketTimeout: opts.idleTimeoutMs,
    closeTimeout: 5_000,
  };
}
