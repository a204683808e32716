#!/bin/sh
# ctrl_reclaim -- Kueue's ReclaimablePods under `sluice run` against the real API server: a test
# Job of 4 parallel pods x 1 GPU fills a ClusterQueue of 4 GPUs; a second Job of 2 GPUs waits with
# QuotaReserved=False. Two of the first Job's pods succeed (its status, as the Job controller
# writes it): the operator writes the Workload's status.reclaimablePods (main: 2), the engine
# gives their 2 GPUs back, and the second Job is admitted while the first still runs; the
# ClusterQueue's usage says 4. The Workloads' watch trace passes `sluice verify`, which counts
# the reclaimed pods as Kueue does.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/ctrl_lib.sh"

ctrl_install_crds
it_namespace
ctrl_trace
cq=it-reclaim-$sfx
ctrl_queues "$cq" "gpu-$sfx cpu=8 nvidia.com/gpu=4"
ctrl_start op

k apply -f - >/dev/null <<EOT || fail "create Job wide"
apiVersion: batch.test.sluice.dev/v1
kind: Job
metadata:
  name: wide
  namespace: $ns
  labels: {kueue.x-k8s.io/queue-name: lq}
spec:
  suspend: true
  parallelism: 4
  completions: 4
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: main
        image: busybox
        resources: {requests: {cpu: 100m, nvidia.com/gpu: 1}}
EOT
w1=$(wl_await wide)
until_ 20 "Workload $w1 admitted" '[ "$(wcond "$w1" Admitted)" = True ]'
until_ 20 "Job wide released" '[ "$(jget wide "{.spec.suspend}")" = false ]'
tjob second 2 600
w2=$(wl_await second)
until_ 20 "second waiting" '[ "$(wcond "$w2" QuotaReserved)" = False ]'
[ -z "$(wget_ "$w1" '{.status.reclaimablePods}')" ] || fail "reclaimablePods before any pod finished"
say "wide (4 x 1 GPU) admitted to $cq; second (2 GPUs) waits: $(wmsg "$w2" QuotaReserved)"

k patch $TJ -n "$ns" wide --subresource=status --type merge -p '{"status":{"active":2,"succeeded":2}}' >/dev/null ||
    fail "report 2 of wide's pods succeeded"
until_ 20 "reclaimablePods on $w1" '[ "$(wget_ "$w1" "{.status.reclaimablePods[0].name}={.status.reclaimablePods[0].count}")" = main=2 ]'
until_ 20 "second admitted on the reclaimed quota" '[ "$(wcond "$w2" Admitted)" = True ]'
[ "$(jget wide '{.spec.suspend}')" = false ] || fail "wide stopped"
[ "$(wcond "$w1" Admitted)" = True ] || fail "wide's Workload lost its admission"
until_ 20 "$cq's usage at 4 GPUs" '[ "$(k get clusterqueue "$cq" -o jsonpath="{.status.flavorsUsage[0].resources[?(@.name==\"nvidia.com/gpu\")].total}")" = 4 ]'
say "2 of wide's pods succeeded: reclaimablePods main=2, second admitted while wide runs, $cq uses 4 GPUs"

jcomplete wide
jcomplete second
until_ 20 "both finished" '[ "$(wcond "$w1" Finished)" = True ] && [ "$(wcond "$w2" Finished)" = True ]'
ctrl_stop op
ctrl_verify "$cq"
say "PASS"
