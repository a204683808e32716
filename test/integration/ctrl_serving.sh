#!/bin/sh
# ctrl_serving -- serving owners and external owners under `sluice run` against the real API
# server (issue 14): integrations batch/job, pod, statefulset and LeaderWorkerSet enabled,
# manageJobsWithoutQueueName on for namespaces labelled sluice-managed=$sfx, an
# externalFrameworks kind whose CRD plural is irregular (Octopus, "octopodes"), sluice's
# StatefulSet webhooks (mutating and validating) and LeaderWorkerSet's mutating one registered,
# a ClusterQueue of 4 GPUs. The StatefulSets are Parallel: kube-controller-manager's StatefulSet
# controller (the test environment runs it) makes their Pods from the marked templates, counts
# them in status.replicas and deletes them at a scale-down; without it (SLUICE_KUBE_CONTROLLER_
# MANAGER=0) the test plays that part. The test plays the Octopus controller (a child Job).
#   - StatefulSet web (2 x 1 GPU, queued): one Workload statefulset-web-<hash>, admitted; its
#     Pods marked into that group;
#   - StatefulSet big (4 x 1 GPU) waits with "insufficient quota";
#   - web scaled to 0 (its Pods deleted): its Workload is kept, QuotaReserved=False OnHold
#     "StatefulSet scaled to zero; workload on hold", its quota given back: big is admitted;
#   - StatefulSet late (1 GPU) waits; scaled to 0, its Workload (pending, not on hold) stays, and
#     the scale-up is refused by the webhook ("workload from previous scale-down is still being
#     deleted"), as Kueue's StatefulSet webhook;
#   - web scaled up from 0 (its Workload on hold): accepted, the Workload leaves the hold and
#     waits for quota;
#   - manageJobsWithoutQueueName: a StatefulSet and a LeaderWorkerSet without a queue name in the
#     managed namespace get their Workload(s) (no spec.queueName: admitted nowhere), the same
#     StatefulSet in an unmanaged namespace none;
#   - integrations.externalFrameworks: the running child Job of a queued Octopus is suspended
#     and gets no Workload of its own, which needs the Octopus read at "octopodes", the plural API
#     discovery gives (the guess, "octopuses", is not served: the child would be left alone).
# Kubernetes 1.20 has no scheduling gates (1.26+): the Pods are never held; test_ctrl_pods shows
# the gates against the in-memory API server. SIGTERM -> 0.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/ctrl_lib.sh"

LWS=leaderworkersets.leaderworkerset.x-k8s.io
OCT=octopodes.marine.test.sluice.dev
ctrl_install_crds
k apply -f "$src/test/data/crds-integrations/leaderworkerset.x-k8s.io_leaderworkersets.yaml" >/dev/null ||
    fail "apply the test LeaderWorkerSet CRD"
ctrl_delete_at_exit crd "$OCT"
cat <<EOT | k apply -f - >/dev/null || fail "apply the Octopus CRD"
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: $OCT}
spec:
  group: marine.test.sluice.dev
  names: {plural: octopodes, singular: octopus, kind: Octopus, listKind: OctopusList}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
EOT
for c in "$LWS" "$OCT"; do
    k wait --for condition=Established --timeout=60s "crd/$c" >/dev/null || fail "CRD $c not Established"
    wait_for 30 "discovery of $c" sh -c "kubectl get $c -A >/dev/null"
done
ctrl_sys_namespace
it_namespace
k label namespace "$ns" "sluice-managed=$sfx" >/dev/null || fail "label namespace $ns"
# kube-controller-manager runs when its service-account controller fills the new namespace.
kcm=0 i=0
while [ "$i" -lt 50 ]; do
    k get serviceaccount default -n "$ns" >/dev/null 2>&1 && { kcm=1; break; }
    sleep 0.2
    i=$((i + 1))
done
say "kube-controller-manager: $([ $kcm = 1 ] && echo "runs (its StatefulSet controller makes the Pods)" || echo "absent (the test makes the Pods)")"
free=sluice-it-serving-free-$sfx
k create namespace "$free" >/dev/null || fail "create namespace $free"
ctrl_delete_at_exit namespace "$free"
cq=it-serving-$sfx
fl=gpu-$sfx
ctrl_flavor "$fl"
ctrl_cq "$cq" "$fl cpu=64 memory=64Gi nvidia.com/gpu=4"
ctrl_lq lq "$cq"
ctrl_trace

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
    hook "CREATE, UPDATE" /validate-apps-v1-statefulset vstatefulset apps v1 statefulsets
    printf -- '---\napiVersion: admissionregistration.k8s.io/v1\nkind: MutatingWebhookConfiguration\n'
    printf 'metadata: {name: %s-mutating-webhook-configuration}\nwebhooks:\n' "$base"
    hook CREATE /mutate-apps-v1-statefulset mstatefulset apps v1 statefulsets
    hook CREATE /mutate-leaderworkerset-x-k8s-io-v1-leaderworkerset mleaderworkerset \
        leaderworkerset.x-k8s.io v1 leaderworkersets
} | k apply -f - >/dev/null || fail "create the webhook configurations"
ctrl_config cfg <<EOT
manageJobsWithoutQueueName: true
managedJobsNamespaceSelector: {matchLabels: {sluice-managed: "$sfx"}}
integrations:
  frameworks: [batch/job, pod, statefulset, leaderworkerset.x-k8s.io/leaderworkerset]
  externalFrameworks: [Octopus.v1.marine.test.sluice.dev]
