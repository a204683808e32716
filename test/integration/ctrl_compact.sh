#!/bin/sh
# ctrl_compact -- issue 15's forced 410 Gone: `sluice run` is stopped (SIGSTOP) while a Job is
# deleted and another created, etcd compacts its history past what the operator saw, and its
# watches are cut (test/faultproxy.c, SIGUSR1); resumed, it asks for events etcd no longer has,
# gets 410 Gone, lists again, and acts on what it missed: the deleted Job's quota goes to the
# pending one, the new Job waits, the ClusterQueue never holds more than its 2 GPUs.
#
# The test runs a kube-apiserver of its own with --watch-cache=false: 1.20 serves a resumed watch
# from its watch cache, whose window grows to keep 75 s of events and ignores etcd compaction, so
# with the cache only a test that waits minutes sees a 410; without it the watch goes to etcd.
set -eu
src=${SLUICE_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
[ -z "${SLUICE_TEST_KUBECONFIG:-}" ] || {
    echo "[ctrl_compact] SKIPPED -- needs etcd of its own (SLUICE_TEST_KUBECONFIG names an external cluster)" >&2
    exit 77
}
own=$(mktemp -d "${TMPDIR:-/tmp}/sluice-compact-env.XXXXXX")
st=0
SLUICE_KUBE_ENV=$(SLUICE_KUBE_APISERVER_ARGS=--watch-cache=false SLUICE_KUBE_CONTROLLER_MANAGER=0 \
    "$src/test/kube-env/up" "$own" 2>"$own.up.log") || st=$?
if [ "$st" = 77 ]; then
    echo "[ctrl_compact] SKIPPED -- INTEGRATION ENVIRONMENT UNAVAILABLE: $(cat "$own/SKIPPED" 2>/dev/null)" >&2
    rm -f "$own.up.log"
    exit 77
fi
[ "$st" = 0 ] || { cat "$own.up.log" >&2; echo "[ctrl_compact] FAIL: test/kube-env/up" >&2; exit 1; }
rm -f "$own.up.log"
export SLUICE_KUBE_ENV
. "$(dirname "$0")/lib.sh"
it_on_exit "[ -z \"\${SLUICE_KEEP_LOGS:-}\" ] || kubectl get workloads.kueue.x-k8s.io -A -o yaml >\"\$tmp/workloads.yaml\" 2>&1; '$src/test/kube-env/down' '$own' >/dev/null 2>&1"
. "$(dirname "$0")/ctrl_lib.sh"

proxy=${SLUICE_FAULTPROXY:-}
[ -x "$proxy" ] || fail "SLUICE_FAULTPROXY does not name the built test/faultproxy (got '$proxy')"
etcd_rev() {
    curl -fsS -X POST "$SLUICE_KUBE_ETCD_URL/v3/kv/range" -d '{"key":"AA=="}' |
        sed -n 's/.*"revision":"\([0-9]*\)".*/\1/p'
}

ctrl_install_crds
it_namespace
ctrl_trace
ctrl_sys_namespace
cq=it-co-$sfx
ctrl_queues "$cq" "gpu-$sfx cpu=8 nvidia.com/gpu=2"
"$proxy" --share 0 --port-file "$tmp/proxy.port" >"$tmp/proxy.out" 2>&1 &
ppid=$!
it_on_exit "kill $ppid 2>/dev/null || true"
until_ 10 "the proxy to listen" '[ -s "$tmp/proxy.port" ]'
cat >"$tmp/proxy.kubeconfig" <<EOT
apiVersion: v1
kind: Config
clusters: [{name: proxy, cluster: {server: "http://127.0.0.1:$(cat "$tmp/proxy.port")"}}]
users: [{name: proxy, user: {}}]
contexts: [{name: proxy, context: {cluster: proxy, user: proxy}}]
current-context: proxy
EOT
ctrl_start op --kubeconfig "$tmp/proxy.kubeconfig" --namespace "$sys" --pods-ready-timeout false \
    --log-level debug
runner_start
for j in j1 j2 j3; do tjob "$j" 1 600; done
admitted() { [ "$(wcond "$(wl_of "$1")" QuotaReserved)" = True ]; }
until_ 60 "j1 and j2 admitted" 'admitted j1 && admitted j2'
until_ 30 "j3 waiting for quota" \
    '[ "$(wcond "$(wl_of j3)" QuotaReserved)" = False ] && wmsg "$(wl_of j3)" QuotaReserved | grep -q "insufficient quota"'

say "operator stopped; j1 deleted, j4 created, etcd compacted, watches cut"
kill -STOP "$pid_op"
it_on_exit "kill -CONT $pid_op 2>/dev/null || true"
k delete $TJ -n "$ns" j1 --wait=false >/dev/null
tjob j4 1 600
k create configmap -n "$ns" "bump-$sfx" >/dev/null # etcd's revision moves past the last event seen
rev=$(etcd_rev)
[ -n "$rev" ] || fail "no revision from etcd at $SLUICE_KUBE_ETCD_URL"
curl -fsS -X POST "$SLUICE_KUBE_ETCD_URL/v3/kv/compaction" -d "{\"revision\":\"$rev\",\"physical\":true}" >/dev/null ||
    fail "etcd compaction at revision $rev"
kill -USR1 "$ppid"
sleep 1
kill -CONT "$pid_op"

until_ 60 "j3 admitted in j1's place after the relist" 'admitted j3'
grep -q "informer workloads: resourceVersion too old (410 Gone): listing again" "$tmp/op.log" ||
    fail "no 410 relist of the Workloads in the operator's log: $(grep -i informer "$tmp/op.log" | tail -n 10)"
until_ 30 "j4's Workload" '[ -n "$(wl_of j4)" ]'
sleep 3
admitted j4 && fail "j4 admitted: j2 and j3 hold the ClusterQueue's 2 GPUs"
until_ 30 "j1's Workload deleted with its Job" '[ -z "$(wl_of j1)" ]'
deletes=$(grep -c "DELETE .*/workloads/" "$tmp/op.log" || true)
[ "$deletes" -le 3 ] || fail "$deletes DELETEs of j1's Workload: a lagging view must not make a delete loop"
ctrl_verify "$cq"
say "ok: $(grep -c 'listing again' "$tmp/op.log") informers listed again after 410 Gone; the missed deletion and creation were acted on; quota held"
