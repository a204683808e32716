#!/bin/sh
# webhooks -- the real kube-apiserver calls sluice's admission webhooks over TLS with the injected
# caBundle: an invalid ClusterQueue applied with kubectl is rejected with sluice's message, a valid
# one is admitted (with Kueue's finalizer added by the mutating webhook), and every change is in
# the audit trail with the calling user. The webhooks are served by test/webhook_serve.c (the same
# lib/hook code `sluice run` serves); they are scoped by an objectSelector to this test's objects.
. "$(dirname "$0")/lib.sh"

[ -n "${SLUICE_WEBHOOK_SERVE:-}" ] || fail "SLUICE_WEBHOOK_SERVE is not set (run through ctest)"
# The CRDs (idempotent; --validate=false for kubectl against 1.20, see docs/crds.md).
k apply --validate=false -f "$src/crds/" >/dev/null || fail "kubectl apply -f crds/"
k wait --for condition=Established --timeout=60s crd/clusterqueues.kueue.x-k8s.io >/dev/null ||
    fail "ClusterQueue CRD not Established"
tmp=$(mktemp -d)
# Mutual TLS when the API server presents a webhook client certificate (the local test server):
# then the audit records name the user; otherwise they keep it as a claim only.
"$SLUICE_WEBHOOK_SERVE" "$tmp" "${SLUICE_KUBE_WEBHOOK_CLIENT_CA:-}" >"$tmp/serve.log" 2>&1 &
user_key=claimedUser
[ -z "${SLUICE_KUBE_WEBHOOK_CLIENT_CA:-}" ] || user_key=user
serve_pid=$!
it_on_exit "kill $serve_pid 2>/dev/null; wait $serve_pid 2>/dev/null; rm -rf $tmp"
wait_for 10 "webhook server port" test -s "$tmp/port"
port=$(cat "$tmp/port")
ca=$(base64 -w0 "$tmp/ca.crt")
cfg=sluice-it-webhooks-$$
cq=sluice-it-wh-$$
url="https://127.0.0.1:$port"
it_on_exit "k delete validatingwebhookconfiguration $cfg --ignore-not-found >/dev/null 2>&1; k delete mutatingwebhookconfiguration $cfg --ignore-not-found >/dev/null 2>&1"

k apply -f - <<EOT || fail "install the webhook configurations"
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: $cfg
webhooks:
- name: vclusterqueue.sluice.dev
  admissionReviewVersions: [v1]
  sideEffects: None
  failurePolicy: Fail
  timeoutSeconds: 5
  objectSelector:
    matchLabels: {sluice-it: webhooks}
  clientConfig:
    url: $url/validate-kueue-x-k8s-io-v1beta2-clusterqueue
    caBundle: $ca
  rules:
  - apiGroups: [kueue.x-k8s.io]
    apiVersions: [v1beta2]
    operations: [CREATE, UPDATE, DELETE]
    resources: [clusterqueues]
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata:
  name: $cfg
webhooks:
- name: mclusterqueue.sluice.dev
  admissionReviewVersions: [v1]
  sideEffects: None
  failurePolicy: Fail
  timeoutSeconds: 5
  objectSelector:
    matchLabels: {sluice-it: webhooks}
  clientConfig:
    url: $url/mutate-kueue-x-k8s-io-v1beta2-clusterqueue
    caBundle: $ca
  rules:
  - apiGroups: [kueue.x-k8s.io]
    apiVersions: [v1beta2]
    operations: [CREATE]
    resources: [clusterqueues]
EOT

cq_yaml() { # $1 name, $2 nominal, $3 lendingLimit
    cat <<EOT
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata:
  name: $1
  labels: {sluice-it: webhooks}
spec:
  cohortName: it-webhooks
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors:
    - name: h100
      resources:
      - name: nvidia.com/gpu
        nominalQuota: "$2"
        lendingLimit: "$3"
EOT
}
cleanup_cq() {
    for n in "$cq" "$cq-bad"; do
        k patch clusterqueue "$n" --type=merge -p '{"metadata":{"finalizers":null}}' >/dev/null 2>&1 || true
        k delete clusterqueue "$n" --ignore-not-found --wait=false >/dev/null 2>&1 || true
    done
}
it_on_exit cleanup_cq

# The schema cannot express "lendingLimit <= nominalQuota" (a webhook rule in Kueue): only
# sluice's webhook can reject this, with Kueue's message and the full field path.
msg="spec.resourceGroups[0].flavors[0].resources[0].lendingLimit: must be less than or equal to the nominalQuota"
cq_yaml "$cq-bad" 4 8 >"$tmp/bad.yaml"
# The API server picks up a new webhook configuration within a moment: poll with a dry run.
wait_for 30 "the API server to call the webhook" sh -c \
    "kubectl apply --dry-run=server -f '$tmp/bad.yaml' 2>&1 | grep -qF '$msg'"
expect_fail "$msg" k apply -f "$tmp/bad.yaml"
expect_fail 'denied the request' k apply -f "$tmp/bad.yaml"

# A valid one is admitted, and the mutating webhook added Kueue's finalizer.
cq_yaml "$cq" 16 8 | k apply -f - >/dev/null || fail "a valid ClusterQueue was refused"
fins=$(k get clusterqueue "$cq" -o jsonpath='{.metadata.finalizers}')
case "$fins" in *kueue.x-k8s.io/resource-in-use*) ;; *) fail "finalizer not added: $fins" ;; esac
say "valid ClusterQueue admitted, finalizer $fins"

# A quota change is audited with the user and the field-level before/after.
cq_yaml "$cq" 12 8 | k apply -f - >/dev/null || fail "quota update refused"
log="$tmp/audit.log"
wait_for 10 "the audit record of the update" grep -q '"operation":"UPDATE"' "$log"
grep '"operation":"CREATE"' "$log" | grep '"allowed":false' | grep -q "\"$user_key\":\"sluice-admin\"" ||
    fail "rejection not audited with the user: $(cat "$log")"
grep '"operation":"CREATE"' "$log" | grep '"allowed":true' | grep -q "\"$user_key\":\"sluice-admin\"" ||
    fail "creation not audited with the user: $(cat "$log")"
grep '"operation":"UPDATE"' "$log" | grep -q '"field":"quota h100/nvidia.com/gpu nominalQuota","before":"16","after":"12"' ||
    fail "quota change not in the audit record: $(cat "$log")"
table=$("$SLUICE_BINARY_DIR/sluice" audit --object ClusterQueue/"$cq" "$log")
echo "$table"
echo "$table" | grep -q "quota h100/nvidia.com/gpu nominalQuota: 16 -> 12" || fail "sluice audit table"
echo "$table" | grep -q "sluice-admin" || fail "sluice audit table lacks the user"

# Deletion is audited too (the finalizer is removed first: no controller runs in this test).
k patch clusterqueue "$cq" --type=merge -p '{"metadata":{"finalizers":null}}' >/dev/null
k delete clusterqueue "$cq" >/dev/null || fail "delete"
wait_for 10 "the audit record of the deletion" grep -q '"operation":"DELETE"' "$log"
say "webhooks called over TLS by the API server; $(wc -l <"$log") audit records"
