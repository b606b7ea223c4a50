// The header panel of a mail: From, To, Cc, Reply-To, Date, Message-ID, and every
// header on request.
import type { Address, Email } from 'postal-mime';

const one = (a: Address): string[] => (a.group ? a.group.flatMap(one) : [a.name ? `${a.name} <${a.address ?? ''}>` : (a.address ?? '')]);
const list = (as: Address[] | undefined) => (as ?? []).flatMap(one).join(', ');

export function MailHeaders(props: { email: Email; fallbackFrom: string }) {
  const { email, fallbackFrom } = props;
  const rows: [string, string][] = [
    ['From', email.from ? list([email.from]) : fallbackFrom],
    ['To', list(email.to)],
    ['Cc', list(email.cc)],
    ['Reply-To', list(email.replyTo)],
    ['Date', email.date ? new Date(email.date).toLocaleString() : ''],
    ['Message-ID', email.messageId ?? ''],
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
        <summary>All headers</summary>
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
