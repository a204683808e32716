/* writer -- the operator's write budget: admissions first, then queue statuses, pending
 * explanations and Events, each within its own rate, all within a window of requests. */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_CTRL_WRITER_H
#define SLUICE_CTRL_WRITER_H

#include "kube/bucket.h"

#include <stdbool.h>
#include <stdint.h>

/*
 * The API server is the shared bottleneck of every controller in the cluster, and the client's
 * own limiter (clientConnection.qps) is one FIFO: an Event queued before an admission delays
 * it. The writer decides, before anything reaches the client, which class may start a request:
 *
 *   ADMISSION  admissions, evictions, releases, finishes, Job start/stop, Workload creation:
 *              the work itself. Never rate-limited here; may use the whole window.
 *   STATUS     ClusterQueue/LocalQueue statuses. At most `status_qps`, and only while fewer
 *              than half the window is in flight, so a queue of them never delays an admission.
 *   EXPLAIN    QuotaReserved=False explanations of pending Workloads: `explain_qps`, same rule.
 *   EVENT      core/v1 Events: `event_qps`, same rule. Beyond the budget they are dropped and
 *              counted (Kueue's recorder drops too), never queued without bound.
 *
 * The window bounds the requests the operator has handed to the client and not seen answered,
 * so the client's FIFO never holds more than a window's worth. Pure: the caller passes `now`.
 */

typedef enum {
    CTRL_WRITE_ADMISSION = 0,
    CTRL_WRITE_STATUS,
    CTRL_WRITE_EXPLAIN,
    CTRL_WRITE_EVENT,
    CTRL_WRITE__CLASSES
} ctrl_write_class_t;

typedef struct ctrl_writer_opts_s {
    uint32_t window;            /* requests in flight at most; 0: 64 */
    uint64_t status_qps_milli;  /* 0: 10/s */
    uint64_t explain_qps_milli; /* 0: 2/s */
    uint64_t event_qps_milli;   /* 0: 2/s */
    uint32_t burst;             /* of each rate-limited class; 0: 20 */
} ctrl_writer_opts_t;

typedef struct ctrl_writer_stats_s {
    uint64_t started[CTRL_WRITE__CLASSES]; /* requests started, per class */
    uint64_t refused[CTRL_WRITE__CLASSES]; /* ctrl_writer_start() answered "not now" */
    uint64_t dropped_events;               /* Events given up for the budget */
} ctrl_writer_stats_t;

typedef struct ctrl_writer_s {
    ctrl_writer_opts_t opts;
    kube_bucket_t buckets[CTRL_WRITE__CLASSES]; /* [CTRL_WRITE_ADMISSION] unused */
    uint32_t inflight;                          /* started and not yet done */
    ctrl_writer_stats_t stats;
} ctrl_writer_t;

/* A writer at `now_ms` with `opts` (may be NULL for the defaults); every bucket starts full. */
void ctrl_writer_init(ctrl_writer_t *w, const ctrl_writer_opts_t *opts, uint64_t now_ms);

/* May a request of class `cls` start at `now_ms`? On true it is counted as in flight (call
 * ctrl_writer_done() when its answer arrives) and a token is taken; on false `*wait_ms` (may
 * be NULL) says when to ask again: the bucket's wait, or 0 when only the window is full (ask
 * again when a request is done). */
bool ctrl_writer_start(ctrl_writer_t *w, ctrl_write_class_t cls, uint64_t now_ms,
                       uint64_t *wait_ms);

/* Would ctrl_writer_start() say yes at `now_ms`? Takes nothing: ask before building a request
 * that may not be sent. */
bool ctrl_writer_ready(ctrl_writer_t *w, ctrl_write_class_t cls, uint64_t now_ms);

/* A request started with ctrl_writer_start() has its answer. */
void ctrl_writer_done(ctrl_writer_t *w);

/* An Event is dropped for the budget: counted. */
void ctrl_writer_drop_event(ctrl_writer_t *w);

#endif
