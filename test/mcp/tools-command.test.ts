import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ToolListing } from '../../src/tool/tool-listing.js';
import { faultyStdioTransport, fixtureStdioTransport } from './mcp-test-kit.js';

const root = join(import.meta.dirname, '../..');

function relayETools(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', 'src/cli/main.ts', 'tools', ...args],
      { cwd: root },
      (error, stdout, stderr) => resolve({ code: typeof error?.code === 'number' ? error.code : 0, stdout, stderr }),
    );
  });
}

describe('relay-e tools', () => {
  const fixture = fixtureStdioTransport();
  const fixtureFlag = `fixture=${fixture.command} ${(fixture.args ?? []).join(' ')}`;

  it('lists worker tools and an MCP server’s tools with source, policy and schema as JSON', async () => {
    const { code, stdout } = await relayETools(['--json', '--mcp-stdio', fixtureFlag]);
    expect(code).toBe(0);
    const catalog = JSON.parse(stdout) as ToolListing[];
    expect(catalog.find((entry) => entry.name === 'transfer_funds')).toMatchObject({
      source: { kind: 'worker' },
      requiresApproval: true,
    });
    expect(catalog.find((entry) => entry.name === 'fixture_write_note')).toMatchObject({
      source: { kind: 'mcp', server: 'fixture', tool: 'write_note' },
      requiresApproval: true,
      annotations: { destructiveHint: true },
      inputSchema: { type: 'object' },
    });
  });

  it('prints one block per tool for people', async () => {
    const { code, stdout } = await relayETools(['--mcp-stdio', fixtureFlag]);
    expect(code).toBe(0);
    expect(stdout).toContain(
      'fixture_echo_text  (MCP server fixture, tool echo.text)\n  Echo the text back.\n  policy: no approval',
    );
  });

  it('names on stderr each tool a server lists but Relay-E cannot offer, and why, beside the listing', async () => {
    const faulty = faultyStdioTransport('unreadable-schema');
    const { code, stdout, stderr } = await relayETools([
      '--json',
      '--mcp-stdio',
      `odd=${faulty.command} ${(faulty.args ?? []).join(' ')}`,
    ]);
    expect(code).toBe(0);
    expect((JSON.parse(stdout) as ToolListing[]).map((entry) => entry.name)).toEqual(
      expect.arrayContaining(['odd_fine', 'odd_move']),
    );
    expect(stderr).toContain(
      'Left out 2 tools a source lists but Relay-E cannot offer (no run can call it):\n' +
        "  broken (from odd): The input JSON Schema of tool 'odd_broken' cannot be read (Reference not found: #/nowhere)\n" +
        "  loop (from odd): The input JSON Schema of tool 'odd_loop' cannot be read (the $ref '#/$defs/a' leads back " +
        'to itself without reading into the input: a check never ends)\n',
    );
  });

  it('refuses a server flag without a name', async () => {
    await expect(relayETools(['--mcp-http', 'http://127.0.0.1:1/mcp'])).resolves.toMatchObject({ code: 2 });
  });
});
