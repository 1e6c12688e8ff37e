export { RelayClient } from './relay-client.js';
export type {
  ApproveOptions,
  DecisionOptions,
  ListPendingApprovalsOptions,
  RelayClientOptions,
  RunPendingApproval,
  StartRunOptions,
  TenantScope,
  WatchOptions,
} from './relay-client.js';
export type { ListRunsOptions, RunListing, RunPage } from './list-runs.js';
