#!/bin/sh
# ctrl_diagnose -- a broken cluster is said loudly, once, with a remedy, at the default log level,
# and /readyz names what is missing: a CRD that is not installed (then installed: "resolved"),
# RBAC that forbids the lists and the Lease, an unreachable API server, a TLS failure, refused
# credentials, a webhook certificate that is not there, and Configuration fields with no effect.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/ctrl_lib.sh"

ctrl_install_crds
ctrl_sys_namespace

# Start `sluice run` NAME with a health port (in $hp) and FLAGS, without waiting for a sync.
diag_start() {
    name=$1
    shift
    hp=$(ctrl_free_port)
    "$sluice" run --namespace "$sys" --webhook-port 0 --health-probe-bind-address "127.0.0.1:$hp" \
        "$@" >"$tmp/$name.log" 2>&1 &
    eval "pid_$name=$!"
    it_on_exit "kill \$pid_$name 2>/dev/null || true; wait \$pid_$name 2>/dev/null || true"
    until_ 10 "the health port of $name" 'curl -s -o /dev/null "http://127.0.0.1:$hp/healthz"'
}

# Wait until the log of NAME has TEXT: diag_await NAME SECONDS TEXT
diag_await() {
    dn=$1 dt=$3
    until_ "$2" "'$dt' in the log of $dn" 'grep -qF -- "$dt" "$tmp/$dn.log"'
    say "$dn: $(grep -F -- "$dt" "$tmp/$dn.log" | head -n 1 | cut -c1-200)"
}

# Fail unless TEXT appears exactly N times in the log of NAME: diag_count NAME N TEXT
diag_count() {
    got=$(grep -cF -- "$3" "$tmp/$1.log" || true)
    [ "$got" = "$2" ] || fail "$1: '$3' logged $got times, want $2: $(cat "$tmp/$1.log")"
}

# /readyz of the operator started last: diag_readyz CODE TEXT...
diag_readyz() {
    want=$1
    shift
    body=$(curl -s -w '\n%{http_code}' "http://127.0.0.1:$hp/readyz")
    code=$(echo "$body" | tail -n 1)
    [ "$code" = "$want" ] || fail "/readyz answered $code, want $want: $body"
    for t in "$@"; do
        case "$body" in *"$t"*) ;; *) fail "/readyz does not say '$t': $body" ;; esac
    done
}

# ---- a CRD that is not installed, then installed; fields with no effect ------------------------
grp=nosuch$sfx.sluice.dev
ctrl_config cfg <<EOT
metrics: {customLabels: []}
integrations: {frameworks: [batch/job]}
health: {readinessEndpointName: ready}
EOT
diag_start crd --kubeconfig "$KUBECONFIG" --config "$tmp/cfg.yaml" --job-resource "$grp/v1/jobs"
diag_await crd 20 "the API server does not serve $grp/v1 jobs: the CustomResourceDefinition jobs.$grp is not installed or does not serve version v1; install it (kubectl apply -k manifests/"
diag_await crd 5 "configuration: these fields have no effect in sluice run and are ignored: health.readinessEndpointName, metrics.customLabels (docs"
diag_readyz 503 "caches not synced:" "jobs.$grp" "problems:" "CustomResourceDefinition jobs.$grp is not installed"
# The informer retries with backoff (0.8 s, 1.6 s, ...): the problem is still said once.
sleep 5
diag_count crd 1 "CustomResourceDefinition jobs.$grp is not installed"
sed -e "s/batch\.test\.sluice\.dev/$grp/g" "$src/test/testdata/job-crd.yaml" | k apply -f - >/dev/null ||
    fail "install the CRD jobs.$grp"
ctrl_delete_at_exit crd "jobs.$grp"
diag_await crd 40 "resolved after"
diag_await crd 10 "caches synced"
until_ 10 "/readyz 200" '[ "$(curl -s -o /dev/null -w "%{http_code}" "http://127.0.0.1:$hp/readyz")" = 200 ]'
ctrl_stop crd

