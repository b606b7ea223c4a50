// Asks for the admin token (ADMIN_TOKEN) and checks it against the service before keeping it.
import { useState } from 'preact/hooks';
import { AdminError, adminApi } from './api.js';

export function SignIn({ onSignedIn, notice }: { onSignedIn: (token: string) => void; notice: string }) {
  const [token, setToken] = useState('');
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);

  async function submit(e: Event) {
    e.preventDefault();
    const value = token.trim();
    if (!value) return;
    setBusy(true);
    setError('');
    try {
      await adminApi(value).stats();
      onSignedIn(value);
    } catch (err) {
      setError(err instanceof AdminError && err.status === 401 ? 'That token was refused.' : (err as Error).message);
    } finally {
      setBusy(false);
    }
  }

  return (
    <main class="sign-in">
      <h1>temp-inbox admin</h1>
      {notice && <p class="notice">{notice}</p>}
      <form onSubmit={submit}>
        <label for="admin-token">Admin token</label>
        <input id="admin-token" type="password" autocomplete="off" spellcheck={false} value={token} onInput={(e) => setToken(e.currentTarget.value)} required />
        <button type="submit" class="primary" disabled={busy}>
          Sign in
        </button>
      </form>
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      <p class="muted">The token is the server's ADMIN_TOKEN. It is kept in this tab only, until you sign out or close it.</p>
    </main>
  );
}
