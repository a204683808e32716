/* record -- what happened during a run: per-workload, per-queue and per-flavor timelines. */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_SIM_RECORD_H
#define SLUICE_SIM_RECORD_H

#include "model/types.h"
#include "sim/stats.h"
#include "sim/vtime.h"
#include "util/err.h"
#include "util/hmap.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The run loop reports every state change here; the outputs (summary JSON, human summary, HTML
 * report) only read the finished record. All bookkeeping is exact: quantities in nano-units
 * (qnano_t), time in milliseconds, integrals in nano-units x milliseconds (sim_wide_t).
 *
 * Quota holders are ClusterQueues and Cohorts; both have per-(flavor, resource) entries whose
 * nominal quota comes from their spec, and ClusterQueues also carry usage. Entries are created on
 * first sight and never removed, so indices stay valid.
 */

#define SIM_NONE ((size_t)-1)

typedef enum {
    SIM_WL_PENDING = 0,
    SIM_WL_RUNNING,
    SIM_WL_FINISHED,
    SIM_WL_DEACTIVATED,
    SIM_WL_DELETED,
} sim_wl_state_t;

/* A step function of time: value v[i] holds from t[i] until t[i+1]. */
typedef struct sim_series_s {
    sim_ms_t *t; /* owned */
    qnano_t *v;  /* owned */
    size_t len;
    size_t cap;
} sim_series_t;

/* One quantity a running workload holds on one (flavor, resource) of its ClusterQueue. */
typedef struct sim_hold_s {
    size_t fr;  /* index into its ClusterQueue's frs */
    size_t gfr; /* index into the record's global frs */
    qnano_t amount;
    bool gpu;
} sim_hold_t;

typedef struct sim_wl_rec_s {
    char *name;           /* owned: "namespace/name" */
    char *ns;             /* owned */
    char *priority_class; /* owned: WorkloadPriorityClass or PriorityClass name, "" when none */
    int32_t priority;     /* the workload's priority when it was last seen by the engine */
    size_t cq;            /* holder index: where it was admitted, or where its queue leads */
    sim_wl_state_t state;
    sim_ms_t submit;
    sim_ms_t first_admit; /* -1 = never */
    sim_ms_t last_admit;  /* -1 = never */
    sim_ms_t finish;      /* -1 = not finished (Finished only) */
    sim_ms_t left;        /* finished, deactivated or deleted at; -1 = still there */
    sim_ms_t wait;        /* total time pending (closed at sim_rec_end) */
    sim_ms_t pending_since;
    unsigned preemptions;
    unsigned evictions; /* stopped by a HoldAndDrain stop policy */
    sim_wide_t gpu_nano_ms;
    sim_hold_t *holds; /* owned: what it holds while RUNNING */
    size_t nholds;
    size_t reason; /* index into reasons, SIM_NONE when none */
    sim_ms_t reason_since;
    char *lq;    /* owned: "namespace/queueName" of its LocalQueue; NULL when not told */
    size_t span; /* index into spans of the current admission while RUNNING */
} sim_wl_rec_t;

typedef struct sim_fr_rec_s {
    char *flavor;   /* owned */
    char *resource; /* owned */
    size_t gfr;     /* index into the record's global frs */
    qnano_t usage;
    qnano_t nominal;
    qnano_t peak;
    sim_ms_t since; /* integrals are complete up to here */
    sim_wide_t usage_int;
    sim_wide_t nominal_int;
    sim_wide_t borrowed_int; /* integral of max(0, usage - nominal) */
    /* The spec's limits as last set (the report's cohort tree). */
    bool has_borrowing_limit;
    bool has_lending_limit;
    qnano_t borrowing_limit;
    qnano_t lending_limit;
    sim_series_t usage_series;   /* this holder's usage over time (ClusterQueues) */
    sim_series_t nominal_series; /* this holder's nominal quota over time */
} sim_fr_rec_t;

typedef struct sim_holder_s {
    char *name; /* owned */
    bool is_cohort;
    sim_fr_rec_t *frs; /* owned, in order of first sight */
    size_t nfrs;
    size_t cap;
    /* ClusterQueues only */
    size_t admissions;
    size_t preemptions; /* its workloads preempted */
    size_t finished;
    size_t deactivated;
    size_t deleted;
    size_t evictions;
    int64_t pending; /* now */
    sim_series_t pending_series;
    sim_wide_t gpu_nano_ms;
    qnano_t weight; /* spec.fairSharing.weight in nano-units; 1e9 (a weight of 1) by default */
    char *cohort;   /* owned: spec.cohortName (a Cohort's spec.parentName); NULL = none */
} sim_holder_t;

