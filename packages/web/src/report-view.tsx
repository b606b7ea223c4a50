// The Report tab of a mail (GET /api/mail/{uuid}/report, docs/api.md "Deliverability
// report"): one line per section with its verdict and key number, each opening to its
// findings. Fetched when the tab is first opened, never on arrival. Everything the
// report quotes comes from the mail, so it is only ever rendered as text.
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import type { ComponentChildren } from 'preact';
import type { HtmlSection, LinksSection, ReportFinding, ReportVerdict, SpamSection } from '@temp-inbox/api';
import { api, type MailReport } from './api.js';
import { decimal } from './intl.js';
import { s } from './strings.js';

export interface ReportState {
  report: MailReport | undefined;
  error: string;
  loading: boolean;
  checking: boolean;
  checkLinks: () => void;
}

/** The report of a mail, fetched once `active` first turns true (the tab is opened). The reader is keyed by the mail. */
export function useReport(uuid: string, active: boolean): ReportState {
  const [report, setReport] = useState<MailReport | undefined>();
  const [error, setError] = useState('');
  const [loading, setLoading] = useState(false);
  const [checking, setChecking] = useState(false);
  // Nothing is set once the reader is gone (another mail chosen while a request runs).
  const mounted = useRef(true);
  useEffect(() => () => void (mounted.current = false), []);
  const load = useCallback(
    async (checkLinks: boolean) => {
      setError('');
      try {
        const got = await api.report(uuid, checkLinks);
        if (mounted.current) setReport(got);
      } catch (err) {
        if (mounted.current) setError(err instanceof Error ? err.message : String(err));
      }
    },
    [uuid],
  );
  const tried = useRef(false);
  useEffect(() => {
    // A failed first load is tried again when the tab is opened again.
    if (!active) {
      if (!report) tried.current = false;
      return;
    }
    if (tried.current) return;
    tried.current = true;
    setLoading(true);
    void load(false).finally(() => mounted.current && setLoading(false));
  }, [active, report, load]);
  const checkLinks = useCallback(() => {
    setChecking(true);
    void load(true).finally(() => mounted.current && setChecking(false));
  }, [load]);
  return { report, error, loading, checking, checkLinks };
}

const MARK = { pass: '✓', warn: '!', fail: '✗', unavailable: '–' } as const;

function Verdict(props: { verdict: ReportVerdict }) {
  const { verdict } = props;
  return (
    <span class={`verdict verdict-${verdict}`} title={s.report.verdictMeaning[verdict]} data-verdict={verdict}>
      <span aria-hidden="true">{MARK[verdict]}</span> {s.report.verdict[verdict]}
    </span>
  );
}

const SEVERITY: Record<ReportVerdict, number> = { fail: 0, warn: 1, unavailable: 2, pass: 3 };

/** Findings, the worst first. */
function Findings(props: { findings: ReportFinding[] }) {
  if (props.findings.length === 0) return <p class="muted">{s.report.noFindings}</p>;
  const sorted = [...props.findings].sort((a, b) => SEVERITY[a.verdict] - SEVERITY[b.verdict]);
  return (
    <ul class="findings" aria-label={s.report.findings}>
      {sorted.map((f, i) => (
        <li key={`${f.rule}-${i}`} data-rule={f.rule}>
          <Verdict verdict={f.verdict} /> <code class="rule">{f.rule}</code> {f.message}
          {f.evidence !== undefined && f.evidence !== '' && (
            <div class="evidence">
              <span class="muted">{s.report.evidence}</span> <code>{f.evidence}</code>
            </div>
          )}
        </li>
      ))}
    </ul>
  );
}

const tally = (findings: ReportFinding[]) => s.report.counts(findings.filter((f) => f.verdict === 'fail').length, findings.filter((f) => f.verdict === 'warn').length);

function Section(props: { id: string; name: string; verdict: ReportVerdict; summary: string; reason?: string | undefined; children: ComponentChildren }) {
  const { id, name, verdict, summary, reason, children } = props;
  return (
    <details class="report-section" data-section={id}>
      <summary>
        <span class="section-name">{name}</span> <Verdict verdict={verdict} /> <span class="key">{verdict === 'unavailable' && reason ? s.report.unavailableBecause(reason) : summary}</span>
      </summary>
      <div class="section-body">{children}</div>
    </details>
  );
}

