#!/bin/sh
# scale.sh -- Kueue's scheduler benchmark (test/performance/scheduler) for sluice, one command per
# row of docs/performance.md: start the test API server (test/kube-env), install the CRDs, start
# `sluice run`, run bench/scale_runner (creates the shape on Kueue's schedule, finishes admitted
# Workloads after their runtime, checks quotas from the watch history) and print Kueue's figures
# beside the same shape through `sluice sim` and Kueue's own numbers.
#
# Usage: bench/scale.sh [--shape baseline|large-scale|smoke] [--build DIR] [--sluice BIN]
#                       [--qps N --burst N]
#                       [--sluice-args "..."] [--runner-args "..."] [--out DIR] [--sim | --no-sim]
#                       [--kube-env ENV_FILE] [--crds DIR] [--keep-conversion]
#                       [--prefix P | --random-prefix] [--cleanup]
#                       [--trace] [--label TEXT] [--kill N [--kill-every S]]
#   --shape        Kueue's baseline (default), large-scale, or smoke (CI: 80 workloads)
#   --build        build directory with sluice and bench/scale_runner (default: build)
#   --sluice BIN   the sluice binary to measure (default: BUILD/sluice), e.g. one built from a
#                  given commit (git archive COMMIT | tar -x -C DIR; cmake -S DIR ...)
#   --qps/--burst  sluice's client limits (default: sluice's own, 300/500; Kueue's are 50/100)
#   --sluice-args  more flags for `sluice run`
#   --runner-args  more flags for bench/scale_runner (see scale_runner --help)
#   --out          directory for the artifacts (default: a new /tmp/sluice-scale-* directory):
#                  result.json, report.txt, sluice.log, runner.log, sim-summary.json, trace.jsonl,
#                  apiserver.log, memory.tsv (sluice's RSS every 5 s, its cached objects and
#                  queued requests every 60 s)
#   --sim          only the simulator row (no API server); --no-sim: no simulator column
#   --kube-env     use a running test API server (its env file) instead of starting one
#   --crds DIR     the CRDs to install (default: crds/; e.g. those of the commit measured)
#   --keep-conversion  keep the CRDs' conversion webhook (default, on a server of our own:
#                  strategy None, as Kueue's envtest runs; sluice runs without webhooks, and an
#                  unreachable conversion webhook makes the server's v1beta1 caches fail forever)
#   --random-prefix  prefix every cluster-scoped name with a random one (shared API servers)
#   --cleanup      delete the shape's objects at the end (while sluice still runs)
#   --trace        keep every Workload record in trace.jsonl (re-check: scale_runner
#                  --shape S --check-trace trace.jsonl)
#   --kill N       kill -9 `sluice run` N times at random moments while the runner works, starting
#                  it again at once each time (issue 15: nothing lost, nothing over-committed across
#                  a crash); the runner's quota check and "every workload finished" decide. The
#                  controller's CPU and RSS are not measured then (the process changes).
#   --kill-every S the mean time between kills in seconds, each drawn uniformly from [S/2, 3S/2]
#                  from the previous start (default 10)
# Exit status: scale_runner's (0 ok, 1 quota check failed, 3 run failed, 4 history gap), 2 usage,
# 77 when the test API server cannot be built here, 5 when sluice exits early or fails to stop.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)

shape=baseline build=$top/build sluice="" qps="" burst="" sluice_args="" runner_args="" out=""
sim=1 live=1 kube_env="" prefix="" cleanup="" trace="" label="" crds=$top/crds keep_conv=""
kills=0 kill_every=10
while [ $# -gt 0 ]; do
    case "$1" in
    --shape) shape=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --sluice) sluice=$2; shift 2 ;;
    --qps) qps=$2; shift 2 ;;
    --burst) burst=$2; shift 2 ;;
    --sluice-args) sluice_args=$2; shift 2 ;;
    --runner-args) runner_args=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --sim) live=0; shift ;;
    --no-sim) sim=0; shift ;;
    --kube-env) kube_env=$2; shift 2 ;;
    --crds) crds=$2; shift 2 ;;
    --keep-conversion) keep_conv=1; shift ;;
    --prefix) prefix=$2; shift 2 ;;
    --random-prefix) prefix="s$(od -An -N3 -tx1 /dev/urandom | tr -d ' \n')-"; shift ;;
    --cleanup) cleanup=--cleanup; shift ;;
    --trace) trace=1; shift ;;
    --label) label=$2; shift 2 ;;
    --kill) kills=$2; shift 2 ;;
    --kill-every) kill_every=$2; shift 2 ;;
    -h|--help) sed -n '2,/^set -eu/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "scale.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
