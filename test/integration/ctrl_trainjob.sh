#!/bin/sh
# ctrl_trainjob -- TrainJob (trainer.kubeflow.org/v1alpha1) under `sluice run` against the real
# API server, with the trainer.kubeflow.org/trainjob integration enabled, the test CRDs of
# TrainJob, TrainingRuntime and ClusterTrainingRuntime (test/data/crds-integrations) installed
# and sluice's mutating and validating webhooks for TrainJobs registered. A TrainJob has no pod
# template: its pod sets come from the runtime it names, and an admission goes into its own
# spec.runtimePatches[] entry (docs/integrations.md). The story:
#   - created running with a queue name, it is held by the webhook, which adds Kueue's empty
#     runtimePatches entry (manager kueue.x-k8s.io/manager);
#   - one Workload, trainjob-<name>-<hash>, whose pod sets are the ClusterTrainingRuntime's
#     replicated Jobs with Trainer's counts: numNodes 2 -> `node` x 2, resourcesPerNode's 2 GPUs;
#   - admitted under quota (a ClusterQueue of exactly one TrainJob's 4 GPUs) and released, the
#     flavor's node selector and toleration and Kueue's labels in the entry's replicated Job
#     `node`; its queue cannot change now; the test plays Trainer: the Pods of the JobSet it
#     would build (runtime template + patch) carry the node selector;
#   - a second TrainJob waits held with QuotaReserved=False and "insufficient quota";
#   - the first finishes (Trainer's Complete condition) and releases the quota: the second is
#     admitted and released;
#   - a higher-priority TrainJob preempts the second: Evicted/Preempted, held again, the entry's
#     replicated Jobs removed, requeued; the urgent one is admitted;
#   - a TrainJob naming a TrainingRuntime that does not exist yet gets no Workload; once the
#     runtime is created (sluice watches runtimes) it gets one, with that runtime's pod sets.
# SIGTERM -> 0.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/ctrl_lib.sh"

it_name=ctrl_trainjob
API=trainer.kubeflow.org/v1alpha1
RES=trainjobs.trainer.kubeflow.org
KP='.spec.runtimePatches[?(@.manager=="kueue.x-k8s.io/manager")]'

# ---- environment: CRDs, queues, webhooks, operator ---------------------------------------------
ctrl_install_crds
for r in trainjobs trainingruntimes clustertrainingruntimes; do
    k apply -f "$src/test/data/crds-integrations/trainer.kubeflow.org_$r.yaml" >/dev/null ||
        fail "apply the test CRD of $r"
    k wait --for condition=Established --timeout=60s "crd/$r.trainer.kubeflow.org" >/dev/null ||
        fail "$r CRD not Established"
    wait_for 30 "discovery of $r" sh -c "kubectl get $r.trainer.kubeflow.org -A >/dev/null"
done
ctrl_sys_namespace
it_namespace
cq=it-trainjob-$sfx
fl=gpu-$sfx
rt=torch-$sfx
ctrl_wpcs "high-$sfx=1000"
ctrl_flavor "$fl" "tolerations: [{key: gpu, operator: Exists, effect: NoSchedule}]"
ctrl_cq "$cq" "$fl cpu=64 memory=64Gi nvidia.com/gpu=4" "preemption: {withinClusterQueue: LowerPriority}"
ctrl_lq lq "$cq"

# Trainer's torch-distributed shape: one trainer step `node` (its numNodes and resources come
# from each TrainJob), the runtime's own node selector.
ctrl_delete_at_exit clustertrainingruntimes.trainer.kubeflow.org "$rt"
k apply -f - >/dev/null <<EOT || fail "create ClusterTrainingRuntime $rt"
apiVersion: $API
kind: ClusterTrainingRuntime
metadata: {name: $rt}
spec:
  mlPolicy: {numNodes: 1, torch: {}}
  template:
    spec:
      replicatedJobs:
      - name: node
        template:
          metadata:
            labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}
          spec:
            template:
              metadata: {labels: {app: torch}}
              spec:
                restartPolicy: Never
                nodeSelector: {arch: amd64}
                containers:
                - name: node
                  image: busybox
                  resources: {requests: {cpu: 100m, memory: 100Mi}}
EOT