/* A (flavor, resource) over the whole cluster: usage of every ClusterQueue and nominal quota of
 * every ClusterQueue and Cohort. */
typedef struct sim_gfr_s {
    char *flavor;   /* owned */
    char *resource; /* owned */
    qnano_t usage;
    qnano_t nominal;
    sim_ms_t since;
    sim_wide_t usage_int;
    sim_wide_t nominal_int;
    sim_series_t usage_series;
    sim_series_t nominal_series;
} sim_gfr_t;

typedef struct sim_preemption_s {
    sim_ms_t t;
    size_t victim;      /* workload index */
    size_t preemptor;   /* workload index, SIM_NONE when unknown */
    size_t cq;          /* holder index of the victim */
    const char *reason; /* static: Kueue's reason name */
} sim_preemption_t;

typedef struct sim_reason_s {
    char *text;        /* owned: the engine's explanation with numbers replaced by "N" */
    size_t waits;      /* waits it explained (one per workload per change of explanation) */
    sim_ms_t total;    /* pending time attributed to it */
    char *example;     /* owned: the first message as the engine wrote it, numbers kept */
    size_t example_wl; /* the workload it was about */
} sim_reason_t;

/* How an admission ended. */
typedef enum {
    SIM_SPAN_RUNNING = 0, /* still running when the run stopped */
    SIM_SPAN_FINISHED,
    SIM_SPAN_PREEMPTED,
    SIM_SPAN_EVICTED,
    SIM_SPAN_DEACTIVATED,
    SIM_SPAN_DELETED,
} sim_span_end_t;

/* One admission of a workload, from admission to the moment its quota was given back. */
typedef struct sim_span_s {
    size_t wl;
    size_t cq;      /* holder index */
    size_t gfr;     /* its largest GPU hold's (flavor, resource) (any hold without GPU);
                     * SIM_NONE when it held no quota */
    qnano_t amount; /* what it held of gfr's resource, over all flavors */
    sim_ms_t start;
    sim_ms_t end; /* -1 while running */
    sim_span_end_t how;
} sim_span_t;

typedef struct sim_rec_s sim_rec_t;

/* Told when a workload starts and stops holding quota (lib/sim/acct.c writes the accounting log
 * from it). on_admit runs before the record changes (the workload is still pending: its
 * pending_since is when it entered the queue); on_release after the workload stopped, with
 * `state` SIM_WL_PENDING (preempted: `preemption` reason; evicted: `eviction` reason) or the
 * state it left in (finished, deactivated, deleted). Both callbacks may be NULL. */
typedef struct sim_rec_hook_s {
    void (*on_admit)(void *ud, const sim_rec_t *r, size_t w, const admission_t *adm, sim_ms_t t);
    void (*on_release)(void *ud, const sim_rec_t *r, size_t w, sim_wl_state_t state,
                       const char *preemption, const char *eviction, sim_ms_t t);
    void *ud;
} sim_rec_hook_t;

struct sim_rec_s {
    sim_rec_hook_t hook; /* zero: nobody is told */
    sim_wl_rec_t *wls;   /* owned, in creation order */
    size_t nwls, capwls;
    util_hmap_t wl_index;
    sim_holder_t *holders; /* owned, in order of first sight */
    size_t nholders, capholders;
    util_hmap_t holder_index; /* "cq/<name>" or "cohort/<name>" */
    sim_gfr_t *gfrs;          /* owned, in order of first sight */
    size_t ngfrs, capgfrs;
    util_hmap_t gfr_index;
    sim_preemption_t *preemptions; /* owned, in time order */
    size_t npreemptions, cappreemptions;
    sim_reason_t *reasons; /* owned */
    size_t nreasons, capreasons;
    util_hmap_t reason_index;
    sim_span_t *spans; /* owned, in admission order */
    size_t nspans, capspans;
    sim_ms_t end; /* the instant the run stopped; -1 until sim_rec_end */
    bool until_reached;
    size_t events;   /* JSON Lines events emitted */
    char *graph_svg; /* owned: the scenario's queue graph as an inline <svg> element (sim_run
                        draws it, the report shows it), NULL when none */
};

