// Statistics: storage used, mails per day over the last 30 days, the top senders.
import { useEffect, useState } from 'preact/hooks';
import type { AdminApi, AdminStats } from './api.js';
import { bytes } from './api.js';
import type { Report } from './report.js';

export function Stats({ api, report, changes }: { api: AdminApi; report: Report; changes: number }) {
  const [stats, setStats] = useState<AdminStats | null>(null);
  const load = () => api.stats().then(setStats, (err: unknown) => report.failed(err));
  useEffect(() => void load(), [api, changes]);

  const most = Math.max(1, ...(stats?.mails_per_day.map((d) => d.mails) ?? []));
  return (
    <section id="stats" aria-labelledby="stats-title">
      <div class="section-head">
        <h2 id="stats-title">Statistics</h2>
        <button type="button" onClick={() => void load()}>
          Refresh
        </button>
      </div>
      {!stats ? (
        <p class="muted">Loading…</p>
      ) : (
        <div class="stats">
          <dl class="storage">
            <div>
              <dt>Addresses</dt>
              <dd>{stats.storage.addresses}</dd>
            </div>
            <div>
              <dt>Live mails</dt>
              <dd>{stats.storage.mails}</dd>
            </div>
            <div>
              <dt>Their size</dt>
              <dd>{bytes(stats.storage.mail_bytes)}</dd>
            </div>
            <div>
              <dt>Database</dt>
              <dd>{bytes(stats.storage.database_bytes)}</dd>
            </div>
          </dl>
          <table class="per-day">
            <caption>Mails per day, last 30 days (UTC)</caption>
            <thead>
              <tr>
                <th scope="col">Day</th>
                <th scope="col">Mails</th>
                <th scope="col">
                  <span class="sr">Compared with the busiest day</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {[...stats.mails_per_day].reverse().map((d) => (
                <tr key={d.day}>
                  <th scope="row">{d.day}</th>
                  <td class="num">{d.mails}</td>
                  <td>
                    <meter min={0} max={most} value={d.mails} aria-label={`${d.mails} mails on ${d.day}`} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          <table class="senders">
            <caption>Top senders (mail stored from the last 30 days)</caption>
            <thead>
              <tr>
                <th scope="col">Sender</th>
                <th scope="col">Mails</th>
              </tr>
            </thead>
            <tbody>
              {stats.top_senders.length === 0 ? (
                <tr>
                  <td colSpan={2} class="muted">
                    No mail yet.
                  </td>
                </tr>
              ) : (
                stats.top_senders.map((s) => (
                  <tr key={s.sender}>
                    <td>{s.sender || '(null sender)'}</td>
                    <td class="num">{s.mails}</td>
                  </tr>
                ))
              )}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
