#!/bin/sh
# install -- the shipped install on a real API server: manifests/ rendered by kustomize (as
# `kubectl apply -k manifests/` renders it) applies in one go, every object is there, the
# operator runs under the shipped ServiceAccount, RBAC and configuration and admits a Job with
# no 403, and the webhooks keep the cluster usable while it is down: unqueued Jobs and deletes
# go through, only quota objects and queued Jobs wait for it.
# SPDX-License-Identifier: Apache-2.0
#
# What is changed for the 1.20 test server, and only that (docs/operator.md "Kubernetes 1.20"):
# - the ClusterRole's Job rules name the test Job CRD's group (batch.test.sluice.dev), which
#   sluice run manages here (--job-resource), as ctrl_rbac does; the Job webhooks keep `batch`:
#   the webhook serves batch/v1 Jobs, which 1.20 has (without spec.suspend);
# - the PodDisruptionBudget is policy/v1beta1 (policy/v1 is 1.21+);
# - the webhooks call https://127.0.0.1:PORT instead of the Service (no Service routing to a
#   local process), and the certificate carries that IP (--webhook-cert-ip);
# - kubectl apply --validate=false (docs/crds.md: kubectl's client-side schema of 1.20 does not
#   know the CRDs' x-kubernetes-validations).
# The Deployment cannot run here (no scheduler, no kubelet, no registry holding the image): its
# two pods are created and stay Pending, which still shows the priority class admitted and the
# quota counting them. The operator runs as a local process instead, with the shipped
# ServiceAccount's token and the shipped ConfigMap's configuration file, overriding only what
# differs on loopback (ports, --webhook-cert-ip, --job-resource).
# The names are the shipped ones (namespace sluice-system, sluice-* cluster-scoped objects), which
# no other test uses; leftovers of an interrupted run are removed first, and everything but the
# CRDs is deleted at the end. The CRDs stay, as after every test that installs them
# (ctrl_install_crds): this test also checks that the two ways of applying them agree.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/ctrl_lib.sh"

[ "${SLUICE_KUBE_EXTERNAL:-0}" = 0 ] || { say "SKIPPED on an external cluster (installs cluster-wide webhooks, uses ServiceAccount tokens)"; exit 77; }

NS=sluice-system
VWC=sluice-validating-webhook-configuration
MWC=sluice-mutating-webhook-configuration
uninstall() {
    # The webhook configurations first: nothing is intercepted by a sluice that is gone.
    k delete validatingwebhookconfiguration $VWC --ignore-not-found >/dev/null 2>&1
    k delete mutatingwebhookconfiguration $MWC --ignore-not-found >/dev/null 2>&1
    # The visibility APIServices: with no sluice behind them, every client's discovery of the
    # shared test API server would report them unavailable (noise on every later test's stderr).
    k delete apiservice v1beta2.visibility.kueue.x-k8s.io v1beta1.visibility.kueue.x-k8s.io \
        --ignore-not-found >/dev/null 2>&1
    k delete clusterrole sluice-clusterqueue-pending-workloads-viewer \
        sluice-localqueue-pending-workloads-viewer --ignore-not-found >/dev/null 2>&1
    k delete clusterrolebinding sluice-manager-rolebinding --ignore-not-found >/dev/null 2>&1
    k delete clusterrole sluice-manager-role --ignore-not-found >/dev/null 2>&1
    k delete namespace $NS --ignore-not-found --wait=false >/dev/null 2>&1
}
uninstall
# The namespace must be gone, so that the apply below shows it is created before its objects.
until_ 90 "namespace $NS of an earlier run to be deleted" '! k get namespace $NS'
it_namespace
it_on_exit uninstall
it_on_fail 'k get events -n $NS --sort-by=.lastTimestamp | tail -n 25; k get rs,pods,resourcequota -n $NS' \
    'for f in "$tmp"/op*.log; do [ ! -f "$f" ] || { echo "-- last lines of $f"; tail -n 30 "$f"; }; done' \
    'grep -h "$NS" "$(dirname "$SLUICE_KUBE_ENV")/controller-manager.log" | tail -n 20'

