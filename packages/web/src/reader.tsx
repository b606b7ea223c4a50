// Reading one mail: its header panel, codes to copy, attachments, and the HTML
// (sandboxed, html-view.tsx), whole text and source views, as ARIA tabs. The mail comes
// parsed by the server (GET /api/mail/{uuid}/parsed): the page has no MIME parser of its
// own. Its source is fetched when the Source tab is opened, its deliverability report
// (report-view.tsx) when the Report tab is.
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { api, metadataOf, type MailListItem, type ParsedMail } from './api.js';
import { AuthBadges } from './auth-badges.js';
import { CopyChip } from './copy-chip.js';
import type { Run } from './format.js';
import { HtmlView } from './html-view.js';
import { shownInline } from './inline-images.js';
import { bytes, fullDate } from './intl.js';
import { MailHeaders } from './mail-headers.js';
import { ReportView, useReport } from './report-view.js';
import { s } from './strings.js';
import { ViewTabs } from './view-tabs.js';

type View = 'html' | 'text' | 'raw' | 'report';

function Attachments(props: { uuid: string; list: { id: string; filename: string; content_type: string; size: number }[] }) {
  if (props.list.length === 0) return null;
  return (
    <ul class="attachments" aria-label={s.attachments}>
      {props.list.map((a) => (
        <li key={a.id}>
          <span class="file-type" aria-hidden="true">
            {(a.filename.split('.').pop() ?? '').slice(0, 4).toUpperCase() || s.fileType}
          </span>
          <a href={api.attachmentUrl(props.uuid, a.id)} download={a.filename}>
            {a.filename || s.attachment}
          </a>{' '}
          <span class="muted">
            {a.content_type}, {bytes(a.size)}
          </span>
        </li>
      ))}
    </ul>
  );
}

/** The Source tab: the message as received, and a .eml file of it to download. */
function Source(props: { uuid: string; raw: string | undefined }) {
  const { uuid, raw } = props;
  // The source as a .eml file to download (an object URL, released with the view).
  const [eml, setEml] = useState<string | undefined>();
  useEffect(() => {
    if (raw === undefined) return;
    const url = URL.createObjectURL(new Blob([raw], { type: 'message/rfc822' }));
    setEml(url);
    return () => URL.revokeObjectURL(url);
  }, [raw]);
  if (raw === undefined) return <p class="muted">{s.loading}</p>;
  return (
    <>
      {eml && (
        <p>
          <a href={eml} download={`${uuid}.eml`}>
            {s.downloadEml}
          </a>
        </p>
      )}
      {/* Focusable, so that a long source scrolls by keyboard too. */}
      <pre class="raw" tabIndex={0}>
        {raw}
      </pre>
    </>
  );
}

export function Reader(props: { item: MailListItem; run: Run; online: boolean; onDeleted: () => void; onBack?: () => void; onMarkUnread: () => void }) {
  const { item, run, online, onDeleted, onBack, onMarkUnread } = props;
  const meta = useMemo(() => metadataOf(item), [item]);
  const [mail, setMail] = useState<ParsedMail | undefined>();
  const [raw, setRaw] = useState<string | undefined>();
  const [view, setView] = useState<View>(meta.has_html ? 'html' : 'text');

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
      setMail(await api.parsed(item.uuid));
      loaded.current = true;
    });
  }, [item.uuid, run, attempt]);
  useEffect(() => {
    if (view !== 'raw' || raw !== undefined) return;
    void run(async () => setRaw((await api.mail(item.uuid)).raw));
  }, [view, raw, item.uuid, run, attempt]);
  const report = useReport(item.uuid, view === 'report');

  // Parts the HTML shows inline (by cid:) are not listed again as attachments.
  const listed = useMemo(() => {
    if (!mail) return meta.attachments;
    const inline = new Set(shownInline(mail.html, mail.attachments).map((a) => a.id));
    return mail.attachments.filter((a) => !inline.has(a.id));
  }, [mail, meta]);

  return (
    <article>
      <header class="mail-head">
        {onBack && (
          <button type="button" class="back" onClick={onBack}>
            {s.back}
          </button>
        )}
        <h2>{meta.subject || s.noSubject}</h2>
        {mail ? (
          <MailHeaders mail={mail} fallbackFrom={meta.from.address || item.source} received={item.created_at} recipients={item.recipients} />
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
      <Attachments uuid={item.uuid} list={listed} />
      <ViewTabs
        label={s.views}
        idPrefix={`view-${item.uuid}`}
        selected={view}
        onSelect={setView}
        tabs={[
          { key: 'html', label: s.viewHtml, disabled: mail ? mail.html === null : !meta.has_html },
          { key: 'text', label: s.viewText },
          { key: 'raw', label: s.viewSource },
          { key: 'report', label: s.viewReport },
        ]}
      >
        {view === 'report' ? (
          <ReportView state={report} />
        ) : !mail ? (
          <p class="muted">{s.loading}</p>
        ) : view === 'html' && mail.html !== null ? (
          <HtmlView uuid={item.uuid} html={mail.html} attachments={mail.attachments} />
        ) : view === 'raw' ? (
          <Source uuid={item.uuid} raw={raw} />
        ) : (
          <>
            {mail.degraded && <p class="muted">{s.degraded}</p>}
            <pre class="text" tabIndex={0}>
              {mail.text}
            </pre>
          </>
        )}
      </ViewTabs>
    </article>
  );
}
