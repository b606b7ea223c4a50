// The CLI's usage errors say what was meant: the nearest known option or command to
// a misspelt one, and the missing http:// of a --url. Each returns a sentence.

/** Optimal string alignment distance: insertions, deletions, substitutions and swaps of neighbours. */
export function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, d[i - 2]![j - 2]! + 1);
      d[i]![j] = best;
    }
  }
  return d[a.length]![b.length]!;
}

/** The known word nearest to `word` (at most 2 edits, and fewer than half its letters), if any. */
export function nearest(word: string, known: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const k of known) {
    const distance = editDistance(word.toLowerCase(), k.toLowerCase());
    if (distance < bestDistance) [best, bestDistance] = [k, distance];
  }
  return best !== undefined && bestDistance <= Math.min(2, Math.floor(Math.max(word.length, 1) / 2)) ? best : undefined;
}

/** parseArgs' error as a sentence, with the option meant when the unknown one is a near miss. */
export function optionError(err: Error & { code?: string }, known: readonly string[], elsewhere: Record<string, readonly string[]> = {}): string {
  const unknown = /^Unknown option '([^']+)'/.exec(err.message);
  if (err.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' && unknown) {
    const given = unknown[1]!;
    const name = given.replace(/^-+/, '').split('=')[0]!;
    const meant = nearest(name, known);
    if (meant) return `Unknown option '${given}'; did you mean --${meant}?`;
    // An option of another command ("new --timeout"): say whose it is.
    for (const [command, options] of Object.entries(elsewhere)) {
      const other = nearest(name, options);
      if (other) return `Unknown option '${given}'; --${other} is an option of "${command}".`;
    }
    return `Unknown option '${given}'.`;
  }
  const missing = /^Option '(-\w, )?--([\w-]+) <value>' argument missing/.exec(err.message);
  if (missing) return `The --${missing[2]} option needs a value.`;
  return err.message.replace(/\.?$/, '.');
}

/**
 * Why `url` (from `source`: "--url" or "TEMP_INBOX_URL") cannot be the service's
 * address, with the address meant; undefined when it is an http(s) URL.
 */
export function urlProblem(url: string, source: '--url' | 'TEMP_INBOX_URL'): string | undefined {
  const shown = source === '--url' ? `--url ${url}` : `TEMP_INBOX_URL=${url}`;
  const suggest = (u: string) => (source === '--url' ? `--url ${u}` : `TEMP_INBOX_URL=${u}`);
  let parsed: URL | undefined;
  try {
    parsed = new URL(url);
  } catch {
    // no scheme at all, or not a URL: see below
  }
  if (parsed && (parsed.protocol === 'http:' || parsed.protocol === 'https:')) return undefined;
  // "localhost:8080" parses with the scheme "localhost:"; "8080" and "example.org" do not parse.
  const schemeless = !parsed || !url.includes('://');
  if (schemeless) {
    const guess = /^\d+$/.test(url) ? `http://localhost:${url}` : `http://${url.replace(/^\/+/, '')}`;
    if (URL.canParse(guess)) return `"${shown}" has no scheme: add it, e.g. ${suggest(guess)}.`;
    return `"${shown}" is not a URL; give one such as ${suggest('http://localhost:8080')}.`;
  }
  return `"${shown}" is not an http:// or https:// URL; e.g. ${suggest(`http://${parsed!.host || 'localhost:8080'}${parsed!.host && parsed!.pathname !== '/' ? parsed!.pathname : ''}`)}.`;
}
