import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { describe, expect, it, vi } from 'vitest';
import { startServerPatiently } from '../../../src/testing/create-test-environment.js';

const started = {} as TestWorkflowEnvironment;
const timeout = () => new Error('ephemeral server at 127.0.0.1:1 did not start within 5s. Make sure …');

describe('startServerPatiently', () => {
  it('starts the server again when it did not answer within the start-up deadline', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    const start = vi.fn().mockRejectedValueOnce(timeout()).mockRejectedValueOnce(timeout()).mockResolvedValue(started);
    try {
      await expect(startServerPatiently(start)).resolves.toBe(started);
      expect(start).toHaveBeenCalledTimes(3);
      expect(warn).toHaveBeenCalledTimes(2);
    } finally {
      warn.mockRestore();
    }
  });

  it('gives up after three timeouts, and throws any other failure at once', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    try {
      const alwaysLate = vi.fn().mockRejectedValue(timeout());
      await expect(startServerPatiently(alwaysLate)).rejects.toThrow('did not start within');
      expect(alwaysLate).toHaveBeenCalledTimes(3);

      const missing = vi.fn().mockRejectedValue(new Error('spawn ENOENT'));
      await expect(startServerPatiently(missing)).rejects.toThrow('ENOENT');
      expect(missing).toHaveBeenCalledTimes(1);
    } finally {
      warn.mockRestore();
    }
  });
});
