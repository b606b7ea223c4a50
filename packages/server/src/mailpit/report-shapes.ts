// Mailpit's three checks of a message (GET /api/v1/message/{ID}/html-check, /link-check,
// /sa-check) in Mailpit's shapes, from the sections of our deliverability report
// (report/service.ts): the same HTML support data (caniemail.com's), the same link check
// through the address guard, the same scanner (rspamd or SpamAssassin).
import { STATUS_CODES } from 'node:http';
import type { HtmlSection, LinksSection, SpamSection } from '@temp-inbox/api';

type Support = 'yes' | 'no' | 'partial';

/** The clients and how caniemail.com names them: its module is loaded on the first HTML check only. */
async function clientNames(): Promise<{ clients: readonly string[]; nice: { family: Record<string, string>; platform: Record<string, string> } }> {
  const { CLIENTS, NICE_NAMES } = await import('../report/html-compat.js');
  return { clients: CLIENTS, nice: NICE_NAMES };
}

const pct = (n: number, of: number) => (of === 0 ? 0 : Math.round((10_000 * n) / of) / 100);

export async function mailpitHtmlCheck(html: HtmlSection) {
  const { clients, nice } = await clientNames();
  const split = (client: string) => {
    const [family = client, platform = ''] = client.split('.');
    return { family, platform, Family: nice.family[family] ?? family, Platform: nice.platform[platform] ?? platform };
  };
  const platforms: Record<string, string[]> = {};
  for (const c of clients) {
    const { Family, Platform } = split(c);
    (platforms[Family] ??= []).push(Platform);
  }
  let unsupported = 0;
  let partial = 0;
  const warnings = html.features.map((f) => {
    const notes = Object.fromEntries(f.notes.map((n, i) => [String(i + 1), n]));
    const results = clients.map((c) => {
      const support: Support = f.unsupported.includes(c) ? 'no' : f.partial.includes(c) ? 'partial' : 'yes';
      const { Family, Platform, platform } = split(c);
      return { Family, Platform: platform, Name: `${Family} ${Platform}`, Version: '', Support: support, NoteNumber: support === 'partial' && f.notes.length > 0 ? '1' : '' };
    });
    unsupported += f.unsupported.length;
    partial += f.partial.length;
    const n = clients.length;
    return {
      Slug: f.slug,
      Title: f.title,
      Description: '',
      Category: f.category === 'css' ? 'css' : 'html',
      Tags: [],
      Keywords: '',
      URL: f.url,
      NotesByNumber: notes,
      Results: results,
      Score: { Found: 1, Supported: pct(n - f.unsupported.length - f.partial.length, n), Partial: pct(f.partial.length, n), Unsupported: pct(f.unsupported.length, n) },
    };
  });
  const pairs = html.tests * clients.length;
  const Unsupported = pct(unsupported, pairs);
  const Partial = pct(partial, pairs);
  return {
    Platforms: platforms,
    Total: { Nodes: html.elements, Tests: html.tests, Supported: Math.round((100 - Unsupported - Partial) * 100) / 100, Partial, Unsupported },
    Warnings: warnings,
  };
}

export function mailpitLinkCheck(links: LinksSection) {
  const out = links.links.map((l) => ({
    URL: l.url,
    StatusCode: l.status ?? 0,
    Status: l.status ? `${l.status} ${STATUS_CODES[l.status] ?? ''}`.trim() : (l.reason ?? l.result ?? ''),
  }));
  return { Errors: links.links.filter((l) => l.result === 'broken' || l.result === 'error' || l.result === 'refused').length, Links: out };
}

export function mailpitSpamCheck(spam: SpamSection) {
  if (spam.verdict === 'unavailable') return { Error: spam.reason ?? 'The spam check is not available.', IsSpam: false, Score: 0, Rules: null };
  return { Error: '', IsSpam: spam.verdict === 'fail', Score: spam.score ?? 0, Rules: spam.rules.map((r) => ({ Name: r.name, Score: r.score, Description: r.description })) };
}
