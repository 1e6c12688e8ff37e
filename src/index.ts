export * from './tool/index.js';
export { RelayClient } from './client/relay-client.js';
export type {
  ApproveOptions,
  DecisionOptions,
  ListPendingApprovalsOptions,
  RelayClientOptions,
  RunPendingApproval,
  StartRunOptions,
  TenantScope,
  WatchOptions,
} from './client/relay-client.js';
export {
  bundleRelayWorkflows,
  createWorker,
  relaySharedWorkflowModules,
  relayWorkflowsPath,
} from './worker/create-worker.js';
export type { CreateWorkerOptions } from './worker/create-worker.js';
export { ModelProviderError } from './model/model-provider.js';
export type { ModelCall, ModelProvider } from './model/model-provider.js';
export { ModelRegistry, parseModelId } from './model/model-registry.js';
export {
  aiSdkProvider,
  anthropicProvider,
  openaiCompatibleProvider,
  openaiProvider,
  providersFromEnv,
} from './model/providers/index.js';
export type {
  AnthropicProviderOptions,
  OpenAICompatibleProviderOptions,
  OpenAIProviderOptions,
} from './model/providers/index.js';
export { RelayError, errorCodes } from './shared/errors.js';
export type { ErrorCode } from './shared/errors.js';
export { agentRunInputSchema } from './shared/run-input-schema.js';
export { relaySearchAttributeDefinitions, relaySearchAttributes } from './shared/search-attributes.js';
export type {
  AgentRunInput,
  ApprovalDecision,
  ApprovalOutcome,
  DurationInput,
  PendingApproval,
  RunEvent,
  RunEventType,
  RunResult,
  RunSnapshot,
  RunStatus,
  StopReason,
} from './shared/run-types.js';
export type {
  ModelRequest,
  ModelResponse,
  ModelToolSpec,
  ProposedToolCall,
  TokenUsage,
  ToolCall,
  TranscriptMessage,
} from './shared/transcript.js';
