#!/bin/sh
# sim-50k -- `sluice sim` at Kueue's large scale: 10 cohorts x 100 ClusterQueues x 50 workloads
# (bench/scale_gen.c --shape large-scale). Prints load time, run time and peak memory (--timings) and the run's
# headline numbers. Usage: bench/sim-50k.sh [BUILD_DIR]   (default: build)
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$top/build}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT INT TERM

"$build/bench/scale_gen" --shape large-scale >"$work/scenario.yaml"
echo "scenario: $(wc -c <"$work/scenario.yaml") bytes, $(grep -c '^kind: Workload' "$work/scenario.yaml") workloads"
for i in 1 2 3; do
    "$build/sluice" sim --quiet --timings --summary "$work/summary-$i.json" "$work/scenario.yaml"
done
cmp -s "$work/summary-1.json" "$work/summary-2.json" && cmp -s "$work/summary-2.json" "$work/summary-3.json" &&
    echo "summary identical across the 3 runs"
grep -E '"(makespan|preemptions|events|utilization|jainFairnessIndex)":' "$work/summary-1.json" | head -6
