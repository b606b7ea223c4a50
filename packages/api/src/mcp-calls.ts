// One MCP tool call, from its arguments to its result, over a backend that reaches the
// inboxes: the SDK's Inbox handles in `temp-inbox mcp`, the service's own mail in /mcp.
// The checks, waits (with progress and cancellation), bounds and wording are the same for
// both. Imports only the other shared MCP files.
import { bestLink, doneResult, errorResult, mailListResult, mailResult, valueResult, type McpListedMail, type McpMail, type McpToolResult } from './mcp-results.js';
import { checkMcpArguments, type McpArguments, type McpToolDefinition } from './mcp-tools.js';

/** A refusal the caller can act on: its message becomes the tool's error result. */
export class McpToolError extends Error {
  override name = 'McpToolError';
}

/** The call named a tool the server does not have (a protocol error, not a tool result). */
export class McpUnknownToolError extends Error {
  override name = 'McpUnknownToolError';
}

export interface McpWaitRequest {
  from?: string;
  to?: string;
  subject?: string;
  /** Only mail with a greater id; undefined: the handle's own start. */
  since?: number;
  timeoutMs: number;
  signal: AbortSignal;
  /** Only mail this accepts counts. */
  accept: (mail: McpMail) => boolean;
}

/** One inbox the caller may use. */
export interface McpInbox {
  address: string;
  sandbox: boolean;
  /** The oldest matching mail, or undefined when the timeout passed first; rejects with the signal's reason when it aborts. */
  wait(request: McpWaitRequest): Promise<McpMail | undefined>;
  list(limit: number, offset: number): Promise<{ mails: McpListedMail[]; count: number }>;
  read(uuid: string): Promise<McpMail>;
  deleteMail(uuid: string): Promise<void>;
  delete(): Promise<void>;
}

export interface McpBackend {
  /** The tools this server offers. */
  tools: readonly McpToolDefinition[];
  createInbox?(opts: { name?: string; domain?: string; keep: boolean }): Promise<{ address: string; token: string; kept: boolean }>;
  /** The inbox an `inbox` argument names (undefined: the only one); McpToolError when there is none. */
  inbox(name: string | undefined): Promise<McpInbox>;
  /** The inbox was deleted: it is no longer the session's. */
  forget?(address: string): void;
  /** A sentence for a failure of the service that the caller should hear (a refusal, a rate limit), or undefined for a fault of ours. */
  describe(err: unknown): string | undefined;
}

export interface McpCallContext {
  signal: AbortSignal;
  /** Set when the caller asked for progress (a progressToken). */
  progress?: (update: { progress: number; total: number; message: string }) => void;
}

/** How often a wait reports its progress. */
export const MCP_PROGRESS_MS = 2000;

const str = (args: McpArguments, name: string) => args[name] as string | undefined;
const num = (args: McpArguments, name: string) => args[name] as number | undefined;

function describeWait(what: string, args: McpArguments): string {
  const parts = [what];
  if (str(args, 'from')) parts.push(`from "${str(args, 'from')}"`);
  if (str(args, 'to')) parts.push(`to "${str(args, 'to')}"`);
  if (str(args, 'subject')) parts.push(`with a subject containing "${str(args, 'subject')}"`);
  if (str(args, 'contains')) parts.push(`with a link containing "${str(args, 'contains')}"`);
  if (num(args, 'after_id') !== undefined) parts.push(`newer than mail ${num(args, 'after_id')}`);
  return parts.join(' ');
}

/** A wait with progress reports while it lasts; undefined when it timed out. */
async function waitWithProgress(inbox: McpInbox, args: McpArguments, what: string, accept: (m: McpMail) => boolean, ctx: McpCallContext): Promise<McpMail | undefined> {
  const seconds = num(args, 'timeout_seconds')!;
  const started = Date.now();
  let reported = -1;
  const report = () => {
    // Each report's progress is greater than the one before, as MCP asks.
    const elapsed = Math.min(seconds, Math.floor((Date.now() - started) / 1000));
    if (elapsed <= reported) return;
    reported = elapsed;
    ctx.progress?.({ progress: elapsed, total: seconds, message: `Waiting for ${what} at ${inbox.address}: ${elapsed} s of ${seconds} s.` });
  };
  report();
  const timer = ctx.progress ? setInterval(report, MCP_PROGRESS_MS) : undefined;
  try {
    return await inbox.wait({
      ...(str(args, 'from') ? { from: str(args, 'from') } : {}),
      ...(str(args, 'to') ? { to: str(args, 'to') } : {}),
      ...(str(args, 'subject') ? { subject: str(args, 'subject') } : {}),
      ...(num(args, 'after_id') !== undefined ? { since: num(args, 'after_id') } : {}),
      timeoutMs: seconds * 1000,
      signal: ctx.signal,
      accept,
    });
  } finally {
    clearInterval(timer);
  }
}

