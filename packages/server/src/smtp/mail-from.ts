// MAIL FROM: the operator's blocks first, then the parameters, the in-flight budget, the
// client's limits and its message rate; an accepted one starts the transaction's deadline.
import type { SMTPServerOptions } from 'smtp-server';
import { clientKey } from '../limits/window-limiter.js';
import type { HookContext } from './hook-context.js';
import { reply } from './replies.js';
import { accountOf } from './sink.js';

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

export function mailFromHook(ctx: HookContext): NonNullable<SMTPServerOptions['onMailFrom']> {
  const { opts, mail, log, metrics, budget, clients, sink, closeSession } = ctx;
  const { stateOf, endTransaction } = ctx.states;
  return (address, session, callback) => {
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
  };
}
