import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import ts from 'typescript';
import { readMarkdownBlocks } from './markdown-blocks.js';
import type { MarkdownBlock } from './markdown-blocks.js';

/** Languages whose blocks are type-checked. */
const typeScriptLanguages = new Set(['ts', 'typescript']);

/** A block that is the text of a file (`<!-- snippet: examples/x.ts -->`) or of a region in it (`…/x.ts#name`). */
export const includeMarker = 'snippet';
/** A block left unchecked, with the reason (`<!-- snippet-skip: pseudo-code of the options -->`). */
export const skipMarker = 'snippet-skip';

/** Something wrong with one snippet, at a line of its Markdown file. */
export interface SnippetProblem {
  file: string;
  line: number;
  message: string;
}

/** What {@link checkSnippets} found. */
export interface SnippetReport {
  compiled: number;
  included: number;
  skipped: number;
  problems: SnippetProblem[];
}

/**
 * Checks every TypeScript block of the Markdown files: a block marked as included must match its file (which the
 * project's tsconfig must compile), a skipped block must say why, and every other block is type-checked as a module
 * of its own against the package's public entry points, mapped to the sources (`@relay-e/engine/tool` →
 * src/tool/index.ts).
 */
export function checkSnippets(root: string, markdownFiles: readonly string[]): SnippetReport {
  const blocks = markdownFiles.flatMap((file) =>
    readMarkdownBlocks(file, readFileSync(path.join(root, file), 'utf8')).filter((block) =>
      typeScriptLanguages.has(block.language),
    ),
  );
  const problems: SnippetProblem[] = [];
  const toCompile: MarkdownBlock[] = [];
  let included = 0;
  let skipped = 0;
  const compiledByProject = projectFiles(root);
  for (const block of blocks) {
    if (block.marker?.name === includeMarker) {
      included++;
      problems.push(...checkInclusion(root, block, block.marker.value, compiledByProject));
    } else if (block.marker?.name === skipMarker) {
      skipped++;
      if (block.marker.value.split(/\s+/).filter(Boolean).length < 2) {
        problems.push(at(block, `${skipMarker} needs a reason (a few words saying why this block cannot compile)`));
      }
    } else {
      toCompile.push(block);
    }
  }
  problems.push(...typeCheck(root, toCompile));
  problems.sort((a, b) => a.file.localeCompare(b.file) || a.line - b.line);
  return { compiled: toCompile.length, included, skipped, problems };
}

function at(block: MarkdownBlock, message: string, lineInBlock = 0): SnippetProblem {
  return { file: block.file, line: block.line + lineInBlock, message };
}

/** The files the project's tsconfig.json compiles (so `npx tsc` checks an included file). */
function projectFiles(root: string): Set<string> {
  const config = ts.getParsedCommandLineOfConfigFile(path.join(root, 'tsconfig.json'), {}, parseHost());
  return new Set((config?.fileNames ?? []).map((file) => path.resolve(file)));
}

