/**
 * The one-line summary of every `relay-e` command, in the order `relay-e --help` lists them. They live apart from
 * the commands so the top-level help loads no command module.
 */
export const commandSummaries = {
  dev: "everything on one machine: Temporal dev server with Web UI, a worker with the project's tools, the HTTP API",
  run: 'start a run and follow it live, asking for approvals on the terminal',
  approve: 'approve a pending tool call (optionally with edited input)',
  reject: 'reject a pending tool call; the model is told it did not run',
  approvals: "list the tenant's tool calls waiting for a human, with the commands that decide them",
  runs: 'list runs, newest first, from Temporal visibility (search attributes)',
  inspect: 'show a run: status, pending approvals, usage, answer and the event timeline',
  worker: "run a worker with the project's tools (relay-e.config.ts), or the demo tools without one",
  serve: 'run the HTTP API (runs, events over SSE, approvals) in front of Temporal',
  'codec-server': 'decrypt payloads for the Temporal UI and CLI (--ui-codec-endpoint / --codec-endpoint)',
  tools: "list the tool catalog a worker offers: each tool's source, approval policy and input schema",
} as const;

/** The name of a `relay-e` command. */
export type CommandName = keyof typeof commandSummaries;
