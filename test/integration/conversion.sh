#!/bin/sh
# conversion -- the API server converts ClusterQueue, LocalQueue and Workload between v1beta1 and
# v1beta2 through sluice's conversion webhook (/convert on the webhook server of `sluice run`):
# sluice injects its self-managed CA into the three CRDs' conversion clientConfig, then objects
# created as v1beta1 (Kueue's field names, status through the status subresource) read back as
# v1beta2 field by field and as v1beta1 again, objects created as v1beta2 read as v1beta1, a
# write through v1beta1 drops what v1beta1 cannot hold (as with Kueue), and an object the webhook
# cannot convert is refused with its message instead of being guessed. First, an object stored in
# etcd as v1beta1 (as after an older Kueue) reads as v1beta2 through the webhook -- sluice's own
# informers included -- and a storage migration rewrites it as v1beta2.
# The test API server cannot route to a Service, so the CRDs' clientConfig is switched to
# url: https://127.0.0.1:PORT/convert for the test (and put back at exit); the certificate
# carries 127.0.0.1 (--webhook-cert-ip), which is also what lets sluice recognise that url as
# its own and inject the caBundle. sluice runs as a standby (another holder owns its Lease), so
# it serves webhooks and manages certificates but never writes the test objects' status.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/ctrl_lib.sh"

ctrl_install_crds
it_namespace
ctrl_sys_namespace
base=it-$sfx
port=$(ctrl_free_port)
crds="clusterqueues localqueues workloads"
cq1=conv1-$sfx cq2=conv2-$sfx cq3=conv3-$sfx
ctrl_delete_at_exit clusterqueue "$cq1" "$cq2" "$cq3"

g() { # KIND VERSION NAME JSONPATH [namespace]
    k get "$1.$2.kueue.x-k8s.io" ${5:+-n "$5"} "$3" -o jsonpath="$4"
}
eq() { # WHAT GOT WANT
    [ "$2" = "$3" ] || fail "$1: got '$2', want '$3'"
}

# ---- the CRDs call 127.0.0.1:PORT; restored to the shipped Service at exit -----------------
svc='{"service":{"name":"sluice-webhook-service","namespace":"sluice-system","path":"/convert","port":443}}'
for c in $crds; do
    [ "$(k get crd "$c.kueue.x-k8s.io" -o jsonpath='{.spec.conversion.strategy}')" = Webhook ] ||
        fail "CRD $c has no Webhook conversion"
    it_on_exit "k patch crd $c.kueue.x-k8s.io --type json -p '[{\"op\":\"replace\",\"path\":\"/spec/conversion/webhook/clientConfig\",\"value\":$svc}]' >/dev/null 2>&1"
    k patch crd "$c.kueue.x-k8s.io" --type json -p \
        "[{\"op\":\"replace\",\"path\":\"/spec/conversion/webhook/clientConfig\",\"value\":{\"url\":\"https://127.0.0.1:$port/convert\"}}]" \
        >/dev/null || fail "point CRD $c at 127.0.0.1:$port"
done

