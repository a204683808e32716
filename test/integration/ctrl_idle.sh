#!/bin/sh
# ctrl_idle -- idle reclaim against the real API server (docs/idle-reclaim.md): `sluice run` with
# the Configuration's sluice.dev/idle-reclaim section pointing at a canned Prometheus on loopback
# (test/promcanned.c); a Job's LocalQueue carries the policy as annotations (idle-for 1m,
# warn-before 50s). The Job is admitted and released; its Pod, made from the released template
# (label kueue.x-k8s.io/podset, annotation kueue.x-k8s.io/workload, 2 GPUs), shows 0% on both
# GPUs: the Workload is warned (condition sluice.dev/Idle=True GPUsIdle, Event) and deactivated
# a minute later (spec.active=false, Evicted DeactivatedDueToIdleGPUs, the Job suspended). Kueue's
# CRD schema accepts every field written. A second Job whose Pod shows one GPU of two is never
# warned. SIGTERM -> 0.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/ctrl_lib.sh"

canned=${SLUICE_PROMCANNED:-}
[ -x "$canned" ] || fail "SLUICE_PROMCANNED does not name the built promcanned (got '$canned')"

ctrl_install_crds
it_namespace
cq=it-idle-$sfx
ctrl_queues "$cq" "gpu-$sfx cpu=8 nvidia.com/gpu=8"
k annotate localqueue -n "$ns" lq sluice.dev/idle-for=1m sluice.dev/idle-warn-before=50s >/dev/null ||
    fail "annotate the LocalQueue"

# The canned Prometheus: both GPUs of train-0 at 0%, one of half-0's two GPUs at 0%.
cat >"$tmp/answer.json" <<EOT
{"status":"success","data":{"resultType":"vector","result":[
 {"metric":{"namespace":"$ns","pod":"train-0","gpu":"0"},"value":[1764680000,"0"]},
 {"metric":{"namespace":"$ns","pod":"train-0","gpu":"1"},"value":[1764680000,"0"]},
 {"metric":{"namespace":"$ns","pod":"half-0","gpu":"0"},"value":[1764680000,"0"]}]}}
EOT
"$canned" --port-file "$tmp/prom.port" --answer "$tmp/answer.json" --log "$tmp/prom.log" &
cpid=$!
it_on_exit "kill $cpid 2>/dev/null || true; wait $cpid 2>/dev/null || true"
wait_for 10 "the canned Prometheus to listen" test -s "$tmp/prom.port"
port=$(cat "$tmp/prom.port")

ctrl_config idle <<EOT
metadata:
  annotations:
    sluice.dev/idle-reclaim: |
      prometheus:
        url: http://127.0.0.1:$port
      interval: 10s
namespace: sluice-system
EOT
ctrl_start op --config "$tmp/idle.yaml"

# A released Job's Pod, as its controller would make it from the template sluice released.
pod_of() {
    pj=$1
    until_ 20 "Job $pj released" '[ "$(jget "$pj" "{.spec.suspend}")" = false ]'
    printf 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: %s-0\n  namespace: %s\n  labels: %s\n  annotations: %s\nspec:\n  containers: [{name: main, image: busybox, resources: {limits: {nvidia.com/gpu: %s}}}]\n' \
        "$1" "$ns" "$(jget "$1" '{.spec.template.metadata.labels}')" \
        "$(jget "$1" '{.spec.template.metadata.annotations}')" "$2" |
        k apply -f - >/dev/null || fail "create the Pod of $1"
}

tjob train 2 0
w=$(wl_await train)
until_ 20 "Workload $w admitted" '[ "$(wcond "$w" Admitted)" = True ]'
pod_of train 2
tjob half 2 0
w2=$(wl_await half)
until_ 20 "Workload $w2 admitted" '[ "$(wcond "$w2" Admitted)" = True ]'
pod_of half 2

until_ 40 "the idle warning on $w" '[ "$(wcond "$w" sluice.dev/Idle)" = True ]'
[ "$(wreason "$w" sluice.dev/Idle)" = GPUsIdle ] || fail "warning reason $(wreason "$w" sluice.dev/Idle)"
case "$(wmsg "$w" sluice.dev/Idle)" in
*"2 GPUs have been idle"*"policy of LocalQueue $ns/lq"*) ;;
*) fail "warning message: $(wmsg "$w" sluice.dev/Idle)" ;;
esac
[ "$(wget_ "$w" '{.spec.active}')" != false ] || fail "deactivated with the warning"
say "warned: $(wmsg "$w" sluice.dev/Idle)"

until_ 90 "$w deactivated" '[ "$(wget_ "$w" "{.spec.active}")" = false ]'
until_ 20 "$w evicted" '[ "$(wcond "$w" Evicted)" = True ]'
[ "$(wreason "$w" Evicted)" = DeactivatedDueToIdleGPUs ] || fail "Evicted reason $(wreason "$w" Evicted)"
until_ 20 "Job train suspended" '[ "$(jget train "{.spec.suspend}")" = true ]'
ctrl_events_have GPUsIdle IdleGPUsDeactivated
say "deactivated: $(wmsg "$w" Evicted)"

# half-0 reported one GPU of its two all along: never judged idle.
[ -z "$(wcond "$w2" sluice.dev/Idle)" ] || fail "$w2 warned on half its GPUs: $(wmsg "$w2" sluice.dev/Idle)"
[ "$(wget_ "$w2" '{.spec.active}')" != false ] || fail "$w2 deactivated"
grep -q '^GET /api/v1/query?query=max%20by%20%28namespace%2C%20pod%2C%20gpu%29' "$tmp/prom.log" ||
    fail "the query: $(head -n 1 "$tmp/prom.log")"
say "$(wc -l <"$tmp/prom.log") queries; $w2 (1 of 2 GPU series) untouched"
ctrl_stop op
say "ok"
