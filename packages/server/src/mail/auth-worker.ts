// Runs in the authentication worker thread (auth.ts): the checks of one message
// (auth-check.ts), with this thread's DNS resolver and cache (auth-dns.ts). Several
// messages are checked at once here: most of a check is waiting for DNS.
import { setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import type { MailAuth } from '@temp-inbox/api';
import { checkMessage, type AuthClient } from './auth-check.js';
import { createAuthDns } from './auth-dns.js';

/** Nice value of the checks' thread: below the server's own (0), above idle. */
const AUTH_THREAD_NICE = 10;

export interface AuthWorkerData {
  /** DNS_SERVERS, or undefined for the system's. */
  dnsServers: string[] | undefined;
  mta: string;
}

export interface AuthTask {
  id: number;
  raw: Uint8Array;
  client: AuthClient;
  /** Every look-up of this message ends by then (Date.now() milliseconds: the thread's own clock of performance.now() starts elsewhere). */
  deadline: number;
}

/** Posted when a task starts running, so that the server can tell a queued task from a running one. */
export interface AuthStartedMessage {
  authTaskStarted: number;
}

// Reading and hashing mail here must never take the CPU from the server's own thread
// (SMTP, HTTP, storage). On Linux the nice value is per thread and this lowers only this
// one's; elsewhere it would lower the whole process's, so it is left alone there.
if (process.platform === 'linux') {
  try {
    setPriority(0, AUTH_THREAD_NICE);
  } catch {
    // Not allowed: the checks run at the server's priority.
  }
}

const data = workerData as AuthWorkerData;
const dns = createAuthDns({ servers: data.dnsServers });

export default async function authTask(task: AuthTask): Promise<MailAuth> {
  parentPort?.postMessage({ authTaskStarted: task.id } satisfies AuthStartedMessage);
  return checkMessage(task.raw, task.client, { dns, deadline: performance.now() + (task.deadline - Date.now()), mta: data.mta });
}
