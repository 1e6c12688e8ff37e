/* eslint-disable @typescript-eslint/no-unused-vars */
// Product documents, Concepts › Tools, "The ctx parameter" and "Reference": the interfaces as the page declares them,
// then checks that Relay-E's own types satisfy them both ways and that a tool typed the documented way compiles.
import type { Logger, ToolContext as RelayToolContext, ToolDefinition as RelayToolDefinition } from "@relay-e/engine";
import { z } from "zod";

interface ToolContext {
  tenantId: string;
  userId?: string;
  sessionId?: string;
  runId?: string;
  config: Record<string, unknown>;
  logger: Logger;
  signal: AbortSignal;
}

interface ToolDefinition<I, O> {
  name: string;
  description: string;
  inputSchema: z.ZodType<I>;
  requiresApproval?: boolean;
  execute: (input: I, ctx: ToolContext) => Promise<O>;
}

const relayContextIsDocumented = (ctx: RelayToolContext): ToolContext => ctx;
const documentedToolIsRelayTool = <I, O>(tool: ToolDefinition<I, O>): RelayToolDefinition<I, O> => tool;
const relayToolIsDocumented = <I, O>(tool: RelayToolDefinition<I, O> & ToolDefinition<I, O>): ToolDefinition<I, O> =>
  tool;

const getBalance: RelayToolDefinition<{ account_id: string }, { account_id: string; balance_usd: number }> = {
  name: "get_balance",
  description: "Return the current balance for a user account.",
  inputSchema: z.object({ account_id: z.string() }),
  execute: async ({ account_id }) => ({ account_id, balance_usd: 4231.55 }),
};