# ---- render and apply ------------------------------------------------------------------------
# .ci/render-release --print is `kubectl kustomize manifests/` (or, with kubectl 1.20's kustomize
# v2, the same objects rendered in parts; see that script).
"$src/.ci/render-release" --print >"$tmp/render.yaml" || fail "render manifests/"
# Two free ports: the webhooks' and, next to it, the health probes' (a taken probe port made the
# operator exit at start and the test wait 30 s for its caches: the failed CI run of stop 25).
port=$(ctrl_free_port)
hport=$((port + 1))
awk -v url="https://127.0.0.1:$port" '
    /^---/ { kind = "" }
    /^kind: / { kind = $2 }
    kind == "ClusterRole" && $0 == "  - batch" { print "  - batch.test.sluice.dev"; next }
    $0 == "apiVersion: policy/v1" { print "apiVersion: policy/v1beta1"; next }
    kind ~ /WebhookConfiguration$/ && $0 == "    service:" { svc = 1; next }
    svc && /^      (name|namespace): / { next }
    svc && /^      path: / { print "    url: " url $2; svc = 0; next }
    { print }
' "$tmp/render.yaml" >"$tmp/install.yaml"
hooks=$(grep -c '^  name: .*\.sluice\.dev$' "$tmp/install.yaml")
[ "$(grep -c "^    url: https://127.0.0.1:$port/" "$tmp/install.yaml")" = "$hooks" ] ||
    fail "not every webhook was pointed at 127.0.0.1 ($hooks webhooks)"
[ "$(grep -c '^  - batch.test.sluice.dev$' "$tmp/install.yaml")" = 2 ] || fail "the ClusterRole's Job rules"

# One apply, in the render's order: the namespace exists before anything in it.
k apply --validate=false -f "$tmp/install.yaml" >"$tmp/apply.log" 2>&1 ||
    fail "kubectl apply of the rendered manifests/: $(cat "$tmp/apply.log")"
say "applied $(grep -c . "$tmp/apply.log") objects in one kubectl apply (namespace first)"
# The other tests' way of installing the CRDs on top of this one, and the test Job CRD.
ctrl_install_crds
big=0
for n in clusterqueues resourceflavors localqueues workloads cohorts workloadpriorityclasses admissionchecks topologies; do
    s=$(k get crd "$n.kueue.x-k8s.io" -o jsonpath='{.metadata.annotations.kubectl\.kubernetes\.io/last-applied-configuration}' | wc -c)
    [ "$s" -le "$big" ] || big=$s
done
# kubectl refuses client-side apply past 262144 bytes of annotations (then: --server-side).
[ "$big" -lt 262144 ] || fail "a CRD's last-applied annotation is $big bytes: client-side apply no longer works"
say "CRDs re-applied from crds/ over the kustomize install; largest last-applied annotation $big bytes (limit 262144)"

# ---- every object ----------------------------------------------------------------------------
have() { k get "$@" >/dev/null 2>&1 || fail "missing: $*"; }
jp() { k get "$@" 2>/dev/null; }
[ "$(jp namespace $NS -o jsonpath='{.status.phase}')" = Active ] || fail "namespace $NS"
have -n $NS serviceaccount sluice-controller-manager
have -n $NS role sluice-leader-election-role
have -n $NS rolebinding sluice-leader-election-rolebinding
have clusterrole sluice-manager-role
have clusterrolebinding sluice-manager-rolebinding
have -n $NS service sluice-webhook-service
cm=$(awk '/^kind: ConfigMap/ { c = 1 } c && /^  name: / { print $2; exit }' "$tmp/install.yaml")
case "$cm" in sluice-manager-config-??????????) ;; *) fail "generated ConfigMap name: '$cm'" ;; esac
have -n $NS configmap "$cm"
[ "$(jp -n $NS deployment sluice-controller-manager -o jsonpath='{.spec.template.spec.volumes[0].configMap.name}')" = "$cm" ] ||
    fail "the Deployment does not mount $cm"
[ "$(jp -n $NS deployment sluice-controller-manager -o jsonpath='{.spec.template.spec.priorityClassName} {.spec.template.spec.securityContext.runAsUser} {.spec.template.spec.containers[0].image}')" = \
    "system-cluster-critical 65532 sluice:0.1.0" ] || fail "Deployment: priority class, user or image"
