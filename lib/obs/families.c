/* families -- the metric families sluice exposes, declared once: Kueue's core set under Kueue's
 * names and sluice's own (name, type, labels, bucket layout, help). */
/* SPDX-License-Identifier: Apache-2.0 */
#include "obs/families.h"

#include <stddef.h>

#define ROLE FAMILIES_ROLE

/* sluice_quota_reserved_resource_seconds_total counts nano-units x milliseconds: 10^-12 of the
 * resource's unit-second, integers all the way (no floating point accumulates). */
#define RSEC_DIGITS 12

/* Label lists. */
static const char *const L_RESULT[] = {"result", ROLE, NULL};
static const char *const L_CQ[] = {"cluster_queue", ROLE, NULL};
static const char *const L_CQ_STATUS[] = {"cluster_queue", "status", ROLE, NULL};
static const char *const L_CQ_PRIO[] = {"cluster_queue", "priority_class", ROLE, NULL};
static const char *const L_CQ_EVICT[] = {"cluster_queue",  "reason", "underlying_cause",
                                         "priority_class", ROLE,     NULL};
static const char *const L_PREEMPT[] = {"preempting_cluster_queue", "reason", ROLE, NULL};
static const char *const L_CQ_FR[] = {"cohort", "cluster_queue", "flavor", "resource", ROLE, NULL};
static const char *const L_CQ_SHARE[] = {"cluster_queue", "cohort", ROLE, NULL};
static const char *const L_LQ[] = {"name", "namespace", ROLE, NULL};
static const char *const L_LQ_STATUS[] = {"name", "namespace", "status", ROLE, NULL};
static const char *const L_LQ_ACTIVE[] = {"name", "namespace", "active", ROLE, NULL};
static const char *const L_LQ_PRIO[] = {"name", "namespace", "priority_class", ROLE, NULL};
static const char *const L_LQ_EVICT[] = {
    "name", "namespace", "reason", "underlying_cause", "priority_class", ROLE, NULL};
static const char *const L_LQ_FR[] = {"name", "namespace", "flavor", "resource", ROLE, NULL};
static const char *const L_BUILD[] = {"git_version", "git_commit", "build_date", "go_version",
                                      "compiler",    "platform",   NULL};
static const char *const L_RSEC[] = {"namespace", "local_queue", "cluster_queue",
                                     "flavor",    "resource",    NULL};
static const char *const L_FR[] = {"cluster_queue", "flavor", "resource", NULL};
static const char *const L_KIND[] = {"kind", NULL};
static const char *const L_FLAVOR_RES[] = {"flavor", "resource", NULL};
static const char *const L_WRITE[] = {"resource", "result", NULL};
static const char *const L_HOOK[] = {"path", "result", NULL};
static const char *const L_EST_WAIT[] = {"cluster_queue", "statistic", NULL};
static const char *const L_EST_WLS[] = {"cluster_queue", "estimate", NULL};

