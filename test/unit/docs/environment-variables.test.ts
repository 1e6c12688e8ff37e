import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const repository = path.join(import.meta.dirname, '..', '..', '..');

/** The variables the source names: Relay-E's own, the model providers' and the Temporal executables'. */
function variablesInSource(): string[] {
  const names = new Set<string>();
  const files = readdirSync(path.join(repository, 'src'), { recursive: true, encoding: 'utf8' });
  for (const file of files.filter((name) => name.endsWith('.ts'))) {
    const text = readFileSync(path.join(repository, 'src', file), 'utf8');
    // A process warning's code (`code: 'RELAY_E_…'`) names no variable.
    const found = text.matchAll(
      /(?<!code: ')\b(?:RELAY_E|OPENAI|ANTHROPIC|TEMPORAL_(?:CLI|TEST_SERVER))_[A-Z_]*[A-Z]\b/g,
    );
    for (const [name] of found) names.add(name);
  }
  // The source's example of `RELAY_E_SECRET_<NAME>`.
  names.delete('RELAY_E_SECRET_NAME');
  return [...names].sort();
}

/**
 * The names the section documents, a suffix written after a name (`RELAY_E_APPROVAL_WEBHOOK_URL`, `_SECRET`) read as
 * that name with its last part replaced.
 */
function variablesDocumented(section: string): Set<string> {
  const documented = new Set<string>();
  let previous = '';
  for (const [, name] of section.matchAll(/`(_?[A-Z][A-Z_]*(?:<NAME>)?)`/g)) {
    const full = name!.startsWith('_') ? previous.replace(/_[A-Z]+$/, name!) : name!;
    documented.add(full.replace('<NAME>', ''));
    previous = full;
  }
  return documented;
}

describe('docs/configuration.md', () => {
  it('lists every environment variable the source reads', () => {
    const text = readFileSync(path.join(repository, 'docs', 'configuration.md'), 'utf8');
    const section = /## Environment variables\n([\s\S]*?)\n## /.exec(text)?.[1] ?? '';
    const documented = variablesDocumented(section);
    const variables = variablesInSource();
    expect(variables.length).toBeGreaterThan(20);
    expect(variables.filter((name) => !documented.has(name) && !documented.has(name.replace(/[A-Z]+$/, '')))).toEqual(
      [],
    );
  });
});
