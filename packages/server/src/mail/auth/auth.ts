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
import type { MailAuth } from '@temp-inbox/api';
import type { AuthClient } from './auth-check.js';
import { createAuthPool, type AuthThread } from './auth-pool.js';
import { createVerdictReuse, reuseKey } from './auth-reuse.js';
import { unknownVerdict } from './auth-verdict.js';
import type { AuthBatch, AuthResults } from './auth-worker.js';
import { forWorker } from '../worker-input.js';

export type { AuthClient } from './auth-check.js';

/** Every DNS look-up of one mail together, in milliseconds (docs/decisions.md "Authentication verdicts"). */
export const AUTH_BUDGET_MS = 2000;
/** Checks sent to a thread as one task, at most (those asked for in one turn of the event loop). */
const BATCH_CHECKS = 16;

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
  /** Starts the checks' thread now if no check has (it starts with the first one otherwise). */
  warm(): void;
  close(): Promise<void>;
  /** Verdicts answered on the server's thread so far, without the checks' thread (auth-reuse.ts). */
  readonly reused: number;
}

export function createMailAuthenticator(opts: MailAuthenticatorOptions): MailAuthenticator {
  const budgetMs = opts.budgetMs ?? AUTH_BUDGET_MS;
  const cpuMs = opts.cpuMs ?? 5000;
  let closed = false;
  let nextId = 0;
  /** Checks whose batch is in a thread, by check id: answered by an early result or by the batch's end. */
  const answers = new Map<number, Pick<Queued, 'answer' | 'reuseKey'>>();
  // Verdicts the thread said would be the same for the same client and From fields.
  const reuse = createVerdictReuse();
  const threads = createAuthPool({ dnsServers: opts.dnsServers, mta: opts.mta, onDnsSilence: opts.onDnsSilence, settle, onRestart: () => reuse.clear() });
  const { starts, starters, restart } = threads;
  // Checks asked for in one turn of the event loop go to their thread together, as one task:
  // one message each way for the lot instead of one per mail, which under load cost the
  // server's thread more than the rest of taking the mail (docs/decisions.md "Authentication verdicts").
  let queued: Queued[] = [];
  /** One check's answer from `thread`; kept for reuse when the thread said it may be, and is still the pool's. */
  function settle([id, verdict, ms]: AuthResults[number], thread: AuthThread): void {
    const check = answers.get(id);
    if (!check) return;
    if (ms !== undefined && check.reuseKey !== undefined && thread === threads.current()) reuse.set(check.reuseKey, verdict, ms);
    check.answer(verdict);
  }

  async function run(): Promise<void> {
    const batch = queued.splice(0, BATCH_CHECKS);
    if (batch.length === 0) return;
    if (queued.length > 0) setImmediate(() => void run());
    const id = nextId++;
    const thread = threads.current();
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
      const announce = starts.mayWait() || thread !== threads.current();
      if (announce)
        starters.set(id, () => {
          if (thread === threads.current()) starts.running();
          start();
        });
      else start();
      const task: AuthBatch = { id, announce, checks: batch.map((q, i) => ({ id: q.id, raw: inputs[i]!.bytes, client: q.client, deadline: q.deadline, reuse: q.reuseKey !== undefined })) };
      settled = starts.given();
      results = await thread.run(task, { transferList: inputs.flatMap((i) => i.transferList) });
      if (thread === threads.current()) starts.running();
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
    warm: () => threads.warm(),
    close() {
      closed = true;
      for (const q of queued) q.answer(unknownVerdict('temperror'));
      queued = [];
      return threads.close();
    },
    get reused() {
      return reuse.reused;
    },
  };
}
