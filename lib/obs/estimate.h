/* estimate -- when will each pending workload start: a copy of the engine run forward in virtual
 * time, with expected runtimes. */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_OBS_ESTIMATE_H
#define SLUICE_OBS_ESTIMATE_H

#include "sched/sched.h"
#include "util/err.h"
#include "util/hmap.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The estimate (docs/observability.md, "When will it start", states its accuracy, measured in
 * the simulator): sched_clone() of the live engine, driven as the simulator drives one
 * (lib/sim/run.c), from `now`:
 *
 *   every workload holding quota ends at admission + its expected runtime (already past: at
 *   `now`); an evicting one stops at `now` and goes back to its queue;
 *   at each instant: the ends due, then sched_cycle() until it decides nothing -- admissions
 *   (the first of each workload pending at `now` is its estimate) start their expected runtime,
 *   preempted and evicted workloads go back to their queue at once, workloads past their
 *   maximum execution time are deactivated by the engine;
 *   the next instant is the earliest end or engine deadline;
 *
 * until every workload pending at `now` has started, `now + horizon` is passed, or the cycle
 * budget is spent. Preemption, borrowing, fair sharing, flavor fungibility: whatever the engine
 * does, the estimate does, because it is the engine. It assumes nothing else arrives (no new
 * workload, no quota change) and runtimes are as expected. The expected runtime is the caller's
 * (estimate_runtime_fn; estimate_means_runtime below is the one the operator and the simulator
 * use). A workload of unknown runtime never ends within the horizon: what waits behind it gets
 * no estimate.
 */

/* Expected runtime in ms of workload `info` (a view of the copy), or -1 when unknown. */
typedef int64_t (*estimate_runtime_fn)(void *ud, const sched_wl_info_t *info);

#define ESTIMATE_DEFAULT_HORIZON_MS (24LL * 3600 * 1000)
#define ESTIMATE_DEFAULT_MAX_CYCLES 5000

typedef struct estimate_opts_s {
    int64_t horizon_ms; /* 0: ESTIMATE_DEFAULT_HORIZON_MS */
    size_t max_cycles;  /* sched_cycle() calls at most; 0: ESTIMATE_DEFAULT_MAX_CYCLES */
    estimate_runtime_fn runtime;
    void *ud;
} estimate_opts_t;

typedef struct estimate_stats_s {
    size_t pending;   /* workloads pending at `now` (each has an entry) */
    size_t estimated; /* of those, with a start */
    size_t cycles;    /* sched_cycle() calls */
    size_t instants;  /* virtual instants visited */
    int64_t reached;  /* the last instant visited (ms) */
    bool truncated;   /* stopped by the cycle budget before the horizon */
} estimate_stats_t;

typedef struct estimate_entry_s {
    char *key;     /* owned: "namespace/name" */
    char *cq;      /* its ClusterQueue at `now` (owned by the result's `cqs`), NULL when none */
    int64_t start; /* estimated start (ms, the scale of `now`), -1 when none */
} estimate_entry_t;

/* One run's result (what the operator caches between runs). */
typedef struct estimate_s {
    int64_t now;               /* when it was made (ms) */
    estimate_entry_t *entries; /* owned: the pending workloads, in key order */
    size_t len;
    util_hmap_t index; /* key -> index into entries (keys borrowed from the entries) */
    util_hmap_t cqs;   /* ClusterQueue name -> the one copy the entries point at (owned) */
    estimate_stats_t stats;
} estimate_t;

/* Run the estimate over a copy of `s` (left untouched) at `now`; *out gets a new result, free it
 * with estimate_free(). ERR_NOMEM (*out untouched), or ERR_INVALID when the copy refuses a step
 * (an engine bug; msg says which). */
err_t estimate_run(const sched_t *s, int64_t now, const estimate_opts_t *opts, estimate_t **out,
                   err_msg_t *msg);

/* The same in two phases, for drivers that run the forward part off their loop (the operator
 * runs it on libuv's thread pool): estimate_prepare() copies the engine and asks opts->runtime
 * for every workload that can run -- call it where `s` and the runtime function may be read --
 * and estimate_job_run() then touches only the job (any thread). estimate_job_take() hands over
 * the result once the job has run (NULL before; the job keeps nothing). */
typedef struct estimate_job_s estimate_job_t;
err_t estimate_prepare(const sched_t *s, int64_t now, const estimate_opts_t *opts,
                       estimate_job_t **out, err_msg_t *msg);
err_t estimate_job_run(estimate_job_t *j, err_msg_t *msg);
estimate_t *estimate_job_take(estimate_job_t *j);
/* Release a job (and its result when not taken); NULL-safe. */
void estimate_job_free(estimate_job_t *j);

/* The estimated start (ms, the scale of `now`) of pending workload `key`, or -1 when there is
 * none or `key` was not pending when `e` was made. `e` may be NULL. */
int64_t estimate_start(const estimate_t *e, const char *key);

/* Release a result; NULL-safe. */
void estimate_free(estimate_t *e);

/* ---- expected runtimes ------------------------------------------------------------------------
 * The mean runtime observed per LocalQueue and priority class, falling back to the LocalQueue,
 * then the ClusterQueue. */

typedef struct estimate_means_s {
    util_hmap_t m;   /* "p:<lq>\n<class>", "l:<lq>", "c:<cq>" -> owned {sum, n} */
    size_t max_keys; /* bound: keys past it are not learnt (0: 100000) */
} estimate_means_t;

/* An empty table. */
void estimate_means_init(estimate_means_t *m, size_t max_keys);
/* Release the table; NULL-safe. */
void estimate_means_fini(estimate_means_t *m);

/* Workload `info` (holding quota; its LocalQueue, priority class and ClusterQueue are read)
 * ran `ran_ms`: it joins the three means. ERR_NOMEM (means partly updated). */
err_t estimate_means_add(estimate_means_t *m, const sched_wl_info_t *info, int64_t ran_ms);

/* An estimate_runtime_fn, `ud` an estimate_means_t: the workload's maximum execution time when
 * set, else the first mean known of: its LocalQueue and priority class, its LocalQueue, its
 * ClusterQueue; else -1. */
int64_t estimate_means_runtime(void *ud, const sched_wl_info_t *info);

#endif
