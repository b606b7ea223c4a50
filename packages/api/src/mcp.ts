// @temp-inbox/api/mcp: the MCP tools (docs/mcp.md) as both MCP servers run them: their
// definitions and argument checks, their results, the call itself, and the link ranking
// they share with the client's waitForLink. Imports nothing else (no TypeBox).
export * from './links.js';
export * from './mcp-calls.js';
export * from './mcp-results.js';
export * from './mcp-tools.js';
