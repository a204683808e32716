#!/bin/sh
# ctrl_kubeflow -- a Kubeflow training job through the same reconciler as Jobs and JobSets, with
# the PyTorchJob integration enabled and the test CRD of test/data/crds-integrations installed:
# a PyTorchJob of 1 Master + 3 Workers x 1 GPU in a ClusterQueue of 4 GPUs gets one Workload
# (pytorchjob-<name>-<hash>, pod sets master 1 and worker 3), is admitted and released
# (spec.runPolicy.suspend false) with the flavor's node selector in both replica templates; a
# second one waits held with QuotaReserved=False; the first one's Succeeded condition (the
# training operator's part, played by the test) finishes it and the second is admitted. An
# enabled kind whose CRD is absent (TFJob, with the tfjobs CRD deleted first if a test left it)
# is skipped and said once, and /readyz is 200 with the problem. SIGTERM -> 0.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/ctrl_lib.sh"

PT=pytorchjobs.kubeflow.org
ctrl_install_crds
k apply -f "$src/test/data/crds-integrations/kubeflow.org_pytorchjobs.yaml" >/dev/null ||
    fail "apply the test PyTorchJob CRD"
k wait --for condition=Established --timeout=60s "crd/$PT" >/dev/null || fail "PyTorchJob CRD not Established"
wait_for 30 "discovery of the PyTorchJob CRD" sh -c "kubectl get $PT -A >/dev/null"
# TFJob's CRD must be absent for the skip case: another test may have installed it.
k delete crd tfjobs.kubeflow.org --ignore-not-found >/dev/null 2>&1 || true
wait_for 30 "tfjobs no longer served" sh -c "! kubectl get tfjobs.kubeflow.org -A >/dev/null 2>&1"
it_namespace
cq=it-kubeflow-$sfx
fl=gpu-$sfx
ctrl_queues "$cq" "$fl cpu=64 nvidia.com/gpu=4"
ctrl_trace
ctrl_config cfg <<EOT
integrations: {frameworks: [batch/job, kubeflow.org/pytorchjob, kubeflow.org/tfjob]}
EOT
hp=$(ctrl_free_port)
ctrl_start op --config "$tmp/cfg.yaml" --health-probe-bind-address "127.0.0.1:$hp"

# A PyTorchJob in LocalQueue lq: 1 Master + 3 Workers, 1 GPU each. pytorchjob NAME
pytorchjob() {
    {
        cat <<EOT
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata:
  name: $1
  namespace: $ns
  labels: {kueue.x-k8s.io/queue-name: lq}
spec:
  runPolicy: {suspend: true}
  pytorchReplicaSpecs:
EOT
        for rt in Master:1 Worker:3; do
            cat <<EOT
    ${rt%%:*}:
      replicas: ${rt#*:}
      restartPolicy: OnFailure
      template:
        spec:
          containers:
          - name: pytorch
            image: busybox
            resources: {requests: {cpu: 100m, nvidia.com/gpu: 1}}
EOT
        done
    } | k apply -f - >/dev/null || fail "create PyTorchJob $1"
}
ptget() { k get $PT -n "$ns" "$1" -o jsonpath="$2"; }

# ---- the skipped kind: said once, not waited for, shown by /readyz ----------------------------
grep -q "integration kubeflow.org/tfjob skipped: the API server does not serve kubeflow.org/v1 tfjobs" "$tmp/op.log" ||
    fail "the absent TFJob CRD was not said: $(ctrl_log op)"
body=$(curl -s -w '\n%{http_code}' "http://127.0.0.1:$hp/readyz")
case "$body" in
*"integration kubeflow.org/tfjob skipped"*200) ;;
*) fail "/readyz: $body" ;;
esac
say "TFJob enabled without its CRD: skipped, said once, /readyz 200 with the problem"

# ---- the first PyTorchJob: admitted, released, node selectors in both replica types ----------
pytorchjob first
w1=$(wl_await first)
case "$w1" in pytorchjob-first-?????) ;; *) fail "Workload name $w1 is not Kueue's pytorchjob-first-<hash>" ;; esac
[ "$(wget_ "$w1" '{.spec.podSets[*].name}/{.spec.podSets[*].count}')" = "master worker/1 3" ] ||
    fail "pod sets $(wget_ "$w1" '{.spec.podSets[*].name}/{.spec.podSets[*].count}')"
until_ 20 "Workload $w1 admitted" '[ "$(wcond "$w1" Admitted)" = True ]'
until_ 20 "PyTorchJob first released" '[ "$(ptget first "{.spec.runPolicy.suspend}")" = false ]'
for rt in Master Worker; do
    [ "$(ptget first "{.spec.pytorchReplicaSpecs.$rt.template.spec.nodeSelector.pool}")" = "$fl" ] ||
        fail "$rt: nodeSelector $(ptget first "{.spec.pytorchReplicaSpecs.$rt.template.spec.nodeSelector}")"
done
say "PyTorchJob first: Workload $w1 (master 1, worker 3) admitted, released with pool=$fl in both templates"

# ---- the second waits; the first's Succeeded releases the quota -------------------------------
pytorchjob second
w2=$(wl_await second)
until_ 20 "second's QuotaReserved=False" '[ "$(wcond "$w2" QuotaReserved)" = False ] && [ -n "$(wmsg "$w2" QuotaReserved)" ]'
[ "$(ptget second '{.spec.runPolicy.suspend}')" = true ] || fail "second released without quota"
now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
k patch $PT -n "$ns" first --subresource=status --type merge -p \
    "{\"status\":{\"conditions\":[{\"type\":\"Succeeded\",\"status\":\"True\",\"reason\":\"PyTorchJobSucceeded\",\"message\":\"PyTorchJob first is successfully completed.\",\"lastTransitionTime\":\"$now\"}]}}" >/dev/null ||
    fail "mark PyTorchJob first Succeeded"
until_ 30 "Workload $w1 Finished" '[ "$(wcond "$w1" Finished)" = True ]'
[ "$(wmsg "$w1" Finished)" = "PyTorchJob first is successfully completed." ] || fail "Finished message $(wmsg "$w1" Finished)"
until_ 30 "second admitted" '[ "$(wcond "$w2" Admitted)" = True ]'
until_ 20 "PyTorchJob second released" '[ "$(ptget second "{.spec.runPolicy.suspend}")" = false ]'
say "first Finished with the training operator's message; second admitted and released"

# The TFJob informer kept retrying its LIST with backoff all along: still said only once.
n=$(grep -c "integration kubeflow.org/tfjob skipped" "$tmp/op.log" || true)
[ "$n" = 1 ] || fail "the skipped TFJob integration was said $n times"
ctrl_stop op
ctrl_verify "$cq"
say "ok"
