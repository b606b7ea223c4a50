// The parser's threads and the one way a task reaches them (run): a piscina pool of
// parse-worker.ts threads, restarted when its workers die while starting; each task waits
// for a thread in its lane (parse-lanes.ts), then has its budget counted from when a
// thread takes it up (task-starts.ts), past which its worker is ended.
import { Piscina } from 'piscina';
import { moduleWorkerUrl, workerExecArgv } from '../../workers/module-worker.js';
import { createParseLanes, type Lane, type ParseLanes } from './parse-lanes.js';
import { createTaskStarts } from '../task-starts.js';
import { forWorker } from '../worker-input.js';
import type { ParseTask, StartedMessage, ViewResult, WorkerResult } from './parse-worker.js';
import { isSmall } from './small-messages.js';

/** A legitimate 10 MB message needs well under this; a hostile one is stopped by it rather than by the host. */
const DEFAULT_MAX_HEAP_MB = 512;
/**
 * A parse's objects die with it, so a small young generation is collected cheaply; V8's
 * own would grow to 16 MB semi-spaces under load. Effective once the process's semi-space
 * flags are cleared (workers/worker-heap.ts): the server's RSS after 30,000 mails fell
 * from about 195 to 170 MB with the checks' thread's below, at the same rate.
 */
export const YOUNG_GENERATION_MB = 6;

const WORKER_URL = moduleWorkerUrl(import.meta.url, 'parse-worker');

/** Threads more than `threads` that small messages may have while a large one holds a thread. */
export const SPARE_THREADS = 1;
/** A spare thread idle this long is ended (its memory returned: about 25 MB). */
const SPARE_IDLE_MS = 30_000;

/** Batches, header blocks and messages that may share a task go in the small lane; the rest wait in the large one. */
function laneOf(what: { op: string }, raw: Buffer): Lane {
  if (what.op === 'batch' || what.op === 'headers' || what.op === 'view-headers') return 'small';
  return isSmall(raw) ? 'small' : 'large';
}


/** Where a task sits: a thread the caller already has, or the client whose turn it waits for (in `lane`, if given). */
export type Seat = { slot?: (() => void) | undefined; client?: string | undefined; lane?: Lane };
export type Op =
  | { op: 'parse' | 'headers' }
  | { op: 'attachment'; index: number }
  | { op: 'batch'; sizes: number[] }
  | { op: 'view' | 'view-headers'; attachmentsListed: number };

export interface ParseRunner {
  /**
   * A task's result, or 'failed' (error, or over `ms` of work: its worker is ended), or 'unstarted' (no thread for maxWaitMs).
   * `slot`: a thread the caller already has from the lanes (given back here); otherwise the task
   * waits in its lane, in `client`'s turn. `raw` may be read only once the thread is given (then `lane` is
   * needed); what it rejects with, this rejects with.
   */
  run<R extends WorkerResult | ViewResult = WorkerResult>(what: Op, raw: Buffer | (() => Promise<Buffer>), ms: number, seat?: Seat): Promise<R | 'failed' | 'unstarted'>;
  /** The lanes tasks wait in for a thread (the small messages' batches ask them for one). */
  lanes: ParseLanes;
  /** Views given to a thread so far. */
  viewsGiven(): number;
  /** Starts the threads now, if no task has (a client is about to send mail); nothing once closed. */
  warm(): void;
  /** Ends the lanes and the workers, running tasks too; later tasks are 'unstarted'. */
  close(): Promise<void>;
}

