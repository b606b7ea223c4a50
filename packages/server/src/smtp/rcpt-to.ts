// RCPT TO: the recipient looked up (550 5.1.1 when unknown, slowed down after a few, the
// session closed after too many), then the client's recipient and new-address windows and
// the address's quota. Each refusal is counted by its reason and the recipient's domain.
import type { SMTPServerOptions } from 'smtp-server';
import { clientKey } from '../limits/window-limiter.js';
import { domainOf } from '../mail/refusal-counts.js';
import { RetiredDomainError } from '../domain/domain-pool.js';
import type { Recipient } from '../mail/service.js';
import type { HookContext } from './hook-context.js';
import { reply } from './replies.js';
import { accountOf } from './sink.js';

/** Refused recipients answered at once; later ones are slowed down (a typo is fine, probing is not). */
export const BAD_RECIPIENTS_FREE = 3;

export function rcptToHook(ctx: HookContext): NonNullable<SMTPServerOptions['onRcptTo']> {
  const { opts, mail, log, metrics, auth, sink, resolved, countRefusal } = ctx;
  const { stateOf } = ctx.states;
  return (address, session, callback) => {
    const account = accountOf(session);
    if (account && sink) return sink.rcptTo(account, address, session, callback);
    const s = stateOf(session);
    const domain = domainOf(address.address);
    const refuse = () => {
      metrics?.smtpRecipientRefused();
      countRefusal('unknown_recipient', domain);
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
      const limited = (text: string) => {
        countRefusal('rate_limit', domain);
        callback(reply(452, '4.7.0', text));
      };
      if (wait) return limited(`Too many recipients from your address; try again in ${wait} seconds`);
      // A catch-all address nobody created is created when its mail is stored; how many a client may ask for is bounded.
      const creates = record.pending ? await opts.limits.newAddresses?.consume(clientKey(session.remoteAddress)) : 0;
      if (creates) return limited(`Too many new addresses from your address; try again in ${creates} seconds`);
      if (!(await mail.hasRoom(record))) {
        countRefusal('mailbox_full', domain);
        return callback(reply(452, '4.2.2', `Mailbox <${address.address}> is full; try again later`));
      }
      resolved.set(address, record);
      callback();
    };
    mail
      .resolveRecipient(address.address)
      .then((record) => (record ? accept(record) : refuse()))
      .catch((err: unknown) => {
        // A retired domain past its grace (docs/operating.md "Domains and rotation") takes no mail again: refused for good.
        if (err instanceof RetiredDomainError) {
          countRefusal('retired_domain', domain);
          return callback(reply(550, '5.1.2', err.message));
        }
        log.error({ err }, 'recipient look-up failed');
        callback(reply(451, '4.3.0', 'Temporary failure, try again later'));
      });
  };
}
