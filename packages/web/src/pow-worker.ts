// Solves a proof-of-work challenge (CHALLENGE=pow) off the page's thread, with
// altcha-lib's solver, a slice of numbers at a time so that the page can show how far
// it got. Messages: in { challenge }; out PowWorkerMessage (a failure by its reason:
// the page words it, strings.ts).
import { solveChallenge } from 'altcha-lib/v1';
import type { PowChallenge } from '@temp-inbox/api';

export type PowWorkerMessage =
  | { type: 'progress'; tried: number }
  | { type: 'solved'; number: number; took: number }
  | { type: 'failed'; reason: 'insecure' | 'unsolved' | 'error' };

/** Numbers per slice: about 50 ms on a slow machine. */
const SLICE = 2000;

const scope = self as unknown as { postMessage(message: PowWorkerMessage): void; onmessage: ((event: MessageEvent<{ challenge: PowChallenge }>) => void) | null };

async function solve(challenge: PowChallenge): Promise<PowWorkerMessage> {
  // Web Crypto exists only in secure contexts (https://, or http://localhost).
  if (!globalThis.crypto?.subtle) return { type: 'failed', reason: 'insecure' };
  const started = performance.now();
  for (let start = 0; start <= challenge.maxnumber; start += SLICE) {
    const end = Math.min(start + SLICE - 1, challenge.maxnumber);
    const found = await solveChallenge(challenge.challenge, challenge.salt, challenge.algorithm, end, start).promise;
    if (found) return { type: 'solved', number: found.number, took: Math.round(performance.now() - started) };
    scope.postMessage({ type: 'progress', tried: end + 1 });
  }
  return { type: 'failed', reason: 'unsolved' };
}

scope.onmessage = (event) => {
  solve(event.data.challenge).then(
    (message) => scope.postMessage(message),
    () => scope.postMessage({ type: 'failed', reason: 'error' }),
  );
};
