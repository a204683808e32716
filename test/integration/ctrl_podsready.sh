#!/bin/sh
# ctrl_podsready -- waitForPodsReady with the real API server and a 5 s timeout: a Job whose pods
# never become ready is evicted (Evicted PodsReadyTimeout, event, re-suspended, quota released),
# held for its requeue backoff (Requeued=False, requeueState), requeued (BackoffFinished) and
# readmitted -- across a SIGKILL of the operator in the middle of its backoff -- and deactivated
# once backoffLimitCount is used up; a Job whose pods are ready stays admitted with
# PodsReady=True Started; a running Job that loses a pod goes WaitForRecovery and comes back
# Recovered; with blockAdmission, nothing is admitted while an admitted Job is not ready. Also:
# a priority-class label changed on a suspended Job moves its Workload's priority, and a Job
# owned by a JobSet (the JobSet integration enabled) gets no Workload of its own.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/ctrl_lib.sh"

ctrl_install_crds
it_namespace
cq=it-podsready-$sfx
ctrl_wpcs "low-$sfx=100" "high-$sfx=1000"
ctrl_queues "$cq" "gpu-$sfx cpu=8 nvidia.com/gpu=4"
ctrl_trace
ctrl_config config <<EOT
integrations: {frameworks: [batch/job, jobset.x-k8s.io/jobset]}
waitForPodsReady:
  timeout: 5s
  recoveryTimeout: 30s
  requeuingStrategy: {timestamp: Eviction, backoffLimitCount: 2, backoffBaseSeconds: 20, backoffMaxSeconds: 20}
EOT
# A test Job with the job runner's readiness annotation: pjob NAME GPUS READY [PRIORITY_CLASS]
pjob() { tjob "$1" "$2" 3600 "${4:-}" true "" "test.sluice.dev/ready: \"$3\""; }

start=$(date +%s)
ctrl_start op --config "$tmp/config.yaml"
runner_start

# ---- ready pods: admitted, PodsReady=True Started, and it stays so past the timeout ----------
pjob good 1 true
until_ 30 "good admitted and running" '[ "$(jget good "{.status.ready}")" = 1 ]'
wg=$(wl_of good)
until_ 20 "good PodsReady=True" '[ "$(wcond "$wg" PodsReady)" = True ]'
[ "$(wreason "$wg" PodsReady)" = Started ] || fail "good PodsReady reason $(wreason "$wg" PodsReady)"
say "good: admitted, PodsReady=True Started"

