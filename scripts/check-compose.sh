#!/usr/bin/env bash
# Checks docker-compose.yml with the real Compose parser, without a Docker engine: builds `docker compose`
# from its Go module once (cached outside the repo; a few minutes) and runs `config`, which validates the file
# against the Compose specification and resolves every variable. It checks three setups: this repository (the demo
# tools); a user's project (examples/your-own-project, with this repository's Dockerfile), whose resolved build
# context must hold what the Dockerfile copies: package.json and a relay-e.config file; and a user's project with the
# files docs/your-own-project.md says to copy from the installed package, taken from what `npm pack` ships, where
# every folder the compose file bind-mounts must exist too.
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
RELAY_E_API_KEYS="key-check-0123456789:acme" "$compose" -f docker-compose.yml config --quiet
echo "docker-compose.yml: valid (docker compose $compose_version config)"

relay_e_ensure_node
resolved="$(mktemp)"
copied="$(mktemp -d)"
trap 'rm -rf "$resolved" "$copied"' EXIT
RELAY_E_API_KEYS="key-check-0123456789:acme" RELAY_E_PROJECT_DIR=examples/your-own-project \
  RELAY_E_DOCKERFILE="$PWD/Dockerfile" "$compose" -f docker-compose.yml config --format json >"$resolved"
node scripts/check-compose-project.mjs "$resolved" "$PWD/examples/your-own-project"

# The copied setup: the example project's files, and docker-compose.yml, Dockerfile, .dockerignore and deploy/temporal
# as the package ships them, so a file the compose file needs and the package leaves out is missing here too.
cp examples/your-own-project/package.json examples/your-own-project/relay-e.config.ts "$copied/"
npm pack --dry-run --json --ignore-scripts 2>/dev/null |
  node -e 'let s = ""; process.stdin.on("data", (c) => (s += c)).on("end", () => {
    const shipped = JSON.parse(s)[0].files.map((file) => file.path);
    const copied = /^(docker-compose\.yml|Dockerfile|\.dockerignore|deploy\/temporal\/.+)$/;
    console.log(shipped.filter((file) => copied.test(file)).join("\n"));
  });' |
  while IFS= read -r file; do
    mkdir -p "$copied/$(dirname "$file")"
    cp "$file" "$copied/$file"
  done
(cd "$copied" && env -u RELAY_E_PROJECT_DIR -u RELAY_E_DOCKERFILE RELAY_E_API_KEYS="key-check-0123456789:acme" \
  "$compose" -f docker-compose.yml config --format json) >"$resolved"
node scripts/check-compose-project.mjs "$resolved" "$copied"
node -e 'const { existsSync, readFileSync, readdirSync, statSync } = require("node:fs");
  const [resolvedFile, project] = process.argv.slice(1);
  const missing = [];
  for (const [name, service] of Object.entries(JSON.parse(readFileSync(resolvedFile, "utf8")).services)) {
    for (const volume of service.volumes ?? []) {
      if (volume.type !== "bind") continue;
      const there =
        existsSync(volume.source) &&
        (!statSync(volume.source).isDirectory() || readdirSync(volume.source).length > 0);
      if (!volume.source.startsWith(project + "/") || !there) missing.push(`${name}: ${volume.source}`);
    }
  }
  if (missing.length > 0) {
    console.error(`docker-compose.yml copied from the package: bind mounts the copy lacks:\n  ${missing.join("\n  ")}`);
    process.exit(1);
  }
  console.log("docker-compose.yml copied from the package: every folder it bind-mounts is in the copy");' \
  "$resolved" "$copied"
