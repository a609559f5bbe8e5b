#!/usr/bin/env bash
# The multihost tests' fixture: brings a rig of scripts/netns-cluster up before them and down
# after them, and checks that down left nothing behind.
#   rig_fixture.sh up K DIR N [netns-cluster up options]   (exit 77: no rig can be made here)
#   rig_fixture.sh down K DIR
# K is the rig (NETNS_RIG); DIR keeps the list of what existed before, to compare after.
set -euo pipefail
here=$(cd "$(dirname "$0")/../../scripts" && pwd)
what=$1 rig=$2 dir=$3
shift 3
export NETNS_RIG=$rig
# Things a run could leave: Open MPI's session folders and shared-memory files, Overpass's
# segments, the rig's namespaces and state folder.
snapshot() {
  {
    ls /tmp /dev/shm 2>/dev/null | grep -E '^(ompi|openmpi|pmix|overpass|vader|sm_segment)' || true
    ip netns list 2>/dev/null | awk '{print "netns " $1}' | grep -E "^netns opx${rig#0}-" || true
    if [ -e "/run/overpass-netns${rig#0}" ]; then echo "state /run/overpass-netns${rig#0}"; fi
  } | sort
}
mkdir -p "$dir"
case $what in
  up)
    if ! reason=$("$here/netns-cluster" check 2>&1); then
      echo "multihost: skipped: $reason"
      exit 77
    fi
    "$here/netns-cluster" down >/dev/null
    snapshot >"$dir/rig$rig.before"
    "$here/netns-cluster" up "$@"
    ;;
  down)
    "$here/netns-cluster" down
    [ -f "$dir/rig$rig.before" ] || { echo "multihost: rig $rig was not brought up"; exit 77; }
    left=$(comm -13 "$dir/rig$rig.before" <(snapshot))
    rm -f "$dir/rig$rig.before"
    if [ -n "$left" ]; then
      echo "FAIL: left behind after down:"
      echo "$left"
      exit 1
    fi
    echo "nothing left behind"
    ;;
  *) echo "usage: rig_fixture.sh up|down K DIR [N options]" >&2; exit 2 ;;
esac
