// The configuration contract: every environment variable with its default and
// description, in one table (variables.ts). A bad value stops start-up with one
// clear line. The configuration table of docs/deploy.md is generated from the same table.
import type { Config, LimitsConfig, RateLimitRoute, SmtpConfig, WebhooksConfig } from './config.js';
import { CONFIG_VARIABLES, type VariableSpec } from './variables.js';
import { ConfigError } from './values.js';
import { SANDBOX_DOMAIN } from '../domain/sandboxes.js';
import { checkAddress } from '../domain/address-ranges.js';
import { parseWebhookUrl } from '../domain/webhook-url.js';

export {
  CHALLENGE_MODES,
  RATE_LIMIT_ROUTES,
  type ChallengeConfig,
  type ChallengeMode,
  type Config,
  type EventsConfig,
  type HttpConfig,
  type LimitsConfig,
  type MailAuthConfig,
  type MailConfig,
  type MailtmConfig,
  type McpConfig,
  type ParseConfig,
  type RateLimitRoute,
  type RedisConfig,
  type SandboxesConfig,
  type SecretsConfig,
  type SmtpConfig,
  type StorageConfig,
  type WebhooksConfig,
} from './config.js';
export { ConfigError, parseCorsOrigins, parseDnsServers, parseRateLimit, parseTrustProxy, type CorsOrigins, type RateLimitRule, type TrustProxy } from './values.js';
export { CONFIG_VARIABLES, DEFAULT_BLOCKLIST, type VariableSpec } from './variables.js';

/** The raw value a variable has when the environment does not set it ('' = unset). */
export function defaultValue(spec: VariableSpec): string {
  return spec.value ? spec.value() : spec.default.startsWith('(') ? '' : spec.default;
}

/** A configuration of empty sections, for the variables' setters to fill. */
function emptyConfig(): Config {
  const sections = ['http', 'smtp', 'storage', 'redis', 'secrets', 'mail', 'parse', 'mailAuth', 'challenge', 'mailtm', 'mcp', 'webhooks', 'events', 'sandboxes', 'report', 'admin', 'metrics', 'log'] as const;
  const config = Object.fromEntries(sections.map((name) => [name, {}])) as unknown as Config;
  config.limits = { routes: {}, smtp: {}, mailtmLogin: {}, sandboxLogin: {} } as Config['limits'];
  return config;
}

/** The configuration with every variable at its default: the one table's defaults, applied by its own setters. */
export function defaultConfig(): Config {
  const config = emptyConfig();
  for (const spec of CONFIG_VARIABLES) spec.set(config, defaultValue(spec));
  return config;
}

/** Defaults a caller of loadConfig gives: any field of any section. */
export type ConfigDefaults = { [S in keyof Config]?: Partial<Config[S]> };

/** A copy of a configuration, section by section (and the limits' groups), with the defaults applied: the setters never write into a caller's objects. */
function withDefaults(base: Config, defaults: ConfigDefaults): Config {
  const config = { ...base };
  for (const name of Object.keys(base) as (keyof Config)[]) Object.assign(config, { [name]: { ...base[name], ...defaults[name] } });
  const limits = config.limits;
  config.limits = { ...limits, routes: { ...limits.routes }, smtp: { ...limits.smtp }, mailtmLogin: { ...limits.mailtmLogin }, sandboxLogin: { ...limits.sandboxLogin } };
  return config;
}

/**
 * Reads the configuration from an environment. Throws ConfigError whose message
 * is one line naming the variable and what it accepts.
 */
