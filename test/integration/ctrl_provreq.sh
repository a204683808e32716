#!/bin/sh
# ctrl_provreq -- the ProvisioningRequest admission check under `sluice run` (issue 17): an
# AdmissionCheck of controllerName kueue.x-k8s.io/provisioning-request is inactive while its
# ProvisioningRequestConfig is missing (BadParametersRef) and Active once it exists; a Job in its
# ClusterQueue gets quota reserved and stays suspended with the check Pending while sluice creates
# the ProvisioningRequest (class, parameters, one PodTemplate per pod set, created owned by the
# Workload and then handed to the request).
# The test plays the cluster autoscaler: Provisioned=True -> the check Ready, the Job admitted and
# started with the consume-provisioning-request annotations on its pod template; Failed -> Retry
# (evicted, requeued after the config's backoff), a second request created, the first deleted;
# Failed again past backoffLimitCount -> Rejected, the Workload deactivated.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/ctrl_lib.sh"

ctrl_install_crds
k apply -f "$src/test/data/crds-integrations/autoscaling.x-k8s.io_provisioningrequests.yaml" >/dev/null ||
    fail "apply the ProvisioningRequest CRD"
k wait --for condition=Established --timeout=60s crd/provisioningrequests.autoscaling.x-k8s.io >/dev/null ||
    fail "ProvisioningRequest CRD not Established"
k wait --for condition=Established --timeout=60s crd/provisioningrequestconfigs.kueue.x-k8s.io >/dev/null ||
    fail "ProvisioningRequestConfig CRD not Established"
it_namespace
ctrl_trace
cq=it-prov-$sfx
ac=prov-$sfx
prc=prc-$sfx
ctrl_flavor "f-$sfx"
ctrl_delete_at_exit admissioncheck "$ac"
ctrl_delete_at_exit provisioningrequestconfigs.kueue.x-k8s.io "$prc"
k apply -f - >/dev/null <<EOT || fail "create AdmissionCheck $ac"
apiVersion: kueue.x-k8s.io/v1beta2
kind: AdmissionCheck
metadata: {name: $ac}
spec:
  controllerName: kueue.x-k8s.io/provisioning-request
  parameters: {apiGroup: kueue.x-k8s.io, kind: ProvisioningRequestConfig, name: $prc}
EOT
ctrl_cq "$cq" "f-$sfx cpu=4 nvidia.com/gpu=2" "admissionChecksStrategy: {admissionChecks: [{name: $ac}]}"
ctrl_lq lq "$cq"

ctrl_start op --log-level debug
it_on_fail "tail -n 40 \"$tmp/op.log\"" "k get provisioningrequests.autoscaling.x-k8s.io -n \"$ns\" -o yaml | tail -n 40"
runner_start

acget() { k get admissioncheck "$ac" -o jsonpath="{.status.conditions[?(@.type==\"Active\")].$1}"; }
cqreason() { k get clusterqueue "$cq" -o jsonpath='{.status.conditions[?(@.type=="Active")].reason}'; }
until_ 30 "AdmissionCheck inactive without its config" '[ "$(acget status)" = False ]'
[ "$(acget reason)" = BadParametersRef ] || fail "Active reason $(acget reason)"
case "$(acget message)" in *"\"$prc\" not found"*) ;; *) fail "Active message: $(acget message)" ;; esac
until_ 30 "ClusterQueue inactive" '[ "$(cqreason)" = AdmissionCheckInactive ]'
say "$ac: Active=False BadParametersRef ($(acget message)); $cq AdmissionCheckInactive"

k apply -f - >/dev/null <<EOT || fail "create ProvisioningRequestConfig $prc"
apiVersion: kueue.x-k8s.io/v1beta2
kind: ProvisioningRequestConfig
metadata: {name: $prc}
spec:
  provisioningClassName: queued-provisioning.gke.io
  parameters: {maxRunDurationSeconds: "3600"}
  managedResources: [nvidia.com/gpu]
  retryStrategy: {backoffLimitCount: 1, backoffBaseSeconds: 5, backoffMaxSeconds: 10}
EOT
until_ 30 "AdmissionCheck active" '[ "$(acget status)" = True ]'
[ "$(acget reason)" = Active ] || fail "Active reason $(acget reason)"
until_ 30 "ClusterQueue active" '[ "$(cqreason)" = Ready ]'
say "$ac: Active=True once $prc exists; $cq Ready"

