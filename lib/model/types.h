/* types -- typed Kubernetes and Kueue objects, as decoded from JSON/YAML and used by the engine. */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_TYPES_H
#define SLUICE_TYPES_H

#include "model/quantity.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Every string and array here is owned by the struct that holds it and released by the kind's
 * *_fini() (see object.h). Optional scalars carry a has_* flag; an absent string is NULL.
 * Arrays are pointer + count. Enums hold Kueue's defaults when the field is absent.
 */

/* ---- small building blocks -------------------------------------------------------------- */

typedef struct kv_s {
    char *key;   /* owned */
    char *value; /* owned */
} kv_t;

/* A string map (labels, annotations, nodeLabels, nodeSelector), sorted by key, keys unique. */
typedef struct kv_list_s {
    kv_t *items; /* owned */
    size_t len;
} kv_list_t;

typedef struct resource_s {
    char *name; /* owned, e.g. "nvidia.com/gpu" */
    quantity_t value;
} resource_t;

/* A ResourceList, sorted by name, names unique. */
typedef struct resource_list_s {
    resource_t *items; /* owned */
    size_t len;
} resource_list_t;

typedef enum {
    TAINT_EFFECT_ANY = 0, /* "" (tolerations only: matches every effect) */
    TAINT_EFFECT_NO_SCHEDULE,
    TAINT_EFFECT_PREFER_NO_SCHEDULE,
    TAINT_EFFECT_NO_EXECUTE,
} taint_effect_t;

typedef struct taint_s {
    char *key;   /* owned */
    char *value; /* owned, NULL when absent */
    taint_effect_t effect;
} taint_t;

typedef enum {
    TOLERATION_OP_EQUAL = 0, /* default */
    TOLERATION_OP_EXISTS,
} toleration_op_t;

typedef struct toleration_s {
    char *key;   /* owned, NULL or "" = every key (only with Exists) */
    char *value; /* owned, NULL when absent */
    toleration_op_t op;
    taint_effect_t effect;
    bool has_seconds;
    int64_t seconds;
} toleration_t;

typedef enum {
    SELECTOR_OP_IN = 0,
    SELECTOR_OP_NOT_IN,
    SELECTOR_OP_EXISTS,
    SELECTOR_OP_DOES_NOT_EXIST,
    SELECTOR_OP_GT, /* node selector terms only */
    SELECTOR_OP_LT, /* node selector terms only */
} selector_op_t;

typedef struct selector_req_s {
    char *key; /* owned */
    selector_op_t op;
    char **values; /* owned */
    size_t nvalues;
} selector_req_t;

/* A metav1.LabelSelector. `present` false is a nil selector (selects nothing for a
 * ClusterQueue's namespaceSelector); present with no terms is `{}` (selects everything). */
typedef struct label_selector_s {
    bool present;
    kv_list_t match_labels;
    selector_req_t *exprs; /* owned */
    size_t nexprs;
} label_selector_t;

/* One term of a required node affinity (its matchExpressions are ANDed; terms are ORed). */
typedef struct node_selector_term_s {
    selector_req_t *exprs; /* owned */
    size_t nexprs;
} node_selector_term_t;

typedef struct object_meta_s {
    char *name;             /* owned */
    char *namespace;        /* owned, NULL for cluster-scoped objects */
    char *generate_name;    /* owned */
    char *uid;              /* owned */
    char *resource_version; /* owned */
    int64_t generation;
    int64_t creation_time; /* seconds since the epoch, 0 when absent */
    bool deleting;         /* metadata.deletionTimestamp set */
    kv_list_t labels;
    kv_list_t annotations;
    char **finalizers; /* owned */
    size_t nfinalizers;
} object_meta_t;

/* ---- pods ----------------------------------------------------------------------------- */

typedef struct container_s {
    char *name; /* owned */
    resource_list_t requests;
    resource_list_t limits;
    bool restartable; /* init container with restartPolicy: Always (a sidecar) */
} container_t;

