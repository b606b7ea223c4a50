// The inboxes of one `temp-inbox mcp` session, reached through the SDK (client.ts): those
// create_inbox made, the inbox of a token given to the command or to a tool, and the
// sandbox of a login given to the command. The ones it created are deleted when the
// session closes, unless the agent asked to keep them (docs/mcp.md).
import { TempInboxClient, type Inbox } from './client.js';
import { TempInboxError, WaitTimeoutError } from './errors.js';
import type { Message } from './message.js';
import type { McpBackend, McpInbox, McpWaitRequest } from './mcp-calls.js';
import { McpToolError } from './mcp-calls.js';
import type { McpListedMail, McpMail } from './mcp-results.js';
import { MCP_TOOLS } from './mcp-tools.js';

export interface McpSessionOptions {
  client: TempInboxClient;
  /** An inbox to offer from the start (--token, TEMP_INBOX_TOKEN). */
  token?: string;
  /** A sandbox to offer from the start (--sandbox NAME and its password). */
  sandbox?: { name: string; password: string };
}

interface Entry {
  inbox: Inbox;
  /** Made by create_inbox in this session. */
  created: boolean;
  keep: boolean;
}

const JWT = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

/** The fields of a Message that a tool result is made of. */
function mcpMail(m: Message): McpMail {
  const recipients = (m as unknown as { recipients?: string[] }).recipients;
  return {
    id: m.id,
    uuid: m.uuid,
    created_at: m.created_at,
    subject: m.subject,
    date: m.date,
    from: m.from,
    to: m.to,
    cc: m.cc,
    text: m.text,
    html: m.html,
    headers: m.headers,
    attachments: m.attachments.map((a) => ({ id: a.id, filename: a.filename, content_type: a.content_type, size: a.size, inline: a.inline })),
    codes: m.codes,
    links: m.links,
    ...(recipients ? { recipients } : {}),
  };
}

/** An SDK Inbox as the shared tool code uses it. */
function mcpInbox(inbox: Inbox): McpInbox {
  return {
    address: inbox.address,
    sandbox: inbox.sandbox !== undefined,
    async wait(request: McpWaitRequest) {
      try {
        const message = await inbox.waitForMail({
          ...(request.from ? { from: request.from } : {}),
          ...(request.to ? { to: request.to } : {}),
          ...(request.subject ? { subject: request.subject } : {}),
          ...(request.since !== undefined ? { since: request.since } : {}),
          timeout: request.timeoutMs,
          signal: request.signal,
          match: (m) => request.accept(mcpMail(m)),
        });
        return mcpMail(message);
      } catch (err) {
        if (err instanceof WaitTimeoutError) return undefined;
        throw err;
      }
    },
    async list(limit, offset) {
      const page = await inbox.list({ limit, offset });
      return { mails: page.mails as McpListedMail[], count: page.count };
    },
    read: async (uuid) => mcpMail(await inbox.read(uuid)),
    deleteMail: (uuid) => inbox.deleteMail(uuid),
    delete: () => inbox.delete(),
  };
}

export class McpSession implements McpBackend {
  readonly tools = MCP_TOOLS;
  readonly #client: TempInboxClient;
  readonly #options: McpSessionOptions;
  /** By lower-case address. */
  readonly #inboxes = new Map<string, Entry>();
  readonly #closing = new AbortController();

  constructor(options: McpSessionOptions) {
    this.#client = options.client;
    this.#options = options;
  }

  /** Aborted when the session closes: every wait in progress ends. */
  get signal(): AbortSignal {
    return this.#closing.signal;
  }

  /** Opens the inbox and the sandbox given to the command; rejects with the service's refusal. */
  async open(): Promise<void> {
    if (this.#options.token !== undefined) this.#add(await this.#client.openInbox(this.#options.token), false, true);
    if (this.#options.sandbox) this.#add(await this.#client.openSandbox(this.#options.sandbox), false, true);
  }

  #add(inbox: Inbox, created: boolean, keep: boolean): Entry {
    const entry = { inbox, created, keep };
    this.#inboxes.set(inbox.address.toLowerCase(), entry);
    return entry;
  }

  async createInbox(opts: { name?: string; domain?: string; keep: boolean }): Promise<{ address: string; token: string; kept: boolean }> {
    const inbox = await this.#client.createInbox({ ...(opts.name !== undefined ? { name: opts.name } : {}), ...(opts.domain !== undefined ? { domain: opts.domain } : {}) });
    this.#add(inbox, true, opts.keep);
    return { address: inbox.address, token: inbox.token, kept: opts.keep };
  }

  async inbox(name: string | undefined): Promise<McpInbox> {
    const entries = [...this.#inboxes.values()];
    if (name === undefined) {
      if (entries.length === 1) return mcpInbox(entries[0]!.inbox);
      if (entries.length === 0) throw new McpToolError('This session has no inbox yet: create one with create_inbox.');
      throw new McpToolError(`This session has ${entries.length} inboxes (${entries.map((e) => e.inbox.address).join(', ')}): say which with "inbox".`);
    }
    const known = this.#inboxes.get(name.trim().toLowerCase()) ?? entries.find((e) => e.inbox.token === name || e.inbox.sandbox?.name === name.trim().toLowerCase());
    if (known) return mcpInbox(known.inbox);
    // A token of an inbox made elsewhere (the CLI, a test): opened, and the session's from now on.
    if (JWT.test(name)) return mcpInbox(this.#add(await this.#client.openInbox(name), false, true).inbox);
    const list = entries.length ? `its inboxes are ${entries.map((e) => e.inbox.address).join(', ')}` : 'it has none yet (create_inbox makes one)';
    throw new McpToolError(`This session has no inbox "${name}": ${list}. An inbox made elsewhere can be given by its token.`);
  }

  forget(address: string): void {
    this.#inboxes.delete(address.toLowerCase());
  }

  describe(err: unknown): string | undefined {
    if (err instanceof TempInboxError) {
      if (err.status === 0) return err.message;
      return `The temp-inbox service refused (HTTP ${err.status}): ${err.message.replace(/\.?$/, '.')}`;
    }
    return undefined;
  }

  /**
   * Ends the session: waits in progress stop, and the inboxes create_inbox made are
   * deleted unless kept. Resolves with the addresses deleted; one that is gone already is
   * not an error, and one the service could not delete is left to its ADDRESS_TTL.
   */
  async close(): Promise<string[]> {
    this.#closing.abort(new Error('The MCP session closed.'));
    const doomed = [...this.#inboxes.values()].filter((e) => e.created && !e.keep);
    this.#inboxes.clear();
    const results = await Promise.allSettled(doomed.map((e) => e.inbox[Symbol.asyncDispose]().then(() => e.inbox.address)));
    return results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
  }
}
