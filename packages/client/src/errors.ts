// The two errors the SDK throws on purpose. Both carry whole sentences.

/**
 * The service refused a request (its status and its plain-text sentence), or could
 * not be reached at all (status 0).
 */
export class TempInboxError extends Error {
  override name = 'TempInboxError';
  /** The HTTP status, or 0 when no answer came (connection refused or dropped). */
  readonly status: number;
  constructor(status: number, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.status = status;
  }
}

/** No matching mail arrived within the wait's timeout. */
export class WaitTimeoutError extends Error {
  override name = 'WaitTimeoutError';
  /** The timeout that passed, in milliseconds. */
  readonly timeout: number;
  constructor(message: string, timeout: number) {
    super(message);
    this.timeout = timeout;
  }
}
