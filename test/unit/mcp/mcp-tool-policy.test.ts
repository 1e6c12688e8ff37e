import { describe, expect, it } from 'vitest';
import { matchesGlob, resolveToolPolicy } from '../../../src/mcp/mcp-tool-policy.js';

describe('resolveToolPolicy', () => {
  it('requires approval by default, except for tools annotated read-only', () => {
    expect(resolveToolPolicy('delete_repo', undefined, {}).requiresApproval).toBe(true);
    expect(resolveToolPolicy('delete_repo', { readOnlyHint: false }, {}).requiresApproval).toBe(true);
    expect(resolveToolPolicy('list_repos', { readOnlyHint: true }, {}).requiresApproval).toBe(false);
  });

  it('retries only tools that are safe to repeat, and no timeout, unless configured', () => {
    const safe = { maximumAttempts: 3, retryTimeouts: false };
    expect(resolveToolPolicy('a', { idempotentHint: true }, {}).retry).toEqual(safe);
    expect(resolveToolPolicy('a', { destructiveHint: true }, {}).retry).toEqual({ ...safe, maximumAttempts: 1 });
    expect(resolveToolPolicy('a', undefined, { retry: { maximumAttempts: 5 } }).retry).toEqual({ maximumAttempts: 5 });
  });

  it('prefers the exact tool rule, then the first matching pattern, then the server, field by field', () => {
    const rules = {
      'list_*': { requiresApproval: true, timeoutMs: 1_000 },
      '*': { timeoutMs: 2_000, maxResultBytes: 100 },
      list_repos: { requiresApproval: false },
    };
    const server = { requiresApproval: true, timeoutMs: 9_000, approvalTimeoutMs: 600_000 };
    expect(resolveToolPolicy('list_repos', { readOnlyHint: true }, server, rules)).toEqual({
      requiresApproval: false,
      approvalTimeoutMs: 600_000,
      timeoutMs: 1_000,
      maxResultBytes: 100,
      retry: { maximumAttempts: 3, retryTimeouts: false },
    });
    expect(resolveToolPolicy('get_repo', { readOnlyHint: true }, server, rules)).toMatchObject({
      requiresApproval: true,
      timeoutMs: 2_000,
    });
  });
});

describe('approvers in a policy', () => {
  it('names who decides the tools that wait for a human, and leaves read-only tools without any', () => {
    const server = { approvers: ['ops-lead'] };
    expect(resolveToolPolicy('delete_repo', undefined, server).approvers).toEqual(['ops-lead']);
    expect(resolveToolPolicy('list_repos', { readOnlyHint: true }, server)).not.toHaveProperty('approvers');
    const rules = { 'delete_*': { approvers: ['cto'] } };
    expect(resolveToolPolicy('delete_repo', undefined, server, rules).approvers).toEqual(['cto']);
  });

  it('asks several approvers, and reminds them at its own lead time, of the tools that wait for a human only', () => {
    const server = { approvalsRequired: 2, remindApproversBeforeExpiryMs: 300_000 };
    expect(resolveToolPolicy('delete_repo', undefined, server)).toMatchObject(server);
    const readOnly = resolveToolPolicy('list_repos', { readOnlyHint: true }, server);
    expect(readOnly).not.toHaveProperty('approvalsRequired');
    expect(readOnly).not.toHaveProperty('remindApproversBeforeExpiryMs');
  });
});

describe('matchesGlob', () => {
  it('matches * and ? and nothing else specially', () => {
    expect(matchesGlob('delete_*', 'delete_repo')).toBe(true);
    expect(matchesGlob('get-?', 'get-a')).toBe(true);
    expect(matchesGlob('a.b', 'axb')).toBe(false);
    expect(matchesGlob('read_*', 'write_file')).toBe(false);
  });
});
