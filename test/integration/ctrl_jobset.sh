#!/bin/sh
# ctrl_jobset -- issue 14's acceptance example against the real API server, with the JobSet
# integration enabled (integrations.frameworks) and the test JobSet CRD installed: a ClusterQueue
# with 8 GPUs and two JobSets, each 2 replicated Jobs x 4 pods x 1 GPU, queued. The first gets
# one Workload (Kueue's name, owner, two pod sets named by its replicated Jobs), is admitted and
# unsuspended with the flavor's node selector and toleration in every replicated Job's pod
# template; the second stays suspended with QuotaReserved=False "insufficient quota" and has no
# pod (no child Job) before its admission. The test plays the JobSet controller (creates the
# child Jobs of an unsuspended JobSet -- they get no Workload of their own -- and marks the JobSet
# Completed): finishing releases the quota and the second is admitted. A higher-priority JobSet
# then preempts it: suspended again, its templates restored, its quota released and requeued.
# A JobSet created running is suspended before it is admitted. SIGTERM -> 0.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/ctrl_lib.sh"

JS=jobsets.jobset.x-k8s.io
ctrl_install_crds
# The test CRD of helper D (test/data/crds-integrations/), left installed like the others.
k apply -f "$src/test/data/crds-integrations/jobset.x-k8s.io_jobsets.yaml" >/dev/null ||
    fail "apply the test JobSet CRD"
k wait --for condition=Established --timeout=60s "crd/$JS" >/dev/null || fail "JobSet CRD not Established"
wait_for 30 "discovery of the JobSet CRD" sh -c "kubectl get $JS -A >/dev/null"
it_namespace
cq=it-jobset-$sfx
fl=gpu-$sfx
ctrl_wpcs "high-$sfx=1000"
ctrl_flavor "$fl" "tolerations: [{key: gpu, operator: Exists, effect: NoSchedule}]"
ctrl_cq "$cq" "$fl cpu=64 nvidia.com/gpu=8" "preemption: {withinClusterQueue: LowerPriority}"
ctrl_lq lq "$cq"
ctrl_trace
ctrl_config cfg <<EOT
integrations: {frameworks: [batch/job, jobset.x-k8s.io/jobset]}
EOT
ctrl_start op --config "$tmp/cfg.yaml"
runner_start

# A JobSet in LocalQueue lq: 2 replicated Jobs (leader, workers) x 4 pods x 1 GPU.
# jobset NAME [SUSPEND] [PRIORITY_CLASS]
jobset() {
    pc=""
    [ -z "${3:-}" ] || pc="kueue.x-k8s.io/priority-class: $3"
    {
        cat <<EOT
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: $1
  namespace: $ns
  labels: {kueue.x-k8s.io/queue-name: lq, $pc}
spec:
  suspend: ${2:-true}
  replicatedJobs:
EOT
        for rj in leader workers; do
            cat <<EOT
  - name: $rj
    replicas: 1
    template:
      spec:
        parallelism: 4
        completions: 4
        template:
          metadata: {labels: {role: $rj}}
          spec:
            restartPolicy: Never
            containers:
            - name: main
              image: busybox
              resources: {requests: {cpu: 100m, nvidia.com/gpu: 1}}
EOT
        done
    } | k apply -f - >/dev/null || fail "create JobSet $1"
}
jsget() { k get $JS -n "$ns" "$1" -o jsonpath="$2"; }
# Number of child Jobs (test Jobs owned by JobSet $1).
children() {
    k get $TJ -n "$ns" -o jsonpath="{range .items[?(@.metadata.ownerReferences[0].name==\"$1\")]}{.metadata.name}{\"\\n\"}{end}" | grep -c . || true
}
# Play the JobSet controller for the unsuspended JobSet $1: one child Job per replicated Job,
# owned by it, carrying its labels and the (started) pod template, running for RUNTIME s.
js_children() {
    uid=$(jsget "$1" '{.metadata.uid}')
    for i in 0 1; do
        rj=$(jsget "$1" "{.spec.replicatedJobs[$i].name}")
        tmpl=$(jsget "$1" "{.spec.replicatedJobs[$i].template.spec.template}")
        cat <<EOT | k apply -f - >/dev/null || fail "create the child Job $1-$rj-0"
apiVersion: batch.test.sluice.dev/v1
kind: Job
metadata:
  name: $1-$rj-0
  namespace: $ns
  labels: {kueue.x-k8s.io/queue-name: lq, jobset.sigs.k8s.io/jobset-name: $1}
  annotations: {test.sluice.dev/runtime-seconds: "$2"}
  ownerReferences:
  - {apiVersion: jobset.x-k8s.io/v1alpha2, kind: JobSet, name: $1, uid: $uid, controller: true, blockOwnerDeletion: true}
spec:
  suspend: false
  parallelism: 4
  completions: 4
  template: $tmpl
EOT
    done
}
# Mark JobSet $1 Completed (as the JobSet controller does once its Jobs succeeded).
js_complete() {
    now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
    k patch $JS -n "$ns" "$1" --subresource=status --type merge -p \
        "{\"status\":{\"replicatedJobsStatus\":[{\"name\":\"leader\",\"succeeded\":1,\"active\":0,\"ready\":0},{\"name\":\"workers\",\"succeeded\":1,\"active\":0,\"ready\":0}],\"conditions\":[{\"type\":\"Completed\",\"status\":\"True\",\"reason\":\"AllJobsCompleted\",\"message\":\"jobset completed successfully\",\"lastTransitionTime\":\"$now\"}]}}" >/dev/null ||
        fail "mark JobSet $1 Completed"
}
# The JobSet's replicated Job $2's pod-template field $3 (jsonpath below .spec of the pod).
rjpod() { jsget "$1" "{.spec.replicatedJobs[?(@.name==\"$2\")].template.spec.template.spec.$3}"; }

