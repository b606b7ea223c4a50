// How an admin view tells the page what happened: the page shows it (app.tsx).
export interface Report {
  /** Announces an action done (and clears the error). */
  done(message: string): void;
  /** Shows a failed request; a refused token signs out. */
  failed(err: unknown): void;
}
