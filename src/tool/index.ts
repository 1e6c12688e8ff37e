export { defineJsonSchemaTool, defineTool, tool } from './define-tool.js';
export { isToolSource, loadToolSources } from './tool-source.js';
export { ToolRegistry, createToolRegistry } from './tool-registry.js';
export { ToolExecutor, defaultMaxResultBytes, defaultToolTimeoutMs } from './tool-executor.js';
export { createLogger, createToolContext, defaultLogger } from './tool-context.js';
export { toCatalogEntry, toJsonSchema } from './tool-catalog.js';
export { truncateOutput } from './truncate-output.js';

export type {
  ApprovalRule,
  ApprovalRuleContext,
  DefineJsonSchemaToolOptions,
  DefineToolOptions,
  ToolDefinition,
  ToolOptions,
} from './define-tool.js';
export type {
  LeftOutTool,
  LoadToolSourcesOptions,
  LoadedTools,
  OpenToolSource,
  ToolEntry,
  ToolSource,
  ToolSourceContext,
} from './tool-source.js';
export type { ToolCallRequest, ToolExecutionOptions, ToolExecutorOptions } from './tool-executor.js';
export type { LogFunction, LogLevel, Logger, LoggerOptions, ToolContext, ToolProgress } from './tool-context.js';
export type { AfterGuardrailVerdict, BeforeGuardrailVerdict, GuardrailDenial, ToolGuardrails } from './guardrails.js';
export type { TruncatedOutput } from './truncate-output.js';
export type { ToolErrorType, ToolFailure, ToolResult, ToolSuccess } from '../shared/tool-result.js';
export type {
  JsonSchema,
  ToolAnnotations,
  ToolCatalogEntry,
  ToolRetryPolicy,
  ToolSourceInfo,
} from '../shared/tool-catalog.js';
export type { ToolInputIssue } from '../shared/tool-input.js';