# ---- the first JobSet: one Workload, two pod sets, admitted, started with the flavor ---------
jobset first
w1=$(wl_await first)
case "$w1" in jobset-first-?????) ;; *) fail "Workload name $w1 is not Kueue's jobset-first-<hash>" ;; esac
[ "$(wget_ "$w1" '{.metadata.ownerReferences[0].apiVersion} {.metadata.ownerReferences[0].kind} {.metadata.ownerReferences[0].controller}')" = "jobset.x-k8s.io/v1alpha2 JobSet true" ] ||
    fail "owner reference: $(wget_ "$w1" '{.metadata.ownerReferences}')"
[ "$(wget_ "$w1" '{.spec.podSets[*].name}')" = "leader workers" ] || fail "pod sets $(wget_ "$w1" '{.spec.podSets[*].name}')"
[ "$(wget_ "$w1" '{.spec.podSets[*].count}')" = "4 4" ] || fail "pod set counts $(wget_ "$w1" '{.spec.podSets[*].count}')"
[ "$(wget_ "$w1" '{.spec.queueName}')" = lq ] || fail "queueName"
until_ 20 "Workload $w1 admitted" '[ "$(wcond "$w1" Admitted)" = True ]'
[ "$(wget_ "$w1" '{.status.admission.podSetAssignments[*].name}')" = "leader workers" ] ||
    fail "assignments $(wget_ "$w1" '{.status.admission.podSetAssignments}')"
