// The page's header: the session's addresses, creating one, opening one made elsewhere.
import { useState } from 'preact/hooks';
import { api, ApiError, type SessionListing, type UiConfig } from './api.js';
import { CopyChip } from './copy-chip.js';
import type { Run } from './format.js';
import { useNotifications } from './notify.js';
import { OpenInbox, OpenSandbox } from './open-inbox.js';
import { PowStatus, solveProofOfWork, type PowState } from './proof-of-work.js';
import { s } from './strings.js';
import { Turnstile } from './turnstile.js';
import { WebhookPanel } from './webhook-panel.js';

/** Everything the page knows about the browser's session. */
export type Session = SessionListing | null;

export function Welcome() {
  return (
    <main class="welcome">
      <h2>{s.welcomeTitle}</h2>
      <p>{s.welcomeText}</p>
    </main>
  );
}

export function Header(props: { config: UiConfig; session: Session; busy: boolean; run: Run; reload: () => Promise<void> }) {
  const { config, session, busy, run, reload } = props;
  const [name, setName] = useState('');
  const [domain, setDomain] = useState(config.domains[0] ?? '');
  const [token, setToken] = useState('');
  const [tokenKey, setTokenKey] = useState(0);
  const challenge = config.turnstileSiteKey;
  const pow = config.challenge === 'pow';
  const [powState, setPowState] = useState<PowState>({ kind: 'idle' });
  const [notify, toggleNotify] = useNotifications();

  const create = (e: Event) => {
    e.preventDefault();
    // The session holds SESSION_MAX_ADDRESSES (3): the oldest is dropped from it, not deleted.
    const oldest = session && session.addresses.length >= 3 ? session.addresses[0]?.address : undefined;
    if (oldest && !confirm(s.confirmDropOldest(oldest))) return;
    void run(async () => {
      try {
        // A proof of work is good for one address: solved afresh for each.
        const cf_token = challenge ? token : pow ? await solveProofOfWork(setPowState) : undefined;
        await api.newAddress({ ...(name.trim() ? { name: name.trim() } : {}), domain, ...(cf_token !== undefined ? { cf_token } : {}) }).catch((err: unknown) => {
          // The API's sentence speaks of its "name" field; the page says it in its own words.
          throw err instanceof ApiError && err.status === 409 ? new Error(s.nameTaken(`${name.trim()}@${domain}`)) : err;
        });
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
      <h1>{s.appName}</h1>
      {session && (
        <div class="current">
          <label>
            <span class="sr">{s.address}</span>
            <select
              aria-label={s.activeAddress}
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
          <CopyChip value={session.activeAddress} text={s.copy} title={s.copyAddress} class="copy" />
          {/* A sandbox belongs to its SMTP login: only the operator deletes it (the server answers 403). */}
          {!session.activeAddress.endsWith('@sandbox.invalid') && (
          <button
            type="button"
            class="danger"
            disabled={busy}
            onClick={() => {
              if (!confirm(s.confirmDeleteAddress(session.activeAddress))) return;
              void run(async () => {
                await api.deleteAddress();
                await reload();
              });
            }}
          >
            {s.deleteAddress}
          </button>
          )}
          <button
            type="button"
            disabled={busy}
            onClick={() => {
              if (!confirm(s.confirmForget)) return;
              void run(async () => {
                await api.logout();
                await reload();
              });
            }}
            title={s.forgetHint}
          >
            {s.forget}
          </button>
          {notify !== 'unsupported' && (
            <button type="button" class="notify" aria-pressed={notify === 'on'} title={s.notifyHint[notify]} onClick={() => void run(toggleNotify)}>
              <svg aria-hidden="true" viewBox="0 0 16 16" width="14" height="14">
                <path fill="currentColor" d="M8 1.5a4.5 4.5 0 0 0-4.5 4.5v2.6L2 11v1h12v-1l-1.5-2.4V6A4.5 4.5 0 0 0 8 1.5ZM6.3 13a1.75 1.75 0 0 0 3.4 0Z" />
              </svg>{' '}
              {s.notify}
            </button>
          )}
        </div>
      )}
      {session && <WebhookPanel key={session.activeAddress} />}
      <form class="create" onSubmit={create}>
        {config.customNames && (
          <input
            aria-label={s.nameOptional}
            placeholder={s.namePlaceholder}
            value={name}
            maxLength={64}
            onInput={(e) => setName((e.target as HTMLInputElement).value)}
          />
        )}
        {config.domains.length > 1 ? (
          <select aria-label={s.domain} value={domain} onChange={(e) => setDomain((e.target as HTMLSelectElement).value)}>
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
        {pow && <PowStatus state={powState} />}
        <button type="submit" class="primary" disabled={busy || (!!challenge && !token)}>
          {s.newAddress}
        </button>
      </form>
      <OpenInbox busy={busy} run={run} reload={reload} />
      <OpenSandbox busy={busy} run={run} reload={reload} />
    </header>
  );
}
