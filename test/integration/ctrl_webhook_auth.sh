#!/bin/sh
# ctrl_webhook_auth -- only the API server can call the webhooks of `sluice run` (mutual TLS,
# --webhook-client-ca): a caller without a client certificate, or with one from another CA, is
# refused at the TLS handshake on the webhook port, while the API server (which presents its
# webhook client certificate, test/kube-env) is served: an invalid ClusterQueue is rejected with
# sluice's message. The audit records then name the authenticated user; a dry run is judged but
# not recorded (sideEffects: NoneOnDryRun); the audit file's hash chain verifies with
# `sluice audit --verify`, and an edited record is found. A client CA file that cannot be read
# keeps the webhooks unserved (fail closed) and /readyz at 503.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/ctrl_lib.sh"

if [ -z "${SLUICE_KUBE_WEBHOOK_CLIENT_CA:-}" ]; then
    echo "[$it_name] SKIPPED -- the API server of this environment presents no webhook client certificate" >&2
    exit 77
fi
ctrl_install_crds
ctrl_sys_namespace
base=it-$sfx
ctrl_delete_at_exit validatingwebhookconfiguration "$base-validating-webhook-configuration"
ctrl_delete_at_exit mutatingwebhookconfiguration "$base-mutating-webhook-configuration"
ctrl_delete_at_exit clusterqueue "good-$sfx" "bad-$sfx" "dry-$sfx"
port=$(ctrl_free_port)
hport=$((port + 1))

for kind in Validating Mutating; do
    lk=$(echo "$kind" | tr 'VM' 'vm')
    path=/validate-kueue-x-k8s-io-v1beta2-clusterqueue
    [ "$kind" = Validating ] || path=/mutate-kueue-x-k8s-io-v1beta2-clusterqueue
    cat <<EOT
apiVersion: admissionregistration.k8s.io/v1
kind: ${kind}WebhookConfiguration
metadata: {name: $base-$lk-webhook-configuration}
webhooks:
- name: ${lk}clusterqueue.kueue.x-k8s.io
  clientConfig: {url: "https://127.0.0.1:$port$path"}
  rules: [{apiGroups: [kueue.x-k8s.io], apiVersions: [v1beta2], operations: [CREATE, UPDATE], resources: [clusterqueues]}]
  objectSelector: {matchLabels: {sluice-it: "$sfx"}}
  failurePolicy: Fail
  sideEffects: NoneOnDryRun
  timeoutSeconds: 10
  admissionReviewVersions: [v1]
---
EOT
done | k apply -f - >/dev/null || fail "create the webhook configurations"

ctrl_config config <<EOT
internalCertManagement: {enable: true, webhookServiceName: $base-webhook-service,
                         webhookSecretName: $base-webhook-server-cert}
EOT
ctrl_start op --config "$tmp/config.yaml" --namespace "$sys" --webhook-port "$port" \
    --webhook-cert-ip 127.0.0.1 --health-probe-bind-address "127.0.0.1:$hport" \
    --audit-log "$tmp/audit.log" --webhook-client-ca "$SLUICE_KUBE_WEBHOOK_CLIENT_CA"
until_ 30 "op to serve" 'grep -q "serving TLS" "$tmp/op.log"'
for kind in validating mutating; do
    until_ 90 "caBundle in the $kind configuration" '[ -n "$(k get ${kind}webhookconfiguration $base-$kind-webhook-configuration -o jsonpath="{.webhooks[0].clientConfig.caBundle}")" ]'
done

cq() { # name lendingLimit
    cat <<EOT
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: $1, labels: {sluice-it: "$sfx"}}
spec:
  cohortName: co-$sfx
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: f-$sfx
      resources: [{name: cpu, nominalQuota: 2, lendingLimit: $2}]
EOT
}
review='{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"1","operation":"CREATE","userInfo":{"username":"forged-admin"},"object":{"apiVersion":"kueue.x-k8s.io/v1beta2","kind":"ClusterQueue","metadata":{"name":"forged"},"spec":{}}}}'
post() { # extra curl args...
    curl -sk --max-time 5 -o "$tmp/post.out" -w '%{http_code}' -H 'Content-Type: application/json' \
        --data "$review" "$@" "https://127.0.0.1:$port/validate-kueue-x-k8s-io-v1beta2-clusterqueue"
}

# 1. Unauthenticated callers on the webhook port are refused at the handshake: no HTTP answer.
st=0
code=$(post) || st=$?
[ "$st" != 0 ] && [ "$code" = 000 ] || fail "a caller without a client certificate got HTTP $code (curl $st)"
mkdir -p "$tmp/other"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 -subj /CN=other-ca \
    -keyout "$tmp/other/ca.key" -out "$tmp/other/ca.crt" >/dev/null 2>&1 || fail "openssl CA"
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=kube-apiserver \
    -keyout "$tmp/other/c.key" -out "$tmp/other/c.csr" >/dev/null 2>&1 || fail "openssl CSR"
