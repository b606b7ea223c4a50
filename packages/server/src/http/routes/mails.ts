// An address's mail: the cached reads (mail-reads.ts), the changes (mail-changes.ts) and
// GET /api/attachment/{uuid}/{attachmentId}, one attachment decoded.
import type { FastifyPluginAsync } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { AttachmentParams, routes } from '@temp-inbox/api';
import type { HttpDeps } from '../deps.js';
import { authenticate } from '../auth.js';
import { errorResponse } from '../errors.js';
import { createResponseCache } from '../response-cache.js';
import type { LargeAnswers } from '../large-answers.js';
import { sendStoredAttachment } from '../presenters.js';
import { mailChangeRoutes } from './mail-changes.js';
import { bearer, rateLimited, unauthorizedResponse } from './mail-options.js';
import { cachedMailRoutes } from './mail-reads.js';

export const mailRoutes: FastifyPluginAsync<{ deps: HttpDeps; answers: LargeAnswers }> = async (fastify, { deps, answers }) => {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { mail } = deps;
  // Serialised list pages and mails, reused while the address's mail is unchanged.
  const cache = createResponseCache();
  fastify.addHook('onClose', async () => cache.close());
  cachedMailRoutes(app, { deps, answers, cache });
  mailChangeRoutes(app, { deps });

  app.get(
    routes.attachment,
    {
      config: { rateLimit: 'ATTACHMENT' },
      schema: {
        summary: 'Download one attachment, decoded',
        description: 'The decoded bytes with the part\'s Content-Type and `Content-Disposition: attachment`. Ids come from the metadata `attachments` list.',
        tags: ['mail'],
        security: bearer,
        params: AttachmentParams,
        response: {
          200: { description: 'The attachment bytes.', content: { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } } },
          401: unauthorizedResponse,
          404: errorResponse('Unknown mail or attachment.'),
          429: rateLimited,
        },
      },
    },
    async (request, reply) => {
      const address = await authenticate(request, mail);
      return sendStoredAttachment(request, reply, answers, await mail.openAttachment(address.id, request.params.uuid, request.params.attachmentId));
    },
  );
};
