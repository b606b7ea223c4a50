// Opening an inbox that was created elsewhere (the API, the SDK, the CLI) in this
// browser: from a `/#token=<jwt>` link, or by pasting the token. The token travels in
// the URL's fragment, which the browser never sends to a server (so it reaches no
// access log), and is removed from the address bar before anything else happens.
import { useState } from 'preact/hooks';
import { api } from './api.js';
import { s } from './strings.js';

/** The token of a `#token=…` link, once: the fragment is cleared from the address bar and the history entry. */
export function takeTokenFromHash(): string | undefined {
  const params = new URLSearchParams(location.hash.replace(/^#/, ''));
  const token = params.get('token')?.trim();
  if (!token) return undefined;
  history.replaceState(null, '', location.pathname + location.search);
  return token;
}

export function OpenInbox(props: { busy: boolean; run: (f: () => Promise<unknown>) => Promise<void>; reload: () => Promise<void> }) {
  const { busy, run, reload } = props;
  const [token, setToken] = useState('');
  const open = (e: Event) => {
    e.preventDefault();
    void run(async () => {
      await api.openAddress(token.trim());
      setToken('');
      await reload();
    });
  };
  return (
    <details class="open-inbox">
      <summary>{s.openInbox}</summary>
      <form onSubmit={open}>
        <label>
          <span>{s.openInboxToken}</span>
          <input type="password" autoComplete="off" spellcheck={false} required value={token} onInput={(e) => setToken((e.target as HTMLInputElement).value)} />
        </label>
        <button type="submit" disabled={busy || !token.trim()}>
          {s.open}
        </button>
      </form>
    </details>
  );
}
