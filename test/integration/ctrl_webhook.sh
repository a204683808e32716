#!/bin/sh
# ctrl_webhook -- the API server calls the webhooks of `sluice run` over TLS: sluice creates its
# CA and serving certificate in a Secret (self-managed, as Kueue's internal cert management),
# injects the CA bundle into its Validating/MutatingWebhookConfigurations, and then an invalid
# ClusterQueue applied with kubectl is rejected with sluice's message, while a valid one is
# admitted (and gets the finalizer from the mutating webhook). A JobSet (the JobSet integration
# enabled) created running with a queue name is held by the mutating webhook, and its queue
# cannot change once it runs. A restart reuses the Secret.
# The configurations call https://127.0.0.1:PORT (no Service routing in the test environment),
# so the certificate carries that IP (--webhook-cert-ip), and an objectSelector limits them to
# this test's objects.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/ctrl_lib.sh"

ctrl_install_crds
k apply -f "$src/test/data/crds-integrations/jobset.x-k8s.io_jobsets.yaml" >/dev/null ||
    fail "apply the test JobSet CRD"
k wait --for condition=Established --timeout=60s crd/jobsets.jobset.x-k8s.io >/dev/null ||
    fail "JobSet CRD not Established"
ctrl_sys_namespace
it_namespace
base=it-$sfx
ctrl_delete_at_exit validatingwebhookconfiguration "$base-validating-webhook-configuration"
ctrl_delete_at_exit mutatingwebhookconfiguration "$base-mutating-webhook-configuration"
ctrl_delete_at_exit clusterqueue "good-$sfx" "bad-$sfx"

port=$(ctrl_free_port)

hook() { # operations path name [group version resource]
    cat <<EOT
- name: $3.kueue.x-k8s.io
  clientConfig: {url: "https://127.0.0.1:$port$2"}
  rules: [{apiGroups: [${4:-kueue.x-k8s.io}], apiVersions: [${5:-v1beta2}], operations: [$1], resources: [${6:-clusterqueues}]}]
  objectSelector: {matchLabels: {sluice-it: "$sfx"}}
  failurePolicy: Fail
  sideEffects: None
  timeoutSeconds: 10
  admissionReviewVersions: [v1]
EOT
}
{
    echo "apiVersion: admissionregistration.k8s.io/v1"
    echo "kind: ValidatingWebhookConfiguration"
    echo "metadata: {name: $base-validating-webhook-configuration}"
    echo "webhooks:"
    hook "CREATE, UPDATE" /validate-kueue-x-k8s-io-v1beta2-clusterqueue vclusterqueue
    hook "CREATE, UPDATE" /validate-jobset-x-k8s-io-v1alpha2-jobset vjobset jobset.x-k8s.io v1alpha2 jobsets
    echo "---"
    echo "apiVersion: admissionregistration.k8s.io/v1"
    echo "kind: MutatingWebhookConfiguration"
    echo "metadata: {name: $base-mutating-webhook-configuration}"
    echo "webhooks:"
    hook CREATE /mutate-kueue-x-k8s-io-v1beta2-clusterqueue mclusterqueue
    hook CREATE /mutate-jobset-x-k8s-io-v1alpha2-jobset mjobset jobset.x-k8s.io v1alpha2 jobsets
} | k apply -f - >/dev/null || fail "create the webhook configurations"

ctrl_config config <<EOT
integrations: {frameworks: [batch/job, jobset.x-k8s.io/jobset]}
internalCertManagement: {enable: true, webhookServiceName: $base-webhook-service,
                         webhookSecretName: $base-webhook-server-cert}
EOT
hport=$((port + 1))
ctrl_start op --config "$tmp/config.yaml" --namespace "$sys" --webhook-port "$port" \
    --webhook-cert-ip 127.0.0.1 --health-probe-bind-address "127.0.0.1:$hport" \
    --audit-log "$tmp/audit.log" ${SLUICE_KUBE_WEBHOOK_CLIENT_CA:+--webhook-client-ca "$SLUICE_KUBE_WEBHOOK_CLIENT_CA"}
