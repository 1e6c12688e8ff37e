import { describe, expect, it } from 'vitest';
import { DevStack } from '../../../src/cli/dev-command.js';
import { createSpinner } from '../../../src/cli/spinner.js';

describe('relay-e dev stopping what it started', () => {
  it('runs every cleanup even after one fails, then throws the first failure and prints the rest', async () => {
    const printed: string[] = [];
    const stack = new DevStack(createSpinner(false), { write: (text: string) => printed.push(text) > 0 });
    const stopped: string[] = [];
    stack.add(async () => {
      stopped.push('temporal');
    });
    stack.add(async () => {
      stopped.push('worker');
      throw new Error('the worker failed');
    });
    stack.add(async () => {
      stopped.push('api');
      throw new Error('the API would not close');
    });

    // The API failed to close first; the worker's failure came next; Temporal still stopped.
    await expect(stack.stop()).rejects.toThrow('the API would not close');
    expect(stopped).toEqual(['api', 'worker', 'temporal']);
    expect(printed.join('')).toContain('the worker failed');
  });
});
