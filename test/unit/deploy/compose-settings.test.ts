import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const repository = path.join(import.meta.dirname, '..', '..', '..');
const read = (file: string) => readFileSync(path.join(repository, file), 'utf8');

/** The variable names in a docker-compose.yml service's `environment:` block. */
function environmentOf(service: string): string[] {
  const block = new RegExp(`^  ${service}:\\n([\\s\\S]*?)(?=^  \\S|^\\S)`, 'm').exec(read('docker-compose.yml'))?.[1];
  const environment = /^ {4}environment:\n((?: {6}.*\n)+)/m.exec(block ?? '')?.[1] ?? '';
  return [...environment.matchAll(/^ {6}([A-Z_]+):/gm)].map((match) => match[1]!);
}

describe('docker-compose.yml', () => {
  it('passes the API the settings relay-e serve reads, the inbox’s public address among them', () => {
    expect(environmentOf('relay-e-api')).toEqual(
      expect.arrayContaining([
        'TEMPORAL_ADDRESS',
        'TEMPORAL_NAMESPACE',
        'RELAY_E_API_KEYS',
        'RELAY_E_TASK_QUEUE',
        'RELAY_E_ENCRYPTION_KEYS',
        'RELAY_E_ENCRYPTION_KEY_ID',
        'RELAY_E_INBOX_URL',
      ]),
    );
  });

  it('passes the worker its task queue, model providers, key rotation and notices’ settings', () => {
    expect(environmentOf('relay-e-worker')).toEqual(
      expect.arrayContaining([
        'RELAY_E_TASK_QUEUE',
        'OPENAI_API_KEY',
        'ANTHROPIC_API_KEY',
        'RELAY_E_COMPATIBLE_BASE_URL',
        'RELAY_E_COMPATIBLE_API_KEY',
        'RELAY_E_COMPATIBLE_NAME',
        'RELAY_E_ENCRYPTION_KEYS',
        'RELAY_E_ENCRYPTION_KEY_ID',
        'RELAY_E_APPROVAL_WEBHOOK_URL',
        'RELAY_E_INBOX_URL',
      ]),
    );
  });

  it('keeps the .env file Compose reads (API keys, model keys) out of the image', () => {
    const ignored = read('.dockerignore').split('\n');
    expect(ignored).toEqual(expect.arrayContaining(['.env', '.env.*']));
  });
});
