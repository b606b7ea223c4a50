const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

/** Parses "500ms", "30s", "15m", "12h", "7d", "2w" (or plain seconds) into milliseconds. */
export function parseDuration(raw: string): number | undefined {
  const m = /^(\d+)(ms|s|m|h|d|w)?$/.exec(raw.trim());
  if (!m) return undefined;
  const value = Number(m[1]) * UNITS[m[2] ?? 's']!;
  return Number.isSafeInteger(value) ? value : undefined;
}
