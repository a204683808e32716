# ctrl_lib.sh -- helpers for the operator's end-to-end tests (test/integration/ctrl_*.sh):
# install the CRDs and the test Job CRD, create the queue fixtures (flavors, priority classes,
# ClusterQueues, LocalQueues; each deleted when the test exits), start `sluice run` and the test
# job runner as processes, create test Jobs, poll objects. Sourced after lib.sh.
# Every object a test creates carries $sfx (random per run) in its name, or lives in $ns.
# shellcheck shell=sh

sluice=${SLUICE_BINARY_DIR:-$src/build}/sluice
[ -x "$sluice" ] || fail "no sluice binary at $sluice (SLUICE_BINARY_DIR)"
runner=${SLUICE_JOB_RUNNER:-}
[ -x "$runner" ] || fail "SLUICE_JOB_RUNNER does not name the built job-runner (got '$runner')"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/sluice-it-XXXXXX")
[ -n "${SLUICE_KEEP_LOGS:-}" ] || it_on_exit "rm -rf $tmp"
sfx=$(od -An -N3 -tx1 /dev/urandom | tr -d ' \n')
TJ=jobs.batch.test.sluice.dev

ctrl_install_crds() {
    k apply --validate=false -f "$src/crds/" >/dev/null || fail "kubectl apply -f crds/"
    k apply -f "$src/test/testdata/job-crd.yaml" >/dev/null || fail "apply the test Job CRD"
    for n in clusterqueues resourceflavors localqueues workloads cohorts workloadpriorityclasses admissionchecks topologies; do
        k wait --for condition=Established --timeout=60s "crd/$n.kueue.x-k8s.io" >/dev/null ||
            fail "CRD $n not Established"
    done
    k wait --for condition=Established --timeout=60s crd/$TJ >/dev/null || fail "test Job CRD"
    wait_for 30 "discovery of the CRDs" sh -c "kubectl get clusterqueues >/dev/null && kubectl get $TJ -A >/dev/null"
}

# ---- fixtures --------------------------------------------------------------------------------
# Delete cluster-scoped objects when the test exits: ctrl_delete_at_exit KIND NAME...
ctrl_delete_at_exit() {
    kind=$1
    shift
    it_on_exit "k delete $kind $* --ignore-not-found --wait=false >/dev/null 2>&1 || true"
}

# The namespace $sys (sluice-it-sys-$sfx) for the operator's own objects (Lease, Secret,
# ServiceAccount), deleted when the test exits.
ctrl_sys_namespace() {
    sys=sluice-it-sys-$sfx
    k create namespace "$sys" >/dev/null || fail "create namespace $sys"
    ctrl_delete_at_exit namespace "$sys"
}

# YAML of a ResourceFlavor NAME with nodeLabels {pool: NAME} (so an admitted Job's nodeSelector
# names its flavor), SPEC_LINEs added to its spec: ctrl__flavor_yaml NAME [SPEC_LINE...]
ctrl__flavor_yaml() {
    printf 'apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: %s}\nspec:\n  nodeLabels: {pool: %s}\n' "$1" "$1"
    shift
    for l in "$@"; do printf '  %s\n' "$l"; done
}

# YAML of a ClusterQueue with one resource group: ctrl__cq_yaml NAME FLAVORS [SPEC_LINE...]
# (see ctrl_cq).
ctrl__cq_yaml() {
    printf 'apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: %s}\nspec:\n  namespaceSelector: {}\n' "$1"
    fl=$2
    shift 2
    for l in "$@"; do printf '  %s\n' "$l"; done
    # The covered resources: the names of the first flavor's quotas, in their order.
    # shellcheck disable=SC2086 # split "FLAVOR res=q..." into words
    set -- ${fl%%;*}
    shift
    cov=""
    for r in "$@"; do cov="${cov:+$cov, }${r%%=*}"; done
    printf '  resourceGroups:\n  - coveredResources: [%s]\n    flavors:\n' "$cov"
    while [ -n "$fl" ]; do
        case "$fl" in
        *\;*) one=${fl%%;*} fl=${fl#*;} ;;
        *) one=$fl fl="" ;;
        esac
        # shellcheck disable=SC2086 # split "FLAVOR res=q..." into words
        set -- $one
        printf '    - name: %s\n      resources: [' "$1"
        shift
        sep=""
        for r in "$@"; do
            printf '%s{name: %s, nominalQuota: %s}' "$sep" "${r%%=*}" "${r#*=}"
            sep=", "
        done
        printf ']\n'
    done
}

