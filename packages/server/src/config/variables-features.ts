// The environment variables of mail's size and retention, event streams, metrics, the
// admin, webhooks, the deliverability report and the log (a part of CONFIG_VARIABLES,
// variables.ts).
import { bool, ConfigError, count, duration, LOG_LEVELS, optional, positiveInt, webhookUrl } from './values.js';
import { isWeakSecret, WEAK_SECRET_HINT } from './secrets.js';
import { isSecret } from '../domain/webhook-secret.js';
import { parseScanner } from '../domain/spam-scanner-url.js';
import type { VariableSpec } from './variable-spec.js';
import { DEFAULT_REFUSED_EXTENSIONS } from '../domain/attachment-types.js';
import { checkAbuseContact, MAX_ABUSE_CONTACT_CHARS } from '../domain/abuse-contact.js';

const EXTENSION_RE = /^[a-z0-9_-]{1,16}$/;

/** ATTACHMENT_REFUSED_EXTENSIONS's value: lower-cased, a leading dot dropped; `none` or empty is none. */
function extensions(raw: string): string[] {
  if (raw === '' || raw.toLowerCase() === 'none') return [];
  const list = raw.split(',').map((e) => e.trim().toLowerCase().replace(/^\./, '')).filter((e) => e !== '');
  if (!list.every((e) => EXTENSION_RE.test(e))) throw new ConfigError('a comma-separated list of file name extensions (letters, digits, - or _, at most 16 each), or none');
  return [...new Set(list)];
}

/** SPAM_SCANNER's value, or the form it takes. */
function scanner(raw: string) {
  try {
    return parseScanner(raw);
  } catch {
    throw new ConfigError('rspamd://host:port or spamd://host:port');
  }
}

export const FEATURE_VARIABLES: VariableSpec[] = [
  { name: 'MAX_MESSAGE_BYTES', default: '10485760', accepts: 'positive integer', description: 'SMTP SIZE; larger mail is refused with 552 5.3.4.', set: (c, r) => (c.mail.maxMessageBytes = positiveInt(r)) },
  {
    name: 'ATTACHMENT_MAX_BYTES',
    default: '0',
    accepts: 'whole number, 0 for no limit',
    description: 'Largest decoded attachment of a message taken at SMTP DATA; a message with a larger one is refused whole with 552 5.3.4 (0: only MAX_MESSAGE_BYTES bounds it).',
    set: (c, r) => (c.mail.attachmentMaxBytes = count(r)),
  },
  {
    name: 'ATTACHMENT_REFUSED_EXTENSIONS',
    default: DEFAULT_REFUSED_EXTENSIONS.join(','),
    accepts: 'comma-separated extensions (without the dot), or none',
    description: 'A message with an attachment whose file name ends in one of these is refused whole at SMTP DATA with 552 5.7.0 (none: no file name is refused).',
    set: (c, r) => (c.mail.attachmentRefusedExtensions = extensions(r)),
  },
  {
    name: 'ATTACHMENT_REFUSE_EXECUTABLES',
    default: 'true',
    accepts: 'true or false',
    description: 'Refuse at SMTP DATA (552 5.7.0) a message with an attachment whose decoded bytes begin as a Windows (PE, "MZ") or Linux (ELF) program does, whatever its name.',
    set: (c, r) => (c.mail.attachmentRefuseExecutables = bool(r)),
  },
  { name: 'MAIL_TTL', default: '7d', accepts: 'duration (s, m, h, d)', description: 'Mail older than this is purged.', set: (c, r) => (c.mail.mailTtlMs = duration(r)) },
  { name: 'ADDRESS_TTL', default: '7d', accepts: 'duration (s, m, h, d)', description: 'Addresses older than this are purged with their mail.', set: (c, r) => (c.mail.addressTtlMs = duration(r)) },
  {
    name: 'ADDRESS_TOMBSTONE_TTL',
    default: 'forever',
    accepts: 'forever, 0 (= forever) or a duration (s, m, h, d)',
    description: 'How long a deleted or expired address keeps its name from being taken again (its tombstone, a keyed hash of the address under JWT_SECRET). Admins purge tombstones with DELETE /api/admin/tombstones.',
    set: (c, r) => (c.mail.addressTombstoneTtlMs = r.toLowerCase() === 'forever' || r === '0' ? 0 : duration(r)),
  },
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
    name: 'SPAM_REFUSE_SCORE',
    default: '(none)',
    accepts: 'a number, such as 15',
    description:
      "With SPAM_SCANNER: mail the scanner scores at or over this is refused at the end of DATA (554 5.7.1, nothing stored); each message is scanned before its 250 (within SPAM_SCANNER_TIMEOUT), and one the scanner gives no score in time is taken. Without SPAM_SCANNER it has no effect (start-up says so). Unset: no mail is refused for its score.",
    set: (c, r) => {
      if (r !== '' && !/^-?\d{1,6}(\.\d{1,3})?$/.test(r)) throw new ConfigError('a number such as 15 or 7.5');
      c.report.refuseScore = r === '' ? undefined : Number(r);
    },
  },
  {
    name: 'ABUSE_CONTACT',
    default: '(none)',
    accepts: 'an email address or an http(s) URL',
    description: "Where abuse is reported: shown in the web UI's footer and appended to SMTP's policy refusals (550 5.7.1, 552 5.7.0 and 554 5.7.1: \"report abuse to ...\"). Unset: shown nowhere.",
    set: (c, r) => {
      const contact = r === '' ? undefined : checkAbuseContact(r);
      if (r !== '' && contact === undefined) throw new ConfigError(`an email address or an http(s) URL of at most ${MAX_ABUSE_CONTACT_CHARS} printable characters without spaces`);
      c.mail.abuseContact = contact;
    },
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
];
