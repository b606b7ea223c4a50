// The self-hosted anti-bot check (CHALLENGE=pow): a challenge from GET /api/challenge,
// solved in a Web Worker (pow-worker.ts) so the page never stalls, sent as cf_token
// with POST /api/new_address (the ALTCHA payload: base64 JSON). PowStatus shows it.
import type { PowChallenge, PowSolution } from '@temp-inbox/api';
import { api } from './api.js';
import type { PowWorkerMessage } from './pow-worker.js';
import { s } from './strings.js';

export type PowState = { kind: 'idle' } | { kind: 'solving'; fraction: number } | { kind: 'solved'; took: number } | { kind: 'failed' };

/** Fetches a challenge and solves it; resolves to the cf_token. `onState` follows the work. */
export async function solveProofOfWork(onState: (state: PowState) => void): Promise<string> {
  onState({ kind: 'solving', fraction: 0 });
  const worker = new Worker(new URL('./pow-worker.ts', import.meta.url), { type: 'module', name: 'proof-of-work' });
  try {
    const challenge = await api.challenge();
    const solved = await new Promise<{ number: number; took: number }>((resolve, reject) => {
      worker.onmessage = (event: MessageEvent<PowWorkerMessage>) => {
        const m = event.data;
        if (m.type === 'progress') onState({ kind: 'solving', fraction: Math.min(1, m.tried / challenge.maxnumber) });
        else if (m.type === 'solved') resolve(m);
        else reject(new Error(s.powFailed[m.reason]));
      };
      worker.onerror = () => reject(new Error(s.powUnsupported));
      worker.postMessage({ challenge } satisfies { challenge: PowChallenge });
    });
    onState({ kind: 'solved', took: solved.took });
    return btoa(JSON.stringify(solutionOf(challenge, solved)));
  } catch (err) {
    onState({ kind: 'failed' });
    throw err;
  } finally {
    worker.terminate();
  }
}

function solutionOf(c: PowChallenge, solved: { number: number; took: number }): PowSolution {
  return { algorithm: c.algorithm, challenge: c.challenge, number: solved.number, salt: c.salt, signature: c.signature, took: solved.took };
}

/**
 * The check's progress: a progress bar while it works (how much of the worst case is
 * done; it usually ends well before), and a polite status line that speaks only when
 * the check starts and ends.
 */
export function PowStatus(props: { state: PowState }) {
  const { state } = props;
  const text =
    state.kind === 'solving' ? s.powRunning : state.kind === 'solved' ? s.powPassed(state.took / 1000) : '';
  return (
    <span class="pow">
      {state.kind === 'solving' && <progress aria-label={s.powLabel} max={1} value={state.fraction} />}
      <span role="status" class={state.kind === 'solving' ? '' : 'sr'}>
        {text}
      </span>
    </span>
  );
}
