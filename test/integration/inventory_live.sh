#!/bin/sh
# inventory_live -- `sluice inventory --kubeconfig` and `sluice graph --kubeconfig` list Nodes and
# Kueue's queue objects from a real API server (paged LISTs, the v1beta2 CRDs) and say what the
# offline commands say about the same objects: examples/platform's queues on examples/nodes.yaml.
. "$(dirname "$0")/lib.sh"

sluice=${SLUICE_BINARY_DIR:-$src/build}/sluice
[ -x "$sluice" ] || fail "no sluice binary at $sluice (SLUICE_BINARY_DIR)"
work=$(mktemp -d)
cleanup_inventory() {
    k delete -f "$src/examples/nodes.yaml" --ignore-not-found --wait=false >/dev/null 2>&1 || true
    for f in 50-localqueues 40-clusterqueues 30-cohort 10-flavors; do
        k delete -f "$src/examples/platform/$f.yaml" --ignore-not-found --wait=false >/dev/null 2>&1 || true
    done
    rm -rf "$work"
}
it_on_exit cleanup_inventory

k apply --validate=false -f "$src/crds/" >/dev/null || fail "kubectl apply -f crds/"
for n in $(k apply --validate=false -f "$src/crds/" --dry-run=client -o name); do
    k wait --for condition=Established --timeout=60s "$n" >/dev/null || fail "$n not Established"
done
wait_for 30 "discovery of the ClusterQueue CRD" k get clusterqueues.kueue.x-k8s.io
k apply -f "$src/examples/platform/00-namespaces.yaml" >/dev/null || fail "apply namespaces"
for f in 10-flavors 30-cohort 40-clusterqueues 50-localqueues; do
    k apply -f "$src/examples/platform/$f.yaml" >/dev/null || fail "apply $f.yaml"
done
k apply -f "$src/examples/nodes.yaml" >/dev/null || fail "apply examples/nodes.yaml"
wait_for 30 "the 23 example Nodes" sh -c "kubectl get nodes -o name | grep -c '^node/' | grep -qx 23"

"$sluice" inventory --kubeconfig "$KUBECONFIG" >"$work/live.txt" 2>"$work/live.err" ||
    fail "sluice inventory --kubeconfig: $(cat "$work/live.err")"
say "$(cat "$work/live.txt")"
grep -q '^a100-sxm4-80gb  *NVIDIA-A100-SXM4-80GB  *81920  *none  *6  *40 ' "$work/live.txt" ||
    fail "the A100 pool (6 nodes, 40 GPUs) is not in the live inventory"
grep -q '^node gpu-a100-6: labelled as a GPU node\|^  node gpu-a100-6: labelled as a GPU node' "$work/live.txt" ||
    fail "gpu-a100-6 (no device plugin) is not flagged"
grep -q '^a100    nvidia.com/gpu  48       40           6      OVER$' "$work/live.txt" ||
    fail "quota against capacity from the cluster's ClusterQueues is missing"

# The same objects offline give the same pools and the same comparison.
"$sluice" inventory "$src/examples/nodes.yaml" "$src/examples/platform/10-flavors.yaml" \
    "$src/examples/platform/30-cohort.yaml" "$src/examples/platform/40-clusterqueues.yaml" \
    >"$work/offline.txt" || fail "sluice inventory offline"
# (The pools differ in one way: the node lifecycle controller has tainted the kubelet-less
# Nodes node.kubernetes.io/not-ready, which the suggested flavors must not tolerate.)
sed -n '/^quota against capacity:/,$p' "$work/offline.txt" >"$work/offline.quota"
sed -n '/^quota against capacity:/,$p' "$work/live.txt" >"$work/live.quota"
diff "$work/offline.quota" "$work/live.quota" >&2 || fail "live and offline quota comparisons differ"
"$sluice" inventory --kubeconfig "$KUBECONFIG" --flavors >"$work/flavors.yaml" ||
    fail "sluice inventory --flavors --kubeconfig"
if grep -q 'node.kubernetes.io' "$work/flavors.yaml"; then
    fail "a suggested flavor tolerates a node condition taint: $(cat "$work/flavors.yaml")"
fi

"$sluice" graph --kubeconfig "$KUBECONFIG" -o svg >"$work/graph.svg" 2>"$work/graph.err" ||
    fail "sluice graph --kubeconfig: $(cat "$work/graph.err")"
grep -q 'problem: flavor a100: nominal quota of nvidia.com/gpu is 48' "$work/graph.err" ||
    fail "the live graph does not report the A100 quota above capacity: $(cat "$work/graph.err")"
grep -q '>team-training/nightly</text>' "$work/graph.svg" || fail "the live graph lacks a LocalQueue"

# A server that is not there: exit 2 with the request named.
expect_fail "/nonexistent/kubeconfig" "$sluice" inventory --kubeconfig /nonexistent/kubeconfig
say "ok: live inventory and graph match the offline ones"
