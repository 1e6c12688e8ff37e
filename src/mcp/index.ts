export { mcpTools } from './mcp-tools.js';
export { idempotencyKeyMetaKey } from './call-mcp-tool.js';
export { toModelToolName } from './mcp-tool-name.js';

export type { McpHttpTransport, McpSettingValue, McpStdioTransport, McpToolsOptions } from './mcp-tools.js';
export type { McpToolPolicy } from './mcp-tool-policy.js';
