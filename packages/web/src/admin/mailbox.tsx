// One address's mail: the list, newest first, and one mail read with its metadata and
// raw message (as text: nothing of the mail is rendered as HTML here).
import { useEffect, useRef, useState } from 'preact/hooks';
import type { AdminAddress, AdminApi, FullMail, MailListItem, MailMetadata } from './api.js';
import { bytes, when } from './api.js';
import { Pager } from './pager.js';
import type { Report } from './report.js';

const PAGE = 20;

function metadataOf(m: MailListItem): Partial<MailMetadata> {
  try {
    return JSON.parse(m.metadata) as MailMetadata;
  } catch {
    return {};
  }
}

const person = (p: { name: string; address: string } | undefined) => (p ? (p.name ? `${p.name} <${p.address}>` : p.address) : '');

function MailView({ mail }: { mail: FullMail }) {
  const meta = metadataOf(mail);
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => heading.current?.focus(), [mail.uuid]);
  return (
    <article class="mail" aria-labelledby="mail-subject">
      <h4 id="mail-subject" tabIndex={-1} ref={heading}>
        {meta.subject || '(no subject)'}
      </h4>
      <dl>
        <dt>From</dt>
        <dd>{person(meta.from)}</dd>
        <dt>To</dt>
        <dd>{(meta.to ?? []).map(person).join(', ')}</dd>
        <dt>Date</dt>
        <dd>{meta.date ?? '—'}</dd>
        <dt>Received</dt>
        <dd>{when(mail.created_at)}</dd>
        <dt>Envelope sender</dt>
        <dd>{mail.source || '(null sender)'}</dd>
        <dt>Size</dt>
        <dd>{bytes(meta.size ?? 0)}</dd>
        <dt>Message-ID</dt>
        <dd>{mail.message_id || '—'}</dd>
        <dt>Attachments</dt>
        <dd>{(meta.attachments ?? []).map((a) => `${a.filename} (${bytes(a.size)})`).join(', ') || 'none'}</dd>
      </dl>
      <h5>Raw message</h5>
      <pre class="raw" tabIndex={0} aria-label="Raw message">
        {mail.raw}
      </pre>
    </article>
  );
}

export function Mailbox({ api, report, address, onClose }: { api: AdminApi; report: Report; address: AdminAddress; onClose: () => void }) {
  const [offset, setOffset] = useState(0);
  const [page, setPage] = useState<{ results: MailListItem[]; count: number } | null>(null);
  const [reading, setReading] = useState<FullMail | null>(null);
  useEffect(() => {
    setReading(null);
    api.mails(address.id, PAGE, offset).then(setPage, (err: unknown) => report.failed(err));
  }, [api, address.id, offset]);

  const read = (m: MailListItem) => api.mail(address.id, m.uuid).then(setReading, (err: unknown) => report.failed(err));

  return (
    <section class="mailbox" aria-labelledby="mailbox-title">
      <div class="section-head">
        <h3 id="mailbox-title">Mail of {address.address}</h3>
        <button type="button" onClick={onClose}>
          Close
        </button>
      </div>
      {page && page.count === 0 && <p class="muted">No mail.</p>}
      {page && page.count > 0 && (
        <>
          <table class="mails">
            <caption>
              Mails {offset + 1}–{offset + page.results.length} of {page.count}, newest first
            </caption>
            <thead>
              <tr>
                <th scope="col">Received</th>
                <th scope="col">From</th>
                <th scope="col">Subject</th>
                <th scope="col">
                  <span class="sr">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {page.results.map((m) => {
                const meta = metadataOf(m);
                return (
                  <tr key={m.uuid} class={reading?.uuid === m.uuid ? 'open' : ''}>
                    <td>{when(m.created_at)}</td>
                    <td>{person(meta.from) || m.source}</td>
                    <td>{meta.subject || '(no subject)'}</td>
                    <td>
                      <button type="button" aria-label={`Read ${meta.subject || 'the mail without a subject'}`} onClick={() => void read(m)}>
                        Read
                      </button>
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
          <Pager offset={offset} size={PAGE} count={page.count} onMove={setOffset} />
        </>
      )}
      {reading && <MailView mail={reading} />}
    </section>
  );
}
