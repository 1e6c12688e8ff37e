#!/usr/bin/env bash
# Relay-E's production topology on one machine: PostgreSQL in a folder of its own on loopback and a cluster of
# Temporal Server processes (frontend, history, matching and worker in each), configured by
# deploy/temporal/relay-e.yaml as docker-compose.yml's server is.
#   bash scripts/cluster.sh up        start (initialising the database, schemas and namespace the first time)
#   bash scripts/cluster.sh status    what runs, where, and whether it answers
#   bash scripts/cluster.sh down      stop everything, keep the data (`destroy` also deletes the folder)
#   bash scripts/cluster.sh addresses the nodes' frontend addresses, one a line
#   bash scripts/cluster.sh members   the services the database sees heartbeating, `role host:port` a line
# Faults, for the reliability suite: `kill-node N` (SIGKILL), `start-node N`, `stop-database [immediate|fast]`,
# `start-database`.
# Environment (read at the first `up`, then kept in the folder's cluster.env):
#   RELAY_E_CLUSTER_DIR      the folder (default .relay-e/cluster)
#   RELAY_E_CLUSTER_PORT     frontend gRPC port of node 1; node N's is 20 × (N - 1) above (default 17233)
#   RELAY_E_CLUSTER_DB_PORT  PostgreSQL's port (default 15432)
#   RELAY_E_CLUSTER_NODES    Temporal Server processes (default 2)
#   RELAY_E_CLUSTER_SHARDS   history shards, fixed once the cluster has started (default 4)
#   RELAY_E_CLUSTER_LOG_LEVEL  the servers' log level (default warn)
set -euo pipefail
repository="$(cd "$(dirname "$0")/.." && pwd)"
. "$repository/scripts/env.sh"

cluster_dir="${RELAY_E_CLUSTER_DIR:-$repository/.relay-e/cluster}"
settings_file="$cluster_dir/cluster.env"
database_user="temporal"
database_password="temporal"
namespace="default"
start_timeout_seconds=90

fail() {
  echo "cluster: $*" >&2
  exit 1
}

load_settings() {
  # NUM_HISTORY_SHARDS is read by a node started by hand from relay-e.yaml; here the shards come from the setting below.
  [ -z "${NUM_HISTORY_SHARDS:-}" ] ||
    fail "NUM_HISTORY_SHARDS is not read here: set RELAY_E_CLUSTER_SHARDS=$NUM_HISTORY_SHARDS (fixed at the first start)"
  if [ -f "$settings_file" ]; then
    . "$settings_file"
    # A setting given now that differs from the folder's would be ignored: say so instead.
    refuse_changed_setting RELAY_E_CLUSTER_PORT "$port"
    refuse_changed_setting RELAY_E_CLUSTER_DB_PORT "$database_port"
    refuse_changed_setting RELAY_E_CLUSTER_NODES "$nodes"
    refuse_changed_setting RELAY_E_CLUSTER_SHARDS "$shards"
  else
    port="${RELAY_E_CLUSTER_PORT:-17233}"
    database_port="${RELAY_E_CLUSTER_DB_PORT:-15432}"
    nodes="${RELAY_E_CLUSTER_NODES:-2}"
    shards="${RELAY_E_CLUSTER_SHARDS:-4}"
  fi
  log_level="${RELAY_E_CLUSTER_LOG_LEVEL:-warn}"
}

refuse_changed_setting() {
  local given="${!1:-}"
  [ -z "$given" ] || [ "$given" = "$2" ] ||
    fail "$1=$given, but the cluster in $cluster_dir was created with $2 (shards are fixed at the first start): unset it, or \`destroy\` the cluster first"
}

save_settings() {
  mkdir -p "$cluster_dir"
  printf 'port=%s\ndatabase_port=%s\nnodes=%s\nshards=%s\n' "$port" "$database_port" "$nodes" "$shards" >"$settings_file"
}

node_port() { echo $((port + 20 * ($1 - 1))); }
node_address() { echo "127.0.0.1:$(node_port "$1")"; }
node_pid_file() { echo "$cluster_dir/node-$1.pid"; }
node_log() { echo "$cluster_dir/node-$1.log"; }
database_dir() { echo "$cluster_dir/postgres"; }

# The ports a node listens on, as deploy/temporal/relay-e.yaml derives them from its frontend port.
node_ports() {
  local base
  base="$(node_port "$1")"
  echo "$base $((base + 1)) $((base + 2)) $((base + 6)) $((base + 9)) $((base + 10)) $((base - 300)) $((base - 299)) $((base - 298)) $((base - 294))"
}

# The node's Prometheus metrics port: 9 above its frontend's.
node_metrics_port() { echo $(($(node_port "$1") + 9)); }

is_listening() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# PostgreSQL refuses to run as root: as root, its commands run as the `postgres` user.
as_postgres() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

running_pid() {
  local pid_file="$1" pid
  [ -f "$pid_file" ] || return 1
  pid="$(cat "$pid_file")"
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && grep -q "relay-e" "/proc/$pid/cmdline" 2>/dev/null || return 1
  echo "$pid"
}

