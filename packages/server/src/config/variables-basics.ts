// The environment variables of the service's basics: where it listens, where it stores,
// Redis, its domains and secrets, the sign-up challenge, the names it gives out, and the
// proxies and origins it trusts (a part of CONFIG_VARIABLES, variables.ts).
import { hostname } from 'node:os';
import { CHALLENGE_MODES, RATE_LIMIT_ROUTES, type ChallengeMode, type RateLimitRoute } from './config.js';
import { between, bool, ConfigError, domains, duration, host, optional, parseCorsOrigins, parseRateLimit, parseTrustProxy, path, port, secret } from './values.js';
import type { VariableSpec } from './variable-spec.js';

// Names nobody may claim (docs/security.md "Names"): the five addresses certificate
// authorities mail to prove control of a domain (CA/Browser Forum Baseline Requirements
// 3.2.2.4.4: admin, administrator, webmaster, hostmaster, postmaster), the role
// mailboxes of RFC 2142 (abuse, noc, security, info, marketing, sales, support, usenet,
// news, www, uucp, ftp), and the usual system and bounce names.
export const DEFAULT_BLOCKLIST = [
  'admin',
  'administrator',
  'webmaster',
  'hostmaster',
  'postmaster',
  'abuse',
  'noc',
  'security',
  'info',
  'marketing',
  'sales',
  'support',
  'usenet',
  'news',
  'www',
  'uucp',
  'ftp',
  'root',
  'sysadmin',
  'ssladmin',
  'ssladministrator',
  'sslwebmaster',
  'it',
  'mailerdaemon',
  'daemon',
  'nobody',
  'operator',
  'noreply',
  'donotreply',
  'bounce',
  'bounces',
  'dmarc',
  'dmarcreports',
  'billing',
  'help',
  'privacy',
  'legal',
].join(',');

