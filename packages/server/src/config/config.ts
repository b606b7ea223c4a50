// The configuration the server runs with, as loadConfig builds it from the environment.
import type { DomainSelection } from '../domain/domain-pool.js';
import type { ScannerTarget } from '../domain/spam-scanner-url.js';
import type { CorsOrigins, FreeSpace, RateLimitRule, TrustProxy } from './values.js';

/** The bot challenge on POST /api/new_address (docs/decisions.md "Bot challenge"). */
export const CHALLENGE_MODES = ['turnstile', 'pow', 'off'] as const;
export type ChallengeMode = (typeof CHALLENGE_MODES)[number];

export const RATE_LIMIT_ROUTES = {
  NEW_ADDRESS: { max: 10, windowSeconds: 60 },
  // GET /api/challenge (CHALLENGE=pow): a challenge per attempt, so twice NEW_ADDRESS.
  CHALLENGE: { max: 20, windowSeconds: 60 },
  MAILS: { max: 60, windowSeconds: 60 },
  MAIL: { max: 60, windowSeconds: 60 },
  // Each request parses a stored message again, on the threads that parse incoming mail.
  PARSED_MAIL: { max: 30, windowSeconds: 60 },
  SETTINGS: { max: 60, windowSeconds: 60 },
  SWITCH_ADDRESS: { max: 30, windowSeconds: 60 },
  DELETE_ADDRESS: { max: 10, windowSeconds: 60 },
  CLEAR_INBOX: { max: 10, windowSeconds: 60 },
  ATTACHMENT: { max: 60, windowSeconds: 60 },
  // Every /api/admin/* request (ADMIN_TOKEN), counted before the token is checked.
  ADMIN: { max: 60, windowSeconds: 60 },
  // The mail.tm-compatible API (MAILTM_API): POST /mailtm/token checks a password (a slow hash,
  // the brute-force target), POST /mailtm/accounts creates an address like POST /api/new_address.
  MAILTM_TOKEN: { max: 10, windowSeconds: 60 },
  MAILTM_ACCOUNTS: { max: 10, windowSeconds: 60 },
  // Every other /mailtm route: mail.tm's own documented quota, 8 requests a second per IP,
  // which its clients are written for (they poll the message list rather than wait).
  MAILTM: { max: 480, windowSeconds: 60 },
  // Its routes that answer a whole message or attachment (sources, .eml downloads, attachments):
  // each is up to MAX_MESSAGE_BYTES to send, so they are not counted at mail.tm's polling quota.
  MAILTM_DOWNLOAD: { max: 60, windowSeconds: 60 },
  // Every /mailpit and /mailhog route (the sandboxes' compatible APIs): their clients poll
  // the list or a search (mailpit-api's waitForMessage every 0.5 s), so mail.tm's quota.
  MAILPIT: { max: 480, windowSeconds: 60 },
  MAILHOG: { max: 480, windowSeconds: 60 },
  // PUT, GET and DELETE /api/webhook and GET /api/webhook/deliveries (a PUT resolves the URL's host name).
  WEBHOOK: { max: 30, windowSeconds: 60 },
  // POST /api/sandbox/token checks a password (a slow hash); GET /api/sandbox and GET, PUT /api/sandbox/chaos.
  SANDBOX_TOKEN: { max: 10, windowSeconds: 60 },
  SANDBOX: { max: 60, windowSeconds: 60 },
  // POST, DELETE /mcp (MCP=on): every message of an MCP session, a tool call being one (its waits
  // also count under EVENTS_PER_CLIENT and EVENTS_PER_ADDRESS, as GET /api/mails/wait does).
  MCP: { max: 120, windowSeconds: 60 },
} as const satisfies Record<string, RateLimitRule>;
export type RateLimitRoute = keyof typeof RATE_LIMIT_ROUTES;