wait_until() {
  local what="$1" deadline=$((SECONDS + start_timeout_seconds))
  shift
  until "$@" >/dev/null; do
    [ "$SECONDS" -lt "$deadline" ] || fail "$what did not happen within ${start_timeout_seconds}s"
    sleep 0.2
  done
}

init_database() {
  local data
  data="$(database_dir)/data"
  [ -f "$data/PG_VERSION" ] && return 0
  mkdir -p "$(database_dir)/socket"
  printf '%s\n' "$database_password" >"$(database_dir)/password"
  if [ "$(id -u)" = 0 ]; then
    chmod 755 "$cluster_dir"
    chown -R postgres: "$(database_dir)"
    as_postgres test -x "$cluster_dir" || fail "user postgres cannot enter $cluster_dir: put RELAY_E_CLUSTER_DIR where it can"
  fi
  as_postgres "$RELAY_E_POSTGRES_BIN/initdb" -D "$data" -U "$database_user" --pwfile="$(database_dir)/password" \
    --auth-host=scram-sha-256 --auth-local=trust --encoding=UTF8 --locale=C >"$cluster_dir/initdb.log"
  # Two nodes of four services each open up to 30 connections apiece.
  as_postgres tee -a "$data/postgresql.conf" >/dev/null <<EOF
listen_addresses = '127.0.0.1'
port = $database_port
unix_socket_directories = '$(database_dir)/socket'
max_connections = 400
EOF
}

start_database() {
  local data
  data="$(database_dir)/data"
  if as_postgres "$RELAY_E_POSTGRES_BIN/pg_ctl" -D "$data" status >/dev/null 2>&1; then return 0; fi
  is_listening "$database_port" && fail "port $database_port is taken: set RELAY_E_CLUSTER_DB_PORT"
  as_postgres "$RELAY_E_POSTGRES_BIN/pg_ctl" -D "$data" -l "$(database_dir)/postgres.log" -w -t "$start_timeout_seconds" start >/dev/null
}

stop_database() {
  local mode="${1:-fast}"
  as_postgres "$RELAY_E_POSTGRES_BIN/pg_ctl" -D "$(database_dir)/data" status >/dev/null 2>&1 || return 0
  as_postgres "$RELAY_E_POSTGRES_BIN/pg_ctl" -D "$(database_dir)/data" -m "$mode" -w stop >/dev/null
}

setup_schemas() {
  SQL_HOST=127.0.0.1 SQL_PORT="$database_port" SQL_USER="$database_user" SQL_PASSWORD="$database_password" \
    TEMPORAL_SQL_TOOL_PATH="$TEMPORAL_SQL_TOOL_PATH" sh "$repository/deploy/temporal/setup-schema.sh" \
    >"$cluster_dir/schema.log" 2>&1 || fail "schema setup failed: see $cluster_dir/schema.log"
}

is_serving() {
  "$TEMPORAL_CLI_PATH" operator cluster health --address "$(node_address "$1")" 2>/dev/null | grep -q SERVING
}

start_node() {
  local node="$1" pid_file
  pid_file="$(node_pid_file "$node")"
  if running_pid "$pid_file" >/dev/null; then return 0; fi
  # The membership table stores membership ports as smallint: one above 32767 stops the server at its first
  # heartbeat.
  [ "$(($(node_port "$node") - 294))" -le 32767 ] ||
    fail "node $node's membership ports would be above 32767: lower RELAY_E_CLUSTER_PORT"
  for candidate in $(node_ports "$node"); do
    is_listening "$candidate" && fail "port $candidate of node $node is taken: set RELAY_E_CLUSTER_PORT"
  done
  # The process's name carries `relay-e` (exec -a), so a pid file never points this script at someone else's process.
  (
    export POSTGRES_SEEDS=127.0.0.1 DB_PORT="$database_port" POSTGRES_USER="$database_user" \
      POSTGRES_PWD="$database_password" NUM_HISTORY_SHARDS="$shards" TEMPORAL_PORT="$(node_port "$node")" \
      TEMPORAL_CLUSTER_ADDRESS="$(node_address 1)" LOG_LEVEL="$log_level" METRICS_PORT="$(node_metrics_port "$node")" \
      DYNAMIC_CONFIG_FILE_PATH="$repository/deploy/temporal/dynamic-config.yaml"
    exec setsid bash -c 'exec -a "relay-e-temporal-node-$0" "$@"' "$node" "$TEMPORAL_SERVER_PATH" \
      --root "$repository/deploy" --config temporal --env relay-e --allow-no-auth start \
      </dev/null >>"$(node_log "$node")" 2>&1
  ) &
  echo $! >"$pid_file"
  wait_until "node $node serving at $(node_address "$node")" node_serves_or_died "$node"
}

