#!/bin/sh
# kube_env_lifecycle -- test/kube-env itself: up starts etcd, kube-apiserver and
# kube-controller-manager; down stops them all (no stray process: pgrep), removes the state,
# is idempotent, and falls back to SIGKILL for a process that ignores SIGTERM; with-apiserver
# runs its command against a live server, always stops it, and exits with the command's status.
# Starts its own environments (not the shared fixture), so it needs no SLUICE_KUBE_ENV.
set -eu
it_name=kube_env_lifecycle
here=$(cd "$(dirname "$0")/../kube-env" && pwd)
say() { echo "[$it_name] $*"; }
fail() { echo "[$it_name] FAIL: $*" >&2; exit 1; }

if [ -n "${SLUICE_TEST_KUBECONFIG:-}" ]; then
    echo "[$it_name] SKIPPED: SLUICE_TEST_KUBECONFIG is set; this test checks the local environment" >&2
    exit 77
fi
tmp=$(mktemp -d)
trap 'for d in "$tmp"/s*; do [ -d "$d" ] && "$here/down" "$d"; done; rm -rf "$tmp"' EXIT

val() { sed -n "s/^export $1='\\(.*\\)'\$/\\1/p" "$2"; }
no_strays() { # $1 state dir, $2 etcd data dir
    for pat in "$1" "$2"; do
        if pids=$(pgrep -f -- "$pat"); then
            fail "processes left after down: $(ps -o pid=,args= -p "$(echo "$pids" | tr '\n' ',' | sed 's/,$//')")"
        fi
    done
    [ ! -e "$1" ] || fail "state dir $1 left after down"
    [ ! -e "$2" ] || fail "etcd data $2 left after down"
}

# 1. up / down with the controller manager
set +e
envf=$("$here/up" "$tmp/s1")
rc=$?
set -e
if [ $rc -eq 77 ]; then
    echo "[$it_name] SKIPPED -- INTEGRATION ENVIRONMENT UNAVAILABLE: $(cat "$tmp/s1/SKIPPED" 2>/dev/null)" >&2
    exit 77
fi
[ $rc -eq 0 ] || fail "up failed ($rc)"
etcd_data=$(val SLUICE_KUBE_ETCD_DATA "$envf")
for v in SLUICE_KUBE_ETCD_PID SLUICE_KUBE_APISERVER_PID SLUICE_KUBE_CM_PID; do
    pid=$(val $v "$envf")
    kill -0 "$pid" 2>/dev/null || fail "$v=$pid is not running after up"
done
KUBECONFIG=$(val KUBECONFIG "$envf") kubectl get namespace kube-system >/dev/null || fail "kubectl against the new server"
"$here/down" "$tmp/s1" || fail "down failed"
no_strays "$tmp/s1" "$etcd_data"
"$here/down" "$tmp/s1" || fail "second down is not a no-op"
say "up/down: 3 processes started and stopped, nothing left, down idempotent"

# 2. SIGKILL fallback: a stopped (SIGSTOP) kube-apiserver cannot act on SIGTERM.
envf=$(SLUICE_KUBE_CONTROLLER_MANAGER=0 "$here/up" "$tmp/s2") || fail "up (2) failed"
etcd_data=$(val SLUICE_KUBE_ETCD_DATA "$envf")
kill -STOP "$(val SLUICE_KUBE_APISERVER_PID "$envf")"
out=$(SLUICE_KUBE_STOP_TIMEOUT=1 "$here/down" "$tmp/s2" 2>&1) || fail "down (2) failed: $out"
case "$out" in *SIGKILL*) ;; *) fail "down did not report the SIGKILL fallback: '$out'" ;; esac
no_strays "$tmp/s2" "$etcd_data"
say "down: SIGKILL after the timeout for a process ignoring SIGTERM"

# 3. with-apiserver: the command sees a live server; its status is returned; all is stopped.
set +e
SLUICE_KUBE_CONTROLLER_MANAGER=0 "$here/with-apiserver" sh -c '
    kubectl get --raw /readyz >/dev/null || exit 9
    echo "$SLUICE_KUBE_ENV_DIR $SLUICE_KUBE_ETCD_DATA" >"$0"
    exit 3' "$tmp/seen"
rc=$?
set -e
[ $rc -eq 3 ] || fail "with-apiserver returned $rc, want the command's 3"
read -r d e <"$tmp/seen"
no_strays "$d" "$e"
say "with-apiserver: command status 3 returned, environment stopped"
say "PASS"