base=it-$sfx
ctrl_delete_at_exit validatingwebhookconfiguration "$base-validating-webhook-configuration"
ctrl_delete_at_exit mutatingwebhookconfiguration "$base-mutating-webhook-configuration"
port=$(ctrl_free_port)
hook() { # operations path name
    cat <<EOT
- name: $3.kueue.x-k8s.io
  clientConfig: {url: "https://127.0.0.1:$port$2"}
  rules: [{apiGroups: [trainer.kubeflow.org], apiVersions: [v1alpha1], operations: [$1], resources: [trainjobs]}]
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
    hook "CREATE, UPDATE" /validate-trainer-kubeflow-org-v1alpha1-trainjob vtrainjob
    printf -- '---\napiVersion: admissionregistration.k8s.io/v1\nkind: MutatingWebhookConfiguration\n'
    printf 'metadata: {name: %s-mutating-webhook-configuration}\nwebhooks:\n' "$base"
    hook CREATE /mutate-trainer-kubeflow-org-v1alpha1-trainjob mtrainjob
} | k apply -f - >/dev/null || fail "create the webhook configurations"
ctrl_config cfg <<EOT
integrations: {frameworks: [batch/job, trainer.kubeflow.org/trainjob]}
internalCertManagement: {enable: true, webhookServiceName: $base-webhook-service,
                         webhookSecretName: $base-webhook-server-cert}
EOT
ctrl_start op --config "$tmp/cfg.yaml" --namespace "$sys" --webhook-port "$port" \
    --webhook-cert-ip 127.0.0.1
for kc in validating mutating; do
    until_ 90 "caBundle in the $kc configuration" '[ -n "$(k get ${kc}webhookconfiguration $base-$kc-webhook-configuration -o jsonpath="{.webhooks[0].clientConfig.caBundle}")" ]'
done

# ---- objects ----------------------------------------------------------------------------------
# Create TrainJob NAME running in LocalQueue lq, labelled for the webhooks, naming runtime
# RUNTIME (of KIND, default the cluster one), 2 nodes of 2 GPUs; print the create's answer's
# spec.suspend and the manager of its runtimePatches: create NAME [PRIORITY_CLASS [RUNTIME KIND NODES]]
create() {
    pc=""
    [ -z "${2:-}" ] || pc=", kueue.x-k8s.io/priority-class: $2"
    cat <<EOT | k create -f - -o jsonpath='{.spec.suspend} {.spec.runtimePatches[*].manager}' || fail "create TrainJob $1"
apiVersion: $API
kind: TrainJob
metadata:
  name: $1
  namespace: $ns
  labels: {sluice-it: "$sfx", kueue.x-k8s.io/queue-name: lq$pc}
spec:
  suspend: false
  runtimeRef: {name: ${3:-$rt}, kind: ${4:-ClusterTrainingRuntime}}
  trainer:
    numNodes: ${5:-2}
    resourcesPerNode:
      requests: {nvidia.com/gpu: 2}
      limits: {nvidia.com/gpu: 2}
EOT
}
oget() { k get "$RES" -n "$ns" "$1" -o jsonpath="$2"; }
suspended() { oget "$1" '{.spec.suspend}'; }
# Field $2 of the pod template Kueue's entry of TrainJob $1 patches for replicated Job node.
patched() { oget "$1" "{$KP.trainingRuntimeSpec.template.spec.replicatedJobs[?(@.name==\"node\")].template.spec.template.$2}"; }
# Trainer reports TrainJob $1 finished (successfully).
finish() {
    now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
    k patch "$RES" -n "$ns" "$1" --subresource=status --type merge -p \
        "{\"status\":{\"conditions\":[{\"type\":\"Complete\",\"status\":\"True\",\"reason\":\"JobsCompleted\",\"message\":\"TrainJob $1 is completed\",\"lastTransitionTime\":\"$now\"}]}}" >/dev/null ||
        fail "finish TrainJob $1"
}
# Play Trainer for the released TrainJob $1: the Pods of the JobSet it builds, the runtime's pod
# template with the TrainJob's runtimePatches applied (the node selector merged).
children() {
    uid=$(oget "$1" '{.metadata.uid}')
    sel="{arch: amd64, pool: $(patched "$1" spec.nodeSelector.pool)}"
    for i in 0 1; do
        k apply -f - >/dev/null <<EOT || fail "create the Pod $1-node-0-$i"
apiVersion: v1
kind: Pod
metadata:
  name: $1-node-0-$i
  namespace: $ns
  labels: {kueue.x-k8s.io/podset: $(patched "$1" "metadata.labels.kueue\.x-k8s\.io/podset")}
  ownerReferences:
  - {apiVersion: $API, kind: TrainJob, name: $1, uid: $uid, controller: true, blockOwnerDeletion: true}
spec:
  restartPolicy: Never
  nodeSelector: $sel
  tolerations: [{key: gpu, operator: Exists, effect: NoSchedule}]
  containers: [{name: node, image: busybox}]
EOT
    done
}

