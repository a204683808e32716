/* sched -- the admission engine: Kueue's quotas, cohorts, queues, flavors, preemption. */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_SCHED_H
#define SLUICE_SCHED_H

#include "model/types.h"
#include "util/err.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * One engine instance holds every object the admission decision depends on and answers with
 * decisions. It is pure and deterministic: no I/O, no clock, no randomness, no hash-order
 * iteration. Time is an int64 count of MILLISECONDS on a scale the caller chooses (virtual time
 * in the simulator, Unix epoch milliseconds in the operator); every call uses the same scale.
 *
 * Objects are passed as borrowed types.h structs; the engine copies what it needs, so the
 * caller may free them as soon as the call returns. Objects are keyed by name (cluster-scoped)
 * or "namespace/name" (LocalQueues, Workloads). Upserting an existing key is an update.
 *
 * Driving it (simulator and operator alike):
 *   upsert/delete objects as they change
 *   loop { n = out.len; sched_cycle(s, now, &out); if (out.len == n) break; }   -- quiescence
 *   apply decisions: ADMIT -> write status.admission / start the job;
 *                    PREEMPT, EVICT -> stop the job, then sched_evicted(s, key, now);
 *                    DEACTIVATE -> set spec.active=false (quota is already free)
 *   the driver's own eviction (PodsReady timeout): sched_workload_evict(), stop, sched_evicted()
 *   when the job ends: sched_workload_finish(s, key, now)
 *   sched_next_deadline() tells when the next time-based event (max execution time) is due.
 *
 * A cycle that cannot admit parks its heads (BestEffortFIFO: inadmissible set; StrictFIFO: the
 * head stays and blocks), so repeated cycles without any change yield no decision. Whatever
 * frees or adds capacity (finish, delete, eviction, quota/cohort/flavor/namespace updates)
 * requeues the parked workloads of the affected cohort tree, as Kueue does.
 */

typedef struct sched_s sched_t;

/* ---- configuration ------------------------------------------------------------------------ */

/* sluice's opt-in anti-loop rules (docs/engine.md, "Loops"); off by default, where the engine
 * decides as Kueue does. Set with the Configuration annotation SCHED_LOOP_GUARDS_ANNOTATION. */
#define SCHED_GUARD_OWN_QUEUE_BORROWING 0x1u /* "own-queue-borrowing" (cause 4) */
#define SCHED_GUARD_STRICT_FIFO_STICKY  0x2u /* "strict-fifo-sticky" (cause 5) */
#define SCHED_GUARD_ALL                 0x3u
#define SCHED_LOOP_GUARDS_ANNOTATION    "sluice.dev/preemption-loop-guards"
/* Configuration annotation turning fragmentation-aware admission on: "true" or "false". */
#define SCHED_NODE_FIT_ANNOTATION "sluice.dev/fragmentation-aware-admission"
/* Workload annotation: a signed 32-bit integer added to the priority (Kueue's PriorityBoost). */
#define SCHED_PRIORITY_BOOST_ANNOTATION "kueue.x-k8s.io/priority-boost"

typedef struct sched_config_s {
    bool fair_sharing;             /* Configuration.fairSharing present */
    fair_strategy_t strategies[2]; /* fairSharing.preemptionStrategies */
    size_t nstrategies;            /* 0 = Kueue's default (both, in order) */
    unsigned loop_guards;          /* SCHED_GUARD_* bits; 0 = Kueue's choices */
    /* Configuration `resources` (excludeResourcePrefixes, transformations, quotaCheckStrategy),
     * NULL = none. Borrowed for the call only: sched_new() and sched_set_config() copy it. */
    const resource_rules_t *resources;
    /* Fragmentation-aware admission (SCHED_NODE_FIT_ANNOTATION; off = Kueue's choice): with Nodes
     * known (sched_node_upsert), a workload is admitted only when all its pods fit the free
     * capacity of nodes its assigned flavors select; otherwise it waits (reason NoFittingNode). */
    bool node_fit;
    /* Topology-aware scheduling: the driver feeds Topology objects (sched_topology_upsert), so
     * a ResourceFlavor's topologyName makes it a TAS flavor. Off, topologyName is ignored (quota
     * alone, as before: a driver that does not read Topologies would otherwise see every
     * ClusterQueue with a TAS flavor TopologyNotFound). Read when a flavor is upserted. */
    bool tas;
    /* Configuration `admissionFairSharing` (docs/engine.md, "Admission fair sharing"): on when
     * `afs`; a ClusterQueue with admissionScope UsageBasedAdmissionFairSharing then orders its
     * pending workloads by their LocalQueue's decayed usage / weight first. */
    bool afs;
    int64_t afs_half_life_ms; /* usageHalfLifeTime; 0 = usage reset to 0 at every sample */
    int64_t afs_sampling_ms;  /* usageSamplingInterval (> 0; 0 reads as Kueue's 5m) */
    /* resourceWeights (nano; a resource not listed weighs 1), NULL = none. Borrowed for the
     * call only: sched_new() and sched_set_config() copy it. */
    const resource_list_t *afs_weights;
} sched_config_t;

