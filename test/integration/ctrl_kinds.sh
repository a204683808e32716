#!/bin/sh
# ctrl_kinds KIND -- one object kind of the framework table under `sluice run` against the real
# API server, with its integration enabled, its test CRD (test/data/crds-integrations) installed
# and sluice's mutating and validating webhooks for the kind registered. KIND is one of tfjob,
# xgboostjob, paddlejob, jaxjob, mpijob, rayjob, raycluster (JobSet and PyTorchJob have their own
# tests, ctrl_jobset and ctrl_kubeflow). The same story for every kind, issue 14's test paragraph:
#   - created running with a queue name, it is held by the webhook (the create's answer is held);
#   - one Workload, Kueue's name (<kind>-<name>-<hash>), owner, the kind's pod sets and counts;
#   - admitted under quota (a ClusterQueue of exactly one object's GPUs) and released with the
#     flavor's node selector and toleration in every pod template; its queue cannot change now;
#   - the test plays the kind's controller: the children it creates (one Pod per pod set from
#     the released template for the Kubeflow kinds; the RayCluster a RayJob runs on, which gets
#     no Workload of its own) carry the node selector;
#   - a second object waits held with QuotaReserved=False and "insufficient quota";
#   - the first finishes (the controller's status: Succeeded condition, jobDeploymentStatus
#     Complete; a RayCluster, which never finishes, is deleted) and releases the quota: the
#     second is admitted and released;
#   - a higher-priority object preempts the second: Evicted/Preempted, held again, its templates
#     restored, requeued; the urgent one is admitted.
# SIGTERM -> 0.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/ctrl_lib.sh"

KIND=${1:-}
it_name=ctrl_kinds_$KIND

# ---- the kind table ---------------------------------------------------------------------------
# API (apiVersion), KIND_ (kind), RES (plural.group), CRD (file), FW (framework), HOOK (webhook
# path suffix), SUSP (JSONPath of the suspend field), PODSETS ("names/counts" of the Workload),
# TMPLS (JSONPaths of every pod template, space-separated), FRAMEWORKS (enabled).
# Kubeflow kinds: MAP (replica map), REPLICAS ("Type:count ...", written in an order other than
# Kueue's to show that the pod sets follow the kind's order).
kf() {
    API=$1 KIND_=$2 MAP=$3 REPLICAS=$4 PODSETS=$5
    plural=$(echo "$KIND_" | tr 'A-Z' 'a-z')s
    RES=$plural.kubeflow.org CRD=kubeflow.org_$plural.yaml FW=kubeflow.org/$(echo "$KIND_" | tr 'A-Z' 'a-z')
    HOOK=kubeflow-org-${API#*/}-$(echo "$KIND_" | tr 'A-Z' 'a-z')
    SUSP=.spec.runPolicy.suspend
    TMPLS=""
    for rt in $REPLICAS; do TMPLS="$TMPLS .spec.$MAP.${rt%%:*}.template"; done
    FRAMEWORKS="batch/job, $FW"
}
case "$KIND" in
tfjob) kf kubeflow.org/v1 TFJob tfReplicaSpecs "Worker:2 PS:1 Chief:1" "chief ps worker/1 1 2" ;;
xgboostjob) kf kubeflow.org/v1 XGBoostJob xgbReplicaSpecs "Worker:3 Master:1" "master worker/1 3" ;;
paddlejob) kf kubeflow.org/v1 PaddleJob paddleReplicaSpecs "Worker:3 Master:1" "master worker/1 3" ;;
jaxjob) kf kubeflow.org/v1 JAXJob jaxReplicaSpecs "Worker:4" "worker/4" ;;
mpijob) kf kubeflow.org/v2beta1 MPIJob mpiReplicaSpecs "Worker:3 Launcher:1" "launcher worker/1 3" ;;
rayjob | raycluster)
    API=ray.io/v1 RES=${KIND}s.ray.io CRD=ray.io_${KIND}s.yaml FW=ray.io/$KIND HOOK=ray-io-v1-$KIND
    SUSP=.spec.suspend
    FRAMEWORKS="batch/job, ray.io/rayjob, ray.io/raycluster"
    if [ "$KIND" = rayjob ]; then
        KIND_=RayJob C=.spec.rayClusterSpec
        # head 1 + 3 GPU workers, and KubeRay's submitter Job (K8sJobMode, the default): Kueue's
        # default submitter template is written into spec.submitterPodTemplate on start.
        PODSETS="head gpu-workers submitter/1 3 1"
        TMPLS="$C.headGroupSpec.template $C.workerGroupSpecs[0].template .spec.submitterPodTemplate"
    else
        KIND_=RayCluster C=.spec
        PODSETS="head gpu-workers/1 3"
        TMPLS="$C.headGroupSpec.template $C.workerGroupSpecs[0].template"
    fi
    ;;
