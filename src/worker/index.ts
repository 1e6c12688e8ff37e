export { bundleRelayWorkflows, createWorker, relaySharedWorkflowModules, relayWorkflowsPath } from './create-worker.js';
export type { CreateWorkerOptions } from './create-worker.js';
