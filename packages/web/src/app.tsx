import { useCallback, useEffect, useMemo, useRef, useState } from 'preact/hooks';
import PostalMime from 'postal-mime';
import { api, ApiError, metadataOf, type FullMail, type MailListItem, type SessionListing, type UiConfig } from './api.js';
import { OpenInbox, takeTokenFromHash } from './open-inbox.js';
import { Highlight, SearchBox, type Found } from './search-box.js';
import { connectLive, type LiveState } from './live.js';
import { LiveStatus } from './live-status.js';
import { Turnstile } from './turnstile.js';

const PAGE = 50;

/** Everything the page knows about the browser's session. */
type Session = SessionListing | null;

function when(iso: string): string {
  const d = new Date(iso);
  const today = new Date();
  return d.toDateString() === today.toDateString() ? d.toLocaleTimeString() : d.toLocaleString();
}

function sender(item: MailListItem): string {
  const from = metadataOf(item).from;
  return from.name || from.address || item.source || '(unknown sender)';
}

function copy(text: string): void {
  void navigator.clipboard?.writeText(text).catch(() => undefined);
}

export function App() {
  const [config, setConfig] = useState<UiConfig | undefined>();
  const [session, setSession] = useState<Session | undefined>();
  const [error, setError] = useState<string>('');
  const [busy, setBusy] = useState(false);

  const run = useCallback(async (what: () => Promise<unknown>) => {
    setBusy(true);
    setError('');
    try {
      await what();
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  }, []);

  const loadSession = useCallback(async () => {
    try {
      const s = await api.session();
      setSession(s.addresses.length ? s : null);
    } catch (err) {
      if (err instanceof ApiError && err.status === 401) setSession(null);
      else throw err;
    }
  }, []);

  useEffect(() => {
    void run(async () => {
      setConfig(await api.config());
      // A `#token=` link opens that inbox here (open-inbox.tsx).
      const token = takeTokenFromHash();
      try {
        if (token) await api.openAddress(token);
      } finally {
        await loadSession();
      }
    });
  }, [run, loadSession]);

  if (session === undefined || !config) {
    return (
      <main class="center">
        <p>{error || 'Loading…'}</p>
      </main>
    );
  }
  return (
    <div class="app">
      <Header config={config} session={session} busy={busy} run={run} reload={loadSession} />
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {session ? <Inbox key={session.activeAddress} address={session.activeAddress} run={run} reload={loadSession} /> : <Welcome />}
    </div>
  );
}

function Welcome() {
  return (
    <main class="welcome">
      <h2>A disposable inbox, ready in one click</h2>
      <p>Create an address above, give it to any site, and its mail appears here the moment it arrives. Nothing to sign up for; addresses and mail expire on their own.</p>
    </main>
  );
}

function Header(props: { config: UiConfig; session: Session; busy: boolean; run: (f: () => Promise<unknown>) => Promise<void>; reload: () => Promise<void> }) {
  const { config, session, busy, run, reload } = props;
  const [name, setName] = useState('');
  const [domain, setDomain] = useState(config.domains[0] ?? '');
  const [token, setToken] = useState('');
  const [tokenKey, setTokenKey] = useState(0);
  const challenge = config.turnstileSiteKey;

  const create = (e: Event) => {
    e.preventDefault();
    void run(async () => {
      try {
        await api.newAddress({ ...(name.trim() ? { name: name.trim() } : {}), domain, ...(challenge ? { cf_token: token } : {}) });
        setName('');
      } finally {
        // A challenge token is good once.
        if (challenge) {
          setToken('');
          setTokenKey((k) => k + 1);
        }
      }
      await reload();
    });
  };

  return (
    <header>
      <h1>temp-inbox</h1>
      {session && (
        <div class="current">
          <label>
            <span class="sr">Address</span>
            <select
              aria-label="Active address"
              value={session.activeAddress}
              disabled={busy}
              onChange={(e) => {
                const address = (e.target as HTMLSelectElement).value;
                void run(async () => {
                  await api.switchAddress(address);
                  await reload();
                });
              }}
            >
              {session.addresses.map((a) => (
                <option key={a.address} value={a.address}>
                  {a.address}
                </option>
              ))}
            </select>
          </label>
          <button type="button" onClick={() => copy(session.activeAddress)} title="Copy the address">
            Copy
          </button>
          <button
            type="button"
            class="danger"
            disabled={busy}
            onClick={() => {
              if (!confirm(`Delete ${session.activeAddress} and all its mail?`)) return;
              void run(async () => {
                await api.deleteAddress();
                await reload();
              });
            }}
          >
            Delete address
          </button>
          <button
            type="button"
            disabled={busy}
            onClick={() =>
              void run(async () => {
                await api.logout();
                await reload();
              })
            }
            title="Forget these addresses in this browser (they keep receiving mail until they expire)"
          >
            Forget
          </button>
        </div>
      )}
      <form class="create" onSubmit={create}>
        {config.customNames && (
          <input
            aria-label="Name (optional)"
            placeholder="name (optional)"
            value={name}
            maxLength={64}
            onInput={(e) => setName((e.target as HTMLInputElement).value)}
          />
        )}
        {config.domains.length > 1 ? (
          <select aria-label="Domain" value={domain} onChange={(e) => setDomain((e.target as HTMLSelectElement).value)}>
            {config.domains.map((d) => (
              <option key={d} value={d}>
                @{d}
              </option>
            ))}
          </select>
        ) : (
          <span class="domain">@{domain}</span>
        )}
        {challenge && <Turnstile key={tokenKey} siteKey={challenge} onToken={setToken} />}
        <button type="submit" class="primary" disabled={busy || (!!challenge && !token)}>
          New address
        </button>
      </form>
      <OpenInbox busy={busy} run={run} reload={reload} />
    </header>
  );
}

function Inbox(props: { address: string; run: (f: () => Promise<unknown>) => Promise<void>; reload: () => Promise<void> }) {
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
  const reloadRef = useRef(reload);
  reloadRef.current = reload;

  useEffect(() => {
    void run(async () => {
      const page = await api.mails(PAGE, 0);
      setMails(page.results);
      setCount(page.count);
    });
  }, [address, run]);

  // New mail, deletions and clears arrive over Server-Sent Events (live.ts); when the
  // stream is refused or drops, the list is polled and the stream reopened with back-off.
  useEffect(
    () =>
      connectLive({
        onEvent(type, data) {
          if (type === 'mail') {
            const item = JSON.parse(data) as MailListItem;
            // A reconnect replays what the list may already hold: count each mail once.
            setMails((list) => {
              if (list.some((m) => m.uuid === item.uuid)) return list;
              setCount((c) => c + 1);
              return [item, ...list];
            });
          } else if (type === 'mail_deleted') {
            const { uuid } = JSON.parse(data) as { uuid: string };
            setMails((list) => {
              const next = list.filter((m) => m.uuid !== uuid);
              if (next.length !== list.length) setCount((c) => Math.max(0, c - 1));
              return next;
            });
          } else if (type === 'inbox_cleared') {
            setMails([]);
            setCount(0);
          } else if (type === 'address_deleted') void reloadRef.current();
        },
        async poll() {
          const page = await api.mails(PAGE, 0);
          // The newest page replaces the head of the list; pages loaded with "More" stay.
          setMails((list) => [...page.results, ...list.slice(PAGE).filter((m) => !page.results.some((x) => x.uuid === m.uuid))]);
          setCount(page.count);
        },
        onGone: () => void reloadRef.current(),
        onState: setLive,
      }),
    [address],
  );

  const more = () =>
    run(async () => {
      const page = await api.mails(PAGE, mails.length);
      setMails((list) => [...list, ...page.results.filter((m) => !list.some((x) => x.uuid === m.uuid))]);
      setCount(page.count);
    });

  const shown = found ? found.results : mails;
  const current = shown.find((m) => m.uuid === selected) ?? mails.find((m) => m.uuid === selected);
  return (
    <main class="inbox">
      <section class="list" aria-label="Mail">
        <div class="toolbar">
          <strong aria-live="polite">
            {found ? `${found.count} found` : `${count} mail${count === 1 ? '' : 's'}`}
          </strong>
          <SearchBox onFound={onFound} onError={setSearchError} />
          <LiveStatus state={live} />
          <button
            type="button"
            disabled={count === 0}
            onClick={() => {
              if (!confirm('Delete every mail of this address?')) return;
              void run(async () => {
                await api.clearInbox();
                setMails([]);
                setCount(0);
                setSelected(undefined);
              });
            }}
          >
            Clear
          </button>
        </div>
        {searchError && (
          <p class="error" role="alert">
            {searchError}
          </p>
        )}
        {found && found.results.length === 0 ? (
          <p class="empty">Nothing in this inbox matches “{found.query}”.</p>
        ) : shown.length === 0 ? (
          <p class="empty">
            Waiting for mail to <strong>{address}</strong>…
          </p>
        ) : (
          <ul>
            {shown.map((m) => {
              const meta = metadataOf(m);
              return (
                <li key={m.uuid} class={m.uuid === selected ? 'selected' : ''}>
                  <button type="button" class="item" onClick={() => setSelected(m.uuid)}>
                    <span class="from">{sender(m)}</span>
                    <span class="time">{when(m.created_at)}</span>
                    <span class="subject">{meta.subject ? <Highlight text={meta.subject} words={found?.words} /> : '(no subject)'}</span>
                    <span class="preview">
                      <Highlight text={meta.preview} words={found?.words} />
                    </span>
                    {meta.codes[0] && <span class="code">{meta.codes[0]}</span>}
                  </button>
                </li>
              );
            })}
          </ul>
        )}
        {!found && mails.length < count && (
          <button type="button" class="more" onClick={() => void more()}>
            Load more
          </button>
        )}
      </section>
      <section class="reader" aria-label="Message">
        {current ? (
          <Reader
            key={current.uuid}
            item={current}
            run={run}
            onDeleted={() => {
              setMails((list) => list.filter((m) => m.uuid !== current.uuid));
              setCount((c) => Math.max(0, c - 1));
              setSelected(undefined);
            }}
          />
        ) : (
          <p class="empty">Select a mail to read it.</p>
        )}
      </section>
    </main>
  );
}

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

function Reader(props: { item: MailListItem; run: (f: () => Promise<unknown>) => Promise<void>; onDeleted: () => void }) {
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
