// Searches run on a thread of their own (search-worker.ts), one at a time, with a time
// budget: an FTS5 query is one synchronous call, and on the serving connection a costly
// one held every SMTP session and HTTP request until it returned (eight one-letter
// prefixes over a 1,000-mail inbox: 1.3 s each). The thread stops a statement past its
// budget itself; one that does not come back in time (stuck in a single step of the
// index) is answered here and its thread ended, and the next search starts a new one.
// docs/decisions.md "Search", docs/security.md "Search".
import type { Worker } from 'node:worker_threads';
import { AppError } from '../../domain/errors.js';
import { moduleWorkerUrl, startModuleWorker } from '../../workers/module-worker.js';
import { SEARCH_BUDGET_MS, searchOverBudget, type ParsedSearch } from '../search-query.js';
import type { SearchPage, SearchRow } from './search-sql.js';
import type { SearchReply, SearchRequest } from './search-worker.js';

/** Searches waiting for the thread at most; past that a search is refused (503) at once. */
export const MAX_WAITING_SEARCHES = 16;
/** How long past its budget a search is waited for before its thread is ended. */
const GRACE_MS = 1_000;

export interface SearchThread {
  search(addressId: number, search: ParsedSearch, limit: number, offset: number): Promise<SearchPage>;
  close(): Promise<void>;
}

interface Job {
  request: SearchRequest;
  resolve: (page: SearchPage) => void;
  reject: (err: unknown) => void;
}

export function startSearchThread(file: string, options: { budgetMs?: number } = {}): SearchThread {
  const budgetMs = options.budgetMs ?? SEARCH_BUDGET_MS;
  const waiting: Job[] = [];
  let current: Job | undefined;
  let worker: Worker | undefined;
  let ready = false;
  let hardTimer: NodeJS.Timeout | undefined;
  let closed = false;
  let nextId = 0;

  const finish = (settle: (job: Job) => void) => {
    const job = current;
    current = undefined;
    clearTimeout(hardTimer);
    hardTimer = undefined;
    if (job) settle(job);
    setImmediate(pump);
  };
  const send = () => {
    if (!current || !worker || !ready) return;
    worker.postMessage(current.request);
    hardTimer = setTimeout(() => {
      // Still in one step of the index: the thread cannot stop it, so it is ended (it
      // stops once that step returns) and the next search gets a new one.
      const stuck = worker;
      worker = undefined;
      ready = false;
      void stuck?.terminate();
      finish((job) => job.reject(searchOverBudget(budgetMs)));
    }, budgetMs + GRACE_MS);
  };
  const start = () => {
    const w = startModuleWorker(moduleWorkerUrl(import.meta.url, 'search-worker'), { workerData: { file } });
    w.unref();
    worker = w;
    ready = false;
    w.on('message', (message: SearchReply | 'ready') => {
      if (w !== worker) return;
      if (message === 'ready') {
        ready = true;
        send();
        return;
      }
      if (!current || message.id !== current.request.id) return;
      if ('error' in message) {
        const error = message.error === 'budget' ? searchOverBudget(budgetMs) : new Error(`The search failed: ${message.error}`);
        finish((job) => job.reject(error));
      } else {
        finish((job) => job.resolve({ rows: message.rows as SearchRow[], count: message.count }));
      }
    });
    const lost = (err?: unknown) => {
      if (w !== worker) return;
      worker = undefined;
      ready = false;
      finish((job) => job.reject(err ?? new Error('The search thread stopped.')));
    };
    w.once('error', lost);
    w.once('exit', () => lost());
  };
  function pump(): void {
    if (current || closed) return;
    current = waiting.shift();
    if (!current) return;
    if (!worker) start();
    send();
  }

  return {
    search(addressId, search, limit, offset) {
      if (closed) return Promise.reject(new AppError('unavailable', 'The server is shutting down.'));
      if (waiting.length >= MAX_WAITING_SEARCHES) {
        return Promise.reject(new AppError('unavailable', `${MAX_WAITING_SEARCHES} searches are already waiting; try again in a moment.`, 1));
      }
      return new Promise<SearchPage>((resolve, reject) => {
        waiting.push({ request: { id: ++nextId, addressId, search, limit, offset, budgetMs }, resolve, reject });
        pump();
      });
    },
    async close() {
      closed = true;
      for (const job of waiting.splice(0)) job.reject(new AppError('unavailable', 'The server is shutting down.'));
      const w = worker;
      worker = undefined;
      if (current) finish((job) => job.reject(new AppError('unavailable', 'The server is shutting down.')));
      if (!w) return;
      const exited = new Promise<void>((resolve) => w.once('exit', () => resolve()));
      if (ready) w.postMessage('close');
      else void w.terminate();
      const timeout = setTimeout(() => void w.terminate(), 5_000);
      await exited;
      clearTimeout(timeout);
    },
  };
}