done
case "$shape" in baseline|large-scale|smoke) ;; *) echo "scale.sh: unknown shape $shape" >&2; exit 2 ;; esac
case "$kills$kill_every" in *[!0-9]*) echo "scale.sh: --kill and --kill-every take whole numbers" >&2; exit 2 ;; esac
[ "$kill_every" -gt 0 ] || { echo "scale.sh: --kill-every must be at least 1" >&2; exit 2; }
build=$(cd "$build" && pwd)
[ -n "$sluice" ] || sluice=$build/sluice
runner=$build/bench/scale_runner gen=$build/bench/scale_gen
for b in "$sluice" "$runner" "$gen"; do
    [ -x "$b" ] || { echo "scale.sh: $b not built (cmake --build $build)" >&2; exit 2; }
done
[ -n "$out" ] || out=$(mktemp -d "${TMPDIR:-/tmp}/sluice-scale-$shape.XXXXXX")
mkdir -p "$out"
out=$(cd "$out" && pwd)
[ -n "$label" ] || label=$(git -C "$top" describe --always --dirty 2>/dev/null || echo unknown)
log() { echo "scale.sh: $*" >&2; }

# ---- the simulator's row: the same objects as a scenario, in virtual time ----
sim_flag=""
if [ "$sim" = 1 ]; then
    "$gen" --shape "$shape" ${prefix:+--prefix "$prefix"} >"$out/scenario.yaml"
    log "sluice sim: $(grep -c '^kind: Workload' "$out/scenario.yaml") workloads"
    "$sluice" sim --quiet --timings --summary "$out/sim-summary.json" "$out/scenario.yaml" \
        2>"$out/sim-timings.txt" || { cat "$out/sim-timings.txt" >&2; log "sluice sim failed"; exit 3; }
    cat "$out/sim-timings.txt" >&2
    rm -f "$out/scenario.yaml"
    sim_flag="--sim-summary $out/sim-summary.json"
fi
if [ "$live" = 0 ]; then
    # shellcheck disable=SC2086
    "$runner" --shape "$shape" ${prefix:+--prefix "$prefix"} --sim-only $sim_flag \
        --out "$out/result.json" --label "$label" | tee "$out/report.txt"
    log "artifacts in $out"
    exit 0
fi

# ---- the API server ----
env_dir=""
sluice_pid=""
sampler_pid=""
cleanup_all() {
    [ -z "$sampler_pid" ] || kill "$sampler_pid" 2>/dev/null || true
    if [ -n "$sluice_pid" ] && kill -0 "$sluice_pid" 2>/dev/null; then
        kill -TERM "$sluice_pid" 2>/dev/null || true
        wait "$sluice_pid" 2>/dev/null || true
    fi
    if [ -n "$env_dir" ]; then
        cp "$env_dir/apiserver.log" "$out/apiserver.log" 2>/dev/null || true
        "$top/test/kube-env/down" "$env_dir" >/dev/null 2>&1 || true
    fi
}
trap cleanup_all EXIT
trap 'exit 130' INT TERM
if [ -n "$kube_env" ]; then
    if [ ! -f "$kube_env" ]; then
        skipped="$(dirname "$kube_env")/SKIPPED"
        if [ -f "$skipped" ]; then
            echo "SKIPPED -- INTEGRATION ENVIRONMENT UNAVAILABLE: $(cat "$skipped")" >&2
            exit 77
        fi
        log "no environment file $kube_env"
        exit 2
    fi
