import { inspect } from 'node:util';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { McpConnection } from '../../src/mcp/mcp-connection.js';
import { mcpTools } from '../../src/mcp/mcp-tools.js';
import { createToolContext } from '../../src/tool/tool-context.js';
import { ToolExecutor } from '../../src/tool/tool-executor.js';
import { loadToolSources } from '../../src/tool/tool-source.js';
import type { LoadedTools } from '../../src/tool/tool-source.js';
import type { SecretResolver } from '../../src/security/resolve-secret-references.js';
import { startFixtureHttpServer } from '../fixtures/mcp/http-server.js';
import type { FixtureHttpServer } from '../fixtures/mcp/http-server.js';
import { eventually, fixtureStdioTransport, quietLogger } from './mcp-test-kit.js';

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

  it('hides the token the server quoted in its refusal from the whole error, causes included, which loggers print', async () => {
    const whoami = loaded.registry.get('remote_whoami');
    const context = createToolContext({ tenantId: 'mallory', logger: quietLogger });
    const error: unknown = await Promise.resolve(whoami?.execute({}, context)).then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
    // Temporal's logger prints an error with util.inspect, which shows its `cause` chain.
    expect(inspect(error)).toContain("credentials '[secret]' refused");
    expect(inspect(error)).not.toContain('token-mallory');
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
    // Beside it, only the catalog's own token (tenant `default`), which lists the new server's tools.
    expect(server.tokensSeen).toContain('token-globex');
    expect(server.tokensSeen.filter((token) => token !== 'token-globex' && token !== 'token-default')).toEqual([]);
  });

  it('lists its tools again once a call finds the session gone: the new server may serve other tools', async () => {
    expect(await executor.execute('remote_whoami', {}, { context: { tenantId: 'acme' } })).toMatchObject({
      success: true,
    });
    expect(loaded.registry.has('remote_late_tool')).toBe(false);
    const { port } = server;
    await server.close();
    server = await startFixtureHttpServer({ tokens, port, withLateTool: true });

    // A tenant's own connection finds its session gone; the catalog's connection, whose session is gone too, lists.
    expect(await executor.execute('remote_whoami', {}, { context: { tenantId: 'acme' } })).toMatchObject({
      success: true,
    });
    await eventually('late_tool is listed', () => loaded.registry.has('remote_late_tool'));
    expect(await executor.execute('remote_late_tool', { n: 3 }, { context: { tenantId: 'acme' } })).toMatchObject({
      success: true,
      data: 'late 3',
    });
  });

  it('does so too for a server every tenant shares one connection to, the catalog’s', async () => {
    const shared = await loadToolSources(
      [
        mcpTools({
          name: 'shared',
          transport: { type: 'http', url: server.url, headers: { Authorization: 'Bearer token-default' } },
        }),
      ],
      { logger: quietLogger },
    );
    try {
      const calls = new ToolExecutor(shared.registry, { logger: quietLogger });
      expect(shared.registry.has('shared_late_tool')).toBe(true);
      const { port } = server;
      await server.close();
      server = await startFixtureHttpServer({ tokens, port });

      expect(await calls.execute('shared_whoami', {}, { context: { tenantId: 'acme' } })).toMatchObject({
        success: true,
      });
      await eventually('late_tool is gone', () => !shared.registry.has('shared_late_tool'));
    } finally {
      await shared.close();
    }
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

describe('the HTTP sessions of an MCP server', () => {
  let sessionServer: FixtureHttpServer | undefined;
  let pooled: LoadedTools | undefined;

  afterEach(async () => {
    await pooled?.close();
    await sessionServer?.close();
    pooled = undefined;
    sessionServer = undefined;
  });

  it('are ended on the server when their connection is closed: evicted, or at shutdown', async () => {
    sessionServer = await startFixtureHttpServer({ tokens });
    const source = mcpTools({
      name: 'sessions',
      transport: { type: 'http', url: sessionServer.url, headers: { Authorization: { $secret: 'FIXTURE_TOKEN' } } },
      maxTenantConnections: 1,
    });
    pooled = await loadToolSources([source], { secrets, logger: quietLogger });
    const calls = new ToolExecutor(pooled.registry, { logger: quietLogger });
    for (const tenantId of ['acme', 'globex', 'acme']) {
      const result = await calls.execute('sessions_echo_text', { text: 'hi' }, { context: { tenantId } });
      expect(result).toMatchObject({ success: true });
    }
    const ends = () => sessionServer?.methodsSeen.filter((method) => method === 'DELETE').length;

    // acme's first session and globex's were evicted; the catalog's and acme's second stay open.
    await eventually('the evicted sessions are ended', () => sessionServer?.openSessions() === 2);
    expect(ends()).toBe(2);
    await pooled.close();
    pooled = undefined;
    expect([sessionServer.openSessions(), ends()]).toEqual([0, 4]);
  });
});

describe('the connection that lists a server’s tools', () => {
  it('hides its secret from a tools/list refusal that quotes it, as from a failed connect', async () => {
    const accepted = ['token-catalog'];
    const listing = await startFixtureHttpServer({ tokens: accepted });
    const connection = new McpConnection({
      server: 'listing',
      settings: async () => ({
        transport: { type: 'http', url: listing.url, headers: { Authorization: 'Bearer token-catalog' } },
        secretValues: ['Bearer token-catalog', 'token-catalog'],
      }),
      logger: quietLogger,
    });
    try {
      expect((await connection.listTools()).length).toBeGreaterThan(0);
      // The server stops accepting the token: its 401 quotes the credentials the next tools/list carried.
      accepted.length = 0;
      const error: unknown = await connection.listTools().then(
        () => undefined,
        (thrown: unknown) => thrown,
      );
      expect(inspect(error)).toContain("credentials '[secret]' refused");
      expect(inspect(error)).not.toContain('token-catalog');
    } finally {
      await connection.close();
      await listing.close();
    }
  });
});
