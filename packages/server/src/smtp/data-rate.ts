// The slowest DATA transfer kept (SMTP_DATA_MIN_RATE over SMTP_DATA_RATE_WINDOW).
// The transaction deadline alone lets a client hold an unfinished message for the
// whole SMTP_TRANSACTION_TIMEOUT with a byte every 20 s, and its bytes stay in the
// in-flight budget all that time. A transfer must bring at least minRate bytes a
// second over each window, the first counted from the 354 (one window of grace);
// one that does not is a timeout of the transfer: 421 4.4.2 and the connection closed.
// Postfix has the same rule (smtpd_min_data_rate, 500 bytes/s).
import { performance } from 'node:perf_hooks';

export interface DataRateOptions {
  /** Bytes per second; 0: no minimum. */
  minRate: number;
  windowMs: number;
}

export interface DataRateWatch {
  /** Counts bytes of the transfer as they arrive. */
  add(bytes: number): void;
  /** The transfer ended (its end, an error, or the session's close); idempotent. */
  stop(): void;
}

/** Watches one DATA transfer; `onStall` is called once, when a window brought too little. */
export function watchDataRate(opts: DataRateOptions, onStall: (bytesInWindow: number) => void): DataRateWatch {
  if (opts.minRate === 0) return { add: () => undefined, stop: () => undefined };
  const need = (opts.minRate * opts.windowMs) / 1000;
  let inWindow = 0;
  let since = performance.now();
  const timer = setInterval(() => {
    const now = performance.now();
    // A tick that comes late found the event loop busy: the bytes that arrived meanwhile may
    // not have been read yet, so that window says nothing about the client.
    const late = now - since > 1.5 * opts.windowMs;
    since = now;
    if (!late && inWindow < need) {
      clearInterval(timer);
      onStall(inWindow);
    }
    inWindow = 0;
  }, opts.windowMs);
  timer.unref();
  return {
    add(bytes) {
      inWindow += bytes;
    },
    stop() {
      clearInterval(timer);
    },
  };
}
