/* eslint-disable @typescript-eslint/no-unused-vars */
// Product documents, Concepts › Tools, "Anatomy of a tool", unchanged apart from the package name.
import { defineTool } from "@relay-e/engine";
import { z } from "zod";

defineTool({
  name: "get_balance",
  description: "Return the current balance for a user's account.",
  inputSchema: z.object({
    account_id: z.string().describe("Account identifier"),
  }),
  execute: async ({ account_id }, ctx) => {
    return { account_id, balance_usd: 4231.55, currency: "USD" };
  },
});
