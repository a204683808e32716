#!/bin/sh
# ctrl_checks -- admission checks under `sluice run` (issue 17): a ClusterQueue naming an
# AdmissionCheck without an Active condition is inactive (AdmissionCheckInactive); active, a
# Job's Workload gets its quota reserved (QuotaReserved=True, Admitted=False
# UnsatisfiedAdmissionChecks, the check Pending) and its Job stays suspended; the test plays the
# check's controller: Ready with podSetUpdates -> Admitted, the Job started with them merged;
# Retry -> evicted (AdmissionCheck), the check reset to Pending, reserved again; Rejected ->
# deactivated with a Warning event AdmissionCheckRejected.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/ctrl_lib.sh"

ctrl_install_crds
it_namespace
ctrl_trace
cq=it-checks-$sfx
ac=manual-$sfx
ctrl_flavor "f-$sfx"
ctrl_delete_at_exit admissioncheck "$ac"
k apply -f - >/dev/null <<EOT || fail "create AdmissionCheck $ac"
apiVersion: kueue.x-k8s.io/v1beta2
kind: AdmissionCheck
metadata: {name: $ac}
spec: {controllerName: example.com/manual}
EOT
ctrl_cq "$cq" "f-$sfx cpu=4 nvidia.com/gpu=2" "admissionChecksStrategy: {admissionChecks: [{name: $ac}]}"
ctrl_lq lq "$cq"

ctrl_start op
runner_start

cqreason() { k get clusterqueue "$cq" -o jsonpath='{.status.conditions[?(@.type=="Active")].reason}'; }
until_ 20 "ClusterQueue inactive (check without Active)" '[ "$(cqreason)" = AdmissionCheckInactive ]'
say "ClusterQueue $cq: $(k get clusterqueue "$cq" -o jsonpath='{.status.conditions[?(@.type=="Active")].message}')"

now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
k patch admissioncheck "$ac" --subresource=status --type merge -p \
    "{\"status\":{\"conditions\":[{\"type\":\"Active\",\"status\":\"True\",\"reason\":\"Active\",\"message\":\"the test plays it\",\"lastTransitionTime\":\"$now\"}]}}" >/dev/null ||
    fail "activate $ac"
until_ 20 "ClusterQueue active" '[ "$(cqreason)" = Ready ]'

# Quota reserved, not admitted: the Job waits for the check.
tjob train 2 3600
w=$(wl_await train)
until_ 20 "QuotaReserved" '[ "$(wcond "$w" QuotaReserved)" = True ]'
[ "$(wcond "$w" Admitted)" = False ] || fail "Admitted before the check is Ready"
[ "$(wreason "$w" Admitted)" = UnsatisfiedAdmissionChecks ] || fail "Admitted reason $(wreason "$w" Admitted)"
[ "$(wget_ "$w" '{.status.admissionChecks[0].name}/{.status.admissionChecks[0].state}')" = "$ac/Pending" ] ||
    fail "admissionChecks: $(wget_ "$w" '{.status.admissionChecks}')"
sleep 2
[ "$(jget train '{.spec.suspend}')" = true ] || fail "Job started before its check is Ready"
# The quota is held: a second 2-GPU Job does not get it.
tjob second 2 3600
w2=$(wl_await second)
until_ 20 "second's explanation" '[ -n "$(wmsg "$w2" QuotaReserved)" ]'
[ "$(wcond "$w2" QuotaReserved)" = False ] || fail "second reserved into held quota"
say "train reserved ($ac Pending), suspended; second waits: $(wmsg "$w2" QuotaReserved)"

# The check's controller says Ready, with podSetUpdates.
setcheck() { # setcheck WORKLOAD STATE MESSAGE [PODSETUPDATES-JSON [MORE-FIELDS]]
    t=$(date -u +%Y-%m-%dT%H:%M:%SZ)
    k patch workloads.kueue.x-k8s.io -n "$ns" "$1" --subresource=status --type merge -p \
        "{\"status\":{\"admissionChecks\":[{\"name\":\"$ac\",\"state\":\"$2\",\"message\":\"$3\",\"lastTransitionTime\":\"$t\"${4:+,\"podSetUpdates\":$4}${5:+,$5}}]}}" >/dev/null ||
        fail "set $ac to $2 on $1"
}
setcheck "$w" Ready "nodes provisioned" '[{"name":"main","nodeSelector":{"provisioned":"yes"},"labels":{"checked":"yes"},"annotations":{"check/note":"ok"}}]'
until_ 20 "train Admitted" '[ "$(wcond "$w" Admitted)" = True ]'
until_ 20 "train started" '[ "$(jget train "{.spec.suspend}")" = false ]'
[ "$(jget train '{.spec.template.spec.nodeSelector.provisioned}')" = yes ] ||
    fail "podSetUpdates nodeSelector not merged: $(jget train '{.spec.template.spec.nodeSelector}')"
[ "$(jget train '{.spec.template.spec.nodeSelector.pool}')" = "f-$sfx" ] || fail "flavor nodeSelector lost"
[ "$(jget train '{.spec.template.metadata.labels.checked}')" = yes ] || fail "podSetUpdates label not merged"
[ "$(jget train '{.spec.template.metadata.annotations.check/note}')" = ok ] || fail "podSetUpdates annotation not merged"
say "train: $ac Ready -> Admitted, started with nodeSelector provisioned=yes and label checked=yes"

