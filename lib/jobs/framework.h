/* framework -- Kueue's job integrations as one table: a kind is an entry, not a controller. */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_JOBS_FRAMEWORK_H
#define SLUICE_JOBS_FRAMEWORK_H

/*
 * Every kind sluice admits (batch/v1 Job, JobSet, the Kubeflow jobs, RayJob, RayCluster, plain
 * Pods, the serving kinds) is described by one jobs_kind_t: how to read its pod sets out of the
 * API object, how to suspend and resume it, how to tell running from finished, how many of its
 * pods are ready. Everything else -- the Workload built from it, its name, starting it with an
 * admission's flavors, stopping it and restoring its templates, the digest that says whether it
 * is restored -- is written once here, over the kind's entry, so that lib/ctrl, lib/hook and
 * lib/sim handle every kind with the same code (Kueue's jobframework.GenericJob, in C).
 *
 * Objects are the API's JSON (jansson), as the informers and the webhooks receive them: a kind
 * reads and writes only the fields it names and leaves the rest as it found it. Pod templates
 * are PodTemplateSpec objects ({metadata, spec}); a plain Pod is its own template.
 */

#include "model/types.h"
#include "util/err.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Kueue's limit on pod sets per Workload (v1beta2 spec.podSets maxItems). */
#define JOBS_PODSETS_MAX 18

/* What jobs_start() writes into every admitted pod template (reference section 3.6). */
#define JOBS_LABEL_PODSET        "kueue.x-k8s.io/podset"
#define JOBS_LABEL_LOCAL_QUEUE   "kueue.x-k8s.io/local-queue-name"
#define JOBS_LABEL_CLUSTER_QUEUE "kueue.x-k8s.io/cluster-queue-name"
#define JOBS_ANNOTATION_WORKLOAD "kueue.x-k8s.io/workload"

/* Pod-set names are DNS-1123 labels. */
#define JOBS_PODSET_NAME_MAX 63

/* Room for the field path of a pod template ("spec.replicatedJobs[7].template.spec.template"). */
#define JOBS_PATH_MAX 128

/* Where an object of a kind stands. */
typedef enum {
    JOBS_RUNNING = 0, /* not finished (suspended, pending, or running) */
    JOBS_SUCCEEDED,
    JOBS_FAILED,
} jobs_phase_t;

/* One pod set of an object, as its kind reads it. */
typedef struct jobs_podset_s {
    char name[JOBS_PODSET_NAME_MAX + 1]; /* Kueue's pod-set name for this kind ("main", "worker", a
                                            replicated Job's name, ...) */
    json_t *tmpl;      /* borrowed from the object: its PodTemplateSpec (or the Pod itself) */
    int32_t count;     /* pods at full size */
    int32_t min_count; /* partial admission: fewest pods it may run with; 0 = not partial */
    char path[JOBS_PATH_MAX]; /* field path of tmpl in the object, for errors ("" = unknown) */
} jobs_podset_t;

/* Pods of one pod set that finished while the rest of the object runs: their quota is released
 * (Kueue's ReclaimablePods, the Workload's status.reclaimablePods). */
typedef struct jobs_reclaim_s {
    char name[JOBS_PODSET_NAME_MAX + 1]; /* pod-set name */
    int32_t count;
} jobs_reclaim_t;

/* What an admission adds to one pod set's template (all borrowed). */
typedef struct jobs_start_info_s {
    const char *name;          /* pod-set name */
    const char *local_queue;   /* Workload spec.queueName */
    const char *cluster_queue; /* status.admission.clusterQueue */
    const char *workload;      /* Workload name */
    json_t *node_selector;     /* object: nodeLabels of the assigned flavors, or NULL */
    json_t *tolerations;       /* array: tolerations of the assigned flavors, or NULL */
    bool has_count;            /* partial admission: run with `count` pods */
    int32_t count;
} jobs_start_info_t;

/* A kind of object some kind's pod sets come from besides the object itself (a TrainJob's
 * ClusterTrainingRuntime or TrainingRuntime): what the operator watches for it. */
typedef struct jobs_dep_kind_s {
    const char *group;    /* "trainer.kubeflow.org" */
    const char *version;  /* "v1alpha1" */
    const char *kind;     /* "ClusterTrainingRuntime" */
    const char *resource; /* plural resource name: "clustertrainingruntimes" */
    bool namespaced;      /* false: cluster-scoped */
} jobs_dep_kind_t;

/* The one object an object's pod sets come from besides itself (all borrowed). */
typedef struct jobs_ref_s {
    const jobs_dep_kind_t *kind; /* one of the kind's deps[] */
    const char *namespace;       /* the object's namespace; NULL for a cluster-scoped kind */
    const char *name;
    const char *what; /* the noun of errors: "runtime" ("runtime 'x' not found", as Kueue) */
} jobs_ref_t;

