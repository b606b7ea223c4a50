// GET /api/mail/{uuid}/report (docs/api.md "Deliverability report"): would this mail reach
// an inbox, and will it look right there. Sections, each with a verdict and its findings.
import { Type, type Static } from '@sinclair/typebox';

export const REPORT_VERDICTS = ['pass', 'warn', 'fail', 'unavailable'] as const;
export const ReportVerdict = Type.Union(
  REPORT_VERDICTS.map((v) => Type.Literal(v)),
  { description: 'pass: nothing to fix; warn: worth a look; fail: a mailbox provider or client would refuse, hide or break it; unavailable: the section could not be computed (see `reason`).' },
);
export type ReportVerdict = Static<typeof ReportVerdict>;

export const ReportFinding = Type.Object({
  rule: Type.String({ description: 'A stable identifier of what was checked, e.g. `img-alt` or `dmarc-published`.' }),
  verdict: ReportVerdict,
  message: Type.String({ description: 'One sentence: what was found and, when it is not a pass, what to change.' }),
  evidence: Type.Optional(Type.String({ description: 'What in the message (or in our verdicts) the finding rests on, at most 500 characters.' })),
});
export type ReportFinding = Static<typeof ReportFinding>;

const sectionFields = {
  verdict: ReportVerdict,
  reason: Type.Optional(Type.String({ description: 'Why the section is `unavailable`.' })),
  findings: Type.Array(ReportFinding),
};

export const SpamRule = Type.Object({
  name: Type.String(),
  score: Type.Number(),
  description: Type.String({ description: 'The scanner\'s own description of the rule (may be empty).' }),
});
export type SpamRule = Static<typeof SpamRule>;

export const SpamSection = Type.Object({
  ...sectionFields,
  scanner: Type.Union([Type.Literal('rspamd'), Type.Literal('spamd'), Type.Null()], { description: 'The scanner SPAM_SCANNER names; null when none is set.' }),
  score: Type.Union([Type.Number(), Type.Null()]),
  threshold: Type.Union([Type.Number(), Type.Null()], {
    description: "spamd: the score from which it calls the mail spam (the verdict fails there, warns from half of it). rspamd: its required score (that of its reject action); the verdict follows rspamd's action instead (fail for add header, rewrite subject, soft reject or reject; warn for greylist).",
  }),
  rules: Type.Array(SpamRule, { description: 'Every rule that fired, highest score first.' }),
});
export type SpamSection = Static<typeof SpamSection>;

export const HtmlFeature = Type.Object({
  slug: Type.String({ description: "caniemail.com's identifier of the feature, e.g. `css-display-flex` (empty when its data has none)." }),
  category: Type.String({ description: '`html`, `css`, `image` or `others`, as caniemail.com files it.' }),
  url: Type.String({ description: "The feature's page on caniemail.com." }),
  title: Type.String({ description: 'The feature as caniemail.com names it, e.g. `display:flex` or `<form> element`.' }),
  unsupported: Type.Array(Type.String(), { description: 'Clients (family.platform, e.g. `outlook.windows`) that do not support it.' }),
  partial: Type.Array(Type.String(), { description: 'Clients that support it in part.' }),
  notes: Type.Array(Type.String(), { description: 'caniemail.com\'s notes on the partial support.' }),
});
export type HtmlFeature = Static<typeof HtmlFeature>;

export const HtmlSection = Type.Object({
  ...sectionFields,
  clients: Type.Integer({ description: 'Mail clients checked (every one caniemail.com has data for).' }),
  supported: Type.Union([Type.Integer(), Type.Null()], { description: 'Clients that support every feature the HTML uses, at least in part; null without HTML.' }),
  support: Type.Union([Type.Number(), Type.Null()], {
    description:
      'Of each feature the HTML uses, by each client: supported counts 1, partly ½, not 0, as a percentage with one decimal (pass from 90, warn from 70, fail below); null without HTML.',
  }),
  features: Type.Array(HtmlFeature, { description: 'Each feature the HTML uses that some client does not (fully) support.' }),
  tests: Type.Integer({ description: 'Features of the HTML the support was weighed over: those above and the elements used that every client supports.' }),
  elements: Type.Integer({ description: 'HTML elements in the mail.' }),
  data_date: Type.String({ description: 'When the caniemail.com data the check used was last updated.' }),
});
export type HtmlSection = Static<typeof HtmlSection>;

export const LINK_RESULTS = ['ok', 'redirect', 'broken', 'refused', 'skipped', 'error'] as const;
export const LinkEntry = Type.Object({
  url: Type.String(),
  kind: Type.Union([Type.Literal('link'), Type.Literal('image')]),
  result: Type.Optional(
    Type.Union(LINK_RESULTS.map((r) => Type.Literal(r)), {
      description: 'With ?links=check only. ok: 2xx; redirect: 3xx (not followed); broken: 4xx/5xx; refused: the guard refused its address (private, loopback, …) or its form; skipped: never fetched because fetching it could change something (unsubscribe, confirm, …) or past the limits; error: no answer.',
    }),
  ),
  status: Type.Optional(Type.Union([Type.Integer(), Type.Null()], { description: 'The HTTP status, or null when none came.' })),
  reason: Type.Optional(Type.String()),
});
export type LinkEntry = Static<typeof LinkEntry>;

export const LinksSection = Type.Object({
  ...sectionFields,
  checked: Type.Boolean({ description: 'True when the links were fetched (?links=check).' }),
  links: Type.Array(LinkEntry, { description: 'Every distinct http(s) link and image URL, in order of appearance (at most 200).' }),
  links_truncated: Type.Boolean(),
});
export type LinksSection = Static<typeof LinksSection>;

export const PlainSection = Type.Object(sectionFields);
export type PlainSection = Static<typeof PlainSection>;

export const MailReport = Type.Object({
  verdict: Type.Union([Type.Literal('pass'), Type.Literal('warn'), Type.Literal('fail')], { description: 'The worst verdict of the sections that could be computed.' }),
  spam: SpamSection,
  html: HtmlSection,
  links: LinksSection,
  content: PlainSection,
  sender: PlainSection,
});
export type MailReport = Static<typeof MailReport>;

/**
 * The report in one line per section (docs/api.md "Deliverability report"): kept with the
 * mail once its report was built (on arrival with SPAM_SCANNER, or at its first
 * GET /api/mail/{uuid}/report), and carried by webhook deliveries and the parsed view.
 */
export const ReportSummary = Type.Object(
  {
    verdict: MailReport.properties.verdict,
    spam: ReportVerdict,
    html: ReportVerdict,
    links: ReportVerdict,
    content: ReportVerdict,
    sender: ReportVerdict,
    spam_score: Type.Union([Type.Number(), Type.Null()], { description: "The scanner's score; null when the spam section is unavailable." }),
    spam_threshold: Type.Union([Type.Number(), Type.Null()], { description: 'The score from which the scanner calls it spam (as the spam section\'s `threshold`); null when unavailable.' }),
  },
  { description: 'Each section\'s verdict, as GET /api/mail/{uuid}/report builds it without ?links=check (so `links` only says whether they could be listed), and the spam score.' },
);
export type ReportSummary = Static<typeof ReportSummary>;

export const ReportQuery = Type.Object(
  { links: Type.Optional(Type.String({ description: '`check` to fetch each link (HEAD, GET where HEAD is refused) through the address guard; anything else, or absent, only lists them.' })) },
  { additionalProperties: true },
);
export type ReportQuery = Static<typeof ReportQuery>;
