// The domain pool (docs/api.md "Domains", "Admin"; docs/operating.md "Domains and rotation"):
// the public list of the domains new addresses may take, and the operators' management of the
// pool (ADMIN_TOKEN): add, disable, retire, delete, random subdomains, and an MX check.
import { Type, type Static } from '@sinclair/typebox';

export const DomainsResponse = Type.Object({
  domains: Type.Array(Type.String(), { description: 'The active domains (new addresses may take them), the default first.' }),
});
export type DomainsResponse = Static<typeof DomainsResponse>;

export const PoolDomainState = Type.Union([Type.Literal('active'), Type.Literal('disabled'), Type.Literal('retired')], {
  description: 'active: takes new addresses; disabled: no new addresses, existing ones keep their mail and tokens; retired: as disabled, and past retiredUntil no mail either.',
});
export type PoolDomainState = Static<typeof PoolDomainState>;

export const DomainSelection = Type.Union([Type.Literal('first'), Type.Literal('random'), Type.Literal('round-robin')], {
  description: 'How POST /api/new_address without a domain picks an active one (DOMAIN_SELECTION).',
});
export type DomainSelection = Static<typeof DomainSelection>;

export const AdminDomain = Type.Object({
  domain: Type.String(),
  state: PoolDomainState,
  subdomains: Type.Boolean({ description: 'New addresses get a random subdomain (name@k3x9.domain); mail to any one-label subdomain is taken.' }),
  addedAt: Type.String({ format: 'date-time' }),
  stateChangedAt: Type.String({ format: 'date-time' }),
  retiredUntil: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'When a retired domain stops taking mail (DOMAIN_RETIRE_GRACE after it was retired); null unless retired.' }),
});
export type AdminDomain = Static<typeof AdminDomain>;

export const AdminDomainsResponse = Type.Object({
  domains: Type.Array(AdminDomain, { description: 'Every pool domain, in the order added.' }),
  selection: DomainSelection,
});
export type AdminDomainsResponse = Static<typeof AdminDomainsResponse>;

export const AdminDomainBody = Type.Object(
  {
    domain: Type.String({ maxLength: 256, description: 'The domain to add (active at once), e.g. mail.example.com.' }),
    subdomains: Type.Optional(Type.Boolean({ description: 'Random subdomains on (default false).' })),
  },
  { additionalProperties: false },
);
export type AdminDomainBody = Static<typeof AdminDomainBody>;

export const AdminDomainPatch = Type.Object(
  {
    state: Type.Optional(PoolDomainState),
    subdomains: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
export type AdminDomainPatch = Static<typeof AdminDomainPatch>;

export const AdminDomainParams = Type.Object({ domain: Type.String({ maxLength: 256 }) });
export type AdminDomainParams = Static<typeof AdminDomainParams>;

export const AdminDomainDns = Type.Object({
  domain: Type.String(),
  mx: Type.Array(Type.Object({ exchange: Type.String(), priority: Type.Integer() }), {
    description: "The domain's MX records, lowest priority first; without any, its own name (RFC 5321 §5.1's implicit MX) when it has an A or AAAA record.",
  }),
  pointsHere: Type.Boolean({ description: 'Whether an MX (the best one that resolves) names one of `expected`.' }),
  expected: Type.Array(Type.String(), { description: 'The host names that are this service (MX_HOSTNAMES, else SMTP_HOSTNAME).' }),
  message: Type.String({ description: 'What the check found, in a sentence.' }),
});
export type AdminDomainDns = Static<typeof AdminDomainDns>;