/* Find the object `ref` names among what the caller has (the operator's informer caches, the
 * documents given to `sluice check` or `sluice sim`): borrowed, NULL when absent. */
typedef const json_t *(*jobs_find_fn)(void *data, const jobs_ref_t *ref);

/* How an admission reaches the pods of a kind (its `admit` member). */
typedef enum {
    /* The object is held and released itself (its suspend field): jobs_start and jobs_stop. */
    JOBS_ADMIT_OBJECT = 0,
    /* A plain Pod, held by the scheduling gate kueue.x-k8s.io/admission. jobs_start releases it
     * (the gate removed); a released Pod can never be gated again (the API server only lets
     * gates be removed), so it is stopped by deleting it, never by jobs_stop: see
     * jobs_pod_stop_needed() and jobs_pod_termination_condition() in podgroup.h. */
    JOBS_ADMIT_POD,
    /* A serving owner (Deployment, StatefulSet, LeaderWorkerSet): the object itself is never
     * held. Its webhook marks its pod template (jobs_serving_default() in kind_serving.h) so that
     * each of its pods is created gated, as a single Pod (Deployment) or as a member of a pod
     * group (one per StatefulSet, one per LeaderWorkerSet replica); its pods are started and
     * stopped as JOBS_ADMIT_POD. pod_sets() gives the pod sets of one of its Workloads. */
    JOBS_ADMIT_PODS,
} jobs_admit_t;

/*
 * A kind. Function members take the whole API object; those that may be NULL say so. A kind's
 * functions never allocate what they return: pointers they hand out are borrowed from `obj`.
 */
