/* eslint-disable @typescript-eslint/no-unused-vars */
// Product documents, "Tool Registry & Executor", its snippets in order, unchanged apart from the package name; each
// later snippet sits in a block of its own because the page reuses `result`, and `someOtherTool` is declared for it.
import { tool, ToolRegistry, createToolRegistry } from "@relay-e/engine/tool";
import type { ToolDefinition } from "@relay-e/engine/tool";
import { z } from "zod";

declare const someOtherTool: ToolDefinition;

const addTool = tool({
name: "add",
description: "Add two numbers",
input: z.object({ a: z.number(), b: z.number() }),
execute: ({ a, b }) => ({ result: a + b }),
});
// Initialize with a collection of tools
const registry = new ToolRegistry([addTool]);
// Dynamic registration
registry.register(someOtherTool);
// Lookup
const hasAdd = registry.has("add"); // true
const toolDef = registry.get("add");

import { ToolExecutor } from "@relay-e/engine/tool";
const executor = new ToolExecutor(registry);
// 1. Direct execution by tool name
const result = await executor.execute("add", { a: 10, b: 20 });
if (result.success) {
console.log("Calculation Output:", result.data); // { result: 30 }
} else {
console.error("Execution Error:", result.error);
}

{
const toolCall = {
id: "call_abc123",
name: "add",
arguments: { a: 15, b: 5 },
};
const result = await executor.executeCall(toolCall, {
context: { runId: "run_999" },
});
console.log(result);
}

{
const invalidCall = {
id: "call_fail",
name: "add",
arguments: { a: "not-a-number", b: 5 },
};
const result = await executor.executeCall(invalidCall);
console.log(result.success); // false
console.log(result.error); // "Validation failed: Expected number, received string at 'a'"
}