# ---- an object stored as v1beta1, as a cluster that ran an older Kueue has them ---------------
# For a moment v1beta1 is the storage version: cq0 is written to etcd as v1beta1. From then on
# every read of it -- v1beta2 included, sluice's own informers included -- needs the webhook.
cq0=conv0-$sfx
# Deleted at exit while sluice still runs; through v1beta1 (no conversion while it is stored as
# v1beta1) if the test stops before it is rewritten -- a leftover object nobody can convert would
# break every later list of ClusterQueues on the shared server.
ctrl_delete_at_exit clusterqueue "$cq0"
it_on_exit "k delete clusterqueues.v1beta1.kueue.x-k8s.io $cq0 --ignore-not-found >/dev/null 2>&1"
storage() { # v1beta1's storage flag (true/false); v1beta2 gets the other one
    other=true
    [ "$1" = false ] || other=false
    i1=$(k get crd clusterqueues.kueue.x-k8s.io -o jsonpath='{range .spec.versions[*]}{.name} {end}' |
        tr ' ' '\n' | grep -n '^v1beta1$' | cut -d: -f1)
    i1=$((i1 - 1))
    i2=$((1 - i1))
    k patch crd clusterqueues.kueue.x-k8s.io --type json -p \
        "[{\"op\":\"replace\",\"path\":\"/spec/versions/$i1/storage\",\"value\":$1},{\"op\":\"replace\",\"path\":\"/spec/versions/$i2/storage\",\"value\":$other}]" \
        >/dev/null || fail "set the storage version"
}
it_on_exit "k patch crd clusterqueues.kueue.x-k8s.io --subresource=status --type merge -p '{\"status\":{\"storedVersions\":[\"v1beta2\"]}}' >/dev/null 2>&1"
storage true
# The API server switches storage a moment after the CRD update.
# Until it has, a v1beta1 create needs the (not yet running) webhook and fails; once it succeeds,
# the object went to etcd as v1beta1 -- and a v1beta2 read of it fails for want of the webhook.
n=0
until k create -f - >/dev/null 2>&1 <<EOT; do
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: $cq0}
spec: {cohort: co0-$sfx, admissionChecks: [old-$sfx], namespaceSelector: {}}
EOT
    n=$((n + 1))
    [ $n -lt 20 ] || fail "v1beta1 never became the storage version"
    sleep 1
done
! k get clusterqueues.v1beta2.kueue.x-k8s.io "$cq0" >/dev/null 2>&1 || fail "cq0 was stored as v1beta2"
storage false
sv=$(k get crd clusterqueues.kueue.x-k8s.io -o jsonpath='{.status.storedVersions[*]}')
case " $sv " in *" v1beta1 "*) ;; *) fail "storedVersions without v1beta1: $sv" ;; esac
say "cq0 is stored as v1beta1 (storedVersions: $sv)"

# ---- sluice run: a standby serving webhooks -------------------------------------------------
now=$(date -u +%Y-%m-%dT%H:%M:%S.000000Z)
k apply -f - >/dev/null <<EOT || fail "create the Lease held by someone else"
apiVersion: coordination.k8s.io/v1
kind: Lease
metadata: {name: sluice-it-$sfx, namespace: $sys}
spec: {holderIdentity: another-replica, leaseDurationSeconds: 3600, acquireTime: "$now", renewTime: "$now"}
EOT
ctrl_config config <<EOT
internalCertManagement: {enable: true, webhookServiceName: $base-webhook-service,
                         webhookSecretName: $base-webhook-server-cert}
leaderElection: {leaderElect: true, resourceName: sluice-it-$sfx}
EOT
ctrl_start op --config "$tmp/config.yaml" --namespace "$sys" --identity conv-op \
    --webhook-port "$port" --webhook-cert-ip 127.0.0.1
until_ 30 "the Secret with the certificates" 'k get secret -n "$sys" "$base-webhook-server-cert" -o jsonpath="{.data.ca\.crt}" | grep -q .'
ca=$(k get secret -n "$sys" "$base-webhook-server-cert" -o jsonpath='{.data.ca\.crt}')
for c in $crds; do
    until_ 30 "the caBundle in CRD $c" '[ "$(k get crd "$c.kueue.x-k8s.io" -o jsonpath="{.spec.conversion.webhook.clientConfig.caBundle}")" = "$ca" ]'
done
! grep -q "acquired the lease" "$tmp/op.log" || fail "sluice became leader: $(ctrl_log op)"
say "sluice (standby) injected its CA into the conversion webhook of: $crds"

# The object stored as v1beta1 reads as v1beta2 through sluice, and a storage migration (rewrite
# every object, then drop v1beta1 from storedVersions) needs no further conversion afterwards.
until_ 30 "cq0 to read as v1beta2" '[ "$(k get clusterqueues.v1beta2.kueue.x-k8s.io "$cq0" -o jsonpath="{.spec.cohortName}")" = "co0-$sfx" ]'
[ "$(k get clusterqueues.v1beta2.kueue.x-k8s.io "$cq0" -o jsonpath='{.spec.admissionChecksStrategy.admissionChecks[0].name}')" = "old-$sfx" ] ||
    fail "cq0's admissionChecks as v1beta2"