/* An empty record. */
void sim_rec_init(sim_rec_t *r);

/* Release everything; NULL-safe. */
void sim_rec_fini(sim_rec_t *r);

/*
 * Every function that records something returns ERR_NOMEM when an allocation failed; the record
 * is then incomplete (a series may miss a point) but stays consistent enough to be finalised,
 * and the run that fills it fails.
 */

/* Index of ClusterQueue (`is_cohort` false) or Cohort `name`, created on first use, into *out.
 * ERR_NOMEM. */
err_t sim_rec_holder(sim_rec_t *r, const char *name, bool is_cohort, size_t *out);

/* Replace the nominal quotas of holder `h` at `t` with those of `groups` (every (flavor,
 * resource) not listed drops to 0). ERR_NOMEM; ERR_INVALID for SIM_NONE. */
err_t sim_rec_set_quotas(sim_rec_t *r, size_t h, const resource_group_t *groups, size_t ngroups,
                         sim_ms_t t);

/* Holder `h` belongs to Cohort `cohort` (NULL or "": to none). ERR_NOMEM. */
err_t sim_rec_holder_cohort(sim_rec_t *r, size_t h, const char *cohort);

/* A new workload submitted at `t`, pending in the queue of holder `cq` (SIM_NONE when its
 * queue leads nowhere); its index into *out. ERR_NOMEM. */
err_t sim_rec_wl_add(sim_rec_t *r, const char *name, const char *ns, const char *pclass,
                     int32_t priority, size_t cq, sim_ms_t t, size_t *out);

/* Workload `w` was submitted to LocalQueue `queue` of namespace `ns` (NULL queue: none).
 * ERR_NOMEM. */
err_t sim_rec_wl_queue(sim_rec_t *r, size_t w, const char *ns, const char *queue);

/* The index of workload `name`, SIM_NONE when unknown. */
size_t sim_rec_wl_find(const sim_rec_t *r, const char *name);

/* Pending workload `w` now leads to holder `cq` (its LocalQueue changed). ERR_NOMEM. */
err_t sim_rec_wl_retarget(sim_rec_t *r, size_t w, size_t cq, sim_ms_t t);

/* Workload `w` was admitted to holder `cq` at `t` with `adm`. ERR_NOMEM; ERR_INVALID for
 * SIM_NONE. */
err_t sim_rec_wl_admit(sim_rec_t *r, size_t w, size_t cq, const admission_t *adm, sim_ms_t t);

/* Running workload `w` was preempted by `preemptor` (SIM_NONE: unknown) for `reason` (static
 * string) and is pending again. ERR_NOMEM. */
err_t sim_rec_wl_preempt(sim_rec_t *r, size_t w, size_t preemptor, const char *reason, sim_ms_t t);

/* Running workload `w` was evicted by a stop policy (Kueue's `reason`, may be NULL) and is
 * pending again. ERR_NOMEM. */
err_t sim_rec_wl_evict(sim_rec_t *r, size_t w, const char *reason, sim_ms_t t);

/* Workload `w` left for good at `t`: `state` is SIM_WL_FINISHED, _DEACTIVATED or _DELETED.
 * ERR_NOMEM. */
err_t sim_rec_wl_leave(sim_rec_t *r, size_t w, sim_wl_state_t state, sim_ms_t t);

/* Pending workload `w` waits, from `t`, for the engine's explanation `message`. ERR_NOMEM. */
err_t sim_rec_wl_reason(sim_rec_t *r, size_t w, const char *message, sim_ms_t t);

/* Close the record at `t`: integrals, waits and GPU time of what is still running or pending
 * are counted up to `t`. */
void sim_rec_end(sim_rec_t *r, sim_ms_t t);

/* Replace every number in `msg` ("8", "1500m", "2Gi", "-3") by "N", so explanations that differ
 * only in amounts group together. Returns a new string (caller frees), NULL on OOM. */
char *sim_reason_normalize(const char *msg);

/* Series value at the end of the step containing `t` (0 before the first point). */
qnano_t sim_series_at(const sim_series_t *s, sim_ms_t t);

#endif