typedef struct jobs_kind_s {
    const char *framework; /* integrations.frameworks name: "batch/job", "jobset.x-k8s.io/jobset" */
    const char *group;     /* API group, "" for core */
    const char *version;   /* the version sluice reads and writes */
    const char *kind;      /* "JobSet" */
    const char *resource;  /* plural resource name: "jobsets" */

    /* Fill out[0..*n) with the pod sets of `obj`, at most JOBS_PODSETS_MAX, in Kueue's order.
     * ERR_INVALID (naming the field path) when the object has no readable pod set. */
    err_t (*pod_sets)(json_t *obj, jobs_podset_t *out, size_t *n, err_msg_t *msg);

    /* Is `obj` held (suspended, or gated) -- its pods not to run? */
    bool (*suspended)(const json_t *obj);

    /* Hold (true) or release (false) `obj`, in place. */
    err_t (*set_suspended)(json_t *obj, bool suspend, err_msg_t *msg);

    /* Partial admission: make pod set `i` run `count` pods, in place. NULL: the kind does not
     * support partial admission (then min_count is always 0). */
    err_t (*set_count)(json_t *obj, size_t i, int32_t count, err_msg_t *msg);

    /* Where `obj` stands; on a finish, *message (may be NULL) is the reason to write into the
     * Workload's Finished condition (borrowed from obj, or a static string). */
    jobs_phase_t (*phase)(const json_t *obj, const char **message);

    /* Does `obj` still have pods that run (a suspended Job's pods terminating count)? */
    bool (*active)(const json_t *obj);

    /* Are all the pods of `obj` ready (waitForPodsReady's PodsReady condition)? */
    bool (*pods_ready)(const json_t *obj);

    /* Should `obj` be left alone although it carries a queue name (Kueue's JobWithSkip: e.g. a
     * RayCluster a RayJob created)? NULL: never. */
    bool (*skip)(const json_t *obj);

    /* ---- optional members added after the first version (zero / NULL keeps the behaviour
     * above) ---- */

    /* Turn `tmpl`, the Workload's own deep copy of pod set `i`'s template (the caller owns it;
     * `obj` is the object pod_sets() read), into the template Kueue writes into the Workload:
     * add what the kind's operator puts into every pod at creation and quota must count
     * (KubeRay's autoscaler and job-submitter sidecars, its Redis-cleanup requests), drop what
     * Kueue drops (a plain Pod's metadata and status). NULL: the copy is used as it is.
     * jobs_workload_build() calls it on each copy before decoding it. */
    err_t (*podset_template)(const json_t *obj, size_t i, json_t *tmpl, err_msg_t *msg);

    /* How an admission reaches the pods of this kind; 0 = JOBS_ADMIT_OBJECT. */
    jobs_admit_t admit;

    /* Is pod-template label `key` one the kind's own controller writes (the Job controller's
     * job-name, controller-uid, batch.kubernetes.io/...)? jobs_stop() keeps such labels on the
     * object's templates. NULL: none. Digests ignore the labels any kind owns, so that a
     * Workload's pod sets (which do not say their kind) digest the same. */
    bool (*owned_label)(const char *key);

    /* The PriorityClass name the kind names before its templates' priorityClassName (Kueue's
     * JobWithPriorityClass: a Kubeflow job's runPolicy.schedulingPolicy.priorityClass), borrowed
     * from `obj`, or NULL / "" for none. NULL member: none. See jobs_priority_class(). */
    const char *(*priority_class)(const json_t *obj);

    /* Write into `obj` (in place) what starting and stopping it need that the kind's operator
     * would otherwise default unseen: a RayJob's submitter pod template (KubeRay's default, which
     * Kueue writes into spec.submitterPodTemplate when it starts the RayJob). Idempotent. The
     * framework calls it on its own copy before pod_sets() (jobs_workload_build, jobs_start,
     * jobs_stop, jobs_digest), so that pod_sets() never writes. NULL: nothing to write. */
    err_t (*prepare)(json_t *obj, err_msg_t *msg);

    /* Is the pod template immutable while status.startTime is set, so that a restore must clear
     * it first (batch/v1 Job, a Kubernetes rule)? */
    bool start_time_locks_template;

    /* ---- a kind whose pod sets live in another object (TrainJob: in the training runtime it
     * names). Its pod_sets(), pods_ready() and jobs_workload_build() / jobs_digest() /
     * jobs_priority_class() read the *resolved view* jobs_resolve() builds from the object and
     * that other object; suspended(), set_suspended(), phase(), active() read the object itself
     * (the view keeps its metadata, spec.suspend and status). NULL / 0: a one-object kind. ---- */

    /* The kinds of object needs() may name, deps[0..ndeps): the operator watches them and
     * reconciles an object again when the one it names changes. */
    const jobs_dep_kind_t *deps;
    size_t ndeps;

    /* Which object `obj`'s pod sets come from, into *ref (borrowed from obj or static);
     * ERR_INVALID naming the field when the reference is unusable. */
    err_t (*needs)(const json_t *obj, jobs_ref_t *ref, err_msg_t *msg);

    /* The resolved view of `obj` given `dep`, the object needs() named: a new object (the caller
     * drops it) sharing what it can with both. ERR_INVALID naming the field of `dep` that
     * cannot be read. */
    err_t (*resolve)(const json_t *obj, const json_t *dep, json_t **view, err_msg_t *msg);

    /* Replace jobs_start() / jobs_stop() for a kind whose admission is not written into pod
     * templates of the object (TrainJob: into its own spec.runtimePatches[] entry). Same
     * contract as those two, on the object itself (not the view); `obj` is untouched on
     * error. A start may leave the object held: the kind wants the admission written first
     * and the release in a second write (TrainJob, whose webhook lets runtimePatches change
     * only while suspended); the caller writes it and starts it again, which releases it. */
    err_t (*start)(json_t *obj, const jobs_start_info_t *info, size_t n, err_msg_t *msg);
    err_t (*stop)(json_t *obj, const json_t *pod_sets, bool *changed, err_msg_t *msg);

    /* Kueue's JobWithReclaimablePods: fill out[0..*n) (at most JOBS_PODSETS_MAX) with the pod
     * sets some of whose pods are done for good and need no quota any more, from `obj`'s status
     * (a kind with resolve() reads the view). Pod sets with none are left out. NULL: the kind
     * reports none. */
    void (*reclaimable)(const json_t *obj, jobs_reclaim_t *out, size_t *n);

    /* What Kueue's defaulting webhook writes into a new object of the kind besides holding it
     * (TrainJob: its own empty spec.runtimePatches[] entry, which start() fills), in place and
     * idempotent. NULL: nothing. */
    err_t (*create_defaults)(json_t *obj, err_msg_t *msg);
} jobs_kind_t;

/* ---- the table --------------------------------------------------------------------------- */

/* The i-th kind sluice knows (stable order), NULL past the end. */
const jobs_kind_t *jobs_kind_at(size_t i);

/* The kind of `api_version` ("group/version", or "v1" for core) and `kind`, or NULL. A version
 * other than the kind's is still found (its owners and children name it so). */
const jobs_kind_t *jobs_kind_find(const char *api_version, const char *kind);

/* The kind whose integrations.frameworks name is `framework`, or NULL. */
const jobs_kind_t *jobs_kind_named(const char *framework);

/* ---- what is written once for every kind -------------------------------------------------- */

/* `obj` as the readers of kind `k` see it, a new reference in *view: for a kind with resolve()
 * (TrainJob) the view built from `obj` and the object its needs() names, looked up with
 * find(data, ref) (`find` may be NULL: nothing to look in); for any other kind `obj` itself.
 * ERR_NOT_FOUND "<what> '<name>' not found" when the lookup finds nothing (Kueue's "runtime 'x'
 * not found"), ERR_INVALID from needs() or resolve(). *view is untouched on error. */
