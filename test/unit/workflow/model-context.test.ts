import { describe, expect, it } from 'vitest';
import type { ModelToolSpec, TranscriptMessage } from '../../../src/shared/transcript.js';
import { compactTranscript } from '../../../src/shared/transcript-budget.js';
import { ModelContextTracker } from '../../../workflows/model-context.js';

const tools: ModelToolSpec[] = [{ name: 'add', description: 'Add two numbers.', inputSchema: { type: 'object' } }];
const firstStored = { context: 'sha256:c1', tools: 'sha256:t1' } as const;
const laterStored = { context: 'sha256:c2' } as const;
const toolsNotRebuilt = () => {
  throw new Error('the tools are stored: the list is not built again');
};

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
    expect(new ModelContextTracker().next(transcript, () => ({ specs: tools }))).toEqual({
      append: transcript,
      tools: { specs: tools },
    });
  });

  it('sends only the messages added since the stored context, which holds the tools', () => {
    const tracker = new ModelContextTracker();
    const transcript: TranscriptMessage[] = [{ role: 'user', content: 'hi' }];
    tracker.remember([...transcript], firstStored);
    transcript.push(...toolTurn(1, 'one'));
    expect(tracker.next(transcript, toolsNotRebuilt)).toEqual({ base: 'sha256:c1', append: transcript.slice(1) });
    tracker.remember([...transcript], laterStored);
    transcript.push(...toolTurn(2, 'two'));
    expect(tracker.next(transcript, toolsNotRebuilt)).toEqual({ base: 'sha256:c2', append: transcript.slice(3) });
  });

  it('sends the whole transcript once compaction replaced a message the stored context holds, the tools by reference', () => {
    const tracker = new ModelContextTracker();
    const transcript: TranscriptMessage[] = [{ role: 'user', content: 'read' }, ...toolTurn(1, 'x'.repeat(2_000))];
    tracker.remember([...transcript], firstStored);
    transcript.push(...toolTurn(2, 'y'.repeat(2_000)));
    tracker.remember([...transcript], laterStored);
    expect(compactTranscript(transcript, 3_000)).toBeDefined();
    expect(tracker.next(transcript, toolsNotRebuilt)).toEqual({ append: transcript, tools: { ref: 'sha256:t1' } });
  });

  it('sends everything again after forget, and after a call that stored nothing', () => {
    const tracker = new ModelContextTracker();
    const transcript: TranscriptMessage[] = [{ role: 'user', content: 'hi' }];
    tracker.remember([...transcript], firstStored);
    tracker.forget();
    expect(tracker.next(transcript, () => ({ specs: tools }))).toEqual({ append: transcript, tools: { specs: tools } });
    tracker.remember([...transcript], firstStored);
    tracker.remember([...transcript], undefined);
    expect(tracker.next(transcript, () => ({ specs: tools }))).toEqual({ append: transcript, tools: { specs: tools } });
  });

  describe('with the answer stored (the lean-history rules)', () => {
    it('sends the tool results after the answer the run put in its transcript, and says it wants the answer kept', () => {
      const tracker = new ModelContextTracker(true);
      const transcript: TranscriptMessage[] = [{ role: 'user', content: 'hi' }];
      expect(tracker.next(transcript, () => ({ specs: tools }))).toEqual({
        append: transcript,
        tools: { specs: tools },
        withAnswer: true,
      });
      tracker.remember([...transcript], firstStored);
      const [answer, result] = toolTurn(1, 'one') as [TranscriptMessage, TranscriptMessage];
      transcript.push(answer);
      tracker.answered(answer);
      transcript.push(result);
      expect(tracker.next(transcript, toolsNotRebuilt)).toEqual({ parent: 'sha256:c1', append: [result] });
    });

    it('sends the messages compaction replaced, by index, instead of the whole transcript', () => {
      const tracker = new ModelContextTracker(true);
      const transcript: TranscriptMessage[] = [{ role: 'user', content: 'read' }, ...toolTurn(1, 'x'.repeat(2_000))];
      tracker.remember([...transcript], firstStored);
      const newest = toolTurn(2, 'y'.repeat(2_000)) as [TranscriptMessage, TranscriptMessage];
      transcript.push(newest[0]);
      tracker.answered(newest[0]);
      transcript.push(newest[1]);
      expect(compactTranscript(transcript, 3_000)).toBeDefined();
      expect(tracker.next(transcript, toolsNotRebuilt)).toEqual({
        parent: 'sha256:c1',
        replace: [{ index: 2, message: transcript[2] }],
        append: [newest[1]],
      });
    });

    it('keeps no answer when nothing is stored: the next call sends everything', () => {
      const tracker = new ModelContextTracker(true);
      const transcript: TranscriptMessage[] = [{ role: 'user', content: 'hi' }];
      tracker.remember([...transcript], undefined);
      const [answer] = toolTurn(1, 'one') as [TranscriptMessage];
      transcript.push(answer);
      tracker.answered(answer);
      expect(tracker.next(transcript, () => ({ specs: tools }))).toEqual({
        append: transcript,
        tools: { specs: tools },
        withAnswer: true,
      });
    });
  });
});
