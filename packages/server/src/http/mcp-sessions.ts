// The MCP sessions of /mcp (routes/mcp.ts) open on this node: each an SDK Streamable HTTP
// transport and its tool server (mcp/tool-server.ts), bound to the inbox whose credentials
// opened it, found again by its Mcp-Session-Id. A session idle for SESSION_IDLE_MS is
// ended; a client may have SESSIONS_PER_CLIENT open at once, a node SESSIONS_PER_NODE.
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { ServerNotification, ServerRequest } from '@modelcontextprotocol/sdk/types.js';
import type { McpBackend } from '@temp-inbox/api/mcp';
import { AppError } from '../domain/errors.js';
import type { McpPrincipal } from '../mcp/mail-inbox.js';
import { createToolServer } from '../mcp/tool-server.js';

export const SESSION_IDLE_MS = 10 * 60_000;
export const SESSIONS_PER_CLIENT = 16;
const SESSIONS_PER_NODE = 10_000;
const SWEEP_MS = 60_000;

export interface McpSession {
  id: string;
  principal: McpPrincipal;
  /** clientKey of the IP that opened it. */
  client: string;
  /** Waits consider mail above this id unless told otherwise: the inbox's newest when the session began. */
  baseline: number;
  transport: StreamableHTTPServerTransport;
  lastUsed: number;
  /** Requests of it being answered now (an idle sweep passes over it meanwhile). */
  busy: number;
}

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

export interface McpSessions {
  /** A new session (its id is set once the transport has answered the initialize request), or a 429 or 503 past a cap. */
  open(principal: McpPrincipal, client: string, baseline: number): Promise<McpSession>;
  /** The session with this id, if it belongs to this inbox. */
  get(id: string, principal: McpPrincipal): McpSession | undefined;
  /** Ends every session. */
  close(): Promise<void>;
}

export function createMcpSessions(opts: { logger: Logger; backendOf: (session: McpSession, extra: Extra) => McpBackend; now?: () => number }): McpSessions {
  const now = opts.now ?? Date.now;
  const open = new Map<string, McpSession>();
  const sweep = setInterval(() => {
    for (const session of open.values()) if (session.busy === 0 && now() - session.lastUsed > SESSION_IDLE_MS) void session.transport.close();
  }, SWEEP_MS);
  sweep.unref();

  return {
    async open(principal, client, baseline) {
      if (open.size >= SESSIONS_PER_NODE) throw new AppError('unavailable', 'Too many MCP sessions are open on this server; try again later.', 60);
      let mine = 0;
      for (const s of open.values()) if (s.client === client) mine++;
      if (mine >= SESSIONS_PER_CLIENT) {
        throw new AppError('rate_limited', `At most ${SESSIONS_PER_CLIENT} MCP sessions may be open from one client; end one (DELETE /mcp with its Mcp-Session-Id) or let one stay idle for ${SESSION_IDLE_MS / 60_000} minutes.`, 60);
      }
      const session: McpSession = { id: '', principal, client, baseline, transport: undefined as unknown as StreamableHTTPServerTransport, lastUsed: now(), busy: 0 };
      session.transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => {
          session.id = id;
          open.set(id, session);
        },
      });
      session.transport.onclose = () => open.delete(session.id);
      session.transport.onerror = (err) => opts.logger.debug({ err }, 'MCP transport error');
      await createToolServer((extra) => opts.backendOf(session, extra), opts.logger).connect(session.transport);
      return session;
    },
    get(id, principal) {
      const session = open.get(id);
      if (!session || session.principal.addressId !== principal.addressId) return undefined;
      session.lastUsed = now();
      return session;
    },
    async close() {
      clearInterval(sweep);
      await Promise.allSettled([...open.values()].map((s) => s.transport.close()));
      open.clear();
    },
  };
}
