import type { FastifyPluginAsync } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { API_VERSION, HealthResponse, Paths } from '@temp-inbox/api';
import type { HttpDeps } from '../deps.js';

const PING_TIMEOUT_MS = 2000;

export const systemRoutes: FastifyPluginAsync<{ deps: HttpDeps }> = async (fastify, { deps }) => {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

  app.get(
    Paths.healthCheck,
    {
      schema: {
        summary: 'Service health, with a database check',
        tags: ['system'],
        response: { 200: HealthResponse, 503: HealthResponse },
      },
    },
    async (request, reply) => {
      let timer: NodeJS.Timeout | undefined;
      try {
        await Promise.race([
          deps.store.ping(),
          new Promise((_, reject) => (timer = setTimeout(() => reject(new Error('database ping timed out')), PING_TIMEOUT_MS))),
        ]);
        return { status: 'ok' as const, version: API_VERSION };
      } catch (err) {
        request.log.error({ err }, 'health check failed');
        return reply.code(503).send({ status: 'error' as const, version: API_VERSION });
      } finally {
        clearTimeout(timer);
      }
    },
  );

  app.get(Paths.openapi, { schema: { hide: true } }, async () => app.swagger());
};
