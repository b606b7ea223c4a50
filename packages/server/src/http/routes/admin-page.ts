// The operators' admin page (packages/web, its own Vite build in dist-admin): /admin and
// its assets under /admin/assets/. Registered only when ADMIN_TOKEN is set, so without it
// the page and every admin asset are 404 (they are built apart from the public UI, so
// the UI's own static files never include them). The page holds nothing secret: it asks
// for the token and sends it with each /api/admin/* request.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import fastifyStatic from '@fastify/static';
import { mounts, routes } from '@temp-inbox/api';
import type { HttpDeps } from '../deps.js';

/** Where `npm run build` puts the admin page (from src/http/routes or dist/http/routes alike). */
export const ADMIN_WEB_ROOT = fileURLToPath(new URL('../../../../web/dist-admin/', import.meta.url));

/** Stricter than the public page's: the admin page shows no mail HTML, so nothing but its own files. */
const CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

export const adminPageRoutes: FastifyPluginAsync<{ deps: HttpDeps; root?: string }> = async (fastify, { deps, root = ADMIN_WEB_ROOT }) => {
  const file = join(root, 'admin.html');
  if (!existsSync(file)) {
    deps.logger.info({ root }, 'the admin page is not built; serving the admin API only');
    return;
  }
  const html = readFileSync(file);
  const page = async (_request: unknown, reply: FastifyReply) =>
    reply
      .type('text/html; charset=utf-8')
      .header('content-security-policy', CSP)
      .header('referrer-policy', 'no-referrer')
      .header('cache-control', 'no-cache')
      .header('x-robots-tag', 'noindex')
      .send(html);
  fastify.get(routes.adminPage, { schema: { hide: true } }, page);
  fastify.get(routes.adminPageSlash, { schema: { hide: true } }, page);
  await fastify.register(fastifyStatic, {
    root: join(root, 'assets'),
    prefix: mounts.adminAssets,
    // One route per built file: anything else under /admin/ stays the API's plain-text 404.
    wildcard: false,
    preCompressed: true,
    // The public UI's registration decorates the reply already.
    decorateReply: false,
    setHeaders(reply) {
      reply.header('content-security-policy', CSP);
      reply.header('cache-control', 'public, max-age=31536000, immutable');
    },
  });
};
