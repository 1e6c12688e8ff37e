import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readTemporalSettings } from '../../../src/cli/temporal-settings.js';

let directory: string;
let configFile: string;

beforeAll(async () => {
  directory = await mkdtemp(path.join(tmpdir(), 'relay-e-envconfig-'));
  configFile = path.join(directory, 'temporal.toml');
  await writeFile(
    configFile,
    [
      '[profile.default]',
      'address = "default.example:7233"',
      'namespace = "from-default-profile"',
      '[profile.cloud]',
      'address = "cloud.example:7233"',
      'namespace = "from-cloud-profile"',
      'api_key = "profile-key"',
    ].join('\n'),
  );
});

afterAll(async () => {
  await rm(directory, { recursive: true, force: true });
});

describe('readTemporalSettings', () => {
  it('reads the default profile of the Temporal config file, as the Temporal CLI does', async () => {
    const settings = await readTemporalSettings({}, { TEMPORAL_CONFIG_FILE: configFile });

    expect(settings).toMatchObject({ address: 'default.example:7233', namespace: 'from-default-profile' });
    expect(settings.apiKey).toBeUndefined();
  });

  it('takes the profile --profile names, with its API key and TLS on', async () => {
    const settings = await readTemporalSettings({ profile: 'cloud' }, { TEMPORAL_CONFIG_FILE: configFile });

    expect(settings).toMatchObject({ address: 'cloud.example:7233', apiKey: 'profile-key', tls: true });
  });

  it('lets TEMPORAL_* variables override the profile, and flags override both', async () => {
    const env = { TEMPORAL_CONFIG_FILE: configFile, TEMPORAL_ADDRESS: 'env.example:7233', TEMPORAL_NAMESPACE: 'env' };

    expect(await readTemporalSettings({}, env)).toMatchObject({ address: 'env.example:7233', namespace: 'env' });
    expect(await readTemporalSettings({ address: 'flag.example:7233', namespace: 'flag' }, env)).toMatchObject({
      address: 'flag.example:7233',
      namespace: 'flag',
    });
  });

  it('takes the task queue from the project config below the flag and RELAY_E_TASK_QUEUE', async () => {
    const config = { taskQueue: 'from-config' };
    const env = { TEMPORAL_CONFIG_FILE: configFile };

    expect((await readTemporalSettings({}, env, config)).taskQueue).toBe('from-config');
    expect((await readTemporalSettings({}, { ...env, RELAY_E_TASK_QUEUE: 'from-env' }, config)).taskQueue).toBe(
      'from-env',
    );
    expect((await readTemporalSettings({ 'task-queue': 'from-flag' }, env, config)).taskQueue).toBe('from-flag');
  });

  it('takes an empty RELAY_E_TENANT or RELAY_E_TASK_QUEUE for unset, as a shell means VAR=', async () => {
    const settings = await readTemporalSettings(
      {},
      { TEMPORAL_CONFIG_FILE: configFile, RELAY_E_TENANT: '', RELAY_E_TASK_QUEUE: '' },
    );

    // A tenant '' would narrow listings to no run and refuse every run by id.
    expect(settings).toMatchObject({ tenantId: 'demo', tenantGiven: false, taskQueue: 'relay-e' });
  });

  it('takes an empty TEMPORAL_* variable for unset too, so TEMPORAL_API_KEY= does not turn TLS on', async () => {
    const settings = await readTemporalSettings(
      {},
      { TEMPORAL_CONFIG_FILE: configFile, TEMPORAL_ADDRESS: '', TEMPORAL_NAMESPACE: '', TEMPORAL_API_KEY: '' },
    );

    expect(settings).toMatchObject({ address: 'default.example:7233', namespace: 'from-default-profile' });
    expect(settings.apiKey).toBeUndefined();
    expect(settings.tls).toBeUndefined();
  });

  it('refuses a profile the file does not have, naming it', async () => {
    await expect(readTemporalSettings({ profile: 'staging' }, { TEMPORAL_CONFIG_FILE: configFile })).rejects.toThrow(
      "Profile 'staging' not found",
    );
  });
});
