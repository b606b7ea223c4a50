// The header panel of a mail: From, To, Cc, Reply-To, Date, Message-ID, and every
// header on request.
import type { Address, Email } from 'postal-mime';
import { fullDate } from './intl.js';
import { s } from './strings.js';

const one = (a: Address): string[] => (a.group ? a.group.flatMap(one) : [a.name ? `${a.name} <${a.address ?? ''}>` : (a.address ?? '')]);
const list = (as: Address[] | undefined) => (as ?? []).flatMap(one).join(', ');

/** `received`: when the service stored it (ISO), shown when the mail has no Date of its own. */
/** `recipients`: a sandbox's mail's envelope recipients (Bcc-only ones are in no header). */
export function MailHeaders(props: { email: Email; fallbackFrom: string; received: string; recipients?: string[] | undefined }) {
  const { email, fallbackFrom, received } = props;
  const rows: [string, string][] = [
    [s.header.from, (email.from ? list([email.from]) : fallbackFrom) || s.unknownSender],
    [s.header.to, list(email.to)],
    [s.header.cc, list(email.cc)],
    [s.header.replyTo, list(email.replyTo)],
    email.date ? [s.header.date, fullDate(new Date(email.date)) || email.date] : [s.header.received, fullDate(new Date(received))],
    [s.header.messageId, email.messageId ?? ''],
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
          {email.headers.map((h, i) => (
            <div key={i}>
              <dt>{h.originalKey ?? h.key}</dt>
              <dd>{h.value}</dd>
            </div>
          ))}
        </dl>
      </details>
    </>
  );
}
