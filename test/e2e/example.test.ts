import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';

const root = join(import.meta.dirname, '../..');

it('runs the README example end to end: the approved, edited transfer is the one executed', async () => {
  const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'examples/approval-flow.ts'], {
    cwd: root,
    timeout: 120_000,
  });
  expect(stdout).toContain('#7 tool_awaiting_approval transfer_funds');
  expect(stdout).toContain('#11 run_completed');
  expect(stdout).toContain('Done: the transfer went through. (3 steps, stop reason final_answer)');
  expect(stdout).toContain('Balances now: {"ACC-1":3981.55,"ACC-2":370}');
}, 150_000);
