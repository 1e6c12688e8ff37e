import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const root = path.join(import.meta.dirname, '../../..');
// The files the page quotes; CI type-checks and runs them.
const quotedFiles = [
  'examples/testing/refund-agent.test.ts',
  'test/unit/testing/run-tool.test.ts',
  'test/unit/notify/approval-webhook.test.ts',
];

/** Prettier re-indents an excerpt quoted from inside a function, so excerpts compare without leading spaces. */
function dedent(text: string): string {
  return text.replace(/^[ \t]+/gm, '');
}

describe('docs/testing.md', () => {
  it('quotes only code that CI compiles and runs, word for word (indentation aside)', async () => {
    const page = await readFile(path.join(root, 'docs/testing.md'), 'utf8');
    const sources = await Promise.all(
      quotedFiles.map(async (file) => dedent(await readFile(path.join(root, file), 'utf8'))),
    );
    const snippets = [...page.matchAll(/```ts\n([\s\S]*?)```/g)].map((match) => dedent(match[1] ?? ''));
    expect(snippets.length).toBeGreaterThanOrEqual(2);
    for (const snippet of snippets) expect(sources.some((source) => source.includes(snippet))).toBe(true);
  });

  it('shows the whole example test file', async () => {
    const page = await readFile(path.join(root, 'docs/testing.md'), 'utf8');
    const example = await readFile(path.join(root, quotedFiles[0] ?? ''), 'utf8');
    expect(page).toContain(`\`\`\`ts\n${example}\`\`\``);
  });
});
