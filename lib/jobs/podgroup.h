/* podgroup -- plain Pods and pod groups as Kueue's pod integration admits them. */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_JOBS_PODGROUP_H
#define SLUICE_JOBS_PODGROUP_H

#include "jobs/framework.h"

/*
 * A plain Pod is held by a scheduling gate, not by a suspend field: Kueue's pod webhook creates
 * it with the gate kueue.x-k8s.io/admission (plus the label and finalizer kueue.x-k8s.io/managed),
 * and admission removes the gate after merging the flavor's node selector and tolerations into
 * the Pod. The API server lets a Pod's gates be removed but never added after creation, so a
 * released Pod cannot be held again: Kueue stops it (eviction, preemption, a deleted Workload) by
 * writing the condition TerminationTarget into its status and deleting it. jobs_kind_pod (a
 * JOBS_ADMIT_POD kind) covers the single Pod; jobs_pod_stop_needed() and
 * jobs_pod_termination_condition() are its stop.
 *
 * Pods that carry the label kueue.x-k8s.io/pod-group-name and the annotation
 * kueue.x-k8s.io/pod-group-total-count form a group: one Workload named after the group, built
 * when enough of its Pods exist, with one pod set per role (pods whose admission-relevant spec is
 * the same share a role hash), sorted by name. No single Pod says what the group is, so a group
 * is not a table entry: the caller collects the Pods of one group name in one namespace and
 * reads them with jobs_pod_group_read():
 *
 *   pods of the group --read--> verdict per pod (keep / excess: delete / inactive: finalize)
 *                               complete?  (non-fast: runnable pods >= total count)
 *                               pod sets   (per role over the kept pods, sorted)
 *        complete --jobs_pod_group_workload()--> the Workload
 *        admitted --jobs_pod_group_start_pod() on each gated kept pod--> ungated pods
 *        evicted  --jobs_pod_stop_needed() / jobs_pod_termination_condition()--> deleted pods
 *        jobs_pod_group_phase() / _active() / _pods_ready() / _reclaimable() for its status
 */

/* Names of the protocol (Kueue's pod integration constants). */
#define JOBS_POD_GATE               "kueue.x-k8s.io/admission"
#define JOBS_POD_TOPOLOGY_GATE      "kueue.x-k8s.io/topology"
#define JOBS_POD_MANAGED            "kueue.x-k8s.io/managed" /* label "true" and finalizer */
#define JOBS_POD_GROUP_NAME         "kueue.x-k8s.io/pod-group-name"
#define JOBS_POD_GROUP_TOTAL_COUNT  "kueue.x-k8s.io/pod-group-total-count"
#define JOBS_POD_GROUP_FAST         "kueue.x-k8s.io/pod-group-fast-admission"
#define JOBS_POD_GROUP_SERVING      "kueue.x-k8s.io/pod-group-serving"
#define JOBS_POD_ROLE_HASH          "kueue.x-k8s.io/role-hash"
#define JOBS_POD_RETRIABLE_IN_GROUP "kueue.x-k8s.io/retriable-in-group"
#define JOBS_POD_SUSPENDING_PARENT  "kueue.x-k8s.io/pod-suspending-parent"
#define JOBS_POD_IS_GROUP_WORKLOAD  "kueue.x-k8s.io/is-group-workload"
#define JOBS_POD_PREBUILT_WORKLOAD  "kueue.x-k8s.io/prebuilt-workload-name"
#define JOBS_POD_TERMINATION_TARGET "TerminationTarget"

/* A role hash: 8 lower-case hex digits (or the role-hash annotation, at most a pod-set name). */
#define JOBS_POD_ROLE_MAX JOBS_PODSET_NAME_MAX

/* framework "pod": one pod set "main" of 1 pod, the Pod its own template (the Workload's copy
 * keeps only its spec, as Kueue's); held = gated (or terminated); finished = status.phase
 * Succeeded / Failed; skipped unless labelled kueue.x-k8s.io/managed=true. A Pod with a group
 * name (jobs_pod_group_name()) is not a Workload of its own: its group is (below). */