/* Parse a loop-guards value: "none", "all", or a comma-separated list of guard names
 * ("own-queue-borrowing", "strict-fifo-sticky"). ERR_INVALID names the bad item in msg. */
err_t sched_loop_guards_parse(const char *text, unsigned *out, err_msg_t *msg);

/* Parse a SCHED_NODE_FIT_ANNOTATION value ("true" or "false"); ERR_INVALID says what is allowed. */
err_t sched_node_fit_parse(const char *text, bool *out, err_msg_t *msg);

/* Fill `cfg` from a decoded Configuration (`conf` may be NULL: Kueue's defaults); cfg->resources
 * then borrows conf->resources. The SCHED_LOOP_GUARDS_ANNOTATION is read here; callers reject a
 * malformed one beforehand with sched_loop_guards_parse() (here it reads as "none"). */
void sched_config_from(sched_config_t *cfg, const configuration_t *conf);

/* A new engine with `cfg` (NULL = defaults: no fair sharing). NULL only on out-of-memory. */
sched_t *sched_new(const sched_config_t *cfg);

/* Release the engine and everything it holds; NULL-safe. */
void sched_free(sched_t *s);

/* sched_clone() flags. */
#define SCHED_CLONE_RELEASE_HOLDS 0x1u /* the copy's workloads in requeue backoff are not held */

/* An independent deep copy of `s` (objects, queues, admissions, usage, clock): a cycle of the
 * copy decides as a cycle of `s` would, and nothing done to one reaches the other. Parked
 * workloads are requeued in the copy (as after a restart). `flags`: SCHED_CLONE_* bits. Free
 * with sched_free(); NULL only on out-of-memory. For what-if runs such as the start-time
 * estimate (lib/obs/estimate.h). */
sched_t *sched_clone(const sched_t *s, unsigned flags);

/* Replace the configuration; takes effect at the next cycle. The `resources` rules apply to
 * workloads upserted from then on (a pending workload is re-read when upserted again). ERR_NOMEM
 * leaves the previous configuration in place. */
err_t sched_set_config(sched_t *s, const sched_config_t *cfg);

/* ---- objects (all: ERR_OK, ERR_NOMEM, ERR_INVALID with the object and field path in msg) --- */

/* Create or update a ResourceFlavor (copied). */
err_t sched_flavor_upsert(sched_t *s, const flavor_t *f, err_msg_t *msg);
/* Delete a ResourceFlavor; ERR_NOT_FOUND when unknown. CQs referencing it become inactive. */
err_t sched_flavor_delete(sched_t *s, const char *name, err_msg_t *msg);

/* Create or update a ClusterQueue (copied). Quota changes take effect at once; admitted
 * workloads keep their quota when it shrinks. */
err_t sched_cq_upsert(sched_t *s, const cluster_queue_t *cq, err_msg_t *msg);
/* Delete a ClusterQueue. Its admitted workloads keep running (and counting) until they finish
 * or are deleted; its pending ones wait ("ClusterQueue <cq> doesn't exist"). */
err_t sched_cq_delete(sched_t *s, const char *name, err_msg_t *msg);

/* Create or update a Cohort object (copied). */
err_t sched_cohort_upsert(sched_t *s, const cohort_t *c, err_msg_t *msg);
/* Delete a Cohort object; it stays as an implicit cohort while something names it. */
err_t sched_cohort_delete(sched_t *s, const char *name, err_msg_t *msg);

/* Create or update a LocalQueue (copied; key meta.namespace/meta.name). */
err_t sched_lq_upsert(sched_t *s, const local_queue_t *lq, err_msg_t *msg);
/* Admission fair sharing: seed LocalQueue `key`'s consumed resources from its persisted
 * status.fairSharing.admissionFairSharingStatus.consumedResources (an operator restart), as
 * Kueue does once per process: only while the engine has no usage history for it yet (no
 * sample and no admission since it was created); the decay clock starts at the next call that
 * passes a time. ERR_NOT_FOUND when the LocalQueue is unknown; ERR_OK and nothing done when it
 * already has history. */
err_t sched_lq_afs_seed(sched_t *s, const char *key, const resource_list_t *consumed,
                        err_msg_t *msg);

/* A LocalQueue's admission-fair-sharing state at `now` (Kueue's admissionFairSharingStatus):
 * consumed resources decayed up to the last sample at or before `now` (by resource name, zero
 * entries left out) and that sample's time. `consumed` is owned by the caller
 * (resource_list_fini). ERR_NOT_FOUND when the LocalQueue is unknown, ERR_INVALID when admission
 * fair sharing is off or no time has been seen yet (`*last_update` untouched), ERR_NOMEM. */
err_t sched_lq_afs_status(const sched_t *s, const char *key, int64_t now, resource_list_t *consumed,
                          int64_t *last_update, err_msg_t *msg);

