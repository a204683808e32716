#!/bin/sh
# ctrl_lws -- LeaderWorkerSet under `sluice run` against the real API server (issue 14): the
# LeaderWorkerSet integration enabled with `pod`, its test CRD installed, sluice's mutating
# webhooks for LeaderWorkerSets and Pods and its validating one for LeaderWorkerSets registered,
# a ClusterQueue of 4 GPUs. The test plays LeaderWorkerSet's controller (the Pods its
# StatefulSets would make from the marked templates, with LeaderWorkerSet's labels) and its
# status.
#   - a LeaderWorkerSet of 3 replicas x (1 leader + 1 worker) x 1 GPU, queued, comes back from
#     its create with both pod templates marked (pod-suspending-parent, pod-group-serving,
#     queue name);
#   - one Workload per replica at once, before any Pod: Kueue's name
#     leaderworkerset-<name>-<i>-<hash>, owned by the LeaderWorkerSet, pod sets leader x 1 and
#     worker x 1, component-workload-index i;
#   - two replicas admitted, the third waits with QuotaReserved=False "insufficient quota";
#   - LeaderWorkerSet's Pods are marked into their replica's group (group and prebuilt Workload
#     name, total count 2, role leader / worker);
#   - with a replica ready, a queue change and a group-size change are refused;
#   - scaled down to 2 (the test deletes the third replica's Pods, as LeaderWorkerSet does), the third replica's Workload is deleted and replicas 0 and 1 run.
# Kubernetes 1.20 has no scheduling gates (1.26+): the API server drops the gate the pod webhook
# adds, so these Pods are never held and the admitted replicas' Pods cannot show their release
# with the flavor's node selector (test_ctrl_pods' leaderworkerset_workload_per_replica shows it
# against the in-memory API server). What 1.20 shows instead: a Pod of the waiting replica,
# released (ungated) without an admission, is stopped as Kueue stops one (TerminationTarget,
# deleted). SIGTERM -> 0.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/ctrl_lib.sh"

LWS=leaderworkersets.leaderworkerset.x-k8s.io
ctrl_install_crds
k apply -f "$src/test/data/crds-integrations/leaderworkerset.x-k8s.io_leaderworkersets.yaml" >/dev/null ||
    fail "apply the test LeaderWorkerSet CRD"
k wait --for condition=Established --timeout=60s "crd/$LWS" >/dev/null || fail "LeaderWorkerSet CRD not Established"
wait_for 30 "discovery of $LWS" sh -c "kubectl get $LWS -A >/dev/null"
ctrl_sys_namespace
it_namespace
cq=it-lws-$sfx
fl=gpu-$sfx
ctrl_flavor "$fl" "tolerations: [{key: gpu, operator: Exists, effect: NoSchedule}]"
ctrl_cq "$cq" "$fl cpu=64 memory=64Gi nvidia.com/gpu=4"
ctrl_lq lq "$cq"

base=it-$sfx
ctrl_delete_at_exit validatingwebhookconfiguration "$base-validating-webhook-configuration"
ctrl_delete_at_exit mutatingwebhookconfiguration "$base-mutating-webhook-configuration"
port=$(ctrl_free_port)
# hook OPERATIONS PATH NAME GROUP VERSION RESOURCE
hook() {
    cat <<EOT
- name: $3.kueue.x-k8s.io
  clientConfig: {url: "https://127.0.0.1:$port$2"}
  rules: [{apiGroups: ["$4"], apiVersions: [$5], operations: [$1], resources: [$6]}]
  objectSelector: {matchLabels: {sluice-it: "$sfx"}}
  failurePolicy: Fail
  sideEffects: None
  timeoutSeconds: 10
  admissionReviewVersions: [v1]
EOT
}
{
    printf 'apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingWebhookConfiguration\n'
    printf 'metadata: {name: %s-validating-webhook-configuration}\nwebhooks:\n' "$base"
    hook "CREATE, UPDATE" /validate-leaderworkerset-x-k8s-io-v1-leaderworkerset vleaderworkerset \
        leaderworkerset.x-k8s.io v1 leaderworkersets
    printf -- '---\napiVersion: admissionregistration.k8s.io/v1\nkind: MutatingWebhookConfiguration\n'
    printf 'metadata: {name: %s-mutating-webhook-configuration}\nwebhooks:\n' "$base"
    hook CREATE /mutate-leaderworkerset-x-k8s-io-v1-leaderworkerset mleaderworkerset \
        leaderworkerset.x-k8s.io v1 leaderworkersets
    hook CREATE /mutate--v1-pod mpod "" v1 pods
} | k apply -f - >/dev/null || fail "create the webhook configurations"
ctrl_config cfg <<EOT
integrations: {frameworks: [batch/job, pod, leaderworkerset.x-k8s.io/leaderworkerset]}
internalCertManagement: {enable: true, webhookServiceName: $base-webhook-service,
                         webhookSecretName: $base-webhook-server-cert}
EOT
ctrl_start op --config "$tmp/cfg.yaml" --namespace "$sys" --webhook-port "$port" \
    --webhook-cert-ip 127.0.0.1
