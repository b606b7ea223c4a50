// The configuration contract: every environment variable with its default and
// description, in one table (variables.ts). A bad value stops start-up with one
// clear line. The configuration table of docs/deploy.md is generated from the same table.
import type { Config, RateLimitRoute } from './config.js';
import { CONFIG_VARIABLES, type VariableSpec } from './variables.js';
import { ConfigError } from './values.js';
import { SANDBOX_DOMAIN } from '../domain/sandboxes.js';
import { checkAddress } from '../domain/address-ranges.js';
import { parseWebhookUrl } from '../domain/webhook-url.js';

export { CHALLENGE_MODES, RATE_LIMIT_ROUTES, type ChallengeMode, type Config, type RateLimitRoute } from './config.js';
export { ConfigError, parseCorsOrigins, parseDnsServers, parseRateLimit, parseTrustProxy, type CorsOrigins, type RateLimitRule, type TrustProxy } from './values.js';
export { CONFIG_VARIABLES, DEFAULT_BLOCKLIST, type VariableSpec } from './variables.js';

/** The raw value a variable has when the environment does not set it ('' = unset). */
export function defaultValue(spec: VariableSpec): string {
  return spec.value ? spec.value() : spec.default.startsWith('(') ? '' : spec.default;
}

/** The configuration with every variable at its default: the one table's defaults, applied by its own setters. */
export function defaultConfig(): Config {
  const config = { rateLimits: {} } as Config;
  for (const spec of CONFIG_VARIABLES) spec.set(config, defaultValue(spec));
  return config;
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
    config.smtpRateMessages = config.smtpRateRecipients = config.smtpRateBytes = config.smtpRateNewAddresses = off;
    config.smtpDailyBytes = 0;
    config.mailtmLoginFailures = config.mailtmLoginFailuresNetwork = config.mailtmLoginFailuresProvider = off;
    config.sandboxLoginFailures = config.sandboxLoginFailuresPerName = off;
  }
  if (config.mailDomains.includes(SANDBOX_DOMAIN)) throw new ConfigError(`MAIL_DOMAINS must not name ${SANDBOX_DOMAIN}: it holds the sandboxes' mail, which only their SMTP logins reach.`);
  if (config.smtpInflightBytes < config.maxMessageBytes) {
    throw new ConfigError('SMTP_INFLIGHT_BYTES must be at least MAX_MESSAGE_BYTES, or no message of the largest size could ever be taken.');
  }
  if (config.smtpClientInflightBytes === 0) config.smtpClientInflightBytes = Math.max(config.maxMessageBytes, Math.floor(config.smtpInflightBytes / 8));
  if (config.smtpClientInflightBytes < config.maxMessageBytes) {
    throw new ConfigError('SMTP_CLIENT_INFLIGHT_BYTES must be at least MAX_MESSAGE_BYTES, or no client could send a message of the largest size.');
  }
  // Unset: today's behaviour, the Turnstile challenge exactly when its secret is set.
  if (!env['CHALLENGE']?.trim() && defaults.challenge === undefined) config.challenge = config.turnstileSecretKey ? 'turnstile' : 'off';
  if (config.challenge === 'turnstile' && config.turnstileSecretKey === undefined) {
    throw new ConfigError('CHALLENGE=turnstile needs TURNSTILE_SECRET_KEY (or choose CHALLENGE=pow for a self-hosted challenge).');
  }
  if ((config.smtpTlsCert === undefined) !== (config.smtpTlsKey === undefined)) {
    throw new ConfigError('SMTP_TLS_CERT and SMTP_TLS_KEY must be set together.');
  }
  checkOperatorWebhook(config);
  return config;
}

/** WEBHOOK_URL needs WEBHOOK_SECRET (and the other way round), and names no address the guard refuses (a host name is checked at each delivery). */
function checkOperatorWebhook(config: Config): void {
  if ((config.webhookUrl === undefined) !== (config.webhookSecret === undefined)) {
    throw new ConfigError('WEBHOOK_URL and WEBHOOK_SECRET must be set together: the secret signs every delivery to the URL.');
  }
  if (config.webhookUrl === undefined) return;
  const target = parseWebhookUrl(config.webhookUrl);
  const verdict = target.ip !== undefined ? checkAddress(target.ip, config.webhookAllowPrivate) : undefined;
  const localhost = !config.webhookAllowPrivate && (target.host === 'localhost' || target.host.endsWith('.localhost'));
  if ((verdict && !verdict.allowed) || localhost) {
    throw new ConfigError(`WEBHOOK_URL's host is ${verdict && !verdict.allowed ? verdict.reason : 'a loopback address'}: set WEBHOOK_ALLOW_PRIVATE=true to send webhooks to a private network.`);
  }
}
