#!/bin/sh
# crds -- the shipped CRDs (crds/) install on the API server: `kubectl apply -f crds/` succeeds,
# every CRD becomes Established, `kubectl get cq` shows Kueue's printer columns, and the schema
# rejects what a structural schema can reject (CEL rules are enforced by the webhooks instead,
# see docs/testing.md).
. "$(dirname "$0")/lib.sh"

files=$(find "$src/crds" -name '*.yaml' | sort)
[ -n "$files" ] || fail "no CRD manifests in $src/crds"
# --validate=false: before Kubernetes 1.23 the CRD API has no x-kubernetes-validations (nor
# selectableFields); kubectl's client-side validation would refuse them as unknown fields, while
# the server itself drops them (docs/crds.md, "Older clusters").
k apply --validate=false -f "$src/crds/" || fail "kubectl apply -f crds/"
names=$(k apply --validate=false -f "$src/crds/" --dry-run=client -o name) # customresourcedefinition.../<name>
for n in $names; do
    k wait --for condition=Established --timeout=60s "$n" >/dev/null || fail "$n not Established"
    # NamesAccepted too: no shortName/plural conflicts
    acc=$(k get "$n" -o jsonpath='{.status.conditions[?(@.type=="NamesAccepted")].status}')
    [ "$acc" = True ] || fail "$n: NamesAccepted=$acc"
done
say "$(echo "$names" | wc -w) CRDs Established"
wait_for 30 "discovery of kueue.x-k8s.io" k get clusterqueues

cq=sluice-it-cq-$$
cleanup_cq() { k delete clusterqueue "$cq" "$cq-bad" --ignore-not-found --wait=false >/dev/null 2>&1 || true; }
it_on_exit cleanup_cq
k apply -f - <<EOT || fail "create a valid ClusterQueue"
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata:
  name: $cq
spec:
  cohortName: it-cohort
  queueingStrategy: StrictFIFO
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu, memory]
    flavors:
    - name: default
      resources:
      - {name: cpu, nominalQuota: "8"}
      - {name: memory, nominalQuota: 32Gi}
EOT

# Kueue's printer columns: Cohort and Pending Workloads; -o wide adds Strategy and Admitted Workloads.
header=$(k get cq "$cq" | head -n 1 | tr -s ' ')
[ "$header" = "NAME COHORT PENDING WORKLOADS" ] || fail "kubectl get cq header: '$header'"
row=$(k get cq "$cq" --no-headers | tr -s ' ')
case "$row" in "$cq it-cohort"*) ;; *) fail "kubectl get cq row: '$row'" ;; esac
wide=$(k get cq "$cq" -o wide | head -n 1 | tr -s ' ')
[ "$wide" = "NAME COHORT STRATEGY PENDING WORKLOADS ADMITTED WORKLOADS" ] || fail "kubectl get cq -o wide header: '$wide'"
wrow=$(k get cq "$cq" -o wide --no-headers | tr -s ' ')
case "$wrow" in "$cq it-cohort StrictFIFO"*) ;; *) fail "kubectl get cq -o wide row: '$wrow'" ;; esac
say "kubectl get cq: $header / wide: $wide"

# Defaults from the schema are applied by the server.
strategy=$(k get cq "$cq" -o jsonpath='{.spec.queueingStrategy}')
[ "$strategy" = StrictFIFO ] || fail "queueingStrategy read back as '$strategy'"

# Schema rejections (structural schema: enum, pattern, type).
bad_cq() { # $1 = extra spec lines
    printf '%s\n' "apiVersion: kueue.x-k8s.io/v1beta2" "kind: ClusterQueue" "metadata:" \
        "  name: $cq-bad" "spec:" "$1" | k apply -f -
}
expect_fail 'Unsupported value: "Foo"' bad_cq "  queueingStrategy: Foo"
expect_fail 'spec.cohortName' bad_cq "  cohortName: Not_A_Name"
expect_fail 'spec.queueingStrategy' bad_cq "  queueingStrategy: 7"
k get cq "$cq-bad" >/dev/null 2>&1 && fail "an invalid ClusterQueue was stored"

# Namespaced kinds install too: a LocalQueue pointing at the ClusterQueue.
it_namespace
k apply -n "$ns" -f - <<EOT || fail "create a LocalQueue"
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata:
  name: user-queue
spec:
  clusterQueue: $cq
EOT
lq=$(k get lq -n "$ns" user-queue --no-headers | tr -s ' ')
case "$lq" in "user-queue $cq"*) ;; *) fail "kubectl get lq row: '$lq'" ;; esac

# Versions: v1beta1 is served (deprecated) beside the v1beta2 storage version. ClusterQueue,
# LocalQueue and Workload convert through sluice's webhook (the Service in sluice-system); here no
# sluice runs, so v1beta2 -- no conversion needed -- works and v1beta1 fails closed with the
# API server's reason (test/integration/conversion.sh runs the webhook).
for c in clusterqueues localqueues workloads cohorts resourceflavors workloadpriorityclasses topologies admissionchecks; do
    v=$(k get crd "$c.kueue.x-k8s.io" -o jsonpath='{range .spec.versions[*]}{.name}:{.served}:{.storage}:{.deprecated} {end}')
    [ "$v" = "v1beta2:true:true: v1beta1:true:false:true " ] || fail "CRD $c versions: '$v'"
done
for c in clusterqueues localqueues workloads; do
    conv=$(k get crd "$c.kueue.x-k8s.io" -o jsonpath='{.spec.conversion.strategy} {.spec.conversion.webhook.clientConfig.service.name}/{.spec.conversion.webhook.clientConfig.service.path} {.spec.conversion.webhook.conversionReviewVersions[*]}')
    [ "$conv" = "Webhook sluice-webhook-service//convert v1" ] || fail "CRD $c conversion: '$conv'"
done
wait_for 30 "discovery of kueue.x-k8s.io/v1beta1" k get cohorts.v1beta1.kueue.x-k8s.io
out=$(k get clusterqueues.v1beta1.kueue.x-k8s.io "$cq" 2>&1) && fail "v1beta1 read without a webhook: $out"
case "$out" in *"conversion webhook for kueue.x-k8s.io/v1beta2, Kind=ClusterQueue failed"*) ;; *) fail "v1beta1 read: $out" ;; esac
say "v1beta1 read without a running webhook: $(echo "$out" | grep -v '^Warning: ')"
say "v1beta1 served beside v1beta2; ClusterQueue, LocalQueue, Workload convert through the webhook"
say "PASS"