internalCertManagement: {enable: true, webhookServiceName: $base-webhook-service,
                         webhookSecretName: $base-webhook-server-cert}
EOT
ctrl_start op --config "$tmp/cfg.yaml" --namespace "$sys" --webhook-port "$port" \
    --webhook-cert-ip 127.0.0.1
# A Pod not marked into its group in time (a CI run, once): which Pods exist, with their group,
# and what the operator said about the StatefulSets and their Pods.
it_on_fail "echo 'Pods (pod-group-name):'; k get pods -n \"\$ns\" -L kueue.x-k8s.io/pod-group-name 2>&1 | tail -n 20; echo 'the operator on web and its Pods:'; grep -E 'web|statefulset' \"$tmp/op.log\" | tail -n 40"
for kc in validating mutating; do
    until_ 90 "caBundle in the $kc configuration" '[ -n "$(k get ${kc}webhookconfiguration $base-$kc-webhook-configuration -o jsonpath="{.webhooks[0].clientConfig.caBundle}")" ]'
done

# ---- StatefulSets ------------------------------------------------------------------------------
# sts NAME REPLICAS [QUEUE [NAMESPACE]]: a StatefulSet of REPLICAS x 1 GPU
sts() {
    q=""
    [ -z "${3:-}" ] || q=", kueue.x-k8s.io/queue-name: $3"
    cat <<EOT | k create -f - >/dev/null || fail "create StatefulSet $1"
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: $1
  namespace: ${4:-$ns}
  labels: {sluice-it: "$sfx"$q}
spec:
  replicas: $2
  serviceName: $1
  podManagementPolicy: Parallel
  selector: {matchLabels: {app: $1}}
  template:
    metadata: {labels: {app: $1}}
    spec:
      containers:
      - name: main
        image: busybox
        resources: {requests: {cpu: 100m, memory: 100Mi, nvidia.com/gpu: 1}, limits: {nvidia.com/gpu: 1}}
EOT
}
sget() { k get statefulset -n "${3:-$ns}" "$1" -o jsonpath="$2"; }
# The Workload made from StatefulSet $1 (namespace $2), by its owner.
wl_sts() {
    k get workloads.kueue.x-k8s.io -n "${2:-$ns}" -o jsonpath="{range .items[?(@.metadata.ownerReferences[0].kind==\"StatefulSet\")]}{.metadata.ownerReferences[0].name}={.metadata.name}{\"\\n\"}{end}" |
        sed -n "s/^$1=//p"
}
# scale NAME N: spec.replicas N (the webhook's answer on stdout/stderr)
scale() { k patch statefulset -n "$ns" "$1" --type merge -p "{\"spec\":{\"replicas\":$2}}" 2>&1; }
# The StatefulSet controller's part for StatefulSet $1 at N replicas (only without
# kube-controller-manager): Pods $1-0 .. $1-(N-1) from the marked template, the others deleted,
# status.replicas N.
sts_ctl() {
    [ "$kcm" = 0 ] || return 0
    uid=$(sget "$1" '{.metadata.uid}')
    i=0
    while [ "$i" -lt "$2" ]; do
        [ -n "$(k get pod -n "$ns" "$1-$i" -o name --ignore-not-found)" ] || {
            printf 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: %s-%s\n  namespace: %s\n' "$1" "$i" "$ns"
            printf '  labels: %s\n' "$(sget "$1" '{.spec.template.metadata.labels}')"
            printf '  annotations: %s\n' "$(sget "$1" '{.spec.template.metadata.annotations}')"
            printf '  ownerReferences:\n  - {apiVersion: apps/v1, kind: StatefulSet, name: %s, uid: %s, controller: true}\n' "$1" "$uid"
            printf 'spec: %s\n' "$(sget "$1" '{.spec.template.spec}')"
        } | k create -f - >/dev/null || fail "create Pod $1-$i"
        i=$((i + 1))
    done
    for p in $(k get pods -n "$ns" -o name | sed -n "s|^pod/\($1-[0-9]*\)\$|\1|p"); do
        [ "${p#"$1"-}" -lt "$2" ] || k delete pod -n "$ns" "$p" --wait=false >/dev/null
    done
    k patch statefulset -n "$ns" "$1" --subresource=status --type merge \
        -p "{\"status\":{\"replicas\":$2}}" >/dev/null || fail "status of $1"
}
# Wait until StatefulSet $1 counts $2 Pods (status.replicas).
sts_at() {
    at_s=$1 at_n=$2
    until_ 30 "StatefulSet $at_s at $at_n Pods" '[ "$(sget "$at_s" "{.status.replicas}")" = "$at_n" ]'
}