# The audit trail: a file per pod on the writable audit volume; dry runs not recorded.
[ "$(jp -n $NS deployment sluice-controller-manager -o jsonpath='{.spec.template.spec.volumes[1].name} {.spec.template.spec.volumes[1].emptyDir.sizeLimit} {.spec.template.spec.containers[0].volumeMounts[1].mountPath}')" = \
    "audit 512Mi /var/log/sluice" ] || fail "Deployment: no audit volume"
jp -n $NS deployment sluice-controller-manager -o jsonpath='{.spec.template.spec.containers[0].args}' |
    grep -q '/var/log/sluice/$(POD_NAME).audit.log' || fail "Deployment: no --audit-log on the audit volume"
[ "$(jp validatingwebhookconfiguration $VWC -o jsonpath='{.webhooks[*].sideEffects}' | tr ' ' '\n' | sort -u)" = NoneOnDryRun ] ||
    fail "validating webhooks: sideEffects is not NoneOnDryRun everywhere"
[ "$(jp mutatingwebhookconfiguration $MWC -o jsonpath='{.webhooks[*].sideEffects}' | tr ' ' '\n' | sort -u)" = NoneOnDryRun ] ||
    fail "mutating webhooks: sideEffects is not NoneOnDryRun everywhere"
[ "$(jp -n $NS poddisruptionbudget sluice-controller-manager -o jsonpath='{.spec.minAvailable}')" = 1 ] || fail "PodDisruptionBudget"
[ "$(jp -n $NS networkpolicy sluice-controller-manager -o jsonpath='{.spec.ingress[0].ports[*].port}')" = "9443 8081 8082" ] || fail "NetworkPolicy"
have -n $NS resourcequota sluice-critical-pods
[ "$(jp mutatingwebhookconfiguration $MWC -o jsonpath='{.webhooks[?(@.name=="mjob.sluice.dev")].objectSelector.matchExpressions[0].key}')" = kueue.x-k8s.io/queue-name ] ||
    fail "mjob.sluice.dev has no queue-name objectSelector"
[ "$(jp validatingwebhookconfiguration $VWC -o jsonpath='{.webhooks[?(@.failurePolicy=="Ignore")].name}')" = \
    "vclusterqueue-delete.sluice.dev vcohort-delete.sluice.dev vlocalqueue-delete.sluice.dev vworkloadpriorityclass-delete.sluice.dev vjob-delete.sluice.dev vjobset-delete.sluice.dev vpytorchjob-delete.sluice.dev vtfjob-delete.sluice.dev vxgboostjob-delete.sluice.dev vpaddlejob-delete.sluice.dev vjaxjob-delete.sluice.dev vmpijob-delete.sluice.dev vtrainjob-delete.sluice.dev vrayjob-delete.sluice.dev vraycluster-delete.sluice.dev" ] ||
    fail "the DELETE webhooks are not the failurePolicy Ignore ones"
say "namespace, ServiceAccount, RBAC, ConfigMap $cm, Service, Deployment, PDB, NetworkPolicy, ResourceQuota, webhook configurations ($hooks webhooks) present"
# The Deployment's pods: created by the ReplicaSet controller, admitted with the critical class
# and counted by the quota; Pending forever here (no scheduler or kubelet).
# Pods in the quota's scope are refused until the quota controller has computed its status
# ("status unknown for quota"), and the ReplicaSet controller retries refused creates with an
# exponential backoff (past a minute on a loaded machine: 1 run in 13 here). Once the status is
# there, an update of the ReplicaSet (an annotation) makes its controller try again at once.
until_ 60 "the quota controller to compute the status of sluice-critical-pods" \
    '[ -n "$(jp -n $NS resourcequota sluice-critical-pods -o jsonpath="{.status.hard.pods}")" ]'
n=0
until [ "$(jp -n $NS resourcequota sluice-critical-pods -o jsonpath='{.status.used.pods}')" = 2 ]; do
    n=$((n + 1))
    [ $n -le 60 ] || fail "timed out after 60s waiting for the Deployment's two pods, counted by the priority-class quota"
    [ $((n % 10)) != 3 ] || k annotate rs -n $NS -l control-plane=controller-manager --overwrite \
        "sluice.dev/test-retry=$n" >/dev/null 2>&1 || true
    sleep 1
