// GET /api/admin/domains/stats (ADMIN_TOKEN): the per-domain figures of the operator's view
// (docs/api.md "Admin", docs/operating.md "The operator's view").
import { Type, type Static } from '@sinclair/typebox';

export const DomainStatsQuery = Type.Object(
  { days: Type.Optional(Type.String({ description: 'The window of mailsWeek, refusedShareWeek and topSendingDomains, in days: 1..31 (default 7).' })) },
  { additionalProperties: true },
);
export type DomainStatsQuery = Static<typeof DomainStatsQuery>;

export const DomainFigures = Type.Object({
  domain: Type.String({ description: 'A pool domain (its random subdomains count under it), or another domain that addresses use.' }),
  addresses: Type.Integer({ description: 'Addresses at the domain and its subdomains now.' }),
  mailsDay: Type.Integer({ description: 'Mails received in the last 24 hours (by the hour), counted at delivery: deletion and purge take nothing back.' }),
  mailsWeek: Type.Integer({ description: 'Mails received in the window (`days`, by the hour).' }),
  refusedShareWeek: Type.Number({ minimum: 0, maximum: 1, description: 'SMTP refusals counted for the domain / (those refusals + mails received) over the window; 0 when neither.' }),
  topSendingDomains: Type.Array(Type.Object({ domain: Type.String({ description: "The envelope sender's domain; empty for the null sender." }), mails: Type.Integer() }), {
    description: 'The 5 sending domains of the most mail in the window, most first.',
  }),
});
export type DomainFigures = Static<typeof DomainFigures>;

export const DomainStatsResponse = Type.Object({
  days: Type.Integer({ description: 'The window the figures cover.' }),
  domains: Type.Array(DomainFigures, { description: 'The pool domains in pool order (every state), then other domains of addresses, by name.' }),
});
export type DomainStatsResponse = Static<typeof DomainStatsResponse>;