export const BASIC_VARIABLES: VariableSpec[] = [
  { name: 'HTTP_HOST', default: '0.0.0.0', accepts: 'IP or host', description: 'Address the HTTP API listens on.', set: (c, r) => (c.http.host = host(r)) },
  { name: 'HTTP_PORT', default: '8080', accepts: '0..65535', description: 'Port of the HTTP API (0 picks a free port).', set: (c, r) => (c.http.port = port(r)) },
  { name: 'SMTP_HOST', default: '0.0.0.0', accepts: 'IP or host', description: 'Address the SMTP receiver listens on.', set: (c, r) => (c.smtp.host = host(r)) },
  { name: 'SMTP_PORT', default: '2525', accepts: '0..65535', description: 'Port of the SMTP receiver (use 25 in production).', set: (c, r) => (c.smtp.port = port(r)) },
  {
    name: 'SMTP_HOSTNAME',
    default: '(the machine host name)',
    value: () => hostname() || 'localhost',
    accepts: 'host name',
    description: 'Name the SMTP server greets with and writes into Received: lines.',
    set: (c, r) => (c.smtp.hostname = host(r)),
  },
  { name: 'SMTP_TLS_CERT', default: '(unset)', accepts: 'PEM file path', description: 'Certificate for STARTTLS; STARTTLS is offered only when this and SMTP_TLS_KEY are set.', set: (c, r) => (c.smtp.tlsCert = optional(r)) },
  { name: 'SMTP_TLS_KEY', default: '(unset)', accepts: 'PEM file path', description: 'Private key for STARTTLS.', set: (c, r) => (c.smtp.tlsKey = optional(r)) },
  { name: 'DATA_DIR', default: './data', accepts: 'directory path', description: 'Holds the SQLite file and the generated secrets (created 0700, its files 0600).', set: (c, r) => (c.storage.dataDir = path(r)) },
  {
    name: 'DATABASE_URL',
    default: '(unset = SQLite in DATA_DIR)',
    accepts: 'postgres://… URL',
    description: 'Selects PostgreSQL storage for multi-node deployments.',
    set: (c, r) => {
      if (r !== '' && !/^postgres(ql)?:\/\//.test(r)) throw new ConfigError('a postgres:// or postgresql:// URL, or empty for SQLite');
      c.storage.databaseUrl = optional(r);
    },
  },
  {
    name: 'DATABASE_SCHEMA',
    default: '(unset = the connection default, usually public)',
    accepts: 'SQL identifier',
    description: 'PostgreSQL schema to keep the tables in; created when missing.',
    set: (c, r) => {
      if (r !== '' && !/^[A-Za-z_][A-Za-z0-9_]{0,62}$/.test(r)) throw new ConfigError('a schema name of letters, digits and _ (at most 63)');
      c.storage.databaseSchema = optional(r);
    },
  },
  {
    name: 'REDIS_URL',
    default: '(unset = in-process)',
    accepts: 'redis:// URL',
    description: 'Shares rate-limit counters and inbox events (push, long-poll) between nodes.',
    set: (c, r) => {
      if (r !== '' && !/^rediss?:\/\//.test(r)) throw new ConfigError('a redis:// or rediss:// URL');
      c.redis.url = optional(r);
    },
  },
  {
    name: 'REDIS_KEY_PREFIX',
    default: 'ti:',
    accepts: 'printable text without spaces',
    description: 'Prefix of every Redis key, so deployments can share one Redis.',
    set: (c, r) => {
      if (!/^[\x21-\x7e]{1,64}$/.test(r)) throw new ConfigError('1-64 printable characters without spaces');
      c.redis.keyPrefix = r;
    },
  },
  { name: 'MAIL_DOMAINS', default: 'temp-inbox.localhost', accepts: 'comma list of domains', description: 'The domain pool at the first start of a database (the first is the default for new addresses); the admin API adds, disables, retires and deletes domains later, on every node.', set: (c, r) => (c.mail.domains = domains(r)) },
  { name: 'JWT_SECRET', default: '(generated once, kept in DATA_DIR)', accepts: 'string, 32+ characters, 6+ different, no pattern', description: 'HS256 key for address tokens. Set the same value on every node.', set: (c, r) => (c.secrets.jwtSecret = secret(r)) },
  { name: 'SESSION_SECRET', default: '(generated once, kept in DATA_DIR)', accepts: 'string, 32+ characters, 6+ different, no pattern', description: 'HMAC key for the session_id cookie. Set the same value on every node.', set: (c, r) => (c.secrets.sessionSecret = secret(r)) },
  {
    name: 'TURNSTILE_SECRET_KEY',
    default: '(unset)',
    accepts: 'string',
    description: 'Cloudflare Turnstile secret: with CHALLENGE unset, setting it turns the Turnstile challenge on for POST /api/new_address.',
    set: (c, r) => (c.challenge.turnstileSecretKey = optional(r)),
  },
  { name: 'TURNSTILE_SITE_KEY', default: '(unset)', accepts: 'string', description: 'Site key shown to the browser UI.', set: (c, r) => (c.challenge.turnstileSiteKey = optional(r)) },
  {
    name: 'TURNSTILE_VERIFY_URL',
    default: 'https://challenges.cloudflare.com/turnstile/v0/siteverify',
    accepts: 'http(s) URL',
    description: 'Where challenge tokens are verified (overridable for tests and proxies).',
    set: (c, r) => {
      if (!/^https?:\/\/\S+$/.test(r) || !URL.canParse(r)) throw new ConfigError('an http:// or https:// URL');
      c.challenge.turnstileVerifyUrl = r;
    },
  },
  {
    name: 'CHALLENGE',
    default: '(turnstile when TURNSTILE_SECRET_KEY is set, else off)',
    accepts: CHALLENGE_MODES.join(', '),
    description:
      'The bot challenge POST /api/new_address asks for in cf_token: turnstile (Cloudflare, needs TURNSTILE_SECRET_KEY), pow (a self-hosted ALTCHA proof of work from GET /api/challenge), or off.',
    set: (c, r) => {
      const mode = r === '' ? 'off' : r.toLowerCase();
      if (!(CHALLENGE_MODES as readonly string[]).includes(mode)) throw new ConfigError(CHALLENGE_MODES.join(', '));
      c.challenge.mode = mode as ChallengeMode;
    },
  },
  {
    name: 'POW_MAX_NUMBER',
    default: '50000',
    accepts: '1000..100000000',
    description: "CHALLENGE=pow: the largest secret number of a challenge. A solver tries half of it on average: 50000 costs a browser about 0.6 s (1.2 s at worst), and twice the number doubles everyone's cost.",
    set: (c, r) => (c.challenge.powMaxNumber = between(r, 1000, 100_000_000)),
  },
  {
    name: 'POW_CHALLENGE_TTL',
    default: '5m',
    accepts: 'duration (s, m, h, d)',
    description: 'CHALLENGE=pow: how long a challenge from GET /api/challenge may be solved and used; each is good for one address.',
    set: (c, r) => (c.challenge.powChallengeTtlMs = duration(r)),
  },
  { name: 'CUSTOM_NAMES', default: 'true', accepts: 'true or false', description: 'false refuses requested names (403); random names still work.', set: (c, r) => (c.mail.customNames = bool(r)) },
  {
    name: 'PLUS_ADDRESSING',
    default: 'true',
    accepts: 'true or false',
    description: 'name+tag@domain is delivered to name@domain; the mail keeps the address it was sent to (metadata delivered_to, the wait and event to filter).',
    set: (c, r) => (c.mail.plusAddressing = bool(r)),
  },
  {
    name: 'CATCH_ALL',
    default: 'false',
    accepts: 'true or false',
    description: 'true accepts mail for any valid name at an active pool domain (not at its random subdomains) and creates the address on its first mail; the first POST /api/new_address for that name gets its token.',
    set: (c, r) => (c.mail.catchAll = bool(r)),
  },
  {
    name: 'MAILTM_API',
    default: 'on',
    accepts: 'on or off',
    description:
      'Serves the mail.tm-compatible API under /mailtm (clients of mail.tm use https://<host>/mailtm as their base URL): accounts with a password, messages, sources, attachments, a Mercure event stream. off: every /mailtm path is 404.',
    set: (c, r) => (c.mailtm.api = bool(r)),
  },
  {
    name: 'MCP',
    default: 'off',
    accepts: 'on or off',
    description:
      'Serves MCP (the Model Context Protocol, streamable HTTP) at /mcp, for AI agents: the tools of docs/mcp.md on the inbox of the caller\'s token (Authorization: Bearer) or sandbox login (HTTP Basic). off: /mcp is 404.',
    set: (c, r) => (c.mcp.on = bool(r)),
  },
  {
    name: 'NAME_BLOCKLIST',
    default: DEFAULT_BLOCKLIST,
    accepts: 'comma list of names',
    description: 'Local parts that can never be requested (400), compared after removing ".", "-" and "_"; setting it replaces the default list (docs/security.md "Names").',
    set: (c, r) => (c.mail.nameBlocklist = r.split(',').map((s) => s.trim().toLowerCase()).filter(Boolean)),
  },
  ...Object.entries(RATE_LIMIT_ROUTES).map(
    ([route, rule]): VariableSpec => ({
      name: `RATE_LIMIT_${route}`,
      default: `${rule.max}/${rule.windowSeconds}`,
      accepts: '<max>/<seconds>, or 0',
      // A request with the right admin token is never counted (routes/admin.ts).
      description: route === 'ADMIN' ? 'Per-IP limit of requests with a wrong admin token (the right one always works); 0 disables it.' : `Per-IP limit of ${route.toLowerCase().replace(/_/g, ' ')} requests; 0 disables it.`,
      set: (c, r) => (c.limits.routes[route as RateLimitRoute] = parseRateLimit(r)),
    }),
  ),
    {
    name: 'TRUST_PROXY',
    default: '(unset = trust no proxy)',
    accepts: 'hop count, or IP/CIDR list',
    description: "Which proxies' X-Forwarded-For to believe: the number of proxies in front (usually 1) or their addresses. true is refused: it would believe what the client writes.",
    set: (c, r) => (c.http.trustProxy = parseTrustProxy(r)),
  },
  {
    name: 'CORS_ORIGINS',
    default: '(unset = no cross-origin access)',
    accepts: 'comma list of origins, or *',
    description:
      'Web origins (such as https://app.example) whose pages may call the API from the browser: preflights are answered and Retry-After is readable. Listed origins may send cookies; * allows any origin, without cookies.',
    set: (c, r) => (c.http.corsOrigins = parseCorsOrigins(r)),
  },
];
