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
// - Within a lane, the clients that wait take turns too: the next task is the oldest of
//   the client that was given a thread least recently, so a client that queues many
//   slow messages delays another client's by the one it has running, not by all.
// docs/decisions.md "Parsing".

export type Lane = 'small' | 'large';

/** Clients remembered by when they were last given a thread; the oldest are forgotten past this many. */
const SERVED_CLIENTS = 4096;

/** The tasks waiting in one lane, each client's in order. */
class TakingTurns<T> {
  /** Waiting clients, in the order they came (a Map keeps insertion order). */
  private readonly byClient = new Map<string, T[]>();
  private count = 0;

  get length(): number {
    return this.count;
  }
  push(client: string, item: T): void {
    const queue = this.byClient.get(client);
    if (queue) queue.push(item);
    else this.byClient.set(client, [item]);
    this.count++;
  }
  /** The first task of the waiting client with the lowest `served` (the first to come among equals). */
  shift(served: (client: string) => number): { client: string; item: T } | undefined {
    let turn: [string, T[]] | undefined;
    for (const entry of this.byClient) if (!turn || served(entry[0]) < served(turn[0])) turn = entry;
    if (!turn) return undefined;
    const [client, queue] = turn;
    const item = queue.shift()!;
    if (queue.length === 0) this.byClient.delete(client);
    this.count--;
    return { client, item };
  }
  remove(item: T): void {
    for (const [client, queue] of this.byClient) {
      const i = queue.indexOf(item);
      if (i < 0) continue;
      queue.splice(i, 1);
      if (queue.length === 0) this.byClient.delete(client);
      this.count--;
      return;
    }
  }
  /** Every waiting task, the lane left empty. */
  drain(): T[] {
    const all = [...this.byClient.values()].flat();
    this.byClient.clear();
    this.count = 0;
    return all;
  }
}

export interface ParseLanes {
  /**
   * Waits until a thread is free for a task of `lane`, then resolves with the function that
   * gives the thread back (call it once the task has settled). Resolves undefined, without a
   * thread, if `signal` aborts while the task waits. `client`: who the task is for (the
   * SMTP client's key); the clients waiting in a lane take turns.
   */
  enter(lane: Lane, signal: AbortSignal, client?: string): Promise<(() => void) | undefined>;
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
  const queues: Record<Lane, TakingTurns<Grant>> = { small: new TakingTurns(), large: new TakingTurns() };
  const inUse: Record<Lane, number> = { small: 0, large: 0 };
  let closed = false;
  /** Large tasks that have held their thread for spareAfterMs or more. */
  let slowLarge = 0;
  /** The lane that was given the last thread. */
  let last: Lane = 'large';
  /** When each client was last given a thread (a count of grants), oldest first. */
  const served = new Map<string, number>();
  let grants = 0;
  const servedAt = (client: string) => served.get(client) ?? -1;
  const serve = (client: string) => {
    served.delete(client);
    served.set(client, ++grants);
    if (served.size > SERVED_CLIENTS) served.delete(served.keys().next().value!);
  };

  const room = (lane: Lane): boolean => {
    const used = inUse.small + inUse.large;
    return used < capacity || (lane === 'small' && slowLarge > 0 && used < capacity + spare);
  };
  const take = (lane: Lane, client: string): (() => void) => {
    serve(client);
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
      const { client, item: grant } = queues[lane].shift(servedAt)!;
      grant(take(lane, client));
    }
  }

  return {
    enter(lane, signal, client = '') {
      if (signal.aborted || closed) return Promise.resolve(undefined);
      if (queues[lane].length === 0 && room(lane)) return Promise.resolve(take(lane, client));
      return new Promise((resolve) => {
        const grant: Grant = (l) => {
          signal.removeEventListener('abort', onAbort);
          resolve(l);
        };
        const onAbort = () => {
          queues[lane].remove(grant);
          resolve(undefined);
        };
        signal.addEventListener('abort', onAbort, { once: true });
        queues[lane].push(client, grant);
      });
    },
    waiting: () => ({ small: queues.small.length, large: queues.large.length }),
    close() {
      closed = true;
      for (const grant of queues.small.drain().concat(queues.large.drain())) grant(undefined);
    },
  };
}