printf 'extendedKeyUsage=clientAuth\n' >"$tmp/other/ext"
openssl x509 -req -in "$tmp/other/c.csr" -CA "$tmp/other/ca.crt" -CAkey "$tmp/other/ca.key" \
    -CAcreateserial -days 1 -extfile "$tmp/other/ext" -out "$tmp/other/c.crt" >/dev/null 2>&1 ||
    fail "openssl client cert"
st=0
code=$(post --cert "$tmp/other/c.crt" --key "$tmp/other/c.key") || st=$?
[ "$st" != 0 ] && [ "$code" = 000 ] || fail "a caller with another CA's certificate got HTTP $code"
! grep -q forged "$tmp/audit.log" 2>/dev/null || fail "a refused caller reached the audit log"
# The API server's own client certificate is what lets a caller in.
code=$(post --cert "$SLUICE_KUBE_WEBHOOK_CLIENT_CERT" --key "$SLUICE_KUBE_WEBHOOK_CLIENT_KEY") ||
    fail "the API server's client certificate was refused: $code"
[ "$code" = 200 ] || fail "the API server's client certificate: HTTP $code"
say "webhook port: no certificate and another CA's certificate refused at the handshake"

# 2. The API server's calls pass (it presents its webhook client certificate).
n=0
while :; do
    out=$(cq "bad-$sfx" 10 | k apply -f - 2>&1) && fail "the invalid ClusterQueue was admitted: $out"
    case "$out" in
    *"x509"* | *"certificate"* | *"connection refused"*)
        n=$((n + 1))
        [ $n -lt 30 ] || fail "the API server cannot call the webhook: $out"
        sleep 1
        ;;
    *) break ;;
    esac
done
case "$out" in
*'denied the request'*lendingLimit*) say "API server served: invalid ClusterQueue rejected: $out" ;;
*) fail "unexpected rejection: $out" ;;
esac
cq "good-$sfx" 1 | k apply -f - >/dev/null || fail "the valid ClusterQueue was rejected"

# 3. Dry runs are judged but not recorded.
out=$(cq "dry-$sfx" 10 | k apply --dry-run=server -f - 2>&1) && fail "dry run admitted: $out"
case "$out" in *'denied the request'*) ;; *) fail "dry run: $out" ;; esac
cq "dry-$sfx" 1 | k apply --dry-run=server -f - >/dev/null || fail "valid dry run refused"
grep -q "dry-$sfx" "$tmp/audit.log" && fail "a dry run is in the audit log: $(cat "$tmp/audit.log")"
grep '"allowed":false' "$tmp/audit.log" | grep -q '"user":"sluice-admin","authenticated":true' ||
    fail "the rejection is not recorded with the authenticated user: $(cat "$tmp/audit.log")"
grep '"allowed":true' "$tmp/audit.log" | grep "good-$sfx" | grep -q '"user":"sluice-admin"' ||
    fail "the creation is not recorded with the user: $(cat "$tmp/audit.log")"
say "audit: authenticated user recorded, dry runs not recorded"
ctrl_stop op

# 4. The chain: intact as written; an edited copy is found at the line after the edit.
out=$("$sluice" audit --verify "$tmp/audit.log") || fail "sluice audit --verify: $out"
case "$out" in "ok: "*" records, seq 1.."*"(from the first record ever)") ;; *) fail "verify: $out" ;; esac
sed '1s/"allowed":false/"allowed":true/' "$tmp/audit.log" >"$tmp/edited.log"
st=0
out=$("$sluice" audit --verify "$tmp/edited.log") || st=$?
[ "$st" = 1 ] || fail "an edited audit log verified (exit $st): $out"
case "$out" in *"edited.log:2 (seq 2): prev does not match the hash of"*"edited.log:1"*) ;; *) fail "verify of the edited log: $out" ;; esac
say "audit chain: $("$sluice" audit --verify "$tmp/audit.log"); edit found: $out"

# 5. Fail closed: an unreadable client CA file means no webhook is served, and /readyz says so.
ctrl_start op2 --config "$tmp/config.yaml" --namespace "$sys" --webhook-port "$port" \
    --webhook-cert-ip 127.0.0.1 --health-probe-bind-address "127.0.0.1:$hport" \
    --webhook-client-ca "$tmp/missing-ca.crt"
