// `temp-inbox report <uuid>`: the deliverability report as text, one block per section,
// and whether any section failed (the command then exits 1, for CI).
import type { MailReport } from './api-types.js';

const MARK: Record<string, string> = { pass: 'pass', warn: 'WARN', fail: 'FAIL', unavailable: 'n/a ' };

type Section = MailReport['spam'] | MailReport['html'] | MailReport['links'] | MailReport['content'] | MailReport['sender'];

function block(title: string, s: Section, summary: string | undefined): string {
  const lines = [`${MARK[s.verdict]}  ${title}${summary ? `: ${summary}` : ''}${s.reason ? ` (${s.reason})` : ''}`];
  for (const f of s.findings) if (f.verdict !== 'pass') lines.push(`      ${MARK[f.verdict]} ${f.rule}: ${f.message}${f.evidence ? `\n           ${f.evidence}` : ''}`);
  return lines.join('\n');
}

export function formatReport(r: MailReport): string {
  const spam = r.spam.score === null ? undefined : `${r.spam.score} of ${r.spam.threshold} (${r.spam.scanner}); ${r.spam.rules.length} rules fired`;
  const html = r.html.support === null ? undefined : `${r.html.support}% supported across ${r.html.clients} clients`;
  const broken = r.links.links.filter((l) => l.result === 'broken' || l.result === 'error').length;
  const links = `${r.links.links.length} links${r.links.checked ? `, ${broken} broken` : ' (not fetched; --links fetches them)'}`;
  const out = [
    `Deliverability: ${r.verdict.toUpperCase()}`,
    block('Spam score', r.spam, spam),
    block('HTML support', r.html, html),
    ...r.html.features.slice(0, 5).map((f) => `      ${f.title}: not in ${f.unsupported.length}, partly in ${f.partial.length} clients`),
    block('Links', r.links, links),
    ...(r.links.checked ? r.links.links.filter((l) => l.result !== 'ok').map((l) => `      ${l.result} ${l.status ?? ''} ${l.url}`.replace(/ {2,}/g, ' ')) : []),
    block('Content', r.content, undefined),
    block('Sender rules (Gmail, Yahoo)', r.sender, undefined),
  ];
  return `${out.join('\n')}\n`;
}

/** A section failed: the command's exit code is then 1. */
export const reportFailed = (r: MailReport): boolean => [r.spam, r.html, r.links, r.content, r.sender].some((s) => s.verdict === 'fail');