extern const jobs_kind_t jobs_kind_pod;

/* ---- one Pod ------------------------------------------------------------------------------- */

/* Does `pod` carry the scheduling gate kueue.x-k8s.io/admission? */
bool jobs_pod_gated(const json_t *pod);

/* The role of `pod` in its group: its role-hash annotation when set, else Kueue's hash: the
 * first 8 hex digits of sha256 over the JSON of its admission-relevant spec (containers' and
 * init containers' requests and ports, nodeSelector, affinity, tolerations, runtimeClassName,
 * priority, topologySpreadConstraints, overhead, resourceClaims, pod-level requests), written as
 * Go's encoding/json writes it (keys of maps sorted, fields in the API's order, quantities
 * canonical). `out` holds JOBS_POD_ROLE_MAX + 1 bytes. ERR_NOMEM, or ERR_INVALID for an
 * annotation too long to be a pod-set name. */
err_t jobs_pod_role_hash(const json_t *pod, char *out, err_msg_t *msg);

/* Kueue's pod webhook on create, for a Pod sluice is to manage (it has a queue name, or
 * manageJobsWithoutQueueName holds, or an owner marked it with pod-suspending-parent): the label
 * kueue.x-k8s.io/managed=true (not for a Pod its parent suspends), the finalizer of the same name
 * (likewise), the gate, and the role-hash annotation. Modifies `pod` in place; ERR_NOMEM. */
err_t jobs_pod_default(json_t *pod, err_msg_t *msg);

/* Must stopping a Workload delete `pod` (Kueue's Stop)? Not when it is already being deleted;
 * not when it is still gated or has terminated, unless the Workload itself is deleted. */
bool jobs_pod_stop_needed(const json_t *pod, bool workload_deleted);

/* The status patch (a new object {"status":{"conditions":[...]}}, NULL on OOM) that marks a Pod
 * Kueue is about to delete: condition TerminationTarget True with `reason` (Kueue's stop reason:
 * "WorkloadEvicted", "WorkloadDeleted", "NotAdmitted", ...), `message`, at `now` (RFC 3339).
 * Write it to pods/status, then delete the Pod. */
json_t *jobs_pod_termination_condition(const char *reason, const char *message, const char *now);

/* ---- pod groups ---------------------------------------------------------------------------- */

/* The group name of `pod` (label kueue.x-k8s.io/pod-group-name), borrowed, or NULL. */
const char *jobs_pod_group_name(const json_t *pod);

/* The pod-group-total-count annotation of `pod`: ERR_INVALID (Kueue's messages) when it is
 * missing, not a decimal integer or below 1. */
err_t jobs_pod_group_total_count(const json_t *pod, int32_t *out, err_msg_t *msg);

/* What becomes of each Pod of a group when its Workload is made. */
typedef enum {
    JOBS_POD_KEEP = 0, /* a member: counted in the pod sets, started on admission */
    JOBS_POD_EXCESS,   /* runnable beyond the total count: remove its finalizer, delete it */
    JOBS_POD_INACTIVE, /* failed, or deleted before it was scheduled: remove its finalizer */
} jobs_pod_verdict_t;