/* Delete a LocalQueue; its pending workloads wait ("LocalQueue <lq> doesn't exist"). */
err_t sched_lq_delete(sched_t *s, const char *ns, const char *name, err_msg_t *msg);

/* Create or update a Namespace (its labels feed namespaceSelectors). */
err_t sched_namespace_upsert(sched_t *s, const namespace_t *ns, err_msg_t *msg);
/* Delete a Namespace. */
err_t sched_namespace_delete(sched_t *s, const char *name, err_msg_t *msg);

/* Create or update a WorkloadPriorityClass; a value change propagates to workloads using it. */
err_t sched_wpc_upsert(sched_t *s, const workload_priority_class_t *wpc, err_msg_t *msg);
/* Delete a WorkloadPriorityClass (workloads keep the value they had). */
err_t sched_wpc_delete(sched_t *s, const char *name, err_msg_t *msg);

/* Create or update a scheduling.k8s.io PriorityClass. */
err_t sched_pc_upsert(sched_t *s, const priority_class_t *pc, err_msg_t *msg);
/* Delete a PriorityClass. */
err_t sched_pc_delete(sched_t *s, const char *name, err_msg_t *msg);

/* Create or update an AdmissionCheck by name. `active`: its controller says it can evaluate
 * checks (the Active condition; the driver decides for the controllers it plays itself). A
 * ClusterQueue naming a missing check is inactive (AdmissionCheckNotFound), one naming an
 * inactive check too (AdmissionCheckInactive), as in Kueue. */
err_t sched_check_upsert(sched_t *s, const char *name, bool active, err_msg_t *msg);
/* Delete an AdmissionCheck; ERR_NOT_FOUND when unknown. */
err_t sched_check_delete(sched_t *s, const char *name, err_msg_t *msg);

/* Create or update a Topology (copied: its levels' node labels). A ResourceFlavor with
 * spec.topologyName is a TAS flavor: pod sets assigned to it are placed over the Nodes
 * (sched_node_upsert) as Kueue's topology-aware scheduling does, and a ClusterQueue using one
 * whose Topology is missing is inactive (TopologyNotFound), as in Kueue (docs/engine.md,
 * "Topology-aware scheduling"). ERR_INVALID (no name, 0 or more than 16 levels), ERR_NOMEM. */
err_t sched_topology_upsert(sched_t *s, const topology_t *t, err_msg_t *msg);
/* Delete a Topology; ERR_NOT_FOUND when unknown. */
err_t sched_topology_delete(sched_t *s, const char *name, err_msg_t *msg);

/* ---- workloads ---------------------------------------------------------------------------- */

typedef struct sched_wl_opts_s {
    int64_t created;     /* queue-order timestamp (ms): creation time; an update of a pending
                            workload takes it too (a requeue may move it, e.g. to the eviction
                            time of requeuingStrategy.timestamp=Eviction) */
    int64_t admitted_at; /* only when the workload arrives already admitted (ms) */
    uint64_t seq;        /* queue-order tie-break after `created`, lower first (the simulator
                            passes document order); equal seqs fall back to the key */
    bool hold;           /* pending: in requeue backoff (Kueue's Requeued=False / requeueAt):
                            parked with the inadmissible ones, counted as pending, never
                            nominated, not requeued by capacity events, until upserted again
                            with hold=false. The driver owns the clock of the backoff. */
    bool failed_checks;  /* pending: one of its admission checks is Retry or Rejected (written by
                            the check's controller while it holds no quota): Kueue's scheduler
                            leaves it inadmissible, PendingEvaluation "The workload has failed
                            admission checks"; parked as `hold` until upserted with false */
} sched_wl_opts_t;

/*
 * Create or update a workload (copied; key meta.namespace/meta.name; pod_sets[].pod_requests
 * must hold the effective per-pod requests, which the engine turns into quota requests with the
 * configuration's `resources` rules: requests_effective()). ERR_OVERFLOW when a transformation
 * overflows (the podset and resource in msg). Priority: the value of the referenced
 * WorkloadPriorityClass / PriorityClass when it exists (and follows its changes), else
 * wl->priority when has_priority, else the lowest globalDefault PriorityClass when no class is
 * referenced, else 0.
 *
 * A new workload with wl->admission set, conditions.quota_reserved, not finished and active is
 * taken as ALREADY ADMITTED to admission->cluster_queue with that assignment (state rebuilt
 * after an operator restart; opts->admitted_at is its admission time). Otherwise it is pending.
 * conditions.finished -> finished, which the engine forgets (sched_workload_finish): a finished
 * workload it does not know is not created (ERR_OK, nothing done); active == false -> deactivated.
 * An update of a pending workload replaces its spec; of an admitted one, only priority,
 * active (false = deactivate, frees quota), finished and status.reclaimablePods are taken.
 * Reclaimable pods need no quota (Kueue's ReclaimablePods): a pending workload asks for each pod
 * set's count less them, an admitted one's usage shrinks to the pods its spec still needs
 * when that is fewer than admitted (the freed quota requeues its ClusterQueue's heads).
 */