/* The parts of a PodSpec that admission looks at. */
typedef struct pod_spec_s {
    container_t *containers; /* owned */
    size_t ncontainers;
    container_t *init_containers; /* owned */
    size_t ninit_containers;
    resource_list_t overhead;
    kv_list_t node_selector;
    toleration_t *tolerations; /* owned */
    size_t ntolerations;
    node_selector_term_t *affinity_terms; /* owned: requiredDuringScheduling... terms */
    size_t naffinity_terms;
    char *priority_class_name; /* owned */
    /* spec.resources (pod-level resources, KEP-2837): when set they replace the container sum
     * for cpu, memory and hugepages-* (see requests.h). Requests default to limits. */
    resource_list_t pod_level_requests;
    resource_list_t pod_level_limits;
} pod_spec_t;

/* ---- Kueue queue objects ----------------------------------------------------------------- */

typedef struct resource_quota_s {
    char *name; /* owned */
    quantity_t nominal;
    bool has_borrowing_limit; /* absent = unlimited */
    quantity_t borrowing_limit;
    bool has_lending_limit; /* absent = lend everything */
    quantity_t lending_limit;
} resource_quota_t;

typedef struct flavor_quotas_s {
    char *name;                  /* owned: ResourceFlavor name */
    resource_quota_t *resources; /* owned, same order as the group's covered resources */
    size_t nresources;
} flavor_quotas_t;

typedef struct resource_group_s {
    char **covered; /* owned: coveredResources */
    size_t ncovered;
    flavor_quotas_t *flavors; /* owned, in order of preference */
    size_t nflavors;
} resource_group_t;

typedef enum {
    QUEUEING_BEST_EFFORT_FIFO = 0, /* default */
    QUEUEING_STRICT_FIFO,
} queueing_strategy_t;

typedef enum {
    STOP_POLICY_NONE = 0,
    STOP_POLICY_HOLD,
    STOP_POLICY_HOLD_AND_DRAIN,
} stop_policy_t;

typedef enum {
    PREEMPT_NEVER = 0,
    PREEMPT_LOWER_PRIORITY,
    PREEMPT_LOWER_OR_NEWER_EQUAL_PRIORITY,
    PREEMPT_ANY,
} preempt_policy_t;

typedef enum {
    FUNGIBILITY_MAY_STOP_SEARCH = 0,
    FUNGIBILITY_TRY_NEXT_FLAVOR,
} fungibility_t;

typedef enum {
    FUNGIBILITY_PREF_UNSET = 0, /* behaves as BorrowingOverPreemption */
    FUNGIBILITY_PREF_BORROWING_OVER_PREEMPTION,
    FUNGIBILITY_PREF_PREEMPTION_OVER_BORROWING,
} fungibility_pref_t;

typedef struct flavor_s {
    object_meta_t meta;
    kv_list_t node_labels;
    taint_t *taints; /* owned: spec.nodeTaints */
    size_t ntaints;
    toleration_t *tolerations; /* owned */
    size_t ntolerations;
    char *topology_name; /* owned */
} flavor_t;

/* One admissionChecksStrategy rule of a ClusterQueue: the check and the flavors it runs for. */
typedef struct admission_check_rule_s {
    char *name;        /* owned: AdmissionCheck name */
    char **on_flavors; /* owned: empty = every flavor */
    size_t non_flavors;
} admission_check_rule_t;

