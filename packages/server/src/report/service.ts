// The deliverability report of one mail (GET /api/mail/{uuid}/report; docs/api.md
// "Deliverability report"). Built when asked, and with SPAM_SCANNER also after a mail's
// arrival (arrival.ts), never before its 250. The parsed view comes from the parser's
// threads (with their per-client turns and bounds); the sections that read the message
// are built in a worker (a one-shot worker per request, report-worker.ts; the report
// thread for arrivals, report-thread.ts) within REPORT_TIMEOUT; the spam scan and the
// link check are network exchanges with deadlines. A section that cannot be had is
// `unavailable`, with why. The first report built for a mail leaves its summary with it.
import type { HtmlSection, LinksSection, MailReport, PlainSection, ReportSummary, ReportVerdict, SpamSection } from '@temp-inbox/api';
import { AppError } from '../domain/errors.js';
import type { ParsedMailView } from '../mail/parse/parsed-views.js';
import { moduleWorkerUrl } from '../workers/module-worker.js';
import { runOneShot } from '../workers/one-shot.js';
import { checkLinks, type LinkCheckOptions } from './link-check.js';
import { headerValues } from './findings.js';
import { scanMessage, type ScanOptions, type ScannerTarget } from './spam-scanner.js';
import type { ReportContent, StaticSections } from './static-report.js';
import { reportSummary } from './summary.js';

export interface ReportMailSource {
  readParsed(addressId: number, uuid: string, client: string): Promise<ParsedMailView>;
  getMail(addressId: number, uuid: string): Promise<{ raw: Buffer }>;
}

export interface ReportServiceOptions {
  mail: ReportMailSource;
  scanner: ScannerTarget | null;
  scan: { timeoutMs: number; maxBytes: number };
  links: LinkCheckOptions;
  /** The worker that reads the message: past this, its sections are `unavailable`. */
  workerTimeoutMs: number;
  /** Keeps a report's summary with its mails (the first kept stays; store.ts keepReportSummary). */
  keepSummary?: (mails: { id: number; addressId: number }[], summary: ReportSummary) => Promise<void>;
}

/** How a report built on arrival reads its message: in the report thread, with the mail's envelope. */
export interface ArrivalRead {
  envelope: NonNullable<ScanOptions['envelope']>;
  /** The message's scan made before its 250 (SPAM_REFUSE_SCORE): taken as it is, the scanner is not asked again. */
  spam?: SpamSection;
  /** The sections that read the message; null when they could not be had in time. */
  read(view: ParsedMailView, raw: Buffer, timeoutMs: number): Promise<StaticSections | null>;
}

export interface ReportService {
  /** The scanner SPAM_SCANNER names (Mailpit's web UI shows its SpamAssassin check when there is one). */
  readonly scanner: ScannerTarget['kind'] | null;
  /** `checkLinks`: fetch each link (?links=check); otherwise they are only listed. */
  report(addressId: number, uuid: string, client: string, opts: { checkLinks: boolean }): Promise<MailReport>;
  /** The report of a mail that just arrived (without the link check), built as `how` says; its summary is kept with the mails. */
  onArrival(mails: readonly { id: number; addressId: number; uuid: string }[], client: string, how: ArrivalRead): Promise<ReportSummary>;
}

const RANK: Record<ReportVerdict, number> = { pass: 0, unavailable: 0, warn: 1, fail: 2 };

function overall(sections: { verdict: ReportVerdict }[]): MailReport['verdict'] {
  const worstRank = Math.max(...sections.map((s) => RANK[s.verdict]));
  return worstRank === 2 ? 'fail' : worstRank === 1 ? 'warn' : 'pass';
}

function linksSection(fixed: StaticSections, list: StaticSections['links'], checked: boolean): LinksSection {
  const truncated = fixed.linksTruncated;
  if (fixed.unread !== undefined) return { verdict: 'unavailable', reason: fixed.unread, findings: [], checked: false, links: [], links_truncated: false };
  if (!checked) return { verdict: 'pass', findings: [], checked: false, links: list, links_truncated: truncated };
  const broken = list.filter((l) => l.result === 'broken' || l.result === 'error');
  const refused = list.filter((l) => l.result === 'refused');
  const findings = [
    broken.length === 0
      ? { rule: 'links-broken', verdict: 'pass' as const, message: 'No link checked is broken.' }
      : { rule: 'links-broken', verdict: 'fail' as const, message: `${broken.length} link(s) answered an error or nothing.`, evidence: broken.slice(0, 3).map((l) => l.url).join(', ').slice(0, 500) },
  ];
  if (refused.length > 0) findings.push({ rule: 'links-refused', verdict: 'warn' as const, message: `${refused.length} link(s) point at addresses the check does not fetch (private, loopback or malformed): recipients cannot open them either.`, evidence: refused.slice(0, 3).map((l) => l.url).join(', ').slice(0, 500) } as never);
  const verdict = broken.length > 0 ? 'fail' : refused.length > 0 ? 'warn' : 'pass';
  return { verdict, findings, checked: true, links: list, links_truncated: truncated };
}

