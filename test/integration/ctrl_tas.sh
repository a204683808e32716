#!/bin/sh
# ctrl_tas -- `sluice run` with topology-aware scheduling (issue 17), live on the 1.20 API server.
# Issue 17's example: Topology levels rack + kubernetes.io/hostname, 2 racks x 4 Nodes x 8 GPUs
# (Node objects created directly, as ctrl_nodes.sh does), a ResourceFlavor with topologyName and
# nodeLabels, rack-1 partly used by a bound Pod (4 GPUs on r1-n1, no Workload of sluice's). The
# operator is started before the Topology exists: it watches Topologies (their CRD is installed)
# and starts watching Nodes and bound Pods at the first one. A Job of 5 pods x 8 GPUs with
# podset-required-topology: <rack label> fits the quota but no rack: it stays pending with Kueue's
# message. A Job of 4 pods x 8 GPUs is admitted with a topologyAssignment naming the 4 rack-2
# nodes (v1beta2 slices), and starts with nodeSelector rack=rack-2 and the kueue.x-k8s.io/tas
# label. A restart reads the admission back: four's pods count on rack-2 again, so a second
# 4-pod Job waits (3 free nodes in rack-1, none in rack-2). A failed node recorded in four's
# status.unhealthyNodes while the operator is down is replaced when it starts again.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/ctrl_lib.sh"

command -v jq >/dev/null || skip "jq not installed"
ctrl_install_crds
it_namespace
ctrl_trace
cq=it-tas-$sfx
fl=tas-$sfx
topo=dc-$sfx
rack=cloud.example.com/rack
ctrl_delete_at_exit clusterqueue "$cq"
ctrl_delete_at_exit resourceflavor "$fl"
ctrl_delete_at_exit topology.kueue.x-k8s.io "$topo"
nodes=""
for r in 1 2; do for i in 1 2 3 4; do nodes="$nodes it-$sfx-r$r-n$i"; done; done
# shellcheck disable=SC2086
ctrl_delete_at_exit node $nodes

for n in $nodes; do
    r=${n#it-"$sfx"-r}
    r=${r%%-*}
    k apply -f - >/dev/null <<EOT || fail "create Node $n"
apiVersion: v1
kind: Node
metadata:
  name: $n
  labels: {it-pool: "$sfx", $rack: rack-$r, kubernetes.io/hostname: $n}
status:
  allocatable: {cpu: "64", memory: 256Gi, nvidia.com/gpu: "8", pods: "110"}
  capacity: {cpu: "64", memory: 256Gi, nvidia.com/gpu: "8", pods: "110"}
  conditions:
  - {type: Ready, status: "True", reason: KubeletReady, message: ok}
EOT
    # The API server's TaintNodesByCondition admission taints a new Node not-ready; the node
    # lifecycle controller (not run here) lifts it once the Node is Ready: done by hand.
    k taint node "$n" node.kubernetes.io/not-ready:NoSchedule- >/dev/null 2>&1 || true
done
# rack-1 partly used: a Pod bound to r1-n1 holding 4 of its GPUs (no kubelet: it stays Pending,
# bound, which is what counts).
k apply -f - >/dev/null <<EOT || fail "create the bound Pod"
apiVersion: v1
kind: Pod
metadata: {name: other, namespace: $ns}
spec:
  nodeName: it-$sfx-r1-n1
  restartPolicy: Never
  automountServiceAccountToken: false
  containers:
  - {name: c, image: busybox, resources: {limits: {cpu: "1", nvidia.com/gpu: "4"}}}
EOT

hp=$(ctrl_free_port)
ctrl_start op --health-probe-bind-address "127.0.0.1:$hp"
it_on_fail 'k get workloads.kueue.x-k8s.io -n $ns -o yaml | grep -E "^    name:|message|reason|topologyAssignment" ; k get nodes -l it-pool=$sfx -o wide; grep -iv "write:\|informer" $tmp/op.log | tail -n 40; curl -s http://127.0.0.1:$hp/metrics | grep -E "^sluice_(flavor|node)" | head -30; k get node -l it-pool=$sfx -o yaml | head -60'
grep -q "topology-aware scheduling is off\|topology-aware scheduling off" "$tmp/op.log" &&
    fail "TAS off though the Topology CRD is installed: $(grep -i topolog "$tmp/op.log")"

k apply -f - >/dev/null <<EOT || fail "create the Topology and the queues"
apiVersion: kueue.x-k8s.io/v1beta2
kind: Topology
metadata: {name: $topo}
spec:
  levels:
  - nodeLabel: $rack
  - nodeLabel: kubernetes.io/hostname
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: $fl}
spec: {nodeLabels: {it-pool: "$sfx"}, topologyName: $topo}
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
      - {name: cpu, nominalQuota: 512}
      - {name: nvidia.com/gpu, nominalQuota: 128}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: lq, namespace: $ns}