typedef struct cluster_queue_s {
    object_meta_t meta;
    resource_group_t *groups; /* owned */
    size_t ngroups;
    char *cohort; /* owned: spec.cohortName (v1beta1 spec.cohort); NULL = none */
    queueing_strategy_t queueing;
    label_selector_t namespace_selector;
    fungibility_t when_can_borrow;  /* default MayStopSearch */
    fungibility_t when_can_preempt; /* default TryNextFlavor */
    fungibility_pref_t preference;
    preempt_policy_t reclaim_within_cohort; /* Never, LowerPriority, Any */
    preempt_policy_t within_cluster_queue;  /* Never, LowerPriority, LowerOrNewerEqualPriority */
    preempt_policy_t borrow_within_cohort;  /* policy: Never, LowerPriority */
    bool has_max_priority_threshold;
    int32_t max_priority_threshold;
    stop_policy_t stop_policy;
    bool has_fair_weight; /* absent = 1 */
    quantity_t fair_weight;
    /* spec.admissionScope.admissionMode: UsageBasedAdmissionFairSharing orders the pending
     * workloads by their LocalQueue's usage (Configuration admissionFairSharing) */
    bool has_admission_scope;
    bool afs_usage_based;
    char **admission_checks; /* owned: admissionChecksStrategy names */
    size_t nadmission_checks;
    /* The same rules with their onFlavors, in order (v1beta1 spec.admissionChecks: no
     * onFlavors); NULL/0 when the queue has no strategy. */
    admission_check_rule_t *check_rules; /* owned */
    size_t ncheck_rules;
} cluster_queue_t;

/* The Active condition of an AdmissionCheck as written by its controller. */
typedef enum {
    CHECK_ACTIVE_UNSET = 0, /* no Active condition (yet) */
    CHECK_ACTIVE_TRUE,
    CHECK_ACTIVE_FALSE, /* False or Unknown */
} check_active_t;

/* kueue.x-k8s.io AdmissionCheck: a named gate a ClusterQueue's workloads pass between quota
 * reservation and admission; its controller sets each workload's check state. */
typedef struct admission_check_s {
    object_meta_t meta;
    char *controller_name; /* owned: spec.controllerName */
    bool has_parameters;   /* spec.parameters present */
    char *param_group;     /* owned: spec.parameters.apiGroup */
    char *param_kind;      /* owned: spec.parameters.kind */
    char *param_name;      /* owned: spec.parameters.name */
    check_active_t active; /* status.conditions[type=Active] */
    char *active_reason;   /* owned: its reason, NULL when none */
    char *active_message;  /* owned: its message, NULL when none */
} admission_check_t;

typedef struct cohort_s {
    object_meta_t meta;
    char *parent; /* owned: spec.parentName; NULL = root */
    resource_group_t *groups;
    size_t ngroups;
    bool has_fair_weight;
    quantity_t fair_weight;
} cohort_t;

typedef struct local_queue_s {
    object_meta_t meta;  /* namespace + name */
    char *cluster_queue; /* owned */
    stop_policy_t stop_policy;
    bool has_fair_weight; /* spec.fairSharing.weight: admission fair sharing (absent = 1) */
    quantity_t fair_weight;
} local_queue_t;

typedef struct workload_priority_class_s {
    object_meta_t meta;
    int32_t value;
    char *description; /* owned */
} workload_priority_class_t;

/* Topology (topology-aware scheduling): the node labels of its levels, highest first
 * (spec.levels[].nodeLabel; 1..16, unique, kubernetes.io/hostname only as the lowest). */
typedef struct topology_s {
    object_meta_t meta;
    char **levels; /* owned: nlevels node label keys */
    size_t nlevels;
} topology_t;

typedef struct priority_class_s {
    object_meta_t meta;
    int32_t value;
    bool global_default;
} priority_class_t;

typedef struct namespace_s {
    object_meta_t meta; /* labels are what ClusterQueue namespaceSelectors match */
} namespace_t;

/* ---- workloads ---------------------------------------------------------------------------- */

typedef struct pod_set_s {
    char *name; /* owned, default "main" */
    int32_t count;
    bool has_min_count;
    int32_t min_count;
    kv_list_t template_labels;
    kv_list_t template_annotations;
    pod_spec_t spec;
    resource_list_t pod_requests; /* computed: effective requests of one pod (see pod_requests()) */
    /* spec.podSets[].topologyRequest of a Workload (Kueue's PodSetTopologyRequest), kept as the
     * pod-template annotations Kueue builds it from (model/tasreq.h's keys; the slice layers as
     * the constraints annotation's JSON). Kueue's scheduler reads it, not the template's
     * annotations; so does the engine when it is there. */
    bool has_topology_request;
    kv_list_t topology_request;
} pod_set_t;