user_key=claimedUser # the API server's webhook client certificate authenticates it (mutual TLS)
[ -z "${SLUICE_KUBE_WEBHOOK_CLIENT_CA:-}" ] || user_key=user
until_ 30 "the Secret with the certificates" 'k get secret -n "$sys" "$base-webhook-server-cert" -o jsonpath="{.data.tls\.crt}" | grep -q .'
for kind in validating mutating; do
    until_ 90 "caBundle in the $kind configuration" '[ -n "$(k get ${kind}webhookconfiguration $base-$kind-webhook-configuration -o jsonpath="{.webhooks[0].clientConfig.caBundle}")" ]'
done
ca=$(k get validatingwebhookconfiguration "$base-validating-webhook-configuration" -o jsonpath='{.webhooks[0].clientConfig.caBundle}')
[ "$ca" = "$(k get secret -n "$sys" "$base-webhook-server-cert" -o jsonpath='{.data.ca\.crt}')" ] ||
    fail "caBundle differs from the Secret's ca.crt"
say "Secret $sys/$base-webhook-server-cert created, caBundle injected into both configurations"
# Probes: ready once the caches synced and a certificate is served.
until_ 20 "/readyz to answer 200" '[ "$(curl -s -o /dev/null -w "%{http_code}" "http://127.0.0.1:$hport/readyz")" = 200 ]'
[ "$(curl -s "http://127.0.0.1:$hport/healthz")" = ok ] || fail "/healthz"
[ "$(curl -s -o /dev/null -w "%{http_code}" "http://127.0.0.1:$hport/nope")" = 404 ] || fail "probe 404"

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
# The server may take a moment to use the new caBundle: retry while the failure is TLS.
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
*'denied the request'*lendingLimit*) say "invalid ClusterQueue rejected: $out" ;;
*) fail "unexpected rejection: $out" ;;
esac
cq "good-$sfx" 1 | k apply -f - >/dev/null || fail "the valid ClusterQueue was rejected"
[ "$(k get clusterqueue "good-$sfx" -o jsonpath='{.metadata.finalizers[0]}')" = kueue.x-k8s.io/resource-in-use ] ||
    fail "the mutating webhook did not add the finalizer"
say "valid ClusterQueue admitted with the resource-in-use finalizer"
# The audit trail: the rejection and the creation, with the calling user, in the log and as
# Events on the ClusterQueue (cluster-scoped: in namespace default).
grep '"allowed":false' "$tmp/audit.log" | grep -q "\"$user_key\":\"sluice-admin\"" ||
    fail "the rejection is not in the audit log with the user: $(cat "$tmp/audit.log")"
grep '"allowed":true' "$tmp/audit.log" | grep '"name":"good-'"$sfx"'"' | grep -q "\"$user_key\":\"sluice-admin\"" ||
    fail "the creation is not in the audit log with the user: $(cat "$tmp/audit.log")"
"$SLUICE_BINARY_DIR/sluice" audit --object "ClusterQueue/good-$sfx" "$tmp/audit.log" |
    grep -q "quota f-$sfx/cpu nominalQuota: (none) -> 2" || fail "sluice audit does not show the quota"
until_ 20 "the audit Event on the ClusterQueue" 'k get events -n default --field-selector "involvedObject.name=good-$sfx,reason=AuditedChange" -o jsonpath="{.items[0].message}" | grep -q "sluice-admin changed"'
say "audit trail: log file with the user, sluice audit table, Event on the object"

# A JobSet created running with a queue name: held by the mutating webhook before any pod.
cat <<EOT | k apply -f - >/dev/null || fail "create the JobSet"
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: js
  namespace: $ns
  labels: {sluice-it: "$sfx", kueue.x-k8s.io/queue-name: lq}
spec:
  suspend: false
  replicatedJobs:
  - name: workers
    template:
      spec:
        parallelism: 2
        template:
          spec:
            restartPolicy: Never
            containers: [{name: c, image: busybox, resources: {requests: {cpu: 100m}}}]
EOT
[ "$(k get jobsets.jobset.x-k8s.io -n "$ns" js -o jsonpath='{.spec.suspend}')" = true ] ||
    fail "the JobSet was created running: $(k get jobsets.jobset.x-k8s.io -n "$ns" js -o yaml)"
