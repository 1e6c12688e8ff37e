// What client-only code needs (tools, the client, model providers, encryption, types). Nothing here may load
// `@temporalio/worker` or a bundler: worker pieces live in `@relay-e/engine/worker` (test/unit/entry-points.test.ts).
export * from './tool/index.js';
export * from './client/index.js';
export { defineConfig } from './config/define-config.js';
export type { RelayConfig } from './config/define-config.js';
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
export * from './security/index.js';
export {
  approvalDeliveryHeader,
  approvalSignatureHeader,
  signApprovalNotice,
  verifyApprovalNotice,
} from './notify/approval-webhook.js';
export type { ApprovalWebhook, ApprovalWebhooks, VerifyApprovalNoticeOptions } from './notify/approval-webhook.js';
export type {
  ApprovalAddedNotice,
  ApprovalDecidedNotice,
  ApprovalExpiringNotice,
  ApprovalNotice,
  ApprovalRequestedNotice,
} from './shared/approval-notice.js';
export { RelayError, errorCodes } from './shared/errors.js';
export type { ErrorCode } from './shared/errors.js';
export { relaySearchAttributeDefinitions, relaySearchAttributes } from './shared/search-attributes.js';
export type {
  AgentRunInput,
  ApprovalDecision,
  ApprovalNoticeType,
  ApprovalOutcome,
  DurationInput,
  GivenApproval,
  PendingApproval,
  RunEvent,
  RunEventType,
  RunResult,
  RunSnapshot,
  RunStatus,
  RunVersioning,
  StopReason,
} from './shared/run-types.js';
export type {
  ModelRequest,
  ModelResponse,
  ModelSettings,
  ModelToolSpec,
  ProposedToolCall,
  TokenUsage,
  ToolCall,
  TranscriptMessage,
} from './shared/transcript.js';
