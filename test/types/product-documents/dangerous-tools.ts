// Product documents, Concepts › Tools, "Dangerous tools — requiresApproval", unchanged apart from the import the
// page leaves out (the package name's).
import { defineTool } from "@relay-e/engine";
import { z } from "zod";

defineTool({
  name: "transfer_funds",
  description: "Transfer funds between two accounts.",
  requiresApproval: true,
  inputSchema: z.object({
    from_account: z.string(),
    to_account: z.string(),
    amount_usd: z.number().positive(),
  }),
  execute: async (input) => ({
    transfer_id: `xfer_${crypto.randomUUID()}`,
    status: "pending_approval",
    ...input,
  }),
});
