// The header panel of a mail: From, To, Cc, Reply-To, Date, Message-ID, and every
// header on request, as the server parsed them (GET /api/mail/{uuid}/parsed).
import type { ParsedMail } from './api.js';
import { fullDate } from './intl.js';
import { s } from './strings.js';

type Mailbox = ParsedMail['from'];

const one = (a: Mailbox): string => (a.name && a.address ? `${a.name} <${a.address}>` : a.name || a.address);
const list = (as: Mailbox[]) => as.map(one).filter(Boolean).join(', ');

/** `received`: when the service stored it (ISO), shown when the mail has no Date of its own. */
/** `recipients`: a sandbox's mail's envelope recipients (Bcc-only ones are in no header). */
export function MailHeaders(props: { mail: ParsedMail; fallbackFrom: string; received: string; recipients?: string[] | undefined }) {
  const { mail, fallbackFrom, received } = props;
  const rows: [string, string][] = [
    [s.header.from, one(mail.from) || fallbackFrom || s.unknownSender],
    [s.header.to, list(mail.to)],
    [s.header.cc, list(mail.cc)],
    [s.header.replyTo, list(mail.reply_to)],
    mail.date ? [s.header.date, fullDate(new Date(mail.date)) || mail.date] : [s.header.received, fullDate(new Date(received))],
    [s.header.messageId, mail.message_id],
    [s.header.recipients, (props.recipients ?? []).join(', ')],
  ];
  return (
    <>
      <dl class="headers">
        {rows
          .filter(([, v]) => v)
          .map(([k, v]) => (
            <div key={k}>
              <dt>{k}</dt>
              <dd>{v}</dd>
            </div>
          ))}
      </dl>
      <details class="all-headers">
        <summary>{s.allHeaders}</summary>
        <dl>
          {mail.headers.map((h, i) => (
            <div key={i}>
              <dt>{h.name}</dt>
              <dd>{h.value}</dd>
            </div>
          ))}
        </dl>
      </details>
    </>
  );
}
