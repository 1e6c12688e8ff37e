import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { describe, expect, it } from 'vitest';

const script = join(import.meta.dirname, '../fixtures/mcp/call-through-ctrl-c.ts');

describe('a terminal Ctrl-C while a call to a stdio MCP server is in flight', () => {
  it('reaches the worker, not its server, so the call the worker waits for still answers', async () => {
    // Its own process group, as a terminal gives the command in its foreground.
    const worker = spawn(process.execPath, ['--import', 'tsx', script], {
      detached: true,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const lines = createInterface({ input: worker.stdout })[Symbol.asyncIterator]();
    try {
      expect((await lines.next()).value).toBe('calling');
      // What Ctrl-C does: SIGINT to every process of the foreground group.
      process.kill(-(worker.pid ?? 0), 'SIGINT');
      const outcome = JSON.parse(String((await lines.next()).value)) as unknown;
      expect(outcome).toEqual({ answered: [{ type: 'text', text: 'counted to 15' }] });
      await once(worker, 'close');
    } finally {
      worker.kill('SIGKILL');
    }
  });
});
