import { describe, expect, it } from 'vitest';
import { toExitCode } from '../../../src/cli/cli-error.js';
import { exitCodes } from '../../../src/cli/exit-codes.js';
import { listToolCatalog } from '../../../src/cli/tools-command.js';
import { mcpTools } from '../../../src/mcp/mcp-tools.js';
import { secretsFromEnv } from '../../../src/security/resolve-secret-references.js';

describe('relay-e tools (and a worker start) with an MCP server whose secret is not set', () => {
  it('names the server, the secret, the tenant that lists its tools and the variable to set, and no run', async () => {
    const github = mcpTools({
      name: 'github',
      // The secret is looked up before anything connects: nothing needs to listen here.
      transport: {
        type: 'http',
        url: 'http://127.0.0.1:9/mcp',
        headers: { Authorization: { $secret: 'GITHUB_AUTHORIZATION' } },
      },
    });
    const failure = listToolCatalog([github], secretsFromEnv({}));
    await expect(failure).rejects.toThrow("MCP server 'github' needs secret 'GITHUB_AUTHORIZATION'");
    await expect(failure).rejects.toThrow(/tenant 'default'.*RELAY_E_SECRET_GITHUB_AUTHORIZATION/s);
    await expect(failure).rejects.not.toThrow("run's config");
    // A set-up problem to fix here, not a server to wait for.
    expect(toExitCode(await failure.catch((error: unknown) => error))).toBe(exitCodes.usage);
  });

  it('exits 5 when the server could not be started (its command exits at once)', async () => {
    const gone = mcpTools({ name: 'gone', transport: { type: 'stdio', command: 'false' } });
    const failure = await listToolCatalog([gone], secretsFromEnv({})).catch((error: unknown) => error);
    expect(String(failure)).toContain("MCP server 'gone' could not be reached");
    expect(toExitCode(failure)).toBe(exitCodes.unavailable);
  });
});
