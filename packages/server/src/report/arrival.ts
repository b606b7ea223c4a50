// Reports built on arrival (docs/decisions.md "Deliverability report"): with SPAM_SCANNER,
// each stored message is queued here after its commit, and its report is built later, off
// the SMTP exchange (the 250 never waits for a scan), a few at a time, parsed as one client
// of the parser's, its message read in the report thread. Its summary is kept with the mails (for their parsed view and their
// webhook deliveries, which wait for it up to WEBHOOK_WAIT after the arrival). A message
// that finds the queue full, or whose report fails, gets no summary on arrival, and its
// waiting deliveries are let go at once.
import type { Logger } from 'pino';
import type { SpamSection } from '@temp-inbox/api';
import type { ReportService } from './service.js';
import { createReportThread } from './report-thread.js';

export interface ArrivedMessage {
  /** Each recipient's stored mail: one report is built for them all. */
  mails: { id: number; addressId: number; uuid: string }[];
  envelope: { ip?: string; helo?: string; from?: string; rcpt?: string };
  /** Some webhook delivery of these mails was queued (and waits for the summary). */
  deliveries: boolean;
  /** Scanned already, before the 250 (SPAM_REFUSE_SCORE): the report takes this section instead of scanning again. */
  spam?: SpamSection;
}

export interface ArrivalOptions {
  report: ReportService;
  /** Lets waiting deliveries go without a summary (store.ts keepReportSummary with null). */
  release(mails: { id: number; addressId: number }[]): Promise<void>;
  logger: Logger | undefined;
  /** Reports built at once (each a parse, a read in the one report thread and a scan); at most PARSE_VIEWS_PER_CLIENT. */
  concurrency: number;
  /** Messages waiting for a report; past it a message gets none on arrival. */
  maxWaiting: number;
}

export interface ReportsOnArrival {
  /** Queues a stored message's report; returns at once. */
  arrived(message: ArrivedMessage): void;
  /** Messages waiting or being reported now. */
  pending(): number;
  /** Reports finished so far (with a summary kept), and messages that got none on arrival. */
  counts(): { built: number; skipped: number };
  /** Waits for the reports under way (the waiting ones are dropped, their deliveries let go), then ends the thread. */
  close(): Promise<void>;
}

/**
 * The name the reports on arrival parse under: one client of the parser's, whose views
 * take turns with the API's clients' and are bounded as theirs are (PARSE_VIEWS_PER_CLIENT,
 * which `concurrency` must not pass: a report over it would be refused, not queued).
 */
const PARSER_CLIENT = 'reports on arrival';

export function createReportsOnArrival(opts: ArrivalOptions): ReportsOnArrival {
  const thread = createReportThread();
  const waiting: ArrivedMessage[] = [];
  const running = new Set<Promise<void>>();
  let built = 0;
  let skipped = 0;
  let closed = false;

  const letGo = async (m: ArrivedMessage): Promise<void> => {
    skipped++;
    if (m.deliveries) await opts.release(m.mails).catch((err: unknown) => opts.logger?.warn({ err }, "a mail's webhook deliveries could not be let go without its report"));
  };

  async function build(m: ArrivedMessage): Promise<void> {
    try {
      await opts.report.onArrival(m.mails, PARSER_CLIENT, { envelope: m.envelope, read: thread.read, ...(m.spam ? { spam: m.spam } : {}) });
      built++;
    } catch (err) {
      // A mail deleted meanwhile, parsers busy, a store that failed: no summary on arrival (a GET of the report still builds one).
      opts.logger?.debug({ err }, "a mail's report on arrival could not be built");
      await letGo(m);
    }
  }

  function pump(): void {
    while (!closed && running.size < opts.concurrency && waiting.length > 0) {
      const job = build(waiting.shift()!).finally(() => {
        running.delete(job);
        pump();
      });
      running.add(job);
    }
  }

  return {
    arrived(message) {
      if (closed || waiting.length >= opts.maxWaiting) return void letGo(message);
      waiting.push(message);
      // Started on a later turn: nothing of a report runs before the caller's 250 is written.
      if (waiting.length === 1) setImmediate(pump);
    },
    pending: () => waiting.length + running.size,
    counts: () => ({ built, skipped }),
    async close() {
      closed = true;
      await Promise.all([...waiting.splice(0).map(letGo), ...running]);
      await thread.close();
    },
  };
}
