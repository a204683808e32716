/* scale_live -- Kueue's scheduler-benchmark runner against a live API server: create a shape's
 * queues and Workloads on Kueue's schedule, finish each admitted Workload after its runtime,
 * record every Workload and ClusterQueue change, and replay the Workload records through the
 * quota checker. */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_BENCH_SCALE_LIVE_H
#define SLUICE_BENCH_SCALE_LIVE_H

#include "kube/kubeconfig.h"
#include "scale_check.h"
#include "scale_report.h"

#include <stdio.h>

typedef struct scale_live_opts_s {
    const scale_layout_t *l; /* borrowed */
    kube_config_t *cfg;      /* borrowed */
    uint64_t qps_milli;      /* the runner's own client: requests per 1000 s */
    uint32_t burst;
    uint32_t max_inflight;    /* Workload creates in flight at once (> 0) */
    double timeout_s;         /* give up (ERR_TIMEOUT) after this long */
    double settle_s;          /* after the last finish, wait this long at most for the
                               * ClusterQueue statuses to show nothing pending or reserved */
    int64_t release_after_ms; /* evicted and still holding quota this long: the runner removes
                               * the admission as Kueue's runner does; < 0: never */
    bool cleanup;             /* delete the shape's objects at the end */
    FILE *trace;              /* NULL, or one JSON line per Workload record */
    bool quiet;               /* no progress lines on stderr */
    /* Called when the watches are running, right before the first create; and when the last
     * Workload has finished (or the run gave up), before any clean-up. */
    void (*on_start)(void *data);
    void (*on_end)(void *data);
    void *data;
} scale_live_opts_t;

typedef struct scale_live_out_s {
    scale_wlstat_t *wl; /* owned: per workload of the layout */
    scale_cqstat_t *cq; /* owned: per ClusterQueue */
    scale_check_t chk;  /* owned */
    scale_api_t api;    /* owned: the runner's own requests */
    double first_create_ms, last_create_ms, last_finish_ms;
    uint64_t created, finished, create_retries;
    uint64_t finish_writes, release_writes, write_conflicts, write_errors;
    uint64_t relists; /* 410 Gone on the Workload watch */
    bool completed;   /* every workload finished */
} scale_live_out_t;

/* Run the benchmark on a loop of its own. ERR_OK when every workload finished (violations of
 * the quota check are in out->chk, not an error); ERR_TIMEOUT when the timeout ran out; other
 * errors when a create or the setup failed for good or the objects of an earlier run exist.
 * `out` is filled in every case where the run started; release it with scale_live_out_fini(). */
err_t scale_live_run(const scale_live_opts_t *o, scale_live_out_t *out, err_msg_t *msg);

void scale_live_out_fini(scale_live_out_t *out);

/* One line of a trace (--trace): the record's fields as JSON (new reference). */
json_t *scale_trace_line(const scale_rec_t *rec, const char *type, double t_ms);

/* Decode a trace line back into a record (strings copied into `out`). */
err_t scale_trace_parse(json_t *line, scale_rec_t *out, err_msg_t *msg);

#endif
