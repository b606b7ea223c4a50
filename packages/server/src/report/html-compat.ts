// The HTML compatibility section: for each HTML element, attribute and CSS property the
// mail uses, which mail clients do not support it or support it in part, from the
// caniemail.com data as the `caniemail` package ships and checks it. Runs in the report's
// worker: the package parses with htmlparser2's Parser, whose time grows with nesting, so
// markup past the bounds below is not handed to it at all (the worker's time-out is the
// last resort).
import type { HtmlFeature, HtmlSection } from '@temp-inbox/api';
import { caniemail, rawData } from 'caniemail';
import type { HtmlFacts } from './html-scan.js';

/** Past any of these the section is `unavailable` rather than a parse that may take seconds. */
export const HTML_CHECK_LIMITS = { bytes: 2 * 1024 * 1024, depth: 400, elements: 50_000, attributes: 200_000 };

/** The support percentage from which the section passes, and below which it fails. */
export const SUPPORT_PASS = 90;
export const SUPPORT_WARN = 70;

/** The caniemail feature of each element that has one of its own (`html-img` is "<img> element"). */
const HTML_TITLES = new Map(rawData.data.filter((f) => /^html-[a-z0-9]+$/.test(f.slug)).map((f) => [f.slug.slice(5), f.title] as const));

/** How caniemail.com writes each family and platform ("gmail" is "Gmail", "desktop-webmail" is "Desktop Webmail"). */
export const NICE_NAMES = (rawData as unknown as { nicenames: unknown }).nicenames as { family: Record<string, string>; platform: Record<string, string> };

/** Each feature of the data by the title the checks name it with. */
const BY_TITLE = new Map(rawData.data.map((f) => [f.title, { slug: f.slug, category: f.category, url: f.url }] as const));

type Globs = Parameters<typeof caniemail>[0]['clients'];

/** Every client (family.platform) the data has results for and the package checks (it refuses names it does not know). */
export const CLIENTS: readonly string[] = (() => {
  const out = new Set<string>();
  for (const feature of rawData.data) for (const [family, platforms] of Object.entries(feature.stats ?? {})) for (const platform of Object.keys(platforms ?? {})) out.add(`${family}.${platform}`);
  return [...out].sort().filter((client) => {
    try {
      caniemail({ clients: [client] as Globs, html: '<p></p>' });
      return true;
    } catch {
      return false;
    }
  });
})();

interface Issue {
  title: string;
  notes?: string[];
}

const dataDate = () => String(rawData.last_update_date);

function tooLarge(facts: HtmlFacts): string | null {
  const l = HTML_CHECK_LIMITS;
  if (facts.bytes > l.bytes) return `The HTML is larger than ${l.bytes / 1024 / 1024} MiB; it is not checked.`;
  if (facts.depth > l.depth) return `The HTML nests ${facts.depth} elements deep (more than ${l.depth}); it is not checked.`;
  if (facts.elements > l.elements) return `The HTML has more than ${l.elements} elements; it is not checked.`;
  if (facts.attributes > l.attributes) return `The HTML has more than ${l.attributes} attributes; it is not checked.`;
  return null;
}

export function htmlSection(html: string | null, facts: HtmlFacts | null): HtmlSection {
  const base = { clients: CLIENTS.length, data_date: dataDate(), tests: 0, elements: facts?.elements ?? 0 };
  if (html === null || facts === null) return { ...base, verdict: 'pass', findings: [], supported: null, support: null, features: [] };
  const refused = tooLarge(facts);
  if (refused) return { ...base, verdict: 'unavailable', reason: refused, findings: [], supported: null, support: null, features: [] };
  const { issues } = caniemail({ clients: [...CLIENTS] as Globs, html });
  const features = new Map<string, { unsupported: Set<string>; partial: Set<string>; notes: Set<string> }>();
  const entry = (title: string) => {
    let f = features.get(title);
    if (!f) features.set(title, (f = { unsupported: new Set(), partial: new Set(), notes: new Set() }));
    return f;
  };
  for (const [client, list] of issues.errors as unknown as Map<string, Issue[]>) for (const i of list) entry(i.title).unsupported.add(client);
  for (const [client, list] of issues.warnings as unknown as Map<string, Issue[]>) {
    for (const i of list) {
      const f = entry(i.title);
      f.partial.add(client);
      for (const n of i.notes ?? []) if (f.notes.size < 10) f.notes.add(n);
    }
  }
  const failing = new Set((issues.errors as unknown as Map<string, Issue[]>).keys());
  const supported = CLIENTS.length - failing.size;
  // Each feature used, by each client: supported 1, partly ½, not 0. Used without any issue:
  // the flagged features and the elements used that the data knows and no client lacks.
  const fine = facts.tags.filter((t) => HTML_TITLES.has(t) && !features.has(HTML_TITLES.get(t)!)).length;
  const tests = features.size + fine;
  let missing = 0;
  for (const f of features.values()) missing += f.unsupported.size + f.partial.size / 2;
  const support = tests === 0 ? 100 : Math.round(1000 * (1 - missing / (tests * CLIENTS.length))) / 10;
  const list: HtmlFeature[] = [...features].map(([title, f]) => {
    const known = BY_TITLE.get(title);
    return { slug: known?.slug ?? '', category: known?.category ?? (title.startsWith('<') ? 'html' : 'css'), url: known?.url ?? 'https://www.caniemail.com/', title, unsupported: [...f.unsupported].sort(), partial: [...f.partial].sort(), notes: [...f.notes] };
  });
  list.sort((a, b) => b.unsupported.length - a.unsupported.length || b.partial.length - a.partial.length || a.title.localeCompare(b.title));
  const verdict = support >= SUPPORT_PASS ? 'pass' : support >= SUPPORT_WARN ? 'warn' : 'fail';
  const message = `${support}% of what this HTML uses is supported across ${CLIENTS.length} mail clients (partly supported counts half); ${supported} of them support every feature at least in part.`;
  const findings = [{ rule: 'html-support', verdict, message } as const];
  return { ...base, tests, verdict, findings: [...findings], supported, support, features: list.slice(0, 200) };
}
