// `temp-inbox mcp`: its help, its options, and how the command line becomes the stdio
// server's options (mcp-server.ts, loaded only when the command runs).

export const MCP_HELP = `Usage: temp-inbox mcp [--url URL] [--token TOKEN] [--sandbox NAME [--password PASSWORD]]

Serves MCP (the Model Context Protocol) over stdin and stdout, for an AI agent's
MCP client: tools to create an inbox, wait for its mail, take the code or the link,
list, read and delete mail (docs/mcp.md). Inboxes created through it are deleted
when the session ends (stdin closes, SIGINT or SIGTERM), unless the agent asked to
keep them. Nothing but the protocol is written to stdout; notes go to stderr.

  --token TOKEN        Also offer this existing inbox (default: $TEMP_INBOX_TOKEN).
  --sandbox NAME       Also offer this sandbox (an SMTP login's inbox; default:
                       $TEMP_INBOX_SANDBOX).
  --password PASSWORD  The sandbox's password (default: $TEMP_INBOX_SANDBOX_PASSWORD).

Options for every command:
  --url URL        The service (default: $TEMP_INBOX_URL, else http://localhost:8080).
  -h, --help       Show this help.

Exit codes: 0 the session ended, 1 the service refused or could not be reached
at start (a wrong token or sandbox login), 2 usage error.

Example (an MCP client's configuration):
  {"command": "npx", "args": ["temp-inbox", "mcp"], "env": {"TEMP_INBOX_URL": "http://localhost:8080"}}
`;

export const MCP_OPTIONS = { sandbox: { type: 'string' }, password: { type: 'string' } } as const;

export interface McpCommand {
  token?: string;
  sandbox?: { name: string; password: string };
}

/** The command's inbox and sandbox, or a usage problem (a sentence). */
export function mcpCommand(str: (name: string) => string | undefined, env: Record<string, string | undefined>): McpCommand | string {
  const token = str('token') ?? str('jwt') ?? (env['TEMP_INBOX_TOKEN'] || env['TEMP_INBOX_JWT'] || undefined);
  const name = str('sandbox') ?? (env['TEMP_INBOX_SANDBOX'] || undefined);
  const password = str('password') ?? env['TEMP_INBOX_SANDBOX_PASSWORD'];
  if (name === undefined && str('password') !== undefined) return '--password is the password of a --sandbox; give the sandbox too.';
  if (name !== undefined && password === undefined) return `The sandbox "${name}" needs its password: pass --password, or set TEMP_INBOX_SANDBOX_PASSWORD.`;
  return { ...(token !== undefined ? { token } : {}), ...(name !== undefined ? { sandbox: { name, password: password! } } : {}) };
}
