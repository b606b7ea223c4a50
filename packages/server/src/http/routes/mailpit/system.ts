// The instance routes of the Mailpit-compatible API, each about the sandbox the request
// opens: GET /api/v1/info (its message counts and tags), GET /api/v1/webui (the settings
// Mailpit's web UI reads: no relay, no SpamAssassin, chaos on), GET and PUT /api/v1/chaos
// (its SMTP faults, which only its own authenticated sessions get).
import type { FastifyPluginAsync } from 'fastify';
import { API_VERSION, MailpitChaos, MailpitInfo, MailpitWebUi, mounts, routes, within } from '@temp-inbox/api';
import { badRequest, notFound } from '../../../domain/errors.js';
import { chaosFromMailpit, chaosTriggers } from '../../../mailpit/shapes.js';
import { unreadOf } from '../../../mailpit/search.js';
import type { MailpitRouteOptions } from './options.js';
import { answering, routeOptions, sandboxOf, sendJson } from './respond.js';

export const systemRoutes: FastifyPluginAsync<MailpitRouteOptions> = async (fastify, { deps, sandboxes, hook }) => {
  const { store, mail } = deps;
  const opts = routeOptions('MAILPIT', hook);

  fastify.get(within(mounts.mailpit, routes.mailpitInfo), answering(opts, MailpitInfo), async (request, reply) => {
    const sandbox = sandboxOf(request);
    const [usage, unread, tags, all] = await Promise.all([
      store.addressUsage(sandbox.addressId),
      store.searchMails(sandbox.addressId, unreadOf(), 1, 0),
      store.listTags(sandbox.addressId),
      mail.listMails(sandbox.addressId, 1, 0),
    ]);
    return sendJson(reply, {
      Version: `temp-inbox ${API_VERSION}`,
      LatestVersion: `temp-inbox ${API_VERSION}`,
      // The database is the server's, shared: what the sandbox's mail takes in it.
      Database: '',
      DatabaseSize: usage.bytes,
      Messages: all.count,
      Unread: unread.count,
      Tags: Object.fromEntries(tags.map((t) => [t.tag, t.mails])),
      // Not counted per sandbox.
      RuntimeStats: { Uptime: Math.floor(process.uptime()), Memory: 0, MessagesDeleted: 0, SMTPAccepted: 0, SMTPAcceptedSize: 0, SMTPRejected: 0, SMTPIgnored: 0 },
    });
  });

  fastify.get(within(mounts.mailpit, routes.mailpitWebui), answering(opts, MailpitWebUi), async (request, reply) => {
    const sandbox = sandboxOf(request);
    return sendJson(reply, {
      Label: sandbox.name,
      MessageRelay: { Enabled: false, SMTPServer: '', ReturnPath: '', AllowedRecipients: '', BlockedRecipients: '', OverrideFrom: '', PreserveMessageIDs: false, RecipientAllowlist: '' },
      SpamAssassin: deps.report.scanner !== null,
      ChaosEnabled: true,
      DuplicatesIgnored: false,
      HideDeleteAllButton: false,
    });
  });

  fastify.get(within(mounts.mailpit, routes.mailpitChaos), answering(opts, MailpitChaos), async (request, reply) => sendJson(reply, chaosTriggers(sandboxOf(request).chaos)));

  fastify.put(within(mounts.mailpit, routes.mailpitChaos), answering(opts, MailpitChaos), async (request, reply) => {
    const sandbox = sandboxOf(request);
    const next = chaosFromMailpit(sandbox.chaos, request.body);
    if (typeof next === 'string') throw badRequest(next);
    const saved = await sandboxes.setChaos(sandbox.id, next);
    if (!saved) throw notFound('The sandbox no longer exists.');
    return sendJson(reply, chaosTriggers(saved.chaos));
  });
};