done
[ "$(jp -n $NS pods -l control-plane=controller-manager -o jsonpath='{.items[0].spec.priority}')" = 2000000000 ] ||
    fail "the pods do not run at system-cluster-critical priority"
say "the Deployment's 2 pods exist at priority 2000000000 (system-cluster-critical), counted by the quota (Pending: no kubelet here)"

# ---- the operator, as the shipped ServiceAccount with the shipped configuration --------------
until_ 30 "the ServiceAccount token" '[ -n "$(jp sa -n $NS sluice-controller-manager -o jsonpath="{.secrets[0].name}")" ]'
sec=$(jp sa -n $NS sluice-controller-manager -o jsonpath='{.secrets[0].name}')
token=$(jp secret -n $NS "$sec" -o jsonpath='{.data.token}' | base64 -d)
cat >"$tmp/sa.kubeconfig" <<EOT
apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "$SLUICE_KUBE_SERVER", certificate-authority: "$SLUICE_KUBE_CA"}}]
users: [{name: sa, user: {token: "$token"}}]
contexts: [{name: c, context: {cluster: c, user: sa, namespace: $NS}}]
current-context: c
EOT
jp -n $NS configmap "$cm" -o jsonpath='{.data.config\.yaml}' >"$tmp/config.yaml"
grep -q "^namespace: $NS$" "$tmp/config.yaml" || fail "the shipped configuration: $(cat "$tmp/config.yaml")"
op_flags="--kubeconfig $tmp/sa.kubeconfig --config $tmp/config.yaml --namespace $NS --webhook-port $port
    --webhook-cert-ip 127.0.0.1 --health-probe-bind-address 127.0.0.1:$hport"
# shellcheck disable=SC2086 # flags are words
ctrl_start op $op_flags --identity install-op
until_ 20 "leadership" 'grep -q "install-op acquired the lease" "$tmp/op.log"'
until_ 30 "the certificate Secret" '[ -n "$(jp secret -n $NS sluice-webhook-server-cert -o jsonpath="{.data.tls\.crt}")" ]'
for c in "validatingwebhookconfiguration $VWC" "mutatingwebhookconfiguration $MWC"; do
    # shellcheck disable=SC2086
    until_ 30 "caBundle in every webhook of $c" \
        '! jp $c -o jsonpath="{range .webhooks[*]}{.name}#{.clientConfig.caBundle}#{end}" | grep -q "##"'
done
until_ 20 "/readyz" '[ "$(curl -s -o /dev/null -w "%{http_code}" "http://127.0.0.1:$hport/readyz")" = 200 ]'
say "operator: Lease $NS/sluice.dev, Secret $NS/sluice-webhook-server-cert, caBundle in every webhook, ready"

# Queues through the webhooks (retried while the API server picks up the new caBundle).
cq=it-install-$sfx
ctrl_delete_at_exit clusterqueue "$cq"
ctrl_delete_at_exit resourceflavor "flv-$sfx"
{
    ctrl__flavor_yaml "flv-$sfx"
    echo ---
    ctrl__cq_yaml "$cq" "flv-$sfx cpu=4 nvidia.com/gpu=2"
    echo ---
    ctrl__lq_yaml lq "$cq"
} >"$tmp/queues.yaml"
n=0
until k apply -f "$tmp/queues.yaml" >"$tmp/queues.log" 2>&1; do
    n=$((n + 1))
    [ $n -lt 30 ] || fail "queues through the webhooks: $(cat "$tmp/queues.log")"
    sleep 1
done
[ "$(jp clusterqueue "$cq" -o jsonpath='{.metadata.finalizers[0]}')" = kueue.x-k8s.io/resource-in-use ] ||
    fail "the mutating webhook did not add the finalizer"
runner_start
tjob job1 1 3600
until_ 30 "job1 admitted and started" '[ "$(jget job1 "{.status.active}")" = 1 ]'
w=$(wl_await job1)
[ "$(wcond "$w" Admitted)" = True ] || fail "Workload $w not Admitted"
say "ClusterQueue (finalizer from the mutating webhook), Job admitted into $cq and started"