/* The help texts are Kueue's where the metric is Kueue's (pkg/metrics/metrics.go). */
static const families_def_t defs[FAM__COUNT] = {
    [FAM_ATTEMPTS] = {"kueue_admission_attempts_total", METRICS_COUNTER, L_RESULT, 0,
                      FAMILIES_ALWAYS,
                      "The total number of attempts to admit workloads.\n"
                      "Each admission attempt might try to admit more than one workload.\n"
                      "The label 'result' can have the following values:\n"
                      "- 'success' means that at least one workload was admitted.,\n"
                      "- 'inadmissible' means that no workload was admitted."},
    [FAM_ATTEMPT_DURATION] = {"kueue_admission_attempt_duration_seconds", METRICS_HISTOGRAM,
                              L_RESULT, -1, 0,
                              "The latency of an admission attempt.\n"
                              "The label 'result' can have the following values:\n"
                              "- 'success' means that at least one workload was admitted.,\n"
                              "- 'inadmissible' means that no workload was admitted."},
    [FAM_QR_TOTAL] = {"kueue_quota_reserved_workloads_total", METRICS_COUNTER, L_CQ_PRIO, 0,
                      FAMILIES_ALWAYS,
                      "The total number of quota reserved workloads per 'cluster_queue'"},
    [FAM_ADM_TOTAL] = {"kueue_admitted_workloads_total", METRICS_COUNTER, L_CQ_PRIO, 0,
                       FAMILIES_ALWAYS,
                       "The total number of admitted workloads per 'cluster_queue'"},
    [FAM_QR_WAIT] = {"kueue_quota_reserved_wait_time_seconds", METRICS_HISTOGRAM, L_CQ_PRIO, 14,
                     FAMILIES_ALWAYS,
                     "The time between a workload was created or requeued until it got quota "
                     "reservation, per 'cluster_queue'"},
    [FAM_ADM_WAIT] = {"kueue_admission_wait_time_seconds", METRICS_HISTOGRAM, L_CQ_PRIO, 16,
                      FAMILIES_ALWAYS,
                      "The time between a workload was created or requeued until admission, per "
                      "'cluster_queue'"},
    [FAM_EVICTED] = {"kueue_evicted_workloads_total", METRICS_COUNTER, L_CQ_EVICT, 0,
                     FAMILIES_ALWAYS,
                     "The number of evicted workloads per 'cluster_queue',\n"
                     "The label 'reason' can have the following values:\n"
                     "- \"Preempted\" means that the workload was evicted in order to free "
                     "resources for a workload with a higher priority or reclamation of nominal "
                     "quota.\n"
                     "- \"PodsReadyTimeout\" means that the eviction took place due to a PodsReady "
                     "timeout.\n"
                     "- \"ClusterQueueStopped\" means that the workload was evicted because the "
                     "ClusterQueue is stopped.\n"
                     "- \"LocalQueueStopped\" means that the workload was evicted because the "
                     "LocalQueue is stopped.\n"
                     "- \"Deactivated\" means that the workload was evicted because spec.active is "
                     "set to false.\n"
                     "The label 'underlying_cause' can have the following values:\n"
                     "- \"\" means that the value in 'reason' label is the root cause for "
                     "eviction.\n"
                     "- \"MaximumExecutionTimeExceeded\" means that the workload was evicted due "
                     "to maximum execution time exceeded.\n"
                     "- \"RequeuingLimitExceeded\" means that the workload was evicted due to "
                     "requeuing limit exceeded."},
    [FAM_PREEMPTED] =
        {"kueue_preempted_workloads_total", METRICS_COUNTER, L_PREEMPT, 0, FAMILIES_ALWAYS,
         "The number of preempted workloads per 'preempting_cluster_queue',\n"
         "The label 'reason' can have the following values:\n"
         "- \"InClusterQueue\" means that the workload was preempted by a workload in "
         "the same ClusterQueue.\n"
         "- \"InCohortReclamation\" means that the workload was preempted by a "
         "workload in the same cohort due to reclamation of nominal quota.\n"
         "- \"InCohortFairSharing\" means that the workload was preempted by a "
         "workload in the same cohort due to fair sharing.\n"
         "- \"InCohortReclaimWhileBorrowing\" means that the workload was preempted "
         "by a workload in the same cohort due to reclamation of nominal quota while "
         "borrowing."},
    [FAM_LQ_QR_TOTAL] = {"kueue_local_queue_quota_reserved_workloads_total", METRICS_COUNTER,
                         L_LQ_PRIO, 0, FAMILIES_LQ,
                         "The total number of quota reserved workloads per 'local_queue'"},
    [FAM_LQ_ADM_TOTAL] = {"kueue_local_queue_admitted_workloads_total", METRICS_COUNTER, L_LQ_PRIO,
                          0, FAMILIES_LQ,
                          "The total number of admitted workloads per 'local_queue'"},
    [FAM_LQ_QR_WAIT] = {"kueue_local_queue_quota_reserved_wait_time_seconds", METRICS_HISTOGRAM,
                        L_LQ_PRIO, 14, FAMILIES_LQ,
                        "The time between a workload was created or requeued until it got quota "
                        "reservation, per 'local_queue'"},
    [FAM_LQ_ADM_WAIT] = {"kueue_local_queue_admission_wait_time_seconds", METRICS_HISTOGRAM,
                         L_LQ_PRIO, 14, FAMILIES_LQ,
                         "The time between a workload was created or requeued until admission, "
                         "per 'local_queue'"},
    [FAM_LQ_EVICTED] = {"kueue_local_queue_evicted_workloads_total", METRICS_COUNTER, L_LQ_EVICT, 0,
                        FAMILIES_LQ,
                        "The number of evicted workloads per 'local_queue' (reasons as "
                        "kueue_evicted_workloads_total)"},
    [FAM_RSECONDS] =
        {"sluice_quota_reserved_resource_seconds_total", METRICS_COUNTER, L_RSEC, 0,
         FAMILIES_ALWAYS,
         "Quota reserved by admitted workloads integrated over time, in the "
         "resource's unit times seconds (GPU-seconds, CPU core-seconds, byte-seconds), "
         "per namespace, LocalQueue, ClusterQueue, flavor and resource; "
         "rate() gives the mean reservation"},
    [FAM_ENGINE] = {"sluice_engine_cycle_duration_seconds", METRICS_HISTOGRAM, NULL, -2,
                    FAMILIES_ALWAYS, "CPU time of one admission engine cycle (sched_cycle)"},
    [FAM_DECISIONS] = {"sluice_engine_decisions_total", METRICS_COUNTER, L_KIND, 0, FAMILIES_ALWAYS,
                       "Decisions of the admission engine by kind (admit, preempt, evict, "
                       "deactivate)"},
    [FAM_WRITES] = {"sluice_api_writes_total", METRICS_COUNTER, L_WRITE, 0, FAMILIES_ALWAYS,
                    "Requests sluice made to change API objects, by resource and result (success, "
                    "conflict, not_found, error)"},
    [FAM_WEBHOOK] = {"sluice_webhook_requests_total", METRICS_COUNTER, L_HOOK, 0, FAMILIES_ALWAYS,
                     "Webhook requests answered, by path and result (allowed, denied, error; "
                     "unknown paths are counted as path \"other\")"},
    [FAM_PENDING] = {"kueue_pending_workloads", METRICS_GAUGE, L_CQ_STATUS, 0, FAMILIES_ALWAYS,
                     "The number of pending workloads, per 'cluster_queue' and 'status'.\n"
                     "'status' can have the following values:\n"
                     "- \"active\" means that the workloads are in the admission queue.\n"
                     "- \"inadmissible\" means there was a failed admission attempt for these "
                     "workloads and they won't be retried until cluster conditions, which could "
                     "make this workload admissible, change"},
    [FAM_RESERVING] = {"kueue_reserving_active_workloads", METRICS_GAUGE, L_CQ, 0, FAMILIES_ALWAYS,
                       "The number of Workloads that are reserving quota, per 'cluster_queue'"},
    [FAM_ADMITTED_ACTIVE] = {"kueue_admitted_active_workloads", METRICS_GAUGE, L_CQ, 0,
                             FAMILIES_ALWAYS,
                             "The number of admitted Workloads that are active, per "
                             "'cluster_queue'"},
    [FAM_CQ_STATUS] = {"kueue_cluster_queue_status", METRICS_GAUGE, L_CQ_STATUS, 0, FAMILIES_ALWAYS,
                       "Reports 'cluster_queue' with its 'status' (with possible values 'pending', "
                       "'active' or 'terminated').\n"
                       "For a ClusterQueue, the metric only reports a value of 1 for one of the "
                       "statuses."},
    [FAM_CQ_SHARE] = {"kueue_cluster_queue_weighted_share", METRICS_GAUGE, L_CQ_SHARE, 0,
                      FAMILIES_FAIR_SHARING,
                      "Reports a value that representing the maximum of the ratios of usage above "
                      "nominal quota to the lendable resources in the cohort, among all the "
                      "resources provided by the ClusterQueue, and divided by the weight.\n"
                      "If zero, it means that the usage of the ClusterQueue is below the nominal "
                      "quota.\n"
                      "If the ClusterQueue has a weight of zero and is borrowing, this will return "
                      "NaN."},
    [FAM_CQ_RESV] = {"kueue_cluster_queue_resource_reservation", METRICS_GAUGE, L_CQ_FR, 0,
                     FAMILIES_CQ_RESOURCES,
                     "Reports the cluster_queue's total resource reservation within all the "
                     "flavors"},
    [FAM_CQ_USAGE] = {"kueue_cluster_queue_resource_usage", METRICS_GAUGE, L_CQ_FR, 0,
                      FAMILIES_CQ_RESOURCES,
                      "Reports the cluster_queue's total resource usage within all the flavors"},
    [FAM_CQ_NOMINAL] = {"kueue_cluster_queue_nominal_quota", METRICS_GAUGE, L_CQ_FR, 0,
                        FAMILIES_CQ_RESOURCES,
                        "Reports the cluster_queue's resource nominal quota within all the "
                        "flavors"},
    [FAM_CQ_BORROW] = {"kueue_cluster_queue_borrowing_limit", METRICS_GAUGE, L_CQ_FR, 0,
                       FAMILIES_CQ_RESOURCES,
                       "Reports the cluster_queue's resource borrowing limit within all the "
                       "flavors. If borrowingLimit is unset, this metric reports +Inf."},
    [FAM_CQ_LEND] = {"kueue_cluster_queue_lending_limit", METRICS_GAUGE, L_CQ_FR, 0,
                     FAMILIES_CQ_RESOURCES,
                     "Reports the cluster_queue's resource lending limit within all the flavors. "
                     "If lendingLimit is unset, this metric reports +Inf."},
    [FAM_LQ_PENDING] = {"kueue_local_queue_pending_workloads", METRICS_GAUGE, L_LQ_STATUS, 0,
                        FAMILIES_LQ,
                        "The number of pending workloads, per 'local_queue' and 'status' (active, "
                        "inadmissible)"},
    [FAM_LQ_RESERVING] = {"kueue_local_queue_reserving_active_workloads", METRICS_GAUGE, L_LQ, 0,
                          FAMILIES_LQ,
                          "The number of Workloads that are reserving quota, per 'localQueue'"},
    [FAM_LQ_ADMITTED_ACTIVE] = {"kueue_local_queue_admitted_active_workloads", METRICS_GAUGE, L_LQ,
                                0, FAMILIES_LQ,
                                "The number of admitted Workloads that are active, per "
                                "'localQueue'"},
    [FAM_LQ_STATUS] = {"kueue_local_queue_status", METRICS_GAUGE, L_LQ_ACTIVE, 0, FAMILIES_LQ,
                       "Reports 'localQueue' with its 'active' status (with possible values "
                       "'True', 'False', or 'Unknown').\n"
                       "For a LocalQueue, the metric only reports a value of 1 for one of the "
                       "statuses."},
    [FAM_LQ_RESV] = {"kueue_local_queue_resource_reservation", METRICS_GAUGE, L_LQ_FR, 0,
                     FAMILIES_LQ,
                     "Reports the localQueue's total resource reservation within all the flavors"},
    [FAM_LQ_USAGE] = {"kueue_local_queue_resource_usage", METRICS_GAUGE, L_LQ_FR, 0, FAMILIES_LQ,
                      "Reports the localQueue's total resource usage within all the flavors"},
    [FAM_IDLE] = {"sluice_cluster_queue_idle_nominal_quota", METRICS_GAUGE, L_FR, 0,
                  FAMILIES_ALWAYS,
                  "Nominal quota of a ClusterQueue not reserved by its workloads (nominal minus "
                  "reservation, at least 0), per flavor and resource"},
    [FAM_FLAVOR_FREE] = {"sluice_flavor_free_capacity", METRICS_GAUGE, L_FLAVOR_RES, 0,
                         FAMILIES_ALWAYS,
                         "With Nodes known: allocatable minus the requests of the pods on them, "
                         "summed over the Ready, uncordoned nodes a ResourceFlavor selects, per "
                         "resource (free GPUs for nvidia.com/gpu)"},
    [FAM_FLAVOR_LARGEST] = {"sluice_flavor_largest_free_block", METRICS_GAUGE, L_FLAVOR_RES, 0,
                            FAMILIES_ALWAYS,
                            "With Nodes known: the most of a resource free on one Ready, "
                            "uncordoned node a ResourceFlavor selects: the largest per-pod "
                            "request that can still be placed"},
    [FAM_FLAVOR_NODES] = {"sluice_flavor_nodes", METRICS_GAUGE, L_FLAVOR_RES, 0, FAMILIES_ALWAYS,
                          "With Nodes known: the nodes a ResourceFlavor's nodeLabels select, per "
                          "resource its quotas name"},
    [FAM_FLAVOR_ALLOCATABLE] = {"sluice_flavor_allocatable", METRICS_GAUGE, L_FLAVOR_RES, 0,
                                FAMILIES_ALWAYS,
                                "With Nodes known: status.allocatable summed over the nodes a "
                                "ResourceFlavor selects (cordoned and NotReady ones included)"},
    [FAM_FLAVOR_NOMINAL] = {"sluice_flavor_nominal_quota", METRICS_GAUGE, L_FLAVOR_RES, 0,
                            FAMILIES_ALWAYS,
                            "With Nodes known: nominalQuota summed over every ClusterQueue and "
                            "Cohort quota on a ResourceFlavor"},
    [FAM_FLAVOR_OVER] = {"sluice_flavor_quota_exceeds_capacity", METRICS_GAUGE, L_FLAVOR_RES, 0,
                         FAMILIES_ALWAYS,
                         "With Nodes known: 1 when sluice_flavor_nominal_quota is above "
                         "sluice_flavor_allocatable (admitted workloads may not fit), else 0"},
    [FAM_CACHE] = {"sluice_cache_objects", METRICS_GAUGE, L_KIND, 0, FAMILIES_ALWAYS,
                   "Objects held in the informer cache, per resource"},
    [FAM_QUEUED] = {"sluice_api_requests_queued", METRICS_GAUGE, NULL, 0, FAMILIES_ALWAYS,
                    "API requests queued behind the client's rate limit or in flight, watches "
                    "included (bounded by the client's max_requests)"},
    [FAM_EST_WAIT] = {"sluice_estimated_wait_seconds", METRICS_GAUGE, L_EST_WAIT, 0,
                      FAMILIES_ALWAYS,
                      "Start-time estimate: the estimated wait (estimated start minus the time of "
                      "the estimate) of the pending workloads of a ClusterQueue that have one, by "
                      "statistic: p50, p90, max"},
    [FAM_EST_WLS] = {"sluice_estimated_pending_workloads", METRICS_GAUGE, L_EST_WLS, 0,
                     FAMILIES_ALWAYS,
                     "Start-time estimate: pending workloads of a ClusterQueue with an estimate "
                     "(estimate=\"known\") and without one (\"unknown\": past the horizon or "
                     "behind a runtime nobody knows)"},
    [FAM_EST_SECONDS] = {"sluice_estimate_run_seconds", METRICS_GAUGE, NULL, 0, FAMILIES_ALWAYS,
                         "CPU time of the last start-time estimate run (the engine copied and run "
                         "forward in virtual time)"},
    [FAM_EST_CYCLES] = {"sluice_estimate_run_cycles", METRICS_GAUGE, NULL, 0, FAMILIES_ALWAYS,
                        "Engine cycles of the last start-time estimate run"},
    [FAM_EST_AGE] = {"sluice_estimate_timestamp_seconds", METRICS_GAUGE, NULL, 0, FAMILIES_ALWAYS,
                     "Unix time of the engine state the last start-time estimate was made from"},
    [FAM_LEADER] = {"sluice_leader", METRICS_GAUGE, NULL, 0, FAMILIES_ALWAYS,
                    "1 while this replica holds the leader Lease (or runs without leader "
                    "election), else 0"},
    [FAM_BUILD] = {"kueue_build_info", METRICS_GAUGE, L_BUILD, 0, FAMILIES_ALWAYS,
                   "Kueue build information. 1 labeled by git version, git commit, build date, go "
                   "version, compiler, platform (sluice: go_version is empty)"},
};

