// SMTP replies with an explicit RFC 3463 enhanced status code. smtp-server derives
// the code from the reply number alone (452 is always 4.2.2 "mailbox full"), which
// is wrong for a full server (4.3.1) or a rate limit (4.7.0); a handler's message
// that starts with its own enhanced code is therefore sent as is, without a second one.
import { SMTPConnection } from 'smtp-server/lib/smtp-connection.js';

const ENHANCED = /^[245]\.\d{1,3}\.\d{1,3} /;
const original = SMTPConnection.prototype.send;
SMTPConnection.prototype.send = function send(this: SMTPConnection, code, data, context) {
  return original.call(this, code, data, typeof data === 'string' && ENHANCED.test(data) ? false : context);
};

export type SmtpError = Error & { responseCode: number };

/** An error for a smtp-server callback: `reply(452, '4.3.1', 'Try later')` answers "452 4.3.1 Try later". */
export function reply(code: number, enhanced: string | undefined, message: string): SmtpError {
  return Object.assign(new Error(enhanced ? `${enhanced} ${message}` : message), { responseCode: code });
}