spec: {clusterQueue: $cq}
EOT
wait_for 30 "the operator to watch Nodes for TAS" grep -q "topology-aware scheduling: watching Nodes" "$tmp/op.log"

# A test Job of $2 pods x 8 GPUs asking for one rack: tasjob NAME PODS
tasjob() {
    k apply -f - >/dev/null <<EOT || fail "create Job $1"
apiVersion: batch.test.sluice.dev/v1
kind: Job
metadata:
  name: $1
  namespace: $ns
  labels: {kueue.x-k8s.io/queue-name: lq}
  annotations: {test.sluice.dev/runtime-seconds: "3600"}
spec:
  suspend: true
  parallelism: $2
  completions: $2
  template:
    metadata:
      annotations: {kueue.x-k8s.io/podset-required-topology: $rack}
    spec:
      restartPolicy: Never
      containers:
      - name: main
        image: busybox
        resources: {requests: {cpu: "1", nvidia.com/gpu: "8"}, limits: {nvidia.com/gpu: "8"}}
EOT
}

tasjob five 5
w5=$(wl_await five)
want5="topology \"$topo\" allows to fit only 4 out of 5 pod(s)"
until_ 30 "five's pending explanation" 'wmsg "$w5" QuotaReserved | grep -qF "$want5"'
[ "$(wcond "$w5" QuotaReserved)" = False ] || fail "five reserved quota: $(wcond "$w5" QuotaReserved)"
wmsg "$w5" QuotaReserved | grep -qF "couldn't assign flavors to pod set main: " ||
    fail "five's message: $(wmsg "$w5" QuotaReserved)"
say "five waits: $(wreason "$w5" QuotaReserved): $(wmsg "$w5" QuotaReserved)"

