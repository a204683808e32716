/* verify -- an invariant checker for a run's history, independent of the engine. */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_VERIFY_H
#define SLUICE_VERIFY_H

#include "model/types.h"
#include "util/err.h"

#include <stdbool.h>
#include <stdint.h>

/*
 * The checker is told what happened, in order (the simulator's decisions, or the Workload
 * records of an API watch), and recomputes quota usage on its own -- Kueue's accounting, written
 * again from the reference rather than shared with lib/sched, so that a bug in the engine's
 * arithmetic cannot hide itself:
 *
 *   per (flavor, resource), for every node of a cohort tree (ClusterQueue or Cohort):
 *     subtree(n)    = nominal(n) + sum over children c of (subtree(c) - guaranteed(c))
 *     guaranteed(c) = lendingLimit set ? max(0, subtree(c) - lendingLimit) : 0
 *     usage(cq)     = what its admitted workloads hold
 *     usage(cohort) = sum over children c of max(0, usage(c) - guaranteed(c))
 *   and an admission must leave, on the path from its ClusterQueue to the root,
 *     usage(n) <= subtree(n) + borrowingLimit(n)   (nodes with a borrowingLimit)
 *     usage(root) <= subtree(root)                  (the root: a cohort tree's, or a lone queue)
 *
 * A node already above its limit (its quota was lowered: Kueue preempts nobody for that) is a
 * violation only when an admission adds to it. A workload is admitted only when it holds no
 * quota (a second admission needs a release in between) and never after it finished.
 */

typedef struct verify_s verify_t;

/* An empty checker; NULL on out-of-memory. */
verify_t *verify_new(void);

/* Free `v`; NULL-safe. */
void verify_free(verify_t *v);

/* Add or replace ClusterQueue `cq` / Cohort `co` (borrowed): admissions from now on are checked
 * against its quotas. A cohort named by a ClusterQueue but never given exists with no quota of its
 * own, as in Kueue. ERR_NOMEM. */
err_t verify_cluster_queue(verify_t *v, const cluster_queue_t *cq, err_msg_t *msg);
err_t verify_cohort(verify_t *v, const cohort_t *co, err_msg_t *msg);

/* Workload `key` was admitted at `t_ms` with `adm` (borrowed). ERR_INVALID, with `msg` naming the
 * time (none when `t_ms` < 0: the caller names the instant), workload, rule, node, flavor and
 * resource and the numbers, when the admission breaks a rule above; ERR_NOMEM. A refused
 * admission is not recorded. */
err_t verify_admit(verify_t *v, int64_t t_ms, const char *key, const admission_t *adm,
                   err_msg_t *msg);

/* Workload `key` gave its quota back at `t_ms` (evicted, preempted, deactivated or deleted; a
 * release of a workload holding nothing is allowed: a pending one can be deleted), for good when
 * `finished`. ERR_NOMEM. */
err_t verify_release(verify_t *v, int64_t t_ms, const char *key, bool finished, err_msg_t *msg);

/* Workload `key`, holding quota, now reports `wl`'s status.reclaimablePods (borrowed): its hold
 * shrinks to its admission's usage scaled to the pods its spec still needs when fewer than
 * admitted, as Kueue's (and the engine's) ReclaimablePods. Nothing when it holds nothing or
 * nothing shrinks. ERR_NOMEM. */
err_t verify_reclaim(verify_t *v, const char *key, const workload_t *wl, err_msg_t *msg);

/* Does workload `key` hold quota now? */
bool verify_holds(const verify_t *v, const char *key);

/* Admissions and releases checked so far. */
uint64_t verify_admissions(const verify_t *v);

#endif
