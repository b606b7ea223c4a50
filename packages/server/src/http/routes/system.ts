import type { FastifyPluginAsync } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { API_VERSION, HealthResponse, routes } from '@temp-inbox/api';
import type { StorageLevel } from '../../storage/storage-state.js';
import type { HttpDeps } from '../deps.js';

const PING_TIMEOUT_MS = 2000;

// The response as @temp-inbox/api declares it, storage included.
const Health = Type.Object({ ...HealthResponse.properties, storage: Type.Union([Type.Literal('ok'), Type.Literal('low'), Type.Literal('full')]) });

export const systemRoutes: FastifyPluginAsync<{ deps: HttpDeps }> = async (fastify, { deps }) => {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

  app.get(
    routes.healthCheck,
    {
      schema: {
        summary: 'Service health, with a database check and the state of its storage',
        tags: ['system'],
        response: { 200: Health, 503: Health },
      },
    },
    async (request, reply) => {
      let timer: NodeJS.Timeout | undefined;
      // Low: new mail is refused for now, everything else works. Full: writes fail, so the node is not healthy.
      const storage: StorageLevel = deps.storage ? await deps.storage.level() : 'ok';
      try {
        await Promise.race([
          deps.store.ping(),
          new Promise((_, reject) => (timer = setTimeout(() => reject(new Error('database ping timed out')), PING_TIMEOUT_MS))),
        ]);
        if (storage === 'full') return reply.code(503).send({ status: 'error' as const, version: API_VERSION, storage });
        return { status: 'ok' as const, version: API_VERSION, storage };
      } catch (err) {
        request.log.error({ err }, 'health check failed');
        return reply.code(503).send({ status: 'error' as const, version: API_VERSION, storage });
      } finally {
        clearTimeout(timer);
      }
    },
  );

  app.get(routes.openapi, { schema: { hide: true } }, async () => app.swagger());
};
