/**
 * Checks every TypeScript block of README.md and docs/**\/*.md (see scripts/lib/check-snippets.ts for the markers)
 * and exits 1 when one does not compile, differs from the file it includes, or is skipped without a reason.
 *
 *   npm run check:snippets [-- FILE.md …]
 */
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { checkSnippets } from './lib/check-snippets.js';

const root = path.join(import.meta.dirname, '..');
const given = process.argv.slice(2);
const files = given.length > 0 ? given : ['README.md', ...markdownUnder('docs')];
const report = checkSnippets(root, files);
for (const problem of report.problems) console.error(`${problem.file}:${problem.line}: ${problem.message}`);
console.log(
  `${files.length} Markdown file(s): ${report.compiled} TypeScript block(s) compiled, ${report.included} included ` +
    `from files, ${report.skipped} skipped with a reason; ${report.problems.length} problem(s)`,
);
process.exitCode = report.problems.length > 0 ? 1 : 0;

function markdownUnder(folder: string): string[] {
  if (!existsSync(path.join(root, folder))) return [];
  return readdirSync(path.join(root, folder), { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.md'))
    .map((file) => path.join(folder, file))
    .sort();
}
