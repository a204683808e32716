/* families -- the metric families sluice exposes, declared once: Kueue's core set under Kueue's
 * names and sluice's own (name, type, labels, bucket layout, help). */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_OBS_FAMILIES_H
#define SLUICE_OBS_FAMILIES_H

#include "obs/metrics.h"
#include "util/err.h"

/*
 * The operator's /metrics (lib/ctrl/metrics.c) and `sluice sim --metrics` (lib/sim/simmetrics.c)
 * both register their families from this one table (families_add), so what a team tried in the
 * simulator reads like what it later watches in Grafana, and a name, label or bucket layout
 * cannot differ between the two. docs/observability.md lists every family.
 *
 * Every Kueue family carries Kueue's label replica_role ("standalone", "leader", "follower").
 */

#define FAMILIES_ROLE "replica_role"

typedef enum {
    /* counters and histograms */
    FAM_ATTEMPTS = 0,
    FAM_ATTEMPT_DURATION,
    FAM_QR_TOTAL,
    FAM_ADM_TOTAL,
    FAM_QR_WAIT,
    FAM_ADM_WAIT,
    FAM_EVICTED,
    FAM_PREEMPTED,
    FAM_LQ_QR_TOTAL,
    FAM_LQ_ADM_TOTAL,
    FAM_LQ_QR_WAIT,
    FAM_LQ_ADM_WAIT,
    FAM_LQ_EVICTED,
    FAM_RSECONDS,
    FAM_ENGINE,
    FAM_DECISIONS,
    FAM_WRITES,
    FAM_WEBHOOK,
    /* gauges: the operator computes them at each scrape, the simulator at the end of a run */
    FAM_PENDING,
    FAM_RESERVING,
    FAM_ADMITTED_ACTIVE,
    FAM_CQ_STATUS,
    FAM_CQ_SHARE,
    FAM_CQ_RESV,
    FAM_CQ_USAGE,
    FAM_CQ_NOMINAL,
    FAM_CQ_BORROW,
    FAM_CQ_LEND,
    FAM_LQ_PENDING,
    FAM_LQ_RESERVING,
    FAM_LQ_ADMITTED_ACTIVE,
    FAM_LQ_STATUS,
    FAM_LQ_RESV,
    FAM_LQ_USAGE,
    FAM_IDLE,
    FAM_FLAVOR_FREE,
    FAM_FLAVOR_LARGEST,
    FAM_FLAVOR_NODES,
    FAM_FLAVOR_ALLOCATABLE,
    FAM_FLAVOR_NOMINAL,
    FAM_FLAVOR_OVER,
    FAM_CACHE,
    FAM_QUEUED,
    FAM_EST_WAIT,
    FAM_EST_WLS,
    FAM_EST_SECONDS,
    FAM_EST_CYCLES,
    FAM_EST_AGE,
    FAM_LEADER,
    FAM_BUILD,
    FAM__COUNT
} families_id_t;

/* The configuration switch of Kueue's a family hangs on: the operator registers it only when
 * the switch is on (the simulator ignores the switches). */
typedef enum {
    FAMILIES_ALWAYS = 0,
    FAMILIES_LQ,           /* metrics.localQueueMetrics.enable */
    FAMILIES_CQ_RESOURCES, /* metrics.enableClusterQueueResources */
    FAMILIES_FAIR_SHARING, /* fairSharing */
} families_switch_t;

typedef struct families_def_s {
    const char *name;
    metrics_type_t type;
    const char *const *labels; /* NULL-terminated; NULL: none */
    int buckets; /* histograms: > 0 Kueue's layout of that many buckets (metrics_kueue_buckets),
                    -1 Prometheus' default, -2 the engine-cycle layout (0.1 ms .. 2.5 s) */
    families_switch_t gate;
    const char *help;
} families_def_t;

/* The declaration of family `id` (static storage); NULL for an id out of range. */
const families_def_t *families_def(families_id_t id);

/* Register family `id` in `reg` with its buckets (and, for the resource-seconds counter, its exact
 * integer arithmetic: metrics_family_set_exact, 12 digits); the family into *out (borrowed from
 * `reg`). ERR_NOMEM, ERR_INVALID (an id out of range, or a name registered already: msg). */
err_t families_add(metrics_registry_t *reg, families_id_t id, metrics_family_t **out,
                   err_msg_t *msg);

#endif