err_t sched_workload_upsert(sched_t *s, const workload_t *wl, const sched_wl_opts_t *opts,
                            err_msg_t *msg);

/* Remove a workload at `now` (its quota, if any, is freed). ERR_NOT_FOUND when unknown. */
err_t sched_workload_delete(sched_t *s, const char *key, int64_t now, err_msg_t *msg);

/* The workload finished at `now`: free its quota and forget it, as sched_workload_delete() does
 * (sched_workload_info() then answers ERR_NOT_FOUND, walks do not see it, its later finished
 * upserts do nothing and its delete answers ERR_NOT_FOUND). ERR_NOT_FOUND when unknown. The
 * driver must not upsert an older, unfinished view of it afterwards: that is a new workload. */
err_t sched_workload_finish(sched_t *s, const char *key, int64_t now, err_msg_t *msg);

/* A workload named by a PREEMPT or EVICT decision, or by sched_workload_evict(), has stopped at
 * `now`: free its quota and put it back in its queue. ERR_NOT_FOUND when unknown, ERR_INVALID
 * when it is not being evicted. */
err_t sched_evicted(sched_t *s, const char *key, int64_t now, err_msg_t *msg);

/* The driver evicts admitted workload `key` on its own account (e.g. Kueue's PodsReady timeout):
 * it becomes EVICTING and keeps its quota until sched_evicted(), as after an EVICT decision.
 * ERR_OK when it already is EVICTING, ERR_NOT_FOUND when unknown, ERR_INVALID when it holds no
 * quota. */
err_t sched_workload_evict(sched_t *s, const char *key, err_msg_t *msg);

/*
 * Two-phase admission (Kueue's admission checks). An ADMIT decision whose `nchecks` > 0 reserves
 * quota (QuotaReserved) without admitting: the workload holds its quota, counts in usage and may
 * be preempted, but its maximum execution time does not run and the driver must not start it
 * until it reports the verdict of its checks here:
 *   CHECK_STATE_READY    every check is Ready: the workload is Admitted at `now`;
 *   CHECK_STATE_RETRY    a check asks to retry: the workload becomes EVICTING (quota kept until
 *                        sched_evicted(), which requeues it with its queue-order timestamp moved
 *                        to `now`, Kueue's Evicted(AdmissionCheck) time);
 *   CHECK_STATE_REJECTED a check rejected it: deactivated at once, quota freed (Kueue's
 *                        DeactivationTarget AdmissionCheck; it stays so until spec.active flips).
 * ERR_NOT_FOUND when unknown; ERR_INVALID when the workload is not waiting for checks.
 */
err_t sched_workload_checks(sched_t *s, const char *key, check_state_t verdict, int64_t now,
                            err_msg_t *msg);

/*
 * Failed-node replacement (Kueue's TASFailedNodeReplacement, with FailFast; docs/engine.md,
 * "Topology-aware scheduling"): node `node` of admitted workload `key`'s topology assignment
 * failed (deleted, or not Ready with the workload's pods on it terminated: Kueue's
 * status.unhealthyNodes). The next sched_cycle() looks for new nodes for that node's pods in the
 * domain the pod set requires, the rest of the assignment kept: a REPLACE decision with the new
 * admission, or, when there is none or a second node of the workload failed first, an EVICT
 * decision with reason "NodeFailures" and Kueue's message. Again for the same node: nothing.
 * ERR_NOT_FOUND (unknown workload; the node is not a kubernetes.io/hostname domain of its
 * assignment), ERR_INVALID (not admitted, no node name), ERR_NOMEM.
 */
err_t sched_workload_node_failed(sched_t *s, const char *key, const char *node, err_msg_t *msg);

/* Does admitted workload `key` have node `node` in its topology assignment (a
 * kubernetes.io/hostname domain), and how many of its pods are bound there (sched_pod_bound)? For
 * a driver deciding whether a NotReady node failed for it (its pods there terminated). false
 * for an unknown or not admitted workload. */
bool sched_workload_on_node(const sched_t *s, const char *key, const char *node, size_t *bound);

/* The admitted workloads whose topology assignment names node `node` (with `pods_gone`, only
 * those with no pod bound there), told to `each` in key order without marking anything: for a
 * driver that records a failure before it reports it (the operator's status.unhealthyNodes).
 * `each` may call sched_workload_node_failed(). ERR_INVALID (no node name), ERR_NOMEM (none
 * told). */
err_t sched_node_workloads(const sched_t *s, const char *node, bool pods_gone,
                           void (*each)(void *ud, const char *key), void *ud, err_msg_t *msg);

/* Node `node` failed for every admitted workload whose topology assignment names it (with
 * `pods_gone`, only those with no pod bound there: a NotReady node whose pods terminated,
 * Kueue's TASReplaceNodeOnPodTermination): sched_workload_node_failed() for each, in key order.
 * ERR_NOMEM (those marked stay marked). */
err_t sched_node_failed(sched_t *s, const char *node, bool pods_gone, err_msg_t *msg);

