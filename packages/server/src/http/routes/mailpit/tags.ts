// Tags of the Mailpit-compatible API: GET /api/v1/tags (every tag of the sandbox's mail),
// PUT /api/v1/tags (set the tags of messages, replacing theirs), PUT /api/v1/tags/{tag}
// (rename) and DELETE /api/v1/tags/{tag} (remove from every message; the messages stay).
// Tags are cleaned as Mailpit cleans them (letters, digits, '-', '.', '_', spaces).
import type { FastifyPluginAsync } from 'fastify';
import { MailpitTags, mounts, routes, within } from '@temp-inbox/api';
import { badRequest } from '../../../domain/errors.js';
import { cleanTag, tagsOf } from '../../../mailpit/compose.js';
import type { MailpitRouteOptions } from './options.js';
import { idsOf } from './messages.js';
import { answering, routeOptions, sandboxOf, sendJson, sendOk } from './respond.js';

type TagParams = { Params: { tag: string } };

export const tagRoutes: FastifyPluginAsync<MailpitRouteOptions> = async (fastify, { deps, hook }) => {
  const { store } = deps;
  const opts = routeOptions('MAILPIT', hook);

  fastify.get(within(mounts.mailpit, routes.mailpitTags), answering(opts, MailpitTags), async (request, reply) => {
    const sandbox = sandboxOf(request);
    return sendJson(
      reply,
      (await store.listTags(sandbox.addressId)).map((t) => t.tag),
    );
  });

  fastify.put(within(mounts.mailpit, routes.mailpitTags), opts, async (request, reply) => {
    const sandbox = sandboxOf(request);
    const ids = idsOf(request.body);
    if (ids.length === 0) throw badRequest('IDs must name at least one message.');
    const tags = tagsOf((request.body as Record<string, unknown>)['Tags']);
    await store.setMailTags(sandbox.addressId, ids, tags);
    return sendOk(reply);
  });

  fastify.put<TagParams>(within(mounts.mailpit, routes.mailpitTag), opts, async (request, reply) => {
    const sandbox = sandboxOf(request);
    const body = request.body;
    const name = typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as Record<string, unknown>)['Name'] : undefined;
    const to = typeof name === 'string' ? cleanTag(name) : '';
    if (!to) throw badRequest('Invalid tag name: Name must have at least one letter, digit, "-", "." or "_".');
    await store.renameTag(sandbox.addressId, request.params.tag, to);
    return sendOk(reply);
  });

  fastify.delete<TagParams>(within(mounts.mailpit, routes.mailpitTag), opts, async (request, reply) => {
    const sandbox = sandboxOf(request);
    await store.deleteTag(sandbox.addressId, request.params.tag);
    return sendOk(reply);
  });
};
