import { describe, expect, it } from 'vitest';
import { compactTranscript } from '../../../src/shared/transcript-budget.js';
import type { TranscriptMessage } from '../../../src/shared/transcript.js';

const bytesOf = (transcript: TranscriptMessage[]) => Buffer.byteLength(JSON.stringify(transcript));

/** A prompt followed by `steps` steps, each one call whose output is `outputBytes` characters (one a failure). */
function transcriptOf(steps: number, outputBytes: number): TranscriptMessage[] {
  const transcript: TranscriptMessage[] = [{ role: 'user', content: 'read the files' }];
  for (let step = 1; step <= steps; step++) {
    const id = `call_${step}`;
    transcript.push({ role: 'assistant', content: '', toolCalls: [{ id, name: 'read_file', input: { n: step } }] });
    transcript.push({
      role: 'tool',
      toolCallId: id,
      toolName: 'read_file',
      result:
        step === 2
          ? {
              success: false,
              toolName: 'read_file',
              toolCallId: id,
              error: 'denied',
              errorType: 'validation',
              input: 'é'.repeat(outputBytes),
            }
          : { success: true, toolName: 'read_file', toolCallId: id, data: { text: 'x'.repeat(outputBytes) } },
    });
  }
  return transcript;
}

describe('compactTranscript', () => {
  it('leaves a transcript within its budget alone', () => {
    const transcript = transcriptOf(3, 1_000);
    const before = structuredClone(transcript);
    expect(compactTranscript(transcript, bytesOf(transcript))).toBeUndefined();
    expect(transcript).toEqual(before);
  });

  it('elides the oldest tool outputs first, just enough to fit, keeping every message and call', () => {
    const transcript = transcriptOf(6, 10_000);
    const bytesBefore = bytesOf(transcript);
    const compaction = compactTranscript(transcript, bytesBefore - 35_000);

    expect(compaction).toEqual({ elidedResults: 3, bytesBefore, bytesAfter: bytesOf(transcript) });
    expect(bytesOf(transcript)).toBeLessThanOrEqual(bytesBefore - 35_000);
    expect(transcript).toHaveLength(13);
    const results = transcript.flatMap((message) => (message.role === 'tool' ? [message.result] : []));
    expect(results[0]).toEqual({
      success: true,
      toolName: 'read_file',
      toolCallId: 'call_1',
      data: { elided: true, bytes: 10_011, note: expect.stringContaining('call the tool again') as string },
    });
    // A failure keeps its error and loses the echoed input (counted in UTF-8 bytes: é is two).
    expect(results[1]).toEqual({
      success: false,
      toolName: 'read_file',
      toolCallId: 'call_2',
      error: 'denied',
      errorType: 'validation',
    });
    expect(results[2]).toMatchObject({ data: { elided: true } });
    expect(results.slice(3).map((result) => (result.success ? result.data : undefined))).toEqual([
      { text: 'x'.repeat(10_000) },
      { text: 'x'.repeat(10_000) },
      { text: 'x'.repeat(10_000) },
    ]);
    expect(compactTranscript(transcript, bytesBefore - 35_000)).toBeUndefined();
  });

  it('counts a tool output kept by reference at its own size, as the model reads it, and elides it as such', () => {
    const marker = { storedOutput: `sha256:${'0'.repeat(64)}`, bytes: 50_000, preview: '{"text":"xxx' };
    const transcript: TranscriptMessage[] = [
      { role: 'user', content: 'read' },
      { role: 'assistant', content: '', toolCalls: [{ id: 'call_1', name: 'read_file', input: {} }] },
      {
        role: 'tool',
        toolCallId: 'call_1',
        toolName: 'read_file',
        result: { success: true, toolName: 'read_file', toolCallId: 'call_1', data: marker },
      },
      { role: 'assistant', content: '', toolCalls: [{ id: 'call_2', name: 'read_file', input: {} }] },
    ];
    expect(bytesOf(transcript)).toBeLessThan(1_000);
    const compaction = compactTranscript(transcript, 10_000);
    expect(compaction?.bytesBefore).toBeGreaterThan(50_000);
    expect(compaction?.bytesAfter).toBeLessThan(10_000);
    expect(transcript[2]).toMatchObject({ result: { data: { elided: true, bytes: 50_000 } } });
  });

  it('counts a model text kept by reference at its own size, and elides it to the start of its preview', () => {
    const preview = 'I will read every file. '.repeat(20);
    const storedContent = { storedText: `sha256:${'1'.repeat(64)}` as const, bytes: 50_000, preview };
    const transcript: TranscriptMessage[] = [
      { role: 'user', content: 'read' },
      { role: 'assistant', content: '', storedContent, toolCalls: [{ id: 'call_1', name: 'read_file', input: {} }] },
      {
        role: 'tool',
        toolCallId: 'call_1',
        toolName: 'read_file',
        result: { success: true, toolName: 'read_file', toolCallId: 'call_1', data: { n: 1 } },
      },
      { role: 'assistant', content: '', toolCalls: [{ id: 'call_2', name: 'read_file', input: {} }] },
    ];
    expect(bytesOf(transcript)).toBeLessThan(2_000);
    const compaction = compactTranscript(transcript, 10_000, { elideTexts: true });
    expect(compaction?.bytesBefore).toBeGreaterThan(50_000);
    expect(compaction?.bytesAfter).toBeLessThan(10_000);
    expect(compaction?.elidedTexts).toBe(1);
    expect(transcript[1]).not.toHaveProperty('storedContent');
    const elided = transcript[1];
    expect(elided?.role === 'assistant' ? elided.content : '').toMatch(/^I will read every file\./);
  });

  it('never elides the outputs of the newest step, even when the budget cannot be met', () => {
    const transcript = transcriptOf(3, 10_000);
    const compaction = compactTranscript(transcript, 1_000);
    expect(compaction?.elidedResults).toBe(2);
    expect(compaction?.bytesAfter).toBeGreaterThan(1_000);
    const last = transcript.at(-1);
    expect(last?.role === 'tool' && last.result.success && last.result.data).toEqual({ text: 'x'.repeat(10_000) });
  });
});
