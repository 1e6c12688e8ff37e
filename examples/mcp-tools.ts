/**
 * A worker whose tools come from two MCP servers beside its own code: a filesystem server over stdio and a
 * GitHub-style server over Streamable HTTP with a per-tenant token. docs/mcp.md explains each option.
 */
import type { SecretResolver } from '../src/index.js';
import { createWorker, mcpTools } from '../src/worker/index.js';
import { scriptedModel } from '../src/testing/index.js';

export const filesystem = mcpTools({
  name: 'fs',
  // The official server, installed first: npm install @modelcontextprotocol/server-filesystem. `--no` makes npx run
  // only what is installed; without it npx would download and run whatever package has this name on the registry.
  transport: { type: 'stdio', command: 'npx', args: ['--no', 'mcp-server-filesystem', '/srv/shared'] },
  // Read-only tools (annotated readOnlyHint) run at once, and so does create_directory (its rule below);
  // every other tool waits for a human.
  tools: {
    'read_*': { timeoutMs: 10_000 },
    create_directory: { requiresApproval: false },
  },
});

export const github = mcpTools({
  name: 'github',
  transport: {
    type: 'http',
    url: 'http://127.0.0.1:8931/mcp',
    // Resolved per call with the run's tenant by tenantTokens below: tenant A's token never serves tenant B.
    headers: { Authorization: { $secret: 'GITHUB_AUTHORIZATION' } },
  },
  timeoutMs: 30_000,
  tools: { 'delete_*': { requiresApproval: true, retry: { maximumAttempts: 1 } } },
});

/**
 * Each tenant's own token: `GITHUB_AUTHORIZATION` for tenant `acme` is `GITHUB_AUTHORIZATION_ACME` (`Bearer ghp_…`).
 * Any other name, or a tenant without its variable, is unknown (undefined), and the call fails saying so. A plain
 * map, or `secretsFromEnv()`, would give every tenant's runs the same values.
 */
const tenantTokens: SecretResolver = (name, { tenantId }) =>
  name === 'GITHUB_AUTHORIZATION' ? process.env[`GITHUB_AUTHORIZATION_${tenantId.toUpperCase()}`] : undefined;

export async function startMcpWorker() {
  const worker = await createWorker({
    // createWorker reads no TEMPORAL_ADDRESS (the CLI does); without `address` it connects to localhost:7233.
    address: process.env['TEMPORAL_ADDRESS'] || 'localhost:7233',
    tools: [filesystem, github],
    models: { scripted: scriptedModel([{ text: 'ready' }]) },
    taskQueue: 'relay-e',
    secrets: tenantTokens,
  });
  await worker.run();
}
