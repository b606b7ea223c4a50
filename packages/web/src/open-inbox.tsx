// Opening an inbox that was created elsewhere (the API, the SDK, the CLI) in this
// browser: from a `/#token=<jwt>` link, or by pasting the token. The token travels in
// the URL's fragment, which the browser never sends to a server (so it reaches no
// access log), and is removed from the address bar before anything else happens.
import { useState } from 'preact/hooks';
import { api, ApiError, type SessionListing } from './api.js';
import { s } from './strings.js';

/** The address a token is for, as its payload says (read, not checked: the server checks it). */
export function addressOfToken(token: string): string | undefined {
  try {
    const payload = token.split('.')[1] ?? '';
    const json = JSON.parse(atob(payload.replace(/-/g, '+').replace(/_/g, '/'))) as { sub?: unknown };
    return typeof json.sub === 'string' && json.sub.length <= 320 ? json.sub : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Whether to open a `#token=` link's inbox: a link anyone can send (a login CSRF: the
 * browser would quietly show the sender's inbox, and drop its own oldest address), so
 * the page asks first, naming the inbox, as it does before a new address drops one.
 * A link to the inbox already shown changes nothing and is not asked about.
 */
export async function confirmOpenLink(token: string): Promise<boolean> {
  const address = addressOfToken(token);
  let listing: SessionListing | undefined;
  try {
    listing = await api.session();
  } catch (err) {
    if (!(err instanceof ApiError && err.status === 401)) throw err;
  }
  const held = listing?.addresses ?? [];
  if (address !== undefined && held.length > 0 && listing?.activeAddress === address) return true;
  // The session holds SESSION_MAX_ADDRESSES (3): opening another drops the oldest from it.
  const oldest = held.length >= 3 && !held.some((a) => a.address === address) ? held[0]?.address : undefined;
  return confirm(s.confirmOpenLink(address ?? s.unknownInbox, oldest));
}

/** The token of a `#token=…` link, once: the fragment is cleared from the address bar and the history entry. */
export function takeTokenFromHash(): string | undefined {
  const params = new URLSearchParams(location.hash.replace(/^#/, ''));
  const token = params.get('token')?.trim();
  if (!token) return undefined;
  history.replaceState(null, '', location.pathname + location.search);
  return token;
}

/** A sandbox by its SMTP login's name and password (POST /api/sandbox/token). */
export function OpenSandbox(props: { busy: boolean; run: (f: () => Promise<unknown>) => Promise<void>; reload: () => Promise<void> }) {
  const { busy, run, reload } = props;
  const [name, setName] = useState('');
  const [password, setPassword] = useState('');
  const open = (e: Event) => {
    e.preventDefault();
    void run(async () => {
      await api.openSandbox(name.trim(), password);
      setPassword('');
      await reload();
    });
  };
  return (
    <details class="open-inbox open-sandbox">
      <summary>{s.openSandbox}</summary>
      <form onSubmit={open}>
        <label>
          <span>{s.sandboxName}</span>
          <input type="text" autoComplete="username" spellcheck={false} required value={name} onInput={(e) => setName((e.target as HTMLInputElement).value)} />
        </label>
        <label>
          <span>{s.sandboxPassword}</span>
          <input type="password" autoComplete="current-password" required value={password} onInput={(e) => setPassword((e.target as HTMLInputElement).value)} />
        </label>
        <button type="submit" disabled={busy || !name.trim() || !password}>
          {s.open}
        </button>
      </form>
    </details>
  );
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
