// A report's summary (docs/api.md "Deliverability report"): each section's verdict and the
// spam score, kept with the mail and carried by its webhook deliveries and parsed view.
import type { MailReport, ReportSummary } from '@temp-inbox/api';

export function reportSummary(report: MailReport): ReportSummary {
  return {
    verdict: report.verdict,
    spam: report.spam.verdict,
    html: report.html.verdict,
    links: report.links.verdict,
    content: report.content.verdict,
    sender: report.sender.verdict,
    spam_score: report.spam.score,
    spam_threshold: report.spam.threshold,
  };
}
