import path from 'node:path';
import { expect, it } from 'vitest';
import { readWalkthroughCommands } from '../../../scripts/lib/walkthrough-runner.js';

const root = path.join(import.meta.dirname, '../../..');

it("reads a walkthrough's commands one a line, with continuations joined and comments left out, from its subsections too", () => {
  const commands = readWalkthroughCommands(root, 'test/fixtures/walkthrough/tour.md', 'five-minute tour');
  expect(commands.map((command) => command.at)).toEqual(
    [8, 14, 15, 17, 18, 24, 26, 27, 33].map((line) => `test/fixtures/walkthrough/tour.md:${line}`),
  );
  expect(commands[0]?.text).toBe('npm start');
  expect(commands[2]?.text).toMatch(/^RUN=\$\(curl .* \\\n {2}-d .*\| jq -r \.runId\)$/);
});

it('refuses a section without shell blocks, naming it', () => {
  expect(() => readWalkthroughCommands(root, 'test/fixtures/walkthrough/tour.md', 'Ten-minute tour')).toThrow(
    "test/fixtures/walkthrough/tour.md has no shell block under a heading 'Ten-minute tour'",
  );
});
