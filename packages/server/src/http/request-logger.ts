// What request logs write: the URL with credentials in its query redacted (redactUrl),
// and request.log without a pino child logger built for every request. Fastify gives
// each request a child bound to its request id; building one costs more than the
// access line itself. Here the child is built on first use (an error, a warning),
// and the access line (app.ts) carries the request id in its own fields, which
// pino writes exactly as a child's binding would be.
import type { FastifyBaseLogger } from 'fastify';

/**
 * Query parameters whose value is a credential, compared in lower case with "-"
 * read as "_": `?token=`, `?jwt=`, `?access_token=`, `?password=`… A client that puts
 * one in a URL (the API never asks it to) must not find it in the log.
 */
const SECRET_PARAM_RE = /^(?:token|jwt|admin_token|access_token|refresh_token|id_token|auth|authorization|api_key|apikey|key|secret|client_secret|password|passwd|pass|pwd|session|session_id|sessionid|cf_token|signature|sig|code)$|(?:token|secret|password)$/;

/** The URL as the log shows it: the value of every credential-like query parameter replaced by "[redacted]". */
export function redactUrl(url: string): string {
  const q = url.indexOf('?');
  if (q < 0) return url;
  const query = url.slice(q + 1).replace(/(^|&)([^&=]*)=([^&]*)/g, (whole, sep: string, name: string) => {
    let key = name;
    try {
      key = decodeURIComponent(name.replace(/\+/g, ' '));
    } catch {
      // A malformed escape: judged as written.
    }
    return SECRET_PARAM_RE.test(key.trim().toLowerCase().replace(/-/g, '_')) ? `${sep}${name}=[redacted]` : whole;
  });
  return `${url.slice(0, q)}?${query}`;
}

type Bindings = Record<string, unknown>;
type ChildOptions = Parameters<FastifyBaseLogger['child']>[1];
type Method = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace';

class LazyChildLogger {
  #child: FastifyBaseLogger | undefined;
  constructor(
    private readonly parent: FastifyBaseLogger,
    private readonly bindings: Bindings,
    private readonly options: ChildOptions,
  ) {}

  private get logger(): FastifyBaseLogger {
    return (this.#child ??= this.parent.child(this.bindings, this.options));
  }
  private call(method: Method, args: unknown[]): void {
    const logger = this.logger;
    (logger[method] as (...a: unknown[]) => void).apply(logger, args);
  }

  get level(): string {
    return this.#child?.level ?? this.options?.level ?? this.parent.level;
  }
  set level(level: string) {
    this.logger.level = level;
  }
  fatal(...args: unknown[]): void {
    this.call('fatal', args);
  }
  error(...args: unknown[]): void {
    this.call('error', args);
  }
  warn(...args: unknown[]): void {
    this.call('warn', args);
  }
  info(...args: unknown[]): void {
    this.call('info', args);
  }
  debug(...args: unknown[]): void {
    this.call('debug', args);
  }
  trace(...args: unknown[]): void {
    this.call('trace', args);
  }
  silent(): void {}
  child(bindings: Bindings, options?: ChildOptions): FastifyBaseLogger {
    return this.logger.child(bindings, options);
  }
}

/** Fastify's childLoggerFactory option. */
export function lazyChildLogger(parent: FastifyBaseLogger, bindings: Bindings, options: ChildOptions): FastifyBaseLogger {
  return new LazyChildLogger(parent, bindings, options) as unknown as FastifyBaseLogger;
}