function SpamDetails(props: { spam: SpamSection }) {
  const { spam } = props;
  return (
    <>
      <Findings findings={spam.findings} />
      {spam.scanner && <p class="muted">{s.report.scanner(spam.scanner)}</p>}
      {spam.rules.length > 0 && (
        <div class="table-wrap">
          <table>
            <caption>{s.report.rules}</caption>
            <thead>
              <tr>
                <th scope="col">{s.report.rule}</th>
                <th scope="col">{s.report.ruleScore}</th>
                <th scope="col">{s.report.ruleDescription}</th>
              </tr>
            </thead>
            <tbody>
              {spam.rules.map((r) => (
                <tr key={r.name}>
                  <td>
                    <code>{r.name}</code>
                  </td>
                  <td class="num">{decimal(r.score, 2)}</td>
                  <td>{r.description}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </>
  );
}

function HtmlDetails(props: { html: HtmlSection }) {
  const { html } = props;
  const clients = (label: string, list: string[]) =>
    list.length > 0 && (
      <p class="clients">
        <span class="muted">{label}</span> {list.join(', ')}
      </p>
    );
  return (
    <>
      <Findings findings={html.findings} />
      {html.data_date !== '' && <p class="muted">{s.report.htmlData(html.clients, html.data_date)}</p>}
      {html.features.length > 0 && (
        <>
          <h3>{s.report.features}</h3>
          <ul class="features">
            {html.features.map((f, i) => (
              <li key={`${f.slug}-${i}`}>
                <a href={f.url} target="_blank" rel="noopener noreferrer">
                  {f.title}
                </a>
                {clients(s.report.featureUnsupported, f.unsupported)}
                {clients(s.report.featurePartial, f.partial)}
                {f.notes.length > 0 && (
                  <div class="clients">
                    <span class="muted">{s.report.featureNotes}</span>
                    <ul>
                      {f.notes.map((n, j) => (
                        <li key={j}>{n}</li>
                      ))}
                    </ul>
                  </div>
                )}
              </li>
            ))}
          </ul>
        </>
      )}
    </>
  );
}

function LinksDetails(props: { links: LinksSection; checking: boolean; onCheck: () => void }) {
  const { links, checking, onCheck } = props;
  return (
    <>
      <Findings findings={links.findings} />
      <p class="check-links">
        <button type="button" onClick={onCheck} disabled={checking || links.links.length === 0} aria-describedby="check-links-hint">
          {s.report.checkLinks}
        </button>{' '}
        <span role="status" class="muted">
          {checking ? s.report.checkingLinks : ''}
        </span>
      </p>
      <p id="check-links-hint" class="muted">
        {s.report.checkLinksHint}
      </p>
      {links.links.length === 0 ? (
        <p class="muted">{s.report.noLinks}</p>
      ) : (
        <div class="table-wrap">
          <table class="links">
            <caption>{s.report.linksTable}</caption>
            <thead>
              <tr>
                <th scope="col">{s.report.url}</th>
                <th scope="col">{s.report.kind}</th>
                <th scope="col">{s.report.result}</th>
                <th scope="col">{s.report.status}</th>
              </tr>
            </thead>
            <tbody>
              {links.links.map((l, i) => (
                <tr key={`${l.url}-${i}`} data-result={l.result ?? ''}>
                  <td class="url">
                    <code>{l.url}</code>
                  </td>
                  <td>{s.report.kindName[l.kind]}</td>
                  <td class={l.result ? `link-${l.result}` : 'muted'} title={l.reason}>
                    {l.result ? s.report.linkResult[l.result] : s.report.notChecked}
                  </td>
                  <td class="num">{l.result === undefined ? '' : (l.status ?? s.report.noStatus)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {links.links_truncated && <p class="muted">{s.report.linksTruncated}</p>}
    </>
  );
}

export function ReportView(props: { state: ReportState }) {
  const { report, error, loading, checking, checkLinks } = props.state;
  const failed = error && (
    <p class="error" role="alert">
      {s.report.failed}
      {error}
    </p>
  );
  if (!report) return failed || <p class="muted">{loading ? s.loading : ''}</p>;
  const { spam, html, links, content, sender } = report;
  const broken = links.links.filter((l) => l.result === 'broken' || l.result === 'error').length;
  return (
    <section class="report" aria-label={s.report.label}>
      {failed}
      <p class="report-overall">
        <span class="section-name">{s.report.overall}</span> <Verdict verdict={report.verdict} />
      </p>
      <Section id="spam" name={s.report.section.spam} verdict={spam.verdict} reason={spam.reason} summary={spam.score === null ? '' : s.report.spamScore(spam.score, spam.threshold)}>
        <SpamDetails spam={spam} />
      </Section>
      <Section id="html" name={s.report.section.html} verdict={html.verdict} reason={html.reason} summary={html.support === null ? s.report.noHtml : s.report.htmlSupport(html.support, html.supported, html.clients)}>
        <HtmlDetails html={html} />
      </Section>
      <Section id="links" name={s.report.section.links} verdict={links.verdict} reason={links.reason} summary={s.report.links(links.links.length, broken, links.checked)}>
        <LinksDetails links={links} checking={checking} onCheck={checkLinks} />
      </Section>
      <Section id="content" name={s.report.section.content} verdict={content.verdict} reason={content.reason} summary={tally(content.findings)}>
        <Findings findings={content.findings} />
      </Section>
      <Section id="sender" name={s.report.section.sender} verdict={sender.verdict} reason={sender.reason} summary={tally(sender.findings)}>
        <Findings findings={sender.findings} />
      </Section>
    </section>
  );
}
