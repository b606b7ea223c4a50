// The thread the reports built on arrival read their messages in (arrival.ts): one
// long-lived worker (report-thread-worker.ts) taking one message at a time, so that a
// report per arriving mail does not start a thread per mail (the GET route's one-shot
// workers, service.ts). A job past its time ends the worker (hostile markup the bounds of
// html-compat.ts missed): that job's sections are unavailable and the next starts a new one.
import type { Worker } from 'node:worker_threads';
import { moduleWorkerUrl, startModuleWorker } from '../workers/module-worker.js';
import type { ParsedMailView } from '../mail/parse/parsed-views.js';
import type { StaticSections } from './static-report.js';

export interface ReportThread {
  /** The sections that read the message; null past `timeoutMs` (or when the thread failed). */
  read(view: ParsedMailView, raw: Buffer, timeoutMs: number): Promise<StaticSections | null>;
  close(): Promise<void>;
}

export function createReportThread(): ReportThread {
  const url = moduleWorkerUrl(import.meta.url, 'report-thread-worker');
  let worker: Worker | undefined;
  /** Jobs run one after another: each waits for the one before. */
  let queue: Promise<unknown> = Promise.resolve();
  let closed = false;

  const stop = () => {
    const w = worker;
    worker = undefined;
    return w ? w.terminate().then(() => undefined) : Promise.resolve();
  };

  function run(input: Uint8Array, timeoutMs: number): Promise<StaticSections | null> {
    if (closed) return Promise.resolve(null);
    const w = (worker ??= startModuleWorker(url));
    // An idle worker does not hold the process open.
    w.ref();
    return new Promise<StaticSections | null>((resolve) => {
      const done = (answer: StaticSections | null) => {
        clearTimeout(timer);
        w.off('message', onMessage);
        w.off('error', onError);
        w.unref();
        resolve(answer);
      };
      const onMessage = (bytes: Uint8Array) => done(JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8')) as StaticSections);
      const onError = () => {
        if (worker === w) worker = undefined;
        done(null);
      };
      const timer = setTimeout(() => {
        if (worker === w) void stop();
        done(null);
      }, timeoutMs);
      w.on('message', onMessage);
      w.on('error', onError);
      w.postMessage(input, [input.buffer as ArrayBuffer]);
    });
  }

  return {
    read(view, raw, timeoutMs) {
      // The same input as the one-shot worker's: a 4-byte length, the view's JSON, the raw message.
      const input = new Uint8Array(4 + view.content.length + raw.length);
      new DataView(input.buffer).setUint32(0, view.content.length);
      input.set(view.content, 4);
      input.set(raw, 4 + view.content.length);
      const job = queue.then(() => run(input, timeoutMs));
      queue = job.catch(() => undefined);
      return job;
    },
    async close() {
      closed = true;
      await queue;
      await stop();
    },
  };
}
