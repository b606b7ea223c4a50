// The header's form that creates an address: an optional name, the domain, and the
// challenge the server asks for (Turnstile, or a proof of work solved afresh for each).
import { useState } from 'preact/hooks';
import { api, ApiError, type SessionListing, type UiConfig } from './api.js';
import type { Run } from './format.js';
import { PowStatus, solveProofOfWork, type PowState } from './proof-of-work.js';
import { s } from './strings.js';
import { Turnstile } from './turnstile.js';

export function CreateAddress(props: { config: UiConfig; session: SessionListing | null; busy: boolean; run: Run; reload: () => Promise<void> }) {
  const { config, session, busy, run, reload } = props;
  const [name, setName] = useState('');
  const [domain, setDomain] = useState(config.domains[0] ?? '');
  const [token, setToken] = useState('');
  const [tokenKey, setTokenKey] = useState(0);
  const challenge = config.turnstileSiteKey;
  const pow = config.challenge === 'pow';
  const [powState, setPowState] = useState<PowState>({ kind: 'idle' });

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
  );
}