/* ---- decisions ---------------------------------------------------------------------------- */

typedef enum {
    SCHED_DECISION_ADMIT = 0,  /* quota reserved + admitted; usage already counted */
    SCHED_DECISION_PREEMPT,    /* stop `workload` to make room for `preemptor` */
    SCHED_DECISION_EVICT,      /* stop `workload`: its ClusterQueue/LocalQueue is HoldAndDrain */
    SCHED_DECISION_DEACTIVATE, /* maximum execution time exceeded; quota already freed */
    SCHED_DECISION_REPLACE,    /* a failed node replaced: `admission` is the workload's new
                                  status.admission (topologyAssignment updated), same quota */
} sched_decision_kind_t;

typedef enum {
    SCHED_PREEMPT_NONE = 0,
    SCHED_PREEMPT_IN_CLUSTER_QUEUE,                  /* "InClusterQueue" */
    SCHED_PREEMPT_IN_COHORT_RECLAMATION,             /* "InCohortReclamation" */
    SCHED_PREEMPT_IN_COHORT_FAIR_SHARING,            /* "InCohortFairSharing" */
    SCHED_PREEMPT_IN_COHORT_RECLAIM_WHILE_BORROWING, /* "InCohortReclaimWhileBorrowing" */
} sched_preempt_reason_t;

typedef struct sched_decision_s {
    sched_decision_kind_t kind;
    char *workload;      /* owned: "namespace/name" */
    char *cluster_queue; /* owned */
    int64_t time;        /* the `now` of the cycle */
    /* ADMIT */
    admission_t admission; /* owned: status.admission (per podset flavors, usage, count);
                              REPLACE too */
    bool borrowing;        /* the admission uses quota borrowed from the cohort */
    char **checks;         /* owned: the admission checks that apply (name order); nchecks > 0:
                              quota reserved only, see sched_workload_checks() */
    size_t nchecks;
    /* PREEMPT */
    char *preemptor;               /* owned: key of the workload that needs the room */
    sched_preempt_reason_t reason; /* PREEMPT only */
    /* all kinds: human text; PREEMPT: Kueue's "Preempted to accommodate ..." message;
     * EVICT: "ClusterQueueStopped"/"LocalQueueStopped" or "NodeFailures" reason text;
     * DEACTIVATE: reason "MaximumExecutionTimeExceeded"; REPLACE: "NodeReplaced" */
    char *reason_str; /* owned: Kueue's reason string for the condition/event */
    char *message;    /* owned */
    char *node;       /* owned: REPLACE: the failed node replaced; NULL otherwise */
} sched_decision_t;

typedef struct sched_decisions_s {
    sched_decision_t *items; /* owned */
    size_t len;
    size_t cap;
} sched_decisions_t;

/* An empty list. */
void sched_decisions_init(sched_decisions_t *d);
/* Release every decision; the list is empty (and reusable) afterwards. NULL-safe. */
void sched_decisions_clear(sched_decisions_t *d);
/* Release the list's memory; NULL-safe. */
void sched_decisions_fini(sched_decisions_t *d);

/* Kueue's name for a preemption reason ("InClusterQueue", ...; "" for NONE). */
const char *sched_preempt_reason_str(sched_preempt_reason_t r);

/*
 * One scheduling cycle at `now` (Kueue's scheduler.schedule): first the workloads whose maximum
 * execution time has run out are deactivated (DEACTIVATE decisions, quota freed), then one head
 * per active ClusterQueue is nominated, entries are ordered and processed against the current
 * usage; admissions are applied at once. Decisions are appended to `out`. A driver repeats
 * until a cycle appends nothing. ERR_NOMEM leaves the engine consistent (the cycle stops early,
 * its heads back in their queues): every decision it appended before failing is whole and already
 * applied to the engine's state, so the driver carries those out as after a cycle that succeeded.
 */
err_t sched_cycle(sched_t *s, int64_t now, sched_decisions_t *out, err_msg_t *msg);

/* Admission attempts so far, counted as Kueue counts kueue_admission_attempts_total: every pass
 * of a cycle that had at least one head to try is one attempt (a sched_cycle() call may make
 * several passes, or none when no queue has a head), `admitted` those that admitted at least one
 * workload; tried - admitted is Kueue's "inadmissible". */
typedef struct sched_attempts_s {
    uint64_t tried;
    uint64_t admitted;
} sched_attempts_t;
void sched_attempts(const sched_t *s, sched_attempts_t *out);

/* The earliest instant > `now` at which a time-based event is due (an admitted workload reaching
 * its maximum execution time), or INT64_MAX when none. */
int64_t sched_next_deadline(const sched_t *s, int64_t now);

/* ---- queries ------------------------------------------------------------------------------ */

typedef enum {
    SCHED_WL_PENDING = 0, /* waiting in its queue */
    SCHED_WL_ADMITTED,    /* holds quota */
    SCHED_WL_EVICTING,    /* holds quota, PREEMPT/EVICT issued, waiting for sched_evicted() */
    SCHED_WL_DEACTIVATED, /* spec.active=false or max execution time exceeded */
} sched_wl_state_t;