k get clusterqueues.v1beta2.kueue.x-k8s.io "$cq0" -o json | k replace -f - >/dev/null || fail "rewrite cq0"
k patch crd clusterqueues.kueue.x-k8s.io --subresource=status --type merge \
    -p '{"status":{"storedVersions":["v1beta2"]}}' >/dev/null || fail "storedVersions"
eq "storedVersions" "$(k get crd clusterqueues.kueue.x-k8s.io -o jsonpath='{.status.storedVersions[*]}')" v1beta2
say "an object stored as v1beta1 reads as v1beta2 through the webhook, and is rewritten as v1beta2"


# ---- created as v1beta1 --------------------------------------------------------------------
# The API server may take a moment to trust the new caBundle: retry while the failure is TLS.
cq1_yaml() {
    cat <<EOT
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: $cq1}
spec:
  cohort: co-$sfx
  admissionChecks: [check-$sfx]
  flavorFungibility: {whenCanBorrow: Borrow, whenCanPreempt: Preempt}
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu]
    flavors: [{name: f-$sfx, resources: [{name: cpu, nominalQuota: 2}]}]
EOT
}
n=0
while :; do
    out=$(cq1_yaml | k create -f - 2>&1) && break
    case "$out" in
    *x509* | *certificate* | *"connection refused"*) n=$((n + 1)) ;;
    *) fail "create the v1beta1 ClusterQueue: $out" ;;
    esac
    [ $n -lt 30 ] || fail "the API server cannot call the conversion webhook: $out"
    sleep 1
done
k patch clusterqueues.v1beta1.kueue.x-k8s.io "$cq1" --subresource=status --type merge -p \
    '{"status":{"pendingWorkloads":3,"reservingWorkloads":1,"admittedWorkloads":1,"fairSharing":{"weightedShare":5,"admissionFairSharingStatus":{"consumedResources":{"cpu":"1"},"lastUpdate":"2025-01-01T00:00:00Z"}}}}' \
    >/dev/null || fail "status of the v1beta1 ClusterQueue"
k create -n "$ns" -f - >/dev/null <<EOT || fail "create the v1beta1 LocalQueue and Workload"
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {name: lq}
spec: {clusterQueue: $cq1}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: Workload
metadata: {name: wl1}
spec:
  queueName: lq
  priorityClassName: wpc-$sfx
  priorityClassSource: kueue.x-k8s.io/workloadpriorityclass
  priority: 100
  podSets:
  - name: main
    count: 2
    template: {spec: {restartPolicy: Never, containers: [{name: c, image: busybox, resources: {requests: {cpu: 100m}}}]}}
EOT
k patch localqueues.v1beta1.kueue.x-k8s.io -n "$ns" lq --subresource=status --type merge -p \
    "{\"status\":{\"pendingWorkloads\":2,\"reservingWorkloads\":0,\"admittedWorkloads\":0,\"flavorsReservation\":[],\"flavorUsage\":[{\"name\":\"f-$sfx\",\"resources\":[{\"name\":\"cpu\",\"total\":\"1500m\"}]}],\"flavors\":[{\"name\":\"f-$sfx\",\"resources\":[\"cpu\"]}]}}" \
    >/dev/null || fail "status of the v1beta1 LocalQueue"
k patch workloads.v1beta1.kueue.x-k8s.io -n "$ns" wl1 --subresource=status --type merge -p \
    "{\"status\":{\"accumulatedPastExexcutionTimeSeconds\":42,\"admission\":{\"clusterQueue\":\"$cq1\",\"podSetAssignments\":[{\"name\":\"main\",\"count\":2,\"flavors\":{\"cpu\":\"f-$sfx\"},\"resourceUsage\":{\"cpu\":\"200m\"},\"topologyAssignment\":{\"levels\":[\"rack\",\"kubernetes.io/hostname\"],\"domains\":[{\"values\":[\"r1\",\"pool-a-node-1\"],\"count\":1},{\"values\":[\"r1\",\"pool-a-node-2\"],\"count\":1}]}}]}}}" \
    >/dev/null || fail "status of the v1beta1 Workload"