# Job webhooks on batch/v1 Jobs (the built-in kind; 1.20 drops spec.suspend, which is harmless
# here: the controller manages the test kind).
bjob() { # name [labels flow-map entries]
    cat <<EOT
apiVersion: batch/v1
kind: Job
metadata: {name: $1, namespace: $ns, labels: {${2:-}}}
spec:
  parallelism: 1
  template:
    spec:
      restartPolicy: Never
      containers: [{name: main, image: busybox}]
EOT
}
bjob queued "kueue.x-k8s.io/queue-name: lq" | k apply -f - >/dev/null || fail "a queued batch/v1 Job through the webhooks"
until_ 20 "the audit Event of the queued Job (the webhook saw it)" \
    'k get events -n $ns --field-selector "involvedObject.name=queued,reason=AuditedChange" -o name | grep -q .'
ctrl_stop op
say "operator stopped (SIGTERM): now the webhooks have nobody to call"

# ---- sluice down ----------------------------------------------------------------------------
bjob free | k apply -f - >/dev/null || fail "an unqueued Job was blocked while sluice is down"
say "an unqueued Job is created while sluice is down (objectSelector: never sent)"
apply_job() { bjob "$@" | kubectl --warnings-as-errors=false apply -f -; }
expect_fail 'failed calling webhook "mjob.sluice.dev"' apply_job queued2 "kueue.x-k8s.io/queue-name: lq"
say "a queued Job waits for sluice (failurePolicy Fail): it is never created unsuspended behind its back"
expect_fail 'failed calling webhook "vjob.sluice.dev"' k label job -n "$ns" queued kueue.x-k8s.io/queue-name-
say "UPDATE removing the queue-name label is still sent to the webhook (old object matches)"
k delete job -n "$ns" queued --wait=false >/dev/null || fail "deleting a queued Job while sluice is down"
until_ 10 "the queued Job to be gone" '! k get job -n "$ns" queued'
k delete clusterqueue "$cq" --wait=false >/dev/null || fail "deleting a ClusterQueue while sluice is down"
[ -n "$(jp clusterqueue "$cq" -o jsonpath='{.metadata.deletionTimestamp}')" ] || fail "the ClusterQueue is not being deleted"
apply_cq() { printf 'apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: %s}\nspec: {}\n' "$1" | kubectl --warnings-as-errors=false apply -f -; }
expect_fail 'failed calling webhook "mclusterqueue.sluice.dev"' apply_cq "other-$sfx"
ctrl_delete_at_exit clusterqueue "other-$sfx"
say "deletes go through while sluice is down (failurePolicy Ignore); quota objects wait for it"

# ---- back up: the deletion completes ----------------------------------------------------------
# shellcheck disable=SC2086
ctrl_start op2 $op_flags --identity install-op2
until_ 30 "op2 leadership" 'grep -q "install-op2 acquired the lease" "$tmp/op2.log"'
# Deleting job1 releases its quota (its Workload goes with it), the last thing the ClusterQueue's
# finalizer waits for. (Not jcomplete: kubectl 1.20 has no patch --subresource.)
k delete $TJ -n "$ns" job1 --wait=false >/dev/null || fail "delete job1"
until_ 30 "job1's Workload to go" '[ -z "$(wl_of job1)" ]'
until_ 30 "the deleted ClusterQueue to go once job1's quota is released" '! k get clusterqueue "$cq"'
k delete resourceflavor "flv-$sfx" --wait=false >/dev/null
until_ 30 "the ResourceFlavor to go" '! k get resourceflavor "flv-$sfx"'
ctrl_stop op2
for log in op op2; do
    if grep -qi "forbidden\|HTTP 403" "$tmp/$log.log"; then
        fail "$log needed a permission the shipped RBAC lacks: $(grep -i "forbidden\|HTTP 403" "$tmp/$log.log" | head -n 3)"
    fi
done
say "restarted: finalizers removed, ClusterQueue and ResourceFlavor deleted; no 403 in either log"
say "PASS"
