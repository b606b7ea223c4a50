// Links in the documentation resolve: every relative link and `#anchor` in every .md file
// of the repository (outside node_modules and build output) names a file that exists and
// a heading it has (GitHub's anchor slugs), and every `docs/<page>.md "Section"` citation, in a
// source comment or a page, names a heading of that page or the bold lead of one of its
// paragraphs (docs/architecture.md "Where things are written").
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
const SKIP_DIRS = new Set(['node_modules', '.git', 'dist', 'dist-admin', 'coverage']);

function walk(dir: string, keep: (name: string) => boolean, out: string[] = []): string[] {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    // A folder reached through a symbolic link is walked too (npm test's mirror links them).
    if (entry.isDirectory() || (entry.isSymbolicLink() && statSync(join(dir, entry.name)).isDirectory())) {
      if (!SKIP_DIRS.has(entry.name) && !entry.name.startsWith('.')) walk(join(dir, entry.name), keep, out);
    } else if (keep(entry.name)) out.push(join(dir, entry.name));
  }
  return out;
}

/** The text of a markdown file without fenced code blocks (links there are examples). */
function withoutFences(text: string): string[] {
  const lines: string[] = [];
  let fence: string | null = null;
  for (const line of text.split('\n')) {
    const open = /^\s*(`{3,}|~{3,})/.exec(line);
    if (fence === null && open) fence = open[1]![0]!;
    else if (fence !== null && open && open[1]![0] === fence) fence = null;
    else lines.push(fence === null ? line : '');
  }
  return lines;
}

/** GitHub's slug of a heading: lower case, punctuation dropped, spaces to hyphens. */
export function slug(heading: string): string {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1') // links and images: their text
    .replace(/<[^>]+>/g, '') // inline HTML
    .replace(/[`*~]|(?<![\p{L}\p{N}])_|_(?![\p{L}\p{N}])/gu, ''); // emphasis and code marks
  return text
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

interface Page {
  /** Headings and the bold leads of paragraphs and list items: what a citation may name. */
  sections: string[];
  anchors: Set<string>;
}

const pages = new Map<string, Page>();
function page(file: string): Page {
  let p = pages.get(file);
  if (p) return p;
  const sections: string[] = [];
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of withoutFences(readFileSync(file, 'utf8'))) {
    const h = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    const lead = /^(?:\s*[-*]\s+|\d+\.\s+)?\*\*([^*]+?)[.:]?\*\*/.exec(line);
    if (lead) sections.push(lead[1]!);
    if (h) {
      sections.push(h[1]!);
      const base = slug(h[1]!);
      const n = seen.get(base) ?? 0;
      seen.set(base, n + 1);
      anchors.add(n === 0 ? base : `${base}-${n}`);
    }
    for (const a of line.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(a[1]!);
  }
  p = { sections, anchors };
  pages.set(file, p);
  return p;
}

/** Whether a cited section names a section: all of it, or its start at a word's end, numbering aside. */
function hasSection(file: string, section: string): boolean {
  const want = section.replace(/\s+/g, ' ').toLowerCase().replace(/^\d+\.\s+/, '');
  return page(file).sections.some((h) => {
    const text = h.replace(/`/g, '').replace(/^\d+\.\s+/, '').toLowerCase();
    return text === want || (text.startsWith(want) && /^[^\p{L}\p{N}]/u.test(text.slice(want.length)));
  });
}

const markdown = walk(ROOT, (n) => n.endsWith('.md'));

describe('documentation links', () => {
  it('finds the documentation', () => {
    assert.ok(markdown.some((f) => relative(ROOT, f) === 'README.md'));
    assert.ok(markdown.some((f) => relative(ROOT, f) === join('docs', 'api.md')));
  });

  it('slugs headings as GitHub does', () => {
    assert.equal(slug('13. Configuration'), '13-configuration');
    assert.equal(slug('mail.tm-compatible API'), 'mailtm-compatible-api');
    assert.equal(slug('`GET /api/mails/wait`'), 'get-apimailswait');
    assert.equal(slug('Moving from Mailpit or MailHog'), 'moving-from-mailpit-or-mailhog');
    assert.equal(slug('Memory: what "stable" means'), 'memory-what-stable-means');
    assert.equal(slug('snake_case and *emphasis*'), 'snake_case-and-emphasis');
  });

  it('resolves every relative link and anchor in every .md file', () => {
    const broken: string[] = [];
    for (const file of markdown) {
      const lines = withoutFences(readFileSync(file, 'utf8'));
      lines.forEach((raw, i) => {
        const line = raw.replace(/`[^`]*`/g, '');
        const targets = [
          ...[...line.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1]!),
          ...[...line.matchAll(/^\s*\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/g)].map((m) => m[1]!),
        ];
        for (const target of targets) {
          if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // http:, mailto:, …
          const [path, anchor] = target.split('#', 2) as [string, string | undefined];
          const to = path === '' ? file : resolve(dirname(file), decodeURIComponent(path));
          const where = `${relative(ROOT, file)}:${i + 1}: ${target}`;
          if (!existsSync(to)) {
            broken.push(`${where} (no such file)`);
            continue;
          }
          if (anchor !== undefined && anchor !== '' && to.endsWith('.md') && statSync(to).isFile()) {
            if (!page(to).anchors.has(decodeURIComponent(anchor).toLowerCase())) broken.push(`${where} (no such heading)`);
          }
        }
      });
    }
    assert.deepEqual(broken, []);
  });

  it('resolves every docs/<page>.md "Section" citation in the sources and the pages', () => {
    const sources = ['packages', 'scripts', 'bench'].flatMap((d) =>
      existsSync(join(ROOT, d)) ? walk(join(ROOT, d), (n) => /\.(ts|tsx|mts|cts|js|mjs|cjs)$/.test(n)) : [],
    );
    const broken: string[] = [];
    for (const file of [...sources, ...markdown]) {
      const text = readFileSync(file, 'utf8');
      // In a page the quote may run over a line break; in a source, one comment line.
      const quote = file.endsWith('.md') ? '"([^"]+)"' : '"([^"\\n]+)"';
      const cite = new RegExp(`(?<![\\w/.-])(docs/[\\w.-]+\\.md|README(?:\\.md)?)\`?,? \\(?${quote}`, 'g');
      for (const m of text.matchAll(cite)) {
        const doc = join(ROOT, m[1]!.startsWith('README') ? 'README.md' : m[1]!);
        const line = text.slice(0, m.index).split('\n').length;
        const where = `${relative(ROOT, file)}:${line}: ${m[1]} "${m[2]!.replace(/\s+/g, ' ')}"`;
        if (!existsSync(doc)) broken.push(`${where} (no such file)`);
        else if (!hasSection(doc, m[2]!)) broken.push(`${where} (no such section)`);
      }
    }
    assert.deepEqual(broken, []);
  });
});
