#!/bin/sh
# job_runner -- the test Job CRD installs and the test job runner (test/kube-env/job-runner.c)
# moves test Jobs like a cluster would: suspended Jobs are left alone, an unsuspended Job gets
# startTime and active/ready = parallelism, then Complete with succeeded = completions after the
# runtime of its annotation; outcome=Failed ends in Failed; suspending a running Job stops it.
. "$(dirname "$0")/lib.sh"

runner=${SLUICE_JOB_RUNNER:-}
[ -x "$runner" ] || fail "SLUICE_JOB_RUNNER does not name the built job-runner (got '$runner')"

k apply -f "$src/test/testdata/job-crd.yaml" >/dev/null || fail "apply the test Job CRD"
k wait --for condition=Established --timeout=60s crd/jobs.batch.test.sluice.dev >/dev/null ||
    fail "test Job CRD not Established"
wait_for 30 "discovery of the test Job CRD" k get jobs.batch.test.sluice.dev -A
it_namespace

job() { # name suspend parallelism completions runtime [outcome]
    cat <<EOT
apiVersion: batch.test.sluice.dev/v1
kind: Job
metadata:
  name: $1
  namespace: $ns
  labels: {kueue.x-k8s.io/queue-name: user-queue}
  annotations: {test.sluice.dev/runtime-seconds: "$5", test.sluice.dev/outcome: "${6:-Succeeded}"}
spec:
  suspend: $2
  parallelism: $3
  completions: $4
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: main
        image: busybox
        resources: {requests: {cpu: 500m, memory: 64Mi, nvidia.com/gpu: 1}}
EOT
}
get() { k get jobs.batch.test.sluice.dev -n "$ns" "$1" -o jsonpath="$2"; }
cond() { get "$1" "{.status.conditions[?(@.type==\"$2\")].status}"; }

# Schema: suspend survives (the 1.20 batch/v1 Job would drop it), defaults apply, bad values fail.
job held true 2 4 0 | k apply -f - >/dev/null || fail "create Job held"
[ "$(get held '{.spec.suspend}')" = true ] || fail "spec.suspend was not kept"
job plain true 1 1 0 | sed '/parallelism:/d; /suspend:/d' | k apply -f - >/dev/null || fail "create Job plain"
[ "$(get plain '{.spec.parallelism}/{.spec.suspend}/{.spec.backoffLimit}')" = "1/false/6" ] ||
    fail "defaults: $(get plain '{.spec.parallelism}/{.spec.suspend}/{.spec.backoffLimit}')"
k delete jobs.batch.test.sluice.dev -n "$ns" plain >/dev/null
bad_job() { job bad false 1 1 0 | sed 's/restartPolicy: Never/restartPolicy: Always/' | k apply -f -; }
expect_fail 'spec.template.spec.restartPolicy' bad_job

# One pass: the suspended Job is untouched.
"$runner" --once >/dev/null || fail "job-runner --once failed"
[ -z "$(get held '{.status.startTime}')" ] || fail "a suspended Job was started"

# Unsuspend: started with active = ready = parallelism; runtime 0 -> complete on the next pass.
k patch jobs.batch.test.sluice.dev -n "$ns" held --type merge -p '{"spec":{"suspend":false}}' >/dev/null
"$runner" --once >/dev/null || fail "job-runner --once failed"
[ -n "$(get held '{.status.startTime}')" ] || fail "unsuspended Job has no startTime"
[ "$(get held '{.status.active}/{.status.ready}')" = "2/2" ] || fail "active/ready: $(get held '{.status.active}/{.status.ready}')"
[ -z "$(cond held Complete)" ] || fail "Job completed in the same pass it started"
"$runner" --once >/dev/null || fail "job-runner --once failed"
[ "$(cond held Complete)" = True ] || fail "Job with runtime 0 not Complete after the second pass"
[ "$(get held '{.status.succeeded}/{.status.active}')" = "4/0" ] || fail "succeeded/active: $(get held '{.status.succeeded}/{.status.active}')"
[ -n "$(get held '{.status.completionTime}')" ] || fail "no completionTime"
say "suspended Job untouched; unsuspended Job started then Complete"

# Background mode with a runtime: running for ~2 s, then Complete; a Failed outcome; a Job
# suspended while running is stopped (startTime removed, Suspended=True).
"$runner" --interval-ms 100 -n "$ns" >"${TMPDIR:-/tmp}/it-runner-$$.log" 2>&1 &
rpid=$!
it_on_exit "kill $rpid 2>/dev/null; wait $rpid 2>/dev/null; rm -f ${TMPDIR:-/tmp}/it-runner-$$.log"
t0=$(date +%s)
job timed false 1 1 2 | k apply -f - >/dev/null
job failing false 1 1 0 Failed | k apply -f - >/dev/null
job stopped false 3 3 3600 | k apply -f - >/dev/null
wait_for 30 "timed to start" sh -c "[ -n \"\$(kubectl get jobs.batch.test.sluice.dev -n $ns timed -o jsonpath='{.status.startTime}')\" ]"
wait_for 40 "timed to complete" sh -c "[ \"\$(kubectl get jobs.batch.test.sluice.dev -n $ns timed -o jsonpath='{.status.conditions[?(@.type==\"Complete\")].status}')\" = True ]"
t1=$(date +%s)
[ $((t1 - t0)) -ge 2 ] || fail "Job with runtime 2 s completed after $((t1 - t0)) s"
wait_for 30 "failing to fail" sh -c "[ \"\$(kubectl get jobs.batch.test.sluice.dev -n $ns failing -o jsonpath='{.status.conditions[?(@.type==\"Failed\")].status}')\" = True ]"
[ "$(get failing '{.status.failed}')" = 1 ] || fail "failed count: $(get failing '{.status.failed}')"
wait_for 30 "stopped to start" sh -c "[ \"\$(kubectl get jobs.batch.test.sluice.dev -n $ns stopped -o jsonpath='{.status.active}')\" = 3 ]"
k patch jobs.batch.test.sluice.dev -n "$ns" stopped --type merge -p '{"spec":{"suspend":true}}' >/dev/null
wait_for 30 "stopped to be suspended" sh -c "[ \"\$(kubectl get jobs.batch.test.sluice.dev -n $ns stopped -o jsonpath='{.status.conditions[?(@.type==\"Suspended\")].status}')\" = True ]"
[ "$(get stopped '{.status.active}')" = 0 ] || fail "suspended Job still active: $(get stopped '{.status.active}')"
[ -z "$(get stopped '{.status.startTime}')" ] || fail "suspended Job kept its startTime"
[ -z "$(cond stopped Complete)" ] || fail "suspended Job completed"
kill -0 $rpid 2>/dev/null || fail "job-runner exited: $(cat "${TMPDIR:-/tmp}/it-runner-$$.log")"
say "runtime honoured ($((t1 - t0)) s), Failed outcome, suspension of a running Job"
say "PASS"
