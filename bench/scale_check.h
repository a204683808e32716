/* scale_check -- replay a Workload watch history and fail on any quota overcommit or double
 * admission. */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_BENCH_SCALE_CHECK_H
#define SLUICE_BENCH_SCALE_CHECK_H

#include "scale_shape.h"
#include "util/err.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

/*
 * The API server's own order of records is the resourceVersion order of one watch on
 * Workloads: every status write sluice makes is one record. The checker keeps, per ClusterQueue
 * and per cohort, the quota held by the Workloads whose latest record holds quota, and after each
 * record compares it with the limits of the shape:
 *
 *   ClusterQueue:  held <= nominalQuota + borrowingLimit
 *   cohort:        held <= Σ nominalQuota of its ClusterQueues (no lending limits in the shapes)
 *
 * A Workload holds quota while QuotaReserved=True with a status.admission and not Finished=True
 * (Kueue's accounting: an evicted Workload keeps its quota until the admission is removed).
 * A second admission is legal only after an Evicted=True record since the previous one; a
 * Finished Workload is never admitted again; an admission never changes while it is held.
 */

/* One Workload record, decoded from a watch event's object. */
typedef struct scale_rec_s {
    char ns[SCALE_NAME_MAX];
    char name[SCALE_NAME_MAX];
    uint64_t rv; /* metadata.resourceVersion (an integer on etcd3); 0 when not a number */
    bool deleted;
    bool reserved;           /* QuotaReserved=True and status.admission present */
    bool admitted;           /* Admitted=True */
    bool evicted;            /* Evicted=True */
    bool finished;           /* Finished=True */
    char cq[SCALE_NAME_MAX]; /* status.admission.clusterQueue, "" without one */
    int64_t usage_milli;     /* Σ podSetAssignments[].resourceUsage.cpu */
    int64_t created_s;       /* metadata.creationTimestamp, Unix seconds; -1 when absent */
    int64_t admitted_at_s;   /* Admitted=True lastTransitionTime; -1 when not admitted */
    int64_t generation;      /* metadata.generation */
    json_t *conditions;      /* borrowed from the object: status.conditions (may be NULL) */
} scale_rec_t;

/* Decode `obj` (borrowed; the record borrows its conditions array) into `out`. ERR_PARSE when
 * the object has no metadata.name/namespace or a quantity does not parse. */
err_t scale_rec_parse(json_t *obj, bool deleted, scale_rec_t *out, err_msg_t *msg);

/* RFC 3339 time ("2024-05-01T10:00:00Z", fraction and offset allowed) as Unix seconds, or -1. */
int64_t scale_rfc3339(const char *s);

typedef struct scale_check_wl_s {
    uint32_t cq;
    int64_t usage_milli;
    uint32_t admissions;
    bool held;
    bool evicted_since_admission;
    bool finished;
} scale_check_wl_t;

typedef struct scale_check_s {
    const scale_layout_t *l; /* borrowed */
    int64_t *cq_held;        /* owned, per ClusterQueue (milli-cpu) */
    int64_t *cq_peak;        /* owned */
    int64_t *cohort_held;    /* owned, per cohort */
    int64_t *cohort_peak;    /* owned */
    scale_check_wl_t *wl;    /* owned, per workload of the layout */
    uint64_t last_rv;
    uint64_t records;
    uint64_t admissions, releases;
    uint64_t violations;
    uint64_t gaps;             /* relists: history not continuous there */
    bool relisting;            /* applying a relist's records (scale_check_gap() .. _gap_end()) */
    err_msg_t first_violation; /* the first violating record, described */
} scale_check_t;

/* Set up a checker for `l` (borrowed). ERR_NOMEM. */
err_t scale_check_init(scale_check_t *chk, const scale_layout_t *l, err_msg_t *msg);

/* Release what `chk` owns; safe on a zeroed checker. */
void scale_check_fini(scale_check_t *chk);

/* Apply record `rec` of workload number `wl` (an index of the layout). ERR_OK when the state
 * after it is within every limit; ERR_CONFLICT when it breaks a rule (described in `msg`, counted,
 * and the first one kept in chk->first_violation); the state is updated either way. */
err_t scale_check_apply(scale_check_t *chk, uint64_t wl, const scale_rec_t *rec, err_msg_t *msg);

/* The watch history has a hole (a relist): the records up to scale_check_gap_end() are the
 * listed state, whose history in between is lost. Counted in chk->gaps; the resourceVersion
 * order check restarts; until the end a Workload may have been evicted, released and admitted
 * again (elsewhere) unseen, so only the quota limits are checked. Feed the listed records that
 * hold no quota first: then every state checked is part of the listed (real) one. */
void scale_check_gap(scale_check_t *chk);

/* The relist's records are all applied: back to checking every transition. */
void scale_check_gap_end(scale_check_t *chk);

#endif
