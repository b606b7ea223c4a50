// Addresses: find them by part of their name, page through them with their mail count
// and last activity, create one (its token is shown once), delete one, read its mail.
import { useEffect, useState } from 'preact/hooks';
import type { AdminAddress, AdminApi } from './api.js';
import { bytes, mailDomains, when } from './api.js';
import { Pager } from './pager.js';
import type { Report } from './report.js';
import { Mailbox } from './mailbox.js';

const PAGE = 20;

function NewAddress({ api, report, onCreated }: { api: AdminApi; report: Report; onCreated: () => void }) {
  const [domains, setDomains] = useState<string[]>([]);
  const [name, setName] = useState('');
  const [domain, setDomain] = useState('');
  const [created, setCreated] = useState<{ address: string; jwt: string } | null>(null);
  useEffect(() => void mailDomains().then(setDomains, () => undefined), []);

  async function submit(e: Event) {
    e.preventDefault();
    try {
      const made = await api.createAddress(name.trim(), domain);
      setCreated(made);
      setName('');
      report.done(`Created ${made.address}.`);
      onCreated();
    } catch (err) {
      report.failed(err);
    }
  }

  return (
    <form class="new-address" onSubmit={submit}>
      <fieldset>
        <legend>New address</legend>
        <label for="new-name">Name (optional)</label>
        <input id="new-name" value={name} onInput={(e) => setName(e.currentTarget.value)} autocomplete="off" />
        {domains.length > 1 && (
          <>
            <label for="new-domain">Domain</label>
            <select id="new-domain" value={domain} onChange={(e) => setDomain(e.currentTarget.value)}>
              {domains.map((d) => (
                <option value={d} key={d}>
                  {d}
                </option>
              ))}
            </select>
          </>
        )}
        <button type="submit" class="primary">
          Create address
        </button>
      </fieldset>
      {created && (
        <div class="created">
          <p>
            <strong>{created.address}</strong> — its token (shown this once):
          </p>
          <label for="new-token" class="sr">
            Token of {created.address}
          </label>
          <input id="new-token" class="token" readOnly value={created.jwt} onFocus={(e) => e.currentTarget.select()} />
          <button type="button" onClick={() => void navigator.clipboard?.writeText(created.jwt).then(() => report.done('Token copied.'))}>
            Copy token
          </button>
        </div>
      )}
    </form>
  );
}

export function Addresses({ api, report }: { api: AdminApi; report: Report }) {
  const [query, setQuery] = useState('');
  const [applied, setApplied] = useState('');
  const [offset, setOffset] = useState(0);
  const [page, setPage] = useState<{ results: AdminAddress[]; count: number } | null>(null);
  const [open, setOpen] = useState<AdminAddress | null>(null);

  const load = () => api.addresses(applied, PAGE, offset).then(setPage, (err: unknown) => report.failed(err));
  useEffect(() => void load(), [api, applied, offset]);

  async function remove(a: AdminAddress) {
    if (!confirm(`Delete ${a.address} and its ${a.mails} mail${a.mails === 1 ? '' : 's'}? Its token stops working.`)) return;
    try {
      await api.deleteAddress(a.id);
      if (open?.id === a.id) setOpen(null);
      report.done(`Deleted ${a.address}.`);
      await load();
    } catch (err) {
      report.failed(err);
    }
  }

  return (
    <section id="addresses" aria-labelledby="addresses-title">
      <div class="section-head">
        <h2 id="addresses-title">Addresses</h2>
      </div>
      <NewAddress api={api} report={report} onCreated={() => void load()} />
      <form
        role="search"
        class="find"
        onSubmit={(e) => {
          e.preventDefault();
          setOffset(0);
          setApplied(query.trim());
        }}
      >
        <label for="find-address">Find addresses containing</label>
        <input id="find-address" type="search" maxLength={256} value={query} onInput={(e) => setQuery(e.currentTarget.value)} />
        <button type="submit">Search</button>
      </form>
      {page && (
        <>
          <table class="addresses">
            <caption>
              {page.count === 0
                ? `No addresses${applied ? ` containing “${applied}”` : ''}.`
                : `Addresses ${offset + 1}–${offset + page.results.length} of ${page.count}${applied ? ` containing “${applied}”` : ''}, newest first`}
            </caption>
            <thead>
              <tr>
                <th scope="col">Address</th>
                <th scope="col">Mails</th>
                <th scope="col">Size</th>
                <th scope="col">Last activity</th>
                <th scope="col">Created</th>
                <th scope="col">
                  <span class="sr">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {page.results.map((a) => (
                <tr key={a.id} class={open?.id === a.id ? 'open' : ''}>
                  <th scope="row">
                    {a.address}
                    {a.unclaimed && <span class="muted"> (unclaimed)</span>}
                  </th>
                  <td class="num">{a.mails}</td>
                  <td class="num">{bytes(a.bytes)}</td>
                  <td>{when(a.last_activity)}</td>
                  <td>{when(a.created_at)}</td>
                  <td class="actions">
                    <button type="button" aria-label={`Mail of ${a.address}`} onClick={() => setOpen(a)}>
                      Mail
                    </button>
                    <button type="button" class="danger" aria-label={`Delete ${a.address}`} onClick={() => void remove(a)}>
                      Delete
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          <Pager offset={offset} size={PAGE} count={page.count} onMove={setOffset} />
        </>
      )}
      {open && <Mailbox api={api} report={report} address={open} onClose={() => setOpen(null)} />}
    </section>
  );
}
