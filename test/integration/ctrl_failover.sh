#!/bin/sh
# ctrl_failover -- leader election between two operators on a coordination.k8s.io/v1 Lease:
# only the leader writes; when the leader dies (SIGKILL, no release) in the middle of a burst of
# Jobs, the standby takes over within one lease duration (+ a retry period) and admits the rest
# without touching what is already admitted; SIGTERM releases the Lease (holder cleared) and
# exits 0. "Never both wrote" is checked on the API's own order: watch traces of the Lease and
# of the Workloads record each change's resourceVersion (etcd's revision, one order across
# resources); every admission before the Lease passed to op-b is op-a's, every one after is
# op-b's (its log names each), and none is written twice.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/ctrl_lib.sh"

ctrl_install_crds
it_namespace
ctrl_trace
ctrl_sys_namespace
cq=it-fo-$sfx
ctrl_queues "$cq" "gpu-$sfx cpu=8 nvidia.com/gpu=8"
# Short lease timings so the test is quick; the defaults are Kueue's 15 s / 10 s / 2 s.
ctrl_config config <<EOT
leaderElection: {leaderElect: true, resourceName: sluice-it-$sfx, leaseDuration: 6s,
                 renewDeadline: 4s, retryPeriod: 1s}
EOT
lease() { k get lease -n "$sys" "sluice-it-$sfx" -o jsonpath="$1" 2>/dev/null; }

ctrl_start a --config "$tmp/config.yaml" --namespace "$sys" --identity op-a
until_ 20 "op-a to lead" 'grep -q "op-a acquired the lease" "$tmp/a.log"'
ctrl_start b --config "$tmp/config.yaml" --namespace "$sys" --identity op-b
[ "$(lease '{.spec.holderIdentity}')" = op-a ] || fail "holder: $(lease '{.spec.holderIdentity}')"
# The traces: "resourceVersion holder" per Lease change, "resourceVersion name clusterQueue"
# per Workload change (clusterQueue empty while not admitted).
k get leases -n "$sys" --field-selector "metadata.name=sluice-it-$sfx" -w \
    -o jsonpath='{.metadata.resourceVersion} {.spec.holderIdentity}{"\n"}' >"$tmp/lease.trace" 2>"$tmp/lease.trace.err" &
tl=$!
k get workloads.kueue.x-k8s.io -n "$ns" -w \
    -o jsonpath='{.metadata.resourceVersion} {.metadata.name} {.status.admission.clusterQueue}{"\n"}' >"$tmp/wl.trace" 2>"$tmp/wl.trace.err" &
tw=$!
it_on_exit "kill $tl $tw 2>/dev/null || true"
runner_start

tjob one 2 3600
until_ 30 "one admitted and running" '[ "$(jget one "{.status.active}")" = 1 ]'
w1=$(wl_of one)
sleep 2
grep -q "$w1: admitted" "$tmp/a.log" || fail "the leader did not admit one"
! grep -q ": admitted to\|: started\|: suspended" "$tmp/b.log" || fail "the standby wrote: $(ctrl_log b)"
t1=$(wtime "$w1" QuotaReserved)
say "op-a leads and admitted one; op-b stands by without writing"

# A burst of Jobs; the leader crashes in the middle of it (no release). op-b must take over
# within a lease duration + a retry period (6 s + 1 s; +1 s for whole-second clocks).
for i in 1 2 3 4; do
    tjob "m$i" 1 3600
    [ $i != 2 ] || { ctrl_kill a; t0=$(date +%s); }
done
until_ 15 "op-b to take over" 'grep -q "op-b acquired the lease" "$tmp/b.log"'
took=$(($(date +%s) - t0))
[ "$took" -le 8 ] || fail "op-b took over after ${took}s (lease 6s, retry 1s)"
[ "$(lease '{.spec.holderIdentity}')" = op-b ] || fail "holder after failover: $(lease '{.spec.holderIdentity}')"
tjob two 2 3600
until_ 30 "two admitted by op-b" '[ "$(jget two "{.status.active}")" = 1 ]'
for i in 1 2 3 4; do
    until_ 30 "m$i admitted and running" '[ "$(jget "m$i" "{.status.active}")" = 1 ]'
done
grep -q "$(wl_of two): admitted" "$tmp/b.log" || fail "op-b did not admit two"
! grep -q "$w1: admitted" "$tmp/b.log" || fail "op-b admitted one again"
[ "$(wtime "$w1" QuotaReserved)" = "$t1" ] ||
    fail "one's admission was rewritten"
[ "$(jget one '{.spec.suspend}')" = false ] || fail "one was stopped by the failover"
say "op-a killed mid-burst: op-b took over in ${took}s (lease 6s), admitted the rest, left one alone"

# Never both wrote, on the API's order. R_b: the revision at which the Lease passed to op-b.
sleep 1
rb=$(awk '$2 == "op-b" { print $1; exit }' "$tmp/lease.trace")
[ -n "$rb" ] || fail "no Lease change to op-b in the trace: $(cat "$tmp/lease.trace")"
# Each Workload's admissions: the changes where clusterQueue goes from empty to set.
awk '{ if ($3 != "" && adm[$2] == "") print $1, $2; adm[$2] = $3 }' "$tmp/wl.trace" >"$tmp/admissions"
[ "$(wc -l <"$tmp/admissions")" -ge 6 ] || fail "admissions traced: $(cat "$tmp/admissions")"
awk '{ n[$2]++ } END { for (w in n) if (n[w] > 1) { print w; bad = 1 } exit bad }' "$tmp/admissions" ||
    fail "a Workload admitted twice without an eviction: $(cat "$tmp/admissions")"
before=0 after=0
while read -r rv wl; do
    if [ "$rv" -lt "$rb" ]; then
        before=$((before + 1))
        ! grep -q "/$wl: admitted" "$tmp/b.log" || fail "op-b logged $wl admitted, at revision $rv before it held the Lease ($rb)"
    else
        after=$((after + 1))
        grep -q "/$wl: admitted" "$tmp/b.log" || fail "$wl admitted at revision $rv after op-b took the Lease ($rb), not by op-b"
        ! grep -q "/$wl: admitted" "$tmp/a.log" || fail "op-a logged $wl admitted, written after op-b took the Lease"
    fi
done <"$tmp/admissions"
[ "$after" -ge 2 ] || fail "op-b admitted $after of the burst"
say "API order: $before admissions before the Lease passed to op-b (revision $rb), $after after, each by the holder, none twice"

# Graceful stop: the Lease is released for the next candidate.
ctrl_stop b
[ -z "$(lease '{.spec.holderIdentity}')" ] || fail "lease still held by $(lease '{.spec.holderIdentity}') after SIGTERM"
grep -q "lease released" "$tmp/b.log" || fail "no release logged"
say "SIGTERM: op-b exited 0 and released the Lease"
ctrl_verify "$cq"
say "PASS"
