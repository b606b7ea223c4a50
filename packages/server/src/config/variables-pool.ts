// The environment variables of the domain pool (docs/operating.md "Domains and rotation"):
// how a new address's domain is picked, how long a retired domain still takes mail, which
// seeded domains give random subdomains, and the host names an MX must name (a part of
// CONFIG_VARIABLES, variables.ts). MAIL_DOMAINS itself is a basic (variables-basics.ts).
import { DOMAIN_SELECTIONS, type DomainSelection } from '../domain/domain-pool.js';
import { ConfigError, domains, duration } from './values.js';
import type { VariableSpec } from './variable-spec.js';

export const POOL_VARIABLES: VariableSpec[] = [
  {
    name: 'DOMAIN_SELECTION',
    default: 'first',
    accepts: DOMAIN_SELECTIONS.join(', '),
    description: 'Which active pool domain POST /api/new_address without a domain gives: the first (in the order added), a random one, or each in turn (round-robin, per node).',
    set: (c, r) => {
      const mode = r.toLowerCase();
      if (!(DOMAIN_SELECTIONS as readonly string[]).includes(mode)) throw new ConfigError(DOMAIN_SELECTIONS.join(', '));
      c.mail.domainSelection = mode as DomainSelection;
    },
  },
  {
    name: 'DOMAIN_RETIRE_GRACE',
    default: '7d',
    accepts: 'duration (s, m, h, d)',
    description: 'How long a retired pool domain still takes mail for its addresses; past it SMTP refuses its recipients with a 550 that says the domain is retired.',
    set: (c, r) => (c.mail.domainRetireGraceMs = duration(r)),
  },
  {
    name: 'MAIL_SUBDOMAINS',
    default: '(none)',
    accepts: 'comma list of MAIL_DOMAINS entries, or on (all of them)',
    description: 'Seeded domains whose new addresses get a random subdomain (name@k3x9.example.com), mail to any one-label subdomain taken; needs a wildcard MX record. Only seeds the pool (the admin API changes it later).',
    set: (c, r) => (c.mail.subdomains = r === '' ? [] : r.toLowerCase() === 'on' ? 'all' : domains(r)),
  },
  {
    name: 'MX_HOSTNAMES',
    default: '(SMTP_HOSTNAME)',
    accepts: 'comma list of host names',
    description: "The host names an MX record may name to point at this service: GET /api/admin/domains/:domain/dns checks each pool domain's MX against them.",
    set: (c, r) => (c.mail.mxHostnames = r === '' ? [] : domains(r)),
  },
];
