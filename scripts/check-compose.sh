#!/usr/bin/env bash
# Checks docker-compose.yml with the real Compose parser, without a Docker engine: builds `docker compose`
# from its Go module once (cached outside the repo; a few minutes) and runs `config`, which validates the file
# against the Compose specification and resolves every variable. It checks two setups: this repository (the demo
# tools), and a user's project (examples/your-own-project, with this repository's Dockerfile), whose resolved build
# context must hold what the Dockerfile copies: package.json and a relay-e.config file.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
compose_version="v2.29.7"
compose="$relay_e_cache_dir/compose-${compose_version#v}/cmd"
if [ ! -x "$compose" ]; then
  command -v go >/dev/null 2>&1 || { echo "check-compose: Go is needed to build docker compose $compose_version" >&2; exit 1; }
  echo "check-compose: building docker compose $compose_version (once)" >&2
  mkdir -p "$(dirname "$compose")"
  CGO_ENABLED=0 GOBIN="$(dirname "$compose")" go install "github.com/docker/compose/v2/cmd@$compose_version"
fi
RELAY_E_API_KEYS="check:acme" "$compose" -f docker-compose.yml config --quiet
echo "docker-compose.yml: valid (docker compose $compose_version config)"

relay_e_ensure_node
resolved="$(mktemp)"
trap 'rm -f "$resolved"' EXIT
RELAY_E_API_KEYS="check:acme" RELAY_E_PROJECT_DIR=examples/your-own-project RELAY_E_DOCKERFILE="$PWD/Dockerfile" \
  "$compose" -f docker-compose.yml config --format json >"$resolved"
node scripts/check-compose-project.mjs "$resolved" "$PWD/examples/your-own-project"
