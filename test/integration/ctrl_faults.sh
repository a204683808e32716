#!/bin/sh
# ctrl_faults -- `sluice run` talks to the API server through test/faultproxy.c, which faults 5 %
# of the requests (500, 503, 429 with Retry-After, 409 on writes, resets, 3 s stalls, 500 and
# resets after the write was applied, watches cut after 0-2 s). Twelve 1-GPU Jobs through a
# ClusterQueue of 4 GPUs must all finish, and a watch trace of the Workloads (through the real
# API, not the proxy) is replayed change by change: never more than 4 admitted and unfinished at
# once, every Workload admitted exactly once. FAULT_SHARE / FAULT_JOBS change the load.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/ctrl_lib.sh"

proxy=${SLUICE_FAULTPROXY:-}
[ -x "$proxy" ] || fail "SLUICE_FAULTPROXY does not name the built test/faultproxy (got '$proxy')"
share=${FAULT_SHARE:-5}
jobs=${FAULT_JOBS:-12}
seed=$(od -An -N2 -tu2 /dev/urandom | tr -d ' ')

ctrl_install_crds
it_namespace
ctrl_trace
ctrl_sys_namespace
cq=it-fa-$sfx
ctrl_queues "$cq" "gpu-$sfx cpu=8 nvidia.com/gpu=4"

"$proxy" --share "$share" --seed "$seed" --port-file "$tmp/proxy.port" >"$tmp/proxy.out" 2>&1 &
ppid=$!
it_on_exit "kill $ppid 2>/dev/null || true"
until_ 10 "the fault proxy to listen" '[ -s "$tmp/proxy.port" ]'
cat >"$tmp/proxy.kubeconfig" <<EOT
apiVersion: v1
kind: Config
clusters: [{name: proxy, cluster: {server: "http://127.0.0.1:$(cat "$tmp/proxy.port")"}}]
users: [{name: proxy, user: {}}]
contexts: [{name: proxy, context: {cluster: proxy, user: proxy}}]
current-context: proxy
EOT
k get workloads.kueue.x-k8s.io -n "$ns" -w \
    -o jsonpath='{.metadata.resourceVersion} {.metadata.name} {.status.admission.clusterQueue}|{.status.conditions[?(@.type=="Finished")].status}{"\n"}' >"$tmp/wl.trace" 2>"$tmp/wl.trace.err" &
tw=$!
it_on_exit "kill $tw 2>/dev/null || true"
# waitForPodsReady off: its blockAdmission admits one Job at a time until its pods are ready,
# and the quota check wants four at once.
ctrl_start op --kubeconfig "$tmp/proxy.kubeconfig" --namespace "$sys" --pods-ready-timeout false
runner_start
t0=$(date +%s)
i=0
while [ $i -lt "$jobs" ]; do
    i=$((i + 1))
    # 5 s each: long enough that the quota fills even when faults and a loaded machine slow
    # every admission down (at 2 s a busy CI machine saw at most 2 of the 4 running at once)
    tjob "j$i" 1 5
done
done_() { k get $TJ -n "$ns" -o jsonpath='{range .items[*]}{.status.succeeded}{"\n"}{end}' | grep -c '^1$'; }
until_ 300 "all $jobs Jobs to finish through the faults" '[ "$(done_)" = "$jobs" ]'
took=$(($(date +%s) - t0))
sleep 2
kill "$tw" 2>/dev/null || true
kill -TERM "$ppid"
wait "$ppid" || true
faults=$(tail -n 1 "$tmp/proxy.out")
total=$(echo "$faults" | sed -n 's/.*total \([0-9]*\).*/\1/p')
[ "${total:-0}" -ge 1 ] || fail "no fault injected: $faults"
# Replay: per Workload, admitted (clusterQueue set) and not Finished holds 1 GPU.
awk -v quota=4 '
    { split($3, f, "|"); held = (f[1] != "" && f[2] != "True"); adm = (f[1] != "")
      if (adm && !was[$2]) n[$2]++
      was[$2] = adm
      if (held != h[$2]) { cur += held ? 1 : -1; h[$2] = held }
      if (cur > max) max = cur }
    END { for (w in n) if (n[w] != 1) { print "Workload " w " admitted " n[w] " times"; bad = 1 }
          if (max > quota) { print "held " max " GPUs at once (quota " quota ")"; bad = 1 }
          print "max held " max; exit bad }' "$tmp/wl.trace" >"$tmp/replay" ||
    fail "invariant broken: $(cat "$tmp/replay")"
held=$(sed -n 's/^max held //p' "$tmp/replay")
[ "$held" -ge 3 ] || fail "at most $held Jobs ran at once: the quota of 4 was not used"
admitted=$(awk '{ split($3, f, "|"); if (f[1] != "") a[$2] = 1 } END { print length(a) }' "$tmp/wl.trace")
[ "$admitted" = "$jobs" ] || fail "$admitted Workloads admitted, want $jobs"
say "$jobs Jobs finished in ${took}s through $faults; trace replayed: $(cat "$tmp/replay") GPUs of 4, each Workload admitted once"
kill -0 "$pid_op" 2>/dev/null || fail "sluice exited: $(tail -n 20 "$tmp/op.log")"
ctrl_verify "$cq"
say "PASS"
