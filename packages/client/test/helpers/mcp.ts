// The official MCP SDK's client on `temp-inbox mcp`, spawned as an MCP host spawns it:
// over stdio, from the command's source entry (node --import tsx src/cli.ts mcp) or, when
// given, another command line (the built bin, an installed package).
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

export const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
const CLI_SOURCE = fileURLToPath(new URL('../../src/cli.ts', import.meta.url));

export interface StdioMcp {
  client: Client;
  transport: StdioClientTransport;
  /** What the command wrote to stderr so far. */
  stderr(): string;
  close(): Promise<void>;
}

/** Starts `temp-inbox mcp` with these arguments and environment, and connects a client to it. */
export async function connectStdio(args: string[], env: Record<string, string>, command: { command: string; args: string[]; cwd: string } = { command: process.execPath, args: ['--import', 'tsx', CLI_SOURCE], cwd: ROOT }): Promise<StdioMcp> {
  const { NODE_TEST_CONTEXT: _context, TEMP_INBOX_TOKEN: _token, TEMP_INBOX_JWT: _jwt, ...inherited } = process.env;
  const transport = new StdioClientTransport({
    command: command.command,
    args: [...command.args, 'mcp', ...args],
    cwd: command.cwd,
    env: { ...(inherited as Record<string, string>), ...env },
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  const client = new Client({ name: 'temp-inbox-test', version: '1.0.0' });
  await client.connect(transport);
  return { client, transport, stderr: () => stderr, close: () => client.close() };
}

/** The text of a tool result (its first content block). */
export function textOf(result: unknown): string {
  const content = (result as CallToolResult).content;
  const first = content[0];
  if (first?.type !== 'text') throw new Error(`no text content: ${JSON.stringify(result)}`);
  return first.text;
}

/** The structured content of a tool result. */
export function structuredOf<T = Record<string, unknown>>(result: unknown): T {
  const structured = (result as CallToolResult).structuredContent;
  if (!structured) throw new Error(`no structured content: ${JSON.stringify(result)}`);
  return structured as T;
}
