// GET /api/mails/search: the address's own mail found by words (docs/api.md "GET /api/mails/search").
import type { FastifyPluginAsync } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { MailsResponse, routes, SearchQuery } from '@temp-inbox/api';
import type { HttpDeps } from '../deps.js';
import { authenticate } from '../auth.js';
import { errorResponse } from '../errors.js';
import { strictIntegers } from '../query.js';
import { toItem } from '../presenters.js';

export const searchRoutes: FastifyPluginAsync<{ deps: HttpDeps }> = async (fastify, { deps }) => {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { mail } = deps;

  app.get(
    routes.searchMails,
    {
      // Counted with listing: a search is a list narrowed by words.
      config: { rateLimit: 'MAILS' },
      preValidation: strictIntegers('limit', 'offset'),
      schema: {
        summary: 'Find mail by words and fields, newest first',
        description:
          'Free words of `q` must each start a word of the subject, the sender or recipients, or the decoded text (accents and case ignored; ' +
          'punctuation separates words; a word under 3 characters must match whole). Also: `"a phrase"` (its words, whole), `from:`, `to:`, ' +
          '`subject:` (contains, case ignored), `has:attachment`, `is:read`, `is:unread`, `before:YYYY-MM-DD`, `after:YYYY-MM-DD` (UTC days), ' +
          'and `-` before any term to negate it. At most 8 terms. `count` is the number of matches. Mail stored before search existed has no words.',
        tags: ['mail'],
        security: [{ bearer: [] }],
        querystring: SearchQuery,
        response: {
          200: MailsResponse,
          400: errorResponse('q (1..200 characters), limit (1..100) and offset (>= 0) are all required; q is bad syntax (the reason says where) or has more than 8 terms.'),
          401: errorResponse('JWT missing, malformed, expired, or its address was deleted.'),
          429: errorResponse('Rate limit exceeded; see Retry-After.'),
          503: errorResponse('The search ran past its time budget (2 s) or too many searches are waiting; see Retry-After.'),
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
