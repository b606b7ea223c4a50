// Who goes next to the parser's threads. piscina keeps one queue, first come first
// served, so ordinary mail waited behind every large message queued before it: while
// one client sent slow-to-parse mail in a loop, ordinary mail's 250 took up to 6 s
// (docs/benchmarks.md §6). Here tasks wait in two lanes instead, and a task is given to
// the pool only when a thread is free for it (so piscina's own queue stays empty):
// small messages (and batches of them), and large ones. When both lanes wait, they take
// turns, so ordinary mail waits for at most one large parse ahead of it, and a large
// message still goes every other time however much small mail arrives.
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

/** `capacity`: the tasks the pool runs at once (threads times tasks per thread). */
export function createParseLanes(capacity: number): ParseLanes {
  type Grant = (leave: (() => void) | undefined) => void;
  const queues: Record<Lane, Grant[]> = { small: [], large: [] };
  let inUse = 0;
  let closed = false;
  /** The lane that was given the last thread when both were waiting. */
  let last: Lane = 'large';

  const leave = () => {
    let done = false;
    return () => {
      if (done) return;
      done = true;
      inUse--;
      next();
    };
  };
  function next(): void {
    while (inUse < capacity) {
      const other: Lane = last === 'small' ? 'large' : 'small';
      const lane: Lane | undefined = queues[other].length > 0 ? other : queues[last].length > 0 ? last : undefined;
      if (!lane) return;
      last = lane;
      inUse++;
      queues[lane].shift()!(leave());
    }
  }

  return {
    enter(lane, signal) {
      if (signal.aborted || closed) return Promise.resolve(undefined);
      if (inUse < capacity && queues.small.length === 0 && queues.large.length === 0) {
        last = lane;
        inUse++;
        return Promise.resolve(leave());
      }
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