# ---- the first: held on create, one Workload, admitted, released into runtimePatches -----------
# Every state of first, as a watch sees them: replayed afterwards from the collection's
# resourceVersion taken here (a `kubectl get -w` started in the background could list first only
# after its release when kubectl started slowly: a run under load saw no held state at all).
rv0=$(k get --raw "/apis/$API/namespaces/$ns/trainjobs?limit=1" | jq -r .metadata.resourceVersion) ||
    fail "the TrainJobs' resourceVersion"
[ "$(create first)" = "true kueue.x-k8s.io/manager" ] ||
    fail "first: the webhook did not hold it and add Kueue's runtimePatches entry: $(oget first '{.spec}')"
say "TrainJob first created running: held by the webhook, Kueue's runtimePatches entry added"
w1=$(wl_await first)
case "$w1" in trainjob-first-?????) ;; *) fail "Workload name $w1 is not Kueue's trainjob-first-<hash>" ;; esac
[ "$(wget_ "$w1" '{.metadata.ownerReferences[0].apiVersion} {.metadata.ownerReferences[0].kind} {.metadata.ownerReferences[0].controller}')" = "$API TrainJob true" ] ||
    fail "owner reference: $(wget_ "$w1" '{.metadata.ownerReferences}')"
got=$(wget_ "$w1" '{.spec.podSets[*].name}/{.spec.podSets[*].count}/{.spec.podSets[0].template.spec.containers[0].resources.requests.nvidia\.com/gpu}/{.spec.podSets[0].template.spec.nodeSelector.arch}')
[ "$got" = "node/2/2/amd64" ] || fail "pod sets $got, want node/2/2/amd64 (the runtime's, with Trainer's numNodes and resourcesPerNode)"
until_ 20 "Workload $w1 admitted" '[ "$(wcond "$w1" Admitted)" = True ]'
until_ 20 "TrainJob first released" '[ "$(suspended first)" = false ]'
[ "$(patched first spec.nodeSelector.pool)" = "$fl" ] || fail "first: runtimePatches node selector: $(oget first '{.spec.runtimePatches}')"
[ "$(patched first 'spec.tolerations[0].key')" = gpu ] || fail "first: runtimePatches toleration: $(oget first '{.spec.runtimePatches}')"
[ "$(patched first "metadata.labels.kueue\.x-k8s\.io/podset")" = node ] || fail "first: runtimePatches podset label"
[ "$(patched first "metadata.annotations.kueue\.x-k8s\.io/workload")" = "$w1" ] || fail "first: runtimePatches workload annotation"
say "first: Workload $w1 (node x 2, 2 GPUs each) admitted to $cq, released with pool=$fl, the toleration and Kueue's labels in its runtimePatches"
# Two writes, as Kueue (Trainer's webhook lets runtimePatches change only while suspended): the
# watch saw it held with the patch before it saw it released, and never released without it.
# The states of first since rv0, one line each: "<suspend> <patched replicated Jobs>".
k get --raw "/apis/$API/namespaces/$ns/trainjobs?watch=1&resourceVersion=$rv0&timeoutSeconds=3" |
    jq -r 'select(.object.metadata.name == "first") | .object.spec as $s |
        "first \($s.suspend) \([$s.runtimePatches[]? | select(.manager == "kueue.x-k8s.io/manager") |
        .trainingRuntimeSpec.template.spec.replicatedJobs[]?.name] | join(" "))"' >"$tmp/tj.trace" ||
    fail "replaying first's states from resourceVersion $rv0"
held=$(grep -n "^first true node$" "$tmp/tj.trace" | head -1 | cut -d: -f1)
run=$(grep -n "^first false" "$tmp/tj.trace" | head -1 | cut -d: -f1)
[ -n "$held" ] && [ -n "$run" ] && [ "$held" -lt "$run" ] ||
    fail "first: not patched while held before its release: $(cat "$tmp/tj.trace")"
! grep -q "^first false *$" "$tmp/tj.trace" || fail "first: released without its patch: $(cat "$tmp/tj.trace")"
say "first: runtimePatches written while held, released in a second write"
out=$(k patch "$RES" -n "$ns" first --type merge -p '{"metadata":{"labels":{"kueue.x-k8s.io/queue-name":"other"}}}' 2>&1) &&
    fail "the admitted TrainJob changed its queue: $out"
case "$out" in
*'denied the request'*'kueue.x-k8s.io/queue-name'*) say "queue change of the admitted first rejected" ;;
*) fail "unexpected answer to a queue change: $out" ;;
esac
children first
for p in $(k get pods -n "$ns" -o name); do
    [ "$(k get -n "$ns" "$p" -o jsonpath='{.spec.nodeSelector.pool}')" = "$fl" ] || fail "$p: no node selector"
