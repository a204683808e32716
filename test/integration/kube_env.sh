#!/bin/sh
# kube_env -- the integration environment itself: the API server answers /readyz with the admin
# token, RBAC is on (the non-admin test user may not list Secrets, the admin may), anonymous
# requests are refused, and on the local server it is the 1.20 build from Debian's source package
# listening on loopback only.
. "$(dirname "$0")/lib.sh"

if [ -n "$SLUICE_KUBE_CA" ]; then
    ready=$(curl -fsS --cacert "$SLUICE_KUBE_CA" -H "Authorization: Bearer $SLUICE_KUBE_TOKEN" \
        "$SLUICE_KUBE_SERVER/readyz")
else
    ready=$(curl -fsS "$SLUICE_KUBE_SERVER/readyz")
fi
[ "$ready" = ok ] || fail "/readyz answered '$ready'"
say "/readyz: ok"

k get --raw /version >/dev/null || fail "admin cannot GET /version"
k get secrets -A >/dev/null || fail "admin cannot list secrets"
[ "$(k auth can-i list secrets --all-namespaces)" = yes ] || fail "admin: can-i list secrets is not yes"

expect_fail "Forbidden" k_user get secrets -n default
expect_fail "cannot list resource \"secrets\"" k_user get secrets -n default
[ "$(k_user auth can-i list secrets -n default 2>/dev/null || true)" = no ] ||
    fail "non-admin user: can-i list secrets is not no"

if [ "$SLUICE_KUBE_EXTERNAL" = 0 ]; then
    # local server: anonymous access is off, and it is the 1.20 server of this environment
    code=$(curl -sS -o /dev/null -w '%{http_code}' --cacert "$SLUICE_KUBE_CA" "$SLUICE_KUBE_SERVER/readyz")
    [ "$code" = 401 ] || fail "anonymous /readyz answered HTTP $code, want 401"
    minor=$(k get --raw /version | sed -n 's/.*"minor": *"\([0-9]*\).*/\1/p')
    [ "$minor" = 20 ] || fail "local server is not Kubernetes 1.20 (minor '$minor')"
    # every listening socket of etcd, kube-apiserver and kube-controller-manager is on loopback
    for pid in $SLUICE_KUBE_ETCD_PID $SLUICE_KUBE_APISERVER_PID ${SLUICE_KUBE_CM_PID:-}; do
        kill -0 "$pid" 2>/dev/null || fail "process $pid of the environment is not running"
        listen=$(ss -Hltnp | grep "pid=$pid," | awk '{print $4}')
        [ -n "$listen" ] || [ "$pid" = "${SLUICE_KUBE_CM_PID:-}" ] || fail "pid $pid listens nowhere?"
        for a in $listen; do
            case "$a" in
            127.0.0.1:*) ;;
            *) fail "pid $pid listens on $a, not loopback" ;;
            esac
        done
    done
    say "local kube-apiserver 1.$minor, anonymous refused"
fi
say "PASS"
