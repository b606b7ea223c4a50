// One address's mail: the list (live, paged, searchable) and the mail being read.
import { useCallback, useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { api, metadataOf, type MailListItem } from './api.js';
import { sender, type Run } from './format.js';
import { connectLive, type LiveState } from './live.js';
import { notifyNewMail } from './notify.js';
import { MailItems, Toolbar } from './mail-row.js';
import { Reader } from './reader.js';
import { type Found } from './search-box.js';
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

/**
 * The address's list: its head fetched (and again on each address), pages loaded with
 * "More", search results in its place, and the changes the stream brings kept by one
 * ledger (stream-ledger.ts). The tab's title counts its unread mail.
 */
function useMailList(address: string, run: Run) {
  const [mails, setMails] = useState<MailListItem[]>([]);
  const [count, setCount] = useState(0);
  // While the search field holds words, its results take the list's place.
  const [found, setFound] = useState<Found | undefined>();
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

  const more = useCallback(async () => {
    const page = await api.mails(PAGE, mails.length);
    setMails((list) => [...list, ...page.results.filter((m) => !list.some((x) => x.uuid === m.uuid))]);
    setCount(page.count);
  }, [mails.length]);
  return { mails, setMails, count, setCount, found, setFound, ledger, markedSeen, removed, fetchHead, more };
}

type MailList = ReturnType<typeof useMailList>;

// New mail, deletions and clears arrive over Server-Sent Events (live.ts); when the
// stream is refused or drops, the list is polled and the stream reopened with back-off.
function useLiveMail(address: string, list: MailList, on: { arrived: (item: MailListItem) => void; gone: () => void; state: (state: LiveState) => void }) {
  const onRef = useRef(on);
  onRef.current = on;
  const { ledger, fetchHead, removed, markedSeen, setMails, setCount } = list;
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
              onRef.current.arrived(item);
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
          } else if (type === 'address_deleted') onRef.current.gone();
        },
        // The newest page replaces the head of the list; pages loaded with "More" stay.
        poll: fetchHead,
        onGone: () => onRef.current.gone(),
        onState: (state) => onRef.current.state(state),
      }),
    [address, ledger, fetchHead, removed, markedSeen, setMails, setCount],
  );
}

export function Inbox(props: { address: string; run: Run; reload: () => Promise<void> }) {
  const { address, run, reload } = props;
  const [selected, setSelected] = useState<string | undefined>();
  const [live, setLive] = useState<LiveState>({ kind: 'connecting' });
  const list = useMailList(address, run);
  const { mails, setMails, count, setCount, found, setFound, markedSeen, removed } = list;
  const [searchError, setSearchError] = useState('');
  const onFound = useCallback((f: Found | undefined) => {
    setSearchError('');
    setFound(f);
  }, []);
  // New mail is announced to screen readers (the tab's title counts the unread mail: useMailList).
  const [announced, setAnnounced] = useState('');
  // Mail that arrived while the page was open is briefly highlighted (not with prefers-reduced-motion: style.css).
  const [arrived, setArrived] = useState<ReadonlySet<string>>(new Set());

  useLiveMail(address, list, {
    arrived(item) {
      const meta = metadataOf(item);
      setAnnounced(s.newMail(sender(item), meta.subject || s.noSubject));
      // A click on the notification opens the mail, in the list even while a search is shown.
      notifyNewMail({ uuid: item.uuid, from: sender(item), subject: meta.subject || s.noSubject }, () => {
        setSelected(item.uuid);
      });
      setArrived((s) => new Set(s).add(item.uuid));
    },
    gone: () => void reload(),
    state: setLive,
  });

  const more = () => run(list.more);

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
        <Toolbar
          found={found}
          count={count}
          live={live}
          onFound={onFound}
          onError={setSearchError}
          onClear={() =>
            void run(async () => {
              await api.clearInbox();
              setMails([]);
              setCount(0);
              setSelected(undefined);
            })
          }
        />
        {searchError && (
          <p class="error" role="alert">
            {searchError}
          </p>
        )}
        <MailItems shown={shown} found={found} address={address} selected={selected} arrived={arrived} now={now} onSelect={setSelected} />
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