say "created a ClusterQueue, LocalQueue and Workload as v1beta1 (status through /status)"

# Read as v1beta2 (the stored version): Kueue's renames, field by field.
eq "v1beta2 apiVersion" "$(g clusterqueues v1beta2 "$cq1" '{.apiVersion}')" kueue.x-k8s.io/v1beta2
eq "v1beta2 cohortName" "$(g clusterqueues v1beta2 "$cq1" '{.spec.cohortName}')" "co-$sfx"
eq "v1beta2 has no cohort" "$(g clusterqueues v1beta2 "$cq1" '{.spec.cohort}')" ""
eq "v1beta2 admissionChecksStrategy" \
    "$(g clusterqueues v1beta2 "$cq1" '{.spec.admissionChecksStrategy.admissionChecks[*].name}')" "check-$sfx"
eq "v1beta2 has no admissionChecks" "$(g clusterqueues v1beta2 "$cq1" '{.spec.admissionChecks}')" ""
eq "v1beta2 whenCanBorrow" "$(g clusterqueues v1beta2 "$cq1" '{.spec.flavorFungibility.whenCanBorrow}')" MayStopSearch
eq "v1beta2 whenCanPreempt" "$(g clusterqueues v1beta2 "$cq1" '{.spec.flavorFungibility.whenCanPreempt}')" MayStopSearch
eq "v1beta2 nominalQuota" "$(g clusterqueues v1beta2 "$cq1" '{.spec.resourceGroups[0].flavors[0].resources[0].nominalQuota}')" 2
eq "v1beta2 pendingWorkloads" "$(g clusterqueues v1beta2 "$cq1" '{.status.pendingWorkloads}')" 3
eq "v1beta2 weightedShare" "$(g clusterqueues v1beta2 "$cq1" '{.status.fairSharing.weightedShare}')" 5
eq "v1beta2 drops admissionFairSharingStatus" \
    "$(g clusterqueues v1beta2 "$cq1" '{.status.fairSharing.admissionFairSharingStatus}')" ""
eq "v1beta2 LocalQueue flavorsUsage" \
    "$(g localqueues v1beta2 lq '{.status.flavorsUsage[0].name}/{.status.flavorsUsage[0].resources[0].total}' "$ns")" "f-$sfx/1500m"
eq "v1beta2 LocalQueue has no flavorUsage" "$(g localqueues v1beta2 lq '{.status.flavorUsage}' "$ns")" ""
eq "v1beta2 LocalQueue drops flavors" "$(g localqueues v1beta2 lq '{.status.flavors}' "$ns")" ""
eq "v1beta2 LocalQueue pendingWorkloads" "$(g localqueues v1beta2 lq '{.status.pendingWorkloads}' "$ns")" 2
eq "v1beta2 priorityClassRef" \
    "$(g workloads v1beta2 wl1 '{.spec.priorityClassRef.group}/{.spec.priorityClassRef.kind}/{.spec.priorityClassRef.name}' "$ns")" \
    "kueue.x-k8s.io/WorkloadPriorityClass/wpc-$sfx"
eq "v1beta2 has no priorityClassName" "$(g workloads v1beta2 wl1 '{.spec.priorityClassName}{.spec.priorityClassSource}' "$ns")" ""
eq "v1beta2 priority" "$(g workloads v1beta2 wl1 '{.spec.priority}' "$ns")" 100
eq "v1beta2 accumulatedPastExecutionTimeSeconds" \
    "$(g workloads v1beta2 wl1 '{.status.accumulatedPastExecutionTimeSeconds}' "$ns")" 42
