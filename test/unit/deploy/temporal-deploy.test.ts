import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { relaySearchAttributeDefinitions } from '../../../src/shared/search-attributes.js';

const repository = path.join(import.meta.dirname, '..', '..', '..');
const read = (file: string) => readFileSync(path.join(repository, file), 'utf8');

describe('deploy/temporal', () => {
  it("registers exactly the search attributes Relay-E's runs set, with their types", () => {
    const listed = /^search_attributes="([^"]*)"$/m.exec(read('deploy/temporal/setup-namespace.sh'))?.[1];
    expect(listed?.split(' ')).toEqual(relaySearchAttributeDefinitions.map(({ name, type }) => `${name}=${type}`));
  });

  it('is the configuration, scripts and server version docker-compose.yml runs', () => {
    const compose = read('docker-compose.yml');
    const serverVersion = /relay_e_temporal_server_version="v([\d.]+)"/.exec(read('scripts/env.sh'))?.[1];
    expect(serverVersion).toBeDefined();
    expect(compose).toContain(`temporalio/server:\${TEMPORAL_VERSION:-${serverVersion}}`);
    expect(compose).toContain(`temporalio/admin-tools:\${TEMPORAL_ADMINTOOLS_VERSION:-${serverVersion}-`);
    expect(compose).toContain('./deploy/temporal:/etc/relay-e/temporal:ro');
    expect(compose).toContain('--root /etc/relay-e --config temporal --env relay-e');
    expect(compose).toContain("entrypoint: ['sh', '/etc/relay-e/temporal/setup-schema.sh']");
    expect(compose).toContain("entrypoint: ['sh', '/etc/relay-e/temporal/setup-namespace.sh']");
  });
});