*) fail "usage: ctrl_kinds.sh tfjob|xgboostjob|paddlejob|jaxjob|mpijob|rayjob|raycluster (got '$KIND')" ;;
esac

# ---- environment: CRDs, queues, webhooks, operator ---------------------------------------------
ctrl_install_crds
k apply -f "$src/test/data/crds-integrations/$CRD" >/dev/null || fail "apply the test CRD $CRD"
if [ "$KIND" = rayjob ]; then
    k apply -f "$src/test/data/crds-integrations/ray.io_rayclusters.yaml" >/dev/null ||
        fail "apply the test RayCluster CRD"
    k wait --for condition=Established --timeout=60s crd/rayclusters.ray.io >/dev/null || fail "RayCluster CRD"
fi
k wait --for condition=Established --timeout=60s "crd/$RES" >/dev/null || fail "$RES CRD not Established"
wait_for 30 "discovery of $RES" sh -c "kubectl get $RES -A >/dev/null"
ctrl_sys_namespace
it_namespace
cq=it-kinds-$sfx
fl=gpu-$sfx
ctrl_wpcs "high-$sfx=1000"
ctrl_flavor "$fl" "tolerations: [{key: gpu, operator: Exists, effect: NoSchedule}]"
ctrl_cq "$cq" "$fl cpu=64 memory=64Gi nvidia.com/gpu=4" "preemption: {withinClusterQueue: LowerPriority}"
ctrl_lq lq "$cq"
ctrl_trace

base=it-$sfx
ctrl_delete_at_exit validatingwebhookconfiguration "$base-validating-webhook-configuration"
ctrl_delete_at_exit mutatingwebhookconfiguration "$base-mutating-webhook-configuration"
port=$(ctrl_free_port)
hook() { # operations path name
    cat <<EOT
- name: $3.kueue.x-k8s.io
  clientConfig: {url: "https://127.0.0.1:$port$2"}
  rules: [{apiGroups: [${API%/*}], apiVersions: [${API#*/}], operations: [$1], resources: [${RES%%.*}]}]
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
    hook "CREATE, UPDATE" "/validate-$HOOK" "v$KIND"
    printf -- '---\napiVersion: admissionregistration.k8s.io/v1\nkind: MutatingWebhookConfiguration\n'
    printf 'metadata: {name: %s-mutating-webhook-configuration}\nwebhooks:\n' "$base"
    hook CREATE "/mutate-$HOOK" "m$KIND"
} | k apply -f - >/dev/null || fail "create the webhook configurations"
ctrl_config cfg <<EOT
integrations: {frameworks: [$FRAMEWORKS]}
internalCertManagement: {enable: true, webhookServiceName: $base-webhook-service,
                         webhookSecretName: $base-webhook-server-cert}
EOT
ctrl_start op --config "$tmp/cfg.yaml" --namespace "$sys" --webhook-port "$port" \
    --webhook-cert-ip 127.0.0.1
for kc in validating mutating; do
    until_ 90 "caBundle in the $kc configuration" '[ -n "$(k get ${kc}webhookconfiguration $base-$kc-webhook-configuration -o jsonpath="{.webhooks[0].clientConfig.caBundle}")" ]'
done

