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
import { SMTPServer, type SMTPServerAddress, type SMTPServerSession } from 'smtp-server';
import type { FastifyBaseLogger } from 'fastify';
import type { SMTPConnectionOptions } from 'smtp-server/lib/smtp-connection.js';
import { clientKey } from '../limits/window-limiter.js';
import { MessageBuffer } from '../mail/message-buffer.js';
import { countGarbage, endOfMessage } from '../memory/young-garbage.js';
import type { MailService, Recipient } from '../mail/service.js';
import type { Metrics } from '../observability/metrics.js';
import { createOpenCounter } from '../limits/open-counter.js';
import { BUDGET_EXCEEDED, createClientLimits, SHARE_EXCEEDED, type SmtpLimits, type StorageGate } from './client-limits.js';
import { watchDataRate, type DataRateWatch } from './data-rate.js';
import { refuseSocket } from './client-guard.js';
import { createInflightBudget, type InflightClaim } from './inflight-budget.js';
import { reply } from './replies.js';
import { guardAuth, type SmtpAuthOptions, type SmtpLogin } from './auth.js';
import type { SmtpConfig } from '../config/index.js';
import { accountOf, createSink } from './sink.js';
import { createCommandGuard, type GuardedConnection } from './command-guard.js';
// Replaces smtp-server's removal of escape dots before any connection reads DATA.
import './data-escapes.js';
import { connectWithGreeting } from './greeting.js';
import { groupReplies } from './reply-grouping.js';

/**
 * The receiver's own configuration section (config/config.ts SmtpConfig: listeners, per-client
 * caps, timeouts, sizes) and what it is given besides: the message size, the per-client windows,
 * the store's disk and the logins of SMTP AUTH.
 */
export interface SmtpOptions extends SmtpConfig {
  /** MAX_MESSAGE_BYTES: SIZE, and the largest message taken. */
  maxMessageBytes: number;
  /** Per client and window (client-limits.ts); absent = no limit. */
  limits: SmtpLimits;
  /** The store's free space (DISK_MIN_FREE): not 'ok', MAIL FROM gets 452 4.3.1; a delivery that failed is told. */
  storage?: StorageGate | undefined;
  /** The logins SMTP AUTH is offered for, in sink mode (auth.ts); absent: AUTH is never offered. */
  login?: SmtpLogin | undefined;
}

/**
 * MAIL FROM parameters of the extensions offered (SIZE, 8BITMIME, SMTPUTF8), and AUTH=,
 * which some clients send whether AUTH is offered or not (RFC 4954 §5: it may be ignored).
 */
const MAIL_PARAMETERS = new Set(['SIZE', 'BODY', 'SMTPUTF8', 'AUTH']);

/** The 550 5.7.1 of MAIL FROM for each kind of operator's block. */
const BLOCKED = {
  sender: 'Mail from this sender is refused here',
  domain: "Mail from this sender's domain is refused here",
  ip: 'Mail from your IP address is refused here',
} as const;

/** Refused recipients answered at once; later ones are slowed down (a typo is fine, probing is not). */
export const BAD_RECIPIENTS_FREE = 3;

export interface SmtpReceiver {
  listen(): Promise<number>;
  /** SMTP connections open now (the shutdown report counts them). */
  sessions(): number;
  close(): Promise<void>;
}

interface SessionState {
  badRecipients: number;
  /** Ends a transaction that outlives transactionTimeoutMs. */
  deadline?: NodeJS.Timeout;
  claim?: InflightClaim;
  rate?: DataRateWatch;
  delays: Set<NodeJS.Timeout>;
}

