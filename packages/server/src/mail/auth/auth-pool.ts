// The checks' one thread (auth.ts): a piscina pool of auth-worker.ts with room for
// CONCURRENT_BATCHES tasks at once, started afresh when its worker dies while starting or
// is ended for a budget; what the thread says (a task started, early results, its name
// servers' silence) is passed on.
import { Piscina } from 'piscina';
import { moduleWorkerUrl, workerExecArgv } from '../../workers/module-worker.js';
import type { AuthBatch, AuthDnsSilence, AuthEarlyResults, AuthResults, AuthStartedMessage, AuthWorkerData } from './auth-worker.js';
import { createTaskStarts, type TaskStarts } from '../task-starts.js';

/** Tasks the thread runs at once, so at most 64 checks: each mostly waits for DNS. */
const CONCURRENT_BATCHES = 4;
const WORKER_URL = moduleWorkerUrl(import.meta.url, 'auth-worker');

export type AuthThread = Piscina<AuthBatch, AuthResults>;

export interface AuthPoolOptions {
  dnsServers?: string[] | undefined;
  mta: string;
  /** Told when the name servers are found to answer nothing (true) and when they answer again (false). */
  onDnsSilence?: ((silent: boolean) => void) | undefined;
  /** One check's answer from `thread` (an early result, sent before its batch ends). */
  settle: (result: AuthResults[number], thread: AuthThread) => void;
  /** Called when a thread is replaced (its DNS answers are gone with it). */
  onRestart: () => void;
}

export interface AuthPool {
  /** The thread checks are sent to now (started by the first call). */
  current(): AuthThread;
  /** Starts the thread now, if no check has; nothing once closed. */
  warm(): void;
  /** Ends `thread` (its checks still running answer temperror) and starts another, unless it was replaced already or the pool is closed. */
  restart(thread: AuthThread): void;
  /** When tasks start (task-starts.ts); a new thread loads mailauth first. */
  starts: TaskStarts;
  /** What to do when the task of that id says it started. */
  starters: Map<number, () => void>;
  close(): Promise<void>;
}

export function createAuthPool(opts: AuthPoolOptions): AuthPool {
  let closed = false;
  const starters = new Map<number, () => void>();
  const starts = createTaskStarts(CONCURRENT_BATCHES);

  function startPool(): AuthThread {
    const p = new Piscina<AuthBatch, AuthResults>({
      filename: WORKER_URL.href,
      minThreads: 1,
      maxThreads: 1,
      execArgv: workerExecArgv(WORKER_URL),
      concurrentTasksPerWorker: CONCURRENT_BATCHES,
      // Piscina's default ('sync') blocks the thread on Atomics.wait between tasks, and with
      // it the DNS answers and timers of the checks still running there: messages instead.
      atomics: 'disabled',
      workerData: { dnsServers: opts.dnsServers, mta: opts.mta } satisfies AuthWorkerData,
      // Old: a 10 MB message in each of the checks at once, and the DNS cache. Young: small, as
      // most mail's verdict is reused on the server's thread (auth-reuse.ts) and this thread
      // allocates little (workers/worker-heap.ts).
      resourceLimits: { maxOldGenerationSizeMb: 512, maxYoungGenerationSizeMb: 3 },
    });
    p.on('message', (m: Partial<AuthStartedMessage & AuthEarlyResults & AuthDnsSilence> | null) => {
      if (typeof m?.authTaskStarted === 'number') starters.get(m.authTaskStarted)?.();
      if (typeof m?.authDnsSilent === 'boolean' && p === pool) dnsSilence(m.authDnsSilent);
      for (const result of m?.authResults ?? []) opts.settle(result, p);
    });
    // As parse.ts: a pool whose worker died while starting is started afresh.
    p.on('error', () => {
      if (p.threads.length === 0) restart(p);
    });
    return p;
  }
  // Started by the first check, not with the server (as the parser's threads: parse-runner.ts).
  let pool: AuthThread | undefined;

  /** What the thread last said of its name servers (auth-dns.ts): passed on when it changes. */
  let dnsSilent = false;
  function dnsSilence(silent: boolean): void {
    if (silent === dnsSilent) return;
    dnsSilent = silent;
    opts.onDnsSilence?.(silent);
  }

  function restart(p: AuthThread): void {
    if (pool !== p || closed) return;
    starts.cold();
    // The new thread knows nothing of its name servers yet, and says so again if they are still silent.
    dnsSilence(false);
    // The new thread starts with no DNS answers: neither are verdicts made of them kept.
    opts.onRestart();
    pool = startPool();
    void p.destroy();
  }

  return {
    current: () => (pool ??= startPool()),
    warm: () => {
      if (!closed) pool ??= startPool();
    },
    restart,
    starts,
    starters,
    close() {
      closed = true;
      return pool?.destroy() ?? Promise.resolve();
    },
  };
}
