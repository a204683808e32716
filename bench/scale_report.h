/* scale_report -- Kueue's benchmark figures for a run (live or simulated), the API server's
 * request counts, and the table and JSON they are reported in. */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_BENCH_SCALE_REPORT_H
#define SLUICE_BENCH_SCALE_REPORT_H

#include "scale_shape.h"
#include "util/err.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* ---- per workload and per ClusterQueue, as Kueue's recorder keeps them ---------------------- */

/* What the recorder knows of one workload. Times in ms of the runner's clock unless _s. */
typedef struct scale_wlstat_s {
    int64_t created_s;     /* metadata.creationTimestamp (API server clock, whole seconds) */
    int64_t admitted_s;    /* Admitted lastTransitionTime of the latest admission */
    double create_ms;      /* when the create request was sent */
    double first_seen_ms;  /* first record of it in the watch */
    double admit_seen_ms;  /* record that showed the latest admission */
    double finish_seen_ms; /* record that showed Finished=True */
    uint32_t admissions;   /* Admitted false -> true transitions */
    uint32_t evictions;    /* Evicted false -> true transitions */
    bool seen, admitted, evicted, finished; /* the latest record */
} scale_wlstat_t;

/* Record a workload state seen at `now_ms`; returns a mask of what changed: */
#define SCALE_WL_ADMITTED 1 /* became Admitted */
#define SCALE_WL_EVICTED  2 /* became Evicted */
#define SCALE_WL_FINISHED 4 /* became Finished */
#define SCALE_WL_UNADMIT  8 /* stopped being Admitted */
int scale_wlstat_record(scale_wlstat_t *w, double now_ms, int64_t created_s, int64_t admitted_s,
                        bool admitted, bool evicted, bool finished);

/* Kueue's time to admission (ms): from creationTimestamp to the Admitted transition time when
 * both are known and in order, else from the first record to the admitting record. */
double scale_wlstat_time_to_admit_ms(const scale_wlstat_t *w);

/* A ClusterQueue's usage over time, integrated as Kueue's recorder does from the status it
 * publishes: usage × the time until the next status seen. */
typedef struct scale_cqstat_s {
    bool seen;
    double first_ms, last_ms;
    int64_t usage_milli, max_usage_milli, quota_milli;
    double used; /* milli-cpu × ms */
    int64_t pending, reserving, admitted;
    bool active;
} scale_cqstat_t;

/* Record one ClusterQueue status (flavorsUsage[0].resources[0].total, nominal quota, counts). */
void scale_cqstat_record(scale_cqstat_t *s, double now_ms, int64_t usage_milli, int64_t quota_milli,
                         int64_t pending, int64_t reserving, int64_t admitted, bool active);

/* Decode a ClusterQueue object's fields for scale_cqstat_record(). ERR_PARSE on a bad quantity. */
err_t scale_cq_fields(json_t *cq, int64_t *usage_milli, int64_t *quota_milli, int64_t *pending,
                      int64_t *reserving, int64_t *admitted, bool *active, err_msg_t *msg);

/* ---- API request counts --------------------------------------------------------------------- */

typedef struct scale_api_row_s {
    char key[96];                                 /* "VERB resource[/subresource]" */
    uint64_t total, conflicts, throttled, errors; /* all; HTTP 409; 429; other >= 400 */
} scale_api_row_t;

typedef struct scale_api_s {
    scale_api_row_t *rows; /* owned */
    size_t n, cap;
} scale_api_t;

/* Add `count` requests of `verb` on `resource`/`sub` (sub may be NULL or "") answered `code`. */
err_t scale_api_add(scale_api_t *a, const char *verb, const char *resource, const char *sub,
                    long code, uint64_t count);

/* Sum every apiserver_request_total sample of a Prometheus text exposition into `a`. */
err_t scale_api_parse(scale_api_t *a, const char *text, size_t len, err_msg_t *msg);

/* after - before, per key (a key missing before counts from 0) into `out` (initialised empty). */
err_t scale_api_diff(const scale_api_t *after, const scale_api_t *before, scale_api_t *out);

/* The row of `key`, or NULL. */
const scale_api_row_t *scale_api_get(const scale_api_t *a, const char *key);

/* Σ over the write verbs (POST, PUT, PATCH, DELETE, DELETECOLLECTION, APPLY). */
uint64_t scale_api_writes(const scale_api_t *a);

void scale_api_fini(scale_api_t *a);

/* ---- one run's figures ---------------------------------------------------------------------- */

#define SCALE_CLASSES 4 /* small, medium, large, other */

typedef struct scale_class_s {
    uint64_t count, admitted, finished; /* admitted at least once; finished */
    double avg_admit_s;     /* Kueue's figure (over the admitted: all, once a run is over) */
    double avg_admit_obs_s; /* create request sent -> admitting record seen (runner clock) */
    double avg_finish_s;    /* first record -> Finished record (Kueue's TimeToFinished) */
    uint64_t evictions;
} scale_class_t;

typedef struct scale_proc_s {
    bool known;
    double cpu_s;   /* user + system */
    double rss_mib; /* peak (VmHWM, or getrusage maxrss) */
} scale_proc_t;

typedef struct scale_result_s {
    const char *mode;        /* "sluice run" or "sluice sim" */
    const scale_layout_t *l; /* borrowed */
    uint64_t workloads, finished;
    double wall_s; /* first create -> last finish */
    double gen_s;  /* first create -> last create */
    scale_class_t cls[SCALE_CLASSES];
    uint64_t evictions;
    double cq_usage_pct; /* Kueue: Σ used / (Σ quota × monitoring time), class "cq" */
    double work_pct;     /* useful work / (capacity × wall) */
    scale_proc_t ctrl;   /* sluice */
    scale_proc_t runner, apiserver, etcd;
    uint64_t ctrl_admissions; /* admissions seen (readmissions included) */
    bool have_api;
    scale_api_t api_total, api_runner; /* owned; the rest is the controller's (+ the server's) */
    bool have_check;
    uint64_t check_records, check_violations, check_gaps;
    char check_first[600];
    int64_t peak_cq_milli, peak_cohort_milli; /* the highest quota held by any CQ / cohort */
    double load_start, load_end;              /* the machine's 1-minute load average; < 0 unknown */
    char notes[512];
} scale_result_t;

/* Fill the class figures, evictions, wall and the work share from per-workload stats. */
void scale_result_from_wl(scale_result_t *r, const scale_wlstat_t *wl, double first_create_ms,
                          double last_create_ms, double last_finish_ms);

/* Kueue's ClusterQueue usage over every ClusterQueue of the layout. */
void scale_result_cq_usage(scale_result_t *r, const scale_cqstat_t *cq);

/* The figures of a `sluice sim --summary` document for the shape of `r->l`. ERR_PARSE when the
 * document is not a summary of that shape. */
err_t scale_result_from_sim(scale_result_t *r, json_t *summary, err_msg_t *msg);

void scale_result_fini(scale_result_t *r);

/* Print the table: columns for `live` and `sim` (either may be NULL), Kueue's figures for the
 * shape and the lower bound; then the API request breakdown of `live`. */
void scale_report_print(FILE *f, const scale_result_t *live, const scale_result_t *sim);

/* The result as JSON (new reference, NULL on out-of-memory). */
json_t *scale_result_json(const scale_result_t *r);

#endif
