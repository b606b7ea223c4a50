// Timing a synchronous step against a bound on a shared machine: the step is run again (up
// to three times in all) while it is over the bound. A pause of the process (not scheduled,
// a collection by V8) lengthens one run; work that grows too fast with its input is slow in
// every run, so the fastest run is the step's own time.
import { performance } from 'node:perf_hooks';

/** The milliseconds of each run of `step`, stopping at the first under `boundMs`. */
export function timedRuns(boundMs: number, step: () => unknown): number[] {
  const runs: number[] = [];
  while (runs.length < 3 && !runs.some((ms) => ms < boundMs)) {
    const t0 = performance.now();
    step();
    runs.push(performance.now() - t0);
  }
  return runs;
}

/** "12, 9 ms": the runs, for an assertion's message. */
export const runsText = (runs: number[]) => `${runs.map((ms) => ms.toFixed(0)).join(', ')} ms`;
