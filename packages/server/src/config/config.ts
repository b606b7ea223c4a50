// The configuration the server runs with, as loadConfig builds it from the environment.
import type { CorsOrigins, RateLimitRule, TrustProxy } from './values.js';

export const RATE_LIMIT_ROUTES = {
  NEW_ADDRESS: { max: 10, windowSeconds: 60 },
  MAILS: { max: 60, windowSeconds: 60 },
  MAIL: { max: 60, windowSeconds: 60 },
  // Each request parses a stored message again, on the threads that parse incoming mail.
  PARSED_MAIL: { max: 30, windowSeconds: 60 },
  SETTINGS: { max: 60, windowSeconds: 60 },
  SWITCH_ADDRESS: { max: 30, windowSeconds: 60 },
  DELETE_ADDRESS: { max: 10, windowSeconds: 60 },
  CLEAR_INBOX: { max: 10, windowSeconds: 60 },
  ATTACHMENT: { max: 60, windowSeconds: 60 },
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
  customNames: boolean;
  plusAddressing: boolean;
  catchAll: boolean;
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
