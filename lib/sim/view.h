/* view -- ordered views of a run record shared by the summary, human and report writers. */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_SIM_VIEW_H
#define SLUICE_SIM_VIEW_H

#include "sim/record.h"
#include "util/err.h"

#include <stdbool.h>
#include <stddef.h>

/*
 * Every output lists things in a fixed order that does not depend on hashing or on the order the
 * engine happened to mention them: ClusterQueues by name, (flavor, resource) pairs by flavor then
 * resource, workloads in creation order.
 */

/* Holder indices of the ClusterQueues (not Cohorts), sorted by name; *n gets the count. Caller
 * frees; NULL on OOM (or when there are none, with *n == 0). */
size_t *sim_view_cqs(const sim_rec_t *r, size_t *n);

/* Global (flavor, resource) indices sorted by flavor then resource. Caller frees. */
size_t *sim_view_gfrs(const sim_rec_t *r, size_t *n);

/* Indices into holder `h`'s frs sorted by flavor then resource. Caller frees. */
size_t *sim_view_frs(const sim_rec_t *r, size_t h, size_t *n);

/* Workloads grouped by the holder they are attributed to, in creation order within a group:
 * wl[start[h] .. start[h+1]) for holder h; the last group (h == nholders) holds the workloads
 * leading to no ClusterQueue. Built once in O(workloads + holders). */
typedef struct sim_view_groups_s {
    size_t *start; /* owned: nholders + 2 entries */
    size_t *wl;    /* owned: nwls entries */
} sim_view_groups_t;

/* Group the workloads of `r` into `g`; ERR_NOMEM. */
err_t sim_view_groups_init(sim_view_groups_t *g, const sim_rec_t *r);

/* Release `g`; NULL-safe. */
void sim_view_groups_fini(sim_view_groups_t *g);

/* Number of workloads attributed to holder `h`. */
size_t sim_view_group_len(const sim_view_groups_t *g, size_t h);

/* The waits (ms) of every workload attributed to holder `h`, sorted ascending. Caller frees;
 * *n may be 0. NULL only on OOM. */
sim_ms_t *sim_view_waits(const sim_rec_t *r, const sim_view_groups_t *g, size_t h, size_t *n);

/* Why the run stopped: "completed" (every workload gone), "until" (--until reached) or "stalled"
 * (nothing could change any more while workloads remained). */
const char *sim_view_end_reason(const sim_rec_t *r);

/* Workload state names as the summary writes them ("Pending", "Running", "Finished", ...). */
const char *sim_view_state(sim_wl_state_t s);

/* The ClusterQueue's weighted dominant share of the cluster over the run: the largest, over the
 * (flavor, resource) pairs it used, of its usage integral divided by the cluster's nominal-quota
 * integral for that pair (every ClusterQueue and Cohort), divided by its fair-sharing weight.
 * False when the queue had no workload (it does not take part in Jain's index). */
bool sim_view_fair_share(const sim_rec_t *r, const sim_view_groups_t *g, size_t h, long double *x);

#endif
