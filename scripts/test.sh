#!/usr/bin/env bash
# The test command: installs what is missing (Node 24, dependencies, Temporal CLI), then runs every suite
# against a real Temporal dev server that the test harness starts. Extra arguments go to vitest.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
relay_e_ensure_node
relay_e_ensure_dependencies
relay_e_ensure_temporal
exec npx vitest run "$@"
