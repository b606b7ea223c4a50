// The Mailpit-compatible API under /mailpit (docs/api.md "Moving from Mailpit or MailHog"):
// Mailpit's clients work with https://<host>/mailpit as their base URL and a sandbox's name
// and password as their Basic credentials. Always mounted: without a sandbox (or without
// valid credentials) every route answers 401. Each route is rate-limited (RATE_LIMIT_MAILPIT)
// before its credentials are checked; errors are plain text, as Mailpit's are.
import type { FastifyPluginAsync } from 'fastify';
import type { SandboxService } from '../../../sandboxes/types.js';
import type { BasicAuth } from '../../basic-auth.js';
import type { HttpDeps } from '../../deps.js';
import type { LargeAnswers } from '../../large-answers.js';
import { messageRoutes } from './message.js';
import { messageListRoutes } from './messages.js';
import type { MailpitRouteOptions } from './options.js';
import { sandboxHook } from './respond.js';
import { sendRoutes } from './send.js';
import { systemRoutes } from './system.js';
import { tagRoutes } from './tags.js';

export const MAILPIT_REALM = 'mailpit';

export const mailpitRoutes: FastifyPluginAsync<{ deps: HttpDeps; sandboxes: SandboxService; auth: BasicAuth; answers: LargeAnswers }> = async (fastify, { deps, sandboxes, auth, answers }) => {
  const own: MailpitRouteOptions = { deps, sandboxes, answers, hook: sandboxHook(auth, MAILPIT_REALM) };
  await fastify.register(systemRoutes, own);
  await fastify.register(messageListRoutes, own);
  await fastify.register(messageRoutes, own);
  await fastify.register(tagRoutes, own);
  await fastify.register(sendRoutes, own);
};
