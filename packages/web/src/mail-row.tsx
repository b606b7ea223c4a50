// The inbox's list (inbox.tsx): its toolbar, and each mail in it: sender, time, subject
// (with a paper clip for attachments), preview and first code; unread mail is bold with a dot.
import { metadataOf, type MailListItem } from './api.js';
import { sender } from './format.js';
import { fullDate, when } from './intl.js';
import type { LiveState } from './live.js';
import { LiveStatus } from './live-status.js';
import { Highlight, SearchBox, type Found } from './search-box.js';
import { s } from './strings.js';

/** The count (or matches), the search field, the live connection's state and Clear. */
export function Toolbar(props: { found: Found | undefined; count: number; live: LiveState; onFound: (f: Found | undefined) => void; onError: (e: string) => void; onClear: () => void }) {
  const { found, count } = props;
  return (
    <div class="toolbar">
      <strong aria-live="polite">{found ? s.found(found.count) : s.mails(count)}</strong>
      <SearchBox onFound={props.onFound} onError={props.onError} />
      <LiveStatus state={props.live} />
      <button
        type="button"
        disabled={count === 0}
        onClick={() => {
          if (confirm(s.confirmClear)) props.onClear();
        }}
      >
        {s.clear}
      </button>
    </div>
  );
}

/** The mail shown (the list, or the search's results), or what to say when there is none. */
export function MailItems(props: { shown: MailListItem[]; found: Found | undefined; address: string; selected: string | undefined; arrived: ReadonlySet<string>; now: number; onSelect: (uuid: string) => void }) {
  const { shown, found, selected, arrived, now } = props;
  if (found && found.results.length === 0) return <p class="empty">{s.noMatch(found.query)}</p>;
  if (shown.length === 0) {
    return (
      <p class="empty">
        {s.waitingBefore}
        <strong>{props.address}</strong>
        {s.waitingAfter}
      </p>
    );
  }
  return (
    <ul>
      {shown.map((m) => (
        <MailRow key={m.uuid} mail={m} selected={m.uuid === selected} arrived={arrived.has(m.uuid)} now={now} words={found?.words} onSelect={props.onSelect} />
      ))}
    </ul>
  );
}

export function MailRow(props: { mail: MailListItem; selected: boolean; arrived: boolean; now: number; words: string[] | undefined; onSelect: (uuid: string) => void }) {
  const { mail: m, selected, arrived, now, words, onSelect } = props;
  const meta = metadataOf(m);
  return (
    <li class={`${selected ? 'selected' : ''}${arrived ? ' arrived' : ''}`}>
      <button type="button" class={m.seen ? 'item' : 'item unread'} onClick={() => onSelect(m.uuid)}>
        <span class="from">
          {!m.seen && (
            <>
              <span class="dot" aria-hidden="true" />
              <span class="sr">{s.unread}, </span>
            </>
          )}
          {sender(m)}
        </span>
        <time class="time" dateTime={m.created_at} title={fullDate(new Date(m.created_at))}>
          {when(m.created_at, now)}
        </time>
        <span class="subject">
          {meta.attachments.length > 0 && (
            <>
              <svg class="clip" aria-hidden="true" viewBox="0 0 16 16" width="12" height="12">
                <path fill="none" stroke="currentColor" stroke-width="1.5" stroke-linecap="round" d="M10.5 4.5 5.3 9.7a1.5 1.5 0 0 0 2.1 2.1l5.5-5.5a3 3 0 0 0-4.2-4.2L3.2 7.6a4.5 4.5 0 0 0 6.4 6.4l4.2-4.2" />
              </svg>
              <span class="sr">{s.withAttachments(meta.attachments.length)}, </span>
            </>
          )}
          {meta.subject ? <Highlight text={meta.subject} words={words} /> : s.noSubject}
        </span>
        <span class="preview">
          <Highlight text={meta.preview} words={words} />
        </span>
        {m.recipients && <span class="recipients">{s.recipients(m.recipients)}</span>}
        {meta.codes[0] && <span class="code">{meta.codes[0]}</span>}
      </button>
    </li>
  );
}
