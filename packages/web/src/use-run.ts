// Running what a click asks for: busy while it runs (buttons wait), and its error's
// sentence kept to be shown (the API's plain-text reason, api.ts) until the next run.
import { useCallback, useState } from 'preact/hooks';
import type { Run } from './format.js';

export function useRun(): { busy: boolean; error: string; run: Run } {
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const run = useCallback<Run>(async (what) => {
    setBusy(true);
    setError('');
    try {
      await what();
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  }, []);
  return { busy, error, run };
}