prget() { k get provisioningrequests.autoscaling.x-k8s.io -n "$ns" "$1" -o jsonpath="$2" 2>/dev/null; }
# The test as the cluster autoscaler: condition TYPE=True on request $1 (status subresource).
prset() {
    t=$(date -u +%Y-%m-%dT%H:%M:%SZ)
    k patch provisioningrequests.autoscaling.x-k8s.io -n "$ns" "$1" --subresource=status --type merge -p \
        "{\"status\":{\"conditions\":[{\"type\":\"Accepted\",\"status\":\"True\",\"reason\":\"Accepted\",\"message\":\"accepted\",\"lastTransitionTime\":\"$t\"},{\"type\":\"$2\",\"status\":\"True\",\"reason\":\"$2\",\"message\":\"$3\",\"lastTransitionTime\":\"$t\"}]}}" >/dev/null ||
        fail "set $2 on ProvisioningRequest $1"
}
if ! k patch --help 2>/dev/null | grep -q -- '--subresource'; then
    # kubectl before 1.24: the status subresource through the raw API
    prset() {
        t=$(date -u +%Y-%m-%dT%H:%M:%SZ)
        body="{\"status\":{\"conditions\":[{\"type\":\"Accepted\",\"status\":\"True\",\"reason\":\"Accepted\",\"message\":\"accepted\",\"lastTransitionTime\":\"$t\"},{\"type\":\"$2\",\"status\":\"True\",\"reason\":\"$2\",\"message\":\"$3\",\"lastTransitionTime\":\"$t\"}]}}"
        cur=$(k get --raw "/apis/autoscaling.x-k8s.io/v1/namespaces/$ns/provisioningrequests/$1") || fail "get $1"
        echo "$cur" | python3 -c 'import json,sys; o=json.load(sys.stdin); o.update(json.loads(sys.argv[1])); print(json.dumps(o))' "$body" >"$tmp/pr.json"
        k replace --raw "/apis/autoscaling.x-k8s.io/v1/namespaces/$ns/provisioningrequests/$1/status" -f "$tmp/pr.json" >/dev/null ||
            fail "set $2 on ProvisioningRequest $1"
    }
fi

# A Job with GPU limits (a PodTemplate needs the limit of an extended resource; Kueue's copy of
# the pod set's template into it, and sluice's, adds no limit).
gjob() {
    cat <<EOT | k apply -f - >/dev/null || fail "create Job $1"
apiVersion: batch.test.sluice.dev/v1
kind: Job
metadata:
  name: $1
  namespace: $ns
  labels: {kueue.x-k8s.io/queue-name: lq}
  annotations: {test.sluice.dev/runtime-seconds: "3600"}
spec:
  suspend: true
  parallelism: 1
  completions: 1
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: main
        image: busybox
        resources: {requests: {cpu: 100m}, limits: {nvidia.com/gpu: $2}}
EOT
}

# One GPU Job: quota reserved, the check Pending, a request with its pod set.
gjob train 2
w=$(wl_await train)
until_ 30 "QuotaReserved" '[ "$(wcond "$w" QuotaReserved)" = True ]'
[ "$(wcond "$w" Admitted)" = False ] || fail "Admitted before the nodes exist"
pr=$w-$ac-1
until_ 30 "ProvisioningRequest $pr" '[ -n "$(prget "$pr" "{.metadata.name}")" ]'
[ "$(prget "$pr" '{.spec.provisioningClassName}')" = queued-provisioning.gke.io ] || fail "class: $(prget "$pr" '{.spec}')"
[ "$(prget "$pr" '{.spec.parameters.maxRunDurationSeconds}')" = 3600 ] || fail "parameters: $(prget "$pr" '{.spec}')"
[ "$(prget "$pr" '{.spec.podSets[0].count}')" = 1 ] || fail "podSets: $(prget "$pr" '{.spec.podSets}')"
pt=$(prget "$pr" '{.spec.podSets[0].podTemplateRef.name}')
[ "$pt" = "ppt-$pr-main" ] || fail "podTemplateRef $pt, want ppt-$pr-main"
[ "$(prget "$pr" '{.metadata.ownerReferences[0].kind}/{.metadata.ownerReferences[0].name}')" = "Workload/$w" ] ||
    fail "request owner: $(prget "$pr" '{.metadata.ownerReferences}')"
until_ 30 "PodTemplate $pt" 'k get podtemplate -n "$ns" "$pt" >/dev/null 2>&1'
[ "$(k get podtemplate -n "$ns" "$pt" -o jsonpath='{.template.spec.containers[0].resources.requests.nvidia\.com/gpu}/{.template.spec.containers[0].resources.limits.nvidia\.com/gpu}')" = 2/2 ] ||
    fail "PodTemplate $pt: $(k get podtemplate -n "$ns" "$pt" -o json)"
[ "$(k get podtemplate -n "$ns" "$pt" -o jsonpath='{.template.spec.nodeSelector.pool}')" = "f-$sfx" ] ||
    fail "PodTemplate $pt lacks the flavor's node selector"
