#!/bin/sh
# ctrl_nodes -- `sluice run` watching Nodes and bound Pods (issue 18): Node objects created
# directly (the API server takes them without a kubelet) feed the engine. With the Configuration's
# sluice.dev/fragmentation-aware-admission, a Workload whose one pod asks 8 GPUs, within quota,
# waits with the engine's NoFittingNode explanation because no Node of its flavor has 8. The
# ClusterQueue's 12 GPUs of quota against the 8 the flavor's two Nodes
# hold give it the warning condition sluice.dev/QuotaExceedsCapacity=True, and /metrics carries
# the comparison per flavor and resource.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/ctrl_lib.sh"

command -v curl >/dev/null || skip "curl not installed"
ctrl_install_crds
it_namespace
ctrl_trace
cq=it-nodes-$sfx
fl=nodes-$sfx
ctrl_delete_at_exit clusterqueue "$cq"
ctrl_delete_at_exit resourceflavor "$fl"
for i in 1 2; do ctrl_delete_at_exit node "it-$sfx-$i"; done
k apply -f - >/dev/null <<EOT || fail "create the queues"
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: $fl}
spec: {nodeLabels: {it-pool: "$sfx"}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: $cq}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu, nvidia.com/gpu]
    flavors:
    - name: $fl
      resources:
      - {name: cpu, nominalQuota: 64}
      - {name: nvidia.com/gpu, nominalQuota: 12}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: lq, namespace: $ns}
spec: {clusterQueue: $cq}
EOT
for i in 1 2; do
    k apply -f - >/dev/null <<EOT || fail "create Node it-$sfx-$i"
apiVersion: v1
kind: Node
metadata: {name: it-$sfx-$i, labels: {it-pool: "$sfx"}}
status:
  allocatable: {cpu: "16", memory: 64Gi, nvidia.com/gpu: "4", pods: "110"}
  capacity: {cpu: "16", memory: 64Gi, nvidia.com/gpu: "4", pods: "110"}
  conditions:
  - {type: Ready, status: "True", reason: KubeletReady, message: ok}
EOT
done

hp=$(ctrl_free_port)
ctrl_config cfg <<EOT
metadata:
  annotations:
    sluice.dev/fragmentation-aware-admission: "true"
EOT
ctrl_start op --config "$tmp/cfg.yaml" --health-probe-bind-address "127.0.0.1:$hp"

cqcond() { k get clusterqueue "$cq" -o jsonpath="{.status.conditions[?(@.type==\"sluice.dev/QuotaExceedsCapacity\")].$1}"; }
want_msg="nominal quota of nvidia.com/gpu is 12 ($cq 12), above the 8 allocatable on the 2 nodes flavor $fl selects"
until_ 30 "the ClusterQueue's QuotaExceedsCapacity condition" '[ "$(cqcond status)" = True ] && cqcond message | grep -qF "$want_msg"'

[ "$(cqcond reason)" = NominalQuotaAboveAllocatable ] || fail "reason: $(cqcond reason)"
say "ClusterQueue condition: $(cqcond message)"

# A Workload of one pod requesting `$2` GPUs: gwl NAME GPUS
gwl() {
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
        - {name: c, image: busybox, resources: {requests: {cpu: "1", nvidia.com/gpu: "$2"}, limits: {nvidia.com/gpu: "$2"}}}
EOT
}
gwl wide 8
until_ 30 "wide's pending explanation" '[ -n "$(wmsg wide QuotaReserved)" ]'
wmsg wide QuotaReserved | grep -q "couldn't place pod set main" || fail "wide's message: $(wmsg wide QuotaReserved)"
[ "$(wcond wide QuotaReserved)" != True ] || fail "wide admitted though no node has 8 GPUs"
say "wide waits: $(wmsg wide QuotaReserved)"

# /metrics: the flavor's comparison.
scrape() { curl -s -o "$tmp/m.txt" "http://127.0.0.1:$hp/metrics" || fail "GET /metrics"; }
val() { awk -v k="$1 " 'index($0, k) == 1 { print $NF; exit }' "$tmp/m.txt"; }
l="flavor=\"$fl\",resource=\"nvidia.com/gpu\""
until_ 20 "the flavor's capacity in /metrics" 'scrape && [ "$(val "sluice_flavor_allocatable{$l}")" = 8 ]'
[ "$(val "sluice_flavor_nominal_quota{$l}")" = 12 ] || fail "nominal: $(grep sluice_flavor "$tmp/m.txt")"
[ "$(val "sluice_flavor_quota_exceeds_capacity{$l}")" = 1 ] || fail "over: $(grep sluice_flavor "$tmp/m.txt")"
[ "$(val "sluice_flavor_nodes{$l}")" = 2 ] || fail "nodes: $(grep sluice_flavor "$tmp/m.txt")"
say "$(grep "^sluice_flavor_.*$fl" "$tmp/m.txt")"

ctrl_stop op
ctrl_verify "$cq"
say "PASS"
