import { describe, expect, it } from 'vitest';
import type { ModelToolSpec, TranscriptMessage } from '../../../src/shared/transcript.js';
import { compactTranscript } from '../../../src/shared/transcript-budget.js';
import { ModelContextTracker } from '../../../workflows/model-context.js';

const tools: ModelToolSpec[] = [{ name: 'add', description: 'Add two numbers.', inputSchema: { type: 'object' } }];
const stored = { context: 'sha256:c1', tools: 'sha256:t1' } as const;
const storedLater = { context: 'sha256:c2', tools: 'sha256:t1' } as const;

function toolTurn(step: number, output: string): TranscriptMessage[] {
  const id = `call_${step}_0`;
  return [
    { role: 'assistant', content: '', toolCalls: [{ id, name: 'read', input: {} }] },
    { role: 'tool', toolCallId: id, toolName: 'read', result: { success: true, toolName: 'read', data: output } },
  ];
}

describe('ModelContextTracker', () => {
  it('sends the whole transcript and the tools when nothing is stored yet', () => {
    const transcript: TranscriptMessage[] = [{ role: 'user', content: 'hi' }];
    expect(new ModelContextTracker().next(transcript, () => tools)).toEqual({
      context: { append: transcript },
      tools: { specs: tools },
    });
  });

  it('sends only the messages added since the stored context, and the tools by reference', () => {
    const tracker = new ModelContextTracker();
    const transcript: TranscriptMessage[] = [{ role: 'user', content: 'hi' }];
    tracker.remember([...transcript], stored);
    transcript.push(...toolTurn(1, 'one'));
    const next = tracker.next(transcript, () => {
      throw new Error('the tools are stored: the list is not built again');
    });
    expect(next).toEqual({
      context: { base: stored.context, append: transcript.slice(1) },
      tools: { ref: stored.tools },
    });
    tracker.remember([...transcript], storedLater);
    transcript.push(...toolTurn(2, 'two'));
    expect(tracker.next(transcript, () => tools).context).toEqual({
      base: storedLater.context,
      append: transcript.slice(3),
    });
  });

  it('sends the whole transcript once compaction replaced a message the stored context holds, the tools still by reference', () => {
    const tracker = new ModelContextTracker();
    const transcript: TranscriptMessage[] = [{ role: 'user', content: 'read' }, ...toolTurn(1, 'x'.repeat(2_000))];
    tracker.remember([...transcript], stored);
    transcript.push(...toolTurn(2, 'y'.repeat(2_000)));
    expect(compactTranscript(transcript, 3_000)).toBeDefined();
    expect(tracker.next(transcript, () => tools)).toEqual({
      context: { append: transcript },
      tools: { ref: stored.tools },
    });
  });

  it('sends everything again after forget, and after a call that stored nothing', () => {
    const tracker = new ModelContextTracker();
    const transcript: TranscriptMessage[] = [{ role: 'user', content: 'hi' }];
    tracker.remember([...transcript], stored);
    tracker.forget();
    expect(tracker.next(transcript, () => tools)).toEqual({ context: { append: transcript }, tools: { specs: tools } });
    tracker.remember([...transcript], undefined);
    expect(tracker.next(transcript, () => tools)).toEqual({ context: { append: transcript }, tools: { specs: tools } });
  });
});