# ---- objects ----------------------------------------------------------------------------------
# A pod template's YAML at indent $1 (spaces), 1 GPU: tmpl INDENT CONTAINER
tmpl() {
    cat <<EOT | sed "s/^/$1/"
template:
  metadata: {labels: {role: $2}}
  spec:
    restartPolicy: Never
    containers:
    - name: $2
      image: busybox
      resources: {requests: {cpu: 100m, memory: 100Mi, nvidia.com/gpu: 1}, limits: {nvidia.com/gpu: 1}}
EOT
}
# The head and one worker group of 3 at indent $1.
raycluster_spec() {
    printf '%sheadGroupSpec:\n%s  rayStartParams: {}\n' "$1" "$1"
    tmpl "$1  " ray-head
    printf '%sworkerGroupSpecs:\n%s- groupName: gpu-workers\n%s  replicas: 3\n%s  minReplicas: 1\n%s  maxReplicas: 3\n%s  rayStartParams: {}\n' \
        "$1" "$1" "$1" "$1" "$1" "$1"
    tmpl "$1  " ray-worker
}
# Create object NAME running (suspend false) in LocalQueue lq, labelled for the webhooks, and print
# the suspend field of the create's answer: create NAME [PRIORITY_CLASS]
create() {
    pc=""
    [ -z "${2:-}" ] || pc=", kueue.x-k8s.io/priority-class: $2"
    {
        printf 'apiVersion: %s\nkind: %s\nmetadata:\n  name: %s\n  namespace: %s\n' "$API" "$KIND_" "$1" "$ns"
        printf '  labels: {sluice-it: "%s", kueue.x-k8s.io/queue-name: lq%s}\nspec:\n' "$sfx" "$pc"
        case "$KIND" in
        rayjob)
            printf '  suspend: false\n  entrypoint: python -c "print(1)"\n  shutdownAfterJobFinishes: true\n  rayClusterSpec:\n'
            raycluster_spec "    "
            ;;
        raycluster)
            printf '  suspend: false\n'
            raycluster_spec "  "
            ;;
        *)
            printf '  runPolicy: {suspend: false}\n  %s:\n' "$MAP"
            for rt in $REPLICAS; do
                printf '    %s:\n      replicas: %s\n      restartPolicy: OnFailure\n' "${rt%%:*}" "${rt#*:}"
                tmpl "      " "$(echo "${rt%%:*}" | tr 'A-Z' 'a-z')"
            done
            ;;
        esac
    } | k create -f - -o jsonpath="{$SUSP}" || fail "create $KIND_ $1"
}
oget() { k get "$RES" -n "$ns" "$1" -o jsonpath="$2"; }
suspended() { oget "$1" "{$SUSP}"; }
# Every pod template of object $1 has field $2 (below the template's spec) equal to $3.
all_templates() {
    for t in $TMPLS; do
        v=$(oget "$1" "{$t.spec.$2}")
        [ "$v" = "$3" ] || { echo "$t.spec.$2 is '$v'"; return 1; }
    done
}
# The kind's controller reports object $1 finished (successfully).
finish() {
    now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
    case "$KIND" in
    rayjob)
        k patch "$RES" -n "$ns" "$1" --subresource=status --type merge -p \
            '{"status":{"jobStatus":"SUCCEEDED","jobDeploymentStatus":"Complete","message":"Job finished successfully."}}' >/dev/null
        ;;
    raycluster)
        k delete "$RES" -n "$ns" "$1" --wait=false >/dev/null
        ;;
    *)
        k patch "$RES" -n "$ns" "$1" --subresource=status --type merge -p \
            "{\"status\":{\"conditions\":[{\"type\":\"Succeeded\",\"status\":\"True\",\"reason\":\"${KIND_}Succeeded\",\"message\":\"$KIND_ $1 is successfully completed.\",\"lastTransitionTime\":\"$now\"}]}}" >/dev/null
        ;;
    esac || fail "finish $KIND_ $1"
}
# Play the kind's controller for the released object $1: the children it creates.
children() {
    uid=$(oget "$1" '{.metadata.uid}')
    owner="{apiVersion: $API, kind: $KIND_, name: $1, uid: $uid, controller: true, blockOwnerDeletion: true}"
    case "$KIND" in
    rayjob)
        # KubeRay creates the RayCluster from spec.rayClusterSpec (with the RayJob's labels):
        # Kueue's RayCluster integration skips it, the RayJob's Workload covers it.
        # (the JSON of rayClusterSpec is a YAML flow mapping)
        {
            printf 'apiVersion: ray.io/v1\nkind: RayCluster\nmetadata:\n  name: %s-raycluster\n  namespace: %s\n' "$1" "$ns"
            printf '  labels: {kueue.x-k8s.io/queue-name: lq}\n  ownerReferences:\n  - %s\n' "$owner"
            printf 'spec: %s\n' "$(k get "$RES" -n "$ns" "$1" -o jsonpath='{.spec.rayClusterSpec}')"
        } | k apply -f - >/dev/null || fail "create the RayCluster of RayJob $1"
        ;;
    raycluster) ;; # KubeRay creates Pods; 1.20 runs none of them: nothing more to show
    *)
        # The training operator creates the Pods from the released templates.
        for t in $TMPLS; do
            rt=$(echo "$t" | sed 's/.*\.\([A-Za-z]*\)\.template$/\1/' | tr 'A-Z' 'a-z')
            {
                printf 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: %s-%s-0\n  namespace: %s\n' "$1" "$rt" "$ns"
                printf '  ownerReferences:\n  - %s\n' "$owner"
                printf 'spec: %s\n' "$(oget "$1" "{$t.spec}")"
            } | k apply -f - >/dev/null || fail "create the $rt Pod of $1"
        done
        ;;
    esac
}

