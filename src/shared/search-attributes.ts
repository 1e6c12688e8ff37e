import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

/** Search attributes every run sets, so runs can be found in the Temporal UI and with `temporal workflow list`. */
export const relaySearchAttributes = {
  tenant: defineSearchAttributeKey('RelayTenant', SearchAttributeType.KEYWORD),
  user: defineSearchAttributeKey('RelayUser', SearchAttributeType.KEYWORD),
  status: defineSearchAttributeKey('RelayStatus', SearchAttributeType.KEYWORD),
  pendingApprovals: defineSearchAttributeKey('RelayPendingApprovals', SearchAttributeType.INT),
} as const;

/** The `name=Type` pairs that `temporal server start-dev --search-attribute` and `operator search-attribute create` take. */
export const relaySearchAttributeDefinitions: ReadonlyArray<{ name: string; type: 'Keyword' | 'Int' }> = [
  { name: 'RelayTenant', type: 'Keyword' },
  { name: 'RelayUser', type: 'Keyword' },
  { name: 'RelayStatus', type: 'Keyword' },
  { name: 'RelayPendingApprovals', type: 'Int' },
];
