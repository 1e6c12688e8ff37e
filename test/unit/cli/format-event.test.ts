import { describe, expect, it } from 'vitest';
import { formatEvent } from '../../../src/cli/format-event.js';

const base = { seq: 2, at: '2026-12-03T10:00:00.000Z', step: 1 } as const;

describe('formatEvent', () => {
  it('shows a model text on one line', () => {
    const line = formatEvent({ ...base, type: 'model_responded', text: 'Let me\nlook.', toolCallCount: 1 });
    expect(line).toBe('#2   model_responded          1 tool call; "Let me look."');
  });

  it('shows a text kept in the payload store by its preview and size, saying it is stored', () => {
    const storedText = {
      storedText: `sha256:${'a'.repeat(64)}` as const,
      bytes: 9_000,
      preview: 'Thinking it through',
    };
    const line = formatEvent({ ...base, type: 'model_responded', storedText, toolCallCount: 2 });
    expect(line).toBe('#2   model_responded          2 tool calls; "Thinking it through" (9000 bytes, stored)');
  });
});
