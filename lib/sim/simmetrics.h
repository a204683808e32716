/* simmetrics -- `sluice sim --metrics FILE`: a run in the operator's metric names (Prometheus
 * text), so a dashboard reads the simulator's numbers as it reads the cluster's. */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_SIM_SIMMETRICS_H
#define SLUICE_SIM_SIMMETRICS_H

#include "sim/record.h"
#include "sim/vtime.h"
#include "util/err.h"

#include <stdio.h>

struct sched_s; /* lib/sched/sched.h */

/*
 * The same names, types, labels (replica_role="standalone" on Kueue's) and bucket layouts as
 * `sluice run`'s /metrics (docs/observability.md), with the values of the whole run in virtual
 * time:
 *   counters      kueue_admission_attempts_total, kueue_quota_reserved_workloads_total,
 *                 kueue_admitted_workloads_total (+ kueue_local_queue_*), kueue_evicted_
 *                 workloads_total (reason Preempted), kueue_preempted_workloads_total,
 *                 sluice_quota_reserved_resource_seconds_total (exact);
 *   histograms    kueue_quota_reserved_wait_time_seconds, kueue_admission_wait_time_seconds;
 *   gauges        at the end of the run: kueue_pending_workloads, kueue_reserving_active_
 *                 workloads, kueue_admitted_active_workloads, kueue_cluster_queue_status,
 *                 kueue_cluster_queue_{resource_reservation,resource_usage,nominal_quota,
 *                 borrowing_limit,lending_limit}, sluice_cluster_queue_idle_nominal_quota.
 * It observes the engine after every instant (sim_options_t.on_instant) and reads the record's
 * preemptions at the end.
 */

typedef struct sim_metrics_s sim_metrics_t;

/* A new collector; NULL on out-of-memory. */
sim_metrics_t *sim_metrics_new(void);

/* Release; NULL-safe. */
void sim_metrics_free(sim_metrics_t *m);

/* The sim_options_t.on_instant observer (`ud`: the collector). An allocation that fails loses
 * that observation and makes sim_metrics_write() fail with ERR_NOMEM. */
void sim_metrics_on_instant(void *ud, sim_ms_t now, const struct sched_s *engine);

/* Write the exposition of the finished run `rec` to `out`. ERR_NOMEM, ERR_IO. */
err_t sim_metrics_write(sim_metrics_t *m, const sim_rec_t *rec, FILE *out, err_msg_t *msg);

#endif
