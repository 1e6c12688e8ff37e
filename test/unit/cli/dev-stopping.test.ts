import { describe, expect, it } from 'vitest';
import { describeStopping } from '../../../src/cli/dev-command.js';

describe('what relay-e dev says as Ctrl-C stops it', () => {
  it('names the Temporal server it started among what it stops', () => {
    expect(describeStopping(false)).toBe('Stopping Relay-E dev: API, worker, Temporal (Ctrl-C again to force)...');
  });

  it('leaves out a Temporal server it reused, which it leaves running', () => {
    const message = describeStopping(true);
    expect(message).toBe(
      'Stopping Relay-E dev: API, worker; the reused Temporal server keeps running (Ctrl-C again to force)...',
    );
    expect(message).not.toContain('worker, Temporal');
  });
});
