#!/bin/sh
# crds_integrations -- the test CRDs of the kinds sluice admits besides batch/v1 Job
# (test/data/crds-integrations/: JobSet, the Kubeflow jobs, TrainJob, RayJob, RayCluster,
# LeaderWorkerSet; written from each kind's published API reference, see docs/testing.md) install
# on the API server and become Established; one example object per kind (the shapes of Kueue's
# documentation examples, test/data/crds-integrations/examples/) is created suspended; and what
# sluice writes into such an object round-trips through the server: the suspend field, and in
# every pod template a nodeSelector, tolerations, labels and annotations, while the fields the
# schema does not type (container images, commands) are kept. The typed fields reject a wrong
# type, the status subresource takes conditions, LeaderWorkerSet's scale subresource scales.
. "$(dirname "$0")/lib.sh"

dir=$src/test/data/crds-integrations
files=$(find "$dir" -maxdepth 1 -name '*.yaml' | sort)
[ -n "$files" ] || fail "no CRD manifests in $dir"
k apply -f "$dir/" >/dev/null || fail "kubectl apply -f $dir/"
n=0
for f in $files; do
    crd=$(k apply -f "$f" --dry-run=client -o name)
    k wait --for condition=Established --timeout=60s "$crd" >/dev/null || fail "$crd not Established"
    acc=$(k get "$crd" -o jsonpath='{.status.conditions[?(@.type=="NamesAccepted")].status}')
    [ "$acc" = True ] || fail "$crd: NamesAccepted=$acc"
    st=$(k get "$crd" -o jsonpath='{.spec.scope} {.spec.versions[0].subresources.status}')
    # Trainer's runtimes have no status; a ClusterTrainingRuntime is cluster-scoped.
    case "$crd" in
    *clustertrainingruntimes.*) want="Cluster " ;;
    *trainingruntimes.*) want="Namespaced " ;;
    *) want="Namespaced {}" ;;
    esac
    [ "$st" = "$want" ] || fail "$crd: scope and status subresource: '$st', want '$want'"
    n=$((n + 1))
done
[ $n -eq 14 ] || fail "expected 14 CRDs in $dir, found $n"
say "$n CRDs Established (namespaced, status subresource)"

it_namespace

# A JSON pointer (/spec/replicatedJobs/0/template) as a kubectl JSONPath (.spec.replicatedJobs[0].template).
jp() { echo "$1" | sed -e 's#/\([0-9][0-9]*\)#[\1]#g' -e 's#/#.#g'; }
get() { k get -n "$ns" "$res" "$name" -o jsonpath="{$1}"; }