# ---- RBAC: a user without any binding --------------------------------------------------------
[ -n "${SLUICE_KUBE_USER_KUBECONFIG:-}" ] || { say "SKIPPED the RBAC case: no non-admin kubeconfig (external cluster)"; exit 77; }
diag_start rbac --kubeconfig "$SLUICE_KUBE_USER_KUBECONFIG" --leader-elect --identity diag
diag_await rbac 20 "RBAC forbids list namespaces: namespaces is forbidden: User \"sluice-test-user\" cannot list resource \"namespaces\""
diag_await rbac 5 "grant it to sluice's ServiceAccount (the shipped ClusterRole sluice-manager-role, manifests/rbac.yaml)"
diag_await rbac 5 "RBAC forbids list clusterqueues.kueue.x-k8s.io"
diag_await rbac 10 "RBAC forbids get leases.coordination.k8s.io"
diag_await rbac 5 "(the shipped Role sluice-leader-election-role, manifests/rbac.yaml)"
diag_readyz 503 "caches not synced:" "namespaces" "RBAC forbids list clusterqueues.kueue.x-k8s.io"
sleep 3
diag_count rbac 1 "RBAC forbids list namespaces"
ctrl_stop rbac

# ---- the API server unreachable, a TLS failure, refused credentials ---------------------------
write_kubeconfig() { # FILE SERVER CA TOKEN
    cat >"$1" <<EOT
apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "$2", certificate-authority: "$3"}}]
users: [{name: u, user: {token: "$4"}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
EOT
}
write_kubeconfig "$tmp/down.kubeconfig" "https://127.0.0.1:1" "$SLUICE_KUBE_CA" "$SLUICE_KUBE_TOKEN"
diag_start down --kubeconfig "$tmp/down.kubeconfig"
diag_await down 20 "API server https://127.0.0.1:1 unreachable:"
diag_await down 5 "sluice keeps retrying with backoff"
diag_readyz 503 "caches not synced:" "unreachable"
sleep 3
# Nine informers fail for one reason: one line.
diag_count down 1 "API server https://127.0.0.1:1 unreachable:"
ctrl_stop down

openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 -subj /CN=other-ca \
    -keyout "$tmp/other-ca.key" -out "$tmp/other-ca.crt" >/dev/null 2>&1 || fail "openssl: a second CA"
write_kubeconfig "$tmp/tls.kubeconfig" "$SLUICE_KUBE_SERVER" "$tmp/other-ca.crt" "$SLUICE_KUBE_TOKEN"
diag_start tls --kubeconfig "$tmp/tls.kubeconfig"
diag_await tls 20 "TLS with API server $SLUICE_KUBE_SERVER failed:"
diag_await tls 5 "check the certificate authority sluice trusts"
sleep 2
diag_count tls 1 "TLS with API server"
ctrl_stop tls

write_kubeconfig "$tmp/token.kubeconfig" "$SLUICE_KUBE_SERVER" "$SLUICE_KUBE_CA" "not-a-token"
diag_start token --kubeconfig "$tmp/token.kubeconfig"
diag_await token 20 "refused sluice's credentials (401 Unauthorized)"
sleep 2
diag_count token 1 "refused sluice's credentials"
ctrl_stop token

# ---- a webhook certificate directory without certificates ------------------------------------
mkdir -p "$tmp/no-certs"
wp=$(ctrl_free_port)
diag_start cert --kubeconfig "$KUBECONFIG" --job-resource batch.test.sluice.dev/v1/jobs \
    --webhook-port "$wp" --cert-dir "$tmp/no-certs"
diag_await cert 20 "webhook certificate not ready, webhooks not served: waiting for tls.crt and tls.key in $tmp/no-certs (--cert-dir)"
diag_await cert 20 "caches synced"
diag_readyz 503 "webhook certificate not served yet" "webhook certificate not ready"
sleep 6
diag_count cert 1 "webhook certificate not ready"
ctrl_stop cert

say "each failure said once with its remedy; /readyz names what is missing; fields with no effect listed"
