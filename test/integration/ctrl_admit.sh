#!/bin/sh
# ctrl_admit -- `sluice run` against the real API server: a Job held suspended gets a Workload
# (Kueue's name, owner, finalizer), is admitted into the flavor that fits (status.admission
# written first), is unsuspended with that flavor's node selector and Kueue's labels, runs,
# completes, and its Workload is Finished with the quota released and the finalizer removed.
# A Job created running without an admission is suspended. A Workload created directly is
# admitted too. Queue statuses follow. SIGTERM -> 0.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/ctrl_lib.sh"

ctrl_install_crds
it_namespace
ctrl_trace
cq=it-admit-$sfx
ctrl_flavor "small-$sfx"
ctrl_flavor "big-$sfx" "tolerations: [{key: gpu, operator: Exists, effect: NoSchedule}]"
ctrl_cq "$cq" "small-$sfx cpu=8 nvidia.com/gpu=2; big-$sfx cpu=8 nvidia.com/gpu=4"
ctrl_lq lq "$cq"

ctrl_start op
runner_start

# 3 GPUs do not fit the small flavor (2): the big one is chosen.
tjob train 3 3600
w=$(wl_await train)
case "$w" in job-train-?????) ;; *) fail "Workload name $w is not Kueue's job-train-<hash>" ;; esac
[ "$(wget_ "$w" '{.metadata.finalizers[0]}')" = kueue.x-k8s.io/resource-in-use ] || fail "no finalizer on $w"
[ "$(wget_ "$w" '{.metadata.ownerReferences[0].kind}/{.metadata.ownerReferences[0].controller}')" = "Job/true" ] ||
    fail "owner reference: $(wget_ "$w" '{.metadata.ownerReferences}')"
until_ 20 "Workload $w admitted" '[ "$(wcond "$w" Admitted)" = True ]'
[ "$(wcond "$w" QuotaReserved)" = True ] || fail "QuotaReserved not True"
[ "$(wget_ "$w" '{.status.admission.clusterQueue}')" = "$cq" ] || fail "admitted to $(wget_ "$w" '{.status.admission.clusterQueue}')"
fl=$(wget_ "$w" '{.status.admission.podSetAssignments[0].flavors.nvidia\.com/gpu}')
[ "$fl" = "big-$sfx" ] || fail "gpu flavor $fl, want big-$sfx"
until_ 20 "Job train unsuspended" '[ "$(jget train "{.spec.suspend}")" = false ]'
[ "$(jget train '{.spec.template.spec.nodeSelector.pool}')" = "big-$sfx" ] ||
    fail "nodeSelector: $(jget train '{.spec.template.spec.nodeSelector}')"
[ "$(jget train '{.spec.template.spec.tolerations[0].key}')" = gpu ] || fail "flavor toleration not merged"
[ "$(jget train '{.spec.template.metadata.labels.kueue\.x-k8s\.io/podset}')" = main ] || fail "podset label"
[ "$(jget train '{.spec.template.metadata.labels.kueue\.x-k8s\.io/cluster-queue-name}')" = "$cq" ] || fail "cluster-queue label"
[ "$(jget train '{.spec.template.metadata.annotations.kueue\.x-k8s\.io/workload}')" = "$w" ] || fail "workload annotation"
say "Job train: Workload $w admitted to $cq in flavor $fl, started with nodeSelector pool=big-$sfx"

until_ 20 "ClusterQueue status counts" '[ "$(k get clusterqueue $cq -o jsonpath="{.status.reservingWorkloads}/{.status.conditions[?(@.type==\"Active\")].status}")" = "1/True" ]'
until_ 30 "LocalQueue status" '[ "$(k get localqueue -n $ns lq -o jsonpath="{.status.admittedWorkloads}")" = 1 ]'

# A second 3-GPU Job does not fit while train runs: it stays suspended with the explanation.
tjob second 3 0
w2=$(wl_await second)
until_ 20 "second's pending explanation" '[ "$(wreason "$w2" QuotaReserved)" = Pending ] || [ -n "$(wmsg "$w2" QuotaReserved)" ]'
[ "$(jget second '{.spec.suspend}')" = true ] || fail "second started while the quota is taken"
say "second waits: $(wmsg "$w2" QuotaReserved)"

# train completes: Finished, finalizer gone, and second gets the quota.
jcomplete train
until_ 30 "Workload $w Finished" '[ "$(wcond "$w" Finished)" = True ]'
[ "$(wreason "$w" Finished)" = Succeeded ] || fail "Finished reason"
until_ 20 "finalizer removed from $w" '[ -z "$(wget_ "$w" "{.metadata.finalizers}")" ]'
until_ 30 "second admitted after train finished" '[ "$(wcond "$w2" Admitted)" = True ]'
until_ 30 "second completes" '[ "$(wcond "$w2" Finished)" = True ]'
say "train Finished (Succeeded), finalizer removed; second admitted then Finished"

# A Job created running, without an admission, is suspended before anything else.
kill "$rpid" 2>/dev/null; wait "$rpid" 2>/dev/null || true
tjob rogue 1 0 "" false
# Suspension and the restart after admission follow each other within a second, so the order
# is checked in the operator's log and the Job's events.
until_ 20 "rogue suspended" 'grep -q "job $ns/rogue: suspended" "$tmp/op.log"'
until_ 20 "rogue admitted and restarted" '[ "$(jget rogue "{.spec.suspend}")" = false ] && [ "$(wcond "$(wl_of rogue)" Admitted)" = True ]'
ls_=$(grep -n "job $ns/rogue: suspended" "$tmp/op.log" | head -n 1 | cut -d: -f1)
la_=$(grep -n "workload $ns/job-rogue-.*: admitted" "$tmp/op.log" | head -n 1 | cut -d: -f1)
[ "$ls_" -lt "$la_" ] || fail "rogue admitted (log line $la_) before it was suspended (line $ls_)"
k get events -n "$ns" --field-selector involvedObject.name=rogue -o jsonpath='{.items[*].reason}' | grep -q Stopped ||
    fail "no Stopped event on rogue"
say "a Job created running without admission was suspended, then admitted"

# A Workload created directly (no Job) is queued and admitted too; deleting it frees the quota.
k apply -f - >/dev/null <<EOT || fail "create a Workload directly"
apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata: {name: direct, namespace: $ns}
spec:
  queueName: lq
  podSets:
  - name: main
    count: 2
    template:
      spec:
        restartPolicy: Never
        containers:
        - {name: c, image: busybox, resources: {requests: {cpu: 100m, nvidia.com/gpu: 1}}}
EOT
until_ 20 "the direct Workload admitted" '[ "$(wcond direct Admitted)" = True ]'
[ "$(wget_ direct '{.status.admission.podSetAssignments[0].resourceUsage.nvidia\.com/gpu}')" = 2 ] ||
    fail "direct usage: $(wget_ direct '{.status.admission.podSetAssignments[0].resourceUsage}')"
k delete workloads.kueue.x-k8s.io -n "$ns" direct >/dev/null || fail "delete the direct Workload"
say "a Workload created directly was admitted (2 GPUs) and deleted"

# Events with Kueue's reasons.
ctrl_events_have CreatedWorkload QuotaReserved Admitted Started FinishedWorkload
ctrl_stop op
grep -q "quota released\|admitted to $cq" "$tmp/op.log" || fail "log lacks admissions: $(ctrl_log op)"
ctrl_verify "$cq"
say "PASS"