eq "v1beta2 has no Exexcution" "$(g workloads v1beta2 wl1 '{.status.accumulatedPastExexcutionTimeSeconds}' "$ns")" ""
ta='{.status.admission.podSetAssignments[0].topologyAssignment'
eq "v1beta2 topology slices" \
    "$(g workloads v1beta2 wl1 "$ta.slices[0].domainCount}|$ta.slices[0].valuesPerLevel[0].universal}|$ta.slices[0].valuesPerLevel[1].individual.prefix}|$ta.slices[0].valuesPerLevel[1].individual.roots[*]}|$ta.slices[0].podCounts.universal}" "$ns")" \
    "2|r1|pool-a-node-|1 2|1"
eq "v1beta2 has no domains" "$(g workloads v1beta2 wl1 "$ta.domains}" "$ns")" ""
say "read as v1beta2: cohortName, admissionChecksStrategy, MayStopSearch, flavorsUsage, priorityClassRef, accumulatedPastExecutionTimeSeconds, topology slices"

# And back as v1beta1: Kueue's names again (admissionChecks stay a strategy, as in Kueue).
eq "v1beta1 apiVersion" "$(g clusterqueues v1beta1 "$cq1" '{.apiVersion}')" kueue.x-k8s.io/v1beta1
eq "v1beta1 cohort" "$(g clusterqueues v1beta1 "$cq1" '{.spec.cohort}')" "co-$sfx"
eq "v1beta1 has no cohortName" "$(g clusterqueues v1beta1 "$cq1" '{.spec.cohortName}')" ""
eq "v1beta1 admissionChecksStrategy" \
    "$(g clusterqueues v1beta1 "$cq1" '{.spec.admissionChecksStrategy.admissionChecks[*].name}')" "check-$sfx"
eq "v1beta1 whenCanBorrow" "$(g clusterqueues v1beta1 "$cq1" '{.spec.flavorFungibility.whenCanBorrow}')" MayStopSearch
eq "v1beta1 pendingWorkloads" "$(g clusterqueues v1beta1 "$cq1" '{.status.pendingWorkloads}')" 3
eq "v1beta1 LocalQueue flavorUsage" \
    "$(g localqueues v1beta1 lq '{.status.flavorUsage[0].name}/{.status.flavorUsage[0].resources[0].total}' "$ns")" "f-$sfx/1500m"
eq "v1beta1 LocalQueue has no flavorsUsage" "$(g localqueues v1beta1 lq '{.status.flavorsUsage}' "$ns")" ""
eq "v1beta1 priorityClassName/Source" \
    "$(g workloads v1beta1 wl1 '{.spec.priorityClassName}|{.spec.priorityClassSource}' "$ns")" \
    "wpc-$sfx|kueue.x-k8s.io/workloadpriorityclass"
eq "v1beta1 has no priorityClassRef" "$(g workloads v1beta1 wl1 '{.spec.priorityClassRef}' "$ns")" ""
eq "v1beta1 accumulatedPastExexcutionTimeSeconds" \
    "$(g workloads v1beta1 wl1 '{.status.accumulatedPastExexcutionTimeSeconds}' "$ns")" 42
eq "v1beta1 topology domains" \
    "$(g workloads v1beta1 wl1 "$ta.levels[*]}|$ta.domains[0].values[*]}|$ta.domains[0].count}|$ta.domains[1].values[*]}|$ta.domains[1].count}" "$ns")" \
    "rack kubernetes.io/hostname|r1 pool-a-node-1|1|r1 pool-a-node-2|1"
# Lists and printer columns go through the webhook too.
row=$(k get clusterqueues.v1beta1.kueue.x-k8s.io "$cq1" --no-headers | tr -s ' ')
case "$row" in "$cq1 co-$sfx 3"*) ;; *) fail "kubectl get cq (v1beta1) row: '$row'" ;; esac
eq "v1beta1 list" "$(k get workloads.v1beta1.kueue.x-k8s.io -n "$ns" -o jsonpath='{.items[*].spec.priorityClassName}')" "wpc-$sfx"
say "read back as v1beta1: cohort, flavorUsage, priorityClassName/Source, accumulatedPastExexcutionTimeSeconds, topology domains; lists and columns too"