# YAML of a LocalQueue NAME in $ns pointing at ClusterQueue CQ: ctrl__lq_yaml NAME CQ
ctrl__lq_yaml() {
    printf 'apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {name: %s, namespace: %s}\nspec: {clusterQueue: %s}\n' "$1" "$ns" "$2"
}

# A ResourceFlavor NAME (nodeLabels {pool: NAME}) with SPEC_LINEs added to its spec, deleted at
# exit: ctrl_flavor NAME [SPEC_LINE...], e.g. ctrl_flavor big-$sfx "tolerations: [...]"
ctrl_flavor() {
    ctrl_delete_at_exit resourceflavor "$1"
    ctrl__flavor_yaml "$@" | k apply -f - >/dev/null || fail "create ResourceFlavor $1"
}

# A ClusterQueue NAME selecting every namespace, one resource group, SPEC_LINEs added to its
# spec, deleted at exit: ctrl_cq NAME FLAVORS [SPEC_LINE...]. FLAVORS: "FLAVOR RES=QUOTA..."
# entries separated by ';', each flavor with the same resources in the same order, e.g.
# ctrl_cq "$cq" "small-$sfx cpu=8 nvidia.com/gpu=2; big-$sfx cpu=8 nvidia.com/gpu=4" \
#     "cohortName: co-$sfx" "preemption: {reclaimWithinCohort: Any}"
ctrl_cq() {
    ctrl_delete_at_exit clusterqueue "$1"
    ctrl__cq_yaml "$@" | k apply -f - >/dev/null || fail "create ClusterQueue $1"
}

# A LocalQueue NAME in $ns for ClusterQueue CQ (deleted with $ns): ctrl_lq NAME CQ
ctrl_lq() {
    ctrl__lq_yaml "$1" "$2" | k apply -f - >/dev/null || fail "create LocalQueue $ns/$1"
}

# The usual queues: flavor, ClusterQueue CQ over it and LocalQueue lq (the one tjob uses) in
# $ns, in one apply: ctrl_queues CQ "FLAVOR RES=QUOTA..." [SPEC_LINE...] (as ctrl_cq), e.g.
# ctrl_queues "$cq" "gpu-$sfx cpu=8 nvidia.com/gpu=4" "preemption: {withinClusterQueue: LowerPriority}"
ctrl_queues() {
    ctrl_delete_at_exit clusterqueue "$1"
    ctrl_delete_at_exit resourceflavor "${2%% *}"
    {
        ctrl__flavor_yaml "${2%% *}"
        echo ---
        ctrl__cq_yaml "$@"
        echo ---
        ctrl__lq_yaml lq "$1"
    } | k apply -f - >/dev/null || fail "create the queues of ClusterQueue $1"
}

# WorkloadPriorityClasses, deleted at exit: ctrl_wpcs NAME=VALUE..., e.g. ctrl_wpcs low-$sfx=100
ctrl_wpcs() {
    names=""
    for wpc in "$@"; do names="$names ${wpc%%=*}"; done
    ctrl_delete_at_exit workloadpriorityclass "$names"
    for wpc in "$@"; do
        printf -- '---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: WorkloadPriorityClass\nmetadata: {name: %s}\nvalue: %s\n' "${wpc%%=*}" "${wpc#*=}"
    done | k apply -f - >/dev/null || fail "create WorkloadPriorityClasses $*"
}

# A Kueue Configuration file $tmp/NAME.yaml: the header, then the fields read from stdin.
ctrl_config() {
    { printf 'apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\n'; cat; } >"$tmp/$1.yaml" ||
        fail "write $tmp/$1.yaml"
}

