#!/bin/sh
# ctrl_flood -- issue 15's floods against a real `sluice run`: 256 hostile connections at a time
# on the webhook port (idle keep-alive, pipelining clients that never read, 3 MiB bodies) and on
# the probe port (silent and idle), each held while the legitimate clients are served within
# their timeouts -- the API server calling the validating webhook (failurePolicy Fail, 10 s) for
# a ClusterQueue applied with kubectl, and /healthz (the kubelet's 1 s) -- and the operator's
# RSS stays far below the Deployment's 512Mi limit. The flood tool is bench/flood.c
# (SLUICE_FLOOD); the connections come from 64 loopback addresses. FLOOD_CONNS / FLOOD_HOLD
# make it longer (docs/reliability.md).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/ctrl_lib.sh"

flood=${SLUICE_FLOOD:-}
[ -x "$flood" ] || fail "SLUICE_FLOOD does not name the built bench/flood (got '$flood')"
conns=${FLOOD_CONNS:-256}
holds=${FLOOD_HOLD:-8}

ctrl_install_crds
ctrl_sys_namespace
it_namespace
base=it-$sfx
ctrl_delete_at_exit validatingwebhookconfiguration "$base-validating-webhook-configuration"
port=$(ctrl_free_port)
hport=$((port + 1))
cat <<EOT | k apply -f - >/dev/null || fail "create the webhook configuration"
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: $base-validating-webhook-configuration}
webhooks:
- name: vclusterqueue.kueue.x-k8s.io
  clientConfig: {url: "https://127.0.0.1:$port/validate-kueue-x-k8s-io-v1beta2-clusterqueue"}
  rules: [{apiGroups: [kueue.x-k8s.io], apiVersions: [v1beta2], operations: [CREATE, UPDATE], resources: [clusterqueues]}]
  objectSelector: {matchLabels: {sluice-it: "$sfx"}}
  failurePolicy: Fail
  sideEffects: None
  timeoutSeconds: 10
  admissionReviewVersions: [v1]
EOT
ctrl_config config <<EOT
internalCertManagement: {enable: true, webhookServiceName: $base-webhook-service,
                         webhookSecretName: $base-webhook-server-cert}
EOT
ctrl_start op --config "$tmp/config.yaml" --namespace "$sys" --webhook-port "$port" \
    --webhook-cert-ip 127.0.0.1 --health-probe-bind-address "127.0.0.1:$hport"
until_ 90 "caBundle in the configuration" '[ -n "$(k get validatingwebhookconfiguration $base-validating-webhook-configuration -o jsonpath="{.webhooks[0].clientConfig.caBundle}")" ]'
until_ 20 "/readyz to answer 200" '[ "$(curl -s -o /dev/null -w "%{http_code}" "http://127.0.0.1:$hport/readyz")" = 200 ]'

n=0
cq() { # a new valid ClusterQueue fl-$n through the webhook; prints the milliseconds it took
    t0=$(date +%s%N)
    cat <<EOT | k apply -f - >"$tmp/cq.out" 2>&1 || return 1
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: fl-$n-$sfx, labels: {sluice-it: "$sfx"}}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: f-$sfx
      resources: [{name: cpu, nominalQuota: 2}]
EOT
    echo $((($(date +%s%N) - t0) / 1000000))
}
next_cq() {
    n=$((n + 1))
    ctrl_delete_at_exit clusterqueue "fl-$n-$sfx"
}
# The certificate may take a moment to reach the API server.
next_cq
until_ 30 "the webhook to admit a ClusterQueue" 'cq >/dev/null'

rss() { awk '/^VmRSS:/ { print int($2 / 1024) }' "/proc/$pid_op/status"; }
rss_max=$(rss)
# flood_case WHAT PORT FLOOD-ARGS...: hold the flood, then the legitimate clients must pass.
flood_case() {
    label=$1 fport=$2
    shift 2
    "$flood" --port "$fport" --conns "$conns" --hold "$holds" "$@" >"$tmp/flood.out" 2>&1 &
    fpid=$!
    until_ 120 "the $label flood to be in place" 'grep -q holding "$tmp/flood.out"'
    next_cq
    ms=$(cq) || fail "$label: the webhook call failed under the flood: $(cat "$tmp/cq.out")"
    [ "$ms" -lt 10000 ] || fail "$label: the API server's webhook call took ${ms} ms"
    h=$(curl -s -m 1 "http://127.0.0.1:$hport/healthz") || true
    [ "$h" = ok ] || fail "$label: /healthz did not answer within 1 s under the flood (got '$h')"
    r=$(rss)
    [ "$r" -gt "$rss_max" ] && rss_max=$r
    wait $fpid
    say "$label: kubectl apply through the webhook in ${ms} ms, /healthz ok, RSS ${r} MiB; $(tail -n 1 "$tmp/flood.out")"
}
flood_case "webhook idle keep-alive" "$port" --tls --mode idle
flood_case "webhook pipelining non-readers" "$port" --tls --mode pipeline
flood_case "webhook 3 MiB bodies" "$port" --tls --mode body
flood_case "probe silent" "$hport" --mode silent
flood_case "probe idle keep-alive" "$hport" --mode idle
# VmHWM: the peak resident size of the process's whole life, floods included.
peak=$(awk '/^VmHWM:/ { print int($2 / 1024) }' "/proc/$pid_op/status")
[ "$peak" -lt 256 ] || fail "RSS peaked at ${peak} MiB under the floods"
kill -0 "$pid_op" 2>/dev/null || fail "sluice exited: $(tail -n 20 "$tmp/op.log")"
[ "$(curl -s -o /dev/null -w "%{http_code}" "http://127.0.0.1:$hport/readyz")" = 200 ] || fail "not ready after the floods"
say "RSS sampled under the floods: at most ${rss_max} MiB; peak (VmHWM) ${peak} MiB (limit 512Mi)"
ctrl_stop op

# ---- configured limits (--server-limits) reach the servers ------------------------------------
# The probe-port idle flood above stays open under the defaults (idle 10 s, 32 per client); with
# 4 per client and a 1 s idle timeout, 16 idle connections from one address are all closed
# within 3 s: the 5th and later make room by closing the longest-idle, the last 4 time out.
ctrl_start lim --server-limits "max-connections-per-client=4,idle-timeout=1s" \
    --health-probe-bind-address "127.0.0.1:$hport"
until_ 20 "/readyz of lim" '[ "$(curl -s -o /dev/null -w "%{http_code}" "http://127.0.0.1:$hport/readyz")" = 200 ]'
"$flood" --port "$hport" --conns 16 --addrs 1 --hold 3 --mode idle >"$tmp/flood.out" 2>&1 ||
    fail "flood: $(cat "$tmp/flood.out")"
grep -q "16 opened, 0 refused at once, 16 closed by the server within 3 s, 0 still open" "$tmp/flood.out" ||
    fail "--server-limits not applied to the probe server: $(tail -n 1 "$tmp/flood.out")"
say "--server-limits max-connections-per-client=4,idle-timeout=1s: $(tail -n 1 "$tmp/flood.out")"
ctrl_stop lim
say "PASS"
