// Says whether new mail appears by itself, and when the live connection is down,
// that it is and when it is tried again (a polite live region for screen readers).
import { useEffect, useState } from 'preact/hooks';
import type { LiveState } from './live.js';
import { s } from './strings.js';

export function LiveStatus(props: { state: LiveState }) {
  const { state } = props;
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    if (state.kind !== 'retrying') return;
    const t = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(t);
  }, [state]);
  if (state.kind === 'live') {
    return (
      <span class="live on" title={s.liveHint}>
        {s.live}
      </span>
    );
  }
  if (state.kind === 'connecting') return <span class="live">{s.connecting}</span>;
  const seconds = Math.max(0, Math.ceil((state.until - now) / 1000));
  return (
    <span class="live off" role="status">
      {s.interrupted(seconds)}
    </span>
  );
}
