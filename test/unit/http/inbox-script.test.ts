import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const script = path.join(import.meta.dirname, '../../../src/http/inbox/assets/inbox.js');

describe('the inbox script', () => {
  it('type-checks strictly against the browser DOM, as the page runs it', () => {
    const program = ts.createProgram([script], {
      allowJs: true,
      checkJs: true,
      noEmit: true,
      strict: true,
      target: ts.ScriptTarget.ES2023,
      module: ts.ModuleKind.ESNext,
      lib: ['lib.es2023.d.ts', 'lib.dom.d.ts', 'lib.dom.iterable.d.ts'],
      types: [],
    });
    const problems = ts.getPreEmitDiagnostics(program).map((diagnostic) => {
      const where = diagnostic.file?.getLineAndCharacterOfPosition(diagnostic.start ?? 0);
      return `${where ? `line ${where.line + 1}: ` : ''}${ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n')}`;
    });
    expect(problems).toEqual([]);
    // Type-checking the DOM library takes seconds on a loaded machine.
  }, 60_000);
});
