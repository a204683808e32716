/* events -- the simulator's JSON Lines event stream (scenario-format.md, "Output"). */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_SIM_EVENTS_H
#define SLUICE_SIM_EVENTS_H

#include "model/types.h"
#include "sim/vtime.h"
#include "util/err.h"

#include <stdbool.h>
#include <stdio.h>

/*
 * One event per line, keys always in this order: time, event, workload, clusterQueue, then the
 * event's own fields in the order the contract lists them. `time` is seconds since the start,
 * printed exactly from integer milliseconds (1.5, never 1.5000001). Strings are escaped as JSON
 * requires (UTF-8 passes through; control characters become \uXXXX).
 */
typedef struct sim_events_s {
    FILE *out;   /* borrowed; NULL = events are counted but not written */
    bool failed; /* a write failed (see sim_events_finish) */
    size_t count;
} sim_events_t;

/* Start a stream on `out` (borrowed, may be NULL to write nothing). */
void sim_events_init(sim_events_t *ev, FILE *out);

/* `Admitted`: `flavors` maps each podset of `adm` to its resource -> flavor map (resources in
 * name order, podsets in admission order); `borrowing` as the engine decided. */
void sim_events_admitted(sim_events_t *ev, sim_ms_t t, const char *wl, const char *cq,
                         const admission_t *adm, bool borrowing);

/* `Preempted` with the preemptor's workload name and Kueue's reason string. */
/* A QuotaReserved event: quota reserved for a workload whose admission checks `checks` must be
 * Ready before it is Admitted (only for ClusterQueues with admission checks). */
void sim_events_quota_reserved(sim_events_t *ev, sim_ms_t t, const char *wl, const char *cq,
                               const admission_t *adm, bool borrowing, char *const *checks,
                               size_t nchecks);

void sim_events_preempted(sim_events_t *ev, sim_ms_t t, const char *wl, const char *cq,
                          const char *preemptor, const char *reason);

/* `Finished`. */
void sim_events_finished(sim_events_t *ev, sim_ms_t t, const char *wl, const char *cq);

/* `Deactivated` with its reason (e.g. "MaximumExecutionTimeExceeded"). */
void sim_events_deactivated(sim_events_t *ev, sim_ms_t t, const char *wl, const char *cq,
                            const char *reason);

/* `Evicted` with Kueue's eviction reason: "ClusterQueueStopped" / "LocalQueueStopped" (a stopPolicy
 * HoldAndDrain), "PodsReadyTimeout" (waitForPodsReady). The workload goes back to its queue. */
void sim_events_evicted(sim_events_t *ev, sim_ms_t t, const char *wl, const char *cq,
                        const char *reason);

/* `NodeReplaced` (a sluice extension, docs/simulator.md): failed node `node` of the workload's
 * topology assignment replaced; `topology`: per TAS podset of `adm`, node -> pods. */
void sim_events_node_replaced(sim_events_t *ev, sim_ms_t t, const char *wl, const char *cq,
                              const char *node, const admission_t *adm);

/* `Requeued` with its reason: "BackoffFinished" (a PodsReady timeout's requeue backoff ended;
 * the workload is queued again). */
void sim_events_requeued(sim_events_t *ev, sim_ms_t t, const char *wl, const char *cq,
                         const char *reason);

/* `Deleted`; `cq` is "" when the workload's queue leads nowhere. */
void sim_events_deleted(sim_events_t *ev, sim_ms_t t, const char *wl, const char *cq);

/* Flush the stream; ERR_IO (with the system's reason in `msg`) when any write failed. */
err_t sim_events_finish(sim_events_t *ev, err_msg_t *msg);

/* Write `s` as a JSON string literal, quotes included, to `out`. */
void sim_json_write_string(FILE *out, const char *s);

#endif
