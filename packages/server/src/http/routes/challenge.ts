// GET /api/challenge: a proof-of-work challenge to solve before POST /api/new_address
// when CHALLENGE=pow (docs/api.md; challenge/proof-of-work.ts). Any other mode: 404.
import type { FastifyPluginAsync } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { PowChallenge, routes } from '@temp-inbox/api';
import { notFound } from '../../domain/errors.js';
import type { HttpDeps } from '../deps.js';
import { errorResponse } from '../errors.js';

export const challengeRoutes: FastifyPluginAsync<{ deps: HttpDeps }> = async (fastify, { deps }) => {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { challenge } = deps;
  app.get(
    routes.challenge,
    {
      config: { rateLimit: 'CHALLENGE' },
      schema: {
        summary: 'A proof-of-work challenge for POST /api/new_address',
        description:
          'With CHALLENGE=pow: an ALTCHA challenge. Find `number` (0..maxnumber) such that the lower-case hex SHA-256 of `salt` followed by `number` in decimal equals `challenge`, then send base64(JSON {algorithm, challenge, number, salt, signature}) as `cf_token`. Each challenge expires (POW_CHALLENGE_TTL) and creates one address.',
        tags: ['addresses'],
        response: {
          200: PowChallenge,
          404: errorResponse('This server asks for no proof of work (CHALLENGE is not pow).'),
          429: errorResponse('Rate limit exceeded (RATE_LIMIT_CHALLENGE); see Retry-After.'),
        },
      },
    },
    async (_request, reply) => {
      if (!challenge.issue) throw notFound(`This server asks for no proof of work (its bot challenge is ${challenge.mode}).`);
      reply.header('cache-control', 'no-store');
      return challenge.issue();
    },
  );
};
