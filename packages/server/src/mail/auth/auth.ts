// Authentication verdicts of incoming mail (SPF, DKIM, DMARC, ARC; docs/decisions.md
// "Authentication verdicts"), computed off the event loop in a worker thread of their
// own (auth-worker.ts), beside the parse, before the mail's 250.
//
// A thread of its own rather than the parser's: a check mostly waits for DNS, so one
// thread runs many at once, where a parser thread runs one parse at a time under a
// CPU budget and would sit idle through every look-up. One thread, at the server's
// priority as the parser's is: a second one (for large messages, below that priority)
// cost 38 MB of memory, mostly mailauth's modules, for no measurable gain
// (docs/decisions.md "Authentication verdicts"). What is bounded, per mail:
// the wait for the thread (AUTH_BUDGET_MS; past it the checks are skipped), every
// look-up together (the same budget, counted from the start of the check; a look-up
// past it makes its result temperror), and the whole check (that budget plus the
// parse budget for the hashing; past it the thread is ended, and the mails it was
// checking get temperror). Whatever happens, check() answers a verdict: mail is never
// refused or lost because of these checks.
import { Piscina } from 'piscina';
import type { MailAuth } from '@temp-inbox/api';
import type { AuthClient } from './auth-check.js';
import { createVerdictReuse, reuseKey } from './auth-reuse.js';
import { unknownVerdict } from './auth-verdict.js';
import type { AuthBatch, AuthDnsSilence, AuthEarlyResults, AuthResults, AuthStartedMessage, AuthWorkerData } from './auth-worker.js';
import { createTaskStarts } from '../task-starts.js';
import { forWorker } from '../worker-input.js';

export type { AuthClient } from './auth-check.js';

/** Every DNS look-up of one mail together, in milliseconds (docs/decisions.md "Authentication verdicts"). */
export const AUTH_BUDGET_MS = 2000;
/** Checks sent to a thread as one task, at most (those asked for in one turn of the event loop). */
const BATCH_CHECKS = 16;
/** Tasks the thread runs at once, so at most 64 checks: each mostly waits for DNS. */
const CONCURRENT_BATCHES = 4;
const FROM_SOURCE = import.meta.url.endsWith('.ts');

export interface MailAuthenticatorOptions {
  /** DNS_SERVERS; undefined: the system's resolvers. */
  dnsServers?: string[] | undefined;
  /** This server's name (SMTP_HOSTNAME), for mailauth's comments. */
  mta: string;
  /** Look-ups together, and the longest wait for the thread (default AUTH_BUDGET_MS). */
  budgetMs?: number;
  /** What reading and hashing a message may take on top of the DNS budget (default 5 s, PARSE_TIMEOUT). */
  cpuMs?: number;
  /** Told when the name servers are found to answer nothing (true) and when they answer again (false): auth-dns.ts. */
  onDnsSilence?: (silent: boolean) => void;
}

interface Queued {
  id: number;
  raw: Buffer;
  client: AuthClient;
  /** Date.now() milliseconds by which its look-ups end. */
  deadline: number;
  /** Its key for reuse (auth-reuse.ts), if its verdict may be reused. */
  reuseKey: string | undefined;
  answer: (verdict: MailAuth) => void;
}

export interface MailAuthenticator {
  /** The verdict of one message; never rejects (temperror when the checks could not run or finish). */
  check(raw: Buffer, client: AuthClient): Promise<MailAuth>;
  close(): Promise<void>;
  /** Verdicts answered on the server's thread so far, without the checks' thread (auth-reuse.ts). */
  readonly reused: number;
}