else
    if [ "$shape" = large-scale ] && [ -z "${SLUICE_KUBE_APISERVER_ARGS+x}" ]; then
        # 1,000 namespaces: on 1.20 the ResourceQuota admission plugin times out creates.
        SLUICE_KUBE_APISERVER_ARGS="--disable-admission-plugins=ResourceQuota --max-requests-inflight=2000 --max-mutating-requests-inflight=1000"
        export SLUICE_KUBE_APISERVER_ARGS
    fi
    # The controller manager has nothing to do here (no Pods, no Jobs) but costs CPU.
    : "${SLUICE_KUBE_CONTROLLER_MANAGER:=0}"
    export SLUICE_KUBE_CONTROLLER_MANAGER
    env_dir=$out/kube-env
    rm -rf "$env_dir"
    set +e
    kube_env=$("$top/test/kube-env/up" "$env_dir" 2>"$out/kube-env-up.log")
    st=$?
    set -e
    if [ $st = 77 ]; then
        cat "$out/kube-env-up.log" >&2
        exit 77
    fi
    [ $st = 0 ] || { cat "$out/kube-env-up.log" >&2; log "test/kube-env/up failed"; exit 3; }
    log "API server up${SLUICE_KUBE_APISERVER_ARGS:+ with $SLUICE_KUBE_APISERVER_ARGS}"
fi
# shellcheck disable=SC1090
. "$kube_env"
export KUBECONFIG
k() { kubectl --warnings-as-errors=false "$@"; }

# ---- CRDs ----
k apply --validate=false -f "$crds/" >/dev/null 2>"$out/crds.log" ||
    k create -f "$crds/" >/dev/null 2>>"$out/crds.log" ||
    { cat "$out/crds.log" >&2; log "installing the CRDs failed"; exit 3; }
for n in clusterqueues resourceflavors localqueues workloads cohorts workloadpriorityclasses; do
    k wait --for condition=Established --timeout=60s "crd/$n.kueue.x-k8s.io" >/dev/null
    # Only on a server of our own: a shared one belongs to other tests as it is.
    if [ -n "$env_dir" ] && [ -z "$keep_conv" ] &&
        [ "$(k get "crd/$n.kueue.x-k8s.io" -o jsonpath='{.spec.conversion.strategy}')" = Webhook ]; then
        k patch "crd/$n.kueue.x-k8s.io" --type=json \
            -p '[{"op":"replace","path":"/spec/conversion","value":{"strategy":"None"}}]' >/dev/null
        log "crd/$n.kueue.x-k8s.io: conversion strategy None (sluice runs without webhooks)"
    fi
done
i=0
until k get clusterqueues >/dev/null 2>&1 && k get workloads -A >/dev/null 2>&1; do
    i=$((i + 1)); [ $i -lt 150 ] || { log "the CRDs are not served"; exit 3; }
    sleep 0.2
done

# ---- sluice run ----
port_free() {
    hex=$(printf ':%04X ' "$1")
    ! cat /proc/net/tcp /proc/net/tcp6 2>/dev/null | awk '{print $2" "$4}' | grep -q "$hex"
}
hport=0
for _ in 1 2 3 4 5 6 7 8 9 10; do
    p=$(( ($(od -An -N2 -tu2 /dev/urandom | tr -d ' ') % 12000) + 20000 ))
    if port_free "$p"; then hport=$p; break; fi
