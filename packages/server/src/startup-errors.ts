// Start-up failures as one line that names the variable to fix and the service behind
// it (docs/deploy.md "Start-up errors"): the raw errors of ioredis, pg and Node's
// listen ("Connection is closed.", "listen EADDRINUSE ...") say neither.

/** A start-up failure whose message is ready for the operator: one line, the variable first. */
export class StartupError extends Error {
  constructor(
    message: string,
    /** The configuration variable to fix, e.g. REDIS_URL. */
    readonly variable: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'StartupError';
  }
}

type Failure = Error & { code?: string; address?: string; port?: number; errors?: unknown[] };

/** The first error of an AggregateError (a host name resolving to several addresses), else err. */
function firstCause(err: unknown): Failure {
  const e = err as Failure;
  if (Array.isArray(e?.errors) && e.errors.length > 0 && !e.code) return e.errors[0] as Failure;
  return e instanceof Error ? e : Object.assign(new Error(String(err)));
}

/** host:port of a URL as given (the port defaulted), without its credentials. */
function endpoint(url: string, defaultPort: number): string {
  try {
    const u = new URL(url);
    return `${u.hostname || '127.0.0.1'}:${u.port || defaultPort}`;
  } catch {
    return 'the configured address';
  }
}

/** What a network failure to reach `service` says, or undefined when it is none of those. */
function unreachable(e: Failure): string | undefined {
  switch (e.code) {
    case 'ECONNREFUSED':
      return 'refused the connection';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return 'could not be found: the host name does not resolve';
    case 'ETIMEDOUT':
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return 'did not answer (timed out or unreachable)';
    case 'ECONNRESET':
      return 'closed the connection before answering';
    default:
      return undefined;
  }
}

/** REDIS_URL: what went wrong connecting to Redis. `last` is the last 'error' ioredis emitted. */
export function redisStartupError(url: string, err: unknown, last?: unknown): StartupError {
  const e = firstCause(last ?? err);
  const where = `Redis at ${endpoint(url, 6379)}`;
  const net = unreachable(e);
  let what: string;
  if (net) what = net;
  else if (/WRONGPASS|NOAUTH|invalid password|invalid username-password/i.test(e.message)) what = 'refused the user name or password in REDIS_URL';
  else if (/timeout|timed out/i.test(e.message)) what = 'did not answer in time';
  else what = `failed: ${e.message}`;
  return new StartupError(`REDIS_URL: ${where} ${what}`, 'REDIS_URL', { cause: err });
}

/** DATABASE_URL: what went wrong opening PostgreSQL. */
export function databaseStartupError(url: string, err: unknown): StartupError {
  const e = firstCause(err);
  const where = `PostgreSQL at ${endpoint(url, 5432)}`;
  let database = '';
  try {
    database = decodeURIComponent(new URL(url).pathname.slice(1));
  } catch {
    // endpoint() already says the URL is unusable
  }
  const net = unreachable(e);
  let what: string;
  if (net) what = net;
  else if (e.code === '3D000') what = `has no database ${database ? `"${database}"` : 'of that name'}; create it (createdb ${database || 'NAME'}) or fix the name in DATABASE_URL`;
  else if (e.code === '28P01' || e.code === '28000') what = `refused the login: ${e.message}; fix the user name or password in DATABASE_URL`;
  else if (/timeout|timed out/i.test(e.message)) what = 'did not answer in time';
  else if (/terminated unexpectedly/i.test(e.message)) what = 'closed the connection before answering';
  else if (e.code === '3F000' || e.code === '42501') what = `${e.message}; check DATABASE_SCHEMA and the user's rights`;
  else return new StartupError(`DATABASE_URL: ${where} failed: ${e.message}`, 'DATABASE_URL', { cause: err });
  return new StartupError(`DATABASE_URL: ${where} ${what}`, 'DATABASE_URL', { cause: err });
}

/** A listener that could not bind: `variable` is HTTP_PORT or SMTP_PORT. */
export function listenStartupError(variable: 'HTTP_PORT' | 'SMTP_PORT', host: string, port: number, err: unknown): StartupError | unknown {
  const e = firstCause(err);
  const at = `${e.address ?? host}:${e.port ?? port}`;
  const hostVariable = variable === 'HTTP_PORT' ? 'HTTP_HOST' : 'SMTP_HOST';
  switch (e.code) {
    case 'EADDRINUSE':
      return new StartupError(`${variable}: ${at} is already in use; set ${variable} to a free port`, variable, { cause: err });
    case 'EACCES':
      return new StartupError(
        `${variable}: permission denied to listen on ${at}${(e.port ?? port) < 1024 ? ' (ports below 1024 need privileges)' : ''}; set ${variable} to a port of 1024 or more, or grant CAP_NET_BIND_SERVICE`,
        variable,
        { cause: err },
      );
    case 'EADDRNOTAVAIL':
      return new StartupError(`${hostVariable}: ${e.address ?? host} is not an address of this machine; set ${hostVariable} to one of its addresses or 0.0.0.0`, hostVariable, { cause: err });
    default:
      return err;
  }
}

const FILE_ERRORS: Record<string, string> = {
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  EROFS: 'the file system is read-only',
  ENOTDIR: 'a part of the path is a file, not a directory',
  ENOSPC: 'the disk is full',
  EISDIR: 'a file it needs is a directory',
  SQLITE_CANTOPEN: 'the database file cannot be opened',
  SQLITE_READONLY: 'the database file is read-only',
  SQLITE_FULL: 'the disk is full',
};

/** DATA_DIR cannot be created or written (SQLite's database and the secrets live there). */
export function dataDirStartupError(dir: string, err: unknown): StartupError | unknown {
  const e = firstCause(err);
  const why = (e.code && FILE_ERRORS[e.code]) ?? (/readonly|read-only/i.test(e.message) ? 'the database file is read-only' : undefined);
  if (!why) return err;
  return new StartupError(`DATA_DIR: cannot write to ${dir} (${why}); set DATA_DIR to a directory this user can write`, 'DATA_DIR', { cause: err });
}
