// Reading one mail: its header, codes, links, attachments, and the HTML (sandboxed),
// text and source views.
import { useEffect, useMemo, useState } from 'preact/hooks';
import PostalMime from 'postal-mime';
import { api, metadataOf, type FullMail, type MailListItem } from './api.js';
import { copy, when, type Run } from './format.js';

/**
 * The mail's HTML in a sandboxed frame: no scripts, no same-origin access, no remote
 * content (the frame's own policy allows only inline styles and data: images), so a
 * mail can neither run code nor tell its sender it was opened.
 */
function htmlDocument(html: string): string {
  return (
    '<!doctype html><meta charset="utf-8">' +
    `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; img-src data:; style-src 'unsafe-inline'; font-src data:">` +
    '<base target="_blank">' +
    html
  );
}

type View = 'html' | 'text' | 'raw';

export function Reader(props: { item: MailListItem; run: Run; onDeleted: () => void }) {
  const { item, run, onDeleted } = props;
  const meta = useMemo(() => metadataOf(item), [item]);
  const [full, setFull] = useState<FullMail | undefined>();
  const [body, setBody] = useState<{ html?: string | undefined; text?: string | undefined } | undefined>();
  const [view, setView] = useState<View>(meta.has_html ? 'html' : 'text');

  useEffect(() => {
    void run(async () => {
      const mail = await api.mail(item.uuid);
      setFull(mail);
      const parsed = await PostalMime.parse(mail.raw, { attachmentEncoding: 'arraybuffer' });
      setBody({ html: parsed.html, text: parsed.text });
    });
  }, [item.uuid, run]);

  return (
    <article>
      <header class="mail-head">
        <h2>{meta.subject || '(no subject)'}</h2>
        <p>
          From <strong>{meta.from.name ? `${meta.from.name} <${meta.from.address}>` : meta.from.address || item.source}</strong>
        </p>
        <p>
          To {item.address} · {when(item.created_at)}
        </p>
        <div class="actions">
          <button
            type="button"
            class="danger"
            onClick={() =>
              void run(async () => {
                await api.deleteMail(item.uuid);
                onDeleted();
              })
            }
          >
            Delete
          </button>
        </div>
      </header>
      {meta.codes.length > 0 && (
        <p class="codes">
          Codes:{' '}
          {meta.codes.map((c) => (
            <button key={c} type="button" class="code" onClick={() => copy(c)} title="Copy">
              {c}
            </button>
          ))}
        </p>
      )}
      {meta.attachments.length > 0 && (
        <ul class="attachments" aria-label="Attachments">
          {meta.attachments.map((a) => (
            <li key={a.id}>
              <a href={api.attachmentUrl(item.uuid, a.id)} download={a.filename}>
                {a.filename || 'attachment'}
              </a>{' '}
              <span class="muted">
                {a.content_type}, {a.size.toLocaleString()} bytes
              </span>
            </li>
          ))}
        </ul>
      )}
      <div class="tabs" role="tablist">
        {(['html', 'text', 'raw'] as const).map((v) => (
          <button key={v} type="button" role="tab" aria-selected={view === v} class={view === v ? 'on' : ''} disabled={v === 'html' && !meta.has_html} onClick={() => setView(v)}>
            {v === 'html' ? 'HTML' : v === 'text' ? 'Text' : 'Source'}
          </button>
        ))}
      </div>
      {!full || !body ? (
        <p class="muted">Loading…</p>
      ) : view === 'html' && body.html ? (
        <iframe title="Message (HTML)" class="html" sandbox="allow-popups allow-popups-to-escape-sandbox" srcDoc={htmlDocument(body.html)} />
      ) : view === 'raw' ? (
        <pre class="raw">{full.raw}</pre>
      ) : (
        <pre class="text">{body.text ?? meta.preview}</pre>
      )}
    </article>
  );
}
