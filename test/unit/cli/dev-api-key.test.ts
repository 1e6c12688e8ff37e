import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { readDevApiKeys } from '../../../src/cli/dev-command.js';

let directory: string;
const keyFile = () => path.join(directory, 'dev-api-key');
// RELAY_E_API_KEYS would be used instead of the key file.
const keysFromEnv = process.env['RELAY_E_API_KEYS'];

beforeEach(async () => {
  directory = await mkdtemp(path.join(tmpdir(), 'relay-dev-key-'));
  delete process.env['RELAY_E_API_KEYS'];
});

afterEach(async () => {
  if (keysFromEnv !== undefined) process.env['RELAY_E_API_KEYS'] = keysFromEnv;
  await rm(directory, { recursive: true, force: true });
});

it('generates the dev key once and reads the same key on the next start', async () => {
  const first = await readDevApiKeys('demo', directory);
  expect(first.shownKey).toMatch(/^rk_dev_/);
  expect((await readFile(keyFile(), 'utf8')).trim()).toBe(first.shownKey);
  expect((await readDevApiKeys('demo', directory)).shownKey).toBe(first.shownKey);
});

it('never takes an empty key file for the empty key', async () => {
  await writeFile(keyFile(), '\n');
  const { shownKey, apiKeys } = await readDevApiKeys('demo', directory);
  expect(shownKey).toMatch(/^rk_dev_.{20,}/);
  expect(apiKeys.has('')).toBe(false);
});

it('reports a key file it cannot read instead of replacing it', async () => {
  await mkdir(keyFile());
  await expect(readDevApiKeys('demo', directory)).rejects.toMatchObject({ code: 'EISDIR' });
});

it('refuses a key file whose key the API would refuse, naming the file instead of the key', async () => {
  await writeFile(keyFile(), 'short-key\n');
  const refusal = readDevApiKeys('demo', directory);
  await expect(refusal).rejects.toMatchObject({ exitCode: 2 });
  await expect(refusal).rejects.toThrow(`${keyFile()} holds no usable API key (Expected 16 to 512 characters`);
  await expect(refusal).rejects.not.toThrow('short-key (');
});