say "JobSet created running with a queue name: held (spec.suspend=true) by the webhook"
# Running (as once admitted) it cannot move to another queue.
out=$(k patch jobsets.jobset.x-k8s.io -n "$ns" js --type merge \
    -p '{"metadata":{"labels":{"kueue.x-k8s.io/queue-name":"other"}},"spec":{"suspend":false}}' 2>&1) &&
    fail "a running JobSet changed its queue: $out"
case "$out" in
*'denied the request'*'metadata.labels[kueue.x-k8s.io/queue-name]: field is immutable'*) say "queue change of a running JobSet rejected: $out" ;;
*) fail "unexpected answer: $out" ;;
esac
ctrl_stop op

# A restart reuses the valid Secret instead of writing a new one.
ctrl_start op2 --config "$tmp/config.yaml" --namespace "$sys" --webhook-port "$port" \
    --webhook-cert-ip 127.0.0.1
until_ 30 "op2 to serve" 'grep -q "serving TLS" "$tmp/op2.log"'
! grep -q "certificates written to Secret" "$tmp/op2.log" || fail "op2 rewrote the Secret"
out=$(cq "bad-$sfx" 10 | k apply -f - 2>&1) && fail "invalid ClusterQueue admitted after restart"
case "$out" in *'denied the request'*) ;; *) fail "after restart: $out" ;; esac
ctrl_stop op2
say "restart: the Secret was reused and the webhook still rejects"

# Certificates from a directory (cert-manager style): our own CA, the bundle set by us (as
# cert-manager's CA injector would), the files replaced while running -> reloaded.
mkcert() { # dir
    mkdir -p "$1"
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -subj /CN=it-ca \
        -keyout "$1/ca.key" -out "$1/ca.crt" >/dev/null 2>&1 || fail "openssl CA"
    openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=127.0.0.1 \
        -keyout "$1/tls.key.new" -out "$1/tls.csr" >/dev/null 2>&1 || fail "openssl CSR"
    printf 'subjectAltName=IP:127.0.0.1\n' >"$1/ext"
    openssl x509 -req -in "$1/tls.csr" -CA "$1/ca.crt" -CAkey "$1/ca.key" -CAcreateserial \
        -days 2 -extfile "$1/ext" -out "$1/tls.crt.new" >/dev/null 2>&1 || fail "openssl cert"
}
bundle() { # ca file
    b=$(base64 -w0 <"$1")
    for kind in validating mutating; do
        k patch ${kind}webhookconfiguration "$base-$kind-webhook-configuration" --type json \
            -p "[{\"op\":\"replace\",\"path\":\"/webhooks/0/clientConfig/caBundle\",\"value\":\"$b\"}]" >/dev/null ||
            fail "set the caBundle of $kind"
    done
}
rejects() { # retries while TLS is being switched over
    n=0
    while :; do
        out=$(cq "bad-$sfx" 10 | k apply -f - 2>&1) && fail "invalid ClusterQueue admitted: $out"
        case "$out" in
        *'denied the request'*lendingLimit*) return 0 ;;
        *) n=$((n + 1)); [ $n -lt 30 ] || fail "webhook not reachable with $1: $out"; sleep 1 ;;
        esac
    done
}
mkcert "$tmp/c1"
mv "$tmp/c1/tls.key.new" "$tmp/c1/tls.key"
mv "$tmp/c1/tls.crt.new" "$tmp/c1/tls.crt"
bundle "$tmp/c1/ca.crt"
ctrl_start op3 --namespace "$sys" --webhook-port "$port" --cert-dir "$tmp/c1"
until_ 30 "op3 to serve from the directory" 'grep -q "serving TLS" "$tmp/op3.log"'
rejects "the first certificate"
mkcert "$tmp/c2"
cp "$tmp/c2/ca.crt" "$tmp/c1/ca.crt"
mv "$tmp/c2/tls.key.new" "$tmp/c1/tls.key"
mv "$tmp/c2/tls.crt.new" "$tmp/c1/tls.crt"
bundle "$tmp/c1/ca.crt"
until_ 30 "op3 to reload the rotated files" 'grep -q "reloaded" "$tmp/op3.log"'
rejects "the rotated certificate"
ctrl_stop op3
say "cert dir: served, rotated files reloaded without a restart, still rejecting"
say "PASS"
