// Counts of SMTP refusals per hour (a role of Store, store.ts; docs/operating.md "Abuse
// controls"): one row per UTC hour, reason and recipient domain, added to in batches by
// mail/refusal-counts.ts, read by GET /api/admin/refusals and pruned by the retention sweep.

/** One hour's count of one reason for one recipient domain. */
export interface RefusalCount {
  /** The start of the UTC hour (ms since the epoch). */
  hour: number;
  reason: string;
  /** The recipient's domain, lower-cased; '' when the refusal came before any recipient (at connect or MAIL FROM). */
  recipientDomain: string;
  count: number;
}

export interface RefusalStore {
  /** Adds each row's count to its hour, reason and domain (created at 0 when missing), in one transaction. */
  addRefusals(rows: readonly RefusalCount[]): Promise<void>;
  /** Every row of an hour at or after `since`, oldest hour first, then by reason and domain. */
  listRefusals(since: number): Promise<RefusalCount[]>;
  /** Removes the rows of hours before `before`; how many went. */
  purgeRefusals(before: number): Promise<number>;
}
