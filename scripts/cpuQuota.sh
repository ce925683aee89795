#!/bin/bash
# Runs a command on a share of one core, as on a slow or busy machine: a CPU quota in a cgroup of its
# own (root only; cgroup v1 or v2). No test's verdict may depend on the machine's speed
# (docs/development.md); this shows whether one does, e.g.
#   scripts/cpuQuota.sh 0.7 node_modules/.bin/node --test "test/integration/**/*.test.ts"
set -euo pipefail
share=${1:-}
if [[ ! $share =~ ^[0-9]*\.?[0-9]+$ ]] || [ $# -lt 2 ]; then
  echo "usage: scripts/cpuQuota.sh <cores, e.g. 0.7> <command> [arguments…]" >&2
  exit 2
fi
shift
quota=$(awk -v s="$share" 'BEGIN { printf "%d", s * 100000 }')
if [ -d /sys/fs/cgroup/cpu ]; then
  dir=$(mktemp -d /sys/fs/cgroup/cpu/springfield-quota-XXXXXX)
  echo 100000 > "$dir/cpu.cfs_period_us"
  echo "$quota" > "$dir/cpu.cfs_quota_us"
else
  dir=$(mktemp -d /sys/fs/cgroup/springfield-quota-XXXXXX)
  echo "$quota 100000" > "$dir/cpu.max"
fi
status=0
(echo "$BASHPID" > "$dir/cgroup.procs" && exec "$@") || status=$?
rmdir "$dir" 2>/dev/null || echo "cpuQuota: $dir still holds processes; remove it once they end" >&2
exit "$status"