# ---- created as v1beta2, read as v1beta1 -----------------------------------------------------
k create -f - >/dev/null <<EOT || fail "create the v1beta2 ClusterQueue"
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: $cq2}
spec:
  cohortName: co2-$sfx
  admissionChecksStrategy: {admissionChecks: [{name: a-$sfx, onFlavors: [f-$sfx]}]}
  flavorFungibility: {whenCanBorrow: TryNextFlavor, whenCanPreempt: MayStopSearch}
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu]
    flavors: [{name: f-$sfx, resources: [{name: cpu, nominalQuota: 4}]}]
EOT
k create -n "$ns" -f - >/dev/null <<EOT || fail "create the v1beta2 LocalQueue and Workload"
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: lq2}
spec: {clusterQueue: $cq2}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata: {name: wl2}
spec:
  queueName: lq2
  priorityClassRef: {group: scheduling.k8s.io, kind: PriorityClass, name: pc-$sfx}
  priority: 7
  preemptionGates: [{name: gate-$sfx}]
  podSets:
  - name: main
    count: 3
    template: {spec: {restartPolicy: Never, containers: [{name: c, image: busybox}]}}
EOT
k patch localqueues.v1beta2.kueue.x-k8s.io -n "$ns" lq2 --subresource=status --type merge -p \
    "{\"status\":{\"pendingWorkloads\":1,\"reservingWorkloads\":0,\"admittedWorkloads\":0,\"flavorsUsage\":[{\"name\":\"f-$sfx\",\"resources\":[{\"name\":\"cpu\",\"total\":\"2\"}]}]}}" \
    >/dev/null || fail "status of the v1beta2 LocalQueue"
k patch workloads.v1beta2.kueue.x-k8s.io -n "$ns" wl2 --subresource=status --type merge -p \
    "{\"status\":{\"accumulatedPastExecutionTimeSeconds\":9,\"admission\":{\"clusterQueue\":\"$cq2\",\"podSetAssignments\":[{\"name\":\"main\",\"count\":3,\"topologyAssignment\":{\"levels\":[\"kubernetes.io/hostname\"],\"slices\":[{\"domainCount\":2,\"valuesPerLevel\":[{\"individual\":{\"prefix\":\"n-\",\"suffix\":\".example\",\"roots\":[\"1\",\"2\"]}}],\"podCounts\":{\"individual\":[2,1]}}]}}]}}}" \
    >/dev/null || fail "status of the v1beta2 Workload"
eq "v2->v1 cohort" "$(g clusterqueues v1beta1 "$cq2" '{.spec.cohort}')" "co2-$sfx"
eq "v2->v1 strategy kept" \
    "$(g clusterqueues v1beta1 "$cq2" '{.spec.admissionChecksStrategy.admissionChecks[0].name}/{.spec.admissionChecksStrategy.admissionChecks[0].onFlavors[0]}')" \
    "a-$sfx/f-$sfx"
eq "v2->v1 whenCanBorrow" "$(g clusterqueues v1beta1 "$cq2" '{.spec.flavorFungibility.whenCanBorrow}')" TryNextFlavor
eq "v2->v1 flavorUsage" "$(g localqueues v1beta1 lq2 '{.status.flavorUsage[0].resources[0].total}' "$ns")" 2
eq "v2->v1 priority class" \
    "$(g workloads v1beta1 wl2 '{.spec.priorityClassName}|{.spec.priorityClassSource}|{.spec.priority}' "$ns")" \
    "pc-$sfx|scheduling.k8s.io/priorityclass|7"
