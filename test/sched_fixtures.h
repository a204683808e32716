/* sched_fixtures -- build engine objects in code for the sched tests (no YAML involved). */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_SCHED_FIXTURES_H
#define SLUICE_SCHED_FIXTURES_H

#include "sched/sched.h"

#include <stdbool.h>
#include <stdint.h>

/* ClusterQueue options; zero = Kueue defaults (no cohort, BestEffortFIFO, no preemption). */
typedef struct fx_cq_opts_s {
    const char *cohort;
    queueing_strategy_t queueing;
    preempt_policy_t within;  /* withinClusterQueue */
    preempt_policy_t reclaim; /* reclaimWithinCohort */
    preempt_policy_t borrow;  /* borrowWithinCohort.policy */
    bool has_threshold;
    int32_t threshold;
    bool try_next_on_borrow; /* whenCanBorrow: TryNextFlavor */
    bool stop_on_preempt;    /* whenCanPreempt: MayStopSearch */
    fungibility_pref_t preference;
    stop_policy_t stop;
    const char *weight;   /* fairSharing.weight */
    const char *ns_label; /* namespaceSelector matchLabels "k=v"; NULL = {} (everything) */
    bool afs;             /* admissionScope.admissionMode: UsageBasedAdmissionFairSharing */
    /* admissionChecksStrategy: "check[:flavor,flavor][;check...]" (no flavors: onFlavors empty) */
    const char *checks;
} fx_cq_opts_t;

/*
 * Quota spec: resource groups separated by ';'. A group is "res[,res...]|flavor:q[,q...]|...",
 * each q a quantity optionally followed by "/b<limit>" (borrowingLimit) and/or "/l<limit>"
 * (lendingLimit). Example: "cpu,memory|on-demand:10,20Gi|spot:5/b2,10Gi".
 */
void fx_cq(sched_t *s, const char *name, const char *quotas, const fx_cq_opts_t *opts);
/* A Cohort object with optional parent and quota spec (may be NULL). */
void fx_cohort(sched_t *s, const char *name, const char *parent, const char *quotas,
               const char *weight);
/* A ResourceFlavor; labels "k=v,k2=v2" and taints "k=v:NoSchedule,..." may be NULL. */
void fx_flavor(sched_t *s, const char *name, const char *labels, const char *taints);
/* A Ready Node; labels "k=v,...", taints as fx_flavor, allocatable "cpu=8,nvidia.com/gpu=4" (each
 * may be NULL). Again with the same name: an update. */
void fx_node(sched_t *s, const char *name, const char *labels, const char *taints,
             const char *allocatable);
/* A pod bound to `node` with per-pod `requests` ("cpu=1"), of workload key `workload` (NULL). */
void fx_pod(sched_t *s, const char *key, const char *node, const char *workload,
            const char *requests);
/* A LocalQueue ns/name -> cq. */
void fx_lq(sched_t *s, const char *ns, const char *name, const char *cq, stop_policy_t stop);
/* The same with spec.fairSharing.weight `weight` (a quantity; NULL = absent). */
void fx_lq_weight(sched_t *s, const char *ns, const char *name, const char *cq, const char *weight);
/* The usual two-queue set-up: ClusterQueues "a" and "b" (fx_cq quotas and options; the options
 * name the cohort) with LocalQueues ns/qa and ns/qb. */
void fx_pair(sched_t *s, const char *a_quotas, const fx_cq_opts_t *a, const char *b_quotas,
             const fx_cq_opts_t *b);
/* A Namespace with labels "k=v,...". */
void fx_ns(sched_t *s, const char *name, const char *labels);

typedef struct fx_wl_opts_s {
    int32_t count;     /* default 1 */
    int32_t min_count; /* 0 = no minCount */
    const char *wpc;   /* WorkloadPriorityClass reference */
    int32_t max_exec_seconds;
    const char *tolerations;          /* "k=v:NoSchedule,k2:NoSchedule" */
    const char *node_selector;        /* "k=v,..." */
    const char *podsets;              /* extra podsets: "name:count:requests;..." */
    const char *annotations;          /* metadata.annotations "k=v,..." */
    const char *reclaimable;          /* status.reclaimablePods "podset:count,..." */
    const char *template_annotations; /* the main podset's template annotations "k=v,..." */
    const char *extra_annotations;    /* every extra podset's template annotations "k=v,..." */
    bool finished;                    /* the Finished condition is set */
} fx_wl_opts_t;

/* A pending workload "ns/name" in LocalQueue `lq`, priority `prio`, per-pod requests
 * "cpu=1,memory=2Gi", created at `created` ms. */
void fx_wl(sched_t *s, const char *key, const char *lq, int32_t prio, int64_t created,
           const char *requests, const fx_wl_opts_t *opts);

/* Run cycles at `now` until quiescent; PREEMPT/EVICT victims are reported evicted at once when
 * `auto_evict`. Decisions are appended to `out`; returns how many were appended. */
size_t fx_run(sched_t *s, int64_t now, sched_decisions_t *out, bool auto_evict);

/* Usage of (cq, flavor, resource) in whole units (milli for cpu-like values: see fx_milli). */
int64_t fx_usage(const sched_t *s, const char *cq, const char *flavor, const char *res);
/* Same in thousandths. */
int64_t fx_usage_milli(const sched_t *s, const char *cq, const char *flavor, const char *res);
/* State of a workload (-1 when unknown). */
int fx_state(const sched_t *s, const char *key);
/* The flavor assigned to `res` of podset 0 of admitted workload `key` ("" when none). */
const char *fx_flavor_of(const sched_t *s, const char *key, const char *res);
/* The explanation of a pending workload. */
const char *fx_message(const sched_t *s, const char *key);
sched_reason_t fx_reason(const sched_t *s, const char *key);
/* Index of the first decision of `kind` for `key` in out, or -1. */
int fx_find(const sched_decisions_t *out, sched_decision_kind_t kind, const char *key);

#endif