# ---- the first: held on create, one Workload, admitted, released with the flavor ---------------
[ "$(create first)" = true ] || fail "first was created running: the webhook did not hold it"
say "$KIND_ first created running: held by the webhook ($SUSP=true in the create's answer)"
w1=$(wl_await first)
case "$w1" in "$KIND-first-"?????) ;; *) fail "Workload name $w1 is not Kueue's $KIND-first-<hash>" ;; esac
[ "$(wget_ "$w1" '{.metadata.ownerReferences[0].apiVersion} {.metadata.ownerReferences[0].kind} {.metadata.ownerReferences[0].controller}')" = "$API $KIND_ true" ] ||
    fail "owner reference: $(wget_ "$w1" '{.metadata.ownerReferences}')"
got=$(wget_ "$w1" '{.spec.podSets[*].name}/{.spec.podSets[*].count}')
[ "$got" = "$PODSETS" ] || fail "pod sets $got, want $PODSETS"
until_ 20 "Workload $w1 admitted" '[ "$(wcond "$w1" Admitted)" = True ]'
until_ 20 "$KIND_ first released" '[ "$(suspended first)" = false ]'
all_templates first nodeSelector.pool "$fl" || fail "first: $(all_templates first nodeSelector.pool "$fl")"
all_templates first 'tolerations[0].key' gpu || fail "first: flavor toleration: $(all_templates first 'tolerations[0].key' gpu)"
say "first: Workload $w1 ($PODSETS) admitted to $cq, released with pool=$fl and the toleration in every template"
out=$(k patch "$RES" -n "$ns" first --type merge -p '{"metadata":{"labels":{"kueue.x-k8s.io/queue-name":"other"}}}' 2>&1) &&
    fail "the admitted $KIND_ changed its queue: $out"
case "$out" in
*'denied the request'*'kueue.x-k8s.io/queue-name'*) say "queue change of the admitted first rejected" ;;
*) fail "unexpected answer to a queue change: $out" ;;
esac