eq "v2->v1 no preemptionGates" "$(g workloads v1beta1 wl2 '{.spec.preemptionGates}' "$ns")" ""
eq "v2->v1 Exexcution" "$(g workloads v1beta1 wl2 '{.status.accumulatedPastExexcutionTimeSeconds}' "$ns")" 9
eq "v2->v1 domains" \
    "$(g workloads v1beta1 wl2 "$ta.domains[0].values[0]}:$ta.domains[0].count},$ta.domains[1].values[0]}:$ta.domains[1].count}" "$ns")" \
    "n-1.example:2,n-2.example:1"
say "created as v1beta2, read as v1beta1: cohort, strategy, flavorUsage, priorityClassName/Source, domains"

# ---- a write through v1beta1 -----------------------------------------------------------------
# Read-modify-write in v1beta1 (as a Kueue-era client does): the change lands in v1beta2, and the
# fields v1beta1 cannot hold are gone, exactly as with Kueue's webhook.
k patch workloads.v1beta1.kueue.x-k8s.io -n "$ns" wl2 --type merge -p '{"spec":{"priority":8}}' >/dev/null ||
    fail "patch through v1beta1"
eq "v1beta1 write" "$(g workloads v1beta2 wl2 '{.spec.priority}|{.spec.priorityClassRef.name}' "$ns")" "8|pc-$sfx"
eq "v1beta1 write drops preemptionGates" "$(g workloads v1beta2 wl2 '{.spec.preemptionGates}' "$ns")" ""
k patch clusterqueues.v1beta1.kueue.x-k8s.io "$cq1" --type merge -p "{\"spec\":{\"cohort\":\"co3-$sfx\"}}" >/dev/null ||
    fail "patch the cohort through v1beta1"
eq "v1beta1 cohort write" "$(g clusterqueues v1beta2 "$cq1" '{.spec.cohortName}')" "co3-$sfx"
say "writes through v1beta1 land in v1beta2 (preemptionGates dropped, as Kueue does)"

# ---- fail closed ----------------------------------------------------------------------------
# A v1beta2 topology assignment whose slice does not match its levels (1.20 has no CEL to
# refuse it): reading it as v1beta1 fails with the webhook's message; v1beta2 still reads.
k create -f - >/dev/null <<EOT || fail "create cq3"
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: $cq3}
spec: {namespaceSelector: {}}
EOT
k create -n "$ns" -f - >/dev/null <<EOT || fail "create wl3"
apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata: {name: wl3}
spec: {podSets: [{name: main, count: 1, template: {spec: {containers: [{name: c, image: busybox}]}}}]}
EOT
k patch workloads.v1beta2.kueue.x-k8s.io -n "$ns" wl3 --subresource=status --type merge -p \
    "{\"status\":{\"admission\":{\"clusterQueue\":\"$cq3\",\"podSetAssignments\":[{\"name\":\"main\",\"topologyAssignment\":{\"levels\":[\"a\",\"b\"],\"slices\":[{\"domainCount\":1,\"valuesPerLevel\":[{\"universal\":\"x\"}],\"podCounts\":{\"universal\":1}}]}}]}}}" \
    >/dev/null || fail "status of wl3"
out=$(k get workloads.v1beta1.kueue.x-k8s.io -n "$ns" wl3 -o name 2>&1) &&
    fail "an unconvertible Workload was read as v1beta1: $out"
out=$(echo "$out" | grep -v '^Warning: ')
case "$out" in
*"conversion webhook"*"Workload $ns/wl3: status.admission.podSetAssignments[0].topologyAssignment.slices[0].valuesPerLevel: valuesPerLevel must have the same length as the number of levels"*) ;;
*) fail "unexpected error for wl3: $out" ;;
esac
say "refused: $out"
eq "wl3 as v1beta2" "$(g workloads v1beta2 wl3 '{.metadata.name}' "$ns")" wl3
k delete workloads.v1beta2.kueue.x-k8s.io -n "$ns" wl3 >/dev/null || fail "delete wl3"
say "an unconvertible object: v1beta1 read refused with the reason, v1beta2 unaffected"

grep -q "webhooks: serving TLS" "$tmp/op.log" || fail "no serving line: $(ctrl_log op)"
ctrl_stop op
say "PASS"
