/* replay -- lib/verify fed with the Workload records of an API watch (and the queue objects). */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_VERIFY_REPLAY_H
#define SLUICE_VERIFY_REPLAY_H

#include "util/err.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/*
 * What a watch of Workloads says happened, turned into admissions and releases for the checker
 * (verify.h), record by record in the order given (a watch stream's is resourceVersion order):
 *
 *   holds quota  = status.admission set, QuotaReserved=True, not Finished, not DELETED
 *   not holding -> holding                    an admission (checked against the queues)
 *   holding -> not holding                    a release (for good when Finished)
 *   holding -> holding in another queue        a release and an admission
 *
 * At the end every Workload must be finished, holding quota (running), or pending with a reason:
 * its last record has QuotaReserved=False with a reason or message (Kueue's explanation), or it was
 * deleted.
 */

typedef struct verify_replay_s verify_replay_t;

/* What a replay saw and found. */
typedef struct verify_replay_stats_s {
    size_t records;     /* Workload records read */
    size_t workloads;   /* distinct Workloads */
    size_t admissions;  /* checked admissions */
    size_t releases;    /* releases */
    size_t violations;  /* admissions that broke a rule */
    size_t undecodable; /* records that were not a Workload sluice can read (skipped) */
    size_t unexplained; /* verify_replay_end(): pending without a reason */
} verify_replay_stats_t;

/* An empty replay; NULL on out-of-memory. */
verify_replay_t *verify_replay_new(void);

/* Free `r`; NULL-safe. */
void verify_replay_free(verify_replay_t *r);

/* Take the queue objects in `obj` (borrowed): a ClusterQueue, a Cohort, or a List of them (kubectl
 * get -o json); other kinds are ignored. ERR_INVALID (msg names the object and field) when one
 * cannot be decoded; ERR_NOMEM. */
err_t verify_replay_queues(verify_replay_t *r, json_t *obj, err_msg_t *msg);

/* Replay one record (borrowed): a Workload, or a watch event {"type", "object"} (kubectl get -w
 * --output-watch-events -o json; DELETED gives the quota back, BOOKMARK and ERROR are skipped).
 * Any other object (the queues, a List) is not a record and is ignored. A Workload that cannot
 * be decoded is counted (stats.undecodable) and skipped.
 * ERR_INVALID with `msg` ("record N (Workload ns/name, resourceVersion V): ...") when it admits
 * past a rule of verify.h -- the replay goes on and counts it; ERR_NOMEM. */
err_t verify_replay_record(verify_replay_t *r, json_t *rec, err_msg_t *msg);

/* The end of the history: every Workload finished, holding quota, deleted, or pending with a
 * reason. Returns how many are not, the first named in `msg`. */
size_t verify_replay_end(verify_replay_t *r, err_msg_t *msg);

/* The counts so far. */
verify_replay_stats_t verify_replay_stats(const verify_replay_t *r);

#endif
