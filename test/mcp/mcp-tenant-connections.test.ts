import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { mcpTools } from '../../src/mcp/mcp-tools.js';
import type { McpToolsOptions } from '../../src/mcp/mcp-tools.js';
import type { SecretResolver } from '../../src/security/resolve-secret-references.js';
import { createLogger } from '../../src/tool/tool-context.js';
import type { Logger, ToolContext } from '../../src/tool/tool-context.js';
import { ToolExecutor } from '../../src/tool/tool-executor.js';
import { loadToolSources } from '../../src/tool/tool-source.js';
import type { LoadedTools } from '../../src/tool/tool-source.js';
import { callerFingerprint } from '../fixtures/mcp/fixture-mcp-server.js';
import { eventually, fixtureStdioTransport, quietLogger, readServerEvents, temporaryFolder } from './mcp-test-kit.js';
import { isRunning } from '../helpers/process-running.js';

const fingerprints = (...callers: string[]) => callers.map(callerFingerprint);

// A stdio server whose TOKEN is a secret runs one process per tenant: a process that exits is a connection closed.

/** Tenants whose token was rotated, and what it is now. */
const rotated = new Map<string, string>();
/** Each tenant's own token; the stdio fixture's `caller_fingerprint` answers for the TOKEN it was started with. */
const secrets: SecretResolver = (name, { tenantId }) =>
  name === 'TOKEN' ? (rotated.get(tenantId) ?? `token-${tenantId}`) : undefined;

let loaded: LoadedTools | undefined;

afterEach(async () => {
  await loaded?.close();
  loaded = undefined;
});

async function openPerTenantServer(
  limits: Pick<McpToolsOptions, 'maxTenantConnections' | 'tenantConnectionIdleMs'>,
  { env = {}, logger = quietLogger }: { env?: Record<string, string>; logger?: Logger } = {},
) {
  loaded = await loadToolSources(
    [
      mcpTools({
        name: 'pooled',
        transport: { ...fixtureStdioTransport(), env: { ...env, TOKEN: { $secret: 'TOKEN' } } },
        ...limits,
      }),
    ],
    { secrets, logger },
  );
  const executor = new ToolExecutor(loaded.registry, { logger: quietLogger });
  const execute = (
    tool: string,
    tenantId: string,
    input = {},
    options: Partial<Pick<ToolContext, 'reportProgress'>> & { signal?: AbortSignal } = {},
  ) =>
    executor.execute(`pooled_${tool}`, input, {
      context: { tenantId, ...(options.reportProgress ? { reportProgress: options.reportProgress } : {}) },
      ...(options.signal ? { signal: options.signal } : {}),
    });
  const call = async (tool: string, tenantId: string): Promise<string> => {
    const result = await execute(tool, tenantId);
    if (!result.success) throw new Error(`${tool} as ${tenantId} failed: ${result.error}`);
    return result.data as string;
  };
  return {
    execute,
    /** Which token the tenant's process holds, as its fingerprint (`whoami`'s answer would be hidden as a secret). */
    whoami: (tenantId: string) => call('caller_fingerprint', tenantId),
    pidOf: async (tenantId: string) => Number(await call('process_id', tenantId)),
    /** A long count on the tenant's connection, followed by its progress reports, until `stop` cancels it. */
    startCounting: (tenantId: string) => {
      let reports = 0;
      const stopper = new AbortController();
      const ended = execute(
        'slow_count',
        tenantId,
        { to: 300, stepMs: 100 },
        { reportProgress: () => (reports += 1), signal: stopper.signal },
      );
      return {
        reports: () => reports,
        reported: (count: number) => eventually(`${count} progress reports`, () => reports >= count, 20_000),
        stop: async () => {
          stopper.abort();
          return ended;
        },
      };
    },
  };
}

