#!/bin/sh
# Creates the namespace when it is missing and registers the search attributes Relay-E's runs set
# (src/shared/search-attributes.ts; a unit test keeps this list equal to it); reruns change nothing. Run by
# scripts/cluster.sh and by docker-compose.yml's temporal-setup job.
# Environment: TEMPORAL_ADDRESS (host:port of a frontend), TEMPORAL_NAMESPACE (default default),
# TEMPORAL_CLI_PATH (default temporal, as in the temporalio/admin-tools image).
set -eu
temporal="${TEMPORAL_CLI_PATH:-temporal}"
namespace="${TEMPORAL_NAMESPACE:-default}"
search_attributes="RelayTenant=Keyword RelayUser=Keyword RelayStatus=Keyword RelayPendingApprovals=Int"

# Runs the command every half second until it succeeds, for a minute at most.
retry() {
  attempts=0
  until "$@"; do
    attempts=$((attempts + 1))
    [ "$attempts" -lt 120 ] || { echo "gave up waiting for: $*" >&2; return 1; }
    sleep 0.5
  done
}
is_serving() { "$temporal" operator cluster health 2>/dev/null | grep -q SERVING; }
# A new namespace reaches every frontend's namespace cache within seconds.
list_search_attributes() { registered="$("$temporal" operator search-attribute list --namespace "$namespace" 2>/dev/null)"; }

command -v "$temporal" >/dev/null 2>&1 || {
  echo "No Temporal CLI at '$temporal': install one (https://docs.temporal.io/cli) or set TEMPORAL_CLI_PATH" >&2
  exit 2
}
retry is_serving
"$temporal" operator namespace describe --namespace "$namespace" >/dev/null 2>&1 ||
  "$temporal" operator namespace create --namespace "$namespace" --retention 7d
retry list_search_attributes
for attribute in $search_attributes; do
  name="${attribute%%=*}"
  printf '%s\n' "$registered" | grep -qw "$name" ||
    "$temporal" operator search-attribute create --namespace "$namespace" --name "$name" --type "${attribute##*=}"
done