# Created owned by the Workload, then handed to the request (Kueue's ownership transfer).
until_ 30 "PodTemplate $pt owned by $pr" \
    '[ "$(k get podtemplate -n "$ns" "$pt" -o jsonpath="{.metadata.ownerReferences[0].kind}/{.metadata.ownerReferences[0].name}")" = "ProvisioningRequest/$pr" ]'
[ "$(k get podtemplate -n "$ns" "$pt" -o jsonpath='{.metadata.ownerReferences[0].uid}')" = "$(prget "$pr" '{.metadata.uid}')" ] ||
    fail "PodTemplate owner uid"
[ "$(wget_ "$w" '{.status.admissionChecks[0].state}')" = Pending ] || fail "check: $(wget_ "$w" '{.status.admissionChecks}')"
sleep 2
[ "$(jget train '{.spec.suspend}')" = true ] || fail "Job started before the nodes exist"
say "train reserved, $ac Pending, suspended; $pr (queued-provisioning.gke.io, 1 x $pt)"

# The autoscaler provisions: Ready, admitted, started with the annotations.
prset "$pr" Provisioned "capacity is available"
until_ 30 "train Admitted" '[ "$(wcond "$w" Admitted)" = True ]'
[ "$(wget_ "$w" '{.status.admissionChecks[0].state}')" = Ready ] || fail "check: $(wget_ "$w" '{.status.admissionChecks}')"
until_ 30 "train started" '[ "$(jget train "{.spec.suspend}")" = false ]'
[ "$(jget train '{.spec.template.metadata.annotations.autoscaling\.x-k8s\.io/consume-provisioning-request}')" = "$pr" ] ||
    fail "consume annotation: $(jget train '{.spec.template.metadata.annotations}')"
[ "$(jget train '{.spec.template.metadata.annotations.autoscaling\.x-k8s\.io/provisioning-class-name}')" = queued-provisioning.gke.io ] ||
    fail "class annotation: $(jget train '{.spec.template.metadata.annotations}')"
ctrl_events_have ProvisioningRequestCreated
say "train: $pr Provisioned -> $ac Ready, Admitted, started with consume-provisioning-request=$pr"

# A second Job: its request Failed -> Retry (evicted, back after 5 s), attempt 2 created.
jcomplete train
gjob second 2
w2=$(wl_await second)
until_ 60 "second reserved" '[ "$(wcond "$w2" QuotaReserved)" = True ]'
pr1=$w2-$ac-1
until_ 30 "ProvisioningRequest $pr1" '[ -n "$(prget "$pr1" "{.metadata.name}")" ]'
prset "$pr1" Failed "out of stock"
until_ 60 "second evicted (Retry) and its check reset" \
    '[ "$(wget_ "$w2" "{.status.admissionChecks[0].retryCount}")" = 1 ]'
grep -q "workload $ns/$w2: AdmissionCheck: Evicted due to AdmissionCheck in Retry state: \"$ac\" (Retrying after failure: out of stock)" "$tmp/op.log" ||
    fail "no Retry eviction in the log"
[ "$(wget_ "$w2" "{.status.admissionChecks[0].requeueAfterSeconds}")" = 5 ] ||
    fail "requeueAfterSeconds: $(wget_ "$w2" "{.status.admissionChecks[0]}")"
pr2=$w2-$ac-2
until_ 90 "second reserved again and ProvisioningRequest $pr2" '[ -n "$(prget "$pr2" "{.metadata.name}")" ]'
[ "$(wcond "$w2" QuotaReserved)" = True ] || fail "attempt 2 without quota"
[ "$(jget second '{.spec.suspend}')" = true ] || fail "second started"
until_ 30 "$pr1 deleted" '[ -z "$(prget "$pr1" "{.metadata.name}")" ]'
say "second: $pr1 Failed -> Retry, evicted, requeued after 5 s; $pr2 created, $pr1 deleted"
prset "$pr2" Failed "still out of stock"
until_ 60 "second deactivated" '[ "$(wget_ "$w2" "{.spec.active}")" = false ]'
# Kueue's eviction on deactivation sets the check back to Pending, naming the Rejected.
case "$(wget_ "$w2" "{.status.admissionChecks[0].message}")" in *"Previously: Rejected"*) ;;
*) fail "check: $(wget_ "$w2" "{.status.admissionChecks[0]}")" ;; esac
[ "$(wreason "$w2" Evicted)" = DeactivatedDueToAdmissionCheck ] || fail "Evicted reason $(wreason "$w2" Evicted)"
case "$(wmsg "$w2" Evicted)" in *"still out of stock"*) ;; *) fail "Evicted message: $(wmsg "$w2" Evicted)" ;; esac
ctrl_events_have AdmissionCheckRejected
say "second: $pr2 Failed past backoffLimitCount 1 -> Rejected, deactivated ($(wmsg "$w2" Evicted))"

ctrl_verify "$cq"
ctrl_stop op
say ok