/* Where a pod set's pods go (topology-aware scheduling): Kueue's v1beta1 topologyAssignment,
 * levels + domains of values (one per level) and pod counts. */
typedef struct topology_assignment_s {
    char **levels; /* owned: nlevels node label keys */
    size_t nlevels;
    char **values;   /* owned: ndomains x nlevels, row-major */
    int32_t *counts; /* owned: ndomains pod counts */
    size_t ndomains;
} topology_assignment_t;

typedef struct pod_set_assignment_s {
    char *name;            /* owned: podset name */
    kv_list_t flavors;     /* resource name -> flavor name */
    resource_list_t usage; /* total for all pods */
    bool has_count;
    int32_t count;
    topology_assignment_t *topology; /* owned: NULL = no topology assignment */
} pod_set_assignment_t;

typedef struct admission_s {
    char *cluster_queue;               /* owned */
    pod_set_assignment_t *assignments; /* owned */
    size_t nassignments;
} admission_t;

typedef enum {
    PRIORITY_SOURCE_NONE = 0,
    PRIORITY_SOURCE_WORKLOAD_PRIORITY_CLASS, /* group kueue.x-k8s.io */
    PRIORITY_SOURCE_PRIORITY_CLASS,          /* group scheduling.k8s.io */
} priority_source_t;

/* The conditions of a Workload status that admission cares about. */
typedef struct workload_conditions_s {
    bool quota_reserved;
    bool admitted;
    bool finished;
    bool evicted;
    bool preempted;
    int64_t admitted_time; /* Admitted lastTransitionTime, seconds since epoch */
} workload_conditions_t;

/* One metav1.Condition of a Workload status, as written (validate_workload.c checks it the way
 * Kubernetes' ValidateConditions does). */
typedef struct condition_s {
    char *type;    /* owned */
    char *status;  /* owned: "True", "False" or "Unknown" */
    char *reason;  /* owned, NULL when absent */
    char *message; /* owned, NULL when absent */
    bool has_transition_time;
    int64_t transition_time; /* lastTransitionTime, seconds since the epoch */
    int64_t observed_generation;
} condition_t;

/* status.reclaimablePods[]: pods of a podSet that no longer need their quota. */
typedef struct reclaimable_pod_s {
    char *name; /* owned: podSet name */
    int32_t count;
} reclaimable_pod_t;

/* status.admissionChecks[].podSetUpdates[]: what an admission check adds to a podSet. */
typedef struct pod_set_update_s {
    char *name; /* owned: podSet name */
    kv_list_t labels;
    kv_list_t annotations;
    kv_list_t node_selector;
    toleration_t *tolerations; /* owned */
    size_t ntolerations;
} pod_set_update_t;

typedef enum {
    CHECK_STATE_PENDING = 0,
    CHECK_STATE_READY,
    CHECK_STATE_RETRY,
    CHECK_STATE_REJECTED,
} check_state_t;

/* status.admissionChecks[]. */
typedef struct admission_check_state_s {
    char *name; /* owned: AdmissionCheck name */
    check_state_t state;
    char *message;             /* owned, NULL when absent */
    int64_t transition_time;   /* lastTransitionTime, seconds since the epoch, 0 when absent */
    pod_set_update_t *updates; /* owned: podSetUpdates */
    size_t nupdates;
    bool has_requeue_after;  /* requeueAfterSeconds set (Kueue's Retry delay) */
    int32_t requeue_after_s; /* requeueAfterSeconds, >= 0 */
    bool has_retry_count;    /* retryCount set */
    int32_t retry_count;     /* retryCount: Kueue adds one at every reset from Retry */
} admission_check_state_t;

