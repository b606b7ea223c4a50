// Small statistics over samples.

export function median(xs: number[]): number {
  return percentile(xs, 50);
}

/** Linear-interpolated percentile (p in 0..100); NaN for no samples. */
export function percentile(xs: number[], p: number): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const rank = (p / 100) * (s.length - 1);
  const lo = Math.floor(rank);
  const hi = Math.ceil(rank);
  return s[lo]! + (s[hi]! - s[lo]!) * (rank - lo);
}

export function mean(xs: number[]): number {
  return xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : NaN;
}

export function round(x: number, digits = 2): number {
  if (!Number.isFinite(x)) return x;
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

/** 12345.6 -> "12,346"; 1.234 -> "1.23". */
export function fmt(x: number | undefined, digits?: number): string {
  if (x === undefined || Number.isNaN(x)) return '—';
  const d = digits ?? (Math.abs(x) >= 100 ? 0 : Math.abs(x) >= 10 ? 1 : 2);
  return x.toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d });
}

export const MB = 1024 * 1024;
