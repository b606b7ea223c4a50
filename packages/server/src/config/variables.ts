// Every environment variable: name, default, what it accepts, what it means, and
// how it sets the configuration. The defaults of the running server and the README's
// configuration table both come from this one list.
import { hostname } from 'node:os';
import { CHALLENGE_MODES, RATE_LIMIT_ROUTES, type ChallengeMode, type Config, type RateLimitRoute } from './config.js';
import { atLeast, between, bool, ConfigError, count, domains, duration, freeSpace, host, LOG_LEVELS, networks, optional, parseCorsOrigins, parseDnsServers, parseRateLimit, parseTrustProxy, path, port, positiveInt, secret, webhookUrl } from './values.js';
import { isWeakSecret, WEAK_SECRET_HINT } from './secrets.js';
import { isSecret } from '../domain/webhook-secret.js';
import { parseSandboxes } from '../domain/sandboxes.js';
import { parseScanner } from '../domain/spam-scanner-url.js';

/** SPAM_SCANNER's value, or the form it takes. */
function scanner(raw: string) {
  try {
    return parseScanner(raw);
  } catch {
    throw new ConfigError('rspamd://host:port or spamd://host:port');
  }
}

type Setter = (c: Config, raw: string) => void;

export interface VariableSpec {
  name: string;
  /** The default as the README shows it; one in parentheses describes "unset". */
  default: string;
  /** The default value when it is computed at start-up (and so cannot be the text above). */
  value?: () => string;
  accepts: string;
  description: string;
  set: Setter;
}

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
export const CONFIG_VARIABLES: VariableSpec[] = [
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
  { name: 'MAIL_DOMAINS', default: 'temp-inbox.localhost', accepts: 'comma list of domains', description: 'Domains mail is accepted for; the first is the default for new addresses.', set: (c, r) => (c.mail.domains = domains(r)) },
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
    description: 'true accepts mail for any valid name at MAIL_DOMAINS and creates the address on its first mail; the first POST /api/new_address for that name gets its token.',
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
  { name: 'MAX_MESSAGE_BYTES', default: '10485760', accepts: 'positive integer', description: 'SMTP SIZE; larger mail is refused with 552 5.3.4.', set: (c, r) => (c.mail.maxMessageBytes = positiveInt(r)) },
  { name: 'MAIL_TTL', default: '7d', accepts: 'duration (s, m, h, d)', description: 'Mail older than this is purged.', set: (c, r) => (c.mail.mailTtlMs = duration(r)) },
  { name: 'ADDRESS_TTL', default: '7d', accepts: 'duration (s, m, h, d)', description: 'Addresses older than this are purged with their mail.', set: (c, r) => (c.mail.addressTtlMs = duration(r)) },
  { name: 'SWEEP_INTERVAL', default: '1m', accepts: 'duration (s, m, h, d)', description: 'How often the retention sweep runs.', set: (c, r) => (c.mail.sweepIntervalMs = duration(r)) },
  {
    name: 'EVENTS_HEARTBEAT',
    default: '15s',
    accepts: 'duration (s, m, h, d)',
    description: 'How often an idle GET /api/events stream gets a comment line (keeps proxies from closing it) and its token is checked again.',
    set: (c, r) => (c.events.heartbeatMs = duration(r)),
  },
  {
    name: 'METRICS_TOKEN',
    default: '(unset = no /metrics)',
    accepts: 'string, 16+ characters',
    description: 'Serves Prometheus metrics at GET /metrics to requests with "Authorization: Bearer <this token>".',
    set: (c, r) => {
      if (r !== '' && r.length < 16) throw new ConfigError('a token of at least 16 characters (or leave it unset for no /metrics)');
      c.metrics.token = optional(r);
    },
  },
  {
    name: 'ADMIN_TOKEN',
    default: '(unset = no admin)',
    accepts: '32+ printable ASCII characters, no spaces, 6+ different, no pattern',
    description: 'Enables the operators\' admin: /api/admin/* and the page at /admin, for requests with "Authorization: Bearer <this token>" (docs/deploy.md "Admin"). Unset, both are 404.',
    set: (c, r) => {
      // It travels in an HTTP header: visible ASCII only.
      if (r !== '' && !/^[\x21-\x7e]{32,}$/.test(r)) throw new ConfigError('a token of at least 32 printable ASCII characters without spaces (or leave it unset for no admin)');
      if (r !== '' && isWeakSecret(r)) throw new ConfigError(`a token of at least 32 printable ASCII characters without spaces, ${WEAK_SECRET_HINT} (or leave it unset for no admin)`);
      c.admin.token = optional(r);
    },
  },
  {
    name: 'WEBHOOK_URL',
    default: '(unset = none)',
    accepts: 'http(s) URL',
    description:
      "The operator's webhook: every mail any address receives is POSTed there as JSON, signed with WEBHOOK_SECRET (docs/api.md \"Webhooks\"). Needs WEBHOOK_SECRET; never printed.",
    set: (c, r) => (c.webhooks.url = r === '' ? undefined : webhookUrl(r)),
  },
  {
    name: 'WEBHOOK_SECRET',
    default: '(unset)',
    accepts: 'whsec_ + base64 of 24-64 bytes',
    description: 'Signing key of WEBHOOK_URL\'s deliveries, as Standard Webhooks writes keys (e.g. "whsec_$(openssl rand -base64 32)"); required with WEBHOOK_URL, never printed.',
    set: (c, r) => {
      if (r !== '' && !isSecret(r)) throw new ConfigError('whsec_ followed by the base64 of 24 to 64 random bytes');
      c.webhooks.secret = optional(r);
    },
  },
  {
    name: 'WEBHOOK_ALLOW_PRIVATE',
    default: 'false',
    accepts: 'true or false',
    description:
      'true lets webhooks (WEBHOOK_URL and every address\'s) go to loopback, private and carrier-grade NAT addresses: for intranets and tests. Link-local (cloud metadata), multicast and reserved addresses stay refused.',
    set: (c, r) => (c.webhooks.allowPrivate = bool(r)),
  },
  {
    name: 'SPAM_SCANNER',
    default: '(none)',
    accepts: 'rspamd://host:port or spamd://host:port',
    description:
      "The spam scanner the deliverability report (GET /api/mail/{uuid}/report) asks: rspamd over its HTTP protocol (/checkv2) or SpamAssassin's spamd. Unset: the report's spam section is unavailable. Set, each mail's report is also built after it arrives (never before its 250), and its summary goes with its webhook deliveries, which wait for it up to SPAM_SCANNER_TIMEOUT and 5 s, and with its parsed view.",
    set: (c, r) => (c.report.scanner = r === '' ? undefined : scanner(r)),
  },
  {
    name: 'SPAM_SCANNER_TIMEOUT',
    default: '10s',
    accepts: 'duration (s, m, h, d)',
    description: 'How long one scan may take; past it the spam section is unavailable.',
    set: (c, r) => (c.report.scanTimeoutMs = duration(r)),
  },
  {
    name: 'SPAM_SCANNER_MAX_BYTES',
    default: '2097152',
    accepts: 'positive integer (bytes)',
    description: 'Larger mail is not sent to the scanner (the spam section says so).',
    set: (c, r) => (c.report.scanMaxBytes = positiveInt(r)),
  },
  {
    name: 'REPORT_LINKS_ALLOW_PRIVATE',
    default: 'false',
    accepts: 'true or false',
    description:
      "true lets the report's link check (?links=check) fetch loopback and private addresses: for intranets and tests. Link-local (cloud metadata), multicast and reserved addresses stay refused.",
    set: (c, r) => (c.report.linksAllowPrivate = bool(r)),
  },
  {
    name: 'LOG_LEVEL',
    default: 'info',
    accepts: LOG_LEVELS.join(', '),
    description: 'Structured (JSON) log verbosity.',
    set: (c, r) => {
      if (!LOG_LEVELS.includes(r)) throw new ConfigError(`one of ${LOG_LEVELS.join(', ')}`);
      c.log.level = r;
    },
  },
  // Limits on what one SMTP client can take (docs/security.md).
  { name: 'RATE_LIMITS', default: 'on', accepts: 'on or off', description: 'off disables every per-client rate limit, HTTP and SMTP (for test environments).', set: (c, r) => (c.limits.on = bool(r)) },
  { name: 'SMTP_MAX_CLIENTS', default: '1000', accepts: 'positive integer', description: 'SMTP connections open at once, in all; more get 421.', set: (c, r) => (c.smtp.maxClients = positiveInt(r)) },
  {
    name: 'SMTP_MAX_CLIENTS_PER_IP',
    default: '10',
    accepts: 'positive integer',
    description: 'SMTP connections open at once from one client (IPv4 address, IPv6 /64); more get 421 4.7.0.',
    set: (c, r) => (c.smtp.maxClientsPerIp = positiveInt(r)),
  },
  {
    name: 'SMTP_TRUSTED_NETWORKS',
    default: '127.0.0.0/8,::1/128',
    accepts: 'comma list of IPs/CIDRs, or empty for none',
    description:
      "The operator's own hosts and networks (a test suite's parallel workers, a relay in front): their clients are exempt from SMTP_MAX_CLIENTS_PER_IP and SMTP_CLIENT_INFLIGHT_BYTES; every other limit applies to them.",
    set: (c, r) => (c.smtp.trustedNetworks = networks(r)),
  },
  {
    name: 'SMTP_INFLIGHT_BYTES',
    default: '134217728',
    accepts: 'positive integer (bytes)',
    description: 'Message bytes held in memory for unfinished DATA, all clients together; a message that does not fit ends its connection with 421 4.3.1, and MAIL FROM gets 452 4.3.1 while it is nearly full.',
    set: (c, r) => (c.smtp.inflightBytes = positiveInt(r)),
  },
  {
    name: 'SMTP_CLIENT_INFLIGHT_BYTES',
    default: '(an eighth of SMTP_INFLIGHT_BYTES, at least MAX_MESSAGE_BYTES)',
    accepts: 'positive integer (bytes), at least MAX_MESSAGE_BYTES',
    description:
      "One client's share of SMTP_INFLIGHT_BYTES (IPv4 address, IPv6 /64), so that a few clients cannot take it all: its message that does not fit ends its connection with 421 4.7.0, and its MAIL FROM gets 452 4.7.0 while its share is nearly full.",
    set: (c, r) => (c.smtp.clientInflightBytes = r === '' ? 0 : positiveInt(r)),
  },
  {
    name: 'SMTP_DATA_MIN_RATE',
    default: '500',
    accepts: 'integer (bytes per second), 0 = no minimum',
    description: 'Slowest DATA transfer kept: one that brings less than this per second over a SMTP_DATA_RATE_WINDOW is ended with 421 4.4.2 and the connection closed (Postfix\'s smtpd_min_data_rate).',
    set: (c, r) => (c.smtp.dataMinRate = count(r)),
  },
  {
    name: 'SMTP_DATA_RATE_WINDOW',
    default: '30s',
    accepts: 'duration (s, m, h, d)',
    description: 'The window over which SMTP_DATA_MIN_RATE is measured; the first starts at the 354, so a transfer has one window of grace.',
    set: (c, r) => (c.smtp.dataRateWindowMs = duration(r)),
  },
  {
    name: 'SMTP_TRANSACTION_TIMEOUT',
    default: '10m',
    accepts: 'duration (s, m, h, d)',
    description: 'Longest time from MAIL FROM to the end of DATA; a slower transaction is ended with 421 and the connection closed.',
    set: (c, r) => (c.smtp.transactionTimeoutMs = duration(r)),
  },
  {
    name: 'SMTP_COMMAND_TIMEOUT',
    default: '60s',
    accepts: 'duration (s, m, h, d)',
    description: 'Longest time outside DATA to send a whole command line after the last one; a slower client gets 421 4.4.2 and the connection is closed (a byte at a time does not keep it open).',
    set: (c, r) => (c.smtp.commandTimeoutMs = duration(r)),
  },
  {
    name: 'SMTP_IDLE_TIMEOUT',
    default: '60s',
    accepts: 'duration (s, m, h, d)',
    description: 'Longest silence of an SMTP client (no byte at all, in DATA too); it is told 421 and the connection is closed.',
    set: (c, r) => (c.smtp.idleTimeoutMs = duration(r)),
  },
  {
    name: 'SMTP_MAX_JUNK_COMMANDS',
    default: '100',
    accepts: 'integer, 0 = no limit',
    description: 'Commands that move no mail (NOOP, RSET, VRFY, EXPN, HELP, HELO, EHLO) a session may send between two MAIL FROM; one more gets 421 4.7.0 and the connection is closed.',
    set: (c, r) => (c.smtp.maxJunkCommands = count(r)),
  },
  {
    name: 'SMTP_MAX_BAD_RECIPIENTS',
    default: '20',
    accepts: 'positive integer',
    description: 'Refused recipients one SMTP session may try; the next gets 421 and the connection is closed.',
    set: (c, r) => (c.smtp.maxBadRecipients = positiveInt(r)),
  },
  {
    name: 'SMTP_BAD_RECIPIENT_DELAY',
    default: '1s',
    accepts: 'duration, or 0',
    description: 'Each refused recipient after the third in a session is answered this much later (slows down address probing).',
    set: (c, r) => (c.smtp.badRecipientDelayMs = r === '0' ? 0 : duration(r)),
  },
  {
    name: 'SMTP_GREETING_DELAY',
    default: '0',
    accepts: 'duration up to 1m, or 0',
    description:
      'Pause between accepting an SMTP connection and its 220 greeting; a client that talks during it gets 421 and is closed (an "early talker", a spam trait). 0 greets at once.',
    set: (c, r) => {
      const ms = r === '0' ? 0 : duration(r);
      if (ms > 60_000) throw new ConfigError('at most 1m (clients wait 5 minutes for the greeting, RFC 5321 §4.5.3.2.1)');
      c.smtp.greetingDelayMs = ms;
    },
  },
  {
    name: 'SMTP_RATE_MESSAGES',
    default: '120/60',
    accepts: '<max>/<seconds>, or 0',
    description: 'Messages one client may send per window (shared through Redis); more get 421 4.7.0 at MAIL FROM.',
    set: (c, r) => (c.limits.smtp.messages = parseRateLimit(r)),
  },
  {
    name: 'SMTP_RATE_RECIPIENTS',
    default: '600/60',
    accepts: '<max>/<seconds>, or 0',
    description: 'Accepted recipients one client may give per window (shared through Redis); more get 452 4.7.0 at RCPT TO.',
    set: (c, r) => (c.limits.smtp.recipients = parseRateLimit(r)),
  },
  {
    name: 'SMTP_RATE_BYTES',
    default: '209715200/60',
    accepts: '<bytes>/<seconds>, or 0',
    description: 'Message bytes one client may send per window (shared through Redis), an oversize message\'s included; a message past it gets 452 4.7.0 and is not stored.',
    set: (c, r) => (c.limits.smtp.bytes = parseRateLimit(r)),
  },
  {
    name: 'SMTP_RATE_NEW_ADDRESSES',
    default: '60/60',
    accepts: '<max>/<seconds>, or 0',
    description: 'CATCH_ALL: addresses nobody created that one client may send to per window (shared through Redis), each created when its mail is stored; more get 452 4.7.0 at RCPT TO.',
    set: (c, r) => (c.limits.smtp.newAddresses = parseRateLimit(r)),
  },
  {
    name: 'SMTP_DAILY_BYTES',
    default: '1073741824',
    accepts: 'integer (bytes), 0 = no limit',
    description:
      'Message bytes one client (IPv4 address, IPv6 /64) may send in 24 hours (shared through Redis), an oversize message\'s included; once it is spent MAIL FROM gets 452 4.7.0 until the day\'s window ends.',
    set: (c, r) => (c.limits.smtp.dailyBytes = count(r)),
  },
  {
    name: 'DISK_MIN_FREE',
    default: '(1 GiB or 5% of the disk, whichever is smaller)',
    accepts: 'bytes, a percentage such as 5%, or 0',
    description: "SQLite: free space kept on DATA_DIR's disk (looked at once a second at most); below it MAIL FROM gets 452 4.3.1 and /health_check says storage low. 0: no check.",
    set: (c, r) => (c.storage.diskMinFree = r === '' ? { bytes: 1024 ** 3, percent: 5 } : freeSpace(r)),
  },
  { name: 'ADDRESS_MAX_MAILS', default: '1000', accepts: 'integer, 0 = no limit', description: 'Live mails one address may hold; at the limit RCPT TO gets 452 4.2.2.', set: (c, r) => (c.mail.addressMaxMails = count(r)) },
  {
    name: 'ADDRESS_MAX_BYTES',
    default: '104857600',
    accepts: 'integer (bytes), 0 = no limit',
    description: 'Bytes of live mail one address may hold; at the limit RCPT TO gets 452 4.2.2 (one message may cross it).',
    set: (c, r) => (c.mail.addressMaxBytes = count(r)),
  },
  { name: 'PARSE_TIMEOUT', default: '5s', accepts: 'duration (s, m, h, d)', description: 'Time budget to parse one message (in a worker thread); past it only its header is read.', set: (c, r) => (c.parse.timeoutMs = duration(r)) },
  {
    name: 'AUTH_CHECKS',
    default: 'on',
    accepts: 'on or off',
    description: 'SPF, DKIM, DMARC and ARC verdicts of every mail (metadata.auth), computed before its 250 with a DNS budget of 2 s per mail; off stores none.',
    set: (c, r) => (c.mailAuth.checks = bool(r)),
  },
  {
    name: 'DNS_SERVERS',
    default: '(the system resolvers)',
    accepts: 'comma list of ip[:port] ([v6]:port)',
    description: 'DNS resolvers the authentication checks ask (at most 8), e.g. 127.0.0.1:5353 for a local caching resolver.',
    set: (c, r) => (c.mailAuth.dnsServers = parseDnsServers(r)),
  },
  {
    name: 'SQLITE_SYNCHRONOUS',
    default: 'FULL',
    accepts: 'FULL or NORMAL',
    description: 'FULL: a mail is on disk (the WAL synced, off the event loop) before its 250 and survives a power loss. NORMAL: faster, survives a crash of the process only.',
    set: (c, r) => {
      const v = r.toUpperCase();
      if (v !== 'FULL' && v !== 'NORMAL') throw new ConfigError('FULL or NORMAL');
      c.storage.sqliteSynchronous = v;
    },
  },
  // Input sizes (docs/security.md "Limits").
  {
    name: 'SMTP_MAX_LINE_BYTES',
    default: '2048',
    accepts: 'integer, at least 512',
    description: 'Longest SMTP command line (RFC 5321 §4.5.3.1.4 allows 512 plus extensions); a longer one gets 421 and the connection is closed.',
    set: (c, r) => (c.smtp.maxLineBytes = atLeast(r, 512)),
  },
  {
    name: 'SMTP_MAX_RECIPIENTS',
    default: '100',
    accepts: 'integer, at least 100',
    description: 'Recipients of one message (RFC 5321 §4.5.3.1.8 asks for at least 100); more get 452 4.5.3.',
    set: (c, r) => (c.smtp.maxRecipients = atLeast(r, 100)),
  },
  {
    name: 'HTTP_REQUEST_TIMEOUT',
    default: '30s',
    accepts: 'duration (s, m, h, d)',
    description: 'Longest time to receive a whole HTTP request, headers and body (checked every few seconds); a slower one gets 408 and the connection is closed. Answers, event streams and waits are not limited by it.',
    set: (c, r) => (c.http.requestTimeoutMs = duration(r)),
  },
  { name: 'HTTP_BODY_LIMIT', default: '65536', accepts: 'positive integer (bytes)', description: 'Largest HTTP request body; a larger one gets 413.', set: (c, r) => (c.http.bodyLimit = positiveInt(r)) },
  {
    name: 'HTTP_MAX_PARAM_LENGTH',
    default: '200',
    accepts: 'positive integer',
    description: 'Longest path parameter (a mail uuid, an attachment id); a longer one is 404.',
    set: (c, r) => (c.http.maxParamLength = positiveInt(r)),
  },
  {
    name: 'HTTP_KEEP_ALIVE_TIMEOUT',
    default: '5s',
    accepts: 'duration, at most 2m',
    description: 'How long an idle keep-alive HTTP connection stays open after its last answer; then it is closed. A proxy in front must close its idle connections sooner (deploy/nginx: keepalive_timeout 4s).',
    set: (c, r) => {
      const ms = duration(r);
      if (ms > 120_000) throw new ConfigError('a duration of at most 2m');
      c.http.keepAliveTimeoutMs = ms;
    },
  },
  {
    name: 'HTTP_MAX_CONNECTIONS',
    default: '10000',
    accepts: 'positive integer',
    description: 'HTTP connections open at once, in all; one more is answered 503 with Retry-After and closed at once (docs/security.md "HTTP connections").',
    set: (c, r) => (c.http.maxConnections = positiveInt(r)),
  },
  {
    name: 'HTTP_MAX_CONNECTIONS_PER_CLIENT',
    default: '256',
    accepts: 'positive integer',
    description:
      'HTTP connections open at once from one socket peer (IPv4 address, IPv6 /64); one more is answered 429 with Retry-After and closed. A proxy TRUST_PROXY trusts is not capped (with a hop count: a peer on loopback or a private network).',
    set: (c, r) => (c.http.maxConnectionsPerClient = positiveInt(r)),
  },
  {
    name: 'HTTP_ANSWER_BYTES_PER_CLIENT',
    default: '67108864',
    accepts: 'positive integer (bytes)',
    description:
      'Bytes of large answers (a mail over 256 KiB, its source or .eml, an attachment) being sent to one client at once, by their sizes; one more is 429 with Retry-After. A client with none in flight may always start one.',
    set: (c, r) => (c.http.answerBytesPerClient = positiveInt(r)),
  },
  {
    name: 'HTTP_SEND_STALL_TIMEOUT',
    default: '30s',
    accepts: 'duration (s, m, h, d)',
    description: 'A large answer whose client takes none of its bytes for this long (while some wait to be sent) is ended and its connection closed.',
    set: (c, r) => (c.http.sendStallTimeoutMs = duration(r)),
  },
  { name: 'JWT_MAX_LENGTH', default: '4096', accepts: 'positive integer', description: 'Longest token accepted; a longer one is 401 without being verified.', set: (c, r) => (c.mail.jwtMaxLength = positiveInt(r)) },
  { name: 'EVENTS_PER_CLIENT', default: '100', accepts: 'positive integer', description: 'Event streams and waits open at once from one client; more get 429.', set: (c, r) => (c.events.perClient = positiveInt(r)) },
  { name: 'EVENTS_PER_ADDRESS', default: '100', accepts: 'positive integer', description: 'Event streams and waits open at once on one address; more get 429.', set: (c, r) => (c.events.perAddress = positiveInt(r)) },
  { name: 'EVENTS_PER_NODE', default: '10000', accepts: 'positive integer', description: 'Event streams and waits open at once on one node; more get 503.', set: (c, r) => (c.events.perNode = positiveInt(r)) },
  { name: 'PARSE_THREADS', default: '1', accepts: 'positive integer', description: 'Worker threads that parse incoming mail (plus one spare for small messages while a large one is slow to parse).', set: (c, r) => (c.parse.threads = positiveInt(r)) },
  {
    name: 'PARSE_VIEWS_PER_CLIENT',
    default: '4',
    accepts: 'positive integer',
    description:
      'Parsed views (GET /api/mail/{uuid}/parsed, GET /mailtm/messages/{id}) one client (IPv4 address, IPv6 /64) may have waiting for the parser or being parsed at once; more get 429. Waiting clients take turns for the threads.',
    set: (c, r) => (c.parse.viewsPerClient = positiveInt(r)),
  },
  {
    name: 'PARSE_VIEWS_WAITING',
    default: '64',
    accepts: 'positive integer',
    description: 'Parsed views waiting for the parser or being parsed at once, from every client; more get 503 with Retry-After. A waiting view holds no message.',
    set: (c, r) => (c.parse.viewsWaiting = positiveInt(r)),
  },
  {
    name: 'MAILTM_LOGIN_FAILURES',
    default: '10/900',
    accepts: '<max>/<seconds>, or 0',
    description:
      'Failed POST /mailtm/token logins per account per window (shared through Redis); past it every login to that address is 429 with Retry-After until the window ends, an address that does not exist alike.',
    set: (c, r) => (c.limits.mailtmLogin.perAccount = parseRateLimit(r)),
  },
  {
    name: 'MAILTM_LOGIN_FAILURES_NETWORK',
    default: '30/900',
    accepts: '<max>/<seconds>, or 0',
    description: 'Failed mail.tm logins per IPv6 /48 or IPv4 /24 per window, whatever the account; past it logins from there are 429 until the window ends.',
    set: (c, r) => (c.limits.mailtmLogin.perNetwork = parseRateLimit(r)),
  },
  {
    name: 'MAILTM_LOGIN_FAILURES_PROVIDER',
    default: '100/900',
    accepts: '<max>/<seconds>, or 0',
    description: 'Failed mail.tm logins per IPv6 /32 per window; past it logins from there are 429 until the window ends.',
    set: (c, r) => (c.limits.mailtmLogin.perProvider = parseRateLimit(r)),
  },
  {
    name: 'SANDBOXES',
    default: '(none)',
    accepts: 'space-separated name:password pairs',
    description:
      'Sandboxes (SMTP logins with an inbox of their own, like Mailpit\'s MP_SMTP_AUTH) created at start-up, or given this password when they exist (their mail is kept). Without any sandbox SMTP offers no AUTH.',
    set: (c, r) => {
      try {
        c.sandboxes.logins = parseSandboxes(r);
      } catch (err) {
        throw new ConfigError(`space-separated name:password pairs (${(err as Error).message})`);
      }
    },
  },
  {
    name: 'SMTP_AUTH_ALLOW_INSECURE',
    default: 'false',
    accepts: 'true or false',
    description: 'true: SMTP AUTH without TLS from any client. Otherwise only loopback clients may log in without STARTTLS; others get 538 5.7.11.',
    set: (c, r) => (c.smtp.authAllowInsecure = bool(r)),
  },
  { name: 'SANDBOX_MAX_MAILS', default: '1000', accepts: 'integer, 0 = no limit', description: 'Mails a new sandbox keeps; past it the oldest are removed.', set: (c, r) => (c.sandboxes.maxMails = count(r)) },
  {
    name: 'SANDBOX_MAX_BYTES',
    default: '104857600',
    accepts: 'integer (bytes), 0 = no limit',
    description: 'Bytes of mail a new sandbox keeps (100 MiB); past it the oldest mails are removed.',
    set: (c, r) => (c.sandboxes.maxBytes = count(r)),
  },
  { name: 'SANDBOX_RETENTION', default: '7d', accepts: 'duration (s, m, h, d)', description: "How long a new sandbox's mail is kept.", set: (c, r) => (c.sandboxes.retentionMs = duration(r)) },
  {
    name: 'SANDBOX_LOGIN_FAILURES',
    default: '10/900',
    accepts: '<max>/<seconds>, or 0',
    description: 'Failed sandbox logins (SMTP AUTH, POST /api/sandbox/token) per client per window; past it its logins get 421 (SMTP) or 429 until the window ends.',
    set: (c, r) => (c.limits.sandboxLogin.client = parseRateLimit(r)),
  },
  {
    name: 'SANDBOX_LOGIN_FAILURES_PER_NAME',
    default: '30/900',
    accepts: '<max>/<seconds>, or 0',
    description: 'Failed logins to one sandbox name per window, from any client; past it logins to it are refused until the window ends.',
    set: (c, r) => (c.limits.sandboxLogin.login = parseRateLimit(r)),
  },
];