done
[ "$hport" != 0 ] || { log "no free port for sluice's health probes"; exit 3; }
# Webhooks off, waitForPodsReady off, no leader election (Kueue's minimalkueue runs the same way).
# `sluice_pid` is a supervisor: it runs `sluice run` (pid in $out/sluice.pid) and, with --kill,
# kills it at random moments and starts it again until the kills are spent. SIGTERM to the
# supervisor stops the killing and is passed on; it exits with the last operator's status.
rand_ms() { # a uniform whole number of milliseconds in [$1/2, 3*$1/2) seconds
    echo $(( $1 * 500 + $(od -An -N4 -tu4 /dev/urandom | tr -d ' ') % ($1 * 1000) ))
}
supervise() {
    n=0 stop=0 pid=""
    trap 'stop=1; [ -z "$pid" ] || kill -TERM "$pid" 2>/dev/null' TERM
    rm -f "$out/kills"
    while :; do
        # shellcheck disable=SC2086
        "$sluice" run --kubeconfig "$KUBECONFIG" --webhook-port 0 --pods-ready-timeout 0 \
            --leader-elect=false --health-probe-bind-address "127.0.0.1:$hport" \
            ${qps:+--qps "$qps"} ${burst:+--burst "$burst"} $sluice_args >>"$out/sluice.log" 2>&1 &
        pid=$!
        echo "$pid" >"$out/sluice.pid"
        [ "$stop" = 0 ] || kill -TERM "$pid" 2>/dev/null
        if [ "$stop" = 0 ] && [ "$n" -lt "$kills" ]; then
            ms=$(rand_ms "$kill_every")
            sleep "$((ms / 1000)).$(printf '%03d' $((ms % 1000)))" &
            sp=$!
            wait "$sp" 2>/dev/null || kill "$sp" 2>/dev/null # a TERM ends the wait early
            if [ "$stop" = 0 ] && kill -9 "$pid" 2>/dev/null; then
                wait "$pid" 2>/dev/null || true
                n=$((n + 1))
                echo "$n" >"$out/kills"
                echo "scale.sh: ---- kill -9 #$n of sluice run (pid $pid) after $ms ms ----" >>"$out/sluice.log"
                continue
            fi
        fi
        st=0
        wait "$pid" || st=$?
        # A TERM ends that wait early with status 143 while the operator may still be shutting
        # down (or may have just exited): the second wait returns the operator's own status.
        if [ "$stop" = 1 ]; then
            st=0
            wait "$pid" || st=$?
        fi
        exit "$st"
    done
}
# The process that runs sluice itself, given the pid the supervisor started: `--sluice` may be a
# wrapper (a script running heaptrack, valgrind or perf with sluice below it) whose own RSS and
# CPU are not sluice's. Follows children whose command line has sluice run's --kubeconfig down to
# the deepest; the pid itself when it has none (sluice, or a wrapper that exec'd it).
sluice_proc() {
    p=$1 depth=0
    while [ "$depth" -lt 8 ]; do
        c=""
        for k in $(awk -v p="$p" '{l = $0; sub(/.*\) /, "", l); split(l, f, " "); if (f[2] == p) print $1}' \
            /proc/[0-9]*/stat 2>/dev/null); do
            if tr '\0' ' ' <"/proc/$k/cmdline" 2>/dev/null | grep -q -- '--kubeconfig'; then c=$k; break; fi
        done
        [ -n "$c" ] || break
        p=$c depth=$((depth + 1))
    done
    echo "$p"
}
: >"$out/sluice.log"
supervise &
sluice_pid=$!
i=0
until curl -fsS "http://127.0.0.1:$hport/readyz" >/dev/null 2>&1; do
    i=$((i + 1))
    kill -0 "$sluice_pid" 2>/dev/null || { tail -n 30 "$out/sluice.log" >&2; log "sluice exited"; exit 5; }
    [ $i -lt 300 ] || { tail -n 30 "$out/sluice.log" >&2; log "sluice not ready after 60 s"; exit 5; }
    sleep 0.2
done
sluice_real=$(sluice_proc "$(cat "$out/sluice.pid")")
log "sluice run ready (pid $sluice_real${qps:+, --qps $qps}${burst:+ --burst $burst}${sluice_args:+, $sluice_args}$([ "$kills" = 0 ] || echo ", kill -9 up to $kills times every ~$kill_every s")); load: $(cut -d' ' -f1-3 /proc/loadavg)"