# ---- pods never ready: evicted on the timeout, held for the backoff, requeued, readmitted ----
pjob stuck 1 false
until_ 30 "stuck started" '[ "$(jget stuck "{.spec.suspend}")" = false ]'
ws=$(wl_of stuck)
# The admission time, read while the Admitted condition still holds it: the release after the
# timeout moves Admitted to False, and on a loaded machine that can come before the next poll.
# One read for both (5 s, not 3: a busy CI machine took longer than 3 s between two reads).
adm=$(wget_ "$ws" '{.status.conditions[?(@.type=="Admitted")].status}/{.status.conditions[?(@.type=="Admitted")].lastTransitionTime}')
t_adm=${adm#*/}
[ "${adm%%/*}" = True ] || fail "stuck started but its Workload is not Admitted (machine too slow for a 5 s timeout?)"
until_ 20 "stuck PodsReady=False WaitForStart" '[ "$(wreason "$ws" PodsReady)" = WaitForStart ]'
[ "$(wcond "$ws" PodsReady)" = False ] || fail "stuck PodsReady status"
until_ 20 "stuck evicted by the PodsReady timeout" '[ "$(wcond "$ws" Evicted)" = True ]'
[ "$(wreason "$ws" Evicted)" = PodsReadyTimeout ] || fail "Evicted reason $(wreason "$ws" Evicted)"
[ "$(wmsg "$ws" Evicted)" = "Exceeded the PodsReady timeout $ns/$ws" ] || fail "Evicted message: $(wmsg "$ws" Evicted)"
t_ev=$(wtime "$ws" Evicted)
d=$(($(date -d "$t_ev" +%s) - $(date -d "$t_adm" +%s)))
[ "$d" -ge 5 ] && [ "$d" -le 20 ] || fail "evicted ${d}s after admission (timeout 5s)"
[ "$(wget_ "$ws" '{.status.requeueState.count}')" = 1 ] || fail "requeueState.count $(wget_ "$ws" '{.status.requeueState.count}')"
[ -n "$(wget_ "$ws" '{.status.requeueState.requeueAt}')" ] || fail "no requeueState.requeueAt"
until_ 20 "stuck re-suspended and its quota released" '[ "$(jget stuck "{.spec.suspend}")" = true ] && [ -z "$(wget_ "$ws" "{.status.admission}")" ]'
[ "$(wcond "$ws" Requeued)" = False ] && [ "$(wreason "$ws" Requeued)" = PodsReadyTimeout ] ||
    fail "Requeued during the backoff: $(wcond "$ws" Requeued) $(wreason "$ws" Requeued)"
ctrl_events_have EvictedDueToPodsReadyTimeout
say "stuck: evicted ${d}s after admission (PodsReadyTimeout), re-suspended, released, held (Requeued=False)"

# The operator dies in the middle of the backoff; the next one takes it from the Workload.
ctrl_kill op
ctrl_start op2 --config "$tmp/config.yaml"
until_ 60 "stuck's backoff finished" '[ "$(wcond "$ws" Requeued)" = True ]'
[ "$(wreason "$ws" Requeued)" = BackoffFinished ] || fail "Requeued reason $(wreason "$ws" Requeued)"
[ -z "$(wget_ "$ws" '{.status.requeueState.requeueAt}')" ] || fail "requeueAt kept after the backoff"
t_req=$(wtime "$ws" Requeued)
t_at=$(date -d "$t_ev" +%s)
[ $(($(date -d "$t_req" +%s) - t_at)) -ge 20 ] || fail "requeued before the 20 s backoff ($t_ev -> $t_req)"
# Readmitted: Admitted=True with Evicted reset to False (one read: the next timeout is 5 s away).
until_ 30 "stuck readmitted, Evicted reset" '[ "$(wget_ "$ws" "{.status.conditions[?(@.type==\"Admitted\")].status}/{.status.conditions[?(@.type==\"Evicted\")].status}")" = True/False ]'
[ "$(wcond "$wg" PodsReady)" = True ] && [ "$(jget good '{.spec.suspend}')" = false ] || fail "good was disturbed"
say "after SIGKILL: backoff finished (BackoffFinished), stuck readmitted; good still running"

# Second timeout: requeue #2 (the limit), then the third one deactivates it.
until_ 60 "second eviction" '[ "$(wget_ "$ws" "{.status.requeueState.count}")" = 2 ]'
until_ 90 "stuck deactivated at the requeuing limit" '[ "$(wget_ "$ws" "{.spec.active}")" = false ]'
until_ 20 "Evicted DeactivatedDueToRequeuingLimitExceeded" '[ "$(wreason "$ws" Evicted)" = DeactivatedDueToRequeuingLimitExceeded ]'
until_ 20 "stuck stopped and released" '[ "$(jget stuck "{.spec.suspend}")" = true ] && [ -z "$(wget_ "$ws" "{.status.admission}")" ]'
[ -z "$(wget_ "$ws" '{.status.requeueState}')" ] || fail "requeueState kept after deactivation: $(wget_ "$ws" '{.status.requeueState}')"
say "stuck: second timeout requeued (#2), third deactivated (RequeuingLimitExceeded), stopped"

# ---- a running Job loses its pods: WaitForRecovery, then Recovered -----------------------------
# (recoveryTimeout 30 s: the two polls and the annotation between them took more than 3 s at load
# 16, and the Job was evicted before it could recover.)
k annotate $TJ -n "$ns" good test.sluice.dev/ready=false --overwrite >/dev/null
until_ 20 "good WaitForRecovery" '[ "$(wreason "$wg" PodsReady)" = WaitForRecovery ]'
k annotate $TJ -n "$ns" good test.sluice.dev/ready=true --overwrite >/dev/null
until_ 20 "good Recovered" '[ "$(wreason "$wg" PodsReady)" = Recovered ] && [ "$(wcond "$wg" PodsReady)" = True ]'
[ "$(wcond "$wg" Evicted)" != True ] || fail "good evicted during a short recovery"
say "good: WaitForRecovery, then Recovered within recoveryTimeout"

# ---- priority-class label on a suspended Job: the Workload follows ----------------------------
pjob big 8 true "low-$sfx"
wb=$(wl_await big)
[ "$(wget_ "$wb" '{.spec.priority}')" = 100 ] || fail "big priority $(wget_ "$wb" '{.spec.priority}')"
k label $TJ -n "$ns" big kueue.x-k8s.io/priority-class=high-$sfx --overwrite >/dev/null
until_ 20 "big's Workload priority 1000" '[ "$(wget_ "$wb" "{.spec.priority}")" = 1000 ]'
[ "$(wget_ "$wb" '{.spec.priorityClassRef.name}')" = "high-$sfx" ] || fail "priorityClassRef $(wget_ "$wb" '{.spec.priorityClassRef.name}')"
say "big: priority-class label low -> high moved its Workload's priority (100 -> 1000)"

# ---- a Job owned by a JobSet: the JobSet's Workload covers it, no Workload of its own ---------
cat <<EOT | k apply -f - >/dev/null || fail "create the child Job"
apiVersion: batch.test.sluice.dev/v1
kind: Job
metadata:
  name: child
  namespace: $ns
  labels: {kueue.x-k8s.io/queue-name: lq}
  ownerReferences:
  - {apiVersion: jobset.x-k8s.io/v1alpha2, kind: JobSet, name: parent, uid: 00000000-0000-0000-0000-000000000001, controller: true}
spec:
  suspend: true
  parallelism: 1
  template:
    spec:
      restartPolicy: Never
      containers: [{name: main, image: busybox, resources: {requests: {cpu: 100m}}}]
EOT
pjob after 1 true
wl_await after >/dev/null
[ -z "$(wl_of child)" ] || fail "the JobSet's child Job got a Workload: $(wl_of child)"
say "child of a JobSet: no Workload"

# ---- blockAdmission: nothing is admitted while an admitted Job's pods are not ready ----------
ctrl_stop op2
k delete $TJ -n "$ns" big >/dev/null || fail "delete big"
sed 's/^  timeout: 5s$/  timeout: 8s\n  blockAdmission: true/' "$tmp/config.yaml" >"$tmp/block.yaml"
grep -q "blockAdmission: true" "$tmp/block.yaml" || fail "block.yaml: $(cat "$tmp/block.yaml")"
ctrl_start op3 --config "$tmp/block.yaml"
pjob blocker 1 false
until_ 30 "blocker admitted" '[ -n "$(wl_of blocker)" ] && [ "$(wcond "$(wl_of blocker)" Admitted)" = True ]'
wk=$(wl_of blocker)
pjob waiter 1 true
ww=$(wl_await waiter)
until_ 20 "waiter waiting for PodsReady" '[ "$(wreason "$ww" QuotaReserved)" = WaitingForPodsReady ]'
[ "$(wmsg "$ww" QuotaReserved)" = "waiting for all admitted workloads to be in PodsReady condition" ] ||
    fail "waiter message: $(wmsg "$ww" QuotaReserved)"
[ "$(wcond "$ww" QuotaReserved)" = False ] || fail "waiter admitted next to a not-ready Job"
until_ 30 "blocker evicted, waiter admitted" '[ "$(wreason "$wk" Evicted)" = PodsReadyTimeout ] && [ "$(wcond "$ww" Admitted)" = True ]'
say "blockAdmission: waiter held (WaitingForPodsReady) until blocker timed out, then admitted"

ctrl_stop op3
ctrl_verify "$cq"
say "PASS in $(($(date +%s) - start))s"