export function createMailAuthenticator(opts: MailAuthenticatorOptions): MailAuthenticator {
  const budgetMs = opts.budgetMs ?? AUTH_BUDGET_MS;
  const cpuMs = opts.cpuMs ?? 5000;
  let closed = false;
  let nextId = 0;
  const starters = new Map<number, () => void>();
  /** When tasks start (task-starts.ts); a new thread loads mailauth first. */
  const starts = createTaskStarts(CONCURRENT_BATCHES);
  /** Checks whose batch is in a thread, by check id: answered by an early result or by the batch's end. */
  const answers = new Map<number, Pick<Queued, 'answer' | 'reuseKey'>>();

  function startPool(): Piscina<AuthBatch, AuthResults> {
    const p = new Piscina<AuthBatch, AuthResults>({
      filename: new URL(FROM_SOURCE ? './auth-worker.ts' : './auth-worker.js', import.meta.url).href,
      minThreads: 1,
      maxThreads: 1,
      execArgv: FROM_SOURCE ? ['--import', 'tsx'] : [],
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
      for (const result of m?.authResults ?? []) settle(result, p);
    });
    // As parse.ts: a pool whose worker died while starting is started afresh.
    p.on('error', () => {
      if (p.threads.length === 0) restart(p);
    });
    return p;
  }
  let pool = startPool();
  // Checks asked for in one turn of the event loop go to their thread together, as one task:
  // one message each way for the lot instead of one per mail, which under load cost the
  // server's thread more than the rest of taking the mail (docs/decisions.md "Authentication verdicts").
  let queued: Queued[] = [];
  // Verdicts the thread said would be the same for the same client and From fields.
  const reuse = createVerdictReuse();
  /** One check's answer from `thread`; kept for reuse when the thread said it may be, and is still the pool's. */
  function settle([id, verdict, ms]: AuthResults[number], thread: Piscina<AuthBatch, AuthResults>): void {
    const check = answers.get(id);
    if (!check) return;
    if (ms !== undefined && check.reuseKey !== undefined && thread === pool) reuse.set(check.reuseKey, verdict, ms);
    check.answer(verdict);
  }

  /** What the thread last said of its name servers (auth-dns.ts): passed on when it changes. */
  let dnsSilent = false;
  function dnsSilence(silent: boolean): void {
    if (silent === dnsSilent) return;
    dnsSilent = silent;
    opts.onDnsSilence?.(silent);
  }

  /** Ends the pool's thread (its checks still running answer temperror) and starts another. */
  function restart(p: Piscina<AuthBatch, AuthResults>): void {
    if (pool !== p || closed) return;
    starts.cold();
    // The new thread knows nothing of its name servers yet, and says so again if they are still silent.
    dnsSilence(false);
    // The new thread starts with no DNS answers: neither are verdicts made of them kept.
    reuse.clear();
    pool = startPool();
    void p.destroy();
  }

  async function run(): Promise<void> {
    const batch = queued.splice(0, BATCH_CHECKS);
    if (batch.length === 0) return;
    if (queued.length > 0) setImmediate(() => void run());
    const id = nextId++;
    const thread = pool;
    const temperror = () => {
      for (const q of batch) q.answer(unknownVerdict('temperror'));
    };
    // The budget counts from the first check's request: waiting for the thread spends it too (then
    // the checks answer temperror, and the thread skips them when it gets to them). Once started,
    // the look-ups end by their deadlines and the hashing takes at most cpuMs more, or the thread
    // is ended. Not piscina's abort signal: piscina runs a task that has one alone on its thread.
    const deadline = batch[0]!.deadline;
    let timer = setTimeout(temperror, Math.max(0, deadline - Date.now()));
    const start = () => {
      clearTimeout(timer);
      timer = setTimeout(() => restart(thread), Math.max(0, deadline - Date.now()) + cpuMs);
    };
    for (const q of batch) answers.set(q.id, q);
    let results: AuthResults = [];
    let settled: (() => void) | undefined;
    try {
      const inputs = await Promise.all(batch.map((q) => forWorker(q.raw)));
      // A task given while the thread has room starts at once; one that may wait is announced when it starts.
      const announce = starts.mayWait() || thread !== pool;
      if (announce)
        starters.set(id, () => {
          if (thread === pool) starts.running();
          start();
        });
      else start();
      const task: AuthBatch = { id, announce, checks: batch.map((q, i) => ({ id: q.id, raw: inputs[i]!.bytes, client: q.client, deadline: q.deadline, reuse: q.reuseKey !== undefined })) };
      settled = starts.given();
      results = await thread.run(task, { transferList: inputs.flatMap((i) => i.transferList) });
      if (thread === pool) starts.running();
    } catch {
      // The thread was ended for the budget, or died: every check not yet answered is temperror.
    } finally {
      settled?.();
      starters.delete(id);
      clearTimeout(timer);
      for (const result of results) settle(result, thread);
      for (const q of batch) answers.delete(q.id);
      temperror();
    }
  }

  return {
    check(raw, client) {
      if (closed) return Promise.resolve(unknownVerdict('temperror'));
      const key = reuseKey(raw, client);
      const kept = key === undefined ? undefined : reuse.get(key);
      if (kept) return Promise.resolve(kept);
      return new Promise<MailAuth>((resolve) => {
        // A promise answers once: a later answer (the batch's end, temperror) changes nothing.
        queued.push({ id: nextId++, raw, client, deadline: Date.now() + budgetMs, reuseKey: key, answer: resolve });
        if (queued.length === 1) setImmediate(() => void run());
      });
    },
    close() {
      closed = true;
      for (const q of queued) q.answer(unknownVerdict('temperror'));
      queued = [];
      return pool.destroy();
    },
    get reused() {
      return reuse.reused;
    },
  };
}
