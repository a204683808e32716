# ctrl_lib.sh -- helpers for the operator's end-to-end tests (test/integration/ctrl_*.sh):
# install the CRDs and the test Job CRD, start `sluice run` and the test job runner as
# processes, poll objects. Sourced after lib.sh.
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
    for n in clusterqueues resourceflavors localqueues workloads cohorts workloadpriorityclasses; do
        k wait --for condition=Established --timeout=60s "crd/$n.kueue.x-k8s.io" >/dev/null ||
            fail "CRD $n not Established"
    done
    k wait --for condition=Established --timeout=60s crd/$TJ >/dev/null || fail "test Job CRD"
    wait_for 30 "discovery of the CRDs" sh -c "kubectl get clusterqueues >/dev/null && kubectl get $TJ -A >/dev/null"
}

# Start `sluice run` as a background process: ctrl_start NAME [extra flags...]; its pid is in
# $pid_NAME, its log in $tmp/NAME.log. Waits until its caches are synced.
ctrl_start() {
    name=$1
    shift
    "$sluice" run --kubeconfig "$KUBECONFIG" --job-resource batch.test.sluice.dev/v1/jobs \
        --namespace sluice-system --health-probe-bind-address 0 --webhook-port 0 "$@" >"$tmp/$name.log" 2>&1 &
    eval "pid_$name=$!"
    it_on_exit "kill \$pid_$name 2>/dev/null || true; wait \$pid_$name 2>/dev/null || true"
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

ctrl_log() { cat "$tmp/$1.log"; }

# The test job runner for namespace $ns in the background.
runner_start() {
    "$runner" --interval-ms 200 -n "$ns" >"$tmp/runner.log" 2>&1 &
    rpid=$!
    it_on_exit "kill $rpid 2>/dev/null || true; wait $rpid 2>/dev/null || true"
}

# A test Job: tjob NAME GPUS RUNTIME [PRIORITY_CLASS] [SUSPEND] [extra spec.template.spec yaml]
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
  annotations: {test.sluice.dev/runtime-seconds: "$3"}
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
wcond() { wget_ "$1" "{.status.conditions[?(@.type==\"$2\")].status}"; }

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