/* One pod group, read from its Pods (borrowed: the caller keeps them alive and unchanged). */
typedef struct jobs_pod_group_s {
    const char *name;      /* borrowed: the group name, which is the Workload's name */
    const char *namespace; /* borrowed */
    int32_t total_count;
    bool fast_admission; /* pod-group-fast-admission=true: admitted as soon as one pod exists */
    bool serving;        /* pod-group-serving=true: never finished, nothing reclaimable */
    bool unretriable;    /* a pod says retriable-in-group=false */
    json_t *const *pods; /* borrowed: the caller's array */
    size_t npods;
    jobs_pod_verdict_t *verdict; /* owned: one per pod */
    size_t nrunnable;            /* pods that can run, run or succeeded (kept + excess) */
    /* Enough pods to create the Workload: fast admission, or nrunnable >= total_count. When not,
     * `why` says so in Kueue's words. */
    bool complete;
    char why[128];
    /* The Workload's pod sets over the kept pods: name = role, tmpl = the first kept pod of the
     * role (the Pod itself, borrowed), count = its kept pods (fast admission: total_count,
     * from the first kept pod's role), sorted by name. */
    jobs_podset_t sets[JOBS_PODSETS_MAX];
    size_t nsets;
} jobs_pod_group_t;

/* Read the `n` Pods of one group (same group name and namespace; any order) into `g`, which
 * jobs_pod_group_fini() releases even on error. Decides each pod's verdict as Kueue does (the
 * kept runnable pods are those with the managed finalizer, then the ungated, then the oldest),
 * whether the group is complete, and its pod sets. ERR_INVALID with Kueue's message when the
 * group's metadata disagrees (no group name, total count missing or different, queue names
 * different: failed pods are not compared) or it has more roles than a Workload holds pod sets;
 * ERR_NOMEM. */
err_t jobs_pod_group_read(json_t *const *pods, size_t n, jobs_pod_group_t *g, err_msg_t *msg);

/* Release what jobs_pod_group_read() allocated (the pods are the caller's). */
void jobs_pod_group_fini(jobs_pod_group_t *g);

/* Build into zeroed `out` the Workload of complete group `g`: as jobs_workload_build() for the
 * first kept pod's metadata (queue name, priority class, max execution time, the labels of
 * `copy_labels` (each the same on every pod, else ERR_INVALID)), named after the group, without
 * a job-uid label, with the annotation kueue.x-k8s.io/is-group-workload=true and g's pod sets.
 * ERR_INVALID when `g` is not complete. */
err_t jobs_pod_group_workload(const jobs_pod_group_t *g, const char *const *copy_labels,
                              workload_t *out, err_msg_t *msg);

/* Start one pod of an admitted group (in place): the admission of the pod set named after its
 * role (info[0..n), names = roles) merged into it as jobs_start() does, and its gates removed.
 * A pod that is not gated is left alone (*changed false). ERR_INVALID when no info names its
 * role; ERR_CONFLICT as jobs_start(). */
err_t jobs_pod_group_start_pod(json_t *pod, const jobs_start_info_t *info, size_t n, bool *changed,
                               err_msg_t *msg);

/* Where group `g` stands (Kueue's Finished): a serving group never finishes; otherwise it has
 * succeeded when all total_count pods succeeded, or when none is active any more and a pod is
 * unretriable (Kueue reports both as success). `message` (size bytes, may be NULL) gets
 * "Pods succeeded: S/T.". */
jobs_phase_t jobs_pod_group_phase(const jobs_pod_group_t *g, char *message, size_t size);

/* Does a pod of `g` still run (phase Running and not being deleted)? */
bool jobs_pod_group_active(const jobs_pod_group_t *g);

/* Are there total_count pods, all Ready? */
bool jobs_pod_group_pods_ready(const jobs_pod_group_t *g);

/* One entry of a Workload's status.reclaimablePods. */
typedef struct jobs_reclaimable_s {
    char name[JOBS_POD_ROLE_MAX + 1]; /* the pod set: a role */
    int32_t count;
} jobs_reclaimable_t;

/* Kueue's ReclaimablePods for group `g`: per role, the kept pods that succeeded (their quota can
 * go back while the rest of the group runs), in the order the roles are first met; none for a
 * serving group. Fills out[0..*n) (JOBS_PODSETS_MAX entries); ERR_NOMEM only. */
err_t jobs_pod_group_reclaimable(const jobs_pod_group_t *g, jobs_reclaimable_t *out, size_t *n,
                                 err_msg_t *msg);

#endif
