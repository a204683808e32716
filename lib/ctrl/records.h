/* records -- what the operator keeps of each watched object: typed, compact, decoded once. */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_CTRL_RECORDS_H
#define SLUICE_CTRL_RECORDS_H

#include "jobs/framework.h"
#include "model/object.h"
#include "util/err.h"
#include "util/intern.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

/*
 * The informers' codecs (kube/informer.h) turn every object the API server sends into one of
 * these, once per resourceVersion. They hold what the reconcilers read and nothing else: no
 * managedFields, no pod templates, no annotations nobody reads. The server's JSON is gone once
 * the change handler has run; writes build their JSON from these records.
 *
 *   Namespace, ResourceFlavor, Cohort, ClusterQueue, LocalQueue, WorkloadPriorityClass,
 *   PriorityClass  -> ctrl_qobj_t: lib/model's typed object, plus the few raw parts written back
 *   Workload       -> ctrl_wl_t:   a workload_t, complete until the change handler has fed the
 *                                  engine, then without pod sets, labels or annotations (and,
 *                                  once Finished, without its pod sets' names and counts,
 *                                  admission or conditions but Finished: ctrl_wl_retire()); plus
 *                                  the pod sets' names and counts, owner, requeue state, the pod
 *                                  sets' template digest
 *   a job of any kind of the framework table (batch/v1 Job, JobSet, ...; jobs/framework.h)
 *                  -> ctrl_job_t:  what the kind's entry reads from it (held, phase, active,
 *                                  pods ready, pod-set counts), the queue-name and
 *                                  priority-class labels, owner, and the digest of what a stop
 *                                  restores: no pod template, no other label
 *
 * An object that fails to decode still gets a record, marked invalid with the reason: it is in
 * the cache (so deletes and relists stay exact) but the engine and reconcilers leave it alone.
 */

/* The controlling ownerReference of an object, all NULL when it has none. */
typedef struct ctrl_owner_s {
    char *api_version; /* owned */
    char *kind;        /* owned */
    char *name;        /* owned */
    char *uid;         /* owned */
} ctrl_owner_t;

/* A queue-side object. */
typedef struct ctrl_qobj_s {
    object_t obj;    /* decoded (status is not) */
    bool valid;      /* obj holds the decoded object */
    char *invalid;   /* owned: why not ("spec.x: ..."), or NULL */
    char *no_effect; /* owned: its settings that have no effect in sluice ("spec.x: ...; ..."),
                        or NULL */
    json_t *keep;    /* owned: ClusterQueue/LocalQueue/Cohort: their status; ResourceFlavor:
                        {nodeLabels,  tolerations} of its spec; else NULL */
} ctrl_qobj_t;

/* A pod set of a Workload as the reconcilers read it (spec.podSets[]): 16 bytes where lib/model's
 * pod_set_t, which the engine reads, is 208. */
typedef struct ctrl_podset_s {
    char *name; /* owned, or shared in an interned record */
    int32_t count;
    bool has_min_count; /* minCount set: a partial admission may lower the count */
} ctrl_podset_t;

/* A Workload. */
typedef struct ctrl_wl_s {
    workload_t wl;          /* complete until ctrl_wl_strip(); then without pod sets (read podsets),
                               and meta without labels and annotations */
    ctrl_podset_t *podsets; /* owned: the pod sets' names and counts (valid records) */
    bool stripped;
    bool interned;      /* the strings many Workloads repeat (namespace, queue, conditions, flavors,
                           ...) are shared (util/intern.h): read them, never free or change them */
    bool valid;         /* decoded (else only wl.meta's name/namespace/uid/rv are set) */
    bool retired;       /* finished and fed to the engine: reduced by ctrl_wl_retire() */
    bool was_reserved;  /* retired: what ctrl_wl_reserved() answered before */
    bool was_on_hold;   /* retired: what ctrl_wl_on_hold() answered before */
    uint16_t npodsets;  /* in the padding: the first 65,535 (Kueue's CRD allows 8) */
    char *invalid;      /* owned: why not, or NULL */
    ctrl_owner_t owner; /* controlling owner (a Job) */
    bool pod_owned;     /* every ownerReference (at least one) is a core/v1 Pod and none is the
                           controller: a pod group's Workload (pods.c) */
    bool finalizer;     /* kueue.x-k8s.io/resource-in-use present */
    bool has_requeue;   /* status.requeueState present */
    bool ready_watched; /* counted in the controller's ready_watched (readiness.c) */
    int32_t requeue_count;
    int64_t requeue_at;     /* status.requeueState.requeueAt, seconds; 0 when absent */
    uint64_t podset_digest; /* jobs_podsets_digest() of spec.podSets */
    char *no_effect; /* owned: "path: message; ..." of the settings that have no effect (decode
                        and validate_no_effect() warnings), NULL when none */
} ctrl_wl_t;

