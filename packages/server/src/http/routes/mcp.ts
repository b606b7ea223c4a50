// MCP over HTTP (MCP=on; docs/mcp.md): the protocol's Streamable HTTP transport at /mcp.
// Every request authenticates, with an inbox's token (Authorization: Bearer, as /api) or a
// sandbox's name and password (HTTP Basic, as /mailpit), and a session reads that inbox
// only. POST carries the client's messages (a tool call's progress and result come back on
// its event stream), DELETE ends a session; GET, the stream of messages the server sends
// unasked, is 405: this server sends none. Counted under RATE_LIMIT_MCP.
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { IncomingMessage } from 'node:http';
import { routes } from '@temp-inbox/api';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import { badRequest, notFound, unauthorized, unsupportedMediaType } from '../../domain/errors.js';
import { isSandboxAddress, SANDBOX_DOMAIN } from '../../domain/sandboxes.js';
import { mcpMailInbox, type McpPrincipal } from '../../mcp/mail-inbox.js';
import { principalBackend } from '../../mcp/tool-server.js';
import type { HttpDeps } from '../deps.js';
import { authenticate } from '../auth.js';
import { createBasicAuth } from '../basic-auth.js';
import { createMcpSessions, type McpSession } from '../mcp-sessions.js';
import { clientKey } from '../rate-limit.js';
import type { StreamAdmission } from '../stream-admission.js';

const ASK = 'Send "Authorization: Bearer <an inbox\'s token>", or a sandbox\'s name and password with HTTP Basic authentication.';

export const mcpRoutes: FastifyPluginAsync<{ deps: HttpDeps; streams: StreamAdmission }> = async (fastify, { deps, streams }) => {
  const { mail, bus } = deps;
  const basic = deps.sandboxes ? createBasicAuth(deps.sandboxes) : undefined;
  const sessions = createMcpSessions({
    logger: deps.logger,
    backendOf: (session, extra) => {
      const request = (extra.authInfo?.extra as { request: FastifyRequest }).request;
      const inbox = mcpMailInbox(session.principal, {
        mail,
        bus,
        client: clientKey(request.ip),
        admit: () => streams.admit(request, session.principal.addressId, 'wait'),
        onClose: (end) => streams.onClose(end),
        baseline: session.baseline,
      });
      return principalBackend(session.principal, inbox);
    },
  });
  fastify.addHook('preClose', async () => sessions.close());

  /** The inbox the request's credentials open; 401 (with WWW-Authenticate) without them. */
  async function principalOf(request: FastifyRequest, reply: FastifyReply): Promise<McpPrincipal> {
    const header = request.headers.authorization;
    try {
      if (header === undefined) throw unauthorized(`Missing credentials. ${ASK}`);
      if (/^basic\s/i.test(header)) {
        if (!basic) throw unauthorized(`This server has no sandboxes. ${ASK}`);
        const sandbox = await basic.sandboxOf(request);
        return { addressId: sandbox.addressId, address: sandbox.address, sandbox: sandbox.name };
      }
      const address = await authenticate(request, mail);
      const sandbox = isSandboxAddress(address.address) ? address.address.slice(0, -SANDBOX_DOMAIN.length - 1) : undefined;
      return { addressId: address.id, address: address.address, ...(sandbox ? { sandbox } : {}) };
    } catch (err) {
      reply.header('www-authenticate', basic ? 'Bearer, Basic realm="temp-inbox MCP", charset="UTF-8"' : 'Bearer');
      throw err;
    }
  }

  /** The session the request names, for these credentials; 404 when it is unknown, ended or another inbox's. */
  function sessionOf(request: FastifyRequest, principal: McpPrincipal): McpSession | undefined {
    const id = request.headers['mcp-session-id'];
    if (id === undefined) return undefined;
    const session = typeof id === 'string' ? sessions.get(id, principal) : undefined;
    if (!session) throw notFound('Unknown or ended MCP session: start a new one with an initialize request (without Mcp-Session-Id).');
    return session;
  }

  /** Hands the request to the session's transport, which answers it. */
  async function answer(session: McpSession, principal: McpPrincipal, request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const auth: AuthInfo = { token: '', clientId: String(principal.addressId), scopes: [], extra: { request } };
    (request.raw as IncomingMessage & { auth?: AuthInfo }).auth = auth;
    reply.hijack();
    session.busy++;
    try {
      await session.transport.handleRequest(request.raw, reply.raw, request.body);
    } catch (err) {
      request.log.error({ err }, 'MCP request failed');
      if (!reply.raw.headersSent) reply.raw.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' }).end('The server failed to answer this MCP request; try again later.');
      else reply.raw.destroy();
    } finally {
      session.busy--;
      session.lastUsed = Date.now();
    }
  }

  const options = { config: { rateLimit: 'MCP' as const }, schema: { hide: true } };

  fastify.post(routes.mcp, options, async (request, reply) => {
    const principal = await principalOf(request, reply);
    // Fastify also reads text/plain bodies; MCP's messages are JSON only.
    if (!/^application\/json\s*(;|$)/i.test(request.headers['content-type'] ?? '')) throw unsupportedMediaType('Send MCP messages as JSON, with Content-Type: application/json.');
    let session = sessionOf(request, principal);
    if (!session) {
      if (!isInitializeRequest(request.body)) throw badRequest('No MCP session yet: the first message must be an initialize request (sent without Mcp-Session-Id); later ones carry the Mcp-Session-Id it answered.');
      const newest = (await mail.listMails(principal.addressId, 1, 0)).results[0]?.id ?? 0;
      session = await sessions.open(principal, clientKey(request.ip), newest);
    }
    await answer(session, principal, request, reply);
  });

  fastify.delete(routes.mcp, options, async (request, reply) => {
    const principal = await principalOf(request, reply);
    const session = sessionOf(request, principal);
    if (!session) throw badRequest('Name the MCP session to end with its Mcp-Session-Id header.');
    await answer(session, principal, request, reply);
  });

  fastify.get(routes.mcp, options, async (request, reply) => {
    await principalOf(request, reply);
    return reply.code(405).header('allow', 'POST, DELETE').type('text/plain; charset=utf-8').send('This server sends no messages unasked, so it has no stream to open: POST your MCP messages to /mcp.');
  });
};