/* Kueue's QuotaReserved=False reasons (FG UnadmittedWorkloadsObservability) and ours. */
typedef enum {
    SCHED_REASON_NONE = 0,
    SCHED_REASON_PENDING_EVALUATION,    /* "PendingEvaluation": not tried yet */
    SCHED_REASON_WAITING_FOR_QUOTA,     /* "WaitingForQuota" */
    SCHED_REASON_NO_MATCHING_FLAVOR,    /* "NoMatchingFlavor" */
    SCHED_REASON_EXCEEDS_MAX_QUOTA,     /* "ExceedsMaxQuota" */
    SCHED_REASON_WAITING_FOR_PREEMPTED, /* "WaitingForPreemptedWorkloads" */
    SCHED_REASON_MISCONFIGURED,         /* "Misconfigured" */
    SCHED_REASON_SUSPENDED,             /* "Suspended" (CQ inactive/stopped) */
    SCHED_REASON_ON_HOLD,               /* "OnHold" (LocalQueue stopped) */
    SCHED_REASON_INADMISSIBLE,          /* "Inadmissible" (legacy generic) */
    SCHED_REASON_DEACTIVATED,           /* "Deactivated" */
    SCHED_REASON_NO_FITTING_NODE,       /* "NoFittingNode" (ours: fragmentation-aware admission) */
    SCHED_REASON_TOPOLOGY_PLACEMENT_FAILED, /* "TopologyPlacementFailed": a TAS flavor's nodes
                                               cannot hold the pod set as its topology asks */
} sched_reason_t;

/* Kueue's name for a reason ("WaitingForQuota", ...; "" for NONE). */
const char *sched_reason_str(sched_reason_t r);

/* A view of one workload. Every pointer is borrowed from the engine and valid until the next
 * call that changes it (any upsert/delete/cycle). */
typedef struct sched_wl_info_s {
    const char *key;             /* "namespace/name" */
    const char *local_queue;     /* spec.queueName */
    const char *local_queue_key; /* "namespace/queueName", NULL when no queue */
    const char *priority_class;  /* spec.priorityClassName, NULL when none */
    const char *cluster_queue;   /* admitted: admission CQ; pending: the LQ's CQ; NULL if none */
    sched_wl_state_t state;
    int32_t priority;             /* effective */
    int64_t created;              /* queue-order timestamp (ms) */
    int64_t admitted_at;          /* ADMITTED/EVICTING: ms */
    bool borrowing;               /* ADMITTED/EVICTING: the admission borrows */
    const admission_t *admission; /* ADMITTED/EVICTING, else NULL */
    sched_reason_t reason;        /* PENDING: why it waits */
    const char *message;          /* PENDING: human explanation, never NULL ("" when none) */
    const char *preemptor;        /* EVICTING by preemption: preemptor key, else NULL */
    int64_t max_exec_ms;          /* spec.maximumExecutionTimeSeconds in ms, 0 when unset */
    bool awaiting_checks;         /* ADMITTED/EVICTING: quota reserved, checks not all Ready */
    char *const *checks;          /* ADMITTED/EVICTING: the checks that apply (name order) */
    size_t nchecks;
} sched_wl_info_t;

/* Fill `out` for workload `key`; ERR_NOT_FOUND when unknown. */
err_t sched_workload_info(const sched_t *s, const char *key, sched_wl_info_t *out, err_msg_t *msg);

/* The requests of workload `key` summed over all its pods: `cb` once per resource, in name
 * order, with the total in nano-units (qnano_t); never called for a finished workload (the
 * engine drops its pod sets). ERR_NOT_FOUND when unknown. */
typedef void (*sched_request_cb)(void *ud, const char *resource, qnano_t total);
err_t sched_workload_requests(const sched_t *s, const char *key, sched_request_cb cb, void *ud,
                              err_msg_t *msg);

/* Called once per workload by the iterators below; return false to stop. */
typedef bool (*sched_wl_cb)(const sched_wl_info_t *info, void *ud);

/* Visit the workloads of ClusterQueue `cq` that hold quota there (admission order) and then its
 * pending ones (queue order: priority desc, timestamp asc, key asc). ERR_NOT_FOUND if unknown. */
err_t sched_cq_workloads(const sched_t *s, const char *cq, sched_wl_cb cb, void *ud,
                         err_msg_t *msg);

/* Visit every workload the engine knows, in key order. */
void sched_workloads(const sched_t *s, sched_wl_cb cb, void *ud);

/* Visit every workload in no particular order: sched_workloads without its sort, for drivers
 * whose result does not depend on the order (counting, budgets spent over several passes). */
void sched_workloads_unordered(const sched_t *s, sched_wl_cb cb, void *ud);

