/* global process, console */
// Reads `docker compose config --format json` and checks that the Relay-E services build from the expected project:
// the context is that folder, it holds package.json and a relay-e.config file, and the Dockerfile exists.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

const [resolvedFile, project] = process.argv.slice(2);
const { services } = JSON.parse(readFileSync(resolvedFile, 'utf8'));
const configNames = ['relay-e.config.ts', 'relay-e.config.mts', 'relay-e.config.js', 'relay-e.config.mjs'];
const problems = [];
for (const name of ['relay-e-worker', 'relay-e-api']) {
  const build = services[name]?.build;
  if (!build) {
    problems.push(`${name} has no build section`);
    continue;
  }
  const dockerfile = path.resolve(build.context, build.dockerfile ?? 'Dockerfile');
  if (build.context !== project) problems.push(`${name} builds from ${build.context}, not ${project}`);
  if (!existsSync(path.join(build.context, 'package.json'))) problems.push(`${name}: no package.json in the context`);
  if (!configNames.some((file) => existsSync(path.join(build.context, file)))) {
    problems.push(`${name}: no relay-e.config file in the context`);
  }
  if (!existsSync(dockerfile)) problems.push(`${name}: Dockerfile ${dockerfile} does not exist`);
}
if (problems.length > 0) {
  console.error(`docker-compose.yml with a user project:\n  ${problems.join('\n  ')}`);
  process.exit(1);
}
console.log(`docker-compose.yml: the worker and the API build from ${project} and its relay-e.config`);