# ---- processes -------------------------------------------------------------------------------
# Start `sluice run` as a background process: ctrl_start NAME [extra flags...]; its pid is in
# $pid_NAME, its log in $tmp/NAME.log. Waits until its caches are synced.
ctrl_start() {
    name=$1
    shift
    "$sluice" run --kubeconfig "$KUBECONFIG" --job-resource batch.test.sluice.dev/v1/jobs \
        --namespace sluice-system --health-probe-bind-address 0 --webhook-port 0 "$@" >"$tmp/$name.log" 2>&1 &
    eval "pid_$name=$!"
    it_on_exit "kill \$pid_$name 2>/dev/null || true; wait \$pid_$name 2>/dev/null || true"
    # A failure says when the operator is gone (a crash looked like a silent operator once:
    # integration_ctrl_provreq waited a minute on a process that had segfaulted).
    it_on_fail "kill -0 \$pid_$name 2>/dev/null || { st=0; wait \$pid_$name || st=\$?; echo \"sluice $name is not running (exit status \$st; 139: SIGSEGV); its log ends:\"; tail -n 15 \"$tmp/$name.log\"; }"
    wait_for 30 "sluice $name to sync its caches" grep -q "caches synced" "$tmp/$name.log"
}

# Stop the operator NAME with SIGTERM and require exit status 0.
ctrl_stop() {
    eval "p=\$pid_$1"
    kill -TERM "$p" 2>/dev/null || fail "sluice $1 is not running: $(tail -n 20 "$tmp/$1.log")"
    st=0
    wait "$p" || st=$?
    [ "$st" = 0 ] || fail "sluice $1 exited with $st after SIGTERM: $(tail -n 20 "$tmp/$1.log")"
}

# Kill the operator NAME with SIGKILL (a crash: no clean-up, no Lease release) and reap it.
ctrl_kill() {
    eval "p=\$pid_$1"
    kill -KILL "$p" 2>/dev/null || fail "sluice $1 is not running: $(tail -n 20 "$tmp/$1.log")"
    wait "$p" 2>/dev/null || true
}

ctrl_log() { cat "$tmp/$1.log"; }

# A free TCP port on loopback: random in 20000..31999, retried while something listens there --
# below Linux's ephemeral range (32768-60999), which the kernel hands to
# port-0 listeners and outgoing connections of tests running alongside (a unit test's listener
# once took an integration test's chosen port between the check and the bind).
ctrl_free_port() { # the port after it is free too: tests put the health probes there
    for _ in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16; do
        fp=$((20000 + $(od -An -N2 -tu2 /dev/urandom | tr -d ' ') % 12000))
        ss -ltn 2>/dev/null | grep -q ":$fp \|:$((fp + 1)) " || break
    done
    echo "$fp"
}

# The test job runner for namespace $ns in the background.
runner_start() {
    "$runner" --interval-ms 200 -n "$ns" >"$tmp/runner.log" 2>&1 &
    rpid=$!
    it_on_exit "kill $rpid 2>/dev/null || true; wait $rpid 2>/dev/null || true"
}

# ---- objects ---------------------------------------------------------------------------------
# A test Job in LocalQueue lq: tjob NAME GPUS RUNTIME [PRIORITY_CLASS] [SUSPEND]
# [extra spec.template.spec yaml] [extra annotations, flow-map entries]
tjob() {
    pc=""
    [ -z "${4:-}" ] || pc="kueue.x-k8s.io/priority-class: $4"
    cat <<EOT | k apply -f - >/dev/null || fail "create Job $1"
apiVersion: batch.test.sluice.dev/v1
kind: Job
metadata:
  name: $1
  namespace: $ns
  labels: {kueue.x-k8s.io/queue-name: lq, $pc}
  annotations: {test.sluice.dev/runtime-seconds: "$3"${7:+, $7}}
spec:
  suspend: ${5:-true}
  parallelism: 1
  completions: 1
  template:
    spec:
      restartPolicy: Never
      ${6:-}
      containers:
      - name: main
        image: busybox
        resources: {requests: {cpu: 100m, nvidia.com/gpu: $2}}
EOT
}