# train finishes: second is reserved; its check says Retry -> evicted, reset, reserved again.
jcomplete train
until_ 30 "second reserved" '[ "$(wcond "$w2" QuotaReserved)" = True ]'
until_ 20 "second's check listed" '[ -n "$(wget_ "$w2" "{.status.admissionChecks[0].name}")" ]'
setcheck "$w2" Retry "no capacity in the zone"
until_ 30 "second evicted and reserved again" \
    '[ "$(wget_ "$w2" "{.status.admissionChecks[0].message}")" = "Reset to Pending after eviction. Previously: Retry" ] && [ "$(wcond "$w2" QuotaReserved)" = True ]'
grep -q "workload $ns/$w2: AdmissionCheck: Evicted due to AdmissionCheck in Retry state: \"$ac\" (no capacity in the zone)" "$tmp/op.log" ||
    fail "no Retry eviction in the log"
[ "$(jget second '{.spec.suspend}')" = true ] || fail "second started"
[ "$(wget_ "$w2" "{.status.admissionChecks[0].retryCount}")" = 1 ] ||
    fail "retryCount after one Retry: $(wget_ "$w2" "{.status.admissionChecks[0]}")"
say "second: $ac Retry -> evicted, check reset to Pending (retryCount 1), reserved again"

# Retry with a delay (requeueAfterSeconds): evicted, Requeued=False AdmissionCheck until
# requeueState.requeueAt = the check's lastTransitionTime + 20 s, reserved only after it; the
# reset keeps the delay and counts the retry; the reservation keeps the entry whole.
# (a check controller keeps retryCount as Kueue's SetAdmissionCheckState does)
setcheck "$w2" Retry "busy, come back later" "" '"requeueAfterSeconds":20,"retryCount":1'
retry_t=$t # the lastTransitionTime setcheck wrote (the reset rewrites it)
until_ 60 "second held in backoff" '[ "$(wreason "$w2" Requeued)" = AdmissionCheck ] && [ "$(wcond "$w2" Requeued)" = False ]'
want=$(date -u -d "@$(($(date -u -d "$retry_t" +%s) + 20))" +%Y-%m-%dT%H:%M:%SZ)
[ "$(wget_ "$w2" "{.status.requeueState.requeueAt}")" = "$want" ] ||
    fail "requeueAt $(wget_ "$w2" "{.status.requeueState.requeueAt}"), want $want"
[ "$(wcond "$w2" QuotaReserved)" != True ] || fail "reserved while in backoff"
[ "$(wget_ "$w2" "{.status.admissionChecks[0].retryCount}")" = 2 ] ||
    fail "retryCount after two Retries: $(wget_ "$w2" "{.status.admissionChecks[0]}")"
[ "$(wget_ "$w2" "{.status.admissionChecks[0].requeueAfterSeconds}")" = 20 ] ||
    fail "requeueAfterSeconds not kept: $(wget_ "$w2" "{.status.admissionChecks[0]}")"
say "second: Retry after 20 s -> Requeued=False AdmissionCheck, requeueAt $want"
until_ 90 "second reserved after its backoff" '[ "$(wcond "$w2" QuotaReserved)" = True ]'
[ "$(wreason "$w2" Requeued)" = BackoffFinished ] || fail "Requeued reason $(wreason "$w2" Requeued)"
rt=$(wtime "$w2" QuotaReserved)
[ "$(date -u -d "$rt" +%s)" -ge "$(date -u -d "$want" +%s)" ] || fail "reserved at $rt, before requeueAt $want"
say "second: BackoffFinished, reserved again at $rt"

# A pending Workload whose check a controller sets to Retry (it holds no quota): inadmissible,
# "The workload has failed admission checks" (Kueue's scheduler), even once quota is free.
tjob third 2 3600
w3=$(wl_await third)
setcheck "$w3" Retry "not yet"
until_ 30 "third's failed-checks message" '[ "$(wmsg "$w3" QuotaReserved)" = "The workload has failed admission checks" ]'
say "third: $ac Retry while pending -> $(wreason "$w3" QuotaReserved): $(wmsg "$w3" QuotaReserved)"

# Rejected: deactivated, quota freed.
setcheck "$w2" Rejected "the region cannot host it"
until_ 30 "second deactivated" '[ "$(wget_ "$w2" "{.spec.active}")" = false ]'
until_ 30 "second released" '[ "$(wcond "$w2" QuotaReserved)" != True ]'
[ "$(wreason "$w2" Evicted)" = DeactivatedDueToAdmissionCheck ] || fail "Evicted reason $(wreason "$w2" Evicted)"
ctrl_events_have AdmissionCheckRejected QuotaReserved Admitted
say "second: $ac Rejected -> deactivated ($(wmsg "$w2" Evicted))"
[ "$(wcond "$w3" QuotaReserved)" != True ] || fail "third reserved with a failed check"
[ "$(wmsg "$w3" QuotaReserved)" = "The workload has failed admission checks" ] ||
    fail "third: $(wmsg "$w3" QuotaReserved)"
setcheck "$w3" Pending "again"
until_ 60 "third reserved once its check is Pending" '[ "$(wcond "$w3" QuotaReserved)" = True ]'
say "third: $ac Pending again -> reserved"

ctrl_verify "$cq"
ctrl_stop op
say ok
