#!/bin/sh
# ctrl_visibility -- Kueue's visibility API served by `sluice run` through API aggregation on the
# real API server (started with --requestheader-client-ca-file, a front-proxy client certificate
# and --enable-aggregator-routing by test/kube-env/up): an APIService v1beta2 for
# visibility.kueue.x-k8s.io as the manifests ship it -- no insecureSkipTLSVerify, no caBundle --
# whose Service's Endpoints point at sluice on this machine's address. sluice (self-managed
# certificates) serves a certificate of the CA in its webhook Secret and writes that CA into the
# APIService's caBundle, so the API server verifies it; after the Secret is replaced (a new CA)
# a restart serves and injects the new one. `kubectl get --raw
# /apis/visibility.kueue.x-k8s.io/v1beta2/clusterqueues/<cq>/pendingworkloads` through the API
# server lists the 3 pending Workloads of ClusterQueue gpu (2 GPUs, five 1-GPU Jobs, one of them
# of a higher priority) in queue order with their positions, the LocalQueue variant,
# limit/offset; the non-admin user is refused (SubjectAccessReview) until a RoleBinding lets it
# see its LocalQueue; a direct connection without the front proxy's certificate is refused.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/ctrl_lib.sh"

skip() { say "SKIP: $*"; exit 77; }
[ "${SLUICE_KUBE_EXTERNAL:-0}" = 0 ] || skip "needs the local test API server (its front-proxy certificates)"
command -v curl >/dev/null || skip "curl not installed"
command -v jq >/dev/null || skip "jq not installed"
# The aggregator reaches the APIService's Service through its Endpoints, which may not be a
# loopback address: this machine's first other IPv4 address.
ip=$(hostname -I 2>/dev/null | tr ' ' '\n' | grep -E '^[0-9]+\.[0-9]+\.[0-9]+\.[0-9]+$' | grep -v '^127\.' | head -n 1)
[ -n "$ip" ] || skip "no non-loopback IPv4 address for the APIService's Endpoints"

ctrl_install_crds
ctrl_sys_namespace
it_namespace
cq=gpu-vis-$sfx
ctrl_wpcs "high-$sfx=1000"
ctrl_queues "$cq" "gpu-$sfx cpu=8 nvidia.com/gpu=2"
ctrl_lq lq2 "$cq"
ctrl_trace

# Self-managed certificates under this test's names (Kueue's naming: <base>-webhook-service ->
# Service <base>-visibility-server); the webhook port serves nothing the API server calls here.
base=it-vis-$sfx
svc=$base-visibility-server
secret=$base-webhook-server-cert
ctrl_config config <<EOT
internalCertManagement: {enable: true, webhookServiceName: $base-webhook-service,
                         webhookSecretName: $secret}
EOT

# The APIService as the manifests ship it (verified TLS, no caBundle yet), its Service pointing
# at the process (no selector: Endpoints by hand), all deleted at exit.
vp=$(ctrl_free_port)
ctrl_delete_at_exit apiservice v1beta2.visibility.kueue.x-k8s.io
cat <<EOT | k apply -f - >/dev/null || fail "create the APIService"
apiVersion: v1
kind: Service
metadata: {name: $svc, namespace: $sys}
spec:
  ports: [{name: https, port: 443, targetPort: $vp, protocol: TCP}]
---
apiVersion: v1
kind: Endpoints
metadata: {name: $svc, namespace: $sys}
subsets:
- addresses: [{ip: "$ip"}]
  ports: [{name: https, port: $vp, protocol: TCP}]
---
apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata: {name: v1beta2.visibility.kueue.x-k8s.io}
spec:
  group: visibility.kueue.x-k8s.io
  version: v1beta2
  groupPriorityMinimum: 100
  versionPriority: 100
  service: {name: $svc, namespace: $sys, port: 443}
EOT

# Start sluice; wait until the APIService carries the Secret's CA and the API server, verifying
# the certificate with it, finds the API available.
start_op() {
    wp=$(ctrl_free_port)
    ctrl_start op --config "$tmp/config.yaml" --namespace "$sys" --webhook-port "$wp" \
        --visibility-bind-address "$ip:$vp"
    wait_for 30 "the visibility server listening" grep -q "visibility API: serving visibility" "$tmp/op.log"
    until_ 30 "the Secret's ca.crt" '[ -n "$(k get secret -n "$sys" "$secret" -o jsonpath="{.data.ca\.crt}")" ]'
    ca=$(k get secret -n "$sys" "$secret" -o jsonpath='{.data.ca\.crt}')
    until_ 90 "the caBundle in the APIService" '[ "$(k get apiservice v1beta2.visibility.kueue.x-k8s.io -o jsonpath="{.spec.caBundle}")" = "$ca" ]'
    [ -z "$(k get apiservice v1beta2.visibility.kueue.x-k8s.io -o jsonpath='{.spec.insecureSkipTLSVerify}')" ] ||
        fail "insecureSkipTLSVerify set beside the caBundle"
    until_ 60 "the APIService Available (TLS verified)" '[ "$(k get apiservice v1beta2.visibility.kueue.x-k8s.io -o jsonpath="{.status.conditions[?(@.type==\"Available\")].status}")" = True ]'
}
start_op
grep -q "serving a certificate of sluice's CA for $svc.$sys.svc" "$tmp/op.log" ||
    fail "no certificate of the CA: $(grep visibility "$tmp/op.log")"
say "APIService v1beta2: caBundle = Secret $sys/$secret ca.crt, no insecureSkipTLSVerify, Available"
ca1=$ca