export function loadConfig(env: Record<string, string | undefined>, defaults: ConfigDefaults = {}): Config {
  const config = withDefaults(defaultConfig(), defaults);
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
  if (!config.limits.on) limitsOff(config.limits);
  const { smtp, mail, challenge } = config;
  if (mail.domains.includes(SANDBOX_DOMAIN)) throw new ConfigError(`MAIL_DOMAINS must not name ${SANDBOX_DOMAIN}: it holds the sandboxes' mail, which only their SMTP logins reach.`);
  const stray = mail.subdomains === 'all' ? undefined : mail.subdomains.find((d) => !mail.domains.includes(d));
  if (stray !== undefined) throw new ConfigError(`MAIL_SUBDOMAINS names ${stray}, which MAIL_DOMAINS does not: it lists the seeded domains that get random subdomains.`);
  if (smtp.inflightBytes < mail.maxMessageBytes) {
    throw new ConfigError('SMTP_INFLIGHT_BYTES must be at least MAX_MESSAGE_BYTES, or no message of the largest size could ever be taken.');
  }
  if (smtp.clientInflightBytes === 0) smtp.clientInflightBytes = defaultClientInflightBytes(smtp, mail.maxMessageBytes);
  if (smtp.clientInflightBytes < mail.maxMessageBytes) {
    throw new ConfigError('SMTP_CLIENT_INFLIGHT_BYTES must be at least MAX_MESSAGE_BYTES, or no client could send a message of the largest size.');
  }
  // Unset: today's behaviour, the Turnstile challenge exactly when its secret is set.
  if (!env['CHALLENGE']?.trim() && defaults.challenge?.mode === undefined) challenge.mode = challenge.turnstileSecretKey ? 'turnstile' : 'off';
  if (challenge.mode === 'turnstile' && challenge.turnstileSecretKey === undefined) {
    throw new ConfigError('CHALLENGE=turnstile needs TURNSTILE_SECRET_KEY (or choose CHALLENGE=pow for a self-hosted challenge).');
  }
  if ((smtp.tlsCert === undefined) !== (smtp.tlsKey === undefined)) {
    throw new ConfigError('SMTP_TLS_CERT and SMTP_TLS_KEY must be set together.');
  }
  checkOperatorWebhook(config.webhooks);
  return config;
}

/** SMTP_CLIENT_INFLIGHT_BYTES unset: an eighth of SMTP_INFLIGHT_BYTES, at least MAX_MESSAGE_BYTES. */
export function defaultClientInflightBytes(smtp: Pick<SmtpConfig, 'inflightBytes'>, maxMessageBytes: number): number {
  return Math.max(maxMessageBytes, Math.floor(smtp.inflightBytes / 8));
}

/** RATE_LIMITS=off: every HTTP route's, SMTP client's and login's window off. */
function limitsOff(limits: LimitsConfig): void {
  const off = { max: 0, windowSeconds: 1 };
  for (const route of Object.keys(limits.routes) as RateLimitRoute[]) limits.routes[route] = off;
  limits.smtp = { messages: off, recipients: off, bytes: off, newAddresses: off, dailyBytes: 0, senderDomain: off };
  limits.mailtmLogin = { perAccount: off, perNetwork: off, perProvider: off };
  limits.sandboxLogin = { client: off, login: off };
}

/** WEBHOOK_URL needs WEBHOOK_SECRET (and the other way round), and names no address the guard refuses (a host name is checked at each delivery). */
function checkOperatorWebhook(config: WebhooksConfig): void {
  if ((config.url === undefined) !== (config.secret === undefined)) {
    throw new ConfigError('WEBHOOK_URL and WEBHOOK_SECRET must be set together: the secret signs every delivery to the URL.');
  }
  if (config.url === undefined) return;
  const target = parseWebhookUrl(config.url);
  const verdict = target.ip !== undefined ? checkAddress(target.ip, config.allowPrivate) : undefined;
  const localhost = !config.allowPrivate && (target.host === 'localhost' || target.host.endsWith('.localhost'));
  if ((verdict && !verdict.allowed) || localhost) {
    throw new ConfigError(`WEBHOOK_URL's host is ${verdict && !verdict.allowed ? verdict.reason : 'a loopback address'}: set WEBHOOK_ALLOW_PRIVATE=true to send webhooks to a private network.`);
  }
}