sts web 2 lq
[ "$(sget web '{.spec.template.metadata.annotations.kueue\.x-k8s\.io/pod-suspending-parent}')" = statefulset ] ||
    fail "web's template not marked by the webhook: $(sget web '{.spec.template.metadata}')"
until_ 30 "the Workload of StatefulSet web" '[ -n "$(wl_sts web)" ]'
ww=$(wl_sts web)
case "$ww" in statefulset-web-?????) ;; *) fail "Workload name $ww is not Kueue's statefulset-web-<hash>" ;; esac
[ "$(wget_ "$ww" '{.spec.podSets[0].count}')" = 2 ] || fail "$ww pod set count $(wget_ "$ww" '{.spec.podSets}')"
until_ 30 "$ww admitted" '[ "$(wcond "$ww" Admitted)" = True ]'
sts_ctl web 2
sts_at web 2
for p in web-0 web-1; do
    until_ 30 "Pod $p marked into $ww" '[ "$(k get pod -n "$ns" $p -o jsonpath="{.metadata.labels.kueue\.x-k8s\.io/pod-group-name}")" = "$ww" ]'
done
say "StatefulSet web: Workload $ww (2 Pods) admitted, its Pods marked into the group"

sts big 4 lq
until_ 30 "the Workload of StatefulSet big" '[ -n "$(wl_sts big)" ]'
wb=$(wl_sts big)
until_ 30 "big waits for quota" \
    '[ "$(wcond "$wb" QuotaReserved)" = False ] && wmsg "$wb" QuotaReserved | grep -q "insufficient quota"'
say "StatefulSet big (4 GPUs) waits: $(wmsg "$wb" QuotaReserved)"

# ---- web scaled to zero: its Workload kept on hold, its quota given back -------------------------
out=$(scale web 0) || fail "scale web to 0: $out"
sts_ctl web 0
sts_at web 0
until_ 30 "$ww on hold" '[ "$(wreason "$ww" QuotaReserved)" = OnHold ]'
[ "$(wcond "$ww" QuotaReserved)" = False ] || fail "$ww QuotaReserved $(wcond "$ww" QuotaReserved)"
[ "$(wmsg "$ww" QuotaReserved)" = "StatefulSet scaled to zero; workload on hold" ] ||
    fail "$ww hold message: $(wmsg "$ww" QuotaReserved)"
[ -z "$(wget_ "$ww" '{.status.admission}')" ] || fail "$ww keeps its admission on hold"
until_ 30 "big admitted in the quota given back" '[ "$(wcond "$wb" Admitted)" = True ]'
sleep 2
[ "$(wreason "$ww" QuotaReserved)" = OnHold ] || fail "$ww left the hold at zero replicas: $(wreason "$ww" QuotaReserved)"
say "web scaled to 0: $ww kept, QuotaReserved=False OnHold; big admitted in its quota"

# ---- late: scaled to 0 with its Workload pending (not on hold): the scale-up is refused ----------
sts late 1 lq
until_ 30 "the Workload of StatefulSet late" '[ -n "$(wl_sts late)" ]'
wt=$(wl_sts late)
until_ 30 "late waits for quota" '[ "$(wcond "$wt" QuotaReserved)" = False ]'
out=$(scale late 0) || fail "scale late to 0: $out"
sts_ctl late 0
sts_at late 0
sleep 2
[ -n "$(wl_sts late)" ] || fail "late's Workload went at the scale-down"
[ "$(wreason "$wt" QuotaReserved)" != OnHold ] || fail "late's pending Workload was put on hold"
out=$(scale late 1) && fail "late's scale-up from 0 was accepted with its Workload not on hold: $out"
case "$out" in
*'denied the request'*'spec.replicas'*'workload from previous scale-down is still being deleted'*) ;;
*) fail "unexpected answer to late's scale-up: $out" ;;
esac
say "late: scale-up from 0 refused while its Workload (pending, not on hold) exists"

