// Domains: the pool every node takes mail for and makes addresses at (add, disable,
// retire, delete; the MX check), with each domain's figures over the last 7 days:
// addresses, mails, the share SMTP refused and the top sending domains. Domains that
// addresses still use but the pool no longer has are listed after the pool's.
import { useEffect, useState } from 'preact/hooks';
import type { AdminApi, AdminDomain, AdminDomainDns, AdminDomainsResponse, DomainFigures } from './api.js';
import { when } from './api.js';
import type { Report } from './report.js';

const DAYS = 7;
const STATE_LABEL: Record<AdminDomain['state'], string> = { active: 'Active', disabled: 'Disabled', retired: 'Retired' };
const percent = (share: number) => `${(share * 100).toFixed(share > 0 && share < 0.001 ? 2 : 1)} %`;

function stateText(d: AdminDomain | undefined): string {
  if (!d) return 'Not in the pool';
  if (d.state === 'retired' && d.retiredUntil) return `Retired (mail until ${when(d.retiredUntil)})`;
  return STATE_LABEL[d.state];
}

function DnsResult({ check }: { check: AdminDomainDns }) {
  return (
    <div class={check.pointsHere ? 'dns ok' : 'dns bad'} role="region" aria-label={`DNS check of ${check.domain}`}>
      <p>{check.message}</p>
      <p class="muted">
        MX: {check.mx.length === 0 ? 'none' : check.mx.map((m) => `${m.priority} ${m.exchange}`).join(', ')}; expected: {check.expected.join(', ') || '—'}
      </p>
    </div>
  );
}

type Verb = 'active' | 'disabled' | 'retired' | 'delete';

function Actions({ name, pool, act, check }: { name: string; pool: AdminDomain | undefined; act: (verb: Verb) => void; check: () => void }) {
  if (!pool) return null;
  return (
    <>
      {pool.state !== 'active' && (
        <button type="button" aria-label={`Activate ${name}`} onClick={() => act('active')}>
          Activate
        </button>
      )}
      {pool.state === 'active' && (
        <button type="button" aria-label={`Disable ${name}`} onClick={() => act('disabled')}>
          Disable
        </button>
      )}
      {pool.state !== 'retired' && (
        <button type="button" aria-label={`Retire ${name}`} onClick={() => act('retired')}>
          Retire
        </button>
      )}
      <button type="button" class="danger" aria-label={`Delete ${name}`} onClick={() => act('delete')}>
        Delete
      </button>
      <button type="button" aria-label={`Check DNS of ${name}`} onClick={check}>
        Check DNS
      </button>
    </>
  );
}

/** One domain's row, and its DNS check's answer in a row of its own below it once asked for. */
function DomainRow(props: { name: string; pool: AdminDomain | undefined; figures: DomainFigures | undefined; dns: AdminDomainDns | undefined; act: (verb: Verb) => void; check: () => void }) {
  const { name, pool: p, figures: f, dns } = props;
  return (
    <>
      <tr>
        <th scope="row">
          {name}
          {p?.subdomains && <span class="muted"> (random subdomains)</span>}
        </th>
        <td>{stateText(p)}</td>
        <td class="num">{f?.addresses ?? 0}</td>
        <td class="num">{f?.mailsDay ?? 0}</td>
        <td class="num">{f?.mailsWeek ?? 0}</td>
        <td class="num">{percent(f?.refusedShareWeek ?? 0)}</td>
        <td>{f && f.topSendingDomains.length > 0 ? f.topSendingDomains.map((s) => `${s.domain || '(null sender)'} ${s.mails}`).join(', ') : <span class="muted">none</span>}</td>
        <td class="actions">
          <Actions name={name} pool={p} act={props.act} check={props.check} />
        </td>
      </tr>
      {dns && (
        <tr class="dns-row">
          <td colSpan={8}>
            <DnsResult check={dns} />
          </td>
        </tr>
      )}
    </>
  );
}

