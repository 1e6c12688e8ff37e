import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mcpTools } from '../../src/mcp/mcp-tools.js';
import { ToolExecutor } from '../../src/tool/tool-executor.js';
import { loadToolSources } from '../../src/tool/tool-source.js';
import type { LoadedTools } from '../../src/tool/tool-source.js';
import type { SecretResolver } from '../../src/security/resolve-secret-references.js';
import { startFixtureHttpServer } from '../fixtures/mcp/http-server.js';
import type { FixtureHttpServer } from '../fixtures/mcp/http-server.js';
import { fixtureStdioTransport, quietLogger } from './mcp-test-kit.js';

const tokens = ['token-default', 'token-acme', 'token-globex'];
/** Each tenant has its own token; tenant `mallory` has none this server accepts. */
const secrets: SecretResolver = (name, { tenantId }) =>
  name === 'FIXTURE_TOKEN' ? `Bearer token-${tenantId}` : undefined;

let server: FixtureHttpServer;
let loaded: LoadedTools;
let executor: ToolExecutor;

beforeAll(async () => {
  server = await startFixtureHttpServer({ tokens });
  loaded = await loadToolSources(
    [
      mcpTools({
        name: 'remote',
        transport: { type: 'http', url: server.url, headers: { Authorization: { $secret: 'FIXTURE_TOKEN' } } },
      }),
    ],
    { secrets, logger: quietLogger },
  );
  executor = new ToolExecutor(loaded.registry, { logger: quietLogger });
});

afterAll(async () => {
  await loaded.close();
  await server.close();
});

describe('an MCP server over Streamable HTTP with a per-tenant token', () => {
  it('lists the tools with the catalog tenant’s token', () => {
    expect(loaded.registry.has('remote_echo_text')).toBe(true);
    expect(server.tokensSeen[0]).toBe('token-default');
  });

  it('calls each tenant’s tools with that tenant’s own token, and hides the token from what they return', async () => {
    const callAs = async (tenantId: string) => {
      const seenBefore = server.tokensSeen.length;
      const result = await executor.execute('remote_whoami', {}, { context: { tenantId } });
      return { result, tokensSent: [...new Set(server.tokensSeen.slice(seenBefore))] };
    };
    const calls = [await callAs('acme'), await callAs('globex'), await callAs('acme')];
    expect(calls.map(({ tokensSent }) => tokensSent)).toEqual([['token-acme'], ['token-globex'], ['token-acme']]);
    // `whoami` returns the token it was called with: the secret `Bearer token-…` is hidden whole and as its token.
    expect(calls.map(({ result }) => (result.success ? result.data : result.error))).toEqual([
      '[secret]',
      '[secret]',
      '[secret]',
    ]);
  });

  it('fails a tenant whose token the server refuses, without retrying, and serves it no one else’s', async () => {
    const result = await executor.execute('remote_whoami', {}, { context: { tenantId: 'mallory' } });
    expect(result).toMatchObject({ success: false, errorType: 'transport', retryable: false });
    expect(result.success ? '' : result.error).toContain('401');
  });

  it('fails with a retryable transport error while the server is down, and reconnects when it is back', async () => {
    const { port } = server;
    await server.close();
    const down = await executor.execute('remote_echo_text', { text: 'hi' }, { context: { tenantId: 'acme' } });
    expect(down).toMatchObject({ success: false, errorType: 'transport', retryable: true });

    server = await startFixtureHttpServer({ tokens, port });
    let back = await executor.execute('remote_echo_text', { text: 'hi' }, { context: { tenantId: 'acme' } });
    for (let attempt = 0; !back.success && attempt < 20; attempt += 1) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      back = await executor.execute('remote_echo_text', { text: 'hi' }, { context: { tenantId: 'acme' } });
    }
    expect(back).toMatchObject({ success: true, data: 'hi' });
  });
});

describe('an MCP server over HTTP that restarted between two calls', () => {
  it('answers the next call on a new session instead of failing it: the old session answered 404, so nothing ran', async () => {
    // The token is hidden from the result (see above); the fresh server's record says whose it was.
    expect(await executor.execute('remote_whoami', {}, { context: { tenantId: 'globex' } })).toMatchObject({
      success: true,
      data: '[secret]',
    });
    const { port } = server;
    await server.close();
    server = await startFixtureHttpServer({ tokens, port });

    const after = await executor.execute('remote_whoami', {}, { context: { tenantId: 'globex' } });
    expect(after).toMatchObject({ success: true, data: '[secret]' });
    expect(new Set(server.tokensSeen)).toEqual(new Set(['token-globex']));
  });
});

describe('tool names from several servers', () => {
  it('refuses two servers whose tools map to the same name, naming both', async () => {
    const twin = (name: string) => mcpTools({ name, prefix: '', transport: fixtureStdioTransport() });
    await expect(loadToolSources([twin('first'), twin('second')], { logger: quietLogger })).rejects.toThrow(
      "A tool named 'echo_text' (MCP server 'second', tool 'echo.text') is already registered (MCP server 'first', tool 'echo.text')",
    );
  });
});