# roundtrip FILE RESOURCE NAME SUSPEND PREP TEMPLATE...
#   SUSPEND: JSON pointer of the kind's suspend field, or - (none); PREP: JSON Patch operations
#   (a JSON array's items, may be empty) that create the template paths; TEMPLATE: JSON pointers of
#   the places sluice writes an admission's node selector, tolerations, labels and annotations.
roundtrip() {
    file=$dir/examples/$1 res=$2 name=$3 suspend=$4 prep=$5
    shift 5
    wait_for 30 "discovery of $res" k get "$res" -n "$ns"
    k apply -n "$ns" -f "$file" >/dev/null || fail "create $res $name from $file"
    if [ "$suspend" != - ]; then
        [ "$(get "$(jp "$suspend")")" = true ] || fail "$res $name: $suspend not true after create"
    fi
    ops=$prep
    for t in "$@"; do
        ops="${ops:+$ops,}{\"op\":\"add\",\"path\":\"$t/metadata\",\"value\":{\"labels\":{\"kueue.x-k8s.io/podset\":\"ps\"},\"annotations\":{\"kueue.x-k8s.io/workload\":\"wl-1\"}}}"
        ops="$ops,{\"op\":\"add\",\"path\":\"$t/spec/nodeSelector\",\"value\":{\"cloud.provider.com/accelerator\":\"h100\"}}"
        ops="$ops,{\"op\":\"add\",\"path\":\"$t/spec/tolerations\",\"value\":[{\"key\":\"nvidia.com/gpu\",\"operator\":\"Exists\",\"effect\":\"NoSchedule\"}]}"
    done
    [ "$suspend" = - ] || ops="$ops,{\"op\":\"replace\",\"path\":\"$suspend\",\"value\":false}"
    k patch -n "$ns" "$res" "$name" --type=json -p "[$ops]" >/dev/null || fail "$res $name: start patch [$ops]"
    [ "$suspend" = - ] || [ "$(get "$(jp "$suspend")")" = false ] || fail "$res $name: $suspend not false after start"
    for t in "$@"; do
        p=$(jp "$t")
        v=$(get "$p.spec.nodeSelector.cloud\.provider\.com/accelerator")
        [ "$v" = h100 ] || fail "$res $name: $t nodeSelector read back as '$v'"
        v=$(get "$p.spec.tolerations[0].key")/$(get "$p.spec.tolerations[0].effect")
        [ "$v" = nvidia.com/gpu/NoSchedule ] || fail "$res $name: $t tolerations read back as '$v'"
        v=$(get "$p.metadata.labels.kueue\.x-k8s\.io/podset")/$(get "$p.metadata.annotations.kueue\.x-k8s\.io/workload")
        [ "$v" = ps/wl-1 ] || fail "$res $name: $t labels/annotations read back as '$v'"
        case $t in */template)
            v=$(get "$p.spec.containers[0].image")
            [ -n "$v" ] || fail "$res $name: $t lost its container image (unknown fields pruned)"
            ;;
        esac
    done
    # Stop: suspended again, the node selector removed, as jobs_stop() restores the template.
    ops=
    for t in "$@"; do
        ops="${ops:+$ops,}{\"op\":\"remove\",\"path\":\"$t/spec/nodeSelector\"}"
    done
    [ "$suspend" = - ] || ops="$ops,{\"op\":\"replace\",\"path\":\"$suspend\",\"value\":true}"
    k patch -n "$ns" "$res" "$name" --type=json -p "[$ops]" >/dev/null || fail "$res $name: stop patch [$ops]"
    [ "$suspend" = - ] || [ "$(get "$(jp "$suspend")")" = true ] || fail "$res $name: $suspend not true after stop"
    for t in "$@"; do
        v=$(get "$(jp "$t").spec.nodeSelector")
        [ -z "$v" ] || fail "$res $name: $t nodeSelector still '$v' after stop"
    done
    # The typed suspend field refuses a string.
    if [ "$suspend" != - ]; then
        expect_fail "must be of type boolean" k patch -n "$ns" "$res" "$name" --type=json \
            -p "[{\"op\":\"replace\",\"path\":\"$suspend\",\"value\":\"yes\"}]"
    fi
    if [ "$suspend" = - ]; then held="no suspend field"; else held="created suspended, $suspend"; fi
    say "$res: $held; nodeSelector, tolerations, labels, annotations in $# pod template(s) set and removed"
}

roundtrip jobset.yaml jobsets.jobset.x-k8s.io sleep-jobset /spec/suspend "" \
    /spec/replicatedJobs/0/template/spec/template /spec/replicatedJobs/1/template/spec/template
[ "$(get .spec.replicatedJobs[1].replicas)" = 1 ] || fail "JobSet replicas not defaulted to 1"
[ "$(get .spec.network.subdomain)" = some-subdomain ] || fail "JobSet spec.network (not typed) was pruned"
roundtrip pytorchjob.yaml pytorchjobs.kubeflow.org pytorch-simple /spec/runPolicy/suspend "" \
    /spec/pytorchReplicaSpecs/Master/template /spec/pytorchReplicaSpecs/Worker/template
roundtrip tfjob.yaml tfjobs.kubeflow.org tensorflow-dist-mnist /spec/runPolicy/suspend "" \
    /spec/tfReplicaSpecs/PS/template /spec/tfReplicaSpecs/Worker/template
roundtrip xgboostjob.yaml xgboostjobs.kubeflow.org xgboost-dist-iris /spec/runPolicy/suspend "" \
    /spec/xgbReplicaSpecs/Master/template /spec/xgbReplicaSpecs/Worker/template
roundtrip paddlejob.yaml paddlejobs.kubeflow.org paddle-simple-cpu /spec/runPolicy/suspend "" \
    /spec/paddleReplicaSpecs/Worker/template
roundtrip jaxjob.yaml jaxjobs.kubeflow.org jaxjob-simple /spec/runPolicy/suspend "" \
    /spec/jaxReplicaSpecs/Worker/template
roundtrip mpijob.yaml mpijobs.kubeflow.org pi /spec/runPolicy/suspend "" \
    /spec/mpiReplicaSpecs/Launcher/template /spec/mpiReplicaSpecs/Worker/template
