// The page: loads the configuration and the browser's session, then shows the
// header and the active address's inbox (inbox.tsx).
import { useCallback, useEffect, useMemo, useState } from 'preact/hooks';
import { api, ApiError, type UiConfig } from './api.js';
import { Header, Welcome, type Session } from './header.js';
import { Inbox } from './inbox.js';
import { confirmOpenLink, takeTokenFromHash } from './open-inbox.js';
import { s } from './strings.js';
import { useRun } from './use-run.js';

export function App() {
  const [config, setConfig] = useState<UiConfig | undefined>();
  const [session, setSession] = useState<Session | undefined>();
  const { busy, error, run } = useRun();

  const loadSession = useCallback(async () => {
    try {
      const s = await api.session();
      setSession(s.addresses.length ? s : null);
    } catch (err) {
      if (err instanceof ApiError && err.status === 401) setSession(null);
      else throw err;
    }
  }, []);

  // The session is the browser's, shared by its tabs (the jwt cookie names one address for
  // all of them): a tab that changes it tells the others, which follow rather than go on
  // showing an address whose requests now carry another's cookie.
  const tabs = useMemo(() => (typeof BroadcastChannel === 'undefined' ? undefined : new BroadcastChannel('temp-inbox-session')), []);
  useEffect(() => {
    if (tabs) tabs.onmessage = () => void run(loadSession);
  }, [tabs, run, loadSession]);
  useEffect(() => () => tabs?.close(), [tabs]);
  const changed = useCallback(async () => {
    await loadSession();
    tabs?.postMessage('session changed');
  }, [tabs, loadSession]);

  useEffect(() => {
    void run(async () => {
      setConfig(await api.config());
      // A `#token=` link opens that inbox here, once the reader agrees (open-inbox.tsx).
      const token = takeTokenFromHash();
      try {
        if (token && (await confirmOpenLink(token))) await api.openAddress(token);
      } finally {
        await loadSession();
      }
    });
  }, [run, loadSession]);

  if (session === undefined || !config) {
    return (
      <main class="center">
        <p>{error || s.loading}</p>
      </main>
    );
  }
  return (
    <div class="app">
      <Header config={config} session={session} busy={busy} run={run} reload={changed} />
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {session ? <Inbox key={session.activeAddress} address={session.activeAddress} run={run} reload={changed} /> : <Welcome />}
      {config.abuseContact && <AbuseFooter contact={config.abuseContact} />}
    </div>
  );
}

/** The operator's abuse contact (ABUSE_CONTACT): a mailto: link for an address, else the URL itself. */
function AbuseFooter(props: { contact: string }) {
  const url = /^https?:\/\//i.test(props.contact);
  return (
    <footer class="abuse">
      {s.reportAbuse}{' '}
      <a href={url ? props.contact : `mailto:${props.contact}`} rel="noopener noreferrer">
        {props.contact}
      </a>
    </footer>
  );
}
