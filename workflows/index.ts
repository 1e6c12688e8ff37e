export { agentRun } from './agent-run.js';
export { decideSignal, decideUpdate, eventsQuery, snapshotQuery } from './messages.js';
export type { CarriedRunState } from './run-state.js';
