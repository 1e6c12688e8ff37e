import path from 'node:path';
import { expect, it } from 'vitest';
import { runWalkthrough } from '../../scripts/lib/walkthrough-runner.js';
import { withDefaultPorts } from '../helpers/default-ports-lock.js';

const root = path.join(import.meta.dirname, '../..');

it('runs every shell block of a tour as written against npm start, taking $RUN and the call id from the answers', async () => {
  const tour = { root, file: 'test/fixtures/walkthrough/tour.md', section: 'Five-minute tour' };
  const steps = await withDefaultPorts(() => runWalkthrough(tour));
  const failed = steps.find((step) => step.exitCode !== 0);
  expect(failed, failed && `${failed.at} $ ${failed.command}\n${failed.stdout}\n${failed.stderr}`).toBeUndefined();
  expect(steps.map((step) => step.at)).toEqual(
    [14, 15, 17, 18, 24, 26, 27, 33].map((line) => `test/fixtures/walkthrough/tour.md:${line}`),
  );
  expect(steps[2]?.stdout).toContain('event: tool_awaiting_approval');
  expect(steps[6]?.stdout).toContain('Transferred $25.00 from ACC-1 to ACC-2');
  expect(steps[7]?.stdout).toContain('edited to {"from_account":"ACC-1","to_account":"ACC-2","amount_usd":25}');
}, 420_000);