const DONE: Record<Verb, string> = { active: 'is active', disabled: 'is disabled', retired: 'is retired', delete: 'was deleted from the pool' };

export function Domains({ api, report, changes }: { api: AdminApi; report: Report; changes: number }) {
  const [pool, setPool] = useState<AdminDomainsResponse | null>(null);
  const [figures, setFigures] = useState<DomainFigures[] | null>(null);
  const [dns, setDns] = useState<Record<string, AdminDomainDns>>({});
  const [domain, setDomain] = useState('');
  const [subdomains, setSubdomains] = useState(false);
  const load = () =>
    Promise.all([api.pool().then(setPool), api.domainStats(DAYS).then((r) => setFigures(r.domains))]).catch((err: unknown) => report.failed(err));
  useEffect(() => void load(), [api, changes]);

  async function add(e: Event) {
    e.preventDefault();
    try {
      const added = await api.addDomain(domain.trim(), subdomains);
      setDomain('');
      setSubdomains(false);
      report.done(`Added ${added.domain} to the pool.`);
    } catch (err) {
      report.failed(err);
    }
  }

  async function act(name: string, verb: Verb) {
    if (verb === 'delete' && !confirm(`Delete ${name} from the pool? Its addresses keep their mail, but no new mail is taken for it.`)) return;
    try {
      if (verb === 'delete') await api.deleteDomain(name);
      else await api.changeDomain(name, { state: verb });
      report.done(`${name} ${DONE[verb]}.`);
    } catch (err) {
      report.failed(err);
    }
  }

  async function check(name: string) {
    try {
      const result = await api.checkDns(name);
      setDns((d) => ({ ...d, [name]: result }));
    } catch (err) {
      report.failed(err);
    }
  }

  const inPool = new Map((pool?.domains ?? []).map((d) => [d.domain, d]));
  const names = [...new Set([...(pool?.domains ?? []).map((d) => d.domain), ...(figures ?? []).map((f) => f.domain)])];
  const figuresOf = new Map((figures ?? []).map((f) => [f.domain, f]));
  return (
    <section id="domains" aria-labelledby="domains-title">
      <div class="section-head">
        <h2 id="domains-title">Domains</h2>
        <button type="button" onClick={() => void load()}>
          Refresh
        </button>
      </div>
      <p class="muted">
        New addresses take an active domain{pool ? ` (${pool.selection})` : ''}. A disabled domain takes no new addresses, its addresses keep working; a retired one takes no new mail either,
        after its grace period. Figures cover the last {DAYS} days and are up to a minute old.
      </p>
      <form class="new-block" onSubmit={add}>
        <fieldset>
          <legend>Add a domain</legend>
          <label for="pool-domain">Domain</label>
          <input id="pool-domain" required maxLength={253} placeholder="mail.example.com" value={domain} onInput={(e) => setDomain(e.currentTarget.value)} autocomplete="off" />
          <label>
            <input type="checkbox" checked={subdomains} onChange={(e) => setSubdomains(e.currentTarget.checked)} /> Random subdomains
          </label>
          <button type="submit" class="primary">
            Add domain
          </button>
        </fieldset>
      </form>
      {pool && figures && (
        <div class="scroll">
          <table class="domains">
            <caption>{names.length === 0 ? 'The pool is empty.' : `${names.length} domain${names.length === 1 ? '' : 's'}`}</caption>
            <thead>
              <tr>
                <th scope="col">Domain</th>
                <th scope="col">State</th>
                <th scope="col">Addresses</th>
                <th scope="col">Mails, 24 h</th>
                <th scope="col">Mails, {DAYS} days</th>
                <th scope="col">Refused</th>
                <th scope="col">Top sending domains</th>
                <th scope="col">
                  <span class="sr">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {names.map((name) => (
                <DomainRow key={name} name={name} pool={inPool.get(name)} figures={figuresOf.get(name)} dns={dns[name]} act={(verb) => void act(name, verb)} check={() => void check(name)} />
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
