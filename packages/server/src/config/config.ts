// The configuration the server runs with, as loadConfig builds it from the environment.
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
} as const satisfies Record<string, RateLimitRule>;
export type RateLimitRoute = keyof typeof RATE_LIMIT_ROUTES;

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
  /** CHALLENGE; unset: turnstile when TURNSTILE_SECRET_KEY is set, else off (resolved by loadConfig). */
  challenge: ChallengeMode;
  /** POW_MAX_NUMBER: the largest secret number of a proof-of-work challenge. */
  powMaxNumber: number;
  /** POW_CHALLENGE_TTL: how long a proof-of-work challenge may be solved and used. */
  powChallengeTtlMs: number;
  customNames: boolean;
  plusAddressing: boolean;
  catchAll: boolean;
  /** MAILTM_API: the mail.tm-compatible API under /mailtm (docs/api.md "mail.tm-compatible API"). */
  mailtmApi: boolean;
  nameBlocklist: string[];
  rateLimits: Record<RateLimitRoute, RateLimitRule>;
  trustProxy: TrustProxy | undefined;
  /** CORS_ORIGINS: undefined = no cross-origin access. */
  corsOrigins: CorsOrigins | undefined;
  maxMessageBytes: number;
  mailTtlMs: number;
  addressTtlMs: number;
  sweepIntervalMs: number;
  eventsHeartbeatMs: number;
  metricsToken: string | undefined;
  /** ADMIN_TOKEN: undefined = no /api/admin/* and no admin page (404). */
  adminToken: string | undefined;
  /** WEBHOOK_URL: the operator's webhook, sent every mail; undefined = none. */
  webhookUrl: string | undefined;
  /** WEBHOOK_SECRET: the operator's webhook's signing key (whsec_…); required with webhookUrl. */
  webhookSecret: string | undefined;
  /** WEBHOOK_ALLOW_PRIVATE: webhooks may go to loopback and private addresses (intranets, tests). */
  webhookAllowPrivate: boolean;
  logLevel: string;
  /** RATE_LIMITS=off: every per-client limit below and RATE_LIMIT_<ROUTE> off. */
  rateLimitsOn: boolean;
  smtpMaxClients: number;
  smtpMaxClientsPerIp: number;
  /** SMTP_TRUSTED_NETWORKS: clients exempt from the per-client connection cap and in-flight share. */
  smtpTrustedNetworks: string[];
  smtpInflightBytes: number;
  /** SMTP_CLIENT_INFLIGHT_BYTES: one client's share of smtpInflightBytes; 0 until loadConfig resolves the default. */
  smtpClientInflightBytes: number;
  /** SMTP_DATA_MIN_RATE (bytes/s, 0 = none) over each SMTP_DATA_RATE_WINDOW of a DATA transfer. */
  smtpDataMinRate: number;
  smtpDataRateWindowMs: number;
  smtpTransactionTimeoutMs: number;
  smtpCommandTimeoutMs: number;
  smtpMaxJunkCommands: number;
  smtpMaxBadRecipients: number;
  smtpBadRecipientDelayMs: number;
  /** Pause before each connection's greeting (smtp/greeting.ts). */
  smtpGreetingDelayMs: number;
  smtpRateMessages: RateLimitRule;
  smtpRateRecipients: RateLimitRule;
  smtpRateBytes: RateLimitRule;
  /** CATCH_ALL: addresses one client's mail may create per window. */
  smtpRateNewAddresses: RateLimitRule;
  /** SMTP_DAILY_BYTES: message bytes per client and 24 hours; 0 = no limit. */
  smtpDailyBytes: number;
  /** DISK_MIN_FREE: free space kept on DATA_DIR's disk (SQLite); below it new mail is refused. */
  diskMinFree: FreeSpace;
  addressMaxMails: number;
  addressMaxBytes: number;
  parseTimeoutMs: number;
  /** AUTH_CHECKS: SPF, DKIM, DMARC and ARC verdicts of incoming mail. */
  authChecks: boolean;
  /** DNS_SERVERS for those checks, in node:dns setServers form; undefined: the system's. */
  dnsServers: string[] | undefined;
  parseThreads: number;
  /** PARSE_VIEWS_PER_CLIENT: parsed views one client may have waiting or parsing at once (mail/parse/parsed-views.ts). */
  parseViewsPerClient: number;
  /** PARSE_VIEWS_WAITING: parsed views waiting or parsing at once, in all. */
  parseViewsWaiting: number;
  /** MAILTM_LOGIN_FAILURES: failed POST /mailtm/token per account (address) per window; past it the account is locked for the window. */
  mailtmLoginFailures: RateLimitRule;
  /** MAILTM_LOGIN_FAILURES_NETWORK: failed logins per IPv6 /48 or IPv4 /24 per window. */
  mailtmLoginFailuresNetwork: RateLimitRule;
  /** MAILTM_LOGIN_FAILURES_PROVIDER: failed logins per IPv6 /32 per window. */
  mailtmLoginFailuresProvider: RateLimitRule;
  sqliteSynchronous: 'FULL' | 'NORMAL';
  smtpMaxLineBytes: number;
  smtpMaxRecipients: number;
  httpBodyLimit: number;
  httpRequestTimeoutMs: number;
  httpMaxParamLength: number;
  /** HTTP_KEEP_ALIVE_TIMEOUT: how long an idle keep-alive connection stays open after an answer. */
  httpKeepAliveTimeoutMs: number;
  /** HTTP_MAX_CONNECTIONS: HTTP connections open at once, in all (http/connection-caps.ts). */
  httpMaxConnections: number;
  /** HTTP_MAX_CONNECTIONS_PER_CLIENT: the same from one socket peer (a trusted proxy excepted). */
  httpMaxConnectionsPerClient: number;
  /** HTTP_ANSWER_BYTES_PER_CLIENT: bytes of mail and attachment answers being sent to one client at once (http/large-answers.ts). */
  httpAnswerBytesPerClient: number;
  /** HTTP_SEND_STALL_TIMEOUT: such an answer whose reader takes nothing for this long is ended. */
  httpSendStallTimeoutMs: number;
  /** SANDBOXES: logins created or updated at start-up (docs/decisions.md "Sandboxes"). */
  sandboxes: { name: string; password: string }[];
  /** SMTP_AUTH_ALLOW_INSECURE: AUTH without TLS from clients not on loopback. */
  smtpAuthAllowInsecure: boolean;
  /** A new sandbox's quota and retention unless it is given its own. */
  sandboxMaxMails: number;
  sandboxMaxBytes: number;
  sandboxRetentionMs: number;
  /** Failed sandbox logins (SMTP AUTH and POST /api/sandbox/token) per client and per login name before a lock-out. */
  sandboxLoginFailures: RateLimitRule;
  sandboxLoginFailuresPerName: RateLimitRule;
  jwtMaxLength: number;
  eventsPerClient: number;
  eventsPerAddress: number;
  eventsPerNode: number;
}