err_t jobs_resolve(const jobs_kind_t *k, json_t *obj, jobs_find_fn find, void *data, json_t **view,
                   err_msg_t *msg);

/* The labels and annotation jobs_start() writes into the template of the pod set `info`
 * describes (podset, local-queue, cluster-queue when a DNS label; the workload annotation),
 * added to objects `labels` and `annotations`. ERR_NOMEM only. */
err_t jobs_start_metadata(const jobs_start_info_t *info, json_t *labels, json_t *annotations,
                          err_msg_t *msg);

/* Kueue's Workload name for object `name` with `uid` (NULL = "") of kind `k`: lower(kind) + "-"
 * + name cut to `max` - 6 bytes, then "-" + the first 5 hex digits of
 * sha1(Kind "\n" group "\n" name "\n" uid). `max` is 253, or 63 with ShortWorkloadNames;
 * `buf` holds at least max + 1 bytes. */
err_t jobs_workload_name(const jobs_kind_t *k, const char *name, const char *uid, size_t max,
                         char *buf, size_t size, err_msg_t *msg);

/* Build into zeroed `out` the Workload Kueue creates for `obj` of kind `k` (reference section
 * 3.3, the same for every kind): name (jobs_workload_name), namespace, label job-uid, finalizer
 * resource-in-use, the labels of integrations.labelKeysToCopy, queueName from the queue-name
 * label, maximumExecutionTimeSeconds from its label, one pod set per pod_sets() entry with its
 * template decoded and its requests computed, and the priority-class label as a
 * WorkloadPriorityClass reference without a value (resolved by the caller as for Jobs).
 * `copy_labels` (may be NULL) lists the label keys to copy. On error `out` stays zeroed and
 * `msg` names the field path. */
err_t jobs_workload_build(const jobs_kind_t *k, json_t *obj, const char *const *copy_labels,
                          workload_t *out, err_msg_t *msg);

/* Start `obj` with an admission (modified in place): for each entry of info[0..n) the pod set of
 * that name gets the node selector, tolerations (deduplicated), labels podset / local-queue /
 * cluster-queue and the workload annotation; its count under partial admission; then the object
 * is released (a kind with its own start() may release it only at a second call: check
 * suspended() after). A conflicting nodeSelector key, label or annotation is ERR_CONFLICT ("invalid
 * nodeSelector: conflict for key=K, value1=A, value2=B") and leaves `obj` unchanged; so does an
 * info naming no pod set of the object (ERR_INVALID). The work is done on a copy whose members
 * replace those of `obj` at the end: pointers borrowed from `obj` before the call are invalid
 * after a success, and an ERR_NOMEM may leave `obj` half-replaced (discard it). */
err_t jobs_start(const jobs_kind_t *k, json_t *obj, const jobs_start_info_t *info, size_t n,
                 err_msg_t *msg);

/* Stop `obj` (modified in place): held, and each pod set's template labels, annotations,
 * nodeSelector and tolerations restored from the Workload's spec.podSets item (`pod_sets`, an
 * array) paired with it by position when both have as many pod sets (as Kueue does), else by
 * name, keeping the labels the kind's own controller owns; counts changed by a partial admission
 * put back. *changed says whether anything changed (`obj` is untouched when not). Replaced and
 * failing as jobs_start(). */
err_t jobs_stop(const jobs_kind_t *k, json_t *obj, const json_t *pod_sets, bool *changed,
                err_msg_t *msg);

/* A digest of what jobs_stop() restores in every pod set of `obj` (0 when it has none): equal
 * digests of a held object and of its Workload's pod sets (jobs_podsets_digest()) mean it is
 * restored, without keeping either's templates. */
uint64_t jobs_digest(const jobs_kind_t *k, json_t *obj);

/* The same digest over a Workload's spec.podSets array. */
uint64_t jobs_podsets_digest(const json_t *pod_sets);

/* The PriorityClass (scheduling.k8s.io) Kueue's ExtractPriority looks up for `obj` when it has
 * no priority-class label: the kind's priority_class(), else the first pod set's template
 * spec.priorityClassName that is set, in pod-set order; NULL when none (borrowed from obj). */
const char *jobs_priority_class(const jobs_kind_t *k, json_t *obj);

/* The digest of one pod template (PodTemplateSpec): its labels but those some kind owns,
 * annotations, nodeSelector and tolerations, empty ones as absent; 0 on out-of-memory. */
uint64_t jobs_template_digest(const json_t *tmpl);

#endif
