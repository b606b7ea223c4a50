// Runs in the authentication worker thread (auth.ts): the checks of the messages of one
// batch (auth-check.ts), with this thread's DNS resolver and cache (auth-dns.ts). Several
// messages are checked at once here: most of a check is waiting for DNS.
import { parentPort, workerData } from 'node:worker_threads';
import type { MailAuth } from '@temp-inbox/api';
import { checkMessage, type AuthClient } from './auth-check.js';
import { createAuthDns } from './auth-dns.js';
import { unknownVerdict } from './auth-verdict.js';

export interface AuthWorkerData {
  /** DNS_SERVERS, or undefined for the system's. */
  dnsServers: string[] | undefined;
  mta: string;
}

export interface AuthCheck {
  id: number;
  raw: Uint8Array;
  client: AuthClient;
  /** Every look-up of this message ends by then (Date.now() milliseconds: the thread's own clock of performance.now() starts elsewhere). */
  deadline: number;
  /** The server keeps this message's verdict for reuse if it can be (auth-reuse.ts): say for how long. */
  reuse: boolean;
}

/** Checks asked for together (auth.ts): run at once, each answered as soon as it is done. */
export interface AuthBatch {
  id: number;
  /** The task may have waited for the thread: the server is told when it starts (auth.ts). */
  announce: boolean;
  checks: AuthCheck[];
}

/** [check id, verdict, for how many ms it may be reused (auth-reuse.ts), if at all] of each check the task's answer carries. */
export type AuthResults = [number, MailAuth, number?][];

/** Posted when a task starts running, so that the server can tell a queued task from a running one. */
export interface AuthStartedMessage {
  authTaskStarted: number;
}

/** Posted for checks done while others of their batch still wait (for DNS): their mails need not wait for the rest. */
export interface AuthEarlyResults {
  authResults: AuthResults;
}

/** Posted when the name servers are found silent (true) and when they answer again (false): auth-dns.ts. */
export interface AuthDnsSilence {
  authDnsSilent: boolean;
}

const data = workerData as AuthWorkerData;

const dns = createAuthDns({
  servers: data.dnsServers,
  onSilence: (silent) => parentPort?.postMessage({ authDnsSilent: silent } satisfies AuthDnsSilence),
});

export default async function authTask(batch: AuthBatch): Promise<AuthResults> {
  if (batch.announce) parentPort?.postMessage({ authTaskStarted: batch.id } satisfies AuthStartedMessage);
  let left = batch.checks.length;
  // Results done in one turn go together; the last of the batch goes with the task's answer.
  let early: AuthResults = [];
  const answer: AuthResults = [];
  await Promise.all(
    batch.checks.map(async (c) => {
      // A check that waited for the thread past its budget has been answered temperror already.
      let reuseMs: number | undefined;
      const reusableFor = c.reuse ? (ms: number) => (reuseMs = ms) : undefined;
      const verdict =
        Date.now() >= c.deadline
          ? unknownVerdict('temperror')
          : await checkMessage(c.raw, c.client, { dns, deadline: performance.now() + (c.deadline - Date.now()), mta: data.mta, reusableFor }).catch(() => unknownVerdict('temperror'));
      const result: AuthResults[number] = reuseMs === undefined ? [c.id, verdict] : [c.id, verdict, reuseMs];
      answer.push(result);
      if (--left === 0) return;
      early.push(result);
      if (early.length === 1)
        setImmediate(() => {
          if (left > 0) parentPort?.postMessage({ authResults: early } satisfies AuthEarlyResults);
          early = [];
        });
    }),
  );
  return answer;
}