function parseHost(): ts.ParseConfigFileHost {
  return {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: (diagnostic) => {
      throw new Error(ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'));
    },
  };
}

function checkInclusion(
  root: string,
  block: MarkdownBlock,
  reference: string,
  compiledByProject: ReadonlySet<string>,
): SnippetProblem[] {
  const [relativeFile = '', region] = reference.split('#');
  const file = path.resolve(root, relativeFile);
  if (!existsSync(file)) return [at(block, `${reference}: no such file`)];
  if (!compiledByProject.has(file)) {
    return [
      at(block, `${relativeFile} is not compiled by tsconfig.json, so nothing checks it; move it under examples/`),
    ];
  }
  const text = readFileSync(file, 'utf8');
  const expected = region === undefined ? text : regionOf(text, region);
  if (expected === undefined) return [at(block, `${relativeFile} has no region '${region}' (// #region ${region})`)];
  const want = normalize(expected);
  const got = normalize(block.code);
  if (want.join('\n') === got.join('\n')) return [];
  const differs = got.findIndex((line, index) => line !== want[index]);
  const index = differs < 0 ? Math.min(got.length, want.length) : differs;
  return [
    at(
      block,
      `differs from ${reference}: the file has ${JSON.stringify(want[index] ?? '(end)')}, the block ` +
        `${JSON.stringify(got[index] ?? '(end)')}; paste the file's text`,
      index,
    ),
  ];
}

/** The lines between `// #region name` and `// #endregion name`. */
function regionOf(text: string, name: string): string | undefined {
  const lines = text.split('\n');
  const start = lines.findIndex((line) => line.trim() === `// #region ${name}`);
  const end = lines.findIndex((line, index) => index > start && line.trim() === `// #endregion ${name}`);
  return start < 0 || end < 0 ? undefined : lines.slice(start + 1, end).join('\n');
}

/** Lines without trailing spaces, a shared indentation or blank lines at either end. */
function normalize(text: string): string[] {
  const lines = text.split('\n').map((line) => line.trimEnd());
  while (lines[0] === '') lines.shift();
  while (lines.at(-1) === '') lines.pop();
  const indent = Math.min(...lines.filter((line) => line !== '').map((line) => line.length - line.trimStart().length));
  return lines.map((line) => line.slice(Number.isFinite(indent) ? indent : 0));
}

/** `@relay-e/engine` and its subpaths as package.json exports them, mapped to their sources. */
export function entryPointPaths(root: string): Record<string, string[]> {
  const manifest = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as {
    name: string;
    exports: Record<string, { types?: string } | string>;
  };
  const paths: Record<string, string[]> = {};
  for (const [subpath, target] of Object.entries(manifest.exports)) {
    const types = typeof target === 'string' ? undefined : target.types;
    if (types === undefined) continue;
    const source = types.replace(/^\.\/dist\//, '').replace(/\.d\.ts$/, '.ts');
    paths[path.posix.join(manifest.name, subpath)] = [path.join(root, source)];
  }
  return paths;
}

/** Type-checks each block as a module of its own, in a scratch folder that sees the project's node_modules. */
function typeCheck(root: string, blocks: readonly MarkdownBlock[]): SnippetProblem[] {
  if (blocks.length === 0) return [];
  const scratch = mkdtempSync(path.join(tmpdir(), 'relay-e-snippets-'));
  try {
    symlinkSync(path.join(root, 'node_modules'), path.join(scratch, 'node_modules'));
    writeFileSync(path.join(scratch, 'package.json'), '{ "type": "module" }\n');
    const fileOf = new Map<string, MarkdownBlock>();
    for (const block of blocks) {
      const name = `${block.file.replace(/[^a-zA-Z0-9]+/g, '-')}-line-${block.line}.ts`;
      const file = path.join(scratch, 'snippets', name);
      mkdirSync(path.dirname(file), { recursive: true });
      // `export {}` makes a block without imports a module too, as isolatedModules requires.
      writeFileSync(file, `${block.code}\nexport {};\n`);
      fileOf.set(path.resolve(file), block);
    }
    const config = ts.getParsedCommandLineOfConfigFile(path.join(root, 'tsconfig.json'), {}, parseHost());
    if (!config) throw new Error('tsconfig.json could not be read');
    const { rootDir: _rootDir, outDir: _outDir, ...options } = config.options;
    const program = ts.createProgram([...fileOf.keys()], {
      ...options,
      noEmit: true,
      paths: entryPointPaths(root),
    });
    return ts
      .getPreEmitDiagnostics(program)
      .filter((diagnostic) => diagnostic.file !== undefined && fileOf.has(path.resolve(diagnostic.file.fileName)))
      .map((diagnostic) => {
        const source = diagnostic.file as ts.SourceFile;
        const block = fileOf.get(path.resolve(source.fileName)) as MarkdownBlock;
        const { line } = source.getLineAndCharacterOfPosition(diagnostic.start ?? 0);
        return at(block, ts.flattenDiagnosticMessageText(diagnostic.messageText, ' '), line);
      });
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}
