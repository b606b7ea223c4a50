// The deliverability report (report/): the service the routes and the reports on arrival
// share, and, with SPAM_SCANNER, the reports built after each mail's arrival.
import type { Logger } from 'pino';
import type { Config } from '../config/index.js';
import type { MailService } from '../mail/service.js';
import { createReportsOnArrival, type ReportsOnArrival } from '../report/arrival.js';
import { LINK_CHECK_DEFAULTS } from '../report/link-check.js';
import { createReportService, type ReportService } from '../report/service.js';
import type { VersionedStore } from '../storage/caching-store.js';
import type { Lookup } from '../webhooks/guard.js';

/** The report's worker reads one message: past this its sections are unavailable (hostile markup the bounds missed). */
const REPORT_WORKER_TIMEOUT_MS = 10_000;
/** How long past the scan's own deadline a webhook delivery waits for its mail's report summary (the parse and the queue before it). */
export const WEBHOOK_WAIT_BEYOND_SCAN_MS = 5000;
/** Messages waiting for a report on arrival (past it a message gets none on arrival). */
const ARRIVAL_WAITING = 10_000;

export interface ReportPartsDeps {
  store: VersionedStore;
  /** Late-bound: the mail service hands its arrivals to the reports built here. */
  mail: () => MailService;
  lookup: Lookup;
  /** Wakes this node's webhook dispatcher (a kept summary made deliveries due). */
  wakeDeliveries: () => void;
  logger: Logger;
  now: () => number;
}

export interface ReportParts {
  report: ReportService;
  /** With SPAM_SCANNER only. */
  arrivals: (ReportsOnArrival & { webhookWaitMs: number }) | undefined;
}

export function buildReport(config: Pick<Config, 'report' | 'parse'>, deps: ReportPartsDeps): ReportParts {
  const { store, now } = deps;
  const r = config.report;
  const keep = async (mails: { id: number; addressId: number }[], summary: string | null) => {
    if ((await store.keepReportSummary(mails, summary, now())) > 0) deps.wakeDeliveries();
  };
  const report = createReportService({
    mail: { readParsed: (...a) => deps.mail().readParsed(...a), getMail: (...a) => deps.mail().getMail(...a) },
    scanner: r.scanner ?? null,
    scan: { timeoutMs: r.scanTimeoutMs, maxBytes: r.scanMaxBytes },
    links: { ...LINK_CHECK_DEFAULTS, allowPrivate: r.linksAllowPrivate, lookup: deps.lookup },
    workerTimeoutMs: REPORT_WORKER_TIMEOUT_MS,
    keepSummary: (mails, summary) => keep(mails, JSON.stringify(summary)),
  });
  if (!r.scanner) return { report, arrivals: undefined };
  const arrivals = createReportsOnArrival({
    report,
    release: (mails) => keep(mails, null),
    logger: deps.logger,
    // As many at once as one client of the parser may have views (each mostly waits on the scanner).
    concurrency: config.parse.viewsPerClient,
    maxWaiting: ARRIVAL_WAITING,
  });
  return { report, arrivals: Object.assign(arrivals, { webhookWaitMs: r.scanTimeoutMs + WEBHOOK_WAIT_BEYOND_SCAN_MS }) };
}
