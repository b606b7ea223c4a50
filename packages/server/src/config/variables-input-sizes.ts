// The environment variables of input sizes, HTTP connections and answers, event streams,
// parse threads and mail.tm logins (a part of CONFIG_VARIABLES, variables.ts).
import { atLeast, ConfigError, duration, parseRateLimit, positiveInt } from './values.js';
import type { VariableSpec } from './variable-spec.js';

export const INPUT_SIZE_VARIABLES: VariableSpec[] = [
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
  { name: 'PARSE_THREADS', default: '1', accepts: 'positive integer', description: 'Worker threads that parse incoming mail, started when the first SMTP client connects or by the first parse (plus one spare for small messages while a large one is parsed); one client holds at most half of them (at least one) at once.', set: (c, r) => (c.parse.threads = positiveInt(r)) },
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
];
