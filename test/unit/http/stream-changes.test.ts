import { Hono } from 'hono';
import { describe, expect, it, vi } from 'vitest';
import { streamChanges } from '../../../src/http/inbox/stream-changes.js';
import { readStreamUntil } from '../../helpers/read-stream.js';

function appStreaming(read: () => Promise<string | undefined>, logger: Pick<Console, 'error'>): Hono {
  const app = new Hono();
  app.get('/changes', (c) => streamChanges(c, { intervalMs: 5, eventName: 'approvals', read, logger }));
  return app;
}

describe('streamChanges', () => {
  it('sends what is new as named events and an idle comment when nothing changed', async () => {
    const answers = ['{"n":1}', undefined, '{"n":2}'];
    const logger = { error: vi.fn() };
    const response = await appStreaming(async () => answers.shift(), logger).request('/changes');
    expect(response.headers.get('content-type')).toContain('text/event-stream');
    const reader = response.body!.getReader();
    const text = await readStreamUntil(reader, /n":2/);
    await reader.cancel();
    expect(text).toBe('event: approvals\ndata: {"n":1}\n\n: idle\n\nevent: approvals\ndata: {"n":2}\n\n');
    expect(logger.error).not.toHaveBeenCalled();
  });

  it('answers HEAD with the stream’s headers and reads nothing', async () => {
    // Each read answers with its number, counted over every stream of the app.
    let reads = 0;
    const app = appStreaming(async () => JSON.stringify({ n: ++reads }), { error: vi.fn() });
    const response = await app.request('/changes', { method: 'HEAD' });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('text/event-stream');
    expect(response.body).toBeNull();
    // Hono drops a HEAD's body without cancelling it: a stream started for one would read on forever. A GET after
    // it anchors the count: a stream the HEAD started would have read first (at once, or on its earlier timer of the
    // same interval), so the GET's first event would carry read 2.
    const reader = (await app.request('/changes')).body!.getReader();
    const text = await readStreamUntil(reader, /\n\n/);
    await reader.cancel();
    expect(text).toBe('event: approvals\ndata: {"n":1}\n\n');
  });

  it('ends quietly when the caller leaves while a read is under way', async () => {
    const unhandled = vi.fn();
    process.on('unhandledRejection', unhandled);
    try {
      let finishRead: (value: string) => void = () => undefined;
      let reads = 0;
      const read = () => {
        reads += 1;
        return reads === 1
          ? Promise.resolve('{"first":true}')
          : new Promise<string>((resolve) => (finishRead = resolve));
      };
      const logger = { error: vi.fn() };
      const reader = (await appStreaming(read, logger).request('/changes')).body!.getReader();
      await readStreamUntil(reader, /first/);
      await vi.waitFor(() => expect(reads).toBe(2));
      await reader.cancel();
      finishRead('{"late":true}');
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(reads).toBe(2);
      expect(unhandled).not.toHaveBeenCalled();
      expect(logger.error).not.toHaveBeenCalled();
    } finally {
      process.off('unhandledRejection', unhandled);
    }
  });

  it('tells the page its list may be out of date while reads fail, and that it is current once one succeeds', async () => {
    const answers: Array<string | Error | undefined> = ['{"n":1}', new Error('visibility is down'), undefined];
    const read = async () => {
      const answer = answers.shift();
      if (answer instanceof Error) throw answer;
      return answer;
    };
    const reader = (await appStreaming(read, { error: vi.fn() }).request('/changes')).body!.getReader();
    const text = await readStreamUntil(reader, /event: current/);
    await reader.cancel();
    // Nothing changed since the failure, so no new list is sent: the page keeps its list and drops the warning.
    expect(text).toBe('event: approvals\ndata: {"n":1}\n\nevent: stale\ndata: \n\nevent: current\ndata: \n\n');
  });

  it('logs a failed read and keeps the stream open for the next one', async () => {
    const logger = { error: vi.fn() };
    let reads = 0;
    const read = async () => {
      reads += 1;
      if (reads === 1) throw new Error('Temporal is unreachable');
      return '{"back":true}';
    };
    const reader = (await appStreaming(read, logger).request('/changes')).body!.getReader();
    const text = await readStreamUntil(reader, /back/);
    await reader.cancel();
    expect(text).toBe('event: stale\ndata: \n\nevent: approvals\ndata: {"back":true}\n\n');
    expect(logger.error).toHaveBeenCalledWith(
      'Relay-E: reading the approvals stream failed; trying again',
      expect.objectContaining({ message: 'Temporal is unreachable' }),
    );
  });
});
