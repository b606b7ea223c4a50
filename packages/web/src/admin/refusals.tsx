// Refusals: what SMTP refused, by reason, over the last day, three days or week: the
// totals, and a table of the hours with refusals (newest first), a column per reason seen.
import { useEffect, useState } from 'preact/hooks';
import type { AdminApi, AdminRefusalsResponse } from './api.js';
import type { Report } from './report.js';

const WINDOWS = [
  { hours: 24, label: 'Last 24 hours' },
  { hours: 72, label: 'Last 3 days' },
  { hours: 168, label: 'Last 7 days' },
];

/** Counts per hour (newest first) and per reason, every domain summed. */
function perHour(r: AdminRefusalsResponse): { hours: { hour: string; counts: Map<string, number>; total: number }[]; reasons: string[] } {
  const byHour = new Map<string, Map<string, number>>();
  for (const row of r.hours) {
    const counts = byHour.get(row.hour) ?? new Map<string, number>();
    counts.set(row.reason, (counts.get(row.reason) ?? 0) + row.count);
    byHour.set(row.hour, counts);
  }
  const reasons = Object.keys(r.totals).filter((reason) => (r.totals[reason] ?? 0) > 0);
  const hours = [...byHour]
    .sort((a, b) => (a[0] < b[0] ? 1 : -1))
    .map(([hour, counts]) => ({ hour, counts, total: [...counts.values()].reduce((a, b) => a + b, 0) }));
  return { hours, reasons };
}

const hourText = (iso: string) => `${iso.slice(0, 10)} ${iso.slice(11, 16)}`;

export function Refusals({ api, report, changes }: { api: AdminApi; report: Report; changes: number }) {
  const [hours, setHours] = useState(24);
  const [data, setData] = useState<AdminRefusalsResponse | null>(null);
  const load = () => api.refusals(hours).then(setData, (err: unknown) => report.failed(err));
  useEffect(() => void load(), [api, changes, hours]);

  const table = data && perHour(data);
  const most = Math.max(1, ...(table?.hours.map((h) => h.total) ?? []));
  const total = data ? Object.values(data.totals).reduce((a, b) => a + b, 0) : 0;
  return (
    <section id="refusals" aria-labelledby="refusals-title">
      <div class="section-head">
        <h2 id="refusals-title">Refusals</h2>
        <label for="refusals-window" class="sr">
          Window
        </label>
        <select id="refusals-window" value={hours} onChange={(e) => setHours(Number(e.currentTarget.value))}>
          {WINDOWS.map((w) => (
            <option value={w.hours} key={w.hours}>
              {w.label}
            </option>
          ))}
        </select>
        <button type="button" onClick={() => void load()}>
          Refresh
        </button>
      </div>
      <p class="muted">What SMTP refused, by reason, on every node (UTC hours).</p>
      {!data || !table ? (
        <p class="muted">Loading…</p>
      ) : (
        <div class="stats">
          <table class="refusal-totals">
            <caption>Refusals by reason</caption>
            <thead>
              <tr>
                <th scope="col">Reason</th>
                <th scope="col">Refusals</th>
              </tr>
            </thead>
            <tbody>
              {Object.entries(data.totals).map(([reason, n]) => (
                <tr key={reason}>
                  <th scope="row">{reason}</th>
                  <td class="num">{n}</td>
                </tr>
              ))}
            </tbody>
          </table>
          <table class="per-hour">
            <caption>{total === 0 ? 'Nothing was refused.' : `Refusals per hour, newest first (${total} in all)`}</caption>
            <thead>
              <tr>
                <th scope="col">Hour</th>
                {table.reasons.map((reason) => (
                  <th scope="col" key={reason}>
                    {reason}
                  </th>
                ))}
                <th scope="col">All</th>
                <th scope="col">
                  <span class="sr">Compared with the busiest hour</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {table.hours.map((h) => (
                <tr key={h.hour}>
                  <th scope="row">{hourText(h.hour)}</th>
                  {table.reasons.map((reason) => (
                    <td class="num" key={reason}>
                      {h.counts.get(reason) ?? 0}
                    </td>
                  ))}
                  <td class="num">{h.total}</td>
                  <td>
                    <meter min={0} max={most} value={h.total} aria-label={`${h.total} refusals at ${hourText(h.hour)}`} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