const families_def_t *families_def(families_id_t id)
{
    return (int)id >= 0 && id < FAM__COUNT ? &defs[id] : NULL;
}

err_t families_add(metrics_registry_t *reg, families_id_t id, metrics_family_t **out,
                   err_msg_t *msg)
{
    static const double engine_b[] = {1e-4,   2.5e-4, 5e-4, 1e-3, 2.5e-3, 5e-3, 1e-2,
                                      2.5e-2, 5e-2,   0.1,  0.25, 0.5,    1,    2.5};
    const families_def_t *d = families_def(id);
    double b[METRICS_MAX_BUCKETS];
    const double *bk = NULL;
    size_t nb = 0;
    err_t rc;

    if (d == NULL)
        return err_set(msg, ERR_INVALID, "metric family %d: no such family", (int)id);
    if (d->type == METRICS_HISTOGRAM) {
        if (d->buckets > 0) {
            nb = metrics_kueue_buckets((size_t)d->buckets, b);
            bk = b;
        } else if (d->buckets == -1) {
            nb = metrics_default_buckets(b);
            bk = b;
        } else {
            nb = sizeof(engine_b) / sizeof(engine_b[0]);
            bk = engine_b;
        }
    }
    rc = metrics_family_add(reg, d->name, d->help, d->type, d->labels, bk, nb, out, msg);
    if (rc == ERR_OK && id == FAM_RSECONDS)
        rc = metrics_family_set_exact(*out, RSEC_DIGITS);
    return rc;
}
