/* ctrl_int -- internals shared by the files of the ctrl module (ctrl.c, reconcile.c, admit.c). */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_CTRL_INT_H
#define SLUICE_CTRL_INT_H

#include "ctrl/ctrl.h"
#include "ctrl/podindex.h"
#include "ctrl/problems.h"
#include "ctrl/records.h"
#include "ctrl/workqueue.h"
#include "ctrl/writer.h"
#include "inventory/capacity.h"
#include "kube/informer.h"
#include "model/object.h"
#include "obs/estimate.h"
#include "util/hmap.h"

#define CTRL_KEY_MAX 512

/* Kinds of objects job kinds read besides their own (deps.c). */
#define CTRL_DEPS_MAX 8

/* Engine cycles run at most this often (ctrl.c, pass()). */
#define CTRL_CYCLE_INTERVAL_MS 50

/* Iterate the cache of kind `k`: `key` (const char *) and `rec` (the kind's record pointer:
 * ctrl_qobj_t *, ctrl_wl_t * or ctrl_job_t *) per object. A job kind that is skipped (its CRD
 * absent) may have no informer: nothing is iterated. */
#define CTRL_FOREACH(c, k, key, rec) \
    for (size_t pos_##rec = 0;       \
         (c)->inf[k] != NULL &&      \
         kube_informer_next((c)->inf[k], &pos_##rec, &(key), (void **)&(rec));)

/* The writes the controller makes; each has one continuation in ctrl__on_done(). */
typedef enum {
    CTRL_OP_WL_CREATE = 0,   /* POST a Workload for a job (busy: the job) */
    CTRL_OP_WL_ADMIT,        /* status.admission + QuotaReserved/Admitted (busy: the Workload) */
    CTRL_OP_WL_EVICT,        /* Evicted (+Preempted) */
    CTRL_OP_WL_RELEASE,      /* admission cleared after the Job stopped */
    CTRL_OP_WL_FINISH,       /* Finished */
    CTRL_OP_WL_PENDING,      /* QuotaReserved=False with the engine's explanation */
    CTRL_OP_WL_FINALIZER,    /* finalizer removed */
    CTRL_OP_WL_DELETE,       /* orphaned Workload deleted */
    CTRL_OP_WL_DEACTIVATE,   /* spec.active=false (maximum execution time) */
    CTRL_OP_WL_QUEUE,        /* spec.queueName follows the suspended Job's queue-name label */
    CTRL_OP_WL_PRIORITY,     /* spec.priorityClassRef/priority follow the priority-class label */
    CTRL_OP_WL_PODSREADY,    /* PodsReady condition from the Job's ready pods */
    CTRL_OP_WL_BACKOFF,      /* Requeued=True BackoffFinished: the requeue backoff is over */
    CTRL_OP_WL_CHECKS,       /* Admitted=True: every admission check is Ready (checks.c) */
    CTRL_OP_JOB_START,       /* unsuspend + merge the admission into the template */
    CTRL_OP_JOB_SUSPEND,     /* spec.suspend=true */
    CTRL_OP_JOB_CLEAR_START, /* status.startTime=null so the template may change */
    CTRL_OP_JOB_RESTORE,     /* template back to the Workload's podset */
    CTRL_OP_QUEUE_STATUS,    /* ClusterQueue / LocalQueue status */
    CTRL_OP_QUEUE_FINALIZER, /* ClusterQueue / ResourceFlavor finalizer removed */
    CTRL_OP_EVENT,           /* core/v1 Event */
    CTRL_OP_WL_VERIFY,       /* GET after an admission write whose outcome is unknown */
    CTRL_OP_POD_STOP,        /* Pod: condition TerminationTarget, then DELETE (pods.c) */
    CTRL_OP_POD_FINALIZER,   /* Pod: finalizer kueue.x-k8s.io/managed removed */
    CTRL_OP_POD_DELETE,      /* Pod: an excess member of a group deleted */
    CTRL_OP_POD_OWNER,       /* StatefulSet / LeaderWorkerSet: GET it, LIST its Pods (no write) */
    CTRL_OP_POD_MARK,        /* Pod: joins its serving owner's pod group */
    CTRL_OP_WL_IDLE,         /* condition sluice.dev/Idle (idle reclaim, idlectl.c) */
    CTRL_OP_EXT_OWNER,       /* GET an externalFrameworks owner's metadata (extowner.c) */
    CTRL_OP_WL_RECLAIM,      /* status.reclaimablePods from the job's pods done for good */
    CTRL_OP_WL_HOLD,         /* QuotaReserved=False OnHold / out of it (a StatefulSet at 0) */
    CTRL_OP_WL_REPLACE,      /* status.admission after a failed node's replacement */
    CTRL_OP_WL_UNHEALTHY,    /* status.unhealthyNodes: a failed node recorded or one healthy
                                again removed (nodewatch.c) */
    CTRL_OP_PROV,            /* ProvisioningRequest check: GET a Workload, create a request or a
                                PodTemplate, delete a request (provctl.c, op->res) */
} ctrl_op_kind_t;

typedef struct ctrl_op_s ctrl_op_t;

/* The start-time estimates (estimate.c): the last result, and the run in flight. */
typedef struct ctrl_estimate_s {
    estimate_means_t means; /* observed runtimes per LocalQueue and priority class, ... */
    estimate_t *last;       /* owned: the last run's result (read by visibility and /metrics) */
    estimate_job_t *job;    /* owned: the run in flight on the thread pool, or NULL */
    uv_work_t work;         /* its request */
    err_t job_rc;           /* its outcome (written by the worker, read after it) */
    err_msg_t job_msg;
    uint64_t next_run;   /* loop time (ms) of the next run */
    uint64_t prepare_ns; /* CPU time of the job's prepare phase (on the loop) */
    uint64_t run_ns;     /* CPU time of its forward run (on the worker) */
    double last_seconds; /* CPU time of the last run, both phases */
    uint64_t runs, failures;
} ctrl_estimate_t;

typedef struct ctrl_metrics_s ctrl_metrics_t; /* metrics.c */
typedef struct acct_log_s acct_log_t;         /* acct/acct.h */
typedef struct ctrl_idle_s ctrl_idle_t;       /* idlectl.c */
typedef struct ctrl_nodes_s ctrl_nodes_t;     /* nodewatch.c */
typedef struct ctrl_prov_s ctrl_prov_t;       /* provctl.c */

/* Send the request of `op` (its fields below); false when it could not be submitted. */
typedef bool (*ctrl_send_fn)(ctrl_op_t *op);

struct ctrl_op_s {
    ctrl_t *c;
    ctrl_op_kind_t op;
    ctrl_write_class_t cls;     /* the writer's class (writer.h); ADMISSION unless set */
    ctrl_send_fn send;          /* how to send it (set by the ctrl__patch/... helpers) */
    json_t *body;               /* owned: the patch or object to send */
    bool started;               /* the writer counted it in flight */
    ctrl_op_t *next;            /* in the backlog */
    ctrl_kind_t kind;           /* the kind written */
    char *key;                  /* owned: the object written ("ns/name" or "name") */
    char *busy;                 /* owned: busy-set key released when done, or NULL */
    json_t *data;               /* owned: op-specific (admission info, podset, eviction...) */
    json_t *nodes;              /* owned: JOB_START node selector */
    json_t *tols;               /* owned: JOB_START tolerations */
    bool mutate_failed;         /* the mutate function refused (e.g. nodeSelector conflict) */
    bool changed;               /* the mutate function changed the object */
    const char *verb;           /* static: "patch", "create", "update", "delete" (for problems) */
    const char *sub;            /* static: subresource written, or NULL */
    const kube_resource_t *res; /* the resource written when not c->res[kind] (provctl.c) */
    err_msg_t mutate_msg;
};

struct ctrl_s {
    uv_loop_t *loop;
    kube_client_t *client;    /* borrowed */
    const ctrl_config_t *cfg; /* borrowed */
    ctrl_log_fn log;
    void *log_data;
    sched_t *sched;                    /* owned */
    int nkinds;                        /* CTRL_JOB + the enabled job kinds sluice has */
    kube_informer_t *inf[CTRL__KINDS]; /* owned */
    kube_resource_t res[CTRL__KINDS];
    util_intern_t strings;                 /* the Workload records' shared strings (records.h) */
    ctrl_record_kind_t rkind[CTRL__KINDS]; /* what each informer's codec decodes (rkind[k].job:
                                              the job kinds' table entries) */
    char api_version[CTRL__KINDS][128];    /* job kinds: "batch/v1" or the configured
                                              group/version, "jobset.x-k8s.io/v1alpha2", ... */
    char noun[CTRL__KINDS][32];            /* job kinds: the kind in lower case, as logs name it
                                              ("job ns/name: started", "jobset ...") */
    bool synced[CTRL__KINDS];              /* its first LIST completed */
    bool skipped[CTRL__KINDS];             /* a job kind whose resource the API server does not
                                              serve (CRD absent): reported once, not waited for */
    util_hmap_t overlay[CTRL__KINDS];      /* Workload, jobs: key -> record (owned) of what this
                                              process wrote last, until the cache catches up */
    podindex_t pod_groups;                 /* the cached Pods of each pod group (pods.c) */
    util_hmap_t ext_owners;                /* externalFrameworks owners read (extowner.c) */
    util_hmap_t ext_disc;                  /* their group/versions' API discovery (extowner.c) */
    uint64_t ext_swept;                    /* loop ms of the last sweep of ext_owners */
    podindex_t ext_wls;         /* their Workloads: owner uid -> Workload keys (extowner.c) */
    util_hmap_t busy;           /* "<kind>:<key>" -> index 0 while a write is in flight */
    ctrl_wq_t jobs_q;           /* jobs to reconcile, "<kind>:<key>" (workqueue.h) */
    ctrl_wq_t wls_q;            /* Workloads to reconcile */
    util_hmap_t evictions;      /* wl key -> json_t * (owned) {reason, preempt, message[,
                                   requeueState]}: evictions still to write */
    util_hmap_t verify;         /* wl key -> index: loop ms of its next verification GET */
    util_hmap_t status_checked; /* "<kind>:<key>" -> index: loop ms its status was last looked at */
    uv_timer_t tick;            /* coalesced reconcile pass */
    uint64_t next_cycle;        /* loop time before which no engine cycle runs (pacing) */
    uv_timer_t periodic;        /* once a second: pending explanations, queue status */
    size_t open_handles;
    size_t synced_kinds;
    size_t inflight;
    bool queues_fed; /* the queue-side kinds are listed and in the engine; Workloads and Jobs
                        are being listed */
    bool fed;        /* everything listed and in the engine: reconciles and cycles may run */
    bool tas;        /* topology-aware scheduling on: Topologies served at the first LIST */
    bool refeed;     /* an object could not go into the engine for memory: the periodic timer
                        feeds the caches' objects again (ctrl.c, refeed()) */
    bool leader;
    bool writes_stopped;
    bool closing;
    bool queue_dirty;     /* ClusterQueue/LocalQueue statuses need recomputing */
    size_t ready_watched; /* cached Workloads the readiness tick has something to check on */
    bool blocked;         /* waitForPodsReady.blockAdmission holds the cycles back */
    ctrl_stats_t stats;
    /* The objects some enabled job kind's pod sets come from (a TrainJob's training runtimes,
     * jobs_kind_t.deps): one raw-JSON informer per kind of them (deps.c). */
    int ndeps;
    kube_informer_t *dep_inf[CTRL_DEPS_MAX];   /* owned */
    const jobs_dep_kind_t *dep[CTRL_DEPS_MAX]; /* borrowed (static table) */
    bool dep_absent[CTRL_DEPS_MAX];            /* its LIST answered 404: CRD not installed */
    util_hmap_t dep_missing; /* "<kind>:<key>" of jobs told (an Event) that what they name is
                                missing, so that it is said once per job (deps.c) */
    /* owned: the Prometheus registry and its families (metrics.c) */
    ctrl_metrics_t *metrics;
    problems_t *problems; /* owned: what is wrong around us (health.c) */
    acct_log_t *acct;     /* owned: the accounting log (acctlog.c), NULL when not configured */
    ctrl_idle_t *idle;    /* owned: idle reclaim (idlectl.c), NULL when not configured */
    ctrl_nodes_t *nodes;  /* owned: Nodes and bound Pods (nodewatch.c), NULL when not watched */
    ctrl_prov_t *prov;    /* owned: the ProvisioningRequest admission check (provctl.c) */
    ctrl_writer_t writer; /* the write budget (writer.h) */
    ctrl_estimate_t est;  /* start-time estimates (estimate.c) */
    ctrl_op_t *backlog;   /* owned: ADMISSION writes waiting for the writer's window, FIFO */
    ctrl_op_t *backlog_tail;
    void (*on_closed)(void *data);
    void *on_closed_data;
};

/* Log at `level` (ctrl_log_level_t). */
void ctrl__log(ctrl_t *c, int level, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Unix time now: milliseconds and seconds. */
int64_t ctrl__now_ms(void);

/* The freshest known Workload / job of `kind` `key` (borrowed): the cache, or what this process
 * wrote last while the cache has not caught up; NULL when absent. */
ctrl_wl_t *ctrl__wl(ctrl_t *c, const char *key);
ctrl_job_t *ctrl__job(ctrl_t *c, ctrl_kind_t kind, const char *key);

/* Is `kind` one of the job kinds (CTRL_JOB ... nkinds)? Its table entry. */
bool ctrl__is_job(const ctrl_t *c, ctrl_kind_t kind);
const jobs_kind_t *ctrl__jobs_kind(const ctrl_t *c, ctrl_kind_t kind);

/* The job kind watching `api_version` ("group/version") and `kind` (any version of the kind's
 * group), or CTRL__KINDS when none is enabled. */
ctrl_kind_t ctrl__job_kind(const ctrl_t *c, const char *api_version, const char *kind);

/* The cached queue-side object of `kind` named `key` (borrowed), NULL when absent or when it
 * could not be decoded. */
const object_t *ctrl__q(ctrl_t *c, ctrl_kind_t kind, const char *key);
/* Its record (status and raw parts kept), the same rules. */
const ctrl_qobj_t *ctrl__qrec(ctrl_t *c, ctrl_kind_t kind, const char *key);

/* "ns/name" (or "name") of `m` into buf. */
const char *ctrl__meta_key(const object_meta_t *m, char *buf, size_t n);

/* The controlling owner job of Workload `w` as a key into buf, its kind in *kind (its uid in
 * *uid, may be NULL), or NULL when the Workload has no owner of an enabled job kind. */
const char *ctrl__owner_job(ctrl_t *c, const ctrl_wl_t *w, ctrl_kind_t *kind, char *buf, size_t n,
                            const char **uid);

/* Queue a reconcile of the job of `kind` / the Workload `key` and schedule a pass. */
void ctrl__mark_job(ctrl_t *c, ctrl_kind_t kind, const char *key);
void ctrl__mark_wl(ctrl_t *c, const char *key);
/* Mark Workload `key` and the job that owns it (if any) for a reconcile: after a write of the
 * Workload answers, whose watch event may have come while the write held it busy. */
void ctrl__mark_wl_and_job(ctrl_t *c, const char *key);
/* Schedule a pass soon. */
void ctrl__kick(ctrl_t *c);

/* A merge patch of `m`'s finalizers without kueue.x-k8s.io/resource-in-use, conditional on its
 * resourceVersion; NULL on out-of-memory. */
json_t *ctrl__finalizer_patch(const object_meta_t *m);

/* The key "<kind>:<key>" of the busy and status_checked maps, into buf. */
void ctrl__kind_key(ctrl_kind_t kind, const char *key, char *buf, size_t n);
/* Is a write for "<kind>:<key>" in flight? */
bool ctrl__busy(ctrl_t *c, ctrl_kind_t kind, const char *key);
/* ctrl__busy(), and when busy, remember that a reconcile passed over "<kind>:<key>": the key is
 * queued again when the write holding it ends, so that what changed meanwhile is not lost. */
bool ctrl__busy_again(ctrl_t *c, ctrl_kind_t kind, const char *key);
/* Is an admission write (or its verification) of Workload `key` in flight? */
bool ctrl__admitting(ctrl_t *c, const char *key);
/* Mark "<kind>:<key>" busy (held for a verification) / not busy (ERR_NOMEM: not marked). */
err_t ctrl__busy_set(ctrl_t *c, ctrl_kind_t kind, const char *key);
void ctrl__busy_clear(ctrl_t *c, ctrl_kind_t kind, const char *key);

/* Record the eviction of Workload `key` still to write (`e`, stolen: {reason, preempt, message
 * [, requeueState]}), replacing any; ERR_NOMEM (e released) when it cannot be kept. */
err_t ctrl__eviction_set(ctrl_t *c, const char *key, json_t *e);
/* The eviction recorded for `key` (borrowed), or NULL. */
json_t *ctrl__eviction(ctrl_t *c, const char *key);
/* Forget the eviction recorded for `key`, if any. */
void ctrl__eviction_drop(ctrl_t *c, const char *key);

/* A new op (NULL on OOM); `busy_kind`/`busy_key` (key may be NULL) marks what it holds. */
ctrl_op_t *ctrl__op_new(ctrl_t *c, ctrl_op_kind_t op, ctrl_kind_t kind, const char *key,
                        ctrl_kind_t busy_kind, const char *busy_key);
/* Release an op that was never submitted. */
void ctrl__op_free(ctrl_op_t *op);
/* Final callback of every write. */
void ctrl__on_done(const kube_result_t *res, void *data);
/* Send `op` (op->send set) when the writer allows: an ADMISSION write waits in the backlog for
 * the window; another class is given up (the op released, false returned) when its budget is
 * spent -- ask ctrl__can_write() before building one. False too when it could not be submitted
 * (the op is released). */
bool ctrl__submit(ctrl_t *c, ctrl_op_t *op);
/* Could a write of class `cls` start now? */
bool ctrl__can_write(ctrl_t *c, ctrl_write_class_t cls);
/* Submit a merge patch (`patch` borrowed) on `op->kind`/`op->key` (`sub` "status" or NULL)
 * through ctrl__submit(). */
bool ctrl__patch(ctrl_t *c, ctrl_op_t *op, const char *sub, json_t *patch);

/* Record a core/v1 Event about the object of `kind` with metadata `m`: `type` "Normal" or
 * "Warning". Within the writer's Event budget; beyond it the Event is dropped and counted. */
void ctrl__event(ctrl_t *c, ctrl_kind_t kind, const object_meta_t *m, const char *type,
                 const char *reason, const char *fmt, ...) __attribute__((format(printf, 6, 7)));

/* ---- health (health.c) ------------------------------------------------------------------ */

/* Job `key` of `kind` could not be resolved (`why`, from jobs_resolve()): say it once, as an
 * Event on the job (naming the missing CRD when its kind is not served); `resolved` true: it is
 * resolved now, forget it. */
void ctrl__deps_report(ctrl_t *c, ctrl_kind_t kind, const char *key, bool resolved,
                       const char *why);

/* Create c->problems. */
err_t ctrl__health_init(ctrl_t *c);
/* Informer handler: a failed LIST/WATCH becomes a problem, a success clears it. */
void ctrl__on_informer_error(kube_informer_t *inf, const kube_result_t *res, const char *verb,
                             void *data);
/* Job kind `k` is not served (its first LIST found no such resource): said once, as a problem
 * that stays open, and not waited for. */
void ctrl__kind_skipped(ctrl_t *c, ctrl_kind_t k, const kube_result_t *res);

/* ---- engine (ctrl.c) --------------------------------------------------------------------- */

/* Bring the engine's record of Workload `key` in line with `w`, a version just decoded from the
 * API (a watch event or a write's answer, not yet stripped; NULL: deleted), unless a newer one
 * is known. Strips `w` afterwards. */
void ctrl__engine_wl(ctrl_t *c, const char *key, ctrl_wl_t *w);

/* Forget an admission the API does not hold (never written): the engine releases the quota and
 * queues the Workload again at its old place. */
void ctrl__unadmit(ctrl_t *c, const char *key);

/* ---- reconcilers (reconcile.c) ----------------------------------------------------------- */

/* Level-based reconcile of one job of `kind` / one Workload (leader only). */
void ctrl__reconcile_job(ctrl_t *c, ctrl_kind_t kind, const char *key);
void ctrl__reconcile_wl(ctrl_t *c, const char *key);
/* Continuations of Job/Workload writes. */
void ctrl__job_done(ctrl_t *c, ctrl_op_t *op, const kube_result_t *res);

/* Shared with pods.c: is `j` managed (queue name, or manageJobsWithoutQueueName in a selected
 * namespace)? The node labels and tolerations of the flavors of `psa` (new references). The
 * priority of `wl` built from `obj` (ExtractPriority). POST the Workload `wl_key` of job
 * `job_key`, built from a fresh GET. Remove the resource-in-use finalizer of Workload `key`.
 * Write status patch `patch` (consumed) on Workload `key` as op `kind`. */
bool ctrl__job_managed(ctrl_t *c, const ctrl_job_t *j);

/* Queue an update of job object `key` of `kind` (op `op_kind`, sent by `send`), the op holding
 * references to `data`, `nodes` and `tols` (each may be NULL). False when out of memory. */
bool ctrl__job_update(ctrl_t *c, ctrl_op_kind_t op_kind, ctrl_kind_t kind, const char *key,
                      json_t *data, json_t *nodes, json_t *tols, ctrl_send_fn send);
err_t ctrl__flavor_info(ctrl_t *c, const pod_set_assignment_t *psa, json_t **nodes, json_t **tols,
                        err_msg_t *msg);
err_t ctrl__resolve_priority(ctrl_t *c, const json_t *obj, workload_t *wl, err_msg_t *msg);
void ctrl__create_workload(ctrl_t *c, ctrl_kind_t kind, const char *job_key, const char *wl_key);
void ctrl__wl_remove_finalizer(ctrl_t *c, const char *key, const ctrl_wl_t *w);
void ctrl__wl_status(ctrl_t *c, ctrl_op_kind_t kind, const char *key, json_t *patch);
/* Write status.reclaimablePods from one count per pod set of `w` (capped at each pod set's count)
 * unless the Workload already says so (reconcile.c). True when a write went out. */
bool ctrl__write_reclaimable(ctrl_t *c, const char *wkey, const ctrl_wl_t *w,
                             const int32_t *counts);
/* waitForPodsReady: Workload `wkey`'s PodsReady condition from `pods_ready`; true when a write
 * went out. */
bool ctrl__sync_pods_ready(ctrl_t *c, const char *wkey, const ctrl_wl_t *w, bool pods_ready);

/* ---- objects job kinds read besides their own (deps.c) ------------------------------------ */

/* Informers (not started) for the deps of every enabled job kind, and the record kinds' lookup
 * (ctrl_record_kind_t.find) pointed at them. ERR_NOMEM only. */
err_t ctrl__deps_new(ctrl_t *c);

/* Start them (with the queue-side kinds: a TrainJob listed later finds its runtime cached). */
err_t ctrl__deps_start(ctrl_t *c, err_msg_t *msg);

/* Close them; on_closed(data) fires once per informer. Returns how many will fire. */
size_t ctrl__deps_close(ctrl_t *c, void (*on_closed)(void *data), void *data);

/* A jobs_find_fn over `data`, a ctrl_t: the cached object `ref` names, or NULL. */
const json_t *ctrl__deps_find(void *data, const jobs_ref_t *ref);

/* ---- plain Pods and pod groups (pods.c) -------------------------------------------------- */

/* Reconcile the Pod `key` of `kind` (a JOBS_ADMIT_POD kind), or the pod group "@ns/name"
 * (leader only). */
void ctrl__reconcile_pods(ctrl_t *c, ctrl_kind_t kind, const char *key);
/* A serving owner's mark of one of its Pods (`op`, CTRL_OP_POD_MARK) is answered: a failure
 * has the owner look again after its backoff. */
void ctrl__pods_mark_done(ctrl_t *c, const ctrl_op_t *op, const kube_result_t *res);
/* A Pod of `kind` changed (`rec`, or the deleted `old`): queue its group, if any. */
void ctrl__pods_changed(ctrl_t *c, ctrl_kind_t kind, const ctrl_job_t *rec, const ctrl_job_t *old);
/* The cache of Pod `key` changed from `old` to `rec` (either NULL: added, deleted): keep the
 * group index (c->pod_groups) in step. Called for every change, before and after the caches are
 * synced. */
void ctrl__pods_index(ctrl_t *c, const char *key, const ctrl_job_t *rec, const ctrl_job_t *old);
/* Is Workload `key` a pod group's (a cached Pod names it as its group)? Queues the group. */
bool ctrl__pods_wl(ctrl_t *c, const char *key);
/* Workload `key` (`w`), which no cached Pod names as its group, is owned by Pods only: orphaned,
 * its finalizer removed and it is deleted (true); false when it is not a Pods' Workload. */
bool ctrl__pods_orphan(ctrl_t *c, const char *key, const ctrl_wl_t *w);
/* A child job (`j` of `kind`) of a parent Kueue admits whole: Kueue's shouldSuspendChildJob
 * (keep it suspended while the parent's Workload is not admitted). True when the job is a
 * child that was dealt with; false when it is a top-level job (no managed parent). */
bool ctrl__child_job(ctrl_t *c, ctrl_kind_t kind, const char *key, const ctrl_job_t *j);

/* ---- owners of integrations.externalFrameworks kinds (extowner.c) ------------------------- */

/* What was read of one external owner (PartialObjectMetadata, as Kueue reads it). */
typedef struct ctrl_extowner_s {
    bool found;         /* the GET found it (else 404) */
    char *uid;          /* owned, or NULL */
    char *queue_name;   /* owned: label kueue.x-k8s.io/queue-name, or NULL */
    ctrl_owner_t owner; /* its own controlling owner */
} ctrl_extowner_t;

typedef enum {
    CTRL_EXT_FOUND = 0, /* *out is the owner (borrowed until the next call) */
    CTRL_EXT_PENDING,   /* being read: the child `kind` `key` is reconciled again then */
    CTRL_EXT_GONE,      /* not found (or the reference is unusable) */
} ctrl_ext_t;

/* The external owner `ref` of a child in namespace `ns`, read recently, or a GET submitted for
 * it on behalf of the child (`kind`, `key`: held busy, marked again at the answer). */
ctrl_ext_t ctrl__extowner(ctrl_t *c, const char *ns, const ctrl_owner_t *ref, ctrl_kind_t kind,
                          const char *key, const ctrl_extowner_t **out);
/* Release what was read. */
void ctrl__extowner_fini(ctrl_t *c);
/* The Workload cache of `key` changed from `old` to `rec` (either NULL): keep c->ext_wls. */
void ctrl__extowner_wl_changed(ctrl_t *c, const char *key, const ctrl_wl_t *rec,
                               const ctrl_wl_t *old);
/* The newest not finished Workload whose controller owner has `uid` (an external owner's), or
 * NULL. */
const ctrl_wl_t *ctrl__extowner_workload(ctrl_t *c, const char *uid);

/* ---- admission (admit.c) ----------------------------------------------------------------- */

/* Run engine cycles to quiescence and write the decisions (leader only). */
void ctrl__cycle(ctrl_t *c);
/* Send the verification GETs that are due (admission writes whose outcome is unknown). */
void ctrl__verifications(ctrl_t *c);
/* Retry evictions whose write has not landed. */
void ctrl__evictions(ctrl_t *c);
/* Write pending explanations and ClusterQueue/LocalQueue statuses that changed. */
void ctrl__statuses(ctrl_t *c);
/* Continuations of admission writes. */
void ctrl__admit_done(ctrl_t *c, ctrl_op_t *op, const kube_result_t *res);
/* Deactivate Workload `key` (spec.active=false) and record the eviction to write: Evicted
 * `reason` with `message`; `requeue_state` (borrowed, may be NULL) goes into the eviction patch
 * as status.requeueState (JSON null clears it). */
void ctrl__deactivate(ctrl_t *c, const char *key, const char *reason, const char *message,
                      json_t *requeue_state);

/* ---- admission checks (checks.c) --------------------------------------------------------- */

/* status.admissionChecks for a quota reservation with the checks `names` (name order): a check
 * the Workload already lists keeps its state, a new one is Pending. New reference, NULL on OOM. */
json_t *ctrl__checks_reserve_list(const workload_t *wl, char *const *names, size_t n,
                                  int64_t now_s);
/* status.admissionChecks after an eviction: every check Pending ("Reset to Pending after
 * eviction. Previously: <state>"); NULL when all already are (or on OOM). */
json_t *ctrl__checks_reset_list(const workload_t *wl, int64_t now_s);
/* Kueue's GetMaxRetryTime: the latest lastTransitionTime + requeueAfterSeconds (seconds since the
 * epoch) over the checks of `wl` in Retry that set a delay; 0 when none does. */
int64_t ctrl__checks_retry_at(const workload_t *wl);
/* Kueue's NeedsRequeueAtUpdate: the time (seconds) status.requeueState.requeueAt should move
 * to -- the checks' ctrl__checks_retry_at() when it is after `now_ms` and after `requeue_at_s`
 * (the current one, 0 when none) -- or 0 when it stays. */
int64_t ctrl__checks_requeue_at_update(const workload_t *wl, int64_t requeue_at_s, int64_t now_ms);
/* A check set to Retry (with requeueAfterSeconds) on Workload `key` (`w`) that is already
 * evicted or holds no quota: write requeueState.requeueAt later when Kueue would. */
void ctrl__checks_requeue_at(ctrl_t *c, const char *key, const ctrl_wl_t *w);
/* Act on the check states of Workload `key` (`w`, reserved in the API) the engine holds quota
 * for: Rejected deactivates, Retry evicts, all Ready admits (Admitted=True written). */
void ctrl__checks_sync(ctrl_t *c, const char *key, const ctrl_wl_t *w);
/* A check state's name as the API writes it ("Pending", "Ready", "Retry", "Rejected"). */
const char *ctrl__check_state_name(check_state_t s);
/* Merge the podSetUpdates of every check of `wl` for pod set `podset` into the node selector
 * `nodes`, tolerations `tols`, `labels` and `annotations` (objects/array, modified); a key set
 * to two values is ERR_CONFLICT. */
err_t ctrl__checks_podset_updates(const workload_t *wl, const char *podset, json_t *nodes,
                                  json_t *tols, json_t *labels, json_t *annotations,
                                  err_msg_t *msg);

/* Check state `s` as a whole status.admissionChecks entry (podSetUpdates, requeueAfterSeconds,
 * retryCount kept); `default_t_s` when it has no lastTransitionTime. NULL on OOM. */
json_t *ctrl__checks_entry(const admission_check_state_t *s, int64_t default_t_s);

/* ---- the ProvisioningRequest admission check (provctl.c) ---------------------------------- */

/* Create c->prov with its informers (ProvisioningRequestConfigs, ProvisioningRequests), not
 * started; ERR_NOMEM. */
err_t ctrl__prov_new(ctrl_t *c);
/* Start its informers (a kind not served is said by ctrl__prov_tick, never fatal). */
err_t ctrl__prov_start(ctrl_t *c, err_msg_t *msg);
/* Close its informers; on_closed(data) fires once per informer. Returns how many will fire. */
size_t ctrl__prov_close(ctrl_t *c, void (*on_closed)(void *data), void *data);
/* Free c->prov (after its informers are closed); NULL-safe. */
void ctrl__prov_free(ctrl_t *c);
/* Once a second (leader, fed): the Active condition of each AdmissionCheck of controllerName
 * kueue.x-k8s.io/provisioning-request, and the missing-CRD problem. */
void ctrl__prov_tick(ctrl_t *c);
/* Reconcile the provisioning checks of Workload `key` (`w`, leader): requests created and
 * deleted, their conditions written as check states. */
void ctrl__prov_wl(ctrl_t *c, const char *key, const ctrl_wl_t *w);

/* ---- waitForPodsReady (readiness.c) ------------------------------------------------------ */

/* Once a second: evict Workloads whose PodsReady timeout expired (or deactivate them past
 * backoffLimitCount) and end requeue backoffs that are due (leader only). */
void ctrl__pods_ready_tick(ctrl_t *c);
/* The Workload cache changed from `old` to `rec` (either NULL): keep the count of Workloads the
 * tick has something to check on, so that it walks the cache only when there is one. */
void ctrl__pods_ready_count(ctrl_t *c, ctrl_wl_t *rec, const ctrl_wl_t *old);
/* blockAdmission: does an admitted Workload still wait for its pods to be ready? */
bool ctrl__admission_blocked(ctrl_t *c);
/* Write QuotaReserved=False WaitingForPodsReady on each ClusterQueue's head while blocked. */
void ctrl__blocked_heads(ctrl_t *c, json_t *heads);

/* ---- accounting (acctlog.c) ------------------------------------------------------------- */

/* Open c->acct when the configuration names an accounting log (ERR_IO names the file). */
err_t ctrl__acct_open(ctrl_t *c, err_msg_t *msg);
/* Close c->acct (a final failure is logged); NULL-safe. */
void ctrl__acct_close(ctrl_t *c);
/* The Workload informer saw `old` become `rec` (NULL: deleted): when `old` held quota and `rec`
 * does not, the admission ended and its record is written (leader only). */
void ctrl__acct_changed(ctrl_t *c, const ctrl_wl_t *old, const ctrl_wl_t *rec);

/* ---- idle reclaim (idlectl.c) ----------------------------------------------------------- */

/* Create c->idle when the configuration has an idle-reclaim section (its Pod informer and query
 * client, not started); ERR_NOMEM, ERR_TLS name the part. */
err_t ctrl__idle_new(ctrl_t *c, err_msg_t *msg);
/* Start its Pod informer; the first query follows once it has listed. */
err_t ctrl__idle_start(ctrl_t *c, err_msg_t *msg);
/* Called once a second (leader, fed): start the query when the interval has passed. Its answer
 * warns and deactivates (docs/idle-reclaim.md). */
void ctrl__idle_tick(ctrl_t *c);
/* Close c->idle (NULL: nothing); `on_closed` fires once its handles are closed, only then. */
void ctrl__idle_close(ctrl_t *c, void (*on_closed)(void *data), void *data);
/* Append idle reclaim's counters to /metrics (nothing when off). */
err_t ctrl__idle_metrics_render(ctrl_t *c, metrics_buf_t *out);

/* ---- Nodes and bound Pods (nodewatch.c) ------------------------------------------------- */

/* Configuration annotation: watch Nodes and bound Pods without fragmentation-aware admission
 * (node capacity metrics and the quota-against-capacity condition only). */
#define CTRL_WATCH_NODES_ANNOTATION "sluice.dev/watch-nodes"
/* The ClusterQueue condition saying its nominal quota on some flavor is above what the flavor's
 * nodes can hold (a warning: nothing is refused). */
#define CTRL_COND_QUOTA_OVER_CAPACITY "sluice.dev/QuotaExceedsCapacity"

/* Does the configuration ask for Nodes (fragmentation-aware admission or watch-nodes "true")? */
bool ctrl__nodes_wanted(const ctrl_config_t *cfg);
/* Create c->nodes when wanted (its two informers, not started); ERR_NOMEM. */
err_t ctrl__nodes_new(ctrl_t *c, err_msg_t *msg);
/* Start them. */
err_t ctrl__nodes_start(ctrl_t *c, err_msg_t *msg);
/* Topology-aware scheduling needs the Nodes: create and start c->nodes now when not watched yet
 * (the first Topology fed); ERR_NOMEM, or the informers' start error. */
err_t ctrl__nodes_for_tas(ctrl_t *c, err_msg_t *msg);
/* Close c->nodes (NULL: nothing); `on_closed` fires once both informers are closed. */
void ctrl__nodes_close(ctrl_t *c, void (*on_closed)(void *data), void *data);
/* Feed every cached Node and Pod to the engine again (after an engine feed failed). */
void ctrl__nodes_refeed(ctrl_t *c);
/* Label `key` of the cached Node whose kubernetes.io/hostname is `hostname` (borrowed), NULL
 * when none or Nodes are not watched. */
const char *ctrl__node_label(ctrl_t *c, const char *hostname, const char *key);
/* Failed-node replacement across restarts: the nodes of Workload `key`'s status.unhealthyNodes
 * (its record `w`, reserved and not evicted) once the Nodes and Pods are listed -- a node gone,
 * or not Ready with none of its Pods left there, reported to the engine as failed; a node healthy
 * again (Ready, or its Pods still there) removed from the list. */
void ctrl__nodes_unhealthy(ctrl_t *c, const char *key, const ctrl_wl_t *w);
/* The status.unhealthyNodes write `op` has its answer `res`. */
void ctrl__nodes_unhealthy_done(ctrl_t *c, ctrl_op_t *op, const kube_result_t *res);
/* Cached Nodes (returned) and bound Pods (*pods); 0 when not watched. */
size_t ctrl__nodes_len(const ctrl_t *c, size_t *pods);

/* Quota against capacity over the caches (lib/inventory/capacity.c), with the arrays it borrows.
 * Valid until the caches change: build, use and release within one callback. */
typedef struct ctrl_capacity_s {
    capacity_t c;
    node_t *nodes; /* shallow copies of the cached Nodes */
    const flavor_t **flavors;
    const cluster_queue_t **cqs;
    const cohort_t **cohorts;
} ctrl_capacity_t;
/* ERR_NOT_FOUND when Nodes are not watched, ERR_NOMEM. */
err_t ctrl__capacity(ctrl_t *c, ctrl_capacity_t *out);
void ctrl__capacity_fini(ctrl_capacity_t *cap);
/* Set CTRL_COND_QUOTA_OVER_CAPACITY in ClusterQueue `cq`'s status (its "conditions" array):
 * True naming the first flavor and resource where the quotas it shares in exceed capacity,
 * else False. ERR_NOMEM. */
err_t ctrl__nodes_cq_condition(const ctrl_capacity_t *cap, const char *cq, json_t *status,
                               int64_t now_s);

/* One of the controller's open handles (or runs in flight) is done: after ctrl_close(), the
 * last one frees the controller. */
void ctrl__handle_released(ctrl_t *c);

/* ---- start-time estimates (estimate.c) ---------------------------------------------------- */

/* Set up / release c->est (a run in flight must have ended: ctrl_close waits for it). */
void ctrl__estimate_init(ctrl_t *c);
void ctrl__estimate_fini(ctrl_t *c);
/* Workload `key` finished (before the engine is told): its runtime joins the means of its
 * LocalQueue and priority class, LocalQueue and ClusterQueue (estimate_means_add). */
void ctrl__estimate_finished(ctrl_t *c, const char *key);
/* Called once a second: when the configured interval has passed and no run is in flight, start
 * one over the whole engine (copy on the loop, forward run on the thread pool). */
void ctrl__estimate_tick(ctrl_t *c);
/* The pause before the next run after one that cost `cost_ns` of CPU (the copy on the loop plus
 * the forward run): the interval, and at least 9 times that cost, so the estimate never takes
 * more than a tenth of a core however large the cluster (the engine's cycles pace themselves
 * the same way, ctrl.c). A costly run makes the estimates older, never the admissions slower. */
uint64_t ctrl__estimate_pause_ms(uint64_t interval_ms, uint64_t cost_ns);
/* The last estimated start (Unix ms) of pending workload `key`, or -1 when there is none. */
int64_t ctrl__estimate_start(const ctrl_t *c, const char *key);

/* ---- metrics (metrics.c): one call where each thing happens ------------------------------ */

/* Create / free c->metrics (families per the configuration's metrics switches). */
err_t ctrl__metrics_init(ctrl_t *c);
void ctrl__metrics_free(ctrl_t *c);
/* An engine cycle took `ns` of CPU and appended ds->items[from..]; `first` of its pass. */
void ctrl__metrics_cycle(ctrl_t *c, const sched_decisions_t *ds, size_t from, uint64_t ns,
                         bool first);
/* A decision is being applied (preemptions are counted here, as Kueue counts them when issued). */
void ctrl__metrics_decision(ctrl_t *c, const sched_decision_t *d);
/* Workload `key`'s admission to ClusterQueue `cq` is in the API. */
void ctrl__metrics_admitted(ctrl_t *c, const char *key, const char *cq);
/* Workload `key`'s eviction with Kueue's `reason` is in the API. */
void ctrl__metrics_evicted(ctrl_t *c, const char *key, const char *reason);
/* A write ended with `res`. */
void ctrl__metrics_write(ctrl_t *c, const ctrl_op_t *op, const kube_result_t *res);
/* Workload `key` may release its quota at `now` (call right before the engine call that frees it:
 * eviction, finish, delete, deactivation): its use up to now is counted in the resource-seconds
 * counters, exactly. A no-op when it holds none; harmless when the release does not happen. */
void ctrl__metrics_release(ctrl_t *c, const char *key, int64_t now);
/* The engine cycle about to run at `now` releases the workloads past their maximum execution
 * time: ctrl__metrics_release() for each of them (a walk only when one is due). */
void ctrl__metrics_release_due(ctrl_t *c, int64_t now);
/* Called once a second: every 5 s, integrate the quota held into the resource-seconds counters. */
void ctrl__metrics_tick(ctrl_t *c);

#endif
