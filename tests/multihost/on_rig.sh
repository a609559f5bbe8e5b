#!/usr/bin/env bash
# on_rig.sh K COMMAND...: runs COMMAND with NETNS_RIG=K when rig K of scripts/netns-cluster is
# up, else says so and exits 77 (ctest: skipped).
set -euo pipefail
export NETNS_RIG=$1
shift
if ! "$(dirname "$0")/../../scripts/netns-cluster" status >/dev/null 2>&1; then
  echo "multihost: skipped: rig $NETNS_RIG is not up (its fixture could not make it here)"
  exit 77
fi
exec "$@"
