#!/bin/sh
# ctrl_preempt -- preemption and restart with the real API server: a higher-priority Job
# preempts a lower one in the same ClusterQueue (Evicted + Preempted conditions, the low Job
# re-suspended with its template restored, its quota released), the low one is readmitted when
# the high one completes; the operator is killed (SIGKILL) in the middle and a new one rebuilds
# its state from the Workloads: no double admission, a full queue stays full.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/ctrl_lib.sh"

ctrl_install_crds
it_namespace
ctrl_trace
cq=it-preempt-$sfx
ctrl_wpcs "low-$sfx=100" "high-$sfx=1000"
ctrl_queues "$cq" "gpu-$sfx cpu=8 nvidia.com/gpu=4" "preemption: {withinClusterQueue: LowerPriority}"

ctrl_start op
runner_start

tjob low 4 3600 "low-$sfx"
until_ 30 "low admitted and running" '[ "$(jget low "{.status.active}")" = 1 ]'
wl=$(wl_of low)
[ "$(wget_ "$wl" '{.spec.priority}')" = 100 ] || fail "low priority: $(wget_ "$wl" '{.spec.priority}')"
t_low=$(wtime "$wl" QuotaReserved)
say "low admitted and running ($wl)"

# Restart in the middle: SIGKILL (no chance to clean up), a Job of the same priority arrives
# while no operator runs, then a new operator starts from the API alone.
ctrl_kill op
tjob same 4 3600 "low-$sfx"
ctrl_start op2
ws=$(wl_await same)
until_ 20 "same to wait with an explanation" '[ -n "$(wmsg "$ws" QuotaReserved)" ]'
sleep 2
[ "$(wcond "$ws" QuotaReserved)" = False ] || fail "same got quota next to low: double admission"
[ "$(jget same '{.spec.suspend}')" = true ] || fail "same started"
[ "$(jget low '{.spec.suspend}')" = false ] || fail "low was stopped by the restart"
[ "$(wtime "$wl" QuotaReserved)" = "$t_low" ] ||
    fail "low's admission was rewritten by the new operator"
grep -q "caches synced: [1-9][0-9]* workloads" "$tmp/op2.log" || fail "op2 did not rebuild: $(ctrl_log op2)"
! grep -q "job-low-.*admitted" "$tmp/op2.log" || fail "op2 admitted low again: $(ctrl_log op2)"
k delete $TJ -n "$ns" same >/dev/null
say "after SIGKILL and restart: low still admitted once and running, same waits (full queue)"

# Preemption: high takes the whole quota from low.
tjob high 4 3600 "high-$sfx"
wh=$(wl_await high)
until_ 30 "low evicted" '[ "$(wcond "$wl" Evicted)" = True ]'
[ "$(wcond "$wl" Preempted)" = True ] || fail "low: Preempted not True"
[ "$(wreason "$wl" Preempted)" = InClusterQueue ] || fail "Preempted reason $(wreason "$wl" Preempted)"
[ "$(wreason "$wl" Evicted)" = Preempted ] || fail "Evicted reason"
until_ 30 "low re-suspended and restored" '[ "$(jget low "{.spec.suspend}")" = true ] && [ -z "$(jget low "{.spec.template.spec.nodeSelector}")" ]'
until_ 30 "low's quota released" '[ -z "$(wget_ "$wl" "{.status.admission}")" ] && [ "$(wcond "$wl" QuotaReserved)" = False ]'
[ "$(wcond "$wl" Requeued)" = True ] || fail "low not Requeued"
until_ 30 "high admitted and running" '[ "$(wcond "$wh" Admitted)" = True ] && [ "$(jget high "{.status.active}")" = 1 ]'
[ "$(jget high '{.spec.template.spec.nodeSelector.pool}')" = "gpu-$sfx" ] || fail "high's nodeSelector"
[ "$(jget low '{.spec.suspend}')" = true ] || fail "low runs next to high"
say "high preempted low (InClusterQueue): low re-suspended, restored, quota released, requeued"

# high completes: low is admitted again and restarted.
jcomplete high
until_ 30 "low readmitted" '[ "$(wcond "$wl" Admitted)" = True ] && [ "$(jget low "{.spec.suspend}")" = false ]'
[ "$(wcond "$wl" Evicted)" = False ] || fail "Evicted not reset"
case "$(wmsg "$wl" Evicted)" in Previously:*) ;; *) fail "Evicted message: $(wmsg "$wl" Evicted)" ;; esac
ctrl_events_have Preempted Stopped
ctrl_stop op2
say "high Finished; low readmitted and restarted"
ctrl_verify "$cq"
say "PASS"
