#!/bin/sh
# ctrl_metrics -- /metrics of `sluice run` against the real API server: a known state (ClusterQueue
# gpu with 2 GPUs, five 1-GPU Jobs: 2 admitted, 3 pending) gives Kueue's gauges the right values
# (pending by status, reserving/admitted active, ClusterQueue status, the resource gauges behind
# metrics.enableClusterQueueResources, the LocalQueue variants), the counters and histograms
# moved (admission attempts, admitted workloads, wait times), sluice's own (idle nominal quota,
# resource-seconds, cache sizes, API writes); and the whole exposition passes Prometheus'
# `promtool check metrics` (Debian package prometheus; the test is skipped without it). JSON logs
# name each admission and preemption once with its reason. /metrics over HTTPS
# (--metrics-bind-address) answers only bearer tokens that TokenReview and SubjectAccessReview
# allow.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/ctrl_lib.sh"

skip() { say "SKIP: $*"; exit 77; }
command -v promtool >/dev/null || skip "promtool not installed (Debian package prometheus)"
command -v curl >/dev/null || skip "curl not installed"

# The shipped Grafana dashboard's queries are valid PromQL: each becomes a recording rule that
# promtool parses (JSON string escapes are YAML double-quoted escapes; Grafana's variables get
# sample values).
dash=$src/manifests/monitoring/sluice-dashboard.json
{
    printf 'groups:\n- name: dashboard\n  rules:\n'
    sed -n 's/^ *"expr": \(".*"\),\{0,1\}$/\1/p' "$dash" | sed 's/\$__range/1h/g; s/\$cluster_queue/.*/g' |
        awk '{ printf "  - record: dashboard:q%d\n    expr: %s\n", NR, $0 }'
} >"$tmp/dash-rules.yaml"
nq=$(grep -c '"expr"' "$dash")
[ "$nq" -ge 10 ] && [ "$(grep -c 'record:' "$tmp/dash-rules.yaml")" = "$nq" ] || fail "dashboard queries not extracted: $(cat "$tmp/dash-rules.yaml")"
promtool check rules "$tmp/dash-rules.yaml" >"$tmp/promtool-rules.txt" 2>&1 ||
    fail "the dashboard's queries: $(cat "$tmp/promtool-rules.txt")"
say "dashboard: $nq queries parse (promtool check rules)"

ctrl_install_crds
it_namespace
cq=gpu
k delete clusterqueue "$cq" --ignore-not-found >/dev/null 2>&1 || true
ctrl_wpcs "high-$sfx=1000"
ctrl_queues "$cq" "gpu-$sfx cpu=8 nvidia.com/gpu=2" "preemption: {withinClusterQueue: LowerPriority}"
ctrl_trace

hp=$(ctrl_free_port)
ctrl_config cfg <<EOT
metrics: {enableClusterQueueResources: true}
EOT
ctrl_start op --config "$tmp/cfg.yaml" --health-probe-bind-address "127.0.0.1:$hp" --log-format json

for j in a b c d e; do tjob "$j" 1 3600; done
until_ 60 "2 Workloads admitted" '[ "$(k get workloads.kueue.x-k8s.io -n "$ns" -o jsonpath="{range .items[?(@.status.admission)]}x{end}")" = xx ]'

