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
export { bundleRelayWorkflows, relaySharedWorkflowModules } from './relay-workflows.js';
export type { BundleRelayWorkflowsOptions } from './relay-workflows.js';
export { encodedFailureConverterPath } from '../security/with-encryption.js';
export type { ToolSourceOptions } from './resolve-tool-registry.js';
export { createPayloadStore } from '../store/create-payload-store.js';
export type { PayloadStoreConfig, PayloadStoreReporting } from '../store/create-payload-store.js';
export { createFilePayloadStore } from '../store/file-payload-store.js';
export type { FilePayloadStoreOptions } from '../store/file-payload-store.js';
export { createMemoryPayloadStore } from '../store/memory-payload-store.js';
export type { MemoryPayloadStoreOptions } from '../store/memory-payload-store.js';
export { startPayloadJanitor } from '../store/payload-janitor.js';
export type { PayloadJanitor, PayloadJanitorOptions, PayloadJanitorReport } from '../store/payload-janitor.js';
export { defaultPayloadRetentionMs } from '../store/payload-retention.js';
export type {
  PayloadRef,
  PayloadScope,
  PayloadStore,
  PayloadSweepOptions,
  UnclosedRun,
  UnclosedRunsQuery,
} from '../store/payload-store.js';
export { createPostgresPayloadStore, PostgresConnectTimeoutError } from '../store/postgres-payload-store.js';
export type { PostgresPayloadStoreConnection, PostgresPayloadStoreOptions } from '../store/postgres-payload-store.js';
