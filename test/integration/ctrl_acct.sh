#!/bin/sh
# ctrl_acct -- the accounting log of `sluice run` against the real API server (issue 18): a
# low-priority Job of 4 GPUs is admitted, preempted by a high-priority one, readmitted when that
# finishes, and finishes itself; `--accounting-log` then holds exactly three records in the order
# the admissions ended (low preempted InClusterQueue, high finished, low finished), each with the
# Workload, namespace, LocalQueue, ClusterQueue, flavor and its 4 GPUs; the hash chain verifies,
# and `sluice report` counts 3 admissions, 1 preemption and 2 finished for the namespace.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/ctrl_lib.sh"

ctrl_install_crds
it_namespace
ctrl_trace
cq=it-acct-$sfx
ctrl_wpcs "low-$sfx=100" "high-$sfx=1000"
ctrl_queues "$cq" "gpu-$sfx cpu=8 nvidia.com/gpu=4" "preemption: {withinClusterQueue: LowerPriority}"
log="$tmp/accounting.jsonl"
# The operator watches every namespace: a Workload of an earlier test whose namespace is being
# deleted can end its admission in this log too. The checks read this namespace's records.
mine="$tmp/mine.jsonl"
own() { jq -c --arg ns "$ns" 'select(.namespace == $ns)' "$log" >"$mine" 2>/dev/null || : >"$mine"; }
count() { own; wc -l <"$mine"; }
ctrl_start op --accounting-log "$log"

tjob low 4 3600 "low-$sfx"
wl=$(wl_await low)
until_ 30 "low admitted" '[ "$(wcond "$wl" Admitted)" = True ]'
[ "$(count)" = 0 ] || fail "a record before any admission ended: $(cat "$mine")"
tjob high 4 3600 "high-$sfx"
wh=$(wl_await high)
until_ 30 "low preempted and released" '[ "$(wcond "$wl" Evicted)" = True ] && [ -z "$(wget_ "$wl" "{.status.admission}")" ]'
until_ 30 "high admitted" '[ "$(wcond "$wh" Admitted)" = True ]'
until_ 20 "the preemption's record" '[ "$(count)" -ge 1 ]'
say "low preempted by high: $(count) record"

jcomplete high
until_ 30 "low admitted again" '[ "$(wcond "$wl" Admitted)" = True ]'
jcomplete low
until_ 30 "low finished" '[ "$(wcond "$wl" Finished)" = True ]'
until_ 20 "three records" '[ "$(count)" -ge 3 ]'
ctrl_stop op
[ "$(count)" = 3 ] || fail "$(count) records, want 3: $(cat "$mine")"

# One line per ended admission, in the order they ended, with what the issue lists.
rec() { sed -n "$1p" "$mine" | jq -r "$2"; }
want() { [ "$(rec "$1" "$2")" = "$3" ] || fail "record $1 $2: $(rec "$1" "$2"), want $3: $(sed -n "$1p" "$mine")"; }
want 1 '.workload + " " + .outcome + " " + .reason' "$wl preempted InClusterQueue"
want 2 '.workload + " " + .outcome + " " + .reason' "$wh finished Succeeded"
want 3 '.workload + " " + .outcome + " " + .reason' "$wl finished Succeeded"
for i in 1 2 3; do
    want $i '.source + " " + .namespace + " " + .localQueue + " " + .clusterQueue' "operator $ns lq $cq"
    want $i '.flavors | join(",")' "gpu-$sfx"
    want $i '.podSets[0].name + " " + (.podSets[0].count | tostring) + " " + .podSets[0].resources["nvidia.com/gpu"]' "main 1 4"
    # the log's own sequence: increasing (another namespace's records may sit between)
    [ $i = 1 ] || [ "$(rec $i .seq)" -gt "$(rec $((i - 1)) .seq)" ] ||
        fail "record $i: seq $(rec $i .seq) after $(rec $((i - 1)) .seq)"
    [ "$(rec $i .admittedAt)" \< "$(rec $i .endedAt)" ] || [ "$(rec $i .admittedAt)" = "$(rec $i .endedAt)" ] ||
        fail "record $i ends before it starts: $(sed -n "${i}p" "$mine")"
done
want 1 '.priorityClass + " " + (.priority | tostring)' "low-$sfx 100"
want 2 '.priorityClass + " " + (.priority | tostring)' "high-$sfx 1000"
say "3 records: low preempted (InClusterQueue), high finished, low finished; 4 GPUs of gpu-$sfx each"

# sluice report reads the operator's log: chain verified, per-namespace counts.
"$sluice" report --verify -o json "$log" >"$tmp/report.json" 2>"$tmp/report.err" ||
    fail "sluice report --verify: $(cat "$tmp/report.err")"
row=".groups[] | select(.key == \"$ns\")"
got=$(jq -r "[$row | .admissions, .preempted, .finished] | map(tostring) | join(\" \")" "$tmp/report.json" 2>/dev/null) || got=""
[ "$got" = "3 1 2" ] || fail "report for $ns: '$got', want '3 1 2': $(cat "$tmp/report.json")"
# An edited record breaks the chain.
sed '2s/"Succeeded"/"Failed"/' "$log" >"$tmp/edited.jsonl"
! "$sluice" report --verify "$tmp/edited.jsonl" >/dev/null 2>&1 || fail "an edited record passed --verify"
ctrl_verify "$cq"
say "PASS"