/** HTTP_*, TRUST_PROXY, CORS_ORIGINS: the HTTP server itself (http/app.ts and its connection and answer caps). */
export interface HttpConfig {
  host: string;
  port: number;
  trustProxy: TrustProxy | undefined;
  /** CORS_ORIGINS: undefined = no cross-origin access. */
  corsOrigins: CorsOrigins | undefined;
  bodyLimit: number;
  requestTimeoutMs: number;
  maxParamLength: number;
  /** HTTP_KEEP_ALIVE_TIMEOUT: how long an idle keep-alive connection stays open after an answer. */
  keepAliveTimeoutMs: number;
  /** HTTP_MAX_CONNECTIONS: HTTP connections open at once, in all (http/connection-caps.ts). */
  maxConnections: number;
  /** HTTP_MAX_CONNECTIONS_PER_CLIENT: the same from one socket peer (a trusted proxy excepted). */
  maxConnectionsPerClient: number;
  /** HTTP_ANSWER_BYTES_PER_CLIENT: bytes of mail and attachment answers being sent to one client at once (http/large-answers.ts). */
  answerBytesPerClient: number;
  /** HTTP_SEND_STALL_TIMEOUT: such an answer whose reader takes nothing for this long is ended. */
  sendStallTimeoutMs: number;
}

/** SMTP_*: the SMTP receiver (smtp/); its per-window rates are in LimitsConfig. */
export interface SmtpConfig {
  host: string;
  port: number;
  hostname: string;
  tlsCert: string | undefined;
  tlsKey: string | undefined;
  maxClients: number;
  maxClientsPerIp: number;
  /** SMTP_TRUSTED_NETWORKS: clients exempt from the per-client connection cap and in-flight share. */
  trustedNetworks: string[];
  inflightBytes: number;
  /** SMTP_CLIENT_INFLIGHT_BYTES: one client's share of inflightBytes; 0 until loadConfig resolves the default. */
  clientInflightBytes: number;
  /** SMTP_DATA_MIN_RATE (bytes/s, 0 = none) over each SMTP_DATA_RATE_WINDOW of a DATA transfer. */
  dataMinRate: number;
  dataRateWindowMs: number;
  transactionTimeoutMs: number;
  commandTimeoutMs: number;
  /** SMTP_IDLE_TIMEOUT: smtp-server's socket time-out (421, then closed). */
  idleTimeoutMs: number;
  maxJunkCommands: number;
  maxBadRecipients: number;
  badRecipientDelayMs: number;
  /** Pause before each connection's greeting (smtp/greeting.ts). */
  greetingDelayMs: number;
  maxLineBytes: number;
  maxRecipients: number;
  /** SMTP_AUTH_ALLOW_INSECURE: AUTH without TLS from clients not on loopback. */
  authAllowInsecure: boolean;
}

/** DATA_DIR, DATABASE_*, SQLITE_SYNCHRONOUS, DISK_MIN_FREE: where mail is kept (storage/). */
export interface StorageConfig {
  dataDir: string;
  databaseUrl: string | undefined;
  databaseSchema: string | undefined;
  sqliteSynchronous: 'FULL' | 'NORMAL';
  /** DISK_MIN_FREE: free space kept on DATA_DIR's disk (SQLite); below it new mail is refused. */
  diskMinFree: FreeSpace;
}

/** REDIS_*: what nodes share (rate-limit counters, events, used challenges). */
export interface RedisConfig {
  url: string | undefined;
  keyPrefix: string;
}

/** JWT_SECRET, SESSION_SECRET: undefined = generated once and kept in DATA_DIR (config/secrets.ts). */
export interface SecretsConfig {
  jwtSecret: string | undefined;
  sessionSecret: string | undefined;
}

