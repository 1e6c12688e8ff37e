export { RelayClient } from './relay-client.js';
export type {
  ApproveOptions,
  CancelOptions,
  DecisionOptions,
  RelayClientOptions,
  RunInspection,
  StartRunOptions,
  TenantScope,
  WatchOptions,
} from './relay-client.js';
export type { ListRunsOptions, RunListing, RunPage } from './list-runs.js';
export type { ListPendingApprovalsOptions, PendingApprovals, RunPendingApproval } from './list-pending-approvals.js';
export type { WorkerCatalog } from '../shared/worker-catalog.js';
export type { HandedOffNotices } from './read-handed-off-notices.js';
export type { WorkflowTaskFailure } from './workflow-task-failure.js';
export type { HandedOffNoticeOutcome } from '../shared/approval-notice.js';
export type { ToolCatalogEntry } from '../shared/tool-catalog.js';
