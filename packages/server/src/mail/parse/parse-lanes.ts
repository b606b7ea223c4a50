// Who goes next to the parser's threads. piscina keeps one queue, first come first
// served, so ordinary mail waited behind every large message queued before it: while
// one client sent slow-to-parse mail in a loop, ordinary mail's 250 took up to 6 s
// (docs/benchmarks.md §6). Here tasks wait in two lanes instead, and a task is given to
// the pool only when a thread is free for it (so piscina's own queue stays empty):
// small messages (and batches of them), and large ones.
//
// - While a large task holds a thread, a small task may take one thread more (the pool
//   has it as its spare, started on demand and ended when idle): ordinary mail never
//   waits for a large parse. The spare is given at once, not once the large parse has run
//   a while: that wait was most of ordinary mail's 250 p99 beside hostile senders
//   (docs/benchmarks.md §6), and a spare started for a legitimate large message costs its
//   memory only while large and small mail keep arriving together.
// - Otherwise both lanes share the threads, and when both wait they take turns, so a
//   large message still goes every other time however much small mail arrives.
// - Within a lane, the clients that wait take turns too: the next task is the oldest of
//   the client that was given a thread least recently, so a client that queues many
//   slow messages delays another client's by the one it has running, not by all.
// - One client holds at most `perClient` threads at once (half of them, at least one),
//   spare included: its other tasks wait in its own queue however many threads are free,
//   so a client with slow mail cannot take every thread and then the spare too.
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
  /** The first task of the waiting client with the lowest `served` (the first to come among equals) that `may` go now. */
  shift(served: (client: string) => number, may: (client: string) => boolean): { client: string; item: T } | undefined {
    let turn: [string, T[]] | undefined;
    for (const entry of this.byClient) if ((!turn || served(entry[0]) < served(turn[0])) && may(entry[0])) turn = entry;
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
   * SMTP client's key); the clients waiting in a lane take turns, and each holds at most
   * `perClient` threads at once. Tasks of no client ('': batches of several clients' mail)
   * are not counted to any.
   */
  enter(lane: Lane, signal: AbortSignal, client?: string): Promise<(() => void) | undefined>;
  /** Tasks waiting in each lane. */
  waiting(): Record<Lane, number>;
  /** Every waiting task, and every later one, resolves undefined at once. */
  close(): void;
}

/** Threads one client may hold at once, out of `capacity`: half of them, at least one. */
export function clientShare(capacity: number): number {
  return Math.max(1, Math.floor(capacity / 2));
}

/**
 * `capacity`: the tasks the pool runs at once (threads times tasks per thread); `spare`:
 * the threads more that small tasks may have while a large one holds a thread (the pool's
 * maxThreads must allow for them); `perClient`: the threads one client may hold.
 */
export function createParseLanes(capacity: number, spare = 0, perClient = clientShare(capacity)): ParseLanes {
  type Grant = (leave: (() => void) | undefined) => void;
  const queues: Record<Lane, TakingTurns<Grant>> = { small: new TakingTurns(), large: new TakingTurns() };
  const inUse: Record<Lane, number> = { small: 0, large: 0 };
  let closed = false;
  /** The lane that was given the last thread. */
  let last: Lane = 'large';
  /** When each client was last given a thread (a count of grants), oldest first. */
  const served = new Map<string, number>();
  let grants = 0;
  const servedAt = (client: string) => served.get(client) ?? -1;
  /** Threads each client holds now (clients holding none are not kept). */
  const holding = new Map<string, number>();
  const mayTake = (client: string) => client === '' || (holding.get(client) ?? 0) < perClient;
  const hold = (client: string, by: 1 | -1) => {
    if (client === '') return;
    const n = (holding.get(client) ?? 0) + by;
    if (n > 0) holding.set(client, n);
    else holding.delete(client);
  };
  const serve = (client: string) => {
    served.delete(client);
    served.set(client, ++grants);
    if (served.size > SERVED_CLIENTS) served.delete(served.keys().next().value!);
  };

  const room = (lane: Lane): boolean => {
    const used = inUse.small + inUse.large;
    return used < capacity || (lane === 'small' && inUse.large > 0 && used < capacity + spare);
  };
  const take = (lane: Lane, client: string): (() => void) => {
    serve(client);
    hold(client, 1);
    last = lane;
    inUse[lane]++;
    let done = false;
    return () => {
      if (done) return;
      done = true;
      inUse[lane]--;
      hold(client, -1);
      next();
    };
  };
  /** Gives free threads to waiting tasks, the lanes taking turns, until none may go. */
  function next(): void {
    for (;;) {
      const other: Lane = last === 'small' ? 'large' : 'small';
      let turn: { lane: Lane; client: string; item: Grant } | undefined;
      for (const lane of [other, last]) {
        const t = queues[lane].length > 0 && room(lane) ? queues[lane].shift(servedAt, mayTake) : undefined;
        if (t) {
          turn = { lane, ...t };
          break;
        }
      }
      if (!turn) return;
      turn.item(take(turn.lane, turn.client));
    }
  }

  return {
    enter(lane, signal, client = '') {
      if (signal.aborted || closed) return Promise.resolve(undefined);
      if (queues[lane].length === 0 && room(lane) && mayTake(client)) return Promise.resolve(take(lane, client));
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
        // Free threads may be kept from the tasks waiting already by their clients' shares, not from this one.
        next();
      });
    },
    waiting: () => ({ small: queues.small.length, large: queues.large.length }),
    close() {
      closed = true;
      for (const grant of queues.small.drain().concat(queues.large.drain())) grant(undefined);
    },
  };
}
