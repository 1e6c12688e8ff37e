import { Context } from '@temporalio/activity';
import { MockActivityEnvironment } from '@temporalio/testing';
import { describe, expect, it } from 'vitest';
import { createModelTextStream } from '../../../activities/model-text-stream.js';

describe('createModelTextStream', () => {
  it('stops growing at its bound: no delta after one that did not fit, so the text has no holes', async () => {
    const text = await new MockActivityEnvironment().run(async () => {
      const stream = createModelTextStream(Context.current(), 1);
      try {
        stream.push('a'.repeat(256 * 1024 - 10));
        stream.push('b'.repeat(20)); // over the bound: dropped
        stream.push('c'.repeat(5)); // would fit, but would follow a gap
        return stream.progress()?.text ?? '';
      } finally {
        stream.stop();
      }
    });

    expect(text).toBe('a'.repeat(256 * 1024 - 10));
  });
});
