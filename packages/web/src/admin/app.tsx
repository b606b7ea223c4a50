// The operators' admin page: sign in with the admin token, then statistics, the domain
// pool with its figures, refusals, addresses (with their mail), blocks and sandboxes.
// Every answer of the API is shown as it comes: a refused token signs out, any other
// error is read out (role="alert"), and each action done is announced in the status line.
import { useMemo, useState } from 'preact/hooks';
import { Addresses } from './addresses.js';
import { AdminError, adminApi, savedToken } from './api.js';
import { Blocks } from './blocks.js';
import { Domains } from './domains.js';
import { Refusals } from './refusals.js';
import { Sandboxes } from './sandboxes.js';
import type { Report } from './report.js';
import { SignIn } from './sign-in.js';
import { Stats } from './stats.js';

export function AdminApp() {
  const [token, setToken] = useState<string | null>(() => savedToken.get());
  const [notice, setNotice] = useState('');
  const [status, setStatus] = useState('');
  const [error, setError] = useState('');
  /** Moved by every change, so that the statistics are read again. */
  const [changes, setChanges] = useState(0);
  const api = useMemo(() => (token ? adminApi(token) : null), [token]);

  function signOut(message = '') {
    savedToken.clear();
    setToken(null);
    setNotice(message);
    setStatus('');
    setError('');
  }

  const report: Report = {
    done(message) {
      setError('');
      setStatus(message);
      setChanges((n) => n + 1);
    },
    failed(err) {
      if (err instanceof AdminError && err.status === 401) return signOut('The token was refused; sign in again.');
      setError((err as Error).message);
    },
  };

  if (!api) {
    return (
      <SignIn
        notice={notice}
        onSignedIn={(t) => {
          savedToken.set(t);
          setNotice('');
          setToken(t);
        }}
      />
    );
  }
  return (
    <div class="admin">
      <header>
        <h1>temp-inbox admin</h1>
        <nav aria-label="Sections">
          <a href="#stats">Statistics</a> <a href="#domains">Domains</a> <a href="#refusals">Refusals</a> <a href="#addresses">Addresses</a> <a href="#blocks">Blocks</a> <a href="#sandboxes">Sandboxes</a>
        </nav>
        <button type="button" onClick={() => signOut()}>
          Sign out
        </button>
      </header>
      <p class="status" role="status">
        {status}
      </p>
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      <main>
        <Stats api={api} report={report} changes={changes} />
        <Domains api={api} report={report} changes={changes} />
        <Refusals api={api} report={report} changes={changes} />
        <Addresses api={api} report={report} />
        <Blocks api={api} report={report} />
        <Sandboxes api={api} report={report} />
      </main>
    </div>
  );
}