function unavailableStatic(reason: string): StaticSections {
  const plain: PlainSection = { verdict: 'unavailable', reason, findings: [] };
  const html: HtmlSection = { verdict: 'unavailable', reason, findings: [], clients: 0, supported: null, support: null, features: [], data_date: '', tests: 0, elements: 0 };
  return { html, content: plain, sender: { ...plain }, links: [], linksTruncated: false, unread: reason };
}

export function createReportService(opts: ReportServiceOptions): ReportService {
  const workerUrl = moduleWorkerUrl(import.meta.url, 'report-worker');

  const unreadWithin = () => unavailableStatic(`The message could not be read within ${opts.workerTimeoutMs / 1000} s, or every report worker was busy.`);

  async function staticPart(view: ParsedMailView, raw: Buffer): Promise<StaticSections> {
    const head = Buffer.alloc(4);
    head.writeUInt32BE(view.content.length);
    try {
      const answer = await runOneShot(workerUrl, null, Buffer.concat([head, view.content, raw]), opts.workerTimeoutMs);
      return JSON.parse(answer.toString('utf8')) as StaticSections;
    } catch (err) {
      // Out of time: hostile markup that the bounds did not catch. Busy: the other sections still come.
      if (err instanceof AppError && err.code === 'unavailable') return unreadWithin();
      throw err;
    }
  }

  /** The report of the view and message, its message read by `fixed`, scanned with `scan` (or its scan made already); the links fetched with `check`. */
  async function build(view: ParsedMailView, raw: Buffer, fixedPart: Promise<StaticSections>, scan: ScanOptions | SpamSection, check: boolean): Promise<MailReport> {
    const [fixed, spam] = await Promise.all([fixedPart, 'verdict' in scan ? scan : scanMessage(opts.scanner, raw, scan)]);
    let links = fixed.links;
    if (check && links.length > 0) {
      const content = JSON.parse(view.content.toString('utf8')) as Pick<ReportContent, 'headers'>;
      const acting = new Set(headerValues(content.headers, 'List-Unsubscribe').flatMap((v) => [...v.matchAll(/<(https?:[^>]+)>/gi)].map((m) => m[1]!)));
      links = await checkLinks(links, acting, opts.links);
    }
    const linkSection = linksSection(fixed, links, check);
    const sections = [spam, fixed.html, linkSection, fixed.content, fixed.sender];
    const report: MailReport = { verdict: overall(sections), spam, html: fixed.html, links: linkSection, content: fixed.content, sender: fixed.sender };
    return report;
  }

  /** The summary of a report, as if its links were only listed (a summary never says more than a report without ?links=check). */
  function summaryOf(report: MailReport): ReportSummary {
    if (!report.links.checked) return reportSummary(report);
    const listed: LinksSection = { ...report.links, verdict: 'pass', findings: [], checked: false };
    const sections = [report.spam, report.html, listed, report.content, report.sender];
    return reportSummary({ ...report, links: listed, verdict: overall(sections) });
  }

  return {
    scanner: opts.scanner?.kind ?? null,
    async report(addressId, uuid, client, { checkLinks: check }) {
      const view = await opts.mail.readParsed(addressId, uuid, client);
      const { raw } = await opts.mail.getMail(addressId, uuid);
      const report = await build(view, raw, staticPart(view, raw), opts.scan, check);
      // The first report of a mail that arrived without one (no scanner, or its report on arrival not done yet) leaves its summary.
      if (view.reportSummary === undefined && opts.keepSummary) await opts.keepSummary([{ id: view.mail.id, addressId }], summaryOf(report));
      return report;
    },
    async onArrival(mails, client, how) {
      const first = mails[0]!;
      const view = await opts.mail.readParsed(first.addressId, first.uuid, client);
      const { raw } = await opts.mail.getMail(first.addressId, first.uuid);
      const fixed = how.read(view, raw, opts.workerTimeoutMs).then((sections) => sections ?? unreadWithin());
      const summary = summaryOf(await build(view, raw, fixed, how.spam ?? { ...opts.scan, envelope: how.envelope }, false));
      await opts.keepSummary?.(mails.map((m) => ({ id: m.id, addressId: m.addressId })), summary);
      return summary;
    },
  };
}
