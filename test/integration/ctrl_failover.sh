#!/bin/sh
# ctrl_failover -- leader election between two operators on a coordination.k8s.io/v1 Lease:
# only the leader writes; when the leader dies (SIGKILL, no release) the standby takes over
# within one lease duration and admits new work without touching what is already admitted;
# SIGTERM releases the Lease (holder cleared) and exits 0.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/ctrl_lib.sh"

ctrl_install_crds
it_namespace
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
runner_start

tjob one 2 3600
until_ 30 "one admitted and running" '[ "$(jget one "{.status.active}")" = 1 ]'
w1=$(wl_of one)
sleep 2
grep -q "$w1: admitted" "$tmp/a.log" || fail "the leader did not admit one"
! grep -q ": admitted to\|: started\|: suspended" "$tmp/b.log" || fail "the standby wrote: $(ctrl_log b)"
t1=$(wtime "$w1" QuotaReserved)
say "op-a leads and admitted one; op-b stands by without writing"

# The leader crashes: no release. op-b must take over within a lease duration (+ retry).
ctrl_kill a
t0=$(date +%s)
until_ 15 "op-b to take over" 'grep -q "op-b acquired the lease" "$tmp/b.log"'
took=$(($(date +%s) - t0))
[ "$(lease '{.spec.holderIdentity}')" = op-b ] || fail "holder after failover: $(lease '{.spec.holderIdentity}')"
tjob two 2 3600
until_ 30 "two admitted by op-b" '[ "$(jget two "{.status.active}")" = 1 ]'
grep -q "$(wl_of two): admitted" "$tmp/b.log" || fail "op-b did not admit two"
! grep -q "$w1: admitted" "$tmp/b.log" || fail "op-b admitted one again"
[ "$(wtime "$w1" QuotaReserved)" = "$t1" ] ||
    fail "one's admission was rewritten"
[ "$(jget one '{.spec.suspend}')" = false ] || fail "one was stopped by the failover"
say "op-a killed: op-b took over in ${took}s (lease 6s), admitted two, left one alone"

# Graceful stop: the Lease is released for the next candidate.
ctrl_stop b
[ -z "$(lease '{.spec.holderIdentity}')" ] || fail "lease still held by $(lease '{.spec.holderIdentity}') after SIGTERM"
grep -q "lease released" "$tmp/b.log" || fail "no release logged"
say "SIGTERM: op-b exited 0 and released the Lease"
say "PASS"