/* A job of one of the framework's kinds (for batch/v1 Job: the configured Job resource). About
 * 200 bytes plus its names: 50,000 of them fit in about 15 MB. */
typedef struct ctrl_job_s {
    object_meta_t meta;  /* name, namespace, uid, resourceVersion, deleting only */
    bool valid;          /* its pod sets could be read */
    char *invalid;       /* owned: why not ("spec.replicatedJobs: ..."), or NULL */
    bool unresolved;     /* invalid because the object it names (a TrainJob's runtime) is
                            not found */
    ctrl_owner_t owner;  /* controlling owner */
    char *queue_name;    /* owned: label kueue.x-k8s.io/queue-name, or NULL */
    char *priority;      /* owned: label kueue.x-k8s.io/priority-class, or NULL */
    bool suspended;      /* kind->suspended() */
    bool active;         /* kind->active(): pods still running */
    bool pods_ready;     /* kind->pods_ready() */
    bool skip;           /* kind->skip(): left alone although queued */
    bool stopping;       /* batch/v1 Job: annotation kueue.x-k8s.io/stopping=true (suspended by
                            a stop whose restore is not written yet; Kueue's Job.IsSuspended()) */
    bool has_start_time; /* status.startTime set on a kind whose template it locks (batch/v1
                            Job): cleared before a restore */
    jobs_phase_t phase;  /* kind->phase() */
    char *message;       /* owned: the finish's message, or NULL */
    uint8_t npod_sets;
    int32_t counts[JOBS_PODSETS_MAX]; /* pod-set counts as the object is now */
    int32_t *reclaim; /* owned: per pod set (npod_sets), its reclaimable pods (the kind's
                         reclaimable(): pods done for good), or NULL when none has any */
    uint64_t digest;  /* jobs_digest(): what a stop restores */
    json_t *pod;      /* owned: a kind admitted through its pods' gate (JOBS_ADMIT_POD): the Pod's
                         skeleton (ctrl_pod_skeleton()), else NULL */
    json_t *raw;      /* owned: a kind whose pod sets live in another object (its resolve(): a
                         TrainJob): the object as read, resolved again (ctrl_job_resolve()) when the
                         object it names changes; else NULL */
} ctrl_job_t;

/* The kinds a record may be decoded as (apiVersion and kind for lib/model: list items carry
 * neither), or a kind of the framework table. */
typedef struct ctrl_record_kind_s {
    const char *api_version;
    const char *kind;
    const jobs_kind_t *job; /* borrowed (static table): a job kind, decoded to ctrl_job_t */
    jobs_find_fn find;      /* a job kind with resolve(): where the object it names is found
                               (the controller's caches), with find_data; NULL: nowhere */
    void *find_data;
    util_intern_t *strings; /* borrowed: the table a Workload's repeated strings are shared in
                               (the controller's; outlives every record), NULL: not shared */
} ctrl_record_kind_t;

/* What job `j` of kind rk->job reads from its pod sets -- valid / invalid, counts, pods_ready,
 * digest -- from `obj` (borrowed), resolved with rk->find for a kind with resolve() (a TrainJob
 * whose runtime is not found is invalid: "runtime 'x' not found"). Called by
 * ctrl_record_decode() and again, with j->raw, when that other object changes. false on
 * out-of-memory (the fields may then be partly set). */
bool ctrl_job_resolve(const ctrl_record_kind_t *rk, ctrl_job_t *j, json_t *obj);

/* Decode `obj` (borrowed) as `rk`: a new record (ctrl_job_t when rk->job is set, else
 * ctrl_wl_t or ctrl_qobj_t by rk->kind), or NULL on out-of-memory only. */
void *ctrl_record_decode(const ctrl_record_kind_t *rk, json_t *obj);