# Two run (2 GPUs), three wait; "hi" jumps the queue by priority. One second apart: creation
# order is the queue order among equal priorities.
tjob a 1 3600; sleep 1.1
tjob b 1 3600; sleep 1.1
tjob c 1 3600; sleep 1.1
tjob d 1 3600; sleep 1.1
tjob hi 1 3600 "high-$sfx"
until_ 60 "2 Workloads admitted" '[ "$(k get workloads.kueue.x-k8s.io -n "$ns" -o jsonpath="{range .items[?(@.status.admission)]}x{end}")" = xx ]'

P=/apis/visibility.kueue.x-k8s.io/v1beta2
get() { k get --raw "$1" >"$tmp/out.json" 2>"$tmp/err.txt"; }
summary() { jq -r '[.items[] | "\(.metadata.ownerReferences[0].name):\(.positionInClusterQueue):\(.positionInLocalQueue):\(.priority)"] | join(" ")' "$tmp/out.json"; }
until_ 30 "3 pending workloads through the API server" "get $P/clusterqueues/$cq/pendingworkloads && [ \"\$(jq '.items | length' \"$tmp/out.json\")\" = 3 ]"
[ "$(jq -r .kind "$tmp/out.json")" = PendingWorkloadsSummary ] || fail "kind: $(cat "$tmp/out.json")"
got=$(summary)
[ "$got" = "hi:0:0:1000 c:1:1:0 d:2:2:0" ] || fail "ClusterQueue $cq pending: $got"
[ "$(jq -r '.items[0].metadata.namespace' "$tmp/out.json")" = "$ns" ] || fail "namespace: $(cat "$tmp/out.json")"
[ "$(jq -r '.items[0].localQueueName' "$tmp/out.json")" = lq ] || fail "localQueueName"
say "GET $P/clusterqueues/$cq/pendingworkloads through the API server: $got"
get "$P/clusterqueues/$cq/pendingworkloads?limit=1&offset=1" || fail "limit/offset: $(cat "$tmp/err.txt")"
[ "$(summary)" = "c:1:1:0" ] || fail "limit=1&offset=1: $(summary)"
get "$P/namespaces/$ns/localqueues/lq/pendingworkloads" || fail "LocalQueue: $(cat "$tmp/err.txt")"
[ "$(summary)" = "hi:0:0:1000 c:1:1:0 d:2:2:0" ] || fail "LocalQueue lq: $(summary)"
get "$P/namespaces/$ns/localqueues/lq2/pendingworkloads" || fail "LocalQueue lq2: $(cat "$tmp/err.txt")"
[ "$(jq '.items | length' "$tmp/out.json")" = 0 ] || fail "LocalQueue lq2 is empty: $(cat "$tmp/out.json")"
get "$P/clusterqueues/nope-$sfx/pendingworkloads" && fail "an unknown ClusterQueue answered"
grep -q "NotFound\|not found" "$tmp/err.txt" || fail "unknown ClusterQueue: $(cat "$tmp/err.txt")"
get "$P" || fail "discovery: $(cat "$tmp/err.txt")"
jq -e '.resources[] | select(.name == "clusterqueues/pendingworkloads")' "$tmp/out.json" >/dev/null || fail "discovery: $(cat "$tmp/out.json")"

# The non-admin user: refused by the SubjectAccessReview, then allowed its namespace's queue.
if [ -n "${SLUICE_KUBE_USER:-}" ]; then
    k_user get --raw "$P/namespaces/$ns/localqueues/lq/pendingworkloads" >"$tmp/out.json" 2>"$tmp/err.txt" &&
        fail "the unprivileged user saw the pending workloads"
    grep -qi "forbidden" "$tmp/err.txt" || fail "user refused how: $(cat "$tmp/err.txt")"
    cat <<EOT | k apply -f - >/dev/null || fail "bind the Role"
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: pw-$sfx, namespace: $ns}
rules: [{apiGroups: [visibility.kueue.x-k8s.io], resources: [localqueues/pendingworkloads], verbs: [get]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: pw-$sfx, namespace: $ns}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: pw-$sfx}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: "$SLUICE_KUBE_USER"}]
EOT
    # A denial is cached 10 s (as delegated authorization caches it).
    until_ 30 "the user allowed its LocalQueue" "k_user get --raw $P/namespaces/$ns/localqueues/lq/pendingworkloads >\"$tmp/out.json\" 2>\"$tmp/err.txt\""
    [ "$(jq '.items | length' "$tmp/out.json")" = 3 ] || fail "the user's view: $(cat "$tmp/out.json")"
    k_user get --raw "$P/clusterqueues/$cq/pendingworkloads" >/dev/null 2>&1 && fail "the user saw the ClusterQueue"
    say "$SLUICE_KUBE_USER: forbidden, then (RoleBinding) its LocalQueue's 3 pending workloads; the ClusterQueue still forbidden"
fi

# A new CA (the Secret replaced, as after a rotation): a restart serves a certificate of it and
# injects it; the API server verifies the new one.
ctrl_stop op
k delete secret -n "$sys" "$secret" >/dev/null || fail "delete the Secret"
start_op
[ "$ca" != "$ca1" ] || fail "the CA did not change"
until_ 30 "pending workloads through the API server with the new CA" "get $P/clusterqueues/$cq/pendingworkloads && [ \"\$(jq '.items | length' \"$tmp/out.json\")\" = 3 ]"
say "a new CA: served and injected after the restart, the API server verifies it"

# Straight to sluice without the front proxy's client certificate: no TLS session at all.
code=$(curl -sk -o /dev/null -w '%{http_code}' "https://$ip:$vp$P/clusterqueues/$cq/pendingworkloads" 2>/dev/null || true)
[ "$code" = 000 ] || fail "a client without the front-proxy certificate got HTTP $code"
say "a direct request without the front-proxy certificate: refused in the TLS handshake"
ctrl_stop op
ctrl_verify "$cq"
say "ok"
