import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mcpTools } from '../../src/mcp/mcp-tools.js';
import { ToolExecutor } from '../../src/tool/tool-executor.js';
import { loadToolSources } from '../../src/tool/tool-source.js';
import type { LoadedTools } from '../../src/tool/tool-source.js';
import { eventually, fixtureStdioTransport, quietLogger, readServerEvents, temporaryFolder } from './mcp-test-kit.js';

let loaded: LoadedTools;
let executor: ToolExecutor;
const eventsFile = join(temporaryFolder('mcp-stdio'), 'events.jsonl');

beforeAll(async () => {
  loaded = await loadToolSources(
    [
      mcpTools({
        name: 'fixture',
        transport: fixtureStdioTransport({ FIXTURE_EVENTS_FILE: eventsFile, TOKEN: 'stdio-caller' }),
        tools: { 'change_*': { requiresApproval: false }, fail: { requiresApproval: false, timeoutMs: 5_000 } },
      }),
    ],
    { logger: quietLogger },
  );
  executor = new ToolExecutor(loaded.registry, { logger: quietLogger });
});

afterAll(async () => {
  await loaded.close();
});

describe('an MCP server over stdio', () => {
  it('lists its tools under names the providers accept, with their source and annotations', () => {
    const echo = loaded.registry.catalog().find((entry) => entry.source?.tool === 'echo.text');
    expect(echo).toMatchObject({
      name: 'fixture_echo_text',
      source: { kind: 'mcp', server: 'fixture', tool: 'echo.text' },
      annotations: { readOnlyHint: true },
      requiresApproval: false,
      inputSchema: { type: 'object', properties: { text: { type: 'string' } } },
    });
  });

  it('requires approval unless a tool is read-only or configured otherwise, and shows destructive hints', () => {
    const byName = new Map(loaded.registry.catalog().map((entry) => [entry.name, entry]));
    expect(byName.get('fixture_write_note')).toMatchObject({
      requiresApproval: true,
      annotations: { destructiveHint: true, idempotentHint: true },
      retry: { maximumAttempts: 3 },
    });
    expect(byName.get('fixture_crash')).toMatchObject({ requiresApproval: true, retry: { maximumAttempts: 1 } });
    expect(byName.get('fixture_change_tools')?.requiresApproval).toBe(false);
    expect(byName.get('fixture_fail')).toMatchObject({ requiresApproval: false, timeoutMs: 5_000 });
  });

  it('calls a tool and returns its text', async () => {
    const result = await executor.execute('fixture_echo_text', { text: 'hello' });
    expect(result).toEqual({ success: true, toolName: 'fixture_echo_text', data: 'hello' });
  });

  it('refuses input that breaks the JSON Schema before the server sees it', async () => {
    const result = await executor.execute('fixture_echo_text', { text: 42 });
    expect(result).toMatchObject({ success: false, errorType: 'validation', issues: [{ path: 'text' }] });
  });

  it('returns structured content as the result', async () => {
    const result = await executor.execute('fixture_weather', { city: 'Lyon' });
    expect(result).toMatchObject({ success: true, data: { city: 'Lyon', celsius: 21.5 } });
  });

  it('tells the model about a result with isError as a tool_error failure', async () => {
    const result = await executor.execute('fixture_fail', { why: 'disk full' });
    expect(result).toMatchObject({ success: false, errorType: 'tool_error', error: 'It failed: disk full' });
  });

  it('turns progress notifications into progress reports', async () => {
    const reports: unknown[] = [];
    const result = await executor.execute(
      'fixture_slow_count',
      { to: 3, stepMs: 20 },
      { context: { reportProgress: (progress) => reports.push(progress) } },
    );
    expect(result).toMatchObject({ success: true, data: 'counted to 3' });
    // The last notification may race the response, which ends the request on the client.
    expect(reports.slice(0, 2)).toEqual([
      { progress: 1, total: 3, message: 'step 1' },
      { progress: 2, total: 3, message: 'step 2' },
    ]);
  });

  it('cancels the request on the server when the call is cancelled', async () => {
    const controller = new AbortController();
    const call = executor.execute('fixture_slow_count', { to: 100, stepMs: 50 }, { signal: controller.signal });
    setTimeout(() => controller.abort(), 300);
    await expect(call).resolves.toMatchObject({ success: false, errorType: 'cancelled' });
    await eventually('the server saw the cancellation', () =>
      readServerEvents(eventsFile).some((event) => event.event === 'cancelled' && event.tool === 'slow_count'),
    );
  });

  it('follows the server when it adds and removes a tool', async () => {
    await executor.execute('fixture_change_tools', { action: 'add' });
    await eventually('late_tool is registered', () => loaded.registry.has('fixture_late_tool'));
    await expect(executor.execute('fixture_late_tool', { n: 7 })).resolves.toMatchObject({ data: 'late 7' });

    await executor.execute('fixture_change_tools', { action: 'remove' });
    await eventually('late_tool is gone', () => !loaded.registry.has('fixture_late_tool'));
    await expect(executor.execute('fixture_late_tool', { n: 7 })).resolves.toMatchObject({ errorType: 'not_found' });
  });

  it('keeps the worker serving while it judges the pattern of a tool the server adds', async () => {
    const eventLoop = watchEventLoop();
    await executor.execute('fixture_change_tools', { action: 'add_patterned' });
    // Up to recheck's own 10 s limit, more on a loaded machine: the wait leaves room beyond it.
    await eventually('patterned_tool is registered', () => loaded.registry.has('fixture_patterned_tool'), 30_000);
    // recheck takes seconds on this pattern: judged on the worker's own thread, no timer would fire meanwhile.
    expect(eventLoop.stop()).toBeLessThan(1_500);
    const arn = 'arn:aws:codepipeline:eu-west-1:123456789012:pipeline';
    await expect(executor.execute('fixture_patterned_tool', { arn })).resolves.toMatchObject({ data: arn });
  });

  it('restarts a server that crashed: the call in flight fails as transport, the next one works', async () => {
    const crashed = await executor.execute('fixture_crash', {});
    expect(crashed).toMatchObject({ success: false, errorType: 'transport', retryable: false });
    expect(readServerEvents(eventsFile).filter((event) => event.event === 'crash')).toHaveLength(1);

    await expect(executor.execute('fixture_echo_text', { text: 'again' })).resolves.toMatchObject({ data: 'again' });
    await expect(executor.execute('fixture_whoami', {})).resolves.toMatchObject({ data: 'stdio-caller' });
  });
});

/** Watches the event loop until `stop`, which returns the longest time, in ms, that it turned no timer. */
function watchEventLoop(): { stop: () => number } {
  let last = performance.now();
  let longest = 0;
  const note = () => {
    const now = performance.now();
    longest = Math.max(longest, now - last);
    last = now;
  };
  const timer = setInterval(note, 10);
  return {
    stop: () => {
      clearInterval(timer);
      note();
      return longest;
    },
  };
}
