import { describe, expect, it } from 'vitest';
import { resolveSecretReferences, secretsFromEnv } from '../../../src/security/resolve-secret-references.js';

const authorization = { Authorization: { $secret: 'GITHUB_AUTHORIZATION' } };

/** The message a lookup of an unknown secret fails with. */
async function failure(...args: Parameters<typeof resolveSecretReferences>): Promise<string> {
  return resolveSecretReferences(...args).then(
    () => {
      throw new Error('the secret was resolved');
    },
    (error: unknown) => (error as Error).message,
  );
}

describe('a secret the worker does not know', () => {
  it('for the connection that lists an MCP server’s tools: names the server, the secret, the tenant and the variable', async () => {
    // The connection an MCP server's tools are listed on at worker start asks for its secrets as tool `<server>/*`.
    const message = await failure(authorization, secretsFromEnv({}), {
      tenantId: 'default',
      toolName: 'github/*',
      mcpServer: 'github',
    });
    expect(message).toContain("MCP server 'github' needs secret 'GITHUB_AUTHORIZATION'");
    expect(message).toContain("tenant 'default' (on the connection that lists its tools)");
    expect(message).toContain('RELAY_E_SECRET_GITHUB_AUTHORIZATION');
    // No run exists at worker start.
    expect(message).not.toContain("run's config");
  });

  it('for a tenant’s connection to an MCP server: names the server’s settings and the tool, not a run’s config', async () => {
    const message = await failure(authorization, secretsFromEnv({}), {
      tenantId: 'acme',
      toolName: 'github_create_issue',
      mcpServer: 'github',
    });
    expect(message).toContain(
      "MCP server 'github' needs secret 'GITHUB_AUTHORIZATION' in its settings for tenant 'acme'",
    );
    expect(message).toContain("(for tool 'github_create_issue')");
    expect(message).not.toContain("run's config");
  });

  it("for a run's config: still says so, and names the variable secretsFromEnv() reads", async () => {
    const message = await failure({ token: { $secret: 'BANK_API_TOKEN' } }, secretsFromEnv({}), {
      tenantId: 'acme',
      toolName: 'call_bank',
    });
    expect(message).toContain("The run's config refers to secret 'BANK_API_TOKEN', which this worker does not know");
    expect(message).toContain("tool 'call_bank'");
    expect(message).toContain("tenant 'acme'");
    expect(message).toContain('RELAY_E_SECRET_BANK_API_TOKEN');
  });

  it('from a map of secrets: says to add it there, with no environment variable that would not be read', async () => {
    const message = await failure(
      authorization,
      { OTHER: 'x' },
      { tenantId: 'default', toolName: 'github/*', mcpServer: 'github' },
    );
    expect(message).toContain("MCP server 'github' needs secret 'GITHUB_AUTHORIZATION'");
    expect(message).toContain('`secrets`');
    expect(message).not.toContain('RELAY_E_SECRET_');
  });
});