typedef struct workload_s {
    object_meta_t meta;
    char *queue_name; /* owned: spec.queueName */
    priority_source_t priority_source;
    /* What priorityClassRef.kind names, in the same terms (WorkloadPriorityClass or PriorityClass);
     * Kueue's CEL rules reject a kind that does not match the group (priority_source). */
    priority_source_t priority_kind;
    char *priority_class; /* owned: priorityClassRef.name (v1beta1 priorityClassName) */
    bool has_priority;
    int32_t priority;
    bool active; /* default true */
    bool has_max_exec_seconds;
    int32_t max_exec_seconds;
    pod_set_t *pod_sets; /* owned */
    size_t npod_sets;
    admission_t *admission; /* owned: status.admission, NULL when none */
    workload_conditions_t conditions;
    int32_t accumulated_exec_seconds; /* status.accumulatedPastExecutionTimeSeconds */
    /* The rest of the status, as written (validation reads it; admission does not). */
    condition_t *status_conditions; /* owned: status.conditions, in order */
    size_t nstatus_conditions;
    reclaimable_pod_t *reclaimable_pods; /* owned */
    size_t nreclaimable_pods;
    admission_check_state_t *check_states; /* owned: status.admissionChecks */
    size_t ncheck_states;
    char *cluster_name;        /* owned: status.clusterName, NULL when absent */
    char **nominated_clusters; /* owned: status.nominatedClusterNames */
    size_t nnominated_clusters;
    /* owned: status.unhealthyNodes[].name, in order: the failed nodes of a topology-aware
     * Workload's assignment that wait for a replacement (Kueue's node controller writes them,
     * the replacement admission or an eviction clears them) */
    char **unhealthy_nodes;
    size_t nunhealthy_nodes;
} workload_t;

typedef struct job_s {
    object_meta_t meta;
    int32_t parallelism; /* default 1 */
    bool has_completions;
    int32_t completions;
    bool suspend;
    bool indexed; /* spec.completionMode: Indexed (default NonIndexed) */
    kv_list_t template_labels;
    kv_list_t template_annotations;
    pod_spec_t spec; /* spec.template.spec */
    /* status */
    int32_t active;
    int32_t succeeded;
    int32_t failed;
    bool complete;    /* condition Complete=True */
    bool failed_cond; /* condition Failed=True */
} job_t;

/*
 * An object of a job integration kind other than batch/v1 Job (JobSet, the Kubeflow jobs, RayJob,
 * RayCluster, ...: lib/jobs' kind table). lib/model decodes its envelope and metadata
 * (object_decode_integration()); lib/jobs reads the rest through the kind's table entry and
 * fills in `suspended` and the Workload Kueue builds for it (kindobj_decode()).
 */
typedef struct integration_s {
    object_meta_t meta;
    char *kind;     /* owned: the object's kind, "JobSet" */
    char *group;    /* owned: its API group, "jobset.x-k8s.io" */
    bool suspended; /* held as written (the kind's suspend field or gate); for a serving owner,
                       no replica ready (status.readyReplicas 0), as Kueue's webhooks read it */
    bool serving;   /* a serving owner (Deployment, StatefulSet, LeaderWorkerSet): admitted
                       through its Pods; Kueue's webhook checks fewer of its labels */
    bool built;     /* `wl` holds the Workload (false when its pod sets could not be read) */
    workload_t wl;  /* the Workload Kueue builds for it (jobs_workload_build) */
    /* A serving owner Kueue admits as one Workload per replica (a Deployment: one per Pod; a
     * LeaderWorkerSet: one per replica group), each with the pod sets of `wl`: per_replica is
     * set and `replicas` says how many at its spec (0 or more). Every other kind: one
     * Workload, `wl` (per_replica false, replicas 0). */
    bool per_replica;
    int32_t replicas;
    /* owned, NULL when none: what the kind's own webhook rules (kindobj_decode()) find in an
     * object without a queue-name label. Kueue applies them only when it manages such objects
     * (a Configuration's manageJobsWithoutQueueName), which one document cannot know: the
     * cross-object checks report them then (crosscheck_run()). */
    struct diags_s *unlabelled_rules;
    /* For the serving kinds' update rules (kindobj_decode()): a LeaderWorkerSet's
     * leaderWorkerTemplate.size, or a StatefulSet's spec.replicas (default 1); a StatefulSet's
     * status.replicas; the shape (Kueue's role hash) of the leader's [0] and the worker's [1]
     * pod spec, or of a StatefulSet's template [1]; "" without that template, "?" when it
     * cannot be computed. */
    int32_t group_size;
    int32_t status_replicas;
    char template_shapes[2][16];
    /* owned: the PriorityClass Kueue looks up when there is no priority-class label
     * (jobs_priority_class(): the kind's own field, else the first pod set's
     * priorityClassName), NULL when none */
    char *priority_class_name;
} integration_t;

