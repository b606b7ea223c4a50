// Reading one mail: its header panel, codes to copy, attachments, and the HTML
// (sandboxed, html-view.tsx), whole text and source views, as ARIA tabs.
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import PostalMime, { type Email } from 'postal-mime';
import { api, metadataOf, type FullMail, type MailListItem } from './api.js';
import { AuthBadges } from './auth-badges.js';
import { CopyChip } from './copy-chip.js';
import type { Run } from './format.js';
import { HtmlView } from './html-view.js';
import { bytes, fullDate } from './intl.js';
import { MailHeaders } from './mail-headers.js';
import { s } from './strings.js';
import { ViewTabs } from './view-tabs.js';

type View = 'html' | 'text' | 'raw';

/** The text of an HTML part, as the browser reads it (for a mail without a text part). */
function textOfHtml(html: string): string {
  const doc = new DOMParser().parseFromString(html, 'text/html');
  for (const el of doc.querySelectorAll('script, style, head')) el.remove();
  return (doc.body?.innerText ?? doc.body?.textContent ?? '').trim();
}

export function Reader(props: { item: MailListItem; run: Run; online: boolean; onDeleted: () => void; onBack?: () => void; onMarkUnread: () => void }) {
  const { item, run, online, onDeleted, onBack, onMarkUnread } = props;
  const meta = useMemo(() => metadataOf(item), [item]);
  const [full, setFull] = useState<FullMail | undefined>();
  const [email, setEmail] = useState<Email | undefined>();
  const [view, setView] = useState<View>(meta.has_html ? 'html' : 'text');
  const [eml, setEml] = useState<string | undefined>();

  // A mail opened while the server could not be reached is fetched again once the live
  // connection is back (and the error it left is cleared by that run).
  const [attempt, setAttempt] = useState(0);
  const wasOnline = useRef(online);
  const loaded = useRef(false);
  useEffect(() => {
    if (online && !wasOnline.current && !loaded.current) setAttempt((a) => a + 1);
    wasOnline.current = online;
  }, [online]);
  useEffect(() => {
    void run(async () => {
      const mail = await api.mail(item.uuid);
      loaded.current = true;
      setFull(mail);
      setEmail(await PostalMime.parse(mail.raw, { attachmentEncoding: 'arraybuffer' }));
    });
  }, [item.uuid, run, attempt]);

  // The source as a .eml file to download (an object URL, released with the view).
  useEffect(() => {
    if (!full) return;
    const url = URL.createObjectURL(new Blob([full.raw], { type: 'message/rfc822' }));
    setEml(url);
    return () => URL.revokeObjectURL(url);
  }, [full]);

  const text = useMemo(() => (email ? (email.text ?? (email.html ? textOfHtml(email.html) : '')) : ''), [email]);
  // Parts the HTML shows inline (by cid:) are not listed again as attachments.
  const inlineIds = useMemo(() => new Set((email?.attachments ?? []).filter((a) => a.contentId && email?.html?.includes(`cid:${a.contentId.replace(/^<|>$/g, '')}`)).map((a) => a.contentId)), [email]);
  const listed = meta.attachments.filter((_, i) => !inlineIds.has(email?.attachments[i]?.contentId));

  return (
    <article>
      <header class="mail-head">
        {onBack && (
          <button type="button" class="back" onClick={onBack}>
            {s.back}
          </button>
        )}
        <h2>{meta.subject || s.noSubject}</h2>
        {email ? (
          <MailHeaders email={email} fallbackFrom={meta.from.address || item.source} received={item.created_at} recipients={item.recipients} />
        ) : (
          <p>
            {s.from} <strong>{meta.from.name ? `${meta.from.name} <${meta.from.address}>` : meta.from.address || item.source}</strong> · {fullDate(new Date(item.created_at))}
          </p>
        )}
        <AuthBadges auth={meta.auth} />
        <div class="actions">
          <button type="button" onClick={onMarkUnread}>
            {s.markUnread}
          </button>
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
            {s.delete}
          </button>
        </div>
      </header>
      {meta.codes.length > 0 && (
        <p class="codes">
          {s.codes}{' '}
          {meta.codes.map((c) => (
            <CopyChip key={c} value={c} label={s.code(c)} />
          ))}
        </p>
      )}
      {listed.length > 0 && (
        <ul class="attachments" aria-label={s.attachments}>
          {listed.map((a) => (
            <li key={a.id}>
              <span class="file-type" aria-hidden="true">
                {(a.filename.split('.').pop() ?? '').slice(0, 4).toUpperCase() || s.fileType}
              </span>
              <a href={api.attachmentUrl(item.uuid, a.id)} download={a.filename}>
                {a.filename || s.attachment}
              </a>{' '}
              <span class="muted">
                {a.content_type}, {bytes(a.size)}
              </span>
            </li>
          ))}
        </ul>
      )}
      <ViewTabs
        label={s.views}
        idPrefix={`view-${item.uuid}`}
        selected={view}
        onSelect={setView}
        tabs={[
          { key: 'html', label: s.viewHtml, disabled: !meta.has_html },
          { key: 'text', label: s.viewText },
          { key: 'raw', label: s.viewSource },
        ]}
      >
        {!full || !email ? (
          <p class="muted">{s.loading}</p>
        ) : view === 'html' && email.html ? (
          <HtmlView html={email.html} attachments={email.attachments} />
        ) : view === 'raw' ? (
          <>
            {eml && (
              <p>
                <a href={eml} download={`${item.uuid}.eml`}>
                  {s.downloadEml}
                </a>
              </p>
            )}
            {/* Focusable, so that a long source scrolls by keyboard too. */}
            <pre class="raw" tabIndex={0}>
              {full.raw}
            </pre>
          </>
        ) : (
          <pre class="text" tabIndex={0}>
            {text}
          </pre>
        )}
      </ViewTabs>
    </article>
  );
}
