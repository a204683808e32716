#!/bin/sh
# estimate_cost -- the start-time estimate's cost at Kueue's large scale: 10 cohorts x 100
# ClusterQueues, 50,000 Workloads (bench/scale_gen --shape large-scale) all submitted at once, one
# estimate over the whole engine as the first instant left it (bench/estimate_accuracy --cost).
# A count of engine cycles and CPU milliseconds: it can run on a loaded machine (CPU time, not
# wall). Usage: bench/estimate_cost.sh [BUILD_DIR] [estimate_accuracy options...]
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$top/build}
[ $# -gt 0 ] && shift
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT INT TERM

"$build/bench/scale_gen" --shape large-scale |
    sed 's|^\( *sim\.sluice\.dev/at:\).*|\1 0s|' >"$work/scenario.yaml"
"$build/bench/estimate_accuracy" --cost "$@" "$work/scenario.yaml"