for kc in validating mutating; do
    until_ 90 "caBundle in the $kc configuration" '[ -n "$(k get ${kc}webhookconfiguration $base-$kc-webhook-configuration -o jsonpath="{.webhooks[0].clientConfig.caBundle}")" ]'
done
ctrl_trace

# ---- the LeaderWorkerSet: held on create (its templates marked), a Workload per replica --------
# A pod template's YAML at indent $1 (spaces), 1 GPU, role $2.
tmpl() {
    cat <<EOT | sed "s/^/$1/"
metadata: {labels: {sluice-it: "$sfx", role: $2}}
spec:
  containers:
  - name: $2
    image: busybox
    resources: {requests: {cpu: 100m, memory: 100Mi, nvidia.com/gpu: 1}, limits: {nvidia.com/gpu: 1}}
EOT
}
{
    printf 'apiVersion: leaderworkerset.x-k8s.io/v1\nkind: LeaderWorkerSet\nmetadata:\n  name: serve\n  namespace: %s\n' "$ns"
    printf '  labels: {sluice-it: "%s", kueue.x-k8s.io/queue-name: lq}\n' "$sfx"
    printf 'spec:\n  replicas: 3\n  leaderWorkerTemplate:\n    size: 2\n    leaderTemplate:\n'
    tmpl "      " leader
    printf '    workerTemplate:\n'
    tmpl "      " worker
} | k create -f - >/dev/null || fail "create LeaderWorkerSet serve"
lget() { k get "$LWS" -n "$ns" serve -o jsonpath="$1"; }
for t in leaderTemplate workerTemplate; do
    a=$(lget "{.spec.leaderWorkerTemplate.$t.metadata.annotations.kueue\.x-k8s\.io/pod-suspending-parent} {.spec.leaderWorkerTemplate.$t.metadata.annotations.kueue\.x-k8s\.io/pod-group-serving} {.spec.leaderWorkerTemplate.$t.metadata.labels.kueue\.x-k8s\.io/queue-name}")
    [ "$a" = "leaderworkerset.x-k8s.io/leaderworkerset true lq" ] || fail "$t not marked by the webhook: '$a'"
done
say "LeaderWorkerSet serve created: both templates marked by the webhook (pod-suspending-parent, pod-group-serving, queue name)"
uid=$(lget '{.metadata.uid}')
# The Workload of replica $1 (by its component-workload-index annotation, owned by serve).
wl_replica() {
    k get workloads.kueue.x-k8s.io -n "$ns" -o jsonpath="{range .items[?(@.metadata.annotations.kueue\.x-k8s\.io/component-workload-index==\"$1\")]}{.metadata.name}{end}"
}
for i in 0 1 2; do
    until_ 20 "the Workload of replica $i" '[ -n "$(wl_replica $i)" ]'
    w=$(wl_replica "$i")
    case "$w" in "leaderworkerset-serve-$i-"?????) ;; *) fail "Workload name $w is not Kueue's leaderworkerset-serve-$i-<hash>" ;; esac
    [ "$(wget_ "$w" '{.metadata.ownerReferences[0].kind} {.metadata.ownerReferences[0].uid} {.metadata.ownerReferences[0].controller}')" = "LeaderWorkerSet $uid true" ] ||
        fail "$w owner: $(wget_ "$w" '{.metadata.ownerReferences}')"
    got=$(wget_ "$w" '{.spec.podSets[*].name}/{.spec.podSets[*].count}')
    [ "$got" = "leader worker/1 1" ] || fail "$w pod sets $got"
    eval "w$i=$w"
done
[ -z "$(k get pods -n "$ns" -o name)" ] || fail "Pods exist already"
say "one Workload per replica before any Pod: $w0 $w1 $w2 (leader x 1 + worker x 1, owned by serve)"
admitted() { n=0; for w in "$w0" "$w1" "$w2"; do [ "$(wcond "$w" Admitted)" != True ] || n=$((n + 1)); done; echo $n; }
until_ 30 "two replicas admitted" '[ "$(admitted)" = 2 ]'
for i in 0 1 2; do
    eval "w=\$w$i"
    [ "$(wcond "$w" Admitted)" = True ] && continue
    waiting=$i wwait=$w
done
until_ 20 "replica $waiting's QuotaReserved=False saying insufficient quota" \
    '[ "$(wcond "$wwait" QuotaReserved)" = False ] && wmsg "$wwait" QuotaReserved | grep -q "insufficient quota"'
say "replicas admitted under 4 GPUs: two; replica $waiting waits: $(wmsg "$wwait" QuotaReserved)"