/** Addresses and their mail: names, domains, sizes, quotas and retention (mail/service.ts). */
export interface MailConfig {
  /** MAIL_DOMAINS: the domain pool's seed at a database's first start. */
  domains: string[];
  /** DOMAIN_SELECTION: the active domain a new address without one gets. */
  domainSelection: DomainSelection;
  /** DOMAIN_RETIRE_GRACE: how long a retired domain still takes mail. */
  domainRetireGraceMs: number;
  /** MAIL_SUBDOMAINS: the seeded domains with random subdomains on ('all': every one). */
  subdomains: string[] | 'all';
  /** MX_HOSTNAMES: the host names an MX may name to point here; empty: SMTP_HOSTNAME. */
  mxHostnames: string[];
  customNames: boolean;
  nameBlocklist: string[];
  plusAddressing: boolean;
  catchAll: boolean;
  /** MAX_MESSAGE_BYTES: SMTP's SIZE, a sandbox's capture and POST /mailpit/api/v1/send alike. */
  maxMessageBytes: number;
  mailTtlMs: number;
  addressTtlMs: number;
  /** ATTACHMENT_MAX_BYTES: largest decoded attachment taken at DATA; 0 = no limit but MAX_MESSAGE_BYTES. */
  attachmentMaxBytes: number;
  /** ATTACHMENT_REFUSED_EXTENSIONS: lower-cased, without the dot; empty = none refused by name. */
  attachmentRefusedExtensions: string[];
  /** ATTACHMENT_REFUSE_EXECUTABLES: refuse attachments whose bytes begin as a PE or ELF executable. */
  attachmentRefuseExecutables: boolean;
  /** ABUSE_CONTACT: an email address or URL for abuse reports, in the web UI's footer and SMTP's policy refusals; undefined = none. */
  abuseContact: string | undefined;
  /** ADDRESS_TOMBSTONE_TTL: how long a deleted or expired address's tombstone holds its name; 0 = for ever. */
  addressTombstoneTtlMs: number;
  sweepIntervalMs: number;
  addressMaxMails: number;
  addressMaxBytes: number;
  jwtMaxLength: number;
}

/** PARSE_*: the threads that parse mail and the parsed views waiting for them (mail/parse/). */
export interface ParseConfig {
  threads: number;
  timeoutMs: number;
  /** PARSE_VIEWS_PER_CLIENT: parsed views one client may have waiting or parsing at once (mail/parse/parsed-views.ts). */
  viewsPerClient: number;
  /** PARSE_VIEWS_WAITING: parsed views waiting or parsing at once, in all. */
  viewsWaiting: number;
}

/** AUTH_CHECKS, DNS_SERVERS: SPF, DKIM, DMARC and ARC verdicts of incoming mail (mail/auth/). */
export interface MailAuthConfig {
  checks: boolean;
  /** DNS_SERVERS in node:dns setServers form; undefined: the system's. */
  dnsServers: string[] | undefined;
}

/** CHALLENGE, TURNSTILE_*, POW_*: the bot challenge on POST /api/new_address (challenge/). */
export interface ChallengeConfig {
  /** CHALLENGE; unset: turnstile when TURNSTILE_SECRET_KEY is set, else off (resolved by loadConfig). */
  mode: ChallengeMode;
  turnstileSecretKey: string | undefined;
  turnstileSiteKey: string | undefined;
  turnstileVerifyUrl: string;
  /** POW_MAX_NUMBER: the largest secret number of a proof-of-work challenge. */
  powMaxNumber: number;
  /** POW_CHALLENGE_TTL: how long a proof-of-work challenge may be solved and used. */
  powChallengeTtlMs: number;
}

/** MAILTM_API: the mail.tm-compatible API under /mailtm (docs/api.md "mail.tm-compatible API"); its login limits are in LimitsConfig. */
export interface MailtmConfig {
  api: boolean;
}

/** MCP: the Model Context Protocol over HTTP at /mcp (http/routes/mcp.ts; docs/mcp.md). */
export interface McpConfig {
  on: boolean;
}

/** WEBHOOK_*: the operator's webhook and where any webhook may go (webhooks/). */
export interface WebhooksConfig {
  /** WEBHOOK_URL: sent every mail; undefined = none. */
  url: string | undefined;
  /** WEBHOOK_SECRET: its signing key (whsec_…); required with url. */
  secret: string | undefined;
  /** WEBHOOK_ALLOW_PRIVATE: webhooks may go to loopback and private addresses (intranets, tests). */
  allowPrivate: boolean;
}