jget() { k get $TJ -n "$ns" "$1" -o jsonpath="$2"; }
# The Workload name of Job $1 (Kueue's naming: job-<name>-<hash>).
wl_of() {
    k get workloads.kueue.x-k8s.io -n "$ns" -o jsonpath="{range .items[?(@.metadata.ownerReferences[0].name==\"$1\")]}{.metadata.name}{end}"
}
wget_() { k get workloads.kueue.x-k8s.io -n "$ns" "$1" -o jsonpath="$2"; }
# A field of Workload $1's condition $2: its status, reason, message, lastTransitionTime.
wcond() { wget_ "$1" "{.status.conditions[?(@.type==\"$2\")].status}"; }
wreason() { wget_ "$1" "{.status.conditions[?(@.type==\"$2\")].reason}"; }
wmsg() { wget_ "$1" "{.status.conditions[?(@.type==\"$2\")].message}"; }
wtime() { wget_ "$1" "{.status.conditions[?(@.type==\"$2\")].lastTransitionTime}"; }
# Wait (20 s) for the Workload of Job $1 and print its name: w=$(wl_await JOB)
wl_await() {
    wj=$1
    until_ 20 "a Workload for Job $wj" '[ -n "$(wl_of "$wj")" ]'
    wl_of "$wj"
}

# Fail unless the events of $ns include every REASON: ctrl_events_have REASON...
ctrl_events_have() {
    ev=$(k get events -n "$ns" -o jsonpath='{range .items[*]}{.reason}{" "}{end}')
    for r in "$@"; do
        case " $ev " in *" $r "*) ;; *) fail "no $r event (have: $ev)" ;; esac
    done
}

# Poll until a shell condition holds: until_ SECONDS WHAT 'shell condition'
until_() {
    secs=$1 what=$2 cond=$3
    deadline=$(($(date +%s) + secs))
    until eval "$cond" >/dev/null 2>&1; do
        [ "$(date +%s)" -lt "$deadline" ] || fail "timed out after ${secs}s waiting for $what"
        sleep 0.2
    done
}

# Mark test Job $1 Complete (as the job runner does when its runtime is over), now.
jcomplete() {
    now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
    k patch $TJ -n "$ns" "$1" --subresource=status --type merge -p \
        "{\"status\":{\"active\":0,\"ready\":0,\"succeeded\":1,\"completionTime\":\"$now\",\"conditions\":[{\"type\":\"Complete\",\"status\":\"True\",\"lastTransitionTime\":\"$now\"}]}}" >/dev/null ||
        fail "mark Job $1 Complete"
}

# ---- the invariant checker (issue 15) --------------------------------------------------------
# Record every change of the Workloads in $ns from now on (a watch), for ctrl_verify.
ctrl_trace() {
    k get workloads.kueue.x-k8s.io -n "$ns" -w --output-watch-events -o json >"$tmp/trace.json" 2>"$tmp/trace.err" &
    trace_pid=$!
    it_on_exit "kill $trace_pid 2>/dev/null || true"
}

# Replay the trace through `sluice verify` against the ClusterQueues named (and every Cohort): no
# ClusterQueue or cohort above its quota after any admission, no Workload admitted twice without a
# release, every Workload finished, admitted, deleted or pending with a reason: ctrl_verify CQ...
ctrl_verify() {
    sleep 1 # the watch catches up with the last changes
    kill "$trace_pid" 2>/dev/null || true
    wait "$trace_pid" 2>/dev/null || true
    k get clusterqueues "$@" -o json >"$tmp/queues.json" || fail "get ClusterQueues $*"
    k get cohorts.kueue.x-k8s.io -o json >"$tmp/cohorts.json" || fail "get Cohorts"
    vout=$("$sluice" verify "$tmp/queues.json" "$tmp/cohorts.json" "$tmp/trace.json" 2>&1) ||
        fail "sluice verify over the Workloads' watch trace: $vout"
    say "$(echo "$vout" | tail -n 1)"
}
