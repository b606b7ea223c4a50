// The header's line of the session's active address: switching to another of the session's,
// copying it, deleting it (not a sandbox's), forgetting the session, and the bell of
// desktop notifications.
import { api, type SessionListing } from './api.js';
import { CopyChip } from './copy-chip.js';
import type { Run } from './format.js';
import type { NotifyState } from './notify.js';
import { s } from './strings.js';

export function CurrentAddress(props: {
  session: SessionListing;
  busy: boolean;
  run: Run;
  reload: () => Promise<void>;
  notify: NotifyState;
  toggleNotify: () => Promise<void>;
}) {
  const { session, busy, run, reload, notify, toggleNotify } = props;
  return (
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
  );
}
