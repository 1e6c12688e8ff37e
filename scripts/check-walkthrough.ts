/**
 * Runs every shell block of a walkthrough section as written against `npm start` in a fresh copy of the working
 * tree (see scripts/lib/walkthrough-runner.ts) and exits 1 at the first command that fails.
 *
 *   npm run check:walkthrough [-- FILE.md "Section heading"]     (default: README.md "Five-minute tour")
 */
import path from 'node:path';
import { runWalkthrough } from './lib/walkthrough-runner.js';

const [file = 'README.md', section = 'Five-minute tour'] = process.argv.slice(2);
const steps = await runWalkthrough({
  root: path.join(import.meta.dirname, '..'),
  file,
  section,
  onStep: (step) => {
    console.log(`\n${step.at} $ ${step.command}`);
    if (step.stdout) console.log(step.stdout.trimEnd());
    if (step.stderr) console.log(step.stderr.trimEnd());
    console.log(step.stopped ? '(a stream: followed for a while, then stopped)' : `(exit ${step.exitCode})`);
  },
});
const failed = steps.find((step) => step.exitCode !== 0);
console.log(
  failed ? `\nFAILED at ${failed.at}` : `\n${steps.length} command(s) of ${file} "${section}" ran as written`,
);
process.exitCode = failed ? 1 : 0;
