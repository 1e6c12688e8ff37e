#!/usr/bin/env bash
# The test command: installs what is missing (Node 24, dependencies, Temporal CLI, the time-skipping test server,
# Chromium, PostgreSQL), then runs every suite against a real Temporal dev server that the test harness starts. Extra
# arguments go to vitest.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
relay_e_ensure_node
relay_e_ensure_dependencies
relay_e_ensure_temporal
# Without Java the time-skipping suites fail and say what to install; everything else still runs.
relay_e_ensure_test_server || echo "relay-e: continuing without the time-skipping test server" >&2
# The same for Chromium (Debian's, installed with apt-get) and the browser suites.
relay_e_ensure_chromium || echo "relay-e: continuing without Chromium" >&2
# And for PostgreSQL (found, or installed with apt-get as root), which the PostgreSQL payload-store test starts.
relay_e_ensure_postgres || echo "relay-e: continuing without PostgreSQL" >&2
exec npx vitest run "$@"
