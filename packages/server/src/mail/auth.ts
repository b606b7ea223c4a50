// Authentication verdicts of incoming mail (SPF, DKIM, DMARC, ARC; docs/decisions.md
// "Authentication verdicts"), computed off the event loop in a worker thread of their
// own (auth-worker.ts), beside the parse, before the mail's 250.
//
// A pool of its own rather than the parser's: a check mostly waits for DNS, so one
// thread runs many at once, where a parser thread runs one parse at a time under a
// CPU budget and would sit idle through every look-up. What is bounded, per mail:
// the wait for the thread (AUTH_BUDGET_MS; past it the checks are skipped), every
// look-up together (the same budget, counted from the start of the check; a look-up
// past it makes its result temperror), and the whole check (that budget plus the
// parse budget for the hashing; past it the thread is ended, and the mails it was
// checking get temperror). Whatever happens, check() answers a verdict: mail is never
// refused or lost because of these checks.
import { Piscina } from 'piscina';
import type { MailAuth } from '@temp-inbox/api';
import type { AuthClient } from './auth-check.js';
import { unknownVerdict } from './auth-verdict.js';
import type { AuthStartedMessage, AuthTask, AuthWorkerData } from './auth-worker.js';
import { forWorker } from './worker-input.js';

export type { AuthClient } from './auth-check.js';

/** Every DNS look-up of one mail together, in milliseconds (docs/decisions.md "Authentication verdicts"). */
export const AUTH_BUDGET_MS = 2000;
/** Checks one thread runs at once: each mostly waits for DNS. */
const CONCURRENT_CHECKS = 32;
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
}

export interface MailAuthenticator {
  /** The verdict of one message; never rejects (temperror when the checks could not run or finish). */
  check(raw: Buffer, client: AuthClient): Promise<MailAuth>;
  close(): Promise<void>;
}

export function createMailAuthenticator(opts: MailAuthenticatorOptions): MailAuthenticator {
  const budgetMs = opts.budgetMs ?? AUTH_BUDGET_MS;
  const cpuMs = opts.cpuMs ?? 5000;
  let closed = false;
  let nextId = 0;
  const starters = new Map<number, () => void>();

  function startPool(): Piscina<AuthTask, MailAuth> {
    const p = new Piscina<AuthTask, MailAuth>({
      filename: new URL(FROM_SOURCE ? './auth-worker.ts' : './auth-worker.js', import.meta.url).href,
      minThreads: 1,
      maxThreads: 1,
      execArgv: FROM_SOURCE ? ['--import', 'tsx'] : [],
      concurrentTasksPerWorker: CONCURRENT_CHECKS,
      // Piscina's default ('sync') blocks the thread on Atomics.wait between tasks, and with
      // it the DNS answers and timers of the checks still running there: messages instead.
      atomics: 'disabled',
      workerData: { dnsServers: opts.dnsServers, mta: opts.mta } satisfies AuthWorkerData,
      // A 10 MB message in each of the checks at once, and the DNS cache.
      resourceLimits: { maxOldGenerationSizeMb: 512 },
    });
    p.on('message', (m: Partial<AuthStartedMessage> | null) => {
      if (typeof m?.authTaskStarted === 'number') starters.get(m.authTaskStarted)?.();
    });
    // As parse.ts: a pool whose worker died while starting is started afresh.
    p.on('error', () => {
      if (p === pool && !closed && p.threads.length === 0) {
        pool = startPool();
        void p.destroy();
      }
    });
    return p;
  }
  let pool = startPool();

  return {
    async check(raw, client) {
      if (closed) return unknownVerdict('temperror');
      const id = nextId++;
      const abort = new AbortController();
      // The budget counts from here: waiting for the thread spends it too. Once started,
      // the look-ups end by the deadline and the hashing takes at most cpuMs more, or the thread is ended.
      const deadline = Date.now() + budgetMs;
      let timer = setTimeout(() => abort.abort(), budgetMs);
      starters.set(id, () => {
        clearTimeout(timer);
        timer = setTimeout(() => abort.abort(), Math.max(0, deadline - Date.now()) + cpuMs);
      });
      try {
        const { bytes, transferList } = await forWorker(raw);
        const task: AuthTask = { id, raw: bytes, client, deadline };
        return await pool.run(task, { signal: abort.signal, transferList });
      } catch {
        return unknownVerdict('temperror');
      } finally {
        starters.delete(id);
        clearTimeout(timer);
      }
    },
    close() {
      closed = true;
      return pool.destroy();
    },
  };
}
