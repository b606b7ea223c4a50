// The configuration contract: every environment variable with its default and
// description, in one table. A bad value stops start-up with one clear line.
// The README's configuration table is generated from CONFIG_VARIABLES.
import { isIP } from 'node:net';
import { hostname } from 'node:os';
import { parseDuration } from './duration.js';

export class ConfigError extends Error {
  override name = 'ConfigError';
}

export interface RateLimitRule {
  /** Requests allowed per window; 0 disables the limit. */
  max: number;
  windowSeconds: number;
}

export const RATE_LIMIT_ROUTES = {
  NEW_ADDRESS: { max: 10, windowSeconds: 60 },
  MAILS: { max: 60, windowSeconds: 60 },
  MAIL: { max: 60, windowSeconds: 60 },
  SETTINGS: { max: 60, windowSeconds: 60 },
  SWITCH_ADDRESS: { max: 30, windowSeconds: 60 },
  DELETE_ADDRESS: { max: 10, windowSeconds: 60 },
  CLEAR_INBOX: { max: 10, windowSeconds: 60 },
  ATTACHMENT: { max: 60, windowSeconds: 60 },
} as const satisfies Record<string, RateLimitRule>;
export type RateLimitRoute = keyof typeof RATE_LIMIT_ROUTES;

export type TrustProxy = boolean | number | string | string[];

export interface Config {
  httpHost: string;
  httpPort: number;
  smtpHost: string;
  smtpPort: number;
  smtpHostname: string;
  smtpTlsCert: string | undefined;
  smtpTlsKey: string | undefined;
  dataDir: string;
  databaseUrl: string | undefined;
  databaseSchema: string | undefined;
  redisUrl: string | undefined;
  redisKeyPrefix: string;
  mailDomains: string[];
  jwtSecret: string | undefined;
  sessionSecret: string | undefined;
  turnstileSecretKey: string | undefined;
  turnstileSiteKey: string | undefined;
  turnstileVerifyUrl: string;
  customNames: boolean;
  nameBlocklist: string[];
  rateLimits: Record<RateLimitRoute, RateLimitRule>;
  trustProxy: TrustProxy | undefined;
  maxMessageBytes: number;
  mailTtlMs: number;
  addressTtlMs: number;
  sweepIntervalMs: number;
  eventsHeartbeatMs: number;
  metricsToken: string | undefined;
  logLevel: string;
  /** RATE_LIMITS=off: every per-client limit below and RATE_LIMIT_<ROUTE> off. */
  rateLimitsOn: boolean;
  smtpMaxClients: number;
  smtpMaxClientsPerIp: number;
  smtpInflightBytes: number;
  smtpTransactionTimeoutMs: number;
  smtpMaxBadRecipients: number;
  smtpBadRecipientDelayMs: number;
  smtpRateMessages: RateLimitRule;
  smtpRateRecipients: RateLimitRule;
  smtpRateBytes: RateLimitRule;
  addressMaxMails: number;
  addressMaxBytes: number;
  parseTimeoutMs: number;
  parseThreads: number;
  sqliteSynchronous: 'FULL' | 'NORMAL';
  smtpMaxLineBytes: number;
  smtpMaxRecipients: number;
  httpBodyLimit: number;
  httpMaxParamLength: number;
  jwtMaxLength: number;
  eventsPerClient: number;
  eventsPerAddress: number;
  eventsPerNode: number;
}

type Setter = (c: Config, raw: string) => void;