export function createSmtpReceiver(opts: SmtpOptions, mail: MailService, log: FastifyBaseLogger, metrics?: Metrics): SmtpReceiver {
  // What each accepted RCPT resolved to, so DATA stores without a second look-up.
  const resolved = new WeakMap<SMTPServerAddress, Recipient>();
  const sessions = new Map<string, SessionState>();
  const perClient = createOpenCounter(opts.maxClientsPerIp);
  const budget = createInflightBudget(opts.inflightBytes, opts.clientInflightBytes);
  const clients = createClientLimits({ trustedNetworks: opts.trustedNetworks, budget, limits: opts.limits, storage: opts.storage });
  const trusted = clients.trusted;
  const commands = createCommandGuard({ commandTimeoutMs: opts.commandTimeoutMs, maxJunkCommands: opts.maxJunkCommands });
  const auth: SmtpAuthOptions | undefined = opts.login ? { login: opts.login, allowInsecure: opts.authAllowInsecure } : undefined;
  const tls = opts.tlsCert && opts.tlsKey ? { cert: readFileSync(opts.tlsCert), key: readFileSync(opts.tlsKey) } : undefined;

  const stateOf = (session: SMTPServerSession): SessionState => {
    let s = sessions.get(session.id);
    if (!s) sessions.set(session.id, (s = { badRecipients: 0, delays: new Set() }));
    return s;
  };
  const endTransaction = (s: SessionState) => {
    clearTimeout(s.deadline);
    s.deadline = undefined;
    s.claim?.release();
    s.claim = undefined;
    s.rate?.stop();
    s.rate = undefined;
  };

  class GuardedServer extends SMTPServer {
    override connect(socket: Socket, socketOptions?: SMTPConnectionOptions | null): void {
      const ip = socketOptions?.remoteAddress ?? socket.remoteAddress ?? '';
      // The operator's own networks are exempt from the per-client cap (Postfix's smtpd_client_event_limit_exceptions).
      if (!trusted(ip)) {
        const release = perClient.admit(clientKey(ip));
        if (!release) {
          metrics?.smtpConnectionRefused();
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
          const s = stateOf(session);
          const t = setTimeout(() => {
            s.delays.delete(t);
            if (open()) step();
          }, ms);
          s.delays.add(t);
        },
      })
    : undefined;

  const server: SMTPServer = new GuardedServer({
    name: opts.hostname,
    banner: 'temp-inbox ESMTP, receive only',
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
    socketTimeout: 60_000,
    closeTimeout: 5_000,

    // Nothing to check here (refusals happen in connect() above), so the connection is
    // ready as soon as greeting.ts says: smtp-server's default answers a tick later, and
    // a client that sent in that tick was taken for an early talker.
    onConnect(session, callback) {
      sink?.connected(session);
      callback();
    },

    onMailFrom(address, session, callback) {
      const s = stateOf(session);
      endTransaction(s);
      // Parameters of extensions it does not offer (RFC 5321 §4.1.1.11); smtp-server passes them on.
      const unknown = Object.keys(address.args || {}).find((key) => !MAIL_PARAMETERS.has(key.toUpperCase()));
      if (unknown !== undefined) return callback(reply(555, '5.5.4', `MAIL FROM parameter ${unknown.slice(0, 32).replace(/[^\x21-\x7e]/g, '?')} is not recognized`));
      if (budget.full) return callback(reply(452, '4.3.1', 'Too much mail in progress here; try again in a few minutes'));
      const limiter = opts.limits.messages;
      const admit = () => {
        clients
          .mailFromRefusal(session.remoteAddress)
          .then(async (refusal) => {
            if (refusal) return callback(refusal);
            const wait = limiter ? await limiter.consume(clientKey(session.remoteAddress)) : 0;
            return wait ? callback(reply(421, '4.7.0', `Too many messages from your address; try again in ${wait} seconds`)) : start();
          })
          .catch((err: unknown) => {
            log.error({ err }, 'SMTP MAIL FROM checks failed');
            callback(reply(451, '4.3.0', 'Temporary failure, try again later'));
          });
      };
      const start = () => {
        s.deadline = setTimeout(() => {
          s.deadline = undefined;
          log.info({ session: session.id, remote: session.remoteAddress }, 'SMTP transaction took too long; closing');
          closeSession(session, '4.4.2 The transaction took too long; closing');
        }, opts.transactionTimeoutMs);
        s.deadline.unref();
        const account = accountOf(session);
        if (account && sink) return sink.mailFrom(account, session, callback);
        callback();
      };
      // An operator's block comes first: a permanent refusal, whatever the limits say (docs/decisions.md "Blocks").
      mail.blockedSender(session.remoteAddress, address.address).then(
        (block) => {
          if (!block) return admit();
          metrics?.smtpSenderBlocked(block.kind);
          log.debug({ session: session.id, remote: session.remoteAddress, block: block.id, kind: block.kind }, 'SMTP sender blocked');
          callback(reply(550, '5.7.1', BLOCKED[block.kind]));
        },
        (err: unknown) => {
          // The block list never fails a check (it keeps the last list it read); this is a bug, not a refusal.
          log.error({ err }, 'SMTP block check failed');
          admit();
        },
      );
    },

    onAuth(credentials, session, callback) {
      if (!sink) return callback(reply(502, '5.5.1', 'AUTH is not offered here'));
      sink.onAuth(credentials, session, callback);
    },

    onRcptTo(address, session, callback) {
      const account = accountOf(session);
      if (account && sink) return sink.rcptTo(account, address, session, callback);
      const s = stateOf(session);
      const refuse = () => {
        metrics?.smtpRecipientRefused();
        s.badRecipients++;
        if (s.badRecipients > opts.maxBadRecipients) return callback(reply(421, '4.7.0', 'Too many unknown recipients; closing'));
        // With sandboxes, a session that forgot to log in (an app moved from Mailpit) is told why.
        const hint = auth?.login.offered() ? '; log in (SMTP AUTH) as a sandbox to capture mail to any address' : '';
        const answer = () => callback(reply(550, '5.1.1', `No such mailbox <${address.address}> here${hint}`));
        if (s.badRecipients <= BAD_RECIPIENTS_FREE || opts.badRecipientDelayMs === 0) return answer();
        const t = setTimeout(() => {
          s.delays.delete(t);
          answer();
        }, opts.badRecipientDelayMs);
        s.delays.add(t);
      };
      const accept = async (record: Recipient): Promise<void> => {
        const limiter = opts.limits.recipients;
        const wait = limiter ? await limiter.consume(clientKey(session.remoteAddress)) : 0;
        if (wait) return callback(reply(452, '4.7.0', `Too many recipients from your address; try again in ${wait} seconds`));
        // A catch-all address nobody created is created when its mail is stored; how many a client may ask for is bounded.
        const creates = record.pending ? await opts.limits.newAddresses?.consume(clientKey(session.remoteAddress)) : 0;
        if (creates) return callback(reply(452, '4.7.0', `Too many new addresses from your address; try again in ${creates} seconds`));
        if (!(await mail.hasRoom(record))) return callback(reply(452, '4.2.2', `Mailbox <${address.address}> is full; try again later`));
        resolved.set(address, record);
        callback();
      };
      mail
        .resolveRecipient(address.address)
        .then((record) => (record ? accept(record) : refuse()))
        .catch((err: unknown) => {
          log.error({ err }, 'recipient look-up failed');
          callback(reply(451, '4.3.0', 'Temporary failure, try again later'));
        });
    },

    onData(stream, session, callback) {
      const s = stateOf(session);
      const client = clientKey(session.remoteAddress);
      const claim = budget.claim(trusted(session.remoteAddress) ? undefined : client);
      s.claim = claim;
      const message = new MessageBuffer(opts.maxMessageBytes);
      // Every byte of DATA read, kept or not: an oversize message costs its sender's byte budgets too.
      let read = 0;
      let closed = false;
      const charge = () => clients.chargeRead(client, read);
      s.rate = watchDataRate({ minRate: opts.dataMinRate, windowMs: opts.dataRateWindowMs }, (bytes) => {
        if (closed) return;
        closed = true;
        metrics?.smtpMessage('deferred');
        log.info({ session: session.id, remote: session.remoteAddress, bytes, windowMs: opts.dataRateWindowMs }, 'SMTP DATA transfer below the minimum rate; closing');
        closeSession(session, '4.4.2 The message arrives too slowly; closing');
      });
      stream.on('data', (c: Buffer) => {
        read += c.length;
        s.rate?.add(c.length);
        if (closed || claim.overBudget) return;
        // Past the size limit smtp-server answers 552 at the end (and buffering stops). Its bytes
        // are read and dropped until then, but not without end: past twice the limit the
        // connection is closed, so one client cannot make the server read gigabytes for nothing.
        if (stream.sizeExceeded) {
          if (read <= 2 * opts.maxMessageBytes) return;
          closed = true;
          metrics?.smtpMessage('too_large');
          charge();
          log.info({ session: session.id, remote: session.remoteAddress }, 'SMTP message twice over the size limit; closing');
          // Permanent: this message can never fit, so a sending MTA must not retry it (RFC 3463 5.3.4).
          closeSession(session, '5.3.4 Message exceeds the maximum size; closing', 552);
          return;
        }
        if (claim.take(c.length)) {
          message.push(c);
          return countGarbage(c.length);
        }
        // Past the budget: the connection is ended now (RFC 5321 §3.8), so its bytes cost neither memory nor reading.
        metrics?.smtpMessage('deferred');
        log.info({ session: session.id, remote: session.remoteAddress, over: claim.over }, 'SMTP in-flight budget exceeded; closing');
        closeSession(session, (claim.over === 'share' ? SHARE_EXCEEDED : BUDGET_EXCEEDED).join(' '));
      });
      stream.on('error', (err) => {
        endTransaction(s);
        callback(err);
      });
      stream.on('end', () => {
        endOfMessage();
        // The transfer is over: storing it may take longer than a window, and is no slow transfer.
        s.rate?.stop();
        const finish = (err: Error | null, text?: string) => {
          endTransaction(s);
          callback(err, text);
        };
        if (closed) return finish(reply(552, '5.3.4', 'Message exceeds the maximum size; closing'));
        if (stream.sizeExceeded) {
          metrics?.smtpMessage('too_large');
          charge();
          return finish(reply(552, '5.3.4', 'Message exceeds the maximum size'));
        }
        if (claim.overBudget) {
          const [enhanced, text] = claim.over === 'share' ? SHARE_EXCEEDED : BUDGET_EXCEEDED;
          return finish(reply(421, enhanced, text));
        }
        // By address, not id: a catch-all recipient created at delivery has none yet.
        const seen = new Set<string>();
        const recipients: Recipient[] = [];
        for (const rcpt of session.envelope.rcptTo) {
          const record = resolved.get(rcpt);
          if (record && !seen.has(record.address)) {
            seen.add(record.address);
            recipients.push(record);
          }
        }
        const sender = session.envelope.mailFrom ? session.envelope.mailFrom.address : '';
        clients
          .chargeBytes(client, Math.max(1, message.size))
          .then((refusal) => {
            if (refusal) {
              metrics?.smtpMessage('deferred');
              return finish(refusal);
            }
            const account = accountOf(session);
            if (account && sink) {
              return sink.capture(account, session, message, sender).then((text) => {
                metrics?.smtpMessage('stored', 1);
                finish(null, text);
              }, (err: unknown) => (err instanceof Error && 'responseCode' in err ? finish(err) : Promise.reject(err)));
            }
            return mail
              .deliver({
                sender,
                recipients,
                message,
                client,
                trace: {
                  helo: session.hostNameAppearsAs || 'unknown',
                  remoteAddress: session.remoteAddress,
                  hostname: opts.hostname,
                  protocol: (session.transmissionType as string | undefined) ?? 'ESMTP',
                },
              })
              .then((delivered) => {
                metrics?.smtpMessage('stored', delivered.length);
                finish(null, `Ok: stored ${delivered.length} cop${delivered.length === 1 ? 'y' : 'ies'}`);
              });
          })
          .catch((err: unknown) => {
            metrics?.smtpMessage('failed');
            opts.storage?.failed(err);
            log.error({ err }, 'storing mail failed');
            finish(reply(451, '4.3.0', 'Temporary failure storing the message, try again later'));
          });
      });
    },

    onClose(session) {
      const s = sessions.get(session.id);
      if (!s) return;
      endTransaction(s);
      for (const t of s.delays) clearTimeout(t);
      sessions.delete(session.id);
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
      for (const s of sessions.values()) {
        endTransaction(s);
        for (const t of s.delays) clearTimeout(t);
      }
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
