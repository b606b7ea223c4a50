// The authentication verdicts of a mail (metadata.auth: SPF, DKIM per signature,
// DMARC, ARC) as a row of badges in the mail view. Each badge says its result in
// words, with a mark beside it (✓ pass, ✗ a failure, – neither), so colour is never
// the only sign; the list is named for screen readers and each badge's title says
// what the result means. Mail stored without verdicts shows none.
import type { AuthResult, MailAuth } from '@temp-inbox/api';
import { s } from './strings.js';

/** How a result looks: good, bad, or neither (none, neutral, a temporary error). */
function tone(result: AuthResult): 'pass' | 'fail' | 'other' {
  if (result === 'pass') return 'pass';
  if (result === 'fail' || result === 'softfail' || result === 'permerror') return 'fail';
  return 'other';
}

const MARK = { pass: '✓', fail: '✗', other: '–' } as const;

function Badge(props: { name: string; result: AuthResult; detail?: string | undefined }) {
  const { name, result, detail } = props;
  const t = tone(result);
  return (
    <li class={`auth-badge auth-${t}`} title={s.auth.meaning[result]} data-result={result}>
      <span aria-hidden="true">{MARK[t]}</span> {name} {s.auth.result[result]}
      {detail && <span class="auth-detail"> {detail}</span>}
    </li>
  );
}

export function AuthBadges(props: { auth: MailAuth | undefined }) {
  const { auth } = props;
  if (!auth) return null;
  return (
    <ul class="auth-badges" aria-label={s.auth.label}>
      <Badge name={s.auth.spf} result={auth.spf} />
      {auth.dkim.length === 0 ? (
        <Badge name={s.auth.dkim} result="none" />
      ) : (
        auth.dkim.map((d, i) => <Badge key={i} name={s.auth.dkim} result={d.result} detail={d.domain ? s.auth.signedBy(d.domain) : undefined} />)
      )}
      <Badge name={s.auth.dmarc} result={auth.dmarc} />
      <Badge name={s.auth.arc} result={auth.arc} />
    </ul>
  );
}
