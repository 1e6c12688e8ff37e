export { createWorker, relayWorkflowsPath } from './create-worker.js';
export type { CreateWorkerOptions } from './create-worker.js';
