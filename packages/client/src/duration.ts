import ms from 'ms';

/**
 * A duration in milliseconds with the grammar of the `ms` package ("500ms", "90s", "2m", "1.5h",
 * "1d", "1w"), plus a bare number as seconds — the rule the server uses for its *_TTL and timeout
 * variables, so a value means the same in both. Undefined for anything else or a value not above 0.
 */
export function parseDuration(raw: string): number | undefined {
  const text = raw.trim();
  if (text === '') return undefined;
  const value = /^\d+(\.\d+)?$/.test(text) ? Number(text) * 1000 : ms(text as ms.StringValue);
  if (typeof value !== 'number' || !Number.isFinite(value)) return undefined;
  const rounded = Math.round(value);
  return Number.isSafeInteger(rounded) && rounded > 0 ? rounded : undefined;
}
