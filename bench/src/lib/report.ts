// What every bench returns, and how the orchestrator prints it.

export type Verdict = 'met' | 'missed' | 'info' | 'not measured';

export interface Row {
  /** Short bench name, e.g. "api-read". */
  bench: string;
  /** What was measured, e.g. "GET /api/mails req/s". */
  measure: string;
  /** temp-inbox's figure, formatted. */
  ours: string;
  /** The comparison's figure, formatted ("" when there is none). */
  baseline: string;
  /** The figure the target is about (a ratio, a percentile, a size), formatted. */
  result: string;
  target: string;
  verdict: Verdict;
  /** The raw numbers behind the row, for the JSON file. */
  values?: Record<string, number | string | boolean | null>;
}

export interface BenchOutput {
  rows: Row[];
  /** Every sample and setting, for the JSON file. */
  details: Record<string, unknown>;
}

export interface Context {
  quick: boolean;
  log(message: string): void;
}

export type Bench = (ctx: Context) => Promise<BenchOutput>;

export function verdict(ok: boolean): Verdict {
  return ok ? 'met' : 'missed';
}

/** A Markdown table (so it can be pasted into docs/benchmarks.md as is). */
export function table(rows: Row[]): string {
  const head = ['bench', 'measure', 'temp-inbox', 'baseline', 'result', 'target', 'verdict'];
  const body = rows.map((r) => [r.bench, r.measure, r.ours, r.baseline, r.result, r.target, r.verdict]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i]!.length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
  return [line(head), `| ${widths.map((w) => '-'.repeat(w)).join(' | ')} |`, ...body.map(line)].join('\n');
}
