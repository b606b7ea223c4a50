// The active address's webhook (docs/api.md "Webhooks"): the URL its mail is POSTed to,
// set, replaced or removed here; the signing secret, shown once, right after the PUT that
// made it (the server never shows it again); and the latest delivery attempts. Closed, the
// panel asks the server nothing; opened, it reads the webhook and its attempts afresh.
import { useEffect, useState } from 'preact/hooks';
import { api, type Webhook, type WebhookDelivery } from './api.js';
import { CopyChip } from './copy-chip.js';
import { fullDate, when } from './intl.js';
import { s } from './strings.js';
import { useRun } from './use-run.js';

/** Attempts listed, newest first. */
const SHOWN_DELIVERIES = 10;

export function WebhookPanel() {
  const [open, setOpen] = useState(false);
  /** undefined until read; null: the address has none. */
  const [hook, setHook] = useState<Webhook | null | undefined>();
  const [deliveries, setDeliveries] = useState<WebhookDelivery[]>([]);
  const [secret, setSecret] = useState('');
  const [url, setUrl] = useState('');
  // Errors are shown in the panel, not in the page's error line, which may be far from it.
  const { busy, error, run: act } = useRun();
  const load = () =>
    act(async () => {
      const [current, attempts] = await Promise.all([api.webhook(), api.webhookDeliveries(SHOWN_DELIVERIES)]);
      setHook(current);
      setDeliveries(attempts.results);
    });
  useEffect(() => {
    if (open) void load();
    else setSecret('');
  }, [open]);

  const save = (e: Event) => {
    e.preventDefault();
    void act(async () => {
      const made = await api.setWebhook(url.trim());
      setHook({ url: made.url, created_at: made.created_at });
      setSecret(made.secret);
      setUrl('');
    });
  };
  const remove = () => {
    if (!confirm(s.confirmWebhookRemove)) return;
    void act(async () => {
      await api.removeWebhook();
      setHook(null);
      setSecret('');
      setDeliveries([]);
    });
  };

  return (
    <details class="webhook" onToggle={(e) => setOpen((e.currentTarget as HTMLDetailsElement).open)}>
      <summary>{s.webhook}</summary>
      <div class="webhook-body">
        <p class="hint">{s.webhookIntro}</p>
        {hook === null && <p>{s.webhookNone}</p>}
        {hook && (
          <p class="webhook-current">
            <code>{hook.url}</code> <span class="hint">{s.webhookSince(fullDate(new Date(hook.created_at)))}</span>{' '}
            <button type="button" class="danger" disabled={busy} onClick={remove}>
              {s.webhookRemove}
            </button>
          </p>
        )}
        {secret && (
          <div class="webhook-secret" role="status">
            <span>{s.webhookSecret}</span> <CopyChip value={secret} label={s.webhookSecret} class="secret" />
            <p class="hint">{s.webhookSecretOnce}</p>
          </div>
        )}
        {hook !== undefined && (
          <form onSubmit={save}>
            <label>
              <span>{s.webhookUrl}</span>
              <input type="url" required maxLength={2048} placeholder={s.webhookUrlPlaceholder} value={url} onInput={(e) => setUrl((e.target as HTMLInputElement).value)} />
            </label>
            <button type="submit" disabled={busy || !url.trim()}>
              {hook ? s.webhookReplace : s.webhookSet}
            </button>
          </form>
        )}
        {error && (
          <p class="error" role="alert">
            {error}
          </p>
        )}
        {hook && (
          <section class="webhook-deliveries" aria-label={s.webhookDeliveries}>
            <div class="webhook-deliveries-head">
              <h2>{s.webhookDeliveries}</h2>
              <button type="button" disabled={busy} onClick={() => void load()}>
                {s.webhookRefresh}
              </button>
            </div>
            {deliveries.length === 0 ? (
              <p class="hint">{s.webhookNoDeliveries}</p>
            ) : (
              <ul>
                {deliveries.map((d) => (
                  <li key={`${d.webhook_id}/${d.attempt}`} class={d.outcome}>
                    <strong>{s.webhookOutcome[d.outcome] ?? d.outcome}</strong> <span>{s.webhookStatus(d.status)}</span>{' '}
                    <time dateTime={d.at} title={fullDate(new Date(d.at))}>
                      {when(d.at)}
                    </time>{' '}
                    <span class="hint">{s.webhookAttempt(d.attempt)}</span>
                    {d.error && <span class="webhook-error">{d.error}</span>}
                    {d.next_attempt_at && <span class="hint">{s.webhookRetry(fullDate(new Date(d.next_attempt_at)))}</span>}
                  </li>
                ))}
              </ul>
            )}
          </section>
        )}
      </div>
    </details>
  );
}
