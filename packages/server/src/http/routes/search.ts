// GET /api/mails/search: the address's own mail found by words (docs/api.md "Search").
import type { FastifyPluginAsync } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { MailsResponse, Paths, SearchQuery } from '@temp-inbox/api';
import type { HttpDeps } from '../deps.js';
import { authenticate } from '../auth.js';
import { errorResponse } from '../errors.js';
import { strictIntegers } from '../query.js';
import { toItem } from './mails.js';

export const searchRoutes: FastifyPluginAsync<{ deps: HttpDeps }> = async (fastify, { deps }) => {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { mail } = deps;

  app.get(
    Paths.searchMails,
    {
      // Counted with listing: a search is a list narrowed by words.
      config: { rateLimit: 'MAILS' },
      preValidation: strictIntegers('limit', 'offset'),
      schema: {
        summary: 'Find mail by words, newest first',
        description:
          'Each word of `q` must start a word of the subject, the sender or recipients, or the decoded text (accents and case ignored; ' +
          'punctuation separates words). `count` is the number of matches. Mail stored before search existed is not found.',
        tags: ['mail'],
        security: [{ bearer: [] }],
        querystring: SearchQuery,
        response: {
          200: MailsResponse,
          400: errorResponse('q (1..200 characters), limit (1..100) and offset (>= 0) are all required.'),
          401: errorResponse('JWT missing, malformed, expired, or its address was deleted.'),
          429: errorResponse('Rate limit exceeded; see Retry-After.'),
        },
      },
    },
    async (request) => {
      const address = await authenticate(request, mail);
      const { q, limit, offset } = request.query;
      const page = await mail.searchMails(address.id, q, limit, offset);
      return { results: page.results.map(toItem), count: page.count };
    },
  );
};