children first
case "$KIND" in
rayjob)
    sleep 2
    [ -z "$(wl_of first-raycluster)" ] || fail "the RayJob's RayCluster got a Workload: $(wl_of first-raycluster)"
    [ "$(k get rayclusters.ray.io -n "$ns" first-raycluster -o jsonpath='{.spec.suspend}')" != true ] ||
        fail "the RayJob's RayCluster was suspended"
    [ "$(k get rayclusters.ray.io -n "$ns" first-raycluster -o jsonpath='{.spec.workerGroupSpecs[0].template.spec.nodeSelector.pool}')" = "$fl" ] ||
        fail "the RayJob's RayCluster lacks the node selector"
    say "the RayJob's RayCluster (KubeRay's part): no Workload, not held, pool=$fl"
    ;;
raycluster) ;;
*)
    for p in $(k get pods -n "$ns" -o name); do
        [ "$(k get -n "$ns" "$p" -o jsonpath='{.spec.nodeSelector.pool}')" = "$fl" ] || fail "$p: no node selector"
    done
    say "the training operator's Pods ($(k get pods -n "$ns" -o name | wc -l)) carry pool=$fl"
    ;;
esac

# ---- the second waits, held, QuotaReserved=False "insufficient quota" ---------------------------
[ "$(create second)" = true ] || fail "second was created running"
w2=$(wl_await second)
# The first explanation written can be the engine's "pending evaluation" (the Workload was
# queued, not yet tried): wait for the verdict.
until_ 20 "second's QuotaReserved=False saying insufficient quota" \
    '[ "$(wcond "$w2" QuotaReserved)" = False ] && wmsg "$w2" QuotaReserved | grep -q "insufficient quota"'
sleep 1
[ "$(suspended second)" = true ] || fail "second released while the quota is taken"
say "second waits held: QuotaReserved=False $(wreason "$w2" QuotaReserved): $(wmsg "$w2" QuotaReserved)"

# ---- the first finishes: quota released, second admitted and released ---------------------------
finish first
if [ "$KIND" = raycluster ]; then
    until_ 30 "Workload $w1 gone" '[ -z "$(k get workloads.kueue.x-k8s.io -n "$ns" "$w1" -o name --ignore-not-found)" ]'
    say "first deleted (a RayCluster never finishes): its Workload went with it"
else
    until_ 30 "Workload $w1 Finished" '[ "$(wcond "$w1" Finished)" = True ]'
    [ "$(wreason "$w1" Finished)" = Succeeded ] || fail "Finished reason $(wreason "$w1" Finished)"
    until_ 20 "finalizer removed from $w1" '[ -z "$(wget_ "$w1" "{.metadata.finalizers}")" ]'
    say "first Finished ($(wmsg "$w1" Finished))"
fi
until_ 30 "second admitted" '[ "$(wcond "$w2" Admitted)" = True ]'
until_ 20 "$KIND_ second released" '[ "$(suspended second)" = false ]'
all_templates second nodeSelector.pool "$fl" || fail "second: $(all_templates second nodeSelector.pool "$fl")"
say "quota released: second admitted and released with pool=$fl"

# ---- preemption: a higher-priority one takes the quota; second held again, restored -------------
[ "$(create urgent "high-$sfx")" = true ] || fail "urgent was created running"
w3=$(wl_await urgent)
until_ 30 "second evicted" '[ "$(wcond "$w2" Evicted)" = True ]'
[ "$(wreason "$w2" Evicted)" = Preempted ] || fail "Evicted reason $(wreason "$w2" Evicted)"
until_ 20 "$KIND_ second held again" '[ "$(suspended second)" = true ]'
until_ 20 "second's templates restored" 'all_templates second nodeSelector ""'
all_templates second tolerations "" || fail "second: toleration not removed"
until_ 30 "urgent admitted" '[ "$(wcond "$w3" Admitted)" = True ]'
until_ 20 "second requeued" '[ "$(wcond "$w2" QuotaReserved)" = False ] && [ "$(wcond "$w2" Requeued)" = True ]'
until_ 20 "$KIND_ urgent released" '[ "$(suspended urgent)" = false ]'
say "urgent (high-$sfx) preempted second: held again, templates restored, requeued; urgent released"

ctrl_events_have CreatedWorkload Started Stopped
ctrl_stop op
ctrl_verify "$cq"
say "ok"
