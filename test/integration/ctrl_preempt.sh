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
cq=it-preempt-$sfx
it_on_exit "k delete clusterqueue $cq --ignore-not-found --wait=false >/dev/null 2>&1; k delete resourceflavor gpu-$sfx --ignore-not-found --wait=false >/dev/null 2>&1; k delete workloadpriorityclass low-$sfx high-$sfx --ignore-not-found >/dev/null 2>&1"
k apply -f - >/dev/null <<EOT || fail "create queues"
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: gpu-$sfx}
spec: {nodeLabels: {pool: gpu-$sfx}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: WorkloadPriorityClass
metadata: {name: low-$sfx}
value: 100
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: WorkloadPriorityClass
metadata: {name: high-$sfx}
value: 1000
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: $cq}
spec:
  namespaceSelector: {}
  preemption: {withinClusterQueue: LowerPriority}
  resourceGroups:
  - coveredResources: [cpu, nvidia.com/gpu]
    flavors:
    - name: gpu-$sfx
      resources: [{name: cpu, nominalQuota: 8}, {name: nvidia.com/gpu, nominalQuota: 4}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: lq, namespace: $ns}
spec: {clusterQueue: $cq}
EOT

ctrl_start op
runner_start

tjob low 4 3600 "low-$sfx"
until_ 30 "low admitted and running" '[ "$(jget low "{.status.active}")" = 1 ]'
wl=$(wl_of low)
[ "$(wget_ "$wl" '{.spec.priority}')" = 100 ] || fail "low priority: $(wget_ "$wl" '{.spec.priority}')"
t_low=$(wget_ "$wl" '{.status.conditions[?(@.type=="QuotaReserved")].lastTransitionTime}')
say "low admitted and running ($wl)"

# Restart in the middle: SIGKILL (no chance to clean up), a Job of the same priority arrives
# while no operator runs, then a new operator starts from the API alone.
eval "kill -KILL \$pid_op"
wait "$pid_op" 2>/dev/null || true
tjob same 4 3600 "low-$sfx"
ctrl_start op2
until_ 20 "a Workload for same" '[ -n "$(wl_of same)" ]'
ws=$(wl_of same)
until_ 20 "same to wait with an explanation" '[ -n "$(wget_ "$ws" "{.status.conditions[?(@.type==\"QuotaReserved\")].message}")" ]'
sleep 2
[ "$(wcond "$ws" QuotaReserved)" = False ] || fail "same got quota next to low: double admission"
[ "$(jget same '{.spec.suspend}')" = true ] || fail "same started"
[ "$(jget low '{.spec.suspend}')" = false ] || fail "low was stopped by the restart"
[ "$(wget_ "$wl" '{.status.conditions[?(@.type=="QuotaReserved")].lastTransitionTime}')" = "$t_low" ] ||
    fail "low's admission was rewritten by the new operator"
grep -q "caches synced: [1-9][0-9]* workloads" "$tmp/op2.log" || fail "op2 did not rebuild: $(ctrl_log op2)"
! grep -q "job-low-.*admitted" "$tmp/op2.log" || fail "op2 admitted low again: $(ctrl_log op2)"
k delete $TJ -n "$ns" same >/dev/null
say "after SIGKILL and restart: low still admitted once and running, same waits (full queue)"

# Preemption: high takes the whole quota from low.
tjob high 4 3600 "high-$sfx"
wh=""
until_ 20 "a Workload for high" '[ -n "$(wl_of high)" ]'
wh=$(wl_of high)
until_ 30 "low evicted" '[ "$(wcond "$wl" Evicted)" = True ]'
[ "$(wcond "$wl" Preempted)" = True ] || fail "low: Preempted not True"
[ "$(wget_ "$wl" '{.status.conditions[?(@.type=="Preempted")].reason}')" = InClusterQueue ] ||
    fail "Preempted reason $(wget_ "$wl" '{.status.conditions[?(@.type=="Preempted")].reason}')"
[ "$(wget_ "$wl" '{.status.conditions[?(@.type=="Evicted")].reason}')" = Preempted ] || fail "Evicted reason"
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
[ "$(wget_ "$wl" '{.status.conditions[?(@.type=="Evicted")].status}')" = False ] || fail "Evicted not reset"
case "$(wget_ "$wl" '{.status.conditions[?(@.type=="Evicted")].message}')" in
Previously:*) ;; *) fail "Evicted message: $(wget_ "$wl" '{.status.conditions[?(@.type=="Evicted")].message}')" ;;
esac
ev=$(k get events -n "$ns" -o jsonpath='{range .items[*]}{.reason}{" "}{end}')
for r in Preempted Stopped; do
    case " $ev " in *" $r "*) ;; *) fail "no $r event (have: $ev)" ;; esac
done
ctrl_stop op2
say "high Finished; low readmitted and restarted"
say "PASS"
