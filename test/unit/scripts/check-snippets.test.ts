import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkSnippets, entryPointPaths } from '../../../scripts/lib/check-snippets.js';

const root = path.join(import.meta.dirname, '../../..');

describe('the snippet check', () => {
  it('maps every public entry point of package.json to its source', () => {
    expect(entryPointPaths(root)).toMatchObject({
      '@relay-e/engine': [path.join(root, 'src/index.ts')],
      '@relay-e/engine/tool': [path.join(root, 'src/tool/index.ts')],
      '@relay-e/engine/testing': [path.join(root, 'src/testing/index.ts')],
    });
  });

  it('passes blocks that compile, match the file they include, or say why they are skipped', () => {
    expect(checkSnippets(root, ['test/fixtures/snippets/good.md'])).toEqual({
      compiled: 1,
      included: 1,
      skipped: 1,
      problems: [],
    });
  }, 60_000);

  it('reports, at the Markdown line, a type error, a stale inclusion, a missing or unchecked file and a skip without reason', () => {
    const { problems } = checkSnippets(root, ['test/fixtures/snippets/bad.md']);
    expect(problems.map((problem) => `${problem.file}:${problem.line}`)).toEqual(
      [6, 13, 20, 26, 32].map((line) => `test/fixtures/snippets/bad.md:${line}`),
    );
    expect(problems.map((problem) => problem.message)).toEqual([
      "Cannot find name 'bank'.",
      `differs from test/fixtures/snippets/add-tool.ts#define: the file has "  name: 'add',", the block "  name: 'sum',"; paste the file's text`,
      'examples/no-such-file.ts: no such file',
      'README.md is not compiled by tsconfig.json, so nothing checks it; move it under examples/',
      'snippet-skip needs a reason (a few words saying why this block cannot compile)',
    ]);
  }, 60_000);
});
