// The environment variables of sandboxes: the ones made at start-up, SMTP AUTH, a new
// sandbox's limits and the lock-outs of failed logins (a part of CONFIG_VARIABLES, variables.ts).
import { bool, ConfigError, count, duration, parseRateLimit } from './values.js';
import { parseSandboxes } from '../domain/sandboxes.js';
import type { VariableSpec } from './variable-spec.js';

export const SANDBOX_VARIABLES: VariableSpec[] = [
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