# ---- LeaderWorkerSet's part: its Pods; the operator marks them into groups ----------------------
# LeaderWorkerSet creates them through StatefulSets (the leaders' "serve", one "serve-<i>" per
# replica for its workers); the test control plane runs kube-controller-manager, whose StatefulSet
# controller would manage (delete) Pods a StatefulSet of no replicas owns, so here the Pods are
# owned by the LeaderWorkerSet itself. sluice finds a LeaderWorkerSet's Pods by its name label.
# pod NAME ROLE REPLICA WORKER_INDEX: from the LeaderWorkerSet's marked template
pod() {
    t=leaderTemplate
    [ "$2" = leader ] || t=workerTemplate
    {
        printf 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: %s\n  namespace: %s\n' "$1" "$ns"
        printf '  labels: %s\n' "$(lget "{.spec.leaderWorkerTemplate.$t.metadata.labels}" |
            sed "s/}\$/,\"leaderworkerset.sigs.k8s.io\/name\":\"serve\",\"leaderworkerset.sigs.k8s.io\/group-index\":\"$3\",\"leaderworkerset.sigs.k8s.io\/worker-index\":\"$4\"}/")"
        ann=$(lget "{.spec.leaderWorkerTemplate.$t.metadata.annotations}")
        [ "$2" = leader ] || ann=$(echo "$ann" | sed "s/}\$/,\"leaderworkerset.sigs.k8s.io\/leader-name\":\"serve-$3\"}/")
        printf '  annotations: %s\n' "$ann"
        printf '  ownerReferences:\n  - {apiVersion: leaderworkerset.x-k8s.io/v1, kind: LeaderWorkerSet, name: serve, uid: %s, controller: true}\n' "$uid"
        printf 'spec: %s\n' "$(lget "{.spec.leaderWorkerTemplate.$t.spec}")"
    } | k create -f - >/dev/null || fail "create Pod $1"
}
for i in 0 1 2; do
    pod "serve-$i" leader "$i" 0
    pod "serve-$i-1" worker "$i" 1
done
k patch "$LWS" -n "$ns" serve --subresource=status --type merge -p '{"status":{"replicas":3}}' >/dev/null ||
    fail "LeaderWorkerSet status"
pget() { k get pod -n "$ns" "$1" -o jsonpath="$2"; }
for i in 0 1 2; do
    [ "$i" = "$waiting" ] && continue
    eval "w=\$w$i"
    for p in "serve-$i:leader" "serve-$i-1:worker"; do
        until_ 20 "Pod ${p%%:*} marked into $w" '[ "$(pget "${p%%:*}" "{.metadata.labels.kueue\.x-k8s\.io/pod-group-name}")" = "$w" ]'
        got=$(pget "${p%%:*}" '{.metadata.labels.kueue\.x-k8s\.io/prebuilt-workload-name} {.metadata.annotations.kueue\.x-k8s\.io/pod-group-total-count} {.metadata.annotations.kueue\.x-k8s\.io/role-hash} {.metadata.labels.kueue\.x-k8s\.io/managed}')
        [ "$got" = "$w 2 ${p#*:} true" ] || fail "Pod ${p%%:*} marks: '$got'"
    done
done
say "LeaderWorkerSet's Pods marked into their replica's group (prebuilt Workload, total count 2, role leader/worker)"
# 1.20: the gate the pod webhook adds is dropped, so the waiting replica's Pods run released
# without an admission: stopped as Kueue stops such a Pod (TerminationTarget, then deleted).
until_ 30 "the waiting replica's Pods stopped" \
    '[ -z "$(k get pod -n "$ns" serve-$waiting serve-$waiting-1 -o name --ignore-not-found)" ]'
grep -q "stopping (NotAdmitted)\|stopping (NoMatchingWorkload)" "$tmp/op.log" ||
    fail "no stop of the waiting replica's Pods in the log"
say "1.20 (no scheduling gates): the waiting replica's ungated Pods were stopped (TerminationTarget, deleted)"

# ---- the validating webhook: queue and size are fixed once a replica is ready -------------------
k patch "$LWS" -n "$ns" serve --subresource=status --type merge -p '{"status":{"replicas":3,"readyReplicas":1}}' >/dev/null ||
    fail "LeaderWorkerSet status ready"
expect_fail "kueue.x-k8s.io/queue-name" k patch "$LWS" -n "$ns" serve --type merge \
    -p '{"metadata":{"labels":{"kueue.x-k8s.io/queue-name":"other"}}}'
expect_fail "spec.leaderWorkerTemplate.size" k patch "$LWS" -n "$ns" serve --type merge \
    -p '{"spec":{"leaderWorkerTemplate":{"size":3}}}'

# ---- scale down to 2: the third replica's Workload goes; replicas 0 and 1 run -------------------
k patch "$LWS" -n "$ns" serve --type merge -p '{"spec":{"replicas":2}}' >/dev/null || fail "scale serve to 2"
k delete pod -n "$ns" serve-2 serve-2-1 --ignore-not-found --wait=false >/dev/null || fail "delete replica 2's Pods"
until_ 30 "Workload $w2 deleted" '[ -z "$(k get workloads.kueue.x-k8s.io -n "$ns" "$w2" -o name --ignore-not-found)" ]'
until_ 30 "replicas 0 and 1 admitted" '[ "$(wcond "$w0" Admitted)" = True ] && [ "$(wcond "$w1" Admitted)" = True ]'
say "scaled down to 2: $w2 deleted, $w0 and $w1 admitted"

ctrl_events_have CreatedWorkload
ctrl_verify "$cq"
ctrl_stop op
say "ok"