tasjob four 4
w4=$(wl_await four)
until_ 30 "four admitted" '[ "$(wcond "$w4" Admitted)" = True ]'
wget_ "$w4" '{.status.admission.podSetAssignments[0].topologyAssignment}' >"$tmp/ta.json"
say "four's topologyAssignment: $(cat "$tmp/ta.json")"
# v1beta2 slices back to one "host count" line per domain (prefix/suffix/roots or universal).
jq -r '.levels as $l | .slices[] | . as $s
  | ($s.valuesPerLevel[-1] | if .universal then [range($s.domainCount) | $s.valuesPerLevel[-1].universal]
      else [.individual.roots[] | (($s.valuesPerLevel[-1].individual.prefix // "") + . + ($s.valuesPerLevel[-1].individual.suffix // ""))] end) as $hosts
  | ($s.podCounts | if .universal then [range($s.domainCount) | $s.podCounts.universal] else .individual end) as $counts
  | range($s.domainCount) | "\($hosts[.]) \($counts[.])"' "$tmp/ta.json" | sort >"$tmp/domains.txt" ||
    fail "topologyAssignment not in v1beta2's shape: $(cat "$tmp/ta.json")"
printf 'it-%s-r2-n1 1\nit-%s-r2-n2 1\nit-%s-r2-n3 1\nit-%s-r2-n4 1\n' "$sfx" "$sfx" "$sfx" "$sfx" >"$tmp/want.txt"
cmp -s "$tmp/domains.txt" "$tmp/want.txt" || fail "four's domains: $(cat "$tmp/domains.txt")"
[ "$(jq -r '.levels | join(",")' "$tmp/ta.json")" = kubernetes.io/hostname ] ||
    fail "levels: $(jq -c .levels "$tmp/ta.json")"

# The Job starts with what a template can carry of the assignment: the rack, and Kueue's TAS label.
until_ 30 "four started" '[ "$(jget four "{.spec.suspend}")" = false ]'
sel=$(jget four '{.spec.template.spec.nodeSelector}')
[ "$(jget four "{.spec.template.spec.nodeSelector.cloud\.example\.com/rack}")" = rack-2 ] ||
    fail "four's nodeSelector: $sel"
[ "$(jget four "{.spec.template.spec.nodeSelector.it-pool}")" = "$sfx" ] || fail "four's nodeSelector: $sel"
[ "$(jget four "{.spec.template.metadata.labels.kueue\.x-k8s\.io/tas}")" = true ] ||
    fail "four's template labels: $(jget four '{.spec.template.metadata.labels}')"
say "four started with nodeSelector $sel"
[ "$(wcond "$w5" QuotaReserved)" = False ] || fail "five admitted after four"

# Restart: the admission is read back (its pods counted on rack-2 by the engine), nothing moves.
ctrl_stop op
ctrl_start op2
sleep 3
[ "$(wcond "$w4" Admitted)" = True ] || fail "four lost its admission after the restart"
[ "$(wcond "$w5" QuotaReserved)" = False ] || fail "five admitted after the restart"
wmsg "$w5" QuotaReserved | grep -qF "$want5" || fail "five's message after the restart: $(wmsg "$w5" QuotaReserved)"
wget_ "$w4" '{.status.admission.podSetAssignments[0].topologyAssignment}' | cmp -s - "$tmp/ta.json" ||
    fail "four's topologyAssignment changed after the restart"
grep -q "topology-aware scheduling: watching Nodes" "$tmp/op2.log" || fail "op2 does not watch Nodes"
# The read-back counts four's pods on rack-2 again: another 4-pod Job finds 3 free nodes in
# rack-1 and none in rack-2 (without the read-back rack-2 would look empty and take it).
tasjob again 4
wa=$(wl_await again)
until_ 30 "again's pending explanation" 'wmsg "$wa" QuotaReserved | grep -qF "allows to fit only 3 out of 4 pod(s)"'
[ "$(wcond "$wa" QuotaReserved)" = False ] || fail "again reserved quota"
say "after a restart: four admitted on the same nodes, five still waits, again waits: $(wmsg "$wa" QuotaReserved)"

# Failed-node replacement across a restart (nothing forgotten): with the operator down, four's
# node r2-n1 is deleted and its failure recorded as sluice records it before the replacement
# (Kueue's status.unhealthyNodes), and a fifth rack-2 node joins. The next operator acts on the
# record -- a Node deleted meanwhile brings no event: four's pod of r2-n1 is placed on r2-n5
# (its required rack), the record is removed, four stays admitted.
ctrl_stop op2
n1=it-$sfx-r2-n1
n5=it-$sfx-r2-n5
ctrl_delete_at_exit node "$n5"
k apply -f - >/dev/null <<EOT || fail "create Node $n5"
apiVersion: v1
kind: Node
metadata:
  name: $n5
  labels: {it-pool: "$sfx", $rack: rack-2, kubernetes.io/hostname: $n5}
status:
  allocatable: {cpu: "64", memory: 256Gi, nvidia.com/gpu: "8", pods: "110"}
  capacity: {cpu: "64", memory: 256Gi, nvidia.com/gpu: "8", pods: "110"}
  conditions:
  - {type: Ready, status: "True", reason: KubeletReady, message: ok}
EOT
k taint node "$n5" node.kubernetes.io/not-ready:NoSchedule- >/dev/null 2>&1 || true
k delete node "$n1" >/dev/null || fail "delete Node $n1"
k patch workloads.kueue.x-k8s.io -n "$ns" "$w4" --subresource=status --type merge \
    -p "{\"status\":{\"unhealthyNodes\":[{\"name\":\"$n1\"}]}}" >/dev/null ||
    fail "record $n1 in four's status.unhealthyNodes"
[ "$(wget_ "$w4" '{.status.unhealthyNodes[0].name}')" = "$n1" ] ||
    fail "status.unhealthyNodes not kept by the API server: $(wget_ "$w4" '{.status}')"
ctrl_start op3
until_ 30 "four's failed node replaced after the restart" \
    '[ -z "$(wget_ "$w4" "{.status.unhealthyNodes}")" ]'
grep -q "Replaced unhealthy node $n1" "$tmp/op3.log" ||
    fail "op3 did not replace $n1: $(grep -i "$n1\|unhealthy" "$tmp/op3.log")"
[ "$(wcond "$w4" Admitted)" = True ] || fail "four lost its admission: $(wreason "$w4" Evicted)"
[ "$(wcond "$w4" Evicted)" != True ] || fail "four evicted: $(wmsg "$w4" Evicted)"
wget_ "$w4" '{.status.admission.podSetAssignments[0].topologyAssignment}' >"$tmp/ta3.json"
jq -r '.levels as $l | .slices[] | . as $s
  | ($s.valuesPerLevel[-1] | if .universal then [range($s.domainCount) | $s.valuesPerLevel[-1].universal]
      else [.individual.roots[] | (($s.valuesPerLevel[-1].individual.prefix // "") + . + ($s.valuesPerLevel[-1].individual.suffix // ""))] end) as $hosts
  | ($s.podCounts | if .universal then [range($s.domainCount) | $s.podCounts.universal] else .individual end) as $counts
  | range($s.domainCount) | "\($hosts[.]) \($counts[.])"' "$tmp/ta3.json" | sort >"$tmp/domains3.txt" ||
    fail "topologyAssignment not in v1beta2's shape: $(cat "$tmp/ta3.json")"
printf 'it-%s-r2-n2 1\nit-%s-r2-n3 1\nit-%s-r2-n4 1\nit-%s-r2-n5 1\n' "$sfx" "$sfx" "$sfx" "$sfx" >"$tmp/want3.txt"
cmp -s "$tmp/domains3.txt" "$tmp/want3.txt" || fail "four's domains after the replacement: $(cat "$tmp/domains3.txt")"
[ "$(wcond "$wa" QuotaReserved)" = False ] || fail "again admitted after the replacement"
say "after a restart with $n1 recorded failed: four replaced on $(tr '\n' ' ' <"$tmp/domains3.txt")"

ctrl_stop op3
ctrl_verify "$cq"
say "PASS"
