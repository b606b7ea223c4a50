// The environment variables that limit what one SMTP client can take, the disk, quotas,
// the parse and the checks' budgets (a part of CONFIG_VARIABLES, variables.ts).
import { bool, ConfigError, count, duration, freeSpace, networks, parseDnsServers, parseRateLimit, positiveInt } from './values.js';
import type { VariableSpec } from './variable-spec.js';

export const LIMIT_VARIABLES: VariableSpec[] = [
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
    name: 'SENDER_DOMAIN_RATE_LIMIT',
    default: '0',
    accepts: '<max>/<seconds>, or 0',
    description:
      "Messages (MAIL FROM) per sending domain and window, from every client together (the envelope sender's domain, lower-cased; shared through Redis); more get 451 4.7.1, which passes once the window ends. The null sender and sandbox logins are not counted. 0: no limit.",
    set: (c, r) => (c.limits.smtp.senderDomain = parseRateLimit(r)),
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
];
