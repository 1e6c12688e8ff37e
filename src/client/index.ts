export { RelayClient } from './relay-client.js';
export type {
  ApproveOptions,
  DecisionOptions,
  RelayClientOptions,
  StartRunOptions,
  TenantScope,
  WatchOptions,
} from './relay-client.js';