/* Usage and quota of one (flavor, resource) of a ClusterQueue or Cohort. */
typedef struct sched_fr_usage_s {
    const char *flavor;       /* borrowed */
    const char *resource;     /* borrowed */
    quantity_t nominal;       /* nominalQuota (cohort: its own nominalQuota) */
    quantity_t subtree_quota; /* cohort: own nominal + what children lend; CQ: nominal */
    bool has_borrowing_limit;
    quantity_t borrowing_limit;
    bool has_lending_limit;
    quantity_t lending_limit;
    quantity_t usage;               /* reserved quota (CQ: sum of workloads holding quota) */
    quantity_t borrowed;            /* max(0, usage - subtree_quota) (0 without a cohort) */
    quantity_t available;           /* what a new workload could take now (Kueue Available) */
    quantity_t potential_available; /* the most it could ever take (PotentialAvailable) */
} sched_fr_usage_t;

typedef struct sched_usage_list_s {
    sched_fr_usage_t *items; /* owned; flavor order of the resource groups, then resource */
    size_t len;
} sched_usage_list_t;

/* Release a usage list; NULL-safe. */
void sched_usage_list_fini(sched_usage_list_t *l);

/* Active reasons of a ClusterQueue (status condition Active). */
typedef enum {
    SCHED_CQ_READY = 0,          /* "Ready" */
    SCHED_CQ_STOPPED,            /* "Stopped" */
    SCHED_CQ_FLAVOR_NOT_FOUND,   /* "FlavorNotFound" */
    SCHED_CQ_TERMINATING,        /* "Terminating" */
    SCHED_CQ_COHORT_CYCLE,       /* "CohortCycle" (ours: Kueue only disables it) */
    SCHED_CQ_NOT_FOUND,          /* "NotFound" (referenced but no object) */
    SCHED_CQ_CHECK_NOT_FOUND,    /* "AdmissionCheckNotFound" */
    SCHED_CQ_CHECK_INACTIVE,     /* "AdmissionCheckInactive" */
    SCHED_CQ_TOPOLOGY_NOT_FOUND, /* "TopologyNotFound": a TAS flavor names a missing Topology */
} sched_cq_reason_t;

/* Kueue's name for an Active condition reason. */
const char *sched_cq_reason_str(sched_cq_reason_t r);

typedef struct sched_cq_status_s {
    bool active;
    sched_cq_reason_t reason;
    char message[512]; /* e.g. "Can't admit new workloads: references missing ResourceFlavor(s): a."
                        */
    const char *cohort; /* borrowed: cohortName or NULL */
    size_t pending;     /* queued (heap + inadmissible) */
    size_t reserving;   /* holding quota (admitted + evicting) */
    size_t admitted;    /* admitted: reserving minus those waiting for admission checks */
    /* fair sharing: weighted share as Kueue reports it (ceil, INT64_MAX for +Inf); 0 if off */
    int64_t weighted_share;
} sched_cq_status_t;

/* Status of ClusterQueue `name`; ERR_NOT_FOUND when unknown. */
err_t sched_cq_status(const sched_t *s, const char *name, sched_cq_status_t *out, err_msg_t *msg);

/* Per (flavor, resource) usage of ClusterQueue `name` (every quota it declares, then any other
 * fr it still has usage on); `out` is owned by the caller. ERR_NOT_FOUND, ERR_NOMEM. */
err_t sched_cq_usage(const sched_t *s, const char *name, sched_usage_list_t *out, err_msg_t *msg);

/* One (flavor, resource) of ClusterQueue `name`; ERR_NOT_FOUND when the CQ, flavor or resource
 * is unknown to the engine (an fr with no quota and no usage reports zeros). */
err_t sched_cq_fr_usage(const sched_t *s, const char *name, const char *flavor,
                        const char *resource, sched_fr_usage_t *out, err_msg_t *msg);

/* Fair sharing: the weighted share of cohort `name` as Kueue reports it in
 * Cohort.status.fairSharing (ceil, INT64_MAX for +Inf; the root cohort: 0) into *out; 0 when
 * fair sharing is off. ERR_NOT_FOUND when unknown. */
err_t sched_cohort_weighted_share(const sched_t *s, const char *name, int64_t *out, err_msg_t *msg);

/* Per (flavor, resource) usage of cohort `name` (explicit or implicit). */
err_t sched_cohort_usage(const sched_t *s, const char *name, sched_usage_list_t *out,
                         err_msg_t *msg);

/* Names of all ClusterQueues in name order (borrowed, valid until the next change); returns
 * the count, writes up to `max` pointers to `names`. */
size_t sched_cq_names(const sched_t *s, const char **names, size_t max);

/* ---- nodes ---------------------------------------------------------------------------------
 *
 * Optional: an engine that is never given a Node decides exactly as Kueue does. Given Nodes, it
 * knows where capacity is: the free capacity of node N for resource R is N's allocatable R minus
 * what is in use there, which is the requests of the pods the driver reports bound to N
 * (sched_pod_bound) plus the pods of workloads the engine admitted and placed on N itself
 * (first fit over the nodes in name order, at admission; dropped when the driver reports a pod
 * of that workload bound, released with the workload's quota). Fragmentation-aware admission
 * (sched_config_t.node_fit) reads it; so can a topology-aware placement.
 */

