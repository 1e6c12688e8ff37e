export { createWorker } from './create-worker.js';
export type { CreateWorkerOptions } from './create-worker.js';
export { mcpTools } from '../mcp/index.js';
export type {
  McpHttpTransport,
  McpSettingValue,
  McpStdioTransport,
  McpToolPolicy,
  McpToolsOptions,
} from '../mcp/index.js';
export { RelayPlugin, createRelayPlugin } from './relay-plugin.js';
export type { RelayPluginOptions } from './relay-plugin.js';
export { bundleRelayWorkflows } from './relay-workflows.js';
export type { ToolSourceOptions } from './resolve-tool-registry.js';
export { createMemoryPayloadStore } from '../store/memory-payload-store.js';
export type { MemoryPayloadStoreOptions } from '../store/memory-payload-store.js';
export type { PayloadRef, PayloadScope, PayloadStore } from '../store/payload-store.js';
