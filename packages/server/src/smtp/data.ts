// DATA: the message read into a buffer within the in-flight budget, its client's share
// and the minimum rate (an oversize one read and dropped, up to twice the limit), then
// charged to the client's byte budgets and stored: delivered, or captured for a login.
// Each refusal is counted by its reason and the first recipient's domain.
import type { SMTPServerOptions, SMTPServerSession } from 'smtp-server';
import { clientKey } from '../limits/window-limiter.js';
import { AttachmentRefusedError } from '../mail/attachment-policy.js';
import { domainOf } from '../mail/refusal-counts.js';
import { SpamRefusedError } from '../mail/spam-check.js';
import { MessageBuffer } from '../mail/message-buffer.js';
import type { Recipient } from '../mail/service.js';
import { countGarbage, endOfMessage } from '../memory/young-garbage.js';
import { BUDGET_EXCEEDED, SHARE_EXCEEDED } from './client-limits.js';
import { watchDataRate } from './data-rate.js';
import type { HookContext } from './hook-context.js';
import { reasonOf, withAbuseContact } from './refusals.js';
import { reply } from './replies.js';
import { accountOf } from './sink.js';

export function dataHook(ctx: HookContext): NonNullable<SMTPServerOptions['onData']> {
  const { opts, log, metrics, budget, clients, closeSession } = ctx;
  const { stateOf, endTransaction } = ctx.states;
  const trusted = clients.trusted;
  return (stream, session, callback) => {
  const s = stateOf(session);
  const countRefusal = (reason: Parameters<HookContext['countRefusal']>[0]) => ctx.countRefusal(reason, domainOf(session.envelope.rcptTo[0]?.address ?? ''));
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
      countRefusal('message_size');
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
    countRefusal('busy');
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
      countRefusal('message_size');
      charge();
      return finish(reply(552, '5.3.4', 'Message exceeds the maximum size'));
    }
    if (claim.overBudget) {
      const [enhanced, text] = claim.over === 'share' ? SHARE_EXCEEDED : BUDGET_EXCEEDED;
      return finish(reply(421, enhanced, text));
    }
    storeMessage(ctx, session, message, client, finish, countRefusal);
  });
  };
}

/** The end of a message that fits: its bytes charged to the client's budgets, then delivered to its recipients or captured for its login. */
function storeMessage(
  ctx: HookContext,
  session: SMTPServerSession,
  message: MessageBuffer,
  client: string,
  finish: (err: Error | null, text?: string) => void,
  countRefusal: (reason: Parameters<HookContext['countRefusal']>[0]) => void,
): void {
  const { opts, mail, log, metrics, clients, sink, resolved } = ctx;
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
        const reason = reasonOf(refusal);
        if (reason) countRefusal(reason);
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
      // Permanent: the same message is refused again (docs/decisions.md "Attachment policy"); nothing was stored.
      if (err instanceof AttachmentRefusedError) {
        metrics?.smtpMessage('refused');
        metrics?.smtpAttachmentRefused(err.reason);
        log.info({ session: session.id, remote: session.remoteAddress, reason: err.reason }, 'SMTP message refused by the attachment policy');
        countRefusal(err.reason === 'size' ? 'attachment_size' : 'attachment_type');
        return finish(err.reason === 'size' ? reply(552, '5.3.4', err.message) : reply(552, '5.7.0', withAbuseContact(err.message, opts.abuseContact)));
      }
      // Permanent too: the same message scores the same (docs/operating.md "Abuse controls").
      if (err instanceof SpamRefusedError) {
        metrics?.smtpMessage('refused');
        log.info({ session: session.id, remote: session.remoteAddress, score: err.score }, 'SMTP message refused for its spam score');
        countRefusal('spam_score');
        return finish(reply(554, '5.7.1', withAbuseContact(err.message, opts.abuseContact)));
      }
      metrics?.smtpMessage('failed');
      opts.storage?.failed(err);
      log.error({ err }, 'storing mail failed');
      finish(reply(451, '4.3.0', 'Temporary failure storing the message, try again later'));
    });
}