/* A Node as the engine takes it (every pointer borrowed for the call; the engine copies). */
typedef struct sched_node_spec_s {
    const char *name;
    const kv_list_t *labels; /* NULL = none */
    const taint_t *taints;   /* spec.taints */
    size_t ntaints;
    const resource_list_t *allocatable; /* status.allocatable; NULL = nothing */
    bool unschedulable;                 /* spec.unschedulable (cordoned) */
    bool ready;                         /* Ready condition True (a Node without one: say true) */
} sched_node_spec_t;

/* Create or update a Node. ERR_INVALID (no name), ERR_NOMEM. */
err_t sched_node_upsert(sched_t *s, const sched_node_spec_t *node, err_msg_t *msg);
/* Delete a Node: it is no longer a place for pods (pods still counted on it leave with
 * sched_pod_unbound or their workload). ERR_NOT_FOUND when unknown. */
err_t sched_node_delete(sched_t *s, const char *name, err_msg_t *msg);

/* Pod `key` ("ns/name") runs on node `node` with the per-pod `requests` (effective requests: the
 * pod's "requests" as the scheduler counts them; copied); `workload` is the key of the Workload
 * it belongs to, NULL when none. Again with the same key: an update. A node not (yet) known is
 * remembered by name. ERR_INVALID (no node), ERR_NOMEM. */
err_t sched_pod_bound(sched_t *s, const char *key, const char *node, const char *workload,
                      const resource_list_t *requests, err_msg_t *msg);
/* Pod `key` is gone from its node (deleted, finished, failed). ERR_NOT_FOUND when not bound. */
err_t sched_pod_unbound(sched_t *s, const char *key, err_msg_t *msg);

/* Nodes that exist, in name order: indices 0 .. sched_node_count()-1, valid until the next node
 * upsert or delete. */
size_t sched_node_count(const sched_t *s);

typedef struct sched_node_info_s {
    const char *name;        /* borrowed from the engine, like every pointer here */
    const kv_list_t *labels; /* sorted by key */
    const taint_t *taints;
    size_t ntaints;
    bool unschedulable;
    bool ready;
    size_t pods; /* pods counted on it (bound + placed) */
} sched_node_info_t;

/* Node number `i`; ERR_NOT_FOUND when out of range. */
err_t sched_node_at(const sched_t *s, size_t i, sched_node_info_t *out);
/* The index of node `name`; ERR_NOT_FOUND when it does not exist. */
err_t sched_node_find(const sched_t *s, const char *name, size_t *index);

typedef struct sched_node_res_s {
    qnano_t allocatable; /* status.allocatable (0 when not listed) */
    qnano_t used;        /* bound + placed pods' requests */
    qnano_t free;        /* max(0, allocatable - used) */
    bool listed;         /* the node lists the resource in its allocatable */
} sched_node_res_t;

/* Capacity of one resource on node `i` (zeros for an index out of range or a resource never
 * seen). O(log resources). */
void sched_node_resource(const sched_t *s, size_t i, const char *resource, sched_node_res_t *out);

/* How many more pods requesting `per_pod` each fit in node `i`'s free capacity (its "pods"
 * allocatable counts, when listed; a "pods" entry in per_pod is ignored); INT64_MAX when nothing
 * limits, 0 for an index out of range. Readiness, cordons and taints are not looked at. */
int64_t sched_node_pods_fit(const sched_t *s, size_t i, const resource_list_t *per_pod);

/* Does ResourceFlavor `flavor` select node `i` (its nodeLabels match) for pods with these
 * tolerations (plus the flavor's own) against the node's NoSchedule/NoExecute taints? false for
 * an unknown flavor. Readiness and cordons are not looked at (see sched_node_info_t). */
bool sched_node_selected(const sched_t *s, size_t i, const char *flavor,
                         const toleration_t *tolerations, size_t ntolerations);

/* One flavor's nodes for one resource (nodes matched by its nodeLabels; taints not looked at). */
typedef struct sched_flavor_nodes_s {
    size_t nodes;         /* nodes it selects */
    size_t schedulable;   /* of them Ready and not cordoned */
    qnano_t allocatable;  /* sum over the nodes it selects */
    qnano_t free;         /* sum of free over the schedulable ones */
    qnano_t largest_free; /* the most free on one schedulable node: the largest pod that fits */
} sched_flavor_nodes_t;

/* ERR_NOT_FOUND when no ResourceFlavor `flavor` exists. */
err_t sched_flavor_nodes(const sched_t *s, const char *flavor, const char *resource,
                         sched_flavor_nodes_t *out);

/* Where the engine placed workload `key`'s pods: `cb` once per (podset, node) with the count, in
 * placement order. Nothing for an unknown or unplaced workload. */
typedef void (*sched_place_cb)(void *ud, const char *podset, const char *node, int32_t count);
void sched_workload_placement(const sched_t *s, const char *key, sched_place_cb cb, void *ud);

#endif
