import { describe, expect, it } from 'vitest';
import { describeApprovalWebhook } from '../../../src/cli/worker-command.js';

describe("the worker's ready line about its approval webhook", () => {
  it('names a signed webhook by its origin only: its path or query may hold a credential', () => {
    const line = describeApprovalWebhook({
      url: 'https://hooks.example.com/relay-e/T0KEN?key=s3cr3t',
      secret: 'a-secret-of-sixteen-characters',
    });
    expect(line).toBe('https://hooks.example.com');
  });

  it('names a Slack webhook by its host: its URL is its secret', () => {
    const line = describeApprovalWebhook({ url: 'https://hooks.slack.com/services/T/B/X', format: 'slack' });
    expect(line).toBe('a Slack incoming webhook on hooks.slack.com');
  });
});
