#!/bin/sh
# ctrl_rbac -- `sluice run` works with exactly the permissions of manifests/rbac.yaml: it runs as
# that ServiceAccount (its token, no admin), with leader election, through admission, a
# preemption (stop, restore, release) and completion, and never gets a 403.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/ctrl_lib.sh"

[ "${SLUICE_KUBE_EXTERNAL:-0}" = 0 ] || { say "SKIPPED on an external cluster (uses ServiceAccount tokens)"; exit 77; }
ctrl_install_crds
it_namespace
ctrl_sys_namespace
it_on_exit "k delete clusterrole,clusterrolebinding -l sluice-it=$sfx >/dev/null 2>&1"

# The shipped RBAC, renamed for this test (namespace, unique cluster-scoped names) and pointed
# at the test Job CRD's group.
sed -e "s/sluice-system/$sys/g" -e "s/name: sluice-manager-rolebinding$/name: sluice-manager-rolebinding-$sfx/" \
    -e "s/name: sluice-manager-role$/name: sluice-manager-role-$sfx/" \
    -e "s/name: sluice-manager-role}/name: sluice-manager-role-$sfx}/" \
    -e "s/apiGroups: \[batch\]/apiGroups: [batch.test.sluice.dev]/" \
    "$src/manifests/rbac.yaml" | k apply -f - >/dev/null || fail "apply manifests/rbac.yaml"
k label clusterrole "sluice-manager-role-$sfx" sluice-it="$sfx" >/dev/null
k label clusterrolebinding "sluice-manager-rolebinding-$sfx" sluice-it="$sfx" >/dev/null
# 1.20 creates a token Secret for every ServiceAccount.
until_ 30 "the ServiceAccount token" '[ -n "$(k get sa -n "$sys" sluice-controller-manager -o jsonpath="{.secrets[0].name}")" ]'
sec=$(k get sa -n "$sys" sluice-controller-manager -o jsonpath='{.secrets[0].name}')
token=$(k get secret -n "$sys" "$sec" -o jsonpath='{.data.token}' | base64 -d)
cat >"$tmp/sa.kubeconfig" <<EOT
apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "$SLUICE_KUBE_SERVER", certificate-authority: "$SLUICE_KUBE_CA"}}]
users: [{name: sa, user: {token: "$token"}}]
contexts: [{name: c, context: {cluster: c, user: sa, namespace: $sys}}]
current-context: c
EOT

cq=it-rbac-$sfx
ctrl_wpcs "lo-$sfx=1" "hi-$sfx=10"
ctrl_queues "$cq" "gpu-$sfx cpu=8 nvidia.com/gpu=2" "preemption: {withinClusterQueue: LowerPriority}"
ctrl_trace

KUBECONFIG_ADMIN=$KUBECONFIG
# The shipped configuration: its Lease and Secret names are the ones the Role grants by name.
ctrl_start op --kubeconfig "$tmp/sa.kubeconfig" --config "$src/manifests/config/controller_manager_config.yaml" \
    --namespace "$sys" --leader-elect --identity rbac-op
until_ 20 "leadership" 'grep -q "rbac-op acquired the lease" "$tmp/op.log"'
runner_start
tjob low 2 3600 "lo-$sfx"
until_ 30 "low running" '[ "$(jget low "{.status.active}")" = 1 ]'
tjob high 2 3600 "hi-$sfx"
until_ 40 "high running after preempting low" '[ "$(jget high "{.status.active}")" = 1 ] && [ "$(jget low "{.spec.suspend}")" = true ]'
until_ 30 "low released" '[ "$(wcond "$(wl_of low)" QuotaReserved)" = False ]'
jcomplete high
until_ 30 "low readmitted" '[ "$(jget low "{.status.active}")" = 1 ]'
until_ 20 "high's finalizer removed" '[ -z "$(wget_ "$(wl_of high)" "{.metadata.finalizers}")" ]'
until_ 20 "ClusterQueue status" '[ "$(k get clusterqueue $cq -o jsonpath="{.status.admittedWorkloads}")" = 1 ]'
k delete $TJ -n "$ns" low >/dev/null
until_ 30 "low's Workload deleted with its Job" '[ -z "$(wl_of low)" ]'
ctrl_stop op
ctrl_verify "$cq"
[ "$KUBECONFIG" = "$KUBECONFIG_ADMIN" ] || fail "KUBECONFIG changed"
if grep -qi "forbidden\|HTTP 403" "$tmp/op.log"; then
    fail "sluice needed a permission the manifest lacks: $(grep -i "forbidden\|HTTP 403" "$tmp/op.log" | head -n 3)"
fi
say "as the ServiceAccount of manifests/rbac.yaml: lease, admission, preemption, completion, deletion -- no 403"
say "PASS"
