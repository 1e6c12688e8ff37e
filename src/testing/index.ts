export { scriptedModel } from './scripted-model.js';
export type { ScriptedModel, ScriptedModelOptions, ScriptedTurn, ScriptedTurnFunction } from './scripted-model.js';
export { createTestEnvironment } from './create-test-environment.js';
export type { RelayTestEnvironment, TestEnvironmentOptions } from './create-test-environment.js';
export { waitForApproval, waitForRun } from './wait-for-run.js';
export type { AwaitedApproval, WaitOptions } from './wait-for-run.js';
export { runTool, startTool } from './run-tool.js';
export type { ToolCallOptions, ToolExecution } from './run-tool.js';
export { HistoryReplayError, loadHistories, recordHistory, replayHistories } from './replay-histories.js';
export type { HistoryFixture, HistoryReplayFailure, ReplayHistoriesOptions } from './replay-histories.js';
export { cachedTestServerPath, findTestServerExecutable, TestEnvironmentError } from './find-test-server-executable.js';
export { quietenWorkerRuntime } from './quieten-worker-runtime.js';
export {
  startTemporalDevServer,
  TemporalCliNotFoundError,
  TemporalDevServerError,
} from '../dev/temporal-dev-server.js';
export type {
  DevServerSearchAttribute,
  TemporalDevServer,
  TemporalDevServerOptions,
} from '../dev/temporal-dev-server.js';
