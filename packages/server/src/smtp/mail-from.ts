// MAIL FROM: the operator's blocks first, then the parameters, the in-flight budget, the
// client's limits, its message rate and its sending domain's; an accepted one starts the
// transaction's deadline. Each refusal is counted by its reason.
import type { SMTPServerOptions, SMTPServerSession } from 'smtp-server';
import { countedDomain, domainOf } from '../mail/refusal-counts.js';
import { clientKey } from '../limits/window-limiter.js';
import type { HookContext } from './hook-context.js';
import { reasonOf, refusalReply, withAbuseContact } from './refusals.js';
import { reply, type SmtpError } from './replies.js';
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
  const { opts, mail, log, metrics, budget, clients, sink, closeSession, countRefusal } = ctx;
  const { stateOf, endTransaction } = ctx.states;
  const senderDomainWait = senderDomainLimit(ctx);
  return (address, session, callback) => {
    const s = stateOf(session);
    endTransaction(s);
    // Parameters of extensions it does not offer (RFC 5321 §4.1.1.11); smtp-server passes them on.
    const unknown = Object.keys(address.args || {}).find((key) => !MAIL_PARAMETERS.has(key.toUpperCase()));
    if (unknown !== undefined) return callback(reply(555, '5.5.4', `MAIL FROM parameter ${unknown.slice(0, 32).replace(/[^\x21-\x7e]/g, '?')} is not recognized`));
    /** A refusal, counted by its reason (no recipient yet). */
    const refuse = (err: SmtpError) => {
      const reason = reasonOf(err);
      if (reason) countRefusal(reason, undefined);
      callback(err);
    };
    if (budget.full) return refuse(refusalReply('busy', 452, '4.3.1', 'Too much mail in progress here; try again in a few minutes'));
    const limiter = opts.limits.messages;
    const admit = () => {
      clients
        .mailFromRefusal(session.remoteAddress)
        .then(async (refusal) => {
          if (refusal) return refuse(refusal);
          const wait = limiter ? await limiter.consume(clientKey(session.remoteAddress)) : 0;
          if (wait) return refuse(refusalReply('rate_limit', 421, '4.7.0', `Too many messages from your address; try again in ${wait} seconds`));
          const domainRefusal = await senderDomainWait(address.address, session);
          return domainRefusal ? refuse(domainRefusal) : start();
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
        refuse(refusalReply('blocked', 550, '5.7.1', withAbuseContact(BLOCKED[block.kind], opts.abuseContact)));
      },
      (err: unknown) => {
        // The block list never fails a check (it keeps the last list it read); this is a bug, not a refusal.
        log.error({ err }, 'SMTP block check failed');
        admit();
      },
    );
  };
}

/**
 * SENDER_DOMAIN_RATE_LIMIT: transactions per MAIL FROM domain (lower-cased, from every client,
 * shared through Redis), a 451 4.7.1 that passes once the window ends. The null sender has no
 * domain and a sandbox's login sends its own test mail: neither is counted.
 */
function senderDomainLimit(ctx: HookContext): (sender: string, session: SMTPServerSession) => Promise<SmtpError | undefined> {
  const limiter = ctx.opts.limits.senderDomain;
  return async (sender, session) => {
    const domain = countedDomain(domainOf(sender));
    if (!limiter || domain === '' || accountOf(session)) return undefined;
    const wait = await limiter.consume(domain);
    if (!wait) return undefined;
    const shown = domain.slice(0, 100).replace(/[^\x21-\x7e]/g, '?');
    return refusalReply('sender_domain_rate', 451, '4.7.1', `Too much mail from senders at ${shown} for now; try again in ${wait} seconds`);
  };
}
