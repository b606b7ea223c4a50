import ms from 'ms';

/**
 * Parses a duration into milliseconds with the grammar of the `ms` package ("500ms", "90s", "15m",
 * "1.5h", "7d", "1w", "2 days"), plus a bare number as seconds (as earlier releases took it).
 * The CLI's --timeout uses the same rule (packages/client/src/duration.ts), so one value means the
 * same everywhere. Undefined for anything else, for a non-positive value and past a safe integer.
 */
export function parseDuration(raw: string): number | undefined {
  const text = raw.trim();
  if (text === '') return undefined;
  const value = /^\d+(\.\d+)?$/.test(text) ? Number(text) * 1000 : ms(text as ms.StringValue);
  if (typeof value !== 'number' || !Number.isFinite(value)) return undefined;
  const rounded = Math.round(value);
  return Number.isSafeInteger(rounded) && rounded > 0 ? rounded : undefined;
}
