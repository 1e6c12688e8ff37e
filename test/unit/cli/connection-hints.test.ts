import { describe, expect, it } from 'vitest';
import { cliInvocation } from '../../../src/cli/cli-invocation.js';
import { connectionHintFlags } from '../../../src/cli/connection-hints.js';
import { describeDecisionHints } from '../../../src/cli/decision-command.js';

const cli = cliInvocation();

/** What a command was given to reach a server elsewhere (and a flag that has nothing to do with reaching it). */
const given = {
  address: '127.0.0.1:17233',
  namespace: 'shop',
  'task-queue': 'shop-agents',
  config: 'config dir/relay-e.config.ts',
  tenant: 'acme',
  json: false,
};
const flags =
  " --address 127.0.0.1:17233 --namespace shop --task-queue shop-agents --config 'config dir/relay-e.config.ts'";

describe('the connection flags a hint carries', () => {
  it('are the flags that choose the server, namespace, task queue and config, as given, quoted for a shell', () => {
    expect(connectionHintFlags(given)).toBe(flags);
    expect(connectionHintFlags({ profile: 'staging' })).toBe(' --profile staging');
    expect(connectionHintFlags({ config: "it's.ts" })).toBe(` --config 'it'\\''s.ts'`);
  });

  it('are none for a command given none of them, so hints keep their short form', () => {
    expect(connectionHintFlags({})).toBe('');
    expect(connectionHintFlags({ tenant: 'acme', json: true })).toBe('');
  });
});

describe('hints printed by relay-e run', () => {
  it('relay-e run: the commands that decide a waiting call carry the flags it was given', () => {
    expect(describeDecisionHints('run_1', 'call_1_0', flags)).toBe(
      `  approve: ${cli} approve${flags} run_1 call_1_0 [--input JSON]\n` +
        `  reject:  ${cli} reject${flags} run_1 call_1_0 [--reason TEXT]`,
    );
  });

  it('relay-e run: they name the request they were printed for, so a command pasted later decides only that one', () => {
    const at = '2026-12-07T04:00:00.000Z';
    expect(describeDecisionHints('run_1', 'call_1_0', '', at)).toBe(
      `  approve: ${cli} approve run_1 call_1_0 --requested-at ${at} [--input JSON]\n` +
        `  reject:  ${cli} reject run_1 call_1_0 --requested-at ${at} [--reason TEXT]`,
    );
  });
});
