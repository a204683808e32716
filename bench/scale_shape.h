/* scale_shape -- Kueue's scheduler-benchmark shapes (generator.yaml) and the names its runner uses.
 */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_BENCH_SCALE_SHAPE_H
#define SLUICE_BENCH_SCALE_SHAPE_H

#include <stddef.h>
#include <stdint.h>

/*
 * A shape is Kueue's test/performance/scheduler generator config: cohort sets, each with queue
 * sets, each with workload sets. Kueue's runner creates, concurrently for every ClusterQueue,
 * one sequential loop per workload set: `count` times, for each template of the set, sleep
 * creationIntervalMs and then create one workload (the next sleep starts when the create has
 * returned). Names (generator.go):
 *
 *   cohort        <cohortClass>-<cohortIdx>
 *   ClusterQueue  <queueClass>-<queueSetIdx>-<queueIdx>-<cohort>   (also its Namespace and
 *                                                                   LocalQueue)
 *   Workload      <workloadClass>-<workloadSetIdx>-<repetition>-<templateIdx>
 *
 * Every name below may carry a prefix (the smoke test runs against a shared API server).
 */

#define SCALE_NAME_MAX 160

/* Labels of Kueue's runner (generator.go). */
#define SCALE_LABEL_CLASS   "kueue.x-k8s.io/performance-scheduler-class"
#define SCALE_LABEL_RUNTIME "kueue.x-k8s.io/performance-scheduler-running-ms"
#define SCALE_LABEL_CLEANUP "kueue.x-k8s.io/performance-scheduler-cleanup"

typedef struct scale_tmpl_s {
    const char *class_name; /* small, medium, large */
    uint32_t runtime_ms;
    int32_t priority;
    int64_t request_milli; /* cpu */
} scale_tmpl_t;

typedef struct scale_wlset_s {
    uint32_t count;
    uint32_t interval_ms;
    const scale_tmpl_t *tmpl; /* borrowed (static tables) */
    size_t ntmpl;
} scale_wlset_t;

typedef struct scale_qset_s {
    const char *class_name; /* "cq" */
    uint32_t count;
    int64_t nominal_milli;
    int64_t borrowing_milli; /* < 0: no borrowingLimit */
    const char *reclaim_within_cohort;
    const char *within_cluster_queue;
    const scale_wlset_t *sets;
    size_t nsets;
} scale_qset_t;

typedef struct scale_cset_s {
    const char *class_name; /* "cohort" */
    uint32_t count;
    const scale_qset_t *qsets;
    size_t nqsets;
} scale_cset_t;

/* Kueue's own figures for a shape, measured on this machine (issue 13); 0 when unknown. */
typedef struct scale_ref_s {
    double wall_s;
    double admit_s[3]; /* small, medium, large */
    double cpu_s;
    double rss_mib;
    long evictions;
} scale_ref_t;

typedef struct scale_shape_s {
    const char *name;
    const char *flavor; /* "rf" */
    const scale_cset_t *csets;
    size_t ncsets;
    scale_ref_t kueue;
} scale_shape_t;

/* One ClusterQueue of a shape, flattened. */
typedef struct scale_cq_s {
    uint32_t cohort;           /* index into the shape's flattened cohorts */
    const scale_qset_t *qset;  /* borrowed from the shape */
    uint32_t qset_idx, q_idx;  /* Kueue's queueSetIdx and queue index */
    char name[SCALE_NAME_MAX]; /* also the Namespace and the LocalQueue */
} scale_cq_t;

/* A shape expanded: every cohort and ClusterQueue with its name. */
typedef struct scale_layout_s {
    const scale_shape_t *shape;  /* borrowed */
    char flavor[SCALE_NAME_MAX]; /* the ResourceFlavor's name, prefixed */
    uint32_t ncohorts;
    char (*cohort_names)[SCALE_NAME_MAX]; /* owned, ncohorts */
    int64_t *cohort_nominal_milli;        /* owned: sum of its ClusterQueues' nominal quotas */
    uint32_t ncqs;
    scale_cq_t *cqs;   /* owned */
    uint64_t nwl;      /* workloads in all */
    uint64_t *cq_base; /* owned: ncqs+1 entries, the first workload index of each ClusterQueue */
    uint32_t *by_name; /* owned: ClusterQueue indexes sorted by name (for lookups) */
} scale_layout_t;

/* The built-in shape `name` ("baseline", "large-scale", "smoke"), or NULL. */
const scale_shape_t *scale_shape_find(const char *name);

/* Names of the built-in shapes, comma-separated (static). */
const char *scale_shape_names(void);

/* Expand `shape` with every cohort and ClusterQueue name prefixed by `prefix` (may be NULL).
 * Returns 0, or -1 on out-of-memory or a name longer than SCALE_NAME_MAX. */
int scale_layout_init(scale_layout_t *l, const scale_shape_t *shape, const char *prefix);

/* Release what `l` owns; safe on a zeroed layout. */
void scale_layout_fini(scale_layout_t *l);

/* Where workload number `idx` (0 <= idx < nwl, in the order of scale_layout_wl) sits. */
typedef struct scale_wlpos_s {
    uint32_t cq;
    uint32_t set, rep, tmpl; /* workloadSetIdx, repetition, template index */
    const scale_tmpl_t *t;   /* borrowed */
} scale_wlpos_t;

/* Position of workload `idx`; workloads are numbered per ClusterQueue, then per set, then per
 * repetition, then per template. Returns 0, or -1 when idx is out of range. */
int scale_layout_wl(const scale_layout_t *l, uint64_t idx, scale_wlpos_t *out);

/* The index of the workload at (cq, set, rep, tmpl). */
uint64_t scale_layout_wl_index(const scale_layout_t *l, uint32_t cq, uint32_t set, uint32_t rep,
                               uint32_t tmpl);

/* The index of the ClusterQueue named `name`, or -1. */
int64_t scale_layout_cq_find(const scale_layout_t *l, const char *name);

/* The index of workload `name` in namespace `ns` (Kueue's names), or -1 when it is not one of
 * the shape's. */
int64_t scale_layout_wl_find(const scale_layout_t *l, const char *ns, const char *name);

/* Kueue's workload name for a position: "<class>-<set>-<rep>-<tmpl>". */
void scale_wl_name(const scale_wlpos_t *p, char *buf, size_t n);

/* Index of the class name ("small" 0, "medium" 1, "large" 2; others 3). */
int scale_class_index(const char *class_name);

/* Σ request × runtime over every workload (milli-cpu × ms). */
double scale_layout_work(const scale_layout_t *l);

/* Σ nominal quota of every ClusterQueue (milli-cpu). */
int64_t scale_layout_capacity(const scale_layout_t *l);

/* The lower bound on the wall time (s): work / capacity. */
double scale_layout_lower_bound_s(const scale_layout_t *l);

/* How long Kueue's schedule takes to create everything when creates take no time (s): the
 * longest workload set, count × interval. */
double scale_layout_generation_s(const scale_layout_t *l);

#endif
