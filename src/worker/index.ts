export { bundleRelayWorkflows, createWorker, relaySharedWorkflowModules, relayWorkflowsPath } from './create-worker.js';
export type { CreateWorkerOptions } from './create-worker.js';
export { mcpTools } from '../mcp/index.js';
export type {
  McpHttpTransport,
  McpSettingValue,
  McpStdioTransport,
  McpToolPolicy,
  McpToolsOptions,
} from '../mcp/index.js';