/** SPAM_SCANNER*, REPORT_LINKS_ALLOW_PRIVATE: the deliverability report (report/). */
export interface ReportConfig {
  /** SPAM_SCANNER: the scanner the report's spam score comes from; undefined = none. */
  scanner: ScannerTarget | undefined;
  /** SPAM_SCANNER_TIMEOUT: one scan's deadline. */
  scanTimeoutMs: number;
  /** SPAM_SCANNER_MAX_BYTES: larger mail is not sent to the scanner. */
  scanMaxBytes: number;
  /** SPAM_REFUSE_SCORE: with a scanner, mail scoring at or over it is refused at DATA; undefined = none is. */
  refuseScore: number | undefined;
  /** REPORT_LINKS_ALLOW_PRIVATE: the link check may fetch loopback and private addresses. */
  linksAllowPrivate: boolean;
}

/** EVENTS_*: the event streams and waits (http/stream-admission.ts, the push routes). */
export interface EventsConfig {
  heartbeatMs: number;
  perClient: number;
  perAddress: number;
  perNode: number;
}

/** SANDBOX*: the logins created at start-up and a new sandbox's quota and retention (sandboxes/). */
export interface SandboxesConfig {
  /** SANDBOXES: logins created or updated at start-up (docs/decisions.md "Sandboxes"). */
  logins: { name: string; password: string }[];
  maxMails: number;
  maxBytes: number;
  retentionMs: number;
}

/** Every per-client window, HTTP and SMTP; RATE_LIMITS=off turns all of them off (limits/). */
export interface LimitsConfig {
  /** RATE_LIMITS=off: every limit below off. */
  on: boolean;
  /** RATE_LIMIT_<ROUTE>, per IP (http/rate-limit.ts). */
  routes: Record<RateLimitRoute, RateLimitRule>;
  /** SMTP_RATE_* and SMTP_DAILY_BYTES, per SMTP client. */
  smtp: {
    messages: RateLimitRule;
    recipients: RateLimitRule;
    bytes: RateLimitRule;
    /** CATCH_ALL: addresses one client's mail may create per window. */
    newAddresses: RateLimitRule;
    /** SMTP_DAILY_BYTES: message bytes per client and 24 hours; 0 = no limit. */
    dailyBytes: number;
    /** SENDER_DOMAIN_RATE_LIMIT: transactions per MAIL FROM domain, from every client. */
    senderDomain: RateLimitRule;
  };
  /** MAILTM_LOGIN_FAILURES*: failed POST /mailtm/token per account (address), per IPv6 /48 or IPv4 /24, per IPv6 /32; past one the logins are locked for its window. */
  mailtmLogin: { perAccount: RateLimitRule; perNetwork: RateLimitRule; perProvider: RateLimitRule };
  /** SANDBOX_LOGIN_FAILURES*: failed sandbox logins (SMTP AUTH and POST /api/sandbox/token) per client and per login name before a lock-out. */
  sandboxLogin: { client: RateLimitRule; login: RateLimitRule };
}

/**
 * The configuration, in one section per part that uses it: each part is given its
 * own section (startServer), never a list of fields picked from the whole.
 */
export interface Config {
  http: HttpConfig;
  smtp: SmtpConfig;
  storage: StorageConfig;
  redis: RedisConfig;
  secrets: SecretsConfig;
  mail: MailConfig;
  parse: ParseConfig;
  mailAuth: MailAuthConfig;
  challenge: ChallengeConfig;
  mailtm: MailtmConfig;
  mcp: McpConfig;
  webhooks: WebhooksConfig;
  events: EventsConfig;
  sandboxes: SandboxesConfig;
  report: ReportConfig;
  limits: LimitsConfig;
  /** ADMIN_TOKEN: undefined = no /api/admin/* and no admin page (404). */
  admin: { token: string | undefined };
  /** METRICS_TOKEN: undefined = no /metrics. */
  metrics: { token: string | undefined };
  /** LOG_LEVEL. */
  log: { level: string };
}
