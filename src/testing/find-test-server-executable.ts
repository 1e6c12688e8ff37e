import os from 'node:os';
import path from 'node:path';
import { isExecutable } from '../dev/temporal-dev-server.js';

/** The version `relay_e_ensure_test_server` (scripts/env.sh) caches; the two must name the same. */
const testServerVersion = '1.38.0';

/** Thrown when a test environment cannot start because something it runs on is missing. */
export class TestEnvironmentError extends Error {
  override readonly name = 'TestEnvironmentError';
}

/**
 * Finds the executable of Temporal's time-skipping test server: `TEMPORAL_TEST_SERVER_PATH`, else the wrapper that
 * `relay_e_ensure_test_server` caches under `$RELAY_E_CACHE_DIR` (default `~/.cache/relay-e`). Throws a
 * {@link TestEnvironmentError} that says what to install when there is neither.
 */
export async function findTestServerExecutable(environment: NodeJS.ProcessEnv = process.env): Promise<string> {
  const explicit = environment['TEMPORAL_TEST_SERVER_PATH'];
  if (explicit !== undefined && explicit !== '') {
    if (await isExecutable(explicit)) return explicit;
    throw new TestEnvironmentError(`TEMPORAL_TEST_SERVER_PATH is ${explicit}, which is not an executable file.`);
  }
  const cached = cachedTestServerPath(environment);
  if (await isExecutable(cached)) return cached;
  throw new TestEnvironmentError(
    `Time skipping needs Temporal's test server, and there is none: TEMPORAL_TEST_SERVER_PATH is unset and ${cached} ` +
      'does not exist. It runs on Java 17 or newer and is fetched with Maven: install both (Debian/Ubuntu: ' +
      '`apt-get install default-jdk-headless maven`), then run `. scripts/env.sh && relay_e_ensure_test_server` in ' +
      "the Relay-E repository. Elsewhere, pass `serverExecutable: { type: 'cached-download' }` to let " +
      "@temporalio/testing download it, or test with mode 'local', which needs neither.",
  );
}

/** Where `relay_e_ensure_test_server` writes the wrapper that starts the test server. */
export function cachedTestServerPath(environment: NodeJS.ProcessEnv = process.env): string {
  const cacheHome = environment['XDG_CACHE_HOME'] || path.join(os.homedir(), '.cache');
  const cacheDirectory = environment['RELAY_E_CACHE_DIR'] || path.join(cacheHome, 'relay-e');
  return path.join(cacheDirectory, `temporal-test-server-${testServerVersion}`, 'temporal-test-server');
}