describe('per-tenant connections of an MCP server whose settings hold secrets', () => {
  it('keeps one connection per tenant across calls, each with its own credentials', async () => {
    const server = await openPerTenantServer({});
    const acme = await server.pidOf('acme');
    const globex = await server.pidOf('globex');

    expect(globex).not.toBe(acme);
    expect(await server.pidOf('acme')).toBe(acme);
    expect([await server.whoami('acme'), await server.whoami('globex')]).toEqual(
      fingerprints('token-acme', 'token-globex'),
    );
  });

  it('hides the tenant’s secret in the progress its server reports, as in its result', async () => {
    const server = await openPerTenantServer({});
    const notes: unknown[] = [];

    const result = await server.execute(
      'slow_count',
      'acme',
      { to: 3, stepMs: 150, echoToken: true },
      { reportProgress: (progress) => notes.push(progress) },
    );

    expect(result).toMatchObject({ success: true });
    // Progress is best effort: on a loaded machine the client may read the later notifications in one chunk with the
    // response, which ends the request before their handlers run. The first arrives 450 ms before the response.
    expect(notes[0]).toEqual({ progress: 1, total: 3, message: 'step 1 as [secret]' });
    for (const [index, note] of notes.entries()) {
      expect(note).toEqual({ progress: index + 1, total: 3, message: `step ${index + 1} as [secret]` });
    }
    expect(JSON.stringify(notes)).not.toContain('token-acme');
  });

  it('closes the least recently used beyond the bound, and a tenant that comes back gets its own again', async () => {
    const server = await openPerTenantServer({ maxTenantConnections: 2 });
    const acme = await server.pidOf('acme');
    const globex = await server.pidOf('globex');
    await server.pidOf('acme');
    const initech = await server.pidOf('initech');

    await eventually('globex’s server process, the least recently used, has exited', () => !isRunning(globex));
    expect([isRunning(acme), isRunning(initech)]).toEqual([true, true]);

    // Back after eviction: a fresh connection with globex's own token, never one left open for another tenant.
    expect(await server.whoami('globex')).toBe(callerFingerprint('token-globex'));
    const globexAgain = await server.pidOf('globex');
    expect([acme, initech]).not.toContain(globexAgain);
    await eventually('acme’s, now the least recently used, has exited', () => !isRunning(acme));
    expect([await server.whoami('initech'), await server.whoami('acme')]).toEqual(
      fingerprints('token-initech', 'token-acme'),
    );
  });

  it('never closes a connection under a running call: the bound is kept by closing an idle one', async () => {
    const server = await openPerTenantServer({ maxTenantConnections: 1 });
    const acme = await server.pidOf('acme');
    const counting = server.startCounting('acme');
    await counting.reported(1);
    const globex = await server.pidOf('globex');

    await eventually('globex’s server process, idle beside a busy one, has exited', () => !isRunning(globex));
    // acme's call goes on over the connection the pool kept open for it.
    await counting.reported(counting.reports() + 2);
    expect(isRunning(acme)).toBe(true);
    await expect(counting.stop()).resolves.toMatchObject({ success: false, errorType: 'cancelled' });
    expect(await server.pidOf('acme')).toBe(acme);
  });

  it('replaces a tenant’s connection when its secret is rotated, and closes the old one', async () => {
    const server = await openPerTenantServer({});
    const before = await server.pidOf('acme');
    rotated.set('acme', 'token-acme-rotated');
    try {
      expect(await server.whoami('acme')).toBe(callerFingerprint('token-acme-rotated'));
      await eventually('the server process with the old token has exited', () => !isRunning(before));
    } finally {
      rotated.clear();
    }
  });

  it('starts the catalog’s server again with the catalog tenant’s current secret, not the one it started with', async () => {
    const eventsFile = join(temporaryFolder('mcp-catalog'), 'events.jsonl');
    await openPerTenantServer({}, { env: { FIXTURE_EVENTS_FILE: eventsFile } });
    const started = () => readServerEvents(eventsFile).filter((event) => event.event === 'started');
    // No tenant called yet: the one process is the catalog's, started with the catalog tenant's token.
    const [catalog] = started();
    expect(catalog).toMatchObject({ caller: callerFingerprint('token-default') });
    rotated.set('default', 'token-default-rotated');
    try {
      process.kill(catalog?.pid as number, 'SIGKILL');
      await eventually('the catalog’s server started again', () => started().length > 1);
      expect(started()[1]).toMatchObject({ caller: callerFingerprint('token-default-rotated') });
    } finally {
      rotated.clear();
    }
  });

  it('logs what a server writes on stderr with the tenant it serves, its secret hidden', async () => {
    const records: Array<Record<string, unknown>> = [];
    const logger = createLogger({
      level: 'debug',
      write: (line) => records.push(JSON.parse(line) as Record<string, unknown>),
    });
    const server = await openPerTenantServer({}, { logger });
    await server.pidOf('acme');
    const stderrOf = (tenantId: string) =>
      records.filter((record) => record.message === 'MCP server stderr' && record.tenantId === tenantId);

    // The fixture writes its TOKEN on stderr at start; the catalog's connection holds the catalog tenant's.
    await eventually(
      'both servers’ stderr is logged',
      () => stderrOf('acme').length > 0 && stderrOf('default').length > 0,
    );
    expect([...stderrOf('acme'), ...stderrOf('default')]).toMatchObject([
      { server: 'pooled', text: 'fixture server started with TOKEN=[secret]' },
      { server: 'pooled', text: 'fixture server started with TOKEN=[secret]' },
    ]);
    expect(JSON.stringify(records)).not.toMatch(/token-(acme|default)/);
  });

  it('closes a tenant’s connection left idle', async () => {
    const server = await openPerTenantServer({ tenantConnectionIdleMs: 300 });
    const acme = await server.pidOf('acme');

    await eventually('acme’s idle server process has exited', () => !isRunning(acme));
    expect(await server.whoami('acme')).toBe(callerFingerprint('token-acme'));
  });

  it('refuses a bound that is not a positive integer', () => {
    expect(() => mcpTools({ name: 'bad', transport: fixtureStdioTransport(), maxTenantConnections: 0 })).toThrow(
      "MCP server 'bad': maxTenantConnections must be a positive integer, got 0",
    );
  });
});
