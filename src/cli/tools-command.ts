import { cliInvocation } from './cli-invocation.js';
import { commandSummaries } from './command-summaries.js';
import { createDemoTools } from '../demo/demo-tools.js';
import { mcpTools } from '../mcp/mcp-tools.js';
import { secretsFromEnv } from '../security/resolve-secret-references.js';
import type { SecretSource } from '../security/resolve-secret-references.js';
import type { ToolCatalogEntry } from '../shared/tool-catalog.js';
import { createLogger } from '../tool/tool-context.js';
import { formatToolListing, toToolListing } from '../tool/tool-listing.js';
import { loadToolSources } from '../tool/tool-source.js';
import type { LeftOutTool, ToolEntry, ToolSource } from '../tool/tool-source.js';
import { exitCodes, usageError } from './cli-error.js';
import type { Command } from './command.js';
import { configOption, configOptionHelp, loadProjectConfig } from './project-config.js';
import { parseCommandFlags } from './command.js';

const toolsOptions = {
  'mcp-stdio': { type: 'string', multiple: true },
  'mcp-http': { type: 'string', multiple: true },
  json: { type: 'boolean' },
  ...configOption,
} as const;

const cli = cliInvocation();

export const toolsCommand: Command = {
  name: 'tools',
  summary: commandSummaries.tools,
  help: `Usage: ${cli} tools [--config FILE] [--mcp-stdio NAME=COMMAND...] [--mcp-http NAME=URL...] [--json]

Lists the tools a worker with the project's config (relay-e.config.ts; without one, the demo tools) and
the MCP servers given offers, the way a run records them: name, source (worker code, or MCP server and
the tool's own name), whether a call needs approval, timeout, retries, the server's hints and the JSON
Schema of the input. MCP servers are started and listed, then closed. GET /v1/tools lists what the
running workers announce instead.

  --mcp-stdio NAME=COMMAND   an MCP server over stdio, e.g. --mcp-stdio 'fs=npx --no mcp-server-filesystem /tmp'
                             once npm install @modelcontextprotocol/server-filesystem has put it in the
                             project (--no: npx runs only what is installed, never downloads a package);
                             arguments are split on spaces; repeatable
  --mcp-http NAME=URL        an MCP server over Streamable HTTP; repeatable
${configOptionHelp}
  --json                     the listings as a JSON array (the shape GET /v1/tools answers with)
  -h, --help                 this help`,
  async run(argv) {
    const { values } = parseCommandFlags('tools', argv, toolsOptions);
    const servers = [
      ...(values['mcp-stdio'] ?? []).map((flag) => stdioServer(flag)),
      ...(values['mcp-http'] ?? []).map((flag) => httpServer(flag)),
    ];
    const project = await loadProjectConfig(values.config);
    const tools = project ? project.config.tools : createDemoTools();
    // The secrets a worker started here would have, for MCP servers whose settings name some.
    const secrets = project?.config.secrets ?? secretsFromEnv(process.env);
    const { catalog, leftOut } = await listToolCatalog([...tools, ...servers], secrets);
    const listings = catalog.map(toToolListing);
    process.stdout.write(
      values.json ? `${JSON.stringify(listings, null, 2)}\n` : listings.map(formatToolListing).join('\n\n') + '\n',
    );
    if (leftOut.length > 0) process.stderr.write(describeLeftOut(leftOut));
    return exitCodes.ok;
  },
};

/**
 * Opens the tool sources of a tools list, reads the catalog every run would record and the tools the sources list
 * but cannot offer, and closes them again.
 */
export async function listToolCatalog(
  tools: readonly ToolEntry[],
  secrets?: SecretSource,
): Promise<{ catalog: ToolCatalogEntry[]; leftOut: LeftOutTool[] }> {
  const logger = createLogger({ level: 'warn' });
  const loaded = await loadToolSources(tools, { logger, ...(secrets ? { secrets } : {}) });
  try {
    return { catalog: loaded.registry.catalog(), leftOut: loaded.leftOut() };
  } finally {
    await loaded.close();
  }
}

/** What `relay-e tools` says on stderr of the tools its sources list but cannot offer: none reaches a run. */
export function describeLeftOut(leftOut: readonly LeftOutTool[]): string {
  const lines = leftOut.map(({ source, tool, reason }) => `  ${tool} (from ${source}): ${reason}`);
  const count = leftOut.length === 1 ? '1 tool' : `${leftOut.length} tools`;
  return `Left out ${count} a source lists but Relay-E cannot offer (no run can call it):\n${lines.join('\n')}\n`;
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
