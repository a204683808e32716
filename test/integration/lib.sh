# lib.sh -- sourced by the integration tests (test/integration/*.sh).
# Loads the environment written by test/kube-env/up (file $SLUICE_KUBE_ENV), or exits 77 with the
# reason when the environment could not be built on this machine (never a silent pass).
# Run one test by hand: test/kube-env/with-apiserver test/integration/<name>.sh
# shellcheck shell=sh
set -eu

it_name=$(basename "$0" .sh)
src=${SLUICE_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}

say() { echo "[$it_name] $*"; }
fail() {
    echo "[$it_name] FAIL: $*" >&2
    diag=${it_fail_diag:-}
    it_fail_diag=
    [ -z "$diag" ] || { echo "[$it_name] diagnostics:"; eval "$diag"; } >&2 2>&1 || true
    exit 1
}
# Add a command whose output helps explain a failure: run, to stderr, when fail() is called.
it_on_fail() { for c in "$@"; do it_fail_diag="${it_fail_diag:-} $c;"; done; }

if [ -z "${SLUICE_KUBE_ENV:-}" ]; then
    fail "SLUICE_KUBE_ENV is not set: run through ctest (-L integration) or test/kube-env/with-apiserver"
fi
if [ ! -f "$SLUICE_KUBE_ENV" ]; then
    skipped="$(dirname "$SLUICE_KUBE_ENV")/SKIPPED"
    if [ -f "$skipped" ]; then
        echo "[$it_name] SKIPPED -- INTEGRATION ENVIRONMENT UNAVAILABLE: $(cat "$skipped")" >&2
        exit 77
    fi
    fail "no environment file $SLUICE_KUBE_ENV (did the kube_env_up fixture fail? see its output)"
fi
# shellcheck disable=SC1090
. "$SLUICE_KUBE_ENV"
export KUBECONFIG

# kubectl as the admin of the test cluster, quiet about deprecation warnings.
k() { kubectl --warnings-as-errors=false "$@"; }

# kubectl as the non-admin test user: its own token on the local server, impersonation elsewhere.
k_user() {
    if [ -n "${SLUICE_KUBE_USER_KUBECONFIG:-}" ]; then
        kubectl --kubeconfig "$SLUICE_KUBE_USER_KUBECONFIG" "$@"
    else
        kubectl --as="$SLUICE_KUBE_USER" "$@"
    fi
}

# Expect a command to fail and its output to contain a text: expect_fail TEXT CMD...
expect_fail() {
    want=$1
    shift
    if out=$("$@" 2>&1); then
        fail "expected failure with '$want' from: $* -- but it succeeded: $out"
    fi
    case "$out" in
    *"$want"*) say "rejected as expected: $(echo "$out" | head -n 1)" ;;
    *) fail "expected '$want' from: $* -- got: $out" ;;
    esac
}

# Poll CMD until it succeeds: wait_for SECONDS DESCRIPTION CMD...
wait_for() {
    secs=$1 what=$2
    shift 2
    n=0
    until "$@" >/dev/null 2>&1; do
        n=$((n + 1))
        [ $n -lt $((secs * 5)) ] || fail "timed out after ${secs}s waiting for $what"
        sleep 0.2
    done
}

# A fresh namespace for this test in $ns, deleted (without waiting) when the test exits.
# Call it directly (not in $(...)) so the cleanup is registered in this shell.
it_namespace() {
    ns="sluice-it-$(echo "$it_name" | tr '_' '-')-$(od -An -N3 -tx1 /dev/urandom | tr -d ' \n')"
    k create namespace "$ns" >/dev/null
    it_cleanup="${it_cleanup:-} k delete namespace $ns --wait=false --ignore-not-found >/dev/null 2>&1 || true;"
    trap 'eval "${it_cleanup:-}"' EXIT
}

# Add a cleanup command run at exit (after the namespace deletions registered earlier).
it_on_exit() {
    it_cleanup="${it_cleanup:-} $*;"
    trap 'eval "${it_cleanup:-}"' EXIT
}
