// Who goes next to the parser's threads. piscina keeps one queue, first come first
// served, so ordinary mail waited behind every large message queued before it: while
// one client sent slow-to-parse mail in a loop, ordinary mail's 250 took up to 6 s
// (docs/benchmarks.md §6). Here tasks wait in two lanes instead, and a task is given to
// the pool only when a thread is free for it (so piscina's own queue stays empty):
// small messages (and batches of them), and large ones.
//
// - While a large task has held a thread for `spareAfterMs`, a small task may take one
//   thread more (the pool has it as its spare, started on demand and ended when idle):
//   ordinary mail does not wait for a slow parse. The delay keeps the spare for slow
//   parses: a legitimate large message (an image, a newsletter) is parsed in
//   milliseconds, and a spare started for each would cost its memory for nothing.
// - Otherwise both lanes share the threads, and when both wait they take turns, so a
//   large message still goes every other time however much small mail arrives.
// docs/decisions.md "Parsing".

export type Lane = 'small' | 'large';

export interface ParseLanes {
  /**
   * Waits until a thread is free for a task of `lane`, then resolves with the function that
   * gives the thread back (call it once the task has settled). Resolves undefined, without a
   * thread, if `signal` aborts while the task waits.
   */
  enter(lane: Lane, signal: AbortSignal): Promise<(() => void) | undefined>;
  /** Tasks waiting in each lane. */
  waiting(): Record<Lane, number>;
  /** Every waiting task, and every later one, resolves undefined at once. */
  close(): void;
}

/**
 * `capacity`: the tasks the pool runs at once (threads times tasks per thread); `spare`:
 * the threads more that small tasks may have while a large one has run for `spareAfterMs`
 * (the pool's maxThreads must allow for them).
 */
export function createParseLanes(capacity: number, spare = 0, spareAfterMs = 0): ParseLanes {
  type Grant = (leave: (() => void) | undefined) => void;
  const queues: Record<Lane, Grant[]> = { small: [], large: [] };
  const inUse: Record<Lane, number> = { small: 0, large: 0 };
  let closed = false;
  /** Large tasks that have held their thread for spareAfterMs or more. */
  let slowLarge = 0;
  /** The lane that was given the last thread. */
  let last: Lane = 'large';

  const room = (lane: Lane): boolean => {
    const used = inUse.small + inUse.large;
    return used < capacity || (lane === 'small' && slowLarge > 0 && used < capacity + spare);
  };
  const take = (lane: Lane): (() => void) => {
    last = lane;
    inUse[lane]++;
    let done = false;
    let slow = false;
    const becomeSlow = () => {
      slow = true;
      slowLarge++;
      next();
    };
    let timer: NodeJS.Timeout | undefined;
    if (lane === 'large' && spare > 0) {
      if (spareAfterMs <= 0) becomeSlow();
      else timer = setTimeout(becomeSlow, spareAfterMs);
    }
    return () => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      if (slow) slowLarge--;
      inUse[lane]--;
      next();
    };
  };
  function next(): void {
    for (;;) {
      const other: Lane = last === 'small' ? 'large' : 'small';
      const lane = [other, last].find((l) => queues[l].length > 0 && room(l));
      if (!lane) return;
      queues[lane].shift()!(take(lane));
    }
  }

  return {
    enter(lane, signal) {
      if (signal.aborted || closed) return Promise.resolve(undefined);
      if (queues[lane].length === 0 && room(lane)) return Promise.resolve(take(lane));
      return new Promise((resolve) => {
        const grant: Grant = (l) => {
          signal.removeEventListener('abort', onAbort);
          resolve(l);
        };
        const onAbort = () => {
          const i = queues[lane].indexOf(grant);
          if (i >= 0) queues[lane].splice(i, 1);
          resolve(undefined);
        };
        signal.addEventListener('abort', onAbort, { once: true });
        queues[lane].push(grant);
      });
    },
    waiting: () => ({ small: queues.small.length, large: queues.large.length }),
    close() {
      closed = true;
      for (const grant of queues.small.splice(0).concat(queues.large.splice(0))) grant(undefined);
    },
  };
}
