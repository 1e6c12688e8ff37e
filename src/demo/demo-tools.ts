import { z } from 'zod';
import { defineTool } from '../tool/define-tool.js';
import type { ToolDefinition } from '../tool/define-tool.js';
import { inMemoryDemoBank } from './demo-bank.js';
import type { DemoBankAccess } from './demo-bank.js';

const accountId = z.string().describe('Account identifier, e.g. ACC-1');

/** The banking tools of the product documents, over one demo bank (a fresh one in memory by default). */
export function createDemoTools(access: DemoBankAccess = inMemoryDemoBank()): ToolDefinition[] {
  return [
    defineTool({
      name: 'get_balance',
      description: "Return the current balance for a user's account.",
      inputSchema: z.object({ account_id: accountId }),
      execute: async ({ account_id }) => access.read((bank) => bank.getBalance(account_id)),
    }),
    defineTool({
      name: 'search_transactions',
      description:
        'Search transactions by merchant name and amount range. Returns the top 20 matches sorted by date desc, ' +
        'the total count and a truncated flag. Use this when the user asks about specific past purchases.',
      inputSchema: z.object({
        account_id: accountId.optional(),
        merchant: z.string().min(1).optional().describe('Part of the merchant name, case-insensitive'),
        min_amount_usd: z.number().nonnegative().optional().describe('Smallest amount, in USD, sign ignored'),
        max_amount_usd: z.number().nonnegative().optional().describe('Largest amount, in USD, sign ignored'),
      }),
      execute: async (query) => access.read((bank) => bank.searchTransactions(query)),
    }),
    defineTool({
      name: 'transfer_funds',
      description: 'Transfer funds between two accounts. Moves money: a human approves every call.',
      requiresApproval: true,
      // Retries are safe: the bank applies each idempotency key once.
      retry: { maximumAttempts: 3 },
      inputSchema: z.object({
        from_account: accountId,
        to_account: accountId,
        amount_usd: z.number().positive().describe('Amount in USD'),
      }),
      execute: async (input, ctx) => access.update((bank) => bank.transfer(input, ctx.idempotencyKey)),
    }),
  ];
}
