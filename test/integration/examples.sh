#!/bin/sh
# examples -- every shipped example (examples/**/*.yaml) applies cleanly to the API server with
# the CRDs of crds/ installed. Files in name order; per file: Namespaces and PriorityClasses first,
# then the rest, then objects with only metadata.generateName (kubectl create). JobSet, PyTorchJob
# and the other workload kinds go through the test CRDs of test/data/crds-integrations/.
# batch/v1 Jobs are applied as the test Job CRD batch.test.sluice.dev/v1 (same schema incl.
# spec.suspend, which the 1.20 server would silently drop -- see docs/testing.md). Documents the
# server cannot hold are reported and skipped: config.kueue.x-k8s.io Configuration (a config
# file, not an API object) and kueue.x-k8s.io/v1beta1 objects (crds/ serves v1beta2 only).
. "$(dirname "$0")/lib.sh"

files=$(find "$src/examples" -name '*.yaml' -o -name '*.yml' 2>/dev/null | sort)
if [ -z "$files" ]; then
    echo "[$it_name] SKIPPED: there are no examples/**/*.yaml to apply yet" >&2
    exit 77
fi

k apply --validate=false -f "$src/crds/" >/dev/null || fail "kubectl apply -f crds/" # docs/crds.md
k apply -f "$src/test/testdata/job-crd.yaml" >/dev/null || fail "kubectl apply -f test/testdata/job-crd.yaml"
# JobSet, PyTorchJob, ... in the examples: the test CRDs of those kinds (docs/testing.md).
k apply -f "$src/test/data/crds-integrations/" >/dev/null || fail "kubectl apply -f test/data/crds-integrations/"
for n in $(k apply --validate=false -f "$src/crds/" -f "$src/test/testdata/job-crd.yaml" \
    -f "$src/test/data/crds-integrations/" --dry-run=client -o name); do
    k wait --for condition=Established --timeout=60s "$n" >/dev/null || fail "$n not Established"
done
wait_for 30 "discovery of the test Job CRD" k get jobs.batch.test.sluice.dev -A

work=$(mktemp -d)
mkdir -p "$work/a" "$work/b" "$work/c"
cleanup_examples() {
    # reverse phase order, without waiting for namespace finalization
    k delete -f "$work/b" --ignore-not-found --wait=false >/dev/null 2>&1 || true
    k delete -f "$work/a" --ignore-not-found --wait=false >/dev/null 2>&1 || true
    rm -rf "$work"
}
it_on_exit cleanup_examples

# Split every example into phase directories (a: Namespace, PriorityClass; b: the rest; c: objects
# named by generateName only), one file per example, named <index>-<path with / as __> so kubectl
# (which reads a directory in name order) keeps the examples' order and its errors name them.
i=0
count=0
for f in $files; do
    i=$((i + 1))
    rel=${f#"$src"/}
    out=$(printf '%03d-%s' "$i" "$(echo "$rel" | sed 's|/|__|g')")
    awk -v a="$work/a/$out" -v b="$work/b/$out" -v c="$work/c/$out" -v file="$rel" '
        function flush(   target) {
            if (api != "" && kind != "") {
                if (api ~ /^config\.kueue\.x-k8s\.io\//) {
                    printf "  %s: doc %d (%s): skipped, a Kueue configuration file, not an API object\n", file, doc, kind > "/dev/stderr"
                } else if (api == "kueue.x-k8s.io/v1beta1") {
                    printf "  %s: doc %d (%s): skipped, kueue.x-k8s.io/v1beta1 is not served by crds/\n", file, doc, kind > "/dev/stderr"
                } else {
                    target = (kind == "Namespace" || kind == "PriorityClass") ? a : b
                    if (gen && !named) target = c
                    if (api == "batch/v1" && kind == "Job")
                        sub(/(^|\n)apiVersion:[^\n]*/, "\napiVersion: batch.test.sluice.dev/v1", buf)
                    print "---" buf > target
                    n++
                }
            }
            buf = ""; api = ""; kind = ""; gen = 0; named = 0; doc++
        }
        BEGIN { doc = 1; n = 0 }
        /^---/ { flush(); next }
        {
            buf = buf "\n" $0
            if ($0 ~ /^apiVersion:/) { api = $2; gsub(/["\047]/, "", api) }
            if ($0 ~ /^kind:/) { kind = $2; gsub(/["\047]/, "", kind) }
            if ($0 ~ /^  generateName:/) gen = 1
            if ($0 ~ /^  name:/ || $0 ~ /^metadata:.*[{ ,]name:/) named = 1
        }
        END { flush(); print n > "/dev/stderr" }
    ' "$f" 2>"$work/$i.log"
    docs=$(tail -n 1 "$work/$i.log")
    sed '$d' "$work/$i.log"
    if [ "$docs" -gt 0 ] 2>/dev/null; then
        count=$((count + 1))
        say "$rel: $docs objects (transformed copy $out)"
    else
        say "$rel: no Kubernetes objects, not applied"
    fi
done
[ $count -gt 0 ] || fail "no example held a Kubernetes object"

for phase in a b c; do
    [ -n "$(ls -A "$work/$phase")" ] || continue
    verb=apply done=applied
    [ $phase = c ] && verb=create done=created # objects with only metadata.generateName
    if ! out=$(k $verb -f "$work/$phase" 2>&1); then
        echo "$out" >&2
        fail "examples do not apply cleanly: kubectl $verb (the file names above map to examples/)"
    fi
    say "phase $phase: $(echo "$out" | wc -l) objects $done"
done
say "PASS ($count example files)"