export interface VariableSpec {
  name: string;
  default: string;
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
const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

function port(raw: string): number {
  if (!/^\d{1,5}$/.test(raw) || Number(raw) > 65535) throw new ConfigError('a port number 0..65535');
  return Number(raw);
}

function host(raw: string): string {
  if (raw === '' || /\s/.test(raw)) throw new ConfigError('an IP address or host name');
  return raw;
}

/** A file-system path: anything but empty or a NUL byte (spaces are fine). */
function path(raw: string): string {
  if (raw === '' || raw.includes('\0')) throw new ConfigError('a directory path');
  return raw;
}

function bool(raw: string): boolean {
  const v = raw.toLowerCase();
  if (['true', '1', 'yes', 'on'].includes(v)) return true;
  if (['false', '0', 'no', 'off'].includes(v)) return false;
  throw new ConfigError('true or false');
}

function positiveInt(raw: string): number {
  if (!/^\d+$/.test(raw) || Number(raw) < 1 || !Number.isSafeInteger(Number(raw))) throw new ConfigError('a positive whole number');
  return Number(raw);
}

function duration(raw: string): number {
  const ms = parseDuration(raw);
  if (ms === undefined || ms <= 0) throw new ConfigError('a duration such as 30s, 15m, 12h or 7d');
  return ms;
}

function optional(raw: string): string | undefined {
  return raw === '' ? undefined : raw;
}

const DOMAIN_RE = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/;

function domains(raw: string): string[] {
  const list = raw.split(',').map((d) => d.trim().toLowerCase()).filter((d) => d !== '');
  if (list.length === 0 || !list.every((d) => DOMAIN_RE.test(d))) throw new ConfigError('a comma-separated list of domain names');
  return [...new Set(list)];
}

export function parseRateLimit(raw: string): RateLimitRule {
  if (raw === '0') return { max: 0, windowSeconds: 1 };
  const m = /^(\d+)\/(\d+)$/.exec(raw);
  if (!m || Number(m[1]) < 1 || Number(m[2]) < 1) throw new ConfigError('<max>/<seconds> with both at least 1, or 0 to disable');
  return { max: Number(m[1]), windowSeconds: Number(m[2]) };
}

/** Fastify's trustProxy forms: true/false, a hop count, or addresses/CIDRs. */
export function parseTrustProxy(raw: string): TrustProxy | undefined {
  if (raw === '') return undefined;
  const v = raw.toLowerCase();
  // "true" would believe the left-most X-Forwarded-For entry, which the client writes itself.
  if (v === 'true') throw new ConfigError('a hop count (such as 1) or the proxies\' addresses; trusting every proxy is refused because it lets clients choose their own address');
  if (v === 'false') return false;
  if (/^\d+$/.test(v)) return Number(v);
  const list = raw.split(',').map((s) => s.trim()).filter(Boolean);
  const ok = list.every((entry) => {
    const [ip, bits, extra] = entry.split('/');
    if (extra !== undefined || ip === undefined) return false;
    if (['loopback', 'linklocal', 'uniquelocal'].includes(ip) && bits === undefined) return true;
    const family = isIP(ip);
    if (family === 0) return false;
    return bits === undefined || (/^\d+$/.test(bits) && Number(bits) <= (family === 4 ? 32 : 128));
  });
  if (!ok || list.length === 0) throw new ConfigError('a hop count, or a comma list of IPs/CIDRs (loopback, linklocal, uniquelocal allowed)');
  return list.length === 1 ? list[0] : list;
}

export const CONFIG_VARIABLES: VariableSpec[] = [
  { name: 'HTTP_HOST', default: '0.0.0.0', accepts: 'IP or host', description: 'Address the HTTP API listens on.', set: (c, r) => (c.httpHost = host(r)) },
  { name: 'HTTP_PORT', default: '8080', accepts: '0..65535', description: 'Port of the HTTP API (0 picks a free port).', set: (c, r) => (c.httpPort = port(r)) },
  { name: 'SMTP_HOST', default: '0.0.0.0', accepts: 'IP or host', description: 'Address the SMTP receiver listens on.', set: (c, r) => (c.smtpHost = host(r)) },
  { name: 'SMTP_PORT', default: '2525', accepts: '0..65535', description: 'Port of the SMTP receiver (use 25 in production).', set: (c, r) => (c.smtpPort = port(r)) },
  { name: 'SMTP_HOSTNAME', default: '(the machine host name)', accepts: 'host name', description: 'Name the SMTP server greets with and writes into Received: lines.', set: (c, r) => (c.smtpHostname = host(r)) },
  { name: 'SMTP_TLS_CERT', default: '(unset)', accepts: 'PEM file path', description: 'Certificate for STARTTLS; STARTTLS is offered only when this and SMTP_TLS_KEY are set.', set: (c, r) => (c.smtpTlsCert = optional(r)) },
  { name: 'SMTP_TLS_KEY', default: '(unset)', accepts: 'PEM file path', description: 'Private key for STARTTLS.', set: (c, r) => (c.smtpTlsKey = optional(r)) },
  { name: 'DATA_DIR', default: './data', accepts: 'directory path', description: 'Holds the SQLite file and the generated secrets (created 0700, its files 0600).', set: (c, r) => (c.dataDir = path(r)) },
  {
    name: 'DATABASE_URL',
    default: '(unset = SQLite in DATA_DIR)',
    accepts: 'postgres://… URL',
    description: 'Selects PostgreSQL storage for multi-node deployments.',
    set: (c, r) => {
      if (r !== '' && !/^postgres(ql)?:\/\//.test(r)) throw new ConfigError('a postgres:// or postgresql:// URL, or empty for SQLite');
      c.databaseUrl = optional(r);
    },
  },
  {
    name: 'DATABASE_SCHEMA',
    default: '(unset = the connection default, usually public)',
    accepts: 'SQL identifier',
    description: 'PostgreSQL schema to keep the tables in; created when missing.',
    set: (c, r) => {
      if (r !== '' && !/^[A-Za-z_][A-Za-z0-9_]{0,62}$/.test(r)) throw new ConfigError('a schema name of letters, digits and _ (at most 63)');
      c.databaseSchema = optional(r);
    },
  },
  {
    name: 'REDIS_URL',
    default: '(unset = in-process)',
    accepts: 'redis:// URL',
    description: 'Shares rate-limit counters and inbox events (push, long-poll) between nodes.',
    set: (c, r) => {
      if (r !== '' && !/^rediss?:\/\//.test(r)) throw new ConfigError('a redis:// or rediss:// URL');
      c.redisUrl = optional(r);
    },
  },
  {
    name: 'REDIS_KEY_PREFIX',
    default: 'ti:',
    accepts: 'printable text without spaces',
    description: 'Prefix of every Redis key, so deployments can share one Redis.',
    set: (c, r) => {
      if (!/^[\x21-\x7e]{1,64}$/.test(r)) throw new ConfigError('1-64 printable characters without spaces');
      c.redisKeyPrefix = r;
    },
  },
  { name: 'MAIL_DOMAINS', default: 'temp-inbox.localhost', accepts: 'comma list of domains', description: 'Domains mail is accepted for; the first is the default for new addresses.', set: (c, r) => (c.mailDomains = domains(r)) },
  { name: 'JWT_SECRET', default: '(generated once, kept in DATA_DIR)', accepts: 'string, 32+ characters', description: 'HS256 key for address tokens. Set the same value on every node.', set: (c, r) => (c.jwtSecret = secret(r)) },
  { name: 'SESSION_SECRET', default: '(generated once, kept in DATA_DIR)', accepts: 'string, 32+ characters', description: 'HMAC key for the session_id cookie. Set the same value on every node.', set: (c, r) => (c.sessionSecret = secret(r)) },
  { name: 'TURNSTILE_SECRET_KEY', default: '(unset = challenge disabled)', accepts: 'string', description: 'Enables the bot challenge on POST /api/new_address.', set: (c, r) => (c.turnstileSecretKey = optional(r)) },
  { name: 'TURNSTILE_SITE_KEY', default: '(unset)', accepts: 'string', description: 'Site key shown to the browser UI.', set: (c, r) => (c.turnstileSiteKey = optional(r)) },
  {
    name: 'TURNSTILE_VERIFY_URL',
    default: 'https://challenges.cloudflare.com/turnstile/v0/siteverify',
    accepts: 'http(s) URL',
    description: 'Where challenge tokens are verified (overridable for tests and proxies).',
    set: (c, r) => {
      if (!/^https?:\/\/\S+$/.test(r) || !URL.canParse(r)) throw new ConfigError('an http:// or https:// URL');
      c.turnstileVerifyUrl = r;
    },
  },
  { name: 'CUSTOM_NAMES', default: 'true', accepts: 'true or false', description: 'false refuses requested names (403); random names still work.', set: (c, r) => (c.customNames = bool(r)) },
  {
    name: 'NAME_BLOCKLIST',
    default: DEFAULT_BLOCKLIST,
    accepts: 'comma list of names',
    description: 'Local parts that can never be requested (400), compared after removing ".", "-" and "_"; setting it replaces the default list (docs/security.md "Names").',
    set: (c, r) => (c.nameBlocklist = r.split(',').map((s) => s.trim().toLowerCase()).filter(Boolean)),
  },
  ...Object.entries(RATE_LIMIT_ROUTES).map(
    ([route, rule]): VariableSpec => ({
      name: `RATE_LIMIT_${route}`,
      default: `${rule.max}/${rule.windowSeconds}`,
      accepts: '<max>/<seconds>, or 0',
      description: `Per-IP limit of ${route.toLowerCase().replace(/_/g, ' ')} requests; 0 disables it.`,
      set: (c, r) => (c.rateLimits[route as RateLimitRoute] = parseRateLimit(r)),
    }),
  ),
    {
    name: 'TRUST_PROXY',
    default: '(unset = trust no proxy)',
    accepts: 'hop count, or IP/CIDR list',
    description: "Which proxies' X-Forwarded-For to believe: the number of proxies in front (usually 1) or their addresses. true is refused: it would believe what the client writes.",
    set: (c, r) => (c.trustProxy = parseTrustProxy(r)),
  },
  { name: 'MAX_MESSAGE_BYTES', default: '10485760', accepts: 'positive integer', description: 'SMTP SIZE; larger mail is refused with 552 5.3.4.', set: (c, r) => (c.maxMessageBytes = positiveInt(r)) },
  { name: 'MAIL_TTL', default: '7d', accepts: 'duration (s, m, h, d)', description: 'Mail older than this is purged.', set: (c, r) => (c.mailTtlMs = duration(r)) },
  { name: 'ADDRESS_TTL', default: '7d', accepts: 'duration (s, m, h, d)', description: 'Addresses older than this are purged with their mail.', set: (c, r) => (c.addressTtlMs = duration(r)) },
  { name: 'SWEEP_INTERVAL', default: '1m', accepts: 'duration (s, m, h, d)', description: 'How often the retention sweep runs.', set: (c, r) => (c.sweepIntervalMs = duration(r)) },
  {
    name: 'EVENTS_HEARTBEAT',
    default: '15s',
    accepts: 'duration (s, m, h, d)',
    description: 'How often an idle GET /api/events stream gets a comment line (keeps proxies from closing it) and its token is checked again.',
    set: (c, r) => (c.eventsHeartbeatMs = duration(r)),
  },
  {
    name: 'METRICS_TOKEN',
    default: '(unset = no /metrics)',
    accepts: 'string, 16+ characters',
    description: 'Serves Prometheus metrics at GET /metrics to requests with "Authorization: Bearer <this token>".',
    set: (c, r) => {
      if (r !== '' && r.length < 16) throw new ConfigError('a token of at least 16 characters (or leave it unset for no /metrics)');
      c.metricsToken = optional(r);
    },
  },
  {
    name: 'LOG_LEVEL',
    default: 'info',
    accepts: LOG_LEVELS.join(', '),
    description: 'Structured (JSON) log verbosity.',
    set: (c, r) => {
      if (!LOG_LEVELS.includes(r)) throw new ConfigError(`one of ${LOG_LEVELS.join(', ')}`);
      c.logLevel = r;
    },
  },
  // Limits on what one SMTP client can take (docs/security.md).
  { name: 'RATE_LIMITS', default: 'on', accepts: 'on or off', description: 'off disables every per-client rate limit, HTTP and SMTP (for test environments).', set: (c, r) => (c.rateLimitsOn = bool(r)) },
  { name: 'SMTP_MAX_CLIENTS', default: '1000', accepts: 'positive integer', description: 'SMTP connections open at once, in all; more get 421.', set: (c, r) => (c.smtpMaxClients = positiveInt(r)) },
  {
    name: 'SMTP_MAX_CLIENTS_PER_IP',
    default: '10',
    accepts: 'positive integer',
    description: 'SMTP connections open at once from one client (IPv4 address, IPv6 /64); more get 421 4.7.0.',
    set: (c, r) => (c.smtpMaxClientsPerIp = positiveInt(r)),
  },
  {
    name: 'SMTP_INFLIGHT_BYTES',
    default: '134217728',
    accepts: 'positive integer (bytes)',
    description: 'Message bytes held in memory for unfinished DATA, all clients together; past it MAIL FROM and DATA get 452 4.3.1 (try later).',
    set: (c, r) => (c.smtpInflightBytes = positiveInt(r)),
  },
  {
    name: 'SMTP_TRANSACTION_TIMEOUT',
    default: '10m',
    accepts: 'duration (s, m, h, d)',
    description: 'Longest time from MAIL FROM to the end of DATA; a slower transaction is ended with 421 and the connection closed.',
    set: (c, r) => (c.smtpTransactionTimeoutMs = duration(r)),
  },
  {
    name: 'SMTP_MAX_BAD_RECIPIENTS',
    default: '20',
    accepts: 'positive integer',
    description: 'Refused recipients one SMTP session may try; the next gets 421 and the connection is closed.',
    set: (c, r) => (c.smtpMaxBadRecipients = positiveInt(r)),
  },
  {
    name: 'SMTP_BAD_RECIPIENT_DELAY',
    default: '1s',
    accepts: 'duration, or 0',
    description: 'Each refused recipient after the third in a session is answered this much later (slows down address probing).',
    set: (c, r) => (c.smtpBadRecipientDelayMs = r === '0' ? 0 : duration(r)),
  },
  {
    name: 'SMTP_RATE_MESSAGES',
    default: '120/60',
    accepts: '<max>/<seconds>, or 0',
    description: 'Messages one client may send per window (shared through Redis); more get 421 4.7.0 at MAIL FROM.',
    set: (c, r) => (c.smtpRateMessages = parseRateLimit(r)),
  },
  {
    name: 'SMTP_RATE_RECIPIENTS',
    default: '600/60',
    accepts: '<max>/<seconds>, or 0',
    description: 'Accepted recipients one client may give per window (shared through Redis); more get 452 4.7.0 at RCPT TO.',
    set: (c, r) => (c.smtpRateRecipients = parseRateLimit(r)),
  },
  {
    name: 'SMTP_RATE_BYTES',
    default: '209715200/60',
    accepts: '<bytes>/<seconds>, or 0',
    description: 'Message bytes one client may send per window (shared through Redis); a message past it gets 452 4.7.0 and is not stored.',
    set: (c, r) => (c.smtpRateBytes = parseRateLimit(r)),
  },
  { name: 'ADDRESS_MAX_MAILS', default: '1000', accepts: 'integer, 0 = no limit', description: 'Live mails one address may hold; at the limit RCPT TO gets 452 4.2.2.', set: (c, r) => (c.addressMaxMails = count(r)) },
  {
    name: 'ADDRESS_MAX_BYTES',
    default: '104857600',
    accepts: 'integer (bytes), 0 = no limit',
    description: 'Bytes of live mail one address may hold; at the limit RCPT TO gets 452 4.2.2 (one message may cross it).',
    set: (c, r) => (c.addressMaxBytes = count(r)),
  },
  { name: 'PARSE_TIMEOUT', default: '5s', accepts: 'duration (s, m, h, d)', description: 'Time budget to parse one message (in a worker thread); past it only its header is read.', set: (c, r) => (c.parseTimeoutMs = duration(r)) },
  {
    name: 'SQLITE_SYNCHRONOUS',
    default: 'FULL',
    accepts: 'FULL or NORMAL',
    description: 'FULL: a mail is on disk (fsync) before its 250 and survives a power loss. NORMAL: faster, survives a crash of the process only.',
    set: (c, r) => {
      const v = r.toUpperCase();
      if (v !== 'FULL' && v !== 'NORMAL') throw new ConfigError('FULL or NORMAL');
      c.sqliteSynchronous = v;
    },
  },
  // Input sizes (docs/security.md "Limits").
  {
    name: 'SMTP_MAX_LINE_BYTES',
    default: '2048',
    accepts: 'integer, at least 512',
    description: 'Longest SMTP command line (RFC 5321 §4.5.3.1.4 allows 512 plus extensions); a longer one gets 421 and the connection is closed.',
    set: (c, r) => (c.smtpMaxLineBytes = atLeast(r, 512)),
  },
  {
    name: 'SMTP_MAX_RECIPIENTS',
    default: '100',
    accepts: 'integer, at least 100',
    description: 'Recipients of one message (RFC 5321 §4.5.3.1.8 asks for at least 100); more get 452 4.5.3.',
    set: (c, r) => (c.smtpMaxRecipients = atLeast(r, 100)),
  },
  { name: 'HTTP_BODY_LIMIT', default: '65536', accepts: 'positive integer (bytes)', description: 'Largest HTTP request body; a larger one gets 413.', set: (c, r) => (c.httpBodyLimit = positiveInt(r)) },
  {
    name: 'HTTP_MAX_PARAM_LENGTH',
    default: '200',
    accepts: 'positive integer',
    description: 'Longest path parameter (a mail uuid, an attachment id); a longer one is 404.',
    set: (c, r) => (c.httpMaxParamLength = positiveInt(r)),
  },
  { name: 'JWT_MAX_LENGTH', default: '4096', accepts: 'positive integer', description: 'Longest token accepted; a longer one is 401 without being verified.', set: (c, r) => (c.jwtMaxLength = positiveInt(r)) },
  { name: 'EVENTS_PER_CLIENT', default: '100', accepts: 'positive integer', description: 'Event streams and waits open at once from one client; more get 429.', set: (c, r) => (c.eventsPerClient = positiveInt(r)) },
  { name: 'EVENTS_PER_ADDRESS', default: '100', accepts: 'positive integer', description: 'Event streams and waits open at once on one address; more get 429.', set: (c, r) => (c.eventsPerAddress = positiveInt(r)) },
  { name: 'EVENTS_PER_NODE', default: '10000', accepts: 'positive integer', description: 'Event streams and waits open at once on one node; more get 503.', set: (c, r) => (c.eventsPerNode = positiveInt(r)) },
  { name: 'PARSE_THREADS', default: '1', accepts: 'positive integer', description: 'Worker threads that parse incoming mail.', set: (c, r) => (c.parseThreads = positiveInt(r)) },
];

function atLeast(raw: string, min: number): number {
  const n = positiveInt(raw);
  if (n < min) throw new ConfigError(`a whole number of at least ${min}`);
  return n;
}

function count(raw: string): number {
  if (raw === '0') return 0;
  return positiveInt(raw);
}

function secret(raw: string): string | undefined {
  if (raw === '') return undefined;
  if (raw.length < 32) throw new ConfigError('a secret of at least 32 characters (or leave it unset to generate one)');
  return raw;
}

export function defaultConfig(): Config {
  return {
    httpHost: '0.0.0.0',
    httpPort: 8080,
    smtpHost: '0.0.0.0',
    smtpPort: 2525,
    smtpHostname: hostname() || 'localhost',
    smtpTlsCert: undefined,
    smtpTlsKey: undefined,
    dataDir: './data',
    databaseUrl: undefined,
    databaseSchema: undefined,
    redisUrl: undefined,
    redisKeyPrefix: 'ti:',
    mailDomains: ['temp-inbox.localhost'],
    jwtSecret: undefined,
    sessionSecret: undefined,
    turnstileSecretKey: undefined,
    turnstileSiteKey: undefined,
    turnstileVerifyUrl: 'https://challenges.cloudflare.com/turnstile/v0/siteverify',
    customNames: true,
    nameBlocklist: DEFAULT_BLOCKLIST.split(','),
    rateLimits: structuredClone(RATE_LIMIT_ROUTES) as Record<RateLimitRoute, RateLimitRule>,
    trustProxy: undefined,
    maxMessageBytes: 10 * 1024 * 1024,
    mailTtlMs: 7 * 86_400_000,
    addressTtlMs: 7 * 86_400_000,
    sweepIntervalMs: 60_000,
    eventsHeartbeatMs: 15_000,
    metricsToken: undefined,
    logLevel: 'info',
    rateLimitsOn: true,
    smtpMaxClients: 1000,
    smtpMaxClientsPerIp: 10,
    smtpInflightBytes: 128 * 1024 * 1024,
    smtpTransactionTimeoutMs: 10 * 60_000,
    smtpMaxBadRecipients: 20,
    smtpBadRecipientDelayMs: 1000,
    smtpRateMessages: { max: 120, windowSeconds: 60 },
    smtpRateRecipients: { max: 600, windowSeconds: 60 },
    smtpRateBytes: { max: 200 * 1024 * 1024, windowSeconds: 60 },
    addressMaxMails: 1000,
    addressMaxBytes: 100 * 1024 * 1024,
    parseTimeoutMs: 5000,
    parseThreads: 1,
    sqliteSynchronous: 'FULL',
    smtpMaxLineBytes: 2048,
    smtpMaxRecipients: 100,
    httpBodyLimit: 64 * 1024,
    httpMaxParamLength: 200,
    jwtMaxLength: 4096,
    eventsPerClient: 100,
    eventsPerAddress: 100,
    eventsPerNode: 10_000,
  };
}

/**
 * Reads the configuration from an environment. Throws ConfigError whose message
 * is one line naming the variable and what it accepts.
 */
export function loadConfig(env: Record<string, string | undefined>, defaults: Partial<Config> = {}): Config {
  const config = { ...defaultConfig(), ...defaults };
  config.rateLimits = { ...config.rateLimits };
  for (const spec of CONFIG_VARIABLES) {
    const raw = env[spec.name];
    if (raw === undefined) continue;
    try {
      spec.set(config, raw.trim());
    } catch (err) {
      // The value itself is never repeated: it may be a secret typed into the wrong variable.
      if (err instanceof ConfigError) throw new ConfigError(`${spec.name} is invalid: expected ${err.message}.`);
      throw err;
    }
  }
  if (!config.rateLimitsOn) {
    const off = { max: 0, windowSeconds: 1 };
    for (const route of Object.keys(config.rateLimits) as RateLimitRoute[]) config.rateLimits[route] = off;
    config.smtpRateMessages = config.smtpRateRecipients = config.smtpRateBytes = off;
  }
  if (config.smtpInflightBytes < config.maxMessageBytes) {
    throw new ConfigError('SMTP_INFLIGHT_BYTES must be at least MAX_MESSAGE_BYTES, or no message of the largest size could ever be taken.');
  }
  if ((config.smtpTlsCert === undefined) !== (config.smtpTlsKey === undefined)) {
    throw new ConfigError('SMTP_TLS_CERT and SMTP_TLS_KEY must be set together.');
  }
  return config;
}
