export { mcpTools } from './mcp-tools.js';

export type { McpHttpTransport, McpSettingValue, McpStdioTransport, McpToolsOptions } from './mcp-tools.js';
export type { McpToolPolicy } from './mcp-tool-policy.js';
