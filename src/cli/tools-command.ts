import { cliInvocation } from './cli-invocation.js';
import { commandSummaries } from './command-summaries.js';
import { createDemoTools } from '../demo/demo-tools.js';
import { mcpTools } from '../mcp/mcp-tools.js';
import type { ToolCatalogEntry } from '../shared/tool-catalog.js';
import { createLogger } from '../tool/tool-context.js';
import { loadToolSources } from '../tool/tool-source.js';
import type { ToolEntry, ToolSource } from '../tool/tool-source.js';
import { exitCodes, usageError } from './cli-error.js';
import type { Command } from './command.js';
import { parseCommandArgs } from './command.js';

const toolsOptions = {
  'mcp-stdio': { type: 'string', multiple: true },
  'mcp-http': { type: 'string', multiple: true },
  json: { type: 'boolean' },
} as const;

const cli = cliInvocation();

export const toolsCommand: Command = {
  name: 'tools',
  summary: commandSummaries.tools,
  help: `Usage: ${cli} tools [--mcp-stdio NAME=COMMAND...] [--mcp-http NAME=URL...] [--json]

Lists the tools a worker with the demo tools (and the MCP servers given) offers, the way a run records
them: name, source (worker code, or MCP server and the tool's own name), whether a call needs approval,
timeout, retries, the server's hints and the JSON Schema of the input. MCP servers are started and
listed, then closed.

  --mcp-stdio NAME=COMMAND   an MCP server over stdio, e.g. --mcp-stdio 'fs=npx mcp-server-filesystem /tmp'
                             (arguments are split on spaces); repeatable
  --mcp-http NAME=URL        an MCP server over Streamable HTTP; repeatable
  --json                     the catalog entries as a JSON array
  -h, --help                 this help`,
  async run(argv) {
    const { values, positionals } = parseCommandArgs('tools', argv, toolsOptions);
    if (positionals.length > 0) throw usageError(`Unexpected argument '${positionals[0]}'. See '${cli} tools --help'.`);
    const servers = [
      ...(values['mcp-stdio'] ?? []).map((flag) => stdioServer(flag)),
      ...(values['mcp-http'] ?? []).map((flag) => httpServer(flag)),
    ];
    const catalog = await listToolCatalog([...createDemoTools(), ...servers]);
    process.stdout.write(
      values.json ? `${JSON.stringify(catalog, null, 2)}\n` : catalog.map(formatEntry).join('\n\n') + '\n',
    );
    return exitCodes.ok;
  },
};

/** Opens the tool sources of a tools list, reads the catalog every run would record, and closes them again. */
export async function listToolCatalog(tools: readonly ToolEntry[]): Promise<ToolCatalogEntry[]> {
  const loaded = await loadToolSources(tools, { logger: createLogger({ level: 'warn' }) });
  try {
    return loaded.registry.catalog();
  } finally {
    await loaded.close();
  }
}

function formatEntry(entry: ToolCatalogEntry): string {
  const source = entry.source ? `MCP server ${entry.source.server}, tool ${entry.source.tool}` : 'worker';
  const policy = [
    entry.requiresApproval ? 'needs approval' : 'no approval',
    entry.timeoutMs !== undefined ? `timeout ${entry.timeoutMs} ms` : undefined,
    entry.retry?.maximumAttempts !== undefined ? `${entry.retry.maximumAttempts} attempt(s)` : undefined,
  ].filter(Boolean);
  const hints = Object.entries(entry.annotations ?? {})
    .filter(([key, value]) => key !== 'title' && value === true)
    .map(([key]) => key.replace(/Hint$/, ''));
  return [
    `${entry.name}  (${source})`,
    `  ${entry.description.split('\n')[0]}`,
    `  policy: ${policy.join(', ')}${hints.length > 0 ? `; hints: ${hints.join(', ')}` : ''}`,
    `  input: ${JSON.stringify(entry.inputSchema)}`,
  ].join('\n');
}

function splitFlag(flag: string, value: string): [name: string, rest: string] {
  const at = value.indexOf('=');
  if (at <= 0 || at === value.length - 1) throw usageError(`${flag} takes NAME=VALUE, got '${value}'`);
  return [value.slice(0, at), value.slice(at + 1)];
}

function stdioServer(value: string): ToolSource {
  const [name, commandLine] = splitFlag('--mcp-stdio', value);
  const [command = '', ...args] = commandLine.trim().split(/\s+/);
  return mcpTools({ name, transport: { type: 'stdio', command, args } });
}

function httpServer(value: string): ToolSource {
  const [name, url] = splitFlag('--mcp-http', value);
  return mcpTools({ name, transport: { type: 'http', url } });
}