done
say "Trainer's Pods ($(k get pods -n "$ns" -o name | wc -l)) carry pool=$fl"

# ---- the second waits, held, QuotaReserved=False "insufficient quota" ---------------------------
[ "$(create second)" = "true kueue.x-k8s.io/manager" ] || fail "second was created running"
w2=$(wl_await second)
until_ 20 "second's QuotaReserved=False saying insufficient quota" \
    '[ "$(wcond "$w2" QuotaReserved)" = False ] && wmsg "$w2" QuotaReserved | grep -q "insufficient quota"'
sleep 1
[ "$(suspended second)" = true ] || fail "second released while the quota is taken"
[ -z "$(patched second spec.nodeSelector.pool)" ] || fail "second patched while held"
say "second waits held: QuotaReserved=False $(wreason "$w2" QuotaReserved): $(wmsg "$w2" QuotaReserved)"

# ---- the first finishes: quota released, second admitted and released ---------------------------
finish first
until_ 30 "Workload $w1 Finished" '[ "$(wcond "$w1" Finished)" = True ]'
[ "$(wreason "$w1" Finished)" = Succeeded ] || fail "Finished reason $(wreason "$w1" Finished)"
until_ 20 "finalizer removed from $w1" '[ -z "$(wget_ "$w1" "{.metadata.finalizers}")" ]'
say "first Finished ($(wmsg "$w1" Finished))"
until_ 30 "second admitted" '[ "$(wcond "$w2" Admitted)" = True ]'
until_ 20 "TrainJob second released" '[ "$(suspended second)" = false ]'
[ "$(patched second spec.nodeSelector.pool)" = "$fl" ] || fail "second: runtimePatches node selector"
say "quota released: second admitted and released with pool=$fl"

# ---- preemption: a higher-priority one takes the quota; second held again, patch emptied ---------
[ "$(create urgent "high-$sfx")" = "true kueue.x-k8s.io/manager" ] || fail "urgent was created running"
w3=$(wl_await urgent)
until_ 30 "second evicted" '[ "$(wcond "$w2" Evicted)" = True ]'
[ "$(wreason "$w2" Evicted)" = Preempted ] || fail "Evicted reason $(wreason "$w2" Evicted)"
until_ 20 "TrainJob second held again" '[ "$(suspended second)" = true ]'
until_ 20 "second's runtimePatches emptied" '[ -z "$(oget second "{$KP.trainingRuntimeSpec.template.spec.replicatedJobs}")" ]'
[ "$(oget second "{$KP.manager}")" = kueue.x-k8s.io/manager ] || fail "second: Kueue's entry gone"
until_ 30 "urgent admitted" '[ "$(wcond "$w3" Admitted)" = True ]'
until_ 20 "second requeued" '[ "$(wcond "$w2" QuotaReserved)" = False ] && [ "$(wcond "$w2" Requeued)" = True ]'
until_ 20 "TrainJob urgent released" '[ "$(suspended urgent)" = false ]'
say "urgent (high-$sfx) preempted second: held again, its runtimePatches entry emptied, requeued; urgent released"

# ---- a runtime created after the TrainJob that names it --------------------------------------
[ "$(create late "" late-rt TrainingRuntime 1)" = "true kueue.x-k8s.io/manager" ] || fail "late was created running"
sleep 3
[ -z "$(wl_of late)" ] || fail "late got a Workload without its runtime: $(wl_of late)"
k apply -f - >/dev/null <<EOT || fail "create TrainingRuntime late-rt"
apiVersion: $API
kind: TrainingRuntime
metadata: {name: late-rt, namespace: $ns}
spec:
  mlPolicy: {numNodes: 3, torch: {}}
  template:
    spec:
      replicatedJobs:
      - name: dataset-initializer
        template:
          metadata:
            labels: {trainer.kubeflow.org/trainjob-ancestor-step: dataset-initializer}
          spec:
            template:
              spec:
                restartPolicy: Never
                containers: [{name: dataset-initializer, image: busybox, resources: {requests: {cpu: 100m}}}]
      - name: node
        template:
          metadata:
            labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}
          spec:
            template:
              spec:
                restartPolicy: Never
                containers: [{name: node, image: busybox}]
EOT
w4=$(wl_await late)
got=$(wget_ "$w4" '{.spec.podSets[*].name}/{.spec.podSets[*].count}')
[ "$got" = "dataset-initializer node/1 1" ] || fail "late: pod sets $got, want dataset-initializer node/1 1"
say "late: no Workload until its TrainingRuntime was created; then $w4 ($got)"

ctrl_events_have CreatedWorkload Started Stopped
ctrl_stop op
say "ok"
