// SMTP receiver: smtp-server's hooks call the mail service, which knows nothing
// of SMTP. smtp-server adds the RFC 3463 enhanced status code for each reply
// code (550 -> 5.1.1, 451 -> 4.3.0, maxRecipients -> 452 4.5.3); rejectOversized
// makes it answer an oversize DATA with 552 5.3.4 itself.
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { SMTPServer, type SMTPServerAddress } from 'smtp-server';
import type { FastifyBaseLogger } from 'fastify';
import type { AddressRecord } from '../storage/store.js';
import { MessageBuffer } from '../mail/message-buffer.js';
import type { MailService } from '../mail/service.js';
import type { Metrics } from '../http/metrics.js';

export interface SmtpOptions {
  host: string;
  port: number;
  hostname: string;
  maxMessageBytes: number;
  tlsCert?: string | undefined;
  tlsKey?: string | undefined;
}

/** RFC 5321 §4.5.3.1.8: at least 100 recipients must be accepted; we take exactly that many. */
export const MAX_RECIPIENTS = 100;

function smtpError(code: number, message: string): Error & { responseCode: number } {
  return Object.assign(new Error(message), { responseCode: code });
}

export interface SmtpReceiver {
  listen(): Promise<number>;
  close(): Promise<void>;
}

export function createSmtpReceiver(opts: SmtpOptions, mail: MailService, log: FastifyBaseLogger, metrics?: Metrics): SmtpReceiver {
  // What each accepted RCPT resolved to, so DATA stores without a second look-up.
  const resolved = new WeakMap<SMTPServerAddress, AddressRecord>();
  const tls = opts.tlsCert && opts.tlsKey ? { cert: readFileSync(opts.tlsCert), key: readFileSync(opts.tlsKey) } : undefined;

  const server = new SMTPServer({
    name: opts.hostname,
    banner: 'temp-inbox ESMTP, receive only',
    size: opts.maxMessageBytes,
    // Without this smtp-server leaves oversize to onData, whose 552 it maps to 5.2.2;
    // with it, it answers 552 5.3.4 itself (DESIGN.md "SMTP", RFC 3463).
    rejectOversized: true,
    maxRecipients: MAX_RECIPIENTS,
    hideENHANCEDSTATUSCODES: false,
    hideDSN: true,
    authOptional: true,
    disabledCommands: tls ? ['AUTH'] : ['AUTH', 'STARTTLS'],
    ...(tls ?? {}),
    disableReverseLookup: true,
    logger: false,
    socketTimeout: 60_000,
    closeTimeout: 5_000,

    onRcptTo(address, _session, callback) {
      mail.resolveRecipient(address.address).then(
        (record) => {
          if (!record) {
            metrics?.smtpRecipientRefused();
            return callback(smtpError(550, `No such mailbox <${address.address}> here`));
          }
          resolved.set(address, record);
          callback();
        },
        (err: unknown) => {
          log.error({ err }, 'recipient look-up failed');
          callback(smtpError(451, 'Temporary failure, try again later'));
        },
      );
    },

    onData(stream, session, callback) {
      const message = new MessageBuffer(opts.maxMessageBytes);
      stream.on('data', (c: Buffer) => {
        // Past the limit smtp-server answers 552 itself; stop buffering.
        if (!stream.sizeExceeded) message.push(c);
      });
      stream.on('error', (err) => callback(err));
      stream.on('end', () => {
        if (stream.sizeExceeded) {
          metrics?.smtpMessage('too_large');
          return callback(smtpError(552, 'Message exceeds the maximum size'));
        }
        const seen = new Set<number>();
        const recipients: AddressRecord[] = [];
        for (const rcpt of session.envelope.rcptTo) {
          const record = resolved.get(rcpt);
          if (record && !seen.has(record.id)) {
            seen.add(record.id);
            recipients.push(record);
          }
        }
        const sender = session.envelope.mailFrom ? session.envelope.mailFrom.address : '';
        mail
          .deliver({
            sender,
            recipients,
            message,
            trace: {
              helo: session.hostNameAppearsAs || 'unknown',
              remoteAddress: session.remoteAddress,
              hostname: opts.hostname,
              protocol: (session.transmissionType as string | undefined) ?? 'ESMTP',
            },
          })
          .then(
            (delivered) => {
              metrics?.smtpMessage('stored', delivered.length);
              callback(null, `Ok: stored ${delivered.length} cop${delivered.length === 1 ? 'y' : 'ies'}`);
            },
            (err: unknown) => {
              metrics?.smtpMessage('failed');
              log.error({ err }, 'storing mail failed');
              callback(smtpError(451, 'Temporary failure storing the message, try again later'));
            },
          );
      });
    },
  });
  server.on('error', (err) => log.warn({ err }, 'smtp connection error'));

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
    close() {
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