# A TrainJob has no pod template: an admission goes into spec.podTemplateOverrides.
roundtrip trainjob.yaml trainjobs.trainer.kubeflow.org pytorch-distributed /spec/suspend \
    '{"op":"add","path":"/spec/podTemplateOverrides","value":[{"targetJobs":[{"name":"node"}],"spec":{}}]}' \
    /spec/podTemplateOverrides/0
[ "$(get .spec.podTemplateOverrides[0].targetJobs[0].name)" = node ] || fail "TrainJob targetJobs read back wrong"
roundtrip rayjob.yaml rayjobs.ray.io rayjob-sample /spec/suspend "" \
    /spec/rayClusterSpec/headGroupSpec/template /spec/rayClusterSpec/workerGroupSpecs/0/template
roundtrip raycluster.yaml rayclusters.ray.io raycluster-sample /spec/suspend "" \
    /spec/headGroupSpec/template /spec/workerGroupSpecs/0/template
roundtrip leaderworkerset.yaml leaderworkersets.leaderworkerset.x-k8s.io nginx-leaderworkerset - "" \
    /spec/leaderWorkerTemplate/leaderTemplate /spec/leaderWorkerTemplate/workerTemplate

# Replica counts are typed: a negative or non-integer count is refused.
res=jobsets.jobset.x-k8s.io name=sleep-jobset
expect_fail "spec.replicatedJobs.replicas" k patch -n "$ns" "$res" "$name" --type=json \
    -p '[{"op":"replace","path":"/spec/replicatedJobs/0/replicas","value":-1}]'
expect_fail "must be of type integer" k patch -n "$ns" pytorchjobs.kubeflow.org pytorch-simple --type=json \
    -p '[{"op":"replace","path":"/spec/pytorchReplicaSpecs/Worker/replicas","value":"two"}]'

# The status subresource: a write to the object leaves status alone; /status takes conditions.
cond='{"type":"Suspended","status":"True","reason":"ByTest","message":"held","lastTransitionTime":"2026-01-01T00:00:00Z"}'
if k patch --help 2>/dev/null | grep -q -- '--subresource'; then
    for r in jobsets.jobset.x-k8s.io/sleep-jobset pytorchjobs.kubeflow.org/pytorch-simple \
        mpijobs.kubeflow.org/pi trainjobs.trainer.kubeflow.org/pytorch-distributed \
        rayclusters.ray.io/raycluster-sample leaderworkersets.leaderworkerset.x-k8s.io/nginx-leaderworkerset; do
        k patch -n "$ns" "$r" --type=merge -p "{\"status\":{\"conditions\":[$cond]}}" >/dev/null || fail "$r: patch"
        [ -z "$(k get -n "$ns" "$r" -o jsonpath='{.status.conditions}')" ] || fail "$r: status written through the object"
        k patch -n "$ns" "$r" --subresource=status --type=merge -p "{\"status\":{\"conditions\":[$cond]}}" >/dev/null ||
            fail "$r: patch /status"
        v=$(k get -n "$ns" "$r" -o jsonpath='{.status.conditions[0].type}={.status.conditions[0].status}')
        [ "$v" = Suspended=True ] || fail "$r: status.conditions read back as '$v'"
    done
    k patch -n "$ns" rayjobs.ray.io/rayjob-sample --subresource=status --type=merge \
        -p '{"status":{"jobDeploymentStatus":"Suspended","rayClusterName":"rayjob-sample-raycluster"}}' >/dev/null ||
        fail "RayJob: patch /status"
    [ "$(k get -n "$ns" rayjobs.ray.io/rayjob-sample -o jsonpath='{.status.jobDeploymentStatus}')" = Suspended ] ||
        fail "RayJob status.jobDeploymentStatus not read back"
    say "status subresource: conditions written through /status only"
else
    say "kubectl has no 'patch --subresource' (before 1.24): status writes not checked"
fi

# LeaderWorkerSet's scale subresource moves spec.replicas.
k scale -n "$ns" leaderworkersets.leaderworkerset.x-k8s.io/nginx-leaderworkerset --replicas=3 >/dev/null ||
    fail "kubectl scale leaderworkerset"
v=$(k get -n "$ns" leaderworkersets.leaderworkerset.x-k8s.io/nginx-leaderworkerset -o jsonpath='{.spec.replicas}')
[ "$v" = 3 ] || fail "LeaderWorkerSet spec.replicas after scale: '$v'"
say "LeaderWorkerSet scale subresource: spec.replicas 3"
say "PASS"
