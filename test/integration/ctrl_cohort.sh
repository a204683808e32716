#!/bin/sh
# ctrl_cohort -- borrowing and reclaim across a cohort, and a quota change, with the real API
# server: a Job borrows its neighbour's unused GPUs; when the neighbour needs them back its Job
# reclaims them (the borrower is preempted: InCohortReclamation); raising the borrower's own
# nominal quota with kubectl lets it in again.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/ctrl_lib.sh"

ctrl_install_crds
it_namespace
ctrl_trace
a=it-co-a-$sfx b=it-co-b-$sfx
ctrl_queues "$a" "gpu-$sfx cpu=8 nvidia.com/gpu=2" "cohortName: co-$sfx" "preemption: {reclaimWithinCohort: Never}"
ctrl_cq "$b" "gpu-$sfx cpu=8 nvidia.com/gpu=2" "cohortName: co-$sfx" "preemption: {reclaimWithinCohort: Any}"
ctrl_lq lq-b "$b"

ctrl_start op
runner_start

# a1 needs 4 GPUs, its queue has 2: it borrows b's 2 unused ones.
tjob a1 4 3600
until_ 30 "a1 admitted and running" '[ "$(jget a1 "{.status.active}")" = 1 ]'
w1=$(wl_of a1)
until_ 20 "a's status to show the borrowing" '[ "$(k get clusterqueue $a -o jsonpath="{.status.flavorsReservation[0].resources[?(@.name==\"nvidia.com/gpu\")].borrowed}")" = 2 ]'
grep -q "$w1: admitted to $a (borrowing)" "$tmp/op.log" || fail "admission not logged as borrowing"
say "a1 admitted in $a borrowing 2 GPUs from the cohort"

# b1 needs b's nominal 2 GPUs back: a1 is preempted (reclaim), b1 runs. b1 is created in a's
# LocalQueue and moved to b's while suspended: its Workload follows the label.
tjob b1 2 3600
k label $TJ -n "$ns" b1 kueue.x-k8s.io/queue-name=lq-b --overwrite >/dev/null
w2=$(wl_await b1)
until_ 30 "a1 preempted" '[ "$(wcond "$w1" Preempted)" = True ]'
[ "$(wreason "$w1" Preempted)" = InCohortReclamation ] || fail "Preempted reason $(wreason "$w1" Preempted)"
until_ 30 "b1 admitted and running" '[ "$(wcond "$w2" Admitted)" = True ] && [ "$(jget b1 "{.status.active}")" = 1 ]'
until_ 30 "a1 stopped and requeued" '[ "$(jget a1 "{.spec.suspend}")" = true ] && [ "$(wcond "$w1" QuotaReserved)" = False ]'
sleep 2
[ "$(wcond "$w1" QuotaReserved)" = False ] || fail "a1 readmitted without room"
say "b1 reclaimed b's quota: a1 preempted (InCohortReclamation) and waiting"

# A quota change with kubectl: a's own nominal quota goes to 4 -> a1 fits without borrowing.
k patch clusterqueue "$a" --type json -p '[{"op":"replace","path":"/spec/resourceGroups/0/flavors/0/resources/1/nominalQuota","value":4}]' >/dev/null ||
    fail "raise $a's quota"
until_ 30 "a1 readmitted after the quota change" '[ "$(wcond "$w1" Admitted)" = True ] && [ "$(jget a1 "{.spec.suspend}")" = false ]'
[ "$(wcond "$w2" Admitted)" = True ] || fail "b1 lost its admission"
until_ 20 "a's status: 4 GPUs reserved, none borrowed" '[ "$(k get clusterqueue $a -o jsonpath="{.status.flavorsReservation[0].resources[?(@.name==\"nvidia.com/gpu\")].total}/{.status.flavorsReservation[0].resources[?(@.name==\"nvidia.com/gpu\")].borrowed}")" = 4/0 ]'
ctrl_stop op
say "raising $a's nominal quota to 4 readmitted a1 without borrowing"
ctrl_verify "$a" "$b"
say "PASS"