# One scrape into $tmp/m.txt, with the headers in $tmp/h.txt.
scrape() {
    curl -s -D "$tmp/h.txt" -o "$tmp/m.txt" "http://127.0.0.1:$hp/metrics" || fail "GET /metrics"
}
# The value of one series (its exact label set as rendered): val 'name{labels}'
val() { awk -v k="$1 " 'index($0, k) == 1 { print $NF; exit }' "$tmp/m.txt"; }
want() {
    got=$(val "$1")
    [ "$got" = "$2" ] || fail "$1 = '$got', want $2: $(grep -F "${1%%\{*}" "$tmp/m.txt" | head -n 20)"
}

r='replica_role="standalone"'
until_ 20 "pending workloads 3 inadmissible in /metrics" 'scrape && [ "$(val "kueue_pending_workloads{cluster_queue=\"gpu\",status=\"inadmissible\",$r}")" = 3 ]'
gsk="sluice_quota_reserved_resource_seconds_total{namespace=\"$ns\",local_queue=\"lq\",cluster_queue=\"gpu\",flavor=\"gpu-$sfx\",resource=\"nvidia.com/gpu\"}"
# The resource-seconds counters are integrated every 5 s.
until_ 15 "GPU-seconds counted" 'scrape && awk -v v="$(val "$gsk")" "BEGIN { exit !(v > 0) }"'
grep -qi '^content-type: text/plain; version=0.0.4' "$tmp/h.txt" || fail "Content-Type: $(cat "$tmp/h.txt")"
promtool check metrics <"$tmp/m.txt" >"$tmp/promtool.txt" 2>&1 ||
    fail "promtool check metrics: $(cat "$tmp/promtool.txt")"
say "promtool check metrics: clean ($(grep -c '^# TYPE' "$tmp/m.txt") families, $(grep -vc '^#' "$tmp/m.txt") samples)"

want "kueue_pending_workloads{cluster_queue=\"gpu\",status=\"active\",$r}" 0
want "kueue_reserving_active_workloads{cluster_queue=\"gpu\",$r}" 2
want "kueue_admitted_active_workloads{cluster_queue=\"gpu\",$r}" 2
want "kueue_cluster_queue_status{cluster_queue=\"gpu\",status=\"active\",$r}" 1
want "kueue_cluster_queue_status{cluster_queue=\"gpu\",status=\"pending\",$r}" 0
want "kueue_admitted_workloads_total{cluster_queue=\"gpu\",priority_class=\"\",$r}" 2
want "kueue_quota_reserved_workloads_total{cluster_queue=\"gpu\",priority_class=\"\",$r}" 2
want "kueue_admission_wait_time_seconds_count{cluster_queue=\"gpu\",priority_class=\"\",$r}" 2
want "kueue_admission_wait_time_seconds_bucket{cluster_queue=\"gpu\",priority_class=\"\",$r,le=\"+Inf\"}" 2
fr="cohort=\"\",cluster_queue=\"gpu\",flavor=\"gpu-$sfx\""
want "kueue_cluster_queue_resource_reservation{$fr,resource=\"nvidia.com/gpu\",$r}" 2
want "kueue_cluster_queue_resource_usage{$fr,resource=\"nvidia.com/gpu\",$r}" 2
want "kueue_cluster_queue_resource_reservation{$fr,resource=\"cpu\",$r}" 0.2
want "kueue_cluster_queue_nominal_quota{$fr,resource=\"nvidia.com/gpu\",$r}" 2
want "kueue_cluster_queue_nominal_quota{$fr,resource=\"cpu\",$r}" 8
want "kueue_cluster_queue_borrowing_limit{$fr,resource=\"nvidia.com/gpu\",$r}" +Inf
want "kueue_cluster_queue_lending_limit{$fr,resource=\"nvidia.com/gpu\",$r}" +Inf
lq="name=\"lq\",namespace=\"$ns\""
want "kueue_local_queue_pending_workloads{$lq,status=\"inadmissible\",$r}" 3
want "kueue_local_queue_admitted_active_workloads{$lq,$r}" 2
want "kueue_local_queue_status{$lq,active=\"True\",$r}" 1
want "kueue_local_queue_resource_reservation{$lq,flavor=\"gpu-$sfx\",resource=\"nvidia.com/gpu\",$r}" 2
want "kueue_local_queue_admitted_workloads_total{$lq,priority_class=\"\",$r}" 2
want "sluice_cluster_queue_idle_nominal_quota{cluster_queue=\"gpu\",flavor=\"gpu-$sfx\",resource=\"nvidia.com/gpu\"}" 0
want "sluice_cluster_queue_idle_nominal_quota{cluster_queue=\"gpu\",flavor=\"gpu-$sfx\",resource=\"cpu\"}" 7.8
want "sluice_leader" 1
grep -q '^kueue_build_info{git_version="v' "$tmp/m.txt" || fail "no kueue_build_info"
# Counters that moved: at least one successful admission attempt, writes, resource-seconds.
att=$(val "kueue_admission_attempts_total{result=\"success\",$r}")
[ "${att:-0}" -ge 1 ] 2>/dev/null || fail "kueue_admission_attempts_total success = '$att'"
# The three pending Jobs were tried and did not fit: inadmissible attempts, as Kueue counts them.
inad=$(val "kueue_admission_attempts_total{result=\"inadmissible\",$r}")
[ "${inad:-0}" -ge 1 ] 2>/dev/null || fail "kueue_admission_attempts_total inadmissible = '$inad'"
wr=$(val 'sluice_api_writes_total{resource="workloads",result="success"}')
[ "${wr:-0}" -ge 2 ] 2>/dev/null || fail "sluice_api_writes_total workloads success = '$wr'"
gs=$(val "$gsk")
# Exact: integers of nano-units x milliseconds, at most 12 decimals, never a float's tail.
printf '%s\n' "$gs" | grep -Eq '^[0-9]+(\.[0-9]{1,12})?$' || fail "GPU-seconds not exact: $gs"
[ "$(val 'sluice_cache_objects{kind="workloads"}')" -ge 5 ] 2>/dev/null || fail "sluice_cache_objects workloads"
say "ClusterQueue gpu: 2 admitted, 3 pending (inadmissible); GPU-seconds so far $gs; $att successful attempts, $inad inadmissible"

# Later scrapes: the counter grows (2 GPUs held: by about 10 GPU-seconds per 5 s), the gauges stay.
until_ 15 "GPU-seconds growing" 'scrape && awk -v a="$gs" -v b="$(val "$gsk")" "BEGIN { exit !(b > a) }"'
gs2=$(val "$gsk")
awk -v a="$gs" -v b="$gs2" 'BEGIN { d = b - a; exit !(d >= 9.5 && d <= 13 || d >= 19.5 && d <= 26) }' ||
    fail "GPU-seconds grew by $gs2 - $gs, want 2 GPUs x the 5 s (or more, under load) between runs"
want "kueue_admitted_active_workloads{cluster_queue=\"gpu\",$r}" 2

# A higher priority preempts one of the two: counted once where decided and where written, and
# logged once with its reason.
tjob hi 1 3600 "high-$sfx"
until_ 30 "the preemption in /metrics" 'scrape && [ "$(val "kueue_evicted_workloads_total{cluster_queue=\"gpu\",reason=\"Preempted\",underlying_cause=\"\",priority_class=\"\",$r}")" = 1 ]'
want "kueue_preempted_workloads_total{preempting_cluster_queue=\"gpu\",reason=\"InClusterQueue\",$r}" 1
until_ 30 "hi admitted" 'scrape && [ "$(val "kueue_admitted_workloads_total{cluster_queue=\"gpu\",priority_class=\"high-$sfx\",$r}")" = 1 ]'
want "kueue_admitted_active_workloads{cluster_queue=\"gpu\",$r}" 2
want "kueue_pending_workloads{cluster_queue=\"gpu\",status=\"inadmissible\",$r}" 4
say "hi (priority high-$sfx) preempted one Workload: preempted/evicted counters 1, pending 4"

ctrl_stop op
# --log-format json: every line one JSON object; each admission and the preemption once, with
# the Workload named and the reason.
bad=$(grep -vc '^{"ts":"[0-9T:.Z-]*","level":"[a-z]*","msg":".*}$' "$tmp/op.log" || true)
[ "$bad" = 0 ] || fail "$bad log lines are not JSON objects: $(grep -v '^{"ts"' "$tmp/op.log" | head -n 5)"
na=$(grep -c '"workload":{"name":"[^"]*","namespace":"'"$ns"'"},"reason":"Admitted","clusterQueue":"gpu"' "$tmp/op.log")
[ "$na" = 3 ] || fail "$na admissions logged, want 3: $(grep Admitted "$tmp/op.log")"
np=$(grep -c '"workload":{"name":"[^"]*","namespace":"'"$ns"'"},"reason":"Preempted"' "$tmp/op.log")
[ "$np" = 1 ] || fail "$np preemptions logged, want 1: $(grep Preempted "$tmp/op.log")"
say "JSON log: $(wc -l <"$tmp/op.log") lines, 3 admissions and 1 preemption each logged once with its reason"

# ---- secure /metrics: HTTPS on metrics.bindAddress, TokenReview + SubjectAccessReview ---------
mp=$(ctrl_free_port)
hp2=$(ctrl_free_port)
ctrl_start sec --metrics-bind-address "127.0.0.1:$mp" --health-probe-bind-address "127.0.0.1:$hp2"
# The answer to one request: code, then body: sget TOKEN
sget() {
    if [ -n "$1" ]; then
        curl -sk -H "Authorization: Bearer $1" -w '\n%{http_code}' "https://127.0.0.1:$mp/metrics"
    else
        curl -sk -w '\n%{http_code}' "https://127.0.0.1:$mp/metrics"
    fi
}
code_of() { printf '%s\n' "$1" | tail -n 1; }
# /readyz names each check that passed.
until_ 10 "/readyz 200" '[ "$(curl -s -o /dev/null -w "%{http_code}" "http://127.0.0.1:$hp2/readyz")" = 200 ]'
rz=$(curl -s "http://127.0.0.1:$hp2/readyz")
for t in ok "caches synced" "no leader election: this replica writes"; do
    case "$rz" in *"$t"*) ;; *) fail "/readyz does not say '$t': $rz" ;; esac