/*
 * Does an event of a queue-side object, `old` to `rec` (either NULL: added or deleted), change
 * what the engine reads? ClusterQueues, LocalQueues and Cohorts change their spec only with a new
 * metadata.generation (their status is a subresource): an update that keeps the generation,
 * labels, annotations, deletion mark and validity is a status write -- most often sluice's own,
 * echoed by the watch -- and feeding it would rebuild the engine's tree and requeue every parked
 * workload for nothing. Kinds without a status always feed; an invalid object only when its
 * problem changes.
 */
bool ctrl_qobj_feeds_engine(const ctrl_qobj_t *old, const ctrl_qobj_t *rec);

/* The parts of Pod `pod` the pod reconcilers (pods.c) read, as a new object, NULL on
 * out-of-memory: metadata (name, namespace, uid, resourceVersion, creationTimestamp,
 * deletionTimestamp, deletionGracePeriodSeconds, labels, annotations with the role-hash annotation
 * set to the Pod's role, finalizers, ownerReferences), spec.schedulingGates and spec.nodeName,
 * status (phase, message, conditions) -- what lib/jobs' pod-group functions read, without the
 * containers. */
json_t *ctrl_pod_skeleton(const json_t *pod);

/* Free a record of `rk`'s kind; NULL-safe. */
void ctrl_record_free(const ctrl_record_kind_t *rk, void *rec);

/* Drop what only the engine needed from record `w` of `rk`'s kind (wl.pod_sets, labels,
 * annotations; its podsets stay): call once the engine has been fed. Idempotent. */
void ctrl_wl_strip(const ctrl_record_kind_t *rk, ctrl_wl_t *w);

/*
 * Reduce finished record `w` of `rk`'s kind (stripped first if it is not yet) to what the readers
 * of a finished Workload read, once the engine has been fed its finish: metadata (without labels
 * and annotations), queue and priority names, spec.active, the condition flags (wl.conditions),
 * the Finished condition, status.admissionChecks (a finished Workload's ProvisioningRequests are
 * deleted by them), owner, finalizer and requeue state. Gone: podsets, status.admission,
 * every other condition, reclaimablePods, clusterName, nominatedClusterNames, unhealthyNodes.
 * ctrl_wl_reserved() and ctrl_wl_on_hold() answer as before; ctrl_wl_json() answers NULL (a
 * finished Workload gets no status write). A no-op unless `w` is valid and Finished; idempotent.
 * Out of memory keeps all its conditions (only less compact). docs/performance.md, stop 29.
 */
void ctrl_wl_retire(const ctrl_record_kind_t *rk, ctrl_wl_t *w);

/* Condition `type` of Workload `w` (borrowed), or NULL. */
const condition_t *ctrl_wl_cond(const ctrl_wl_t *w, const char *type);

/* Is condition `type` of `w` "True"? */
bool ctrl_wl_is(const ctrl_wl_t *w, const char *type);

/* Does `w` hold quota in the API (status.admission + QuotaReserved=True)? For a retired record:
 * the answer before ctrl_wl_retire() (its admission is gone). */
bool ctrl_wl_reserved(const ctrl_wl_t *w);

/* Is `w` on hold (Kueue's workload.IsOnHold: QuotaReserved=False reason OnHold, written for a
 * StatefulSet scaled to zero)? Such a Workload keeps no quota and is not queued. For a retired
 * record: the answer before ctrl_wl_retire(). */
bool ctrl_wl_on_hold(const ctrl_wl_t *w);

/* A small JSON view of `w` for the status-patch builders (wlstatus.h, podsready.h), which read
 * metadata (name, namespace, resourceVersion, generation), spec.active and spec.queueName,
 * status.conditions, status.admission, status.requeueState and status.unhealthyNodes: a new
 * reference, NULL on out-of-memory and for a retired record (ctrl_wl_retire(): no status is built
 * from it). */
json_t *ctrl_wl_json(const ctrl_wl_t *w);

/* The object's resourceVersion as an integer (etcd revision); 0 when absent or not a number. */
uint64_t ctrl_rv_num(const char *rv);

/* Release what `o` owns. */
void ctrl_owner_fini(ctrl_owner_t *o);

/* Does `m` carry sluice's (Kueue's) kueue.x-k8s.io/resource-in-use finalizer? */
bool ctrl_meta_has_finalizer(const object_meta_t *m);

#endif
