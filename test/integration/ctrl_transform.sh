#!/bin/sh
# ctrl_transform -- `sluice run` with a Configuration's resources section (issue 17): a MIG slice
# counts as 10Gi of example.com/gpu-memory, example.com/rdma is excluded. A Workload requesting
# two slices is admitted with 20Gi of gpu-memory in its resourceUsage; one requesting cpu and the
# excluded resource is admitted on cpu; a third that would exceed the 40Gi waits, named by the
# transformed resource. Settings with no effect are logged (a LocalQueue's fairSharing).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/ctrl_lib.sh"

ctrl_install_crds
it_namespace
ctrl_trace
cq=it-xform-$sfx
ctrl_queues "$cq" "gpu-$sfx cpu=8 example.com/gpu-memory=40Gi"
ctrl_config cfg <<EOT
resources:
  excludeResourcePrefixes: [example.com/rdma]
  transformations:
  - input: nvidia.com/mig-1g.10gb
    strategy: Replace
    outputs: {example.com/gpu-memory: 10Gi}
EOT
ctrl_start op --config "$tmp/cfg.yaml"
grep -q "no effect.*resources" "$tmp/op.log" && fail "resources listed as having no effect: $(ctrl_log op)"

# A Workload of one pod requesting `$2` (flow-map entries) in LocalQueue lq: xwl NAME REQUESTS
xwl() {
    k apply -f - >/dev/null <<EOT || fail "create Workload $1"
apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata: {name: $1, namespace: $ns}
spec:
  queueName: lq
  podSets:
  - name: main
    count: 1
    template:
      spec:
        restartPolicy: Never
        containers:
        - {name: c, image: busybox, resources: {requests: {$2}, limits: {$2}}}
EOT
}

xwl mig "cpu: 1, nvidia.com/mig-1g.10gb: 2"
until_ 20 "the MIG Workload admitted" '[ "$(wcond mig Admitted)" = True ]'
u=$(wget_ mig '{.status.admission.podSetAssignments[0].resourceUsage.example\.com/gpu-memory}')
[ "$u" = 21474836480 ] || [ "$u" = 20Gi ] ||
    fail "mig usage: $(wget_ mig '{.status.admission.podSetAssignments[0].resourceUsage}')"
[ -z "$(wget_ mig '{.status.admission.podSetAssignments[0].resourceUsage.nvidia\.com/mig-1g\.10gb}')" ] ||
    fail "the replaced MIG resource is still in the usage"
[ "$(wget_ mig '{.status.admission.podSetAssignments[0].flavors.example\.com/gpu-memory}')" = "gpu-$sfx" ] ||
    fail "mig flavors: $(wget_ mig '{.status.admission.podSetAssignments[0].flavors}')"
say "2 MIG slices admitted as 20Gi of example.com/gpu-memory"

xwl nic "cpu: 2, example.com/rdma: 1"
until_ 20 "the Workload with an excluded resource admitted" '[ "$(wcond nic Admitted)" = True ]'
say "cpu + excluded example.com/rdma admitted on cpu"

xwl big "cpu: 1, nvidia.com/mig-1g.10gb: 3"
until_ 20 "big's pending explanation" '[ -n "$(wmsg big QuotaReserved)" ]'
[ "$(wcond big Admitted)" != True ] || fail "big admitted beyond 40Gi"
wmsg big QuotaReserved | grep -q "example.com/gpu-memory" || fail "big's message: $(wmsg big QuotaReserved)"
say "big waits: $(wmsg big QuotaReserved)"
k delete workloads.kueue.x-k8s.io -n "$ns" mig >/dev/null || fail "delete mig"
until_ 20 "big admitted once mig is gone" '[ "$(wcond big Admitted)" = True ]'

# A LocalQueue's fairSharing (admission fair sharing) has no effect in sluice: logged.
k apply -f - >/dev/null <<EOT || fail "create LocalQueue weighted"
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: weighted, namespace: $ns}
spec: {clusterQueue: $cq, fairSharing: {weight: "2"}}
EOT
until_ 20 "the no-effect setting logged" 'grep -q "LocalQueue $ns/weighted: spec.fairSharing: .*has no effect" "$tmp/op.log"'
say "LocalQueue fairSharing logged as having no effect"

ctrl_stop op
ctrl_verify "$cq"
say "PASS"