/* config.kueue.x-k8s.io Configuration: the fields the engine and simulator act on. */
typedef enum {
    FS_STRATEGY_LESS_THAN_OR_EQUAL_TO_FINAL_SHARE = 0,
    FS_STRATEGY_LESS_THAN_INITIAL_SHARE,
} fair_strategy_t;

/* resources.transformations[].strategy: keep the input resource beside the outputs, or drop it. */
typedef enum {
    TRANSFORM_RETAIN = 0, /* Kueue's default */
    TRANSFORM_REPLACE,
} transform_strategy_t;

/* One resources.transformations[] entry: a request for `input` also counts as
 * request(input) [* request(multiplyBy)] * amount of each output. */
typedef struct resource_transformation_s {
    char *input; /* owned, non-empty */
    transform_strategy_t strategy;
    char *multiply_by;       /* owned, NULL when none */
    resource_list_t outputs; /* amount per unit of input; may be empty, amounts may be negative */
} resource_transformation_t;

/* Configuration `resources`: how pod requests become the Workload's quota requests
 * (requests_effective()). All empty: requests count as they are. */
typedef struct resource_rules_s {
    char **exclude_prefixes; /* owned: excludeResourcePrefixes */
    size_t nexclude_prefixes;
    resource_transformation_t *transformations; /* owned; inputs unique */
    size_t ntransformations;
    bool ignore_undeclared; /* quotaCheckStrategy: IgnoreUndeclared (v1beta2) */
} resource_rules_t;

/* waitForPodsReady.requeuingStrategy.timestamp: the queue-order timestamp after a PodsReady
 * timeout eviction. */
typedef enum { REQUEUE_TS_EVICTION = 0, REQUEUE_TS_CREATION } requeue_ts_t;

/* Kueue's waitForPodsReady (kueue-reference.md section 6; decoded and ruled by model/waitready.h,
 * the one place both drivers read it): v1beta2 always enabled with these defaults, v1beta1 only
 * with `enable: true` (blockAdmission then defaults to true). */
typedef struct pods_ready_config_s {
    bool enabled;
    bool block_admission;         /* false (v1beta1: = enable) */
    uint32_t timeout_ms;          /* 30m, > 0 */
    uint32_t recovery_timeout_ms; /* = timeout; 0: no recovery timeout */
    bool recovery_set;            /* recoveryTimeout given (else it follows timeout) */
    requeue_ts_t timestamp;       /* Eviction */
    bool has_backoff_limit;       /* backoffLimitCount given (else requeued forever) */
    int32_t backoff_limit_count;  /* >= 0 */
    int32_t backoff_base_s;       /* 60, > 0 */
    int32_t backoff_max_s;        /* 3600, > 0 */
} pods_ready_config_t;