# ---- web scaled up again: accepted, out of hold, waiting for big's quota -------------------------
out=$(scale web 2) || fail "web's scale-up from 0 (Workload on hold) refused: $out"
sts_ctl web 2
until_ 30 "$ww out of hold" '[ "$(wreason "$ww" QuotaReserved)" != OnHold ] && [ "$(wcond "$ww" QuotaReserved)" = False ]'
[ "$(wl_sts web)" = "$ww" ] || fail "web got another Workload: $(wl_sts web)"
say "web scaled up from 0: accepted, $ww out of hold ($(wreason "$ww" QuotaReserved): $(wmsg "$ww" QuotaReserved))"
# (1.20: web's Pods are not gated, so the operator stops them while $ww waits and the StatefulSet
# controller makes them again; back to 0 to end that churn.)
out=$(scale web 0) || fail "scale web to 0 again: $out"
sts_ctl web 0

# ---- manageJobsWithoutQueueName: serving owners without a queue name -----------------------------
sts unq 1 "" "$ns"
sts unq 1 "" "$free"
until_ 30 "the Workload of the unqueued StatefulSet unq" '[ -n "$(wl_sts unq)" ]'
wu=$(wl_sts unq)
[ -z "$(wget_ "$wu" '{.spec.queueName}')" ] || fail "$wu has queueName $(wget_ "$wu" '{.spec.queueName}')"
{
    printf 'apiVersion: leaderworkerset.x-k8s.io/v1\nkind: LeaderWorkerSet\nmetadata:\n  name: unqlws\n  namespace: %s\n' "$ns"
    printf '  labels: {sluice-it: "%s"}\nspec:\n  replicas: 2\n  leaderWorkerTemplate:\n    size: 2\n' "$sfx"
    for t in leaderTemplate workerTemplate; do
        printf '    %s:\n      spec:\n        containers:\n        - name: main\n          image: busybox\n' "$t"
        printf '          resources: {requests: {cpu: 100m, nvidia.com/gpu: 1}, limits: {nvidia.com/gpu: 1}}\n'
    done
} | k create -f - >/dev/null || fail "create LeaderWorkerSet unqlws"
lws_wls() {
    k get workloads.kueue.x-k8s.io -n "$ns" -o jsonpath='{range .items[?(@.metadata.ownerReferences[0].kind=="LeaderWorkerSet")]}{.metadata.name}{"\n"}{end}' | grep -c '^leaderworkerset-unqlws-' || true
}
until_ 30 "a Workload per replica of the unqueued LeaderWorkerSet" '[ "$(lws_wls)" = 2 ]'
for w in $(k get workloads.kueue.x-k8s.io -n "$ns" -o name | grep 'leaderworkerset-unqlws-'); do
    [ -z "$(k get -n "$ns" "$w" -o jsonpath='{.spec.queueName}')" ] || fail "$w has a queue name"
done
sleep 2
[ "$(wcond "$wu" QuotaReserved)" != True ] || fail "$wu (no queue name) got quota"
[ -z "$(k get workloads.kueue.x-k8s.io -n "$free" -o name)" ] ||
    fail "the StatefulSet in the unmanaged namespace got a Workload: $(k get workloads.kueue.x-k8s.io -n "$free" -o name)"
say "manageJobsWithoutQueueName: StatefulSet unq -> $wu, LeaderWorkerSet unqlws -> 2 Workloads, no queue name; none in $free"

# ---- integrations.externalFrameworks: an owner whose plural is irregular ------------------------
cat <<EOT | k create -f - >/dev/null || fail "create Octopus oc"
apiVersion: marine.test.sluice.dev/v1
kind: Octopus
metadata: {name: oc, namespace: $ns, labels: {kueue.x-k8s.io/queue-name: lq}}
spec: {arms: 8}
EOT
ouid=$(k get "$OCT" -n "$ns" oc -o jsonpath='{.metadata.uid}')
cat <<EOT | k create -f - >/dev/null || fail "create the Octopus's child Job"
apiVersion: batch.test.sluice.dev/v1
kind: Job
metadata:
  name: oc-arm
  namespace: $ns
  labels: {kueue.x-k8s.io/queue-name: lq}
  ownerReferences:
  - {apiVersion: marine.test.sluice.dev/v1, kind: Octopus, name: oc, uid: $ouid, controller: true}
spec:
  suspend: false
  parallelism: 1
  completions: 1
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: main
        image: busybox
        resources: {requests: {cpu: 100m}}
EOT
until_ 30 "the Octopus's child Job suspended" '[ "$(jget oc-arm "{.spec.suspend}")" = true ]'
sleep 1
[ -z "$(wl_of oc-arm)" ] || fail "the Octopus's child Job got a Workload: $(wl_of oc-arm)"
! grep -q "not found (integrations.externalFrameworks owner\|API discovery of .* failed" "$tmp/op.log" ||
    fail "the Octopus was not read at its discovered resource: $(grep 'externalFrameworks' "$tmp/op.log")"
say "externalFrameworks: Octopus oc read as octopodes (API discovery): its running child Job suspended, no Workload of its own"

ctrl_events_have CreatedWorkload
ctrl_stop op
ctrl_verify "$cq"
say "ok"
