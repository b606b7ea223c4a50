// Findings and sections: a section's verdict is its worst finding's.
import type { ReportFinding, ReportVerdict } from '@temp-inbox/api';

const RANK: Record<ReportVerdict, number> = { pass: 0, unavailable: 1, warn: 2, fail: 3 };

/** The worst verdict of the findings; `pass` for none. `unavailable` findings alone do not make the section unavailable. */
export function worst(findings: readonly { verdict: ReportVerdict }[]): ReportVerdict {
  let out: ReportVerdict = 'pass';
  for (const f of findings) if (RANK[f.verdict] > RANK[out]) out = f.verdict;
  return out === 'unavailable' ? (findings.every((f) => f.verdict === 'unavailable') ? 'unavailable' : 'pass') : out;
}

/** Evidence is quoted from the message: bounded so that one mail cannot make a report large. */
export function evidence(text: string): string {
  return text.length > 500 ? `${text.slice(0, 497)}...` : text;
}

export function finding(rule: string, verdict: ReportVerdict, message: string, ev?: string): ReportFinding {
  return ev === undefined ? { rule, verdict, message } : { rule, verdict, message, evidence: evidence(ev) };
}

/** The value of each header of that name, in order (names compared without case). */
export function headerValues(headers: readonly { name: string; value: string }[], name: string): string[] {
  const lower = name.toLowerCase();
  return headers.filter((h) => h.name.toLowerCase() === lower).map((h) => h.value);
}
