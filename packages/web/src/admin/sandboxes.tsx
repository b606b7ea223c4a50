// Sandboxes: SMTP logins with an inbox of their own (docs/api.md "Sandboxes"). Created
// here or by SANDBOXES at start-up, listed by name; each can get a new password or be
// deleted with all its mail. In the database, so every node knows them.
import { useEffect, useState } from 'preact/hooks';
import type { AdminApi, SandboxInfo } from './api.js';
import { bytes, when } from './api.js';
import type { Report } from './report.js';

export function Sandboxes({ api, report }: { api: AdminApi; report: Report }) {
  const [sandboxes, setSandboxes] = useState<SandboxInfo[] | null>(null);
  const [name, setName] = useState('');
  const [password, setPassword] = useState('');
  const [rotating, setRotating] = useState<{ id: number; password: string } | null>(null);
  const load = () => api.sandboxes().then((r) => setSandboxes(r.results), (err: unknown) => report.failed(err));
  useEffect(() => void load(), [api]);

  async function create(e: Event) {
    e.preventDefault();
    try {
      const made = await api.createSandbox(name.trim(), password);
      setName('');
      setPassword('');
      report.done(`Sandbox ${made.name} is ready: log in over SMTP as ${made.name}.`);
      await load();
    } catch (err) {
      report.failed(err);
    }
  }

  async function rotate(e: Event, sandbox: SandboxInfo) {
    e.preventDefault();
    if (!rotating) return;
    try {
      await api.setSandboxPassword(sandbox.id, rotating.password);
      setRotating(null);
      report.done(`Sandbox ${sandbox.name} has a new password.`);
    } catch (err) {
      report.failed(err);
    }
  }

  async function remove(sandbox: SandboxInfo) {
    if (!confirm(`Delete the sandbox ${sandbox.name} and all its mail?`)) return;
    try {
      await api.deleteSandbox(sandbox.id);
      report.done(`Deleted the sandbox ${sandbox.name}.`);
      await load();
    } catch (err) {
      report.failed(err);
    }
  }

  return (
    <section id="sandboxes" aria-labelledby="sandboxes-title">
      <div class="section-head">
        <h2 id="sandboxes-title">Sandboxes</h2>
      </div>
      <p class="muted">An SMTP login (AUTH PLAIN or LOGIN) whose mail, to any recipient, is captured into an inbox of its own and never relayed.</p>
      <form class="new-block" onSubmit={create}>
        <fieldset>
          <legend>New sandbox</legend>
          <label for="sandbox-name">Name (the SMTP login)</label>
          <input id="sandbox-name" required maxLength={64} value={name} onInput={(e) => setName(e.currentTarget.value)} autocomplete="off" />
          <label for="sandbox-password">Password</label>
          <input id="sandbox-password" type="password" required maxLength={1024} value={password} onInput={(e) => setPassword(e.currentTarget.value)} autocomplete="new-password" />
          <button type="submit" class="primary">
            Create sandbox
          </button>
        </fieldset>
      </form>
      {sandboxes && (
        <table class="blocks">
          <caption>{sandboxes.length === 0 ? 'No sandbox yet: SMTP offers no AUTH.' : `${sandboxes.length} sandbox${sandboxes.length === 1 ? '' : 'es'}, by name`}</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Keeps</th>
              <th scope="col">Since</th>
              <th scope="col">
                <span class="sr">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {sandboxes.map((b) => (
              <tr key={b.id}>
                <th scope="row">{b.name}</th>
                <td>
                  {b.max_mails ? `${b.max_mails} mails` : 'any number of mails'}, {b.max_bytes ? bytes(b.max_bytes) : 'any size'}, {Math.round(b.retention_ms / 86_400_000)} d
                </td>
                <td>{when(b.created_at)}</td>
                <td>
                  {rotating?.id === b.id ? (
                    <form onSubmit={(e) => void rotate(e, b)}>
                      <label for={`sandbox-new-password-${b.id}`}>New password for {b.name}</label>
                      <input
                        id={`sandbox-new-password-${b.id}`}
                        type="password"
                        required
                        maxLength={1024}
                        value={rotating.password}
                        onInput={(e) => setRotating({ id: b.id, password: e.currentTarget.value })}
                        autocomplete="new-password"
                      />
                      <button type="submit">Set</button>
                    </form>
                  ) : (
                    <button type="button" aria-label={`New password for ${b.name}`} onClick={() => setRotating({ id: b.id, password: '' })}>
                      New password
                    </button>
                  )}{' '}
                  <button type="button" aria-label={`Delete the sandbox ${b.name}`} onClick={() => void remove(b)}>
                    Delete
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
