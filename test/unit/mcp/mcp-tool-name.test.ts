import { describe, expect, it } from 'vitest';
import { mapToolNames, toModelToolName } from '../../../src/mcp/mcp-tool-name.js';

describe('toModelToolName', () => {
  it('prefixes the server and maps characters the providers refuse to _', () => {
    expect(toModelToolName('github', 'search.issues')).toBe('github_search_issues');
    expect(toModelToolName('github', 'get-sum')).toBe('github_get-sum');
    expect(toModelToolName('', 'a/b c')).toBe('a_b_c');
  });

  it('keeps long names within 64 characters and apart by a hash of the original', () => {
    const first = toModelToolName('server', `${'x'.repeat(70)}.one`);
    const second = toModelToolName('server', `${'x'.repeat(70)}.two`);
    expect(first).toMatch(/^[a-zA-Z0-9_-]{64}$/);
    expect(second).toMatch(/^[a-zA-Z0-9_-]{64}$/);
    expect(first).not.toBe(second);
  });
});

describe('mapToolNames', () => {
  it('maps each model name back to the tool’s own name', () => {
    expect(mapToolNames('github', 'gh', ['search.issues', 'create_issue'])).toEqual(
      new Map([
        ['gh_search_issues', 'search.issues'],
        ['gh_create_issue', 'create_issue'],
      ]),
    );
  });

  it('refuses two tools that map to the same name, naming both', () => {
    expect(() => mapToolNames('github', 'github', ['search.issues', 'search_issues'])).toThrow(
      "MCP server 'github': tools 'search.issues' and 'search_issues' both map to the tool name 'github_search_issues'",
    );
  });
});