done
out=$(sget "")
[ "$(code_of "$out")" = 401 ] || fail "no token: $out"
[ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$hp2/metrics")" = 404 ] ||
    fail "the probe port still serves /metrics beside the HTTPS one"
admin=$(k config view --raw --minify -o jsonpath='{.users[0].user.token}')
[ -n "$admin" ] || skip "the admin kubeconfig has no bearer token"
# The first request with a new token waits for its reviews and is answered (no 503).
out=$(sget "$admin")
[ "$(code_of "$out")" = 200 ] || fail "first request with a new token: $(printf '%s\n' "$out" | tail -n 3)"
printf '%s\n' "$out" | grep -q "^kueue_pending_workloads{cluster_queue=\"gpu\"" || fail "no metrics over HTTPS"
[ "$(code_of "$(sget "$admin")")" = 200 ] || fail "the admin token's second request"
out=$(sget not-a-token)
[ "$(code_of "$out")" = 401 ] || fail "a bogus token's first request: $out"
case "$out" in *"not valid"*) ;; *) fail "bogus token: $out" ;; esac
if [ -n "${SLUICE_KUBE_USER_KUBECONFIG:-}" ]; then
    user=$(kubectl --kubeconfig "$SLUICE_KUBE_USER_KUBECONFIG" config view --raw --minify -o jsonpath='{.users[0].user.token}')
    out=$(sget "$user")
    [ "$(code_of "$out")" = 403 ] || fail "the unprivileged user's first request: $out"
    case "$out" in *"forbidden: get /metrics is not allowed"*) ;; *) fail "user: $out" ;; esac
    say "HTTPS /metrics: no token 401, bogus token 401, $SLUICE_KUBE_USER 403, admin 200, each on its first request"
else
    say "HTTPS /metrics: no token 401, bogus token 401, admin 200, each on its first request"
fi
ctrl_stop sec
ctrl_verify "$cq"
say "ok"
