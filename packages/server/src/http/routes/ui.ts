// The browser UI (packages/web, built to static files by `npm run build`), served at
// `/` with the configuration the page needs (GET /ui-config.json). Without a build
// the API runs alone and `/` is a 404.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { FastifyPluginAsync } from 'fastify';
import fastifyStatic from '@fastify/static';
import { mounts, routes, UiConfig } from '@temp-inbox/api';
import type { HttpDeps } from '../deps.js';

/** Where `npm run build` puts the UI (from src/http/routes or dist/http/routes alike). */
export const WEB_ROOT = fileURLToPath(new URL('../../../../web/dist/', import.meta.url));

const TURNSTILE_ORIGIN = 'https://challenges.cloudflare.com';

/**
 * The page's policy. A mail's HTML is shown in a sandboxed srcdoc frame, which
 * inherits this policy and adds its own (no scripts; no remote content until the
 * reader asks for it, html-view.tsx), so a mail can neither run code nor load a
 * tracking image unasked.
 */
function contentSecurityPolicy(turnstile: boolean): string {
  const extra = turnstile ? ` ${TURNSTILE_ORIGIN}` : '';
  return [
    "default-src 'self'",
    `script-src 'self'${extra}`,
    `frame-src 'self'${extra}`,
    "connect-src 'self'",
    // A mail's frame (srcdoc) gets this policy and its own, stricter one: images, styles
    // and fonts from the network only after the reader clicks "Load" for that mail.
    "img-src 'self' data: https: http:",
    // Mail HTML styles itself inline.
    "style-src 'self' 'unsafe-inline' https: http:",
    "font-src 'self' data: https: http:",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}

export const uiRoutes: FastifyPluginAsync<{ deps: HttpDeps; root?: string }> = async (fastify, { deps, root = WEB_ROOT }) => {
  const { config } = deps;
  // The UI shows Turnstile's widget, or solves GET /api/challenge's proof of work, by `challenge`.
  const turnstileSiteKey = deps.challenge.mode === 'turnstile' ? (config.challenge.turnstileSiteKey ?? null) : null;
  // The domains are the pool's active ones now: an admin's change shows at the next load, on every node.
  const uiConfig = (domains: string[]) => JSON.stringify({
    domains,
    turnstileSiteKey,
    customNames: config.mail.customNames,
    challenge: deps.challenge.mode,
    abuseContact: config.mail.abuseContact ?? null,
  } satisfies UiConfig);
  fastify.get(routes.uiConfig, { schema: { hide: true, response: { 200: UiConfig } } }, async (_request, reply) => reply.type('application/json; charset=utf-8').header('cache-control', 'no-store').send(uiConfig(await deps.mail.domains.activeDomains())));

  if (!existsSync(`${root}index.html`)) {
    deps.logger.info({ root }, 'the web UI is not built; serving the API only');
    return;
  }
  const csp = contentSecurityPolicy(turnstileSiteKey !== null);
  await fastify.register(fastifyStatic, {
    root,
    prefix: mounts.ui,
    // One route per built file, so that unknown paths keep the API's plain-text 404.
    wildcard: false,
    // The build writes .br and .gz copies (packages/web/scripts/precompress.mjs): sent as they are.
    preCompressed: true,
    index: ['index.html'],
    setHeaders(reply, path) {
      reply.header('content-security-policy', csp);
      reply.header('referrer-policy', 'no-referrer');
      // Built assets carry a content hash in their names; the page itself must be fresh.
      reply.header('cache-control', path.includes('/assets/') ? 'public, max-age=31536000, immutable' : 'no-cache');
    },
  });
};