# True once the node serves; fails the whole command when its process has died (or is a zombie) meanwhile.
node_serves_or_died() {
  local pid
  pid="$(cat "$(node_pid_file "$1")")"
  [ -e "/proc/$pid" ] && ! grep -q '^State:.*zombie' "/proc/$pid/status" ||
    fail "node $1 exited while starting; the end of $(node_log "$1"):
$(tail -c 2000 "$(node_log "$1")")"
  is_serving "$1"
}

stop_node() {
  local node="$1" signal="${2:-TERM}" pid
  pid="$(running_pid "$(node_pid_file "$node")")" || return 0
  kill "-$signal" "$pid"
  for _ in $(seq 1 100); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  kill -0 "$pid" 2>/dev/null && kill -KILL "$pid"
  rm -f "$(node_pid_file "$node")"
}

# Runs deploy/temporal/setup-namespace.sh against every node in turn: the first creates the namespace and
# registers the search attributes, the others wait until their frontend knows them (a rerun changes nothing).
setup_namespace() {
  for node in $(seq 1 "$nodes"); do
    TEMPORAL_ADDRESS="$(node_address "$node")" TEMPORAL_NAMESPACE="$namespace" TEMPORAL_CLI_PATH="$TEMPORAL_CLI_PATH" \
      sh "$repository/deploy/temporal/setup-namespace.sh" >>"$cluster_dir/namespace.log" 2>&1 ||
      fail "namespace setup on node $node failed: see $cluster_dir/namespace.log"
  done
}

# The cluster's live membership as the servers record it in PostgreSQL (a heartbeat within 30 s).
members() {
  PGPASSWORD="$database_password" "$RELAY_E_POSTGRES_BIN/psql" -h 127.0.0.1 -p "$database_port" -U "$database_user" \
    -d temporal -tAF ' ' -c "
    SELECT (ARRAY['frontend', 'history', 'matching', 'worker'])[role], rpc_address || ':' || rpc_port
    FROM cluster_membership
    WHERE last_heartbeat > now() AT TIME ZONE 'utc' - interval '30 seconds'
    ORDER BY role, rpc_port"
}

up() {
  relay_e_ensure_temporal
  relay_e_ensure_temporal_server
  relay_e_ensure_postgres
  "$TEMPORAL_SERVER_PATH" validate-dynamic-config "$repository/deploy/temporal/dynamic-config.yaml" >/dev/null ||
    fail "deploy/temporal/dynamic-config.yaml is invalid"
  save_settings
  init_database
  start_database
  setup_schemas
  for node in $(seq 1 "$nodes"); do start_node "$node"; done
  setup_namespace
  status
}

down() {
  relay_e_ensure_postgres
  for node in $(seq 1 "$nodes"); do stop_node "$node"; done
  stop_database fast
}

status() {
  relay_e_ensure_temporal
  relay_e_ensure_postgres
  local healthy=0 pid
  if pid="$(as_postgres "$RELAY_E_POSTGRES_BIN/pg_ctl" -D "$(database_dir)/data" status 2>/dev/null | grep -o 'PID: [0-9]*')"; then
    echo "postgresql  127.0.0.1:$database_port  ${pid}  running  data $(database_dir)/data"
  else
    echo "postgresql  127.0.0.1:$database_port  stopped"
    healthy=1
  fi
  for node in $(seq 1 "$nodes"); do
    if pid="$(running_pid "$(node_pid_file "$node")")"; then
      if is_serving "$node"; then
        echo "node $node      $(node_address "$node")  PID: $pid  serving  metrics :$(node_metrics_port "$node")/metrics  log $(node_log "$node")"
      else
        echo "node $node      $(node_address "$node")  PID: $pid  not serving  log $(node_log "$node")"
        healthy=1
      fi
    else
      echo "node $node      $(node_address "$node")  stopped"
      healthy=1
    fi
  done
  echo "members     $(members 2>/dev/null | cut -d' ' -f1 | uniq -c | awk '{ print $2 " " $1 }' | paste -sd ';' | sed 's/;/, /g')"
  echo "namespace '$namespace', $shards history shards, config deploy/temporal/relay-e.yaml"
  return "$healthy"
}

command="${1:-status}"
load_settings
case "$command" in
  up) up ;;
  down) down ;;
  destroy)
    down
    rm -rf "$cluster_dir"
    ;;
  status) status ;;
  addresses) for node in $(seq 1 "$nodes"); do node_address "$node"; done ;;
  members)
    relay_e_ensure_postgres
    members
    ;;
  kill-node) stop_node "${2:?node number}" KILL ;;
  start-node)
    relay_e_ensure_temporal
    relay_e_ensure_temporal_server
    start_node "${2:?node number}"
    ;;
  stop-database)
    relay_e_ensure_postgres
    stop_database "${2:-fast}"
    ;;
  start-database)
    relay_e_ensure_postgres
    start_database
    ;;
  build)
    relay_e_ensure_temporal
    relay_e_ensure_temporal_server
    relay_e_ensure_postgres
    ;;
  *) fail "unknown command '$command' (up, down, destroy, status, addresses, kill-node N, start-node N, stop-database [immediate|fast], start-database, build)" ;;
esac