function timedOut(what: string, inbox: McpInbox, args: McpArguments): McpToolResult {
  const seconds = num(args, 'timeout_seconds')!;
  return errorResult(
    `No ${describeWait(what, args)} reached ${inbox.address} within ${seconds} s. Check that the mail was sent to this address (and the filters), then call again, perhaps with a longer timeout_seconds.`,
    { timed_out: true, inbox: inbox.address },
  );
}

async function run(backend: McpBackend, tool: McpToolDefinition, args: McpArguments, ctx: McpCallContext): Promise<McpToolResult> {
  if (tool.name === 'create_inbox') {
    const created = await backend.createInbox!({ ...(str(args, 'name') ? { name: str(args, 'name')! } : {}), ...(str(args, 'domain') ? { domain: str(args, 'domain')! } : {}), keep: args['keep'] === true });
    const when = created.kept ? 'It is kept after this session ends.' : 'It is deleted when this session ends (create it with keep: true to keep it).';
    return doneResult(`Created the inbox ${created.address}. ${when}`, { address: created.address, token: created.token, kept: created.kept });
  }
  const inbox = await backend.inbox(str(args, 'inbox'));
  const maxChars = num(args, 'max_chars') ?? 0;
  switch (tool.name) {
    case 'wait_for_mail': {
      const mail = await waitWithProgress(inbox, args, 'mail', () => true, ctx);
      return mail ? mailResult(inbox.address, mail, { includeHtml: args['include_html'] === true, includeHeaders: false, maxChars, offset: 0 }) : timedOut('mail', inbox, args);
    }
    case 'get_code': {
      const mail = await waitWithProgress(inbox, args, 'mail with a code', (m) => m.codes.length > 0, ctx);
      return mail ? valueResult('code', mail.codes[0]!, inbox.address, mail) : timedOut('mail with a code', inbox, args);
    }
    case 'get_link': {
      const contains = str(args, 'contains');
      const mail = await waitWithProgress(inbox, args, 'mail with a link', (m) => bestLink(m, contains) !== undefined, ctx);
      return mail ? valueResult('link', bestLink(mail, contains)!, inbox.address, mail) : timedOut('mail with a link', inbox, args);
    }
    case 'list_mail': {
      const offset = num(args, 'offset')!;
      const page = await inbox.list(num(args, 'limit')!, offset);
      return mailListResult(inbox.address, page.mails, page.count, offset);
    }
    case 'read_mail': {
      const mail = await inbox.read(str(args, 'mail')!);
      return mailResult(inbox.address, mail, { includeHtml: args['include_html'] === true, includeHeaders: args['include_headers'] !== false, maxChars, offset: num(args, 'offset')! });
    }
    case 'delete_mail':
      await inbox.deleteMail(str(args, 'mail')!);
      return doneResult(`Deleted the mail ${str(args, 'mail')} of ${inbox.address}.`, { deleted: str(args, 'mail'), inbox: inbox.address });
    case 'delete_inbox':
      if (inbox.sandbox) throw new McpToolError(`${inbox.address} is a sandbox, which only the service's operators delete; delete its mail one by one with delete_mail.`);
      await inbox.delete();
      backend.forget?.(inbox.address);
      return doneResult(`Deleted the inbox ${inbox.address} and all its mail.`, { deleted: inbox.address });
    default:
      throw new McpUnknownToolError(`There is no tool "${tool.name}".`);
  }
}

/**
 * Runs one tools/call: checks the arguments, runs the tool, and answers with its result.
 * A refusal (bad arguments, no such inbox or mail, the service's no) is a result with
 * isError and a sentence; an unknown tool throws McpUnknownToolError; cancellation rejects
 * with the signal's reason.
 */
export async function callMcpTool(backend: McpBackend, name: string, given: unknown, ctx: McpCallContext): Promise<McpToolResult> {
  const tool = backend.tools.find((t) => t.name === name);
  if (!tool) throw new McpUnknownToolError(`There is no tool "${name}"; the tools are ${backend.tools.map((t) => t.name).join(', ')}.`);
  const checked = checkMcpArguments(tool, given);
  if (!checked.ok) return errorResult(checked.error);
  try {
    return await run(backend, tool, checked.args, ctx);
  } catch (err) {
    if (ctx.signal.aborted) throw err;
    if (err instanceof McpToolError) return errorResult(err.message);
    const sentence = backend.describe(err);
    if (sentence !== undefined) return errorResult(sentence);
    throw err;
  }
}
