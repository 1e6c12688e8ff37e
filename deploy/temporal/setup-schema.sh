#!/bin/sh
# Creates the temporal and temporal_visibility databases when they are missing and brings both schemas up to the
# SQL tool's version (the schemas built into the tool); a rerun applies only newer versions. Run by
# scripts/cluster.sh and by docker-compose.yml's temporal-schema job.
# Environment: SQL_HOST, SQL_PORT, SQL_USER, SQL_PASSWORD (read by the tool); TEMPORAL_SQL_TOOL_PATH, the tool
# (default temporal-sql-tool, as in the temporalio/admin-tools image).
set -eu
tool="${TEMPORAL_SQL_TOOL_PATH:-temporal-sql-tool}"
export SQL_PLUGIN=postgres12
command -v "$tool" >/dev/null 2>&1 || {
  echo "No Temporal SQL tool at '$tool': build it (go.temporal.io/server/cmd/tools/sql) or set TEMPORAL_SQL_TOOL_PATH" >&2
  exit 2
}

setup() {
  database="$1"
  schema="$2"
  if ! created="$("$tool" --db "$database" create-database 2>&1)"; then
    case "$created" in
      *"already exists"*) ;;
      *) echo "$created" >&2; exit 1 ;;
    esac
  fi
  "$tool" --db "$database" setup-schema -v 0.0
  "$tool" --db "$database" update-schema --schema-name "postgresql/v12/$schema"
}

setup temporal temporal
setup temporal_visibility visibility
