export { agentRun } from './agent-run.js';
export { deliverApprovalNotices } from './deliver-approval-notices.js';
export { decideSignal, decideUpdate, eventsQuery, snapshotQuery } from './messages.js';
export type { CarriedRunState } from './run-state.js';
export { publishWorkerCatalogSignal, relayWorkerCatalog, withdrawWorkerCatalogSignal } from './worker-catalog.js';
