// One address's mail: the list (live, paged, searchable) and the mail being read.
import { useCallback, useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { api, metadataOf, type MailListItem } from './api.js';
import { sender, type Run } from './format.js';
import { fullDate, when } from './intl.js';
import { connectLive, type LiveState } from './live.js';
import { LiveStatus } from './live-status.js';
import { notifyNewMail } from './notify.js';
import { Reader } from './reader.js';
import { Highlight, SearchBox, type Found } from './search-box.js';
import { StreamLedger } from './stream-ledger.js';
import { s } from './strings.js';

const PAGE = 50;
/** How often the list's relative times ("3 minutes ago") are brought up to date. */
const CLOCK_MS = 30_000;

/** The current time, moved every `ms`. */
function useNow(ms: number): number {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    const t = setInterval(() => setNow(Date.now()), ms);
    return () => clearInterval(t);
  }, [ms]);
  return now;
}

export function Inbox(props: { address: string; run: Run; reload: () => Promise<void> }) {
  const { address, run, reload } = props;
  const [mails, setMails] = useState<MailListItem[]>([]);
  const [count, setCount] = useState(0);
  const [selected, setSelected] = useState<string | undefined>();
  const [live, setLive] = useState<LiveState>({ kind: 'connecting' });
  // While the search field holds words, its results take the list's place.
  const [found, setFound] = useState<Found | undefined>();
  const [searchError, setSearchError] = useState('');
  const onFound = useCallback((f: Found | undefined) => {
    setSearchError('');
    setFound(f);
  }, []);
  // New mail is announced to screen readers; the tab's title counts the unread mail of the list.
  const [announced, setAnnounced] = useState('');
  // Mail that arrived while the page was open is briefly highlighted (not with prefers-reduced-motion: style.css).
  const [arrived, setArrived] = useState<ReadonlySet<string>>(new Set());
  const unread = mails.filter((m) => !m.seen).length;
  useEffect(() => {
    document.title = s.title(unread);
  }, [unread]);
  useEffect(() => () => void (document.title = s.title(0)), []);
  // A mail marked read or unread (here, in another tab, or by the API) changes in the list and in search results.
  const markedSeen = useCallback((uuid: string, seen: boolean) => {
    const mark = (list: MailListItem[]) => (list.some((m) => m.uuid === uuid && m.seen !== seen) ? list.map((m) => (m.uuid === uuid ? { ...m, seen } : m)) : list);
    setMails(mark);
    setFound((f) => (f ? { ...f, results: mark(f.results) } : f));
  }, []);
  const reloadRef = useRef(reload);
  reloadRef.current = reload;

  // The stream's changes since a fetch of the list's head began, so that its answer does not undo them.
  const ledger = useMemo(() => new StreamLedger(), [address]);
  // A mail deleted here is deleted again by its own mail_deleted event, often first: each
  // mail leaves the list, the search results and the count once, whichever comes first.
  const gone = useMemo(() => new Set<string>(), [address]);
  const removed = useCallback(
    (uuid: string) => {
      ledger.remove(uuid);
      if (gone.has(uuid)) return;
      gone.add(uuid);
      setCount((c) => Math.max(0, c - 1));
      setMails((list) => list.filter((m) => m.uuid !== uuid));
      setFound((f) => (f && f.results.some((m) => m.uuid === uuid) ? { ...f, count: Math.max(0, f.count - 1), results: f.results.filter((m) => m.uuid !== uuid) } : f));
    },
    [gone, ledger],
  );
  /** Fetches the newest page of the list and makes it the list's head (stream-ledger.ts). */
  const fetchHead = useCallback(async () => {
    const mark = ledger.begin();
    let page;
    try {
      page = await api.mails(PAGE, 0);
    } catch (err) {
      ledger.end(mark);
      throw err;
    }
    const { results, count } = page;
    setMails((list) => {
      const next = ledger.head(list, results, count, PAGE, mark);
      setCount(next.count);
      return next.list;
    });
  }, [ledger]);

  useEffect(() => {
    void run(fetchHead);
  }, [address, run, fetchHead]);

  // New mail, deletions and clears arrive over Server-Sent Events (live.ts); when the
  // stream is refused or drops, the list is polled and the stream reopened with back-off.
  useEffect(
    () =>
      connectLive({
        onEvent(type, data) {
          if (type === 'mail') {
            const item = JSON.parse(data) as MailListItem;
            ledger.add(item.uuid);
            // A reconnect replays what the list may already hold: count each mail once.
            setMails((list) => {
              if (list.some((m) => m.uuid === item.uuid)) return list;
              setCount((c) => c + 1);
              const meta = metadataOf(item);
              setAnnounced(s.newMail(sender(item), meta.subject || s.noSubject));
              // A click on the notification opens the mail, in the list even while a search is shown.
              notifyNewMail({ uuid: item.uuid, from: sender(item), subject: meta.subject || s.noSubject }, () => {
                setSelected(item.uuid);
              });
              setArrived((s) => new Set(s).add(item.uuid));
              return [item, ...list];
            });
          } else if (type === 'mail_seen') {
            const { uuid, seen } = JSON.parse(data) as { uuid: string; seen: boolean };
            ledger.markSeen(uuid, seen);
            markedSeen(uuid, seen);
          } else if (type === 'mail_deleted') {
            removed((JSON.parse(data) as { uuid: string }).uuid);
          } else if (type === 'inbox_cleared') {
            ledger.clear();
            setMails([]);
            setCount(0);
          } else if (type === 'address_deleted') void reloadRef.current();
        },
        // The newest page replaces the head of the list; pages loaded with "More" stay.
        poll: fetchHead,
        onGone: () => void reloadRef.current(),
        onState: setLive,
      }),
    [address, ledger, fetchHead, removed],
  );

  const more = () =>
    run(async () => {
      const page = await api.mails(PAGE, mails.length);
      setMails((list) => [...list, ...page.results.filter((m) => !list.some((x) => x.uuid === m.uuid))]);
      setCount(page.count);
    });

  // Where the keyboard goes when the open mail closes (Delete, Mark as unread): to the mail
  // now at its place in the list, or the list itself, rather than back to the page's top.
  const listRef = useRef<HTMLElement>(null);
  const focusInList = (index: number) =>
    requestAnimationFrame(() => {
      const items = listRef.current?.querySelectorAll<HTMLButtonElement>('button.item');
      if (items?.length) items[Math.max(0, Math.min(index, items.length - 1))]!.focus();
      else listRef.current?.focus();
    });

  const now = useNow(CLOCK_MS);
  const shown = found ? found.results : mails;
  const current = shown.find((m) => m.uuid === selected) ?? mails.find((m) => m.uuid === selected);

  // Opening an unread mail marks it read on the server (nothing else does: docs/decisions.md
  // "Seen"), once per opening: a mail marked unread elsewhere while it is open here stays so.
  // A failure leaves it unread in the list, and says nothing: the next opening tries again.
  const currentRef = useRef(current);
  currentRef.current = current;
  useEffect(() => {
    const opened = currentRef.current;
    if (!opened || opened.seen) return;
    api.markSeen(opened.uuid, true).then(
      (item) => markedSeen(item.uuid, item.seen),
      () => undefined,
    );
  }, [selected, markedSeen]);

  return (
    <main class={`inbox${current ? ' reading' : ''}`}>
      <p class="sr" aria-live="polite" role="status">
        {announced}
      </p>
      <section class="list" aria-label={s.mailList} tabIndex={-1} ref={listRef}>
        <div class="toolbar">
          <strong aria-live="polite">
            {found ? s.found(found.count) : s.mails(count)}
          </strong>
          <SearchBox onFound={onFound} onError={setSearchError} />
          <LiveStatus state={live} />
          <button
            type="button"
            disabled={count === 0}
            onClick={() => {
              if (!confirm(s.confirmClear)) return;
              void run(async () => {
                await api.clearInbox();
                setMails([]);
                setCount(0);
                setSelected(undefined);
              });
            }}
          >
            {s.clear}
          </button>
        </div>
        {searchError && (
          <p class="error" role="alert">
            {searchError}
          </p>
        )}
        {found && found.results.length === 0 ? (
          <p class="empty">{s.noMatch(found.query)}</p>
        ) : shown.length === 0 ? (
          <p class="empty">
            {s.waitingBefore}
            <strong>{address}</strong>
            {s.waitingAfter}
          </p>
        ) : (
          <ul>
            {shown.map((m) => {
              const meta = metadataOf(m);
              return (
                <li key={m.uuid} class={`${m.uuid === selected ? 'selected' : ''}${arrived.has(m.uuid) ? ' arrived' : ''}`}>
                  <button type="button" class={m.seen ? 'item' : 'item unread'} onClick={() => setSelected(m.uuid)}>
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
                      {meta.subject ? <Highlight text={meta.subject} words={found?.words} /> : s.noSubject}
                    </span>
                    <span class="preview">
                      <Highlight text={meta.preview} words={found?.words} />
                    </span>
                    {m.recipients && <span class="recipients">{s.recipients(m.recipients)}</span>}
                    {meta.codes[0] && <span class="code">{meta.codes[0]}</span>}
                  </button>
                </li>
              );
            })}
          </ul>
        )}
        {!found && mails.length < count && (
          <button type="button" class="more" onClick={() => void more()}>
            {s.loadMore}
          </button>
        )}
      </section>
      <section class="reader" aria-label={s.message}>
        {current ? (
          <Reader
            key={current.uuid}
            item={current}
            run={run}
            online={live.kind === 'live'}
            onDeleted={() => {
              const at = shown.findIndex((m) => m.uuid === current.uuid);
              removed(current.uuid);
              setSelected(undefined);
              focusInList(at);
            }}
            onBack={() => setSelected(undefined)}
            onMarkUnread={() =>
              void run(async () => {
                const item = await api.markSeen(current.uuid, false);
                markedSeen(item.uuid, item.seen);
                focusInList(shown.findIndex((m) => m.uuid === current.uuid));
                // Back to the list, as mail clients do: the mail stays unread until it is opened again.
                setSelected(undefined);
              })
            }
          />
        ) : (
          <p class="empty">{s.selectMail}</p>
        )}
      </section>
    </main>
  );
}