typedef struct configuration_s {
    object_meta_t meta;
    bool fair_sharing;
    fair_strategy_t strategies[2];
    size_t nstrategies; /* 0 = Kueue's default (both, in order) */
    bool manage_jobs_without_queue_name;
    label_selector_t managed_jobs_namespace_selector;
    resource_rules_t resources;
    /* admissionFairSharing: present = on (Kueue's FG AdmissionFairSharing, beta, on) */
    bool afs;
    int64_t afs_half_life_ms;       /* usageHalfLifeTime (0: usage reset to 0) */
    int64_t afs_sampling_ms;        /* usageSamplingInterval (default 5m) */
    resource_list_t afs_weights;    /* resourceWeights (absent resource: 1) */
    pods_ready_config_t pods_ready; /* waitForPodsReady, Kueue's defaults when absent */
    /* owned: the top-level fields present that only `sluice run` reads ("webhook", "health",
     * ...), in document order: the simulator warns that they have no effect there */
    char **run_only;
    size_t nrun_only;
} configuration_t;

/* ---- lifetimes (types.c; all NULL-safe; each zeroes what it releases) ------------------- */

/* Free an array of `n` owned strings and the array itself. */
void strv_free(char **v, size_t n);
void kv_list_fini(kv_list_t *l);
void resource_list_fini(resource_list_t *l);
void label_selector_fini(label_selector_t *s);
void selector_req_fini(selector_req_t *r);
void taint_fini(taint_t *t);
void toleration_fini(toleration_t *t);
void container_fini(container_t *c);
void pod_spec_fini(pod_spec_t *s);
void object_meta_fini(object_meta_t *m);
void resource_group_fini(resource_group_t *g);
void pod_set_fini(pod_set_t *p);
void admission_fini(admission_t *a);
void admission_check_rule_fini(admission_check_rule_t *r);
void condition_fini(condition_t *c);
void pod_set_update_fini(pod_set_update_t *u);
void admission_check_state_fini(admission_check_state_t *s);
void namespace_fini(namespace_t *n);
void flavor_fini(flavor_t *f);
void cluster_queue_fini(cluster_queue_t *cq);
void cohort_fini(cohort_t *c);
void admission_check_fini(admission_check_t *ac);
void local_queue_fini(local_queue_t *lq);
void workload_priority_class_fini(workload_priority_class_t *w);
void topology_fini(topology_t *t);
/* Release what `a` owns and zero it; NULL-safe. */
void topology_assignment_fini(topology_assignment_t *a);
/* A new deep copy of `a` (NULL: NULL); *out NULL and ERR_NOMEM on allocation failure. */
err_t topology_assignment_dup(const topology_assignment_t *a, topology_assignment_t **out);
void priority_class_fini(priority_class_t *p);
void workload_fini(workload_t *w);
void job_fini(job_t *j);
void integration_fini(integration_t *o);
void configuration_fini(configuration_t *c);
void resource_transformation_fini(resource_transformation_t *t);
void resource_rules_fini(resource_rules_t *r);

/* Deep copies into zeroed `dst`; ERR_NOMEM leaves `dst` zeroed. */
err_t kv_list_copy(kv_list_t *dst, const kv_list_t *src);
err_t resource_list_copy(resource_list_t *dst, const resource_list_t *src);
err_t pod_spec_copy(pod_spec_t *dst, const pod_spec_t *src);
err_t resource_rules_copy(resource_rules_t *dst, const resource_rules_t *src);

/* Value for `key` in a sorted list (borrowed), NULL when absent. */
const char *kv_list_get(const kv_list_t *l, const char *key);

/* Do two sorted lists hold the same keys with the same values? */
bool kv_list_equal(const kv_list_t *a, const kv_list_t *b);

/* Set `key` to `value` keeping the list sorted (copies both); ERR_NOMEM on failure. */
err_t kv_list_set(kv_list_t *l, const char *key, const char *value);

/* Quantity for `name` in a sorted list (borrowed), NULL when absent. */
const quantity_t *resource_list_get(const resource_list_t *l, const char *name);

/* Finalise the `n` elements of the owned array `items` with fini(&items[i]), then free it. */
#define TYPES_FREE_ARRAY(items, n, fini)                       \
    do {                                                       \
        for (size_t i_ = 0; (items) != NULL && i_ < (n); i_++) \
            fini(&(items)[i_]);                                \
        free(items);                                           \
    } while (0)

#endif