until_ 20 "JobSet first unsuspended" '[ "$(jsget first "{.spec.suspend}")" = false ]'
for rj in leader workers; do
    [ "$(rjpod first $rj nodeSelector.pool)" = "$fl" ] || fail "$rj: nodeSelector $(rjpod first $rj nodeSelector)"
    [ "$(rjpod first $rj 'tolerations[0].key')" = gpu ] || fail "$rj: flavor toleration not merged"
    [ "$(jsget first "{.spec.replicatedJobs[?(@.name==\"$rj\")].template.spec.template.metadata.labels.kueue\.x-k8s\.io/podset}")" = $rj ] ||
        fail "$rj: podset label"
done
say "JobSet first: Workload $w1 (pod sets leader, workers: 4 + 4), admitted to $cq, started with nodeSelector pool=$fl in both replicated Jobs"

# ---- the second waits, suspended, QuotaReserved=False "insufficient quota", no pod ----------
jobset second
w2=$(wl_await second)
# The first explanation written can be the engine's "pending evaluation" (queued, not yet
# tried): wait for the verdict.
until_ 20 "second's QuotaReserved=False saying insufficient quota" \
    '[ "$(wcond "$w2" QuotaReserved)" = False ] && wmsg "$w2" QuotaReserved | grep -q "insufficient quota"'
[ "$(jsget second '{.spec.suspend}')" = true ] || fail "second started while the quota is taken"
say "second waits: QuotaReserved=False $(wreason "$w2" QuotaReserved): $(wmsg "$w2" QuotaReserved)"

# ---- the JobSet controller's part: children of first only; they get no Workload ------------
js_children first 3600
sleep 2
[ "$(children second)" = 0 ] || fail "the held JobSet second has child Jobs"
for c in first-leader-0 first-workers-0; do
    [ -z "$(wl_of "$c")" ] || fail "child Job $c got a Workload: $(wl_of "$c")"
    [ "$(jget "$c" '{.spec.suspend}')" = false ] || fail "child Job $c was suspended"
done
until_ 20 "the children run" '[ "$(jget first-leader-0 "{.status.active}")" = 4 ]'
say "first's child Jobs run without Workloads of their own; second has none"

# ---- finish releases the quota: second admitted and started ---------------------------------
js_complete first
until_ 30 "Workload $w1 Finished" '[ "$(wcond "$w1" Finished)" = True ]'
[ "$(wreason "$w1" Finished)" = Succeeded ] || fail "Finished reason $(wreason "$w1" Finished)"
until_ 20 "finalizer removed from $w1" '[ -z "$(wget_ "$w1" "{.metadata.finalizers}")" ]'
until_ 30 "second admitted after first finished" '[ "$(wcond "$w2" Admitted)" = True ]'
until_ 20 "JobSet second unsuspended" '[ "$(jsget second "{.spec.suspend}")" = false ]'
[ "$(rjpod second workers nodeSelector.pool)" = "$fl" ] || fail "second: nodeSelector"
say "first Finished (Succeeded), its quota released; second admitted and started"

# ---- preemption: a higher-priority JobSet takes the quota; second is stopped and restored ----
jobset urgent true "high-$sfx"
w3=$(wl_await urgent)
until_ 30 "second evicted" '[ "$(wcond "$w2" Evicted)" = True ]'
[ "$(wreason "$w2" Evicted)" = Preempted ] || fail "Evicted reason $(wreason "$w2" Evicted)"
until_ 20 "JobSet second suspended again" '[ "$(jsget second "{.spec.suspend}")" = true ]'
until_ 20 "second's templates restored" '[ -z "$(rjpod second leader nodeSelector)" ] && [ -z "$(rjpod second workers nodeSelector)" ]'
[ -z "$(rjpod second workers tolerations)" ] || fail "second: toleration not removed"
until_ 30 "urgent admitted" '[ "$(wcond "$w3" Admitted)" = True ]'
until_ 20 "second requeued" '[ "$(wcond "$w2" QuotaReserved)" = False ] && [ "$(wcond "$w2" Requeued)" = True ]'
until_ 20 "JobSet urgent unsuspended" '[ "$(jsget urgent "{.spec.suspend}")" = false ]'
say "urgent (high-$sfx) preempted second: second suspended, templates restored, requeued; urgent started"

# ---- a JobSet created running is suspended before it is admitted -----------------------------
jobset rogue false
until_ 20 "rogue suspended" 'grep -q "jobset $ns/rogue: suspended" "$tmp/op.log"'
wr=$(wl_await rogue)
[ -n "$wr" ] || fail "no Workload for rogue"
[ "$(jsget rogue '{.spec.suspend}')" = true ] || fail "rogue runs without quota"
# The checker below wants every pending Workload to end with its reason: the explanation is
# written within its own budget, after the suspension (a CI run verified before it landed).
until_ 20 "rogue's pending explanation" '[ -n "$(wmsg "$wr" QuotaReserved)" ]'
say "a JobSet created running was suspended (no quota left for it)"

ctrl_events_have CreatedWorkload Started Stopped
ctrl_stop op
ctrl_verify "$cq"
say "ok"
