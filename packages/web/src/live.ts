// The inbox's live connection: a Server-Sent Events stream that recovers by itself.
// EventSource gives up for good when the server refuses the stream (429 when one
// client holds too many, 503 while it is full or restarting); then the list is
// polled meanwhile and the stream is reopened with exponential back-off (1 s
// doubling to 30 s, with jitter), never sooner than the server's Retry-After.
import { path, routes } from '@temp-inbox/api/routes';

export type LiveState = { kind: 'connecting' } | { kind: 'live' } | { kind: 'retrying'; until: number };

export interface LiveHandlers {
  /** A named server event (mail, mail_deleted, mail_seen, inbox_cleared, address_deleted) with its data. */
  onEvent(type: string, data: string): void;
  /** While the stream is down: fetch the list again. */
  poll(): Promise<void>;
  /** The address or its token is gone (401). */
  onGone(): void;
  onState(state: LiveState): void;
}

const EVENTS = ['mail', 'mail_deleted', 'mail_seen', 'inbox_cleared', 'address_deleted'];
const FIRST_DELAY_MS = 1000;
const MAX_DELAY_MS = 30_000;
const POLL_MS = 5000;

/** Seconds from a Retry-After header (delta-seconds form), or 0. */
function retryAfterMs(res: Response): number {
  const v = Number(res.headers.get('retry-after'));
  return Number.isFinite(v) && v > 0 ? v * 1000 : 0;
}

/** Starts the live connection; the returned function stops it. */
export function connectLive(handlers: LiveHandlers): () => void {
  let stopped = false;
  let attempt = 0;
  let source: EventSource | undefined;
  let retryTimer: ReturnType<typeof setTimeout> | undefined;
  let pollTimer: ReturnType<typeof setInterval> | undefined;

  const startPolling = () => {
    if (pollTimer !== undefined) return;
    void handlers.poll().catch(() => undefined);
    pollTimer = setInterval(() => void handlers.poll().catch(() => undefined), POLL_MS);
  };
  const stopPolling = () => {
    clearInterval(pollTimer);
    pollTimer = undefined;
  };

  const scheduleRetry = async () => {
    if (stopped) return;
    const backoff = Math.min(MAX_DELAY_MS, FIRST_DELAY_MS * 2 ** attempt++) * (0.5 + Math.random() / 2);
    // Asks the same admission as the stream, so a refusal tells why and for how long.
    let wait = backoff;
    try {
      const res = await fetch(`${path(routes.waitMails)}?timeout=0`, { credentials: 'same-origin' });
      if (res.status === 401) return handlers.onGone();
      if (res.status === 429 || res.status === 503) wait = Math.max(backoff, retryAfterMs(res));
    } catch {
      // The server is unreachable: keep backing off.
    }
    if (stopped) return;
    handlers.onState({ kind: 'retrying', until: Date.now() + wait });
    retryTimer = setTimeout(open, wait);
  };

  function open() {
    if (stopped) return;
    handlers.onState({ kind: 'connecting' });
    const es = new EventSource(path(routes.events));
    source = es;
    es.addEventListener('ready', () => {
      attempt = 0;
      stopPolling();
      handlers.onState({ kind: 'live' });
      // What arrived while the stream was down is in the list again.
      void handlers.poll().catch(() => undefined);
    });
    for (const type of EVENTS) es.addEventListener(type, (e) => handlers.onEvent(type, (e as MessageEvent<string>).data));
    es.onerror = () => {
      startPolling();
      // CONNECTING: the browser is reconnecting by itself (the server replays what was missed).
      if (es.readyState === EventSource.CONNECTING) return handlers.onState({ kind: 'retrying', until: Date.now() + FIRST_DELAY_MS });
      es.close();
      void scheduleRetry();
    };
  }

  open();
  return () => {
    stopped = true;
    source?.close();
    clearTimeout(retryTimer);
    stopPolling();
  };
}