# ---- memory over time: what the peak RSS coincides with ----
# Every 5 s: seconds since the runner started, sluice's VmRSS and VmHWM (MiB); every 60 s also the
# objects in its caches (sluice_cache_objects summed) and the API requests it has queued or in
# flight (sluice_api_requests_queued), repeated on the samples between. Written to memory.tsv;
# the peak's line is printed at the end. The gauges come from a whole /metrics scrape, at large
# scale 13.5 MB of text that sluice renders into a buffer of that size: the observer should not
# add a transient of its own every 5 s to the peak it is there to explain (stop 31).
sample_memory() {
    t0=$(date +%s)
    n=0 obs="0	0"
    printf 'seconds\trss_mib\thwm_mib\tcached_objects\tapi_requests_queued\n'
    while :; do
        p=$(cat "$out/sluice.pid" 2>/dev/null || true)
        [ -z "$p" ] || p=$(sluice_proc "$p") # sluice's own, not a wrapper's (--sluice)
        if [ -n "$p" ] && [ -r "/proc/$p/status" ]; then
            mem=$(awk '/^VmRSS:/ {r = $2} /^VmHWM:/ {h = $2} END {printf "%.0f\t%.0f", r / 1024, h / 1024}' \
                "/proc/$p/status" 2>/dev/null || true)
            if [ $((n % 12)) = 0 ]; then
                obs=$(curl -fsS --max-time 5 "http://127.0.0.1:$hport/metrics" 2>/dev/null |
                    awk '/^sluice_cache_objects[{ ]/ {c += $NF} /^sluice_api_requests_queued[{ ]/ {q += $NF}
                         END {printf "%d\t%d", c, q}' || true)
            fi
            n=$((n + 1))
            [ -z "$mem" ] || printf '%s\t%s\t%s\n' "$(($(date +%s) - t0))" "$mem" "${obs:-0	0}"
        fi
        sleep 5
    done
}
sample_memory >"$out/memory.tsv" 2>/dev/null &
sampler_pid=$!

# ---- the runner ----
set +e
# shellcheck disable=SC2086
"$runner" --shape "$shape" ${prefix:+--prefix "$prefix"} \
    --sluice-pid "$([ "$kills" -gt 0 ] && echo 0 || echo "$sluice_real")" \
    --apiserver-pid "${SLUICE_KUBE_APISERVER_PID:-0}" --etcd-pid "${SLUICE_KUBE_ETCD_PID:-0}" \
    --out "$out/result.json" --label "$label" $sim_flag $cleanup \
    ${trace:+--trace "$out/trace.jsonl"} $runner_args >"$out/report.txt" 2>"$out/runner.log"
rc=$?
set -e
kill "$sampler_pid" 2>/dev/null || true
cat "$out/report.txt"
peak=$(sort -t'	' -k2,2n "$out/memory.tsv" 2>/dev/null | tail -n 1)
case "$peak" in
[0-9]*) log "highest RSS sample (memory.tsv): $(echo "$peak" | awk -F'\t' '{printf "%s MiB at %s s, %s objects cached, %s API requests queued", $2, $1, $4, $5}')" ;;
esac
if [ "$kills" -gt 0 ]; then
    done_kills=$(cat "$out/kills" 2>/dev/null || echo 0)
    log "kill -9: $done_kills of $kills done during the run (sluice started $((done_kills + 1)) times)"
    [ "$done_kills" -ge "$kills" ] || log "WARNING: the run ended before all the kills (lower --kill-every)"
fi
grep -E 'QUOTA CHECK|stopping|FAIL' "$out/runner.log" >&2 || true

if [ -n "$cleanup" ]; then
    # sluice removes the ClusterQueue and ResourceFlavor finalizers; wait until they are gone.
    for n in $(k get clusterqueues -o name 2>/dev/null | grep "/${prefix}cq-" || true); do
        k wait --for=delete --timeout=60s "$n" >/dev/null 2>&1 || log "$n not deleted"
    done
fi

# ---- stop sluice: SIGTERM, exit 0 expected ----
kill -0 "$sluice_pid" 2>/dev/null || { tail -n 30 "$out/sluice.log" >&2; log "sluice died during the run"; rc=${rc:-5}; [ "$rc" != 0 ] || rc=5; }
kill -TERM "$sluice_pid" 2>/dev/null || true
st=0
wait "$sluice_pid" || st=$?
sluice_pid=""
if [ "$st" != 0 ]; then
    tail -n 30 "$out/sluice.log" >&2
    log "sluice exited with status $st"
    [ "$rc" != 0 ] || rc=5
fi
log "artifacts in $out"
exit "$rc"
