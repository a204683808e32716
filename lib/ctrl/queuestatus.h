/* queuestatus -- ClusterQueue and LocalQueue status objects from the engine (pure builders). */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_CTRL_QUEUESTATUS_H
#define SLUICE_CTRL_QUEUESTATUS_H

#include "sched/sched.h"
#include "util/hmap.h"

#include <jansson.h>
#include <stdint.h>

/*
 * Kueue's ClusterQueueStatus: pendingWorkloads, reservingWorkloads, admittedWorkloads,
 * flavorsReservation and flavorsUsage ([{name: flavor, resources: [{name, total, borrowed}]}],
 * flavor order of the spec), fairSharing.weightedShare when fair sharing is on, and the Active
 * condition. `current` is the object's status as stored (borrowed, may be NULL): its conditions
 * keep their lastTransitionTime unless the status changes. A new reference, NULL on OOM or when
 * the engine does not know the ClusterQueue.
 */
json_t *queuestatus_cq(const sched_t *s, const char *name, const json_t *current, bool fair,
                       int64_t now_s);

/* Kueue's CohortStatus for Cohort `name`: `current` (borrowed, may be NULL) with fairSharing
 * {weightedShare} set when `fair`, removed otherwise (Kueue's Cohort controller). A new
 * reference; NULL on OOM or when the engine does not know the cohort. */
json_t *queuestatus_cohort(const sched_t *s, const char *name, const json_t *current, bool fair);

/* Per-LocalQueue counters, filled by queuestatus_lq_collect(). */
typedef struct queuestatus_tally_s queuestatus_tally_t;
typedef struct queuestatus_lqs_s {
    util_hmap_t by_lq; /* "ns/name" -> queuestatus_tally_t (owned) */
} queuestatus_lqs_t;

/* Walk the engine's workloads once and count them per LocalQueue. The counters borrow the
 * engine's flavor and resource names: use them before the engine next changes. ERR_NOMEM. */
err_t queuestatus_lq_collect(const sched_t *s, queuestatus_lqs_t *out);

/* Release the counters; NULL-safe. */
void queuestatus_lqs_fini(queuestatus_lqs_t *l);

/* Kueue's LocalQueueStatus for LocalQueue `key` ("ns/name") pointing at ClusterQueue `cq`:
 * pendingWorkloads, reservingWorkloads, admittedWorkloads, flavorsReservation, flavorsUsage
 * ([{name, resources: [{name, total}]}]) and the Active condition (False when the LocalQueue is
 * `stopped` (a stopPolicy other than None: reason Stopped, as Kueue's LocalQueue controller), or
 * its ClusterQueue is missing or inactive). NULL on OOM. */
json_t *queuestatus_lq(const sched_t *s, const queuestatus_lqs_t *lqs, const char *key,
                       const char *cq, bool stopped, const json_t *current, int64_t now_s);

/* Admission fair sharing (Configuration admissionFairSharing): set `status`.fairSharing of
 * LocalQueue `key` to Kueue's {weightedShare: 0, admissionFairSharingStatus: {consumedResources,
 * lastUpdate}} from the engine at `now_ms` (its last sample at or before then). Nothing is set
 * while the engine has no state for the LocalQueue (off, or no time seen yet). ERR_NOMEM. */
err_t queuestatus_lq_afs(const sched_t *s, const char *key, int64_t now_ms, json_t *status);

/* After a restart: LocalQueue `key`'s persisted status.fairSharing.admissionFairSharingStatus.
 * consumedResources (`status` is its status object; malformed amounts are skipped) seeds the
 * engine's usage history, once (sched_lq_afs_seed). ERR_NOMEM. */
err_t queuestatus_lq_afs_seed(sched_t *s, const char *key, const json_t *status);

#endif
