/* estimate -- when a pending workload will start: its ClusterQueue's queue played forward over
 * the quota it can use now, with expected runtimes. */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_OBS_ESTIMATE_H
#define SLUICE_OBS_ESTIMATE_H

#include "sched/sched.h"
#include "util/err.h"

#include <stddef.h>
#include <stdint.h>

/*
 * The estimate (docs/observability.md states its accuracy, measured in the simulator):
 *
 *   capacity = per resource, what the ClusterQueue holds now plus what it could still take now
 *              (Kueue's Available: nominal quota, plus what it may borrow from its cohort as the
 *              cohort is now), summed over flavors;
 *   running  = the workloads holding quota there, each ending at admission + expected runtime;
 *   pending  = its queue in the engine's order (priority, then queue time), each taking the
 *              time the first event frees enough for it: every pending workload that fits
 *              starts (BestEffortFIFO: a later smaller one may pass a larger head), and runs
 *              its expected runtime;
 *
 * played forward event by event from `now` to `now + horizon`. A workload that does not start
 * by then -- or that waits behind running workloads of unknown runtime -- has no estimate (-1).
 * It assumes: nothing arrives ahead of it (no higher priority, no new cohort usage), nobody is
 * preempted, flavors of one resource are one pool, and runtimes are as expected. The expected
 * runtime is the caller's (estimate_runtime_fn): the operator and the simulator use the
 * workload's maximum execution time when set, else the mean observed runtime of the workloads
 * that finished in its LocalQueue (then in its ClusterQueue), else unknown.
 *
 * Cost: one query per flavor-resource, one walk over the ClusterQueue's workloads, then
 * O(pending x events); bounded by `max_pending` (the rest: -1).
 */

/* Expected runtime in ms of the workload `info` (admitted or pending), or -1 when unknown. */
typedef int64_t (*estimate_runtime_fn)(void *ud, const sched_wl_info_t *info);

typedef struct estimate_opts_s {
    int64_t horizon_ms; /* 0: 7 days */
    size_t max_pending; /* 0: 1000 */
    estimate_runtime_fn runtime;
    void *ud;
} estimate_opts_t;

/* Called once per pending workload in queue order: its estimated start (ms, same scale as
 * `now`) or -1 when there is none. `key` is borrowed for the call. */
typedef void (*estimate_cb)(void *ud, const char *key, int64_t start_ms);

/* Estimate the pending workloads of ClusterQueue `cq` at `now`. ERR_NOT_FOUND when the engine
 * does not know `cq`, ERR_NOMEM (no callback has run then). */
err_t estimate_cq(const sched_t *s, const char *cq, int64_t now, const estimate_opts_t *opts,
                  estimate_cb cb, void *ud, err_msg_t *msg);

#endif