until_ 30 "the client CA problem" 'grep -q "client CA" "$tmp/op2.log"'
code=$(curl -s -o "$tmp/readyz" -w '%{http_code}' "http://127.0.0.1:$hport/readyz" || true)
[ "$code" = 503 ] || fail "/readyz answered $code with an unreadable client CA"
st=0
post >/dev/null || st=$?
[ "$st" != 0 ] || fail "the webhook port answered with an unreadable client CA"
ctrl_stop op2
say "fail closed: unreadable client CA -> webhooks not served, /readyz 503"

# 6. CA rotation keeps the old CA in the caBundle: a Secret whose CA has little life left (100
# days) and whose serving certificate expires in 30 days makes sluice rotate both; the new
# ca.crt, and so the caBundle, holds the new CA and the old one, so a replica still serving the
# old certificate stays trusted until it re-reads the Secret.
mkdir -p "$tmp/rot"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 100 -subj /CN=old-ca \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" \
    -keyout "$tmp/rot/ca.key" -out "$tmp/rot/ca.crt" >/dev/null 2>&1 || fail "openssl old CA"
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=127.0.0.1 \
    -keyout "$tmp/rot/tls.key" -out "$tmp/rot/tls.csr" >/dev/null 2>&1 || fail "openssl CSR"
printf 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n' >"$tmp/rot/ext"
openssl x509 -req -in "$tmp/rot/tls.csr" -CA "$tmp/rot/ca.crt" -CAkey "$tmp/rot/ca.key" \
    -CAcreateserial -days 30 -extfile "$tmp/rot/ext" -out "$tmp/rot/tls.crt" >/dev/null 2>&1 ||
    fail "openssl serving cert"
k delete secret -n "$sys" "$base-webhook-server-cert" --ignore-not-found >/dev/null
k create secret tls -n "$sys" "$base-webhook-server-cert" --cert "$tmp/rot/tls.crt" \
    --key "$tmp/rot/tls.key" >/dev/null || fail "create the expiring Secret"
k patch secret -n "$sys" "$base-webhook-server-cert" --type merge -p \
    "{\"data\":{\"ca.crt\":\"$(base64 -w0 "$tmp/rot/ca.crt")\",\"ca.key\":\"$(base64 -w0 "$tmp/rot/ca.key")\"}}" \
    >/dev/null || fail "add the old CA to the Secret"
ctrl_start op3 --config "$tmp/config.yaml" --namespace "$sys" --webhook-port "$port" \
    --webhook-cert-ip 127.0.0.1 --webhook-client-ca "$SLUICE_KUBE_WEBHOOK_CLIENT_CA"
until_ 30 "op3 to rotate the certificates" 'grep -q "rotating the serving certificate" "$tmp/op3.log"'
until_ 30 "a new CA in the Secret" '[ "$(k get secret -n "$sys" "$base-webhook-server-cert" -o jsonpath="{.data.ca\.crt}" | base64 -d | grep -c "BEGIN CERTIFICATE")" = 2 ]'
k get secret -n "$sys" "$base-webhook-server-cert" -o jsonpath='{.data.ca\.crt}' | base64 -d >"$tmp/rot/bundle.pem"
openssl x509 -in "$tmp/rot/bundle.pem" -noout -subject | grep -q sluice-ca || fail "the new CA is not first: $(cat "$tmp/rot/bundle.pem")"
grep -q "$(sed -n 2p "$tmp/rot/ca.crt")" "$tmp/rot/bundle.pem" || fail "the old CA is not in the new ca.crt"
until_ 90 "the two-CA caBundle in the validating configuration" '[ "$(k get validatingwebhookconfiguration $base-validating-webhook-configuration -o jsonpath="{.webhooks[0].clientConfig.caBundle}" | base64 -d | grep -c "BEGIN CERTIFICATE")" = 2 ]'
# The old certificate (what the other replica would still serve) verifies against the bundle.
openssl verify -CAfile "$tmp/rot/bundle.pem" "$tmp/rot/tls.crt" >/dev/null || fail "the old serving certificate does not verify against the new caBundle"
rejects_bad() {
    n=0
    while :; do
        out=$(cq "bad-$sfx" 10 | k apply -f - 2>&1) && fail "the invalid ClusterQueue was admitted: $out"
        case "$out" in
        *'denied the request'*lendingLimit*) return 0 ;;
        *) n=$((n + 1)); [ $n -lt 30 ] || fail "the API server cannot call the rotated webhook: $out"; sleep 1 ;;
        esac
    done
}
rejects_bad
ctrl_stop op3
say "CA rotation: new CA first, old CA kept in ca.crt and the caBundle; the old serving certificate still verifies; the API server calls the new one"