export function createParseRunner(opts: { threads: number; maxWaitMs: number; maxHeapMb?: number | undefined }): ParseRunner {
  const { threads, maxWaitMs } = opts;
  let closed = false;
  // Each task's budget starts when its worker takes it up, not while it waits for a thread (task-starts.ts).
  let nextId = 0;
  const starters = new Map<number, () => void>();
  // A task that failed or was cut short leaves its thread ended: the pool is cold until one answers again.
  const starts = createTaskStarts(threads);
  // Small messages and large ones wait in lanes of their own; while a large one is parsed,
  // small ones have a spare thread; one client holds at most its share (parse-lanes.ts).
  const lanes = createParseLanes(threads, SPARE_THREADS);

  function startPool(): Piscina<ParseTask, WorkerResult | ViewResult> {
    const p = new Piscina<ParseTask, WorkerResult | ViewResult>({
      filename: WORKER_URL.href,
      minThreads: threads,
      // The spare is started when small mail waits while a large parse runs, and ended once idle.
      maxThreads: threads + SPARE_THREADS,
      idleTimeout: SPARE_IDLE_MS,
      // From source the worker needs the TypeScript loader; never the process's V8 flags.
      execArgv: workerExecArgv(WORKER_URL),
      // Parsing is CPU-bound: one task at a time per thread.
      concurrentTasksPerWorker: 1,
      // Tasks reach an idle thread by message alone. piscina's default ('sync') also parks the
      // thread on Atomics.wait and wakes it with Atomics.notify: a second system call on the
      // server's thread for every task, for nothing (ingest about a tenth faster without it).
      atomics: 'disabled',
      resourceLimits: { maxOldGenerationSizeMb: opts.maxHeapMb ?? DEFAULT_MAX_HEAP_MB, maxYoungGenerationSizeMb: YOUNG_GENERATION_MB },
    });
    p.on('message', (m: Partial<StartedMessage> | null) => {
      if (typeof m?.parseTaskStarted === 'number') starters.get(m.parseTaskStarted)?.();
    });
    // Piscina gives up on workers that die while starting, leaving its queue to wait forever: start afresh.
    p.on('error', () => {
      if (p === pool && !closed && p.threads.length === 0) {
        pool = startPool();
        void p.destroy();
      }
    });
    return p;
  }
  // Started by the first task, not with the server: a thread's start is about 100 ms of CPU,
  // which a server that is never sent mail (a test's, a read-only node) never spends. The
  // first task waits for it as for any cold thread (task-starts.ts), within maxWaitMs.
  let pool: Piscina<ParseTask, WorkerResult | ViewResult> | undefined;
  let viewsGiven = 0;

  async function run<R extends WorkerResult | ViewResult = WorkerResult>(
    what: Op,
    raw: Buffer | (() => Promise<Buffer>),
    ms: number,
    { slot, client, lane }: Seat = {},
  ): Promise<R | 'failed' | 'unstarted'> {
    const id = nextId++;
    const abort = new AbortController();
    let started = false;
    // The wait for a thread, in its lane and then (if the thread is cold) for it to start, is bounded by maxWaitMs.
    let timer: NodeJS.Timeout | undefined = setTimeout(() => abort.abort(), maxWaitMs);
    const start = () => {
      started = true;
      clearTimeout(timer);
      timer = setTimeout(() => abort.abort(), ms);
    };
    const leave = slot ?? (await lanes.enter(lane ?? laneOf(what, raw as Buffer), abort.signal, client));
    // Closed: the lanes give nothing, and a destroyed pool would start new workers for a late task.
    if (!leave || closed) {
      leave?.();
      clearTimeout(timer);
      return 'unstarted';
    }
    let message: Buffer;
    try {
      message = typeof raw === 'function' ? await raw() : raw;
    } catch (err) {
      leave();
      clearTimeout(timer);
      throw err;
    }
    let settled: (() => void) | undefined;
    try {
      if (what.op === 'view') viewsGiven++;
      const { bytes, transferList } = await forWorker(message);
      // Decided just before piscina is given the task, which it posts to a free thread at once.
      const announce = starts.mayWait();
      if (announce) {
        starters.set(id, () => {
          starts.running();
          start();
        });
      } else start();
      const task: ParseTask = { ...what, id, raw: bytes, announce };
      // Closed while the message was read: no pool is started for it.
      if (closed) return 'unstarted';
      settled = starts.given();
      const result = (await (pool ??= startPool()).run(task, { signal: abort.signal, transferList })) as R;
      starts.running();
      return result;
    } catch {
      starts.cold();
      return started || !abort.signal.aborted ? 'failed' : 'unstarted';
    } finally {
      settled?.();
      leave();
      starters.delete(id);
      clearTimeout(timer);
    }
  }

  return {
    run,
    lanes,
    viewsGiven: () => viewsGiven,
    warm: () => {
      if (!closed) pool ??= startPool();
    },
    // Running parses are cut short too: close must not wait out a hostile message's budget.
    close: async () => {
      closed = true;
      lanes.close();
      await pool?.destroy();
      // piscina's destroy() ends with its pool open to new workers again, and a task's late
      // abort or a worker's late error then starts one: end those too.
      if (pool && pool.threads.length > 0) await pool.destroy();
    },
  };
}
