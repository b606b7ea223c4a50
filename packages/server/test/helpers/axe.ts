// axe-core in a page under test: injected from node_modules (nothing downloaded), run
// over the whole document, and its violations of every impact as readable lines.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { AxeResults, NodeResult, RunOptions } from 'axe-core';
import type { Page } from 'playwright-core';

// Evaluated rather than added as a <script>: the page's Content-Security-Policy
// (script-src 'self') refuses inline scripts, and a test should not switch it off.
const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/**
 * Runs axe on the page's document and returns one readable block per violation ([]
 * when none). `iframes: false`: the only frame the UI has is a mail's HTML, sandboxed
 * without scripts (html-view.tsx), so axe cannot run inside it, and what is inside is
 * the sender's markup, not ours. The <iframe> element itself is still checked (its
 * title: frame-title). Every rule is on; none is disabled.
 */
export async function axeViolations(page: Page, options: RunOptions = {}): Promise<string[]> {
  if (!(await page.evaluate('typeof window.axe === "object"'))) await page.evaluate(AXE_SOURCE);
  const results = (await page.evaluate(`axe.run(document, ${JSON.stringify({ resultTypes: ['violations'], iframes: false, ...options })})`)) as AxeResults;
  // A sanity check that axe looked at the page at all (a run that checked nothing would pass).
  if (results.passes.length < 10) throw new Error(`axe checked only ${results.passes.length} rules on ${page.url()}`);
  return results.violations.map(
    (v) =>
      `${v.impact ?? 'no impact'}: ${v.id} — ${v.help} (${v.helpUrl})\n` +
      v.nodes.map((n: NodeResult) => `    ${n.target.join(' ')}\n      ${n.html.slice(0, 200)}\n      ${n.failureSummary?.replace(/\n/g, '\n      ') ?? ''}`).join('\n'),
  );
}

/** Fails with every violation written out when axe finds any. */
export async function assertNoViolations(page: Page, where: string): Promise<void> {
  const found = await axeViolations(page);
  if (found.length) throw new Error(`axe: ${found.length} violation(s) ${where}:\n${found.join('\n')}`);
}
