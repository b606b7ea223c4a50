// The SMTP refusals of the last hours (GET /api/admin/refusals; docs/operating.md "Abuse
// controls"): the hourly counts of every node, this node's latest written first.
import { HOUR_MS, REFUSAL_REASONS, type RefusalCounts, type RefusalReason } from '../mail/refusal-counts.js';
import type { RefusalCount, RefusalStore } from '../storage/store.js';

/** The longest window read: the counts are kept 31 days (mail/refusal-counts.ts REFUSALS_KEPT_MS). */
export const MAX_REFUSAL_HOURS = 24 * 31;

export interface RefusalsData {
  /** The start of the oldest hour read. */
  from: number;
  to: number;
  /** Oldest hour first. */
  hours: RefusalCount[];
  /** Every reason of the list, 0 when none was counted. */
  totals: Record<RefusalReason, number>;
}

/** The counts of the current hour and the `hours - 1` before it (1 ≤ hours ≤ MAX_REFUSAL_HOURS). */
export async function readRefusals(store: RefusalStore, counts: RefusalCounts | undefined, hours: number, now: number): Promise<RefusalsData> {
  await counts?.flush();
  const from = Math.floor(now / HOUR_MS) * HOUR_MS - (hours - 1) * HOUR_MS;
  const rows = await store.listRefusals(from);
  const totals = Object.fromEntries(REFUSAL_REASONS.map((r) => [r, 0])) as Record<RefusalReason, number>;
  for (const row of rows) if (row.reason in totals) totals[row.reason as RefusalReason] += row.count;
  return { from, to: now, hours: rows, totals };
}
