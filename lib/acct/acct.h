/* acct -- the accounting record: one JSON line per admission that ends, and its log file. */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_ACCT_H
#define SLUICE_ACCT_H

#include "model/quantity.h"
#include "model/types.h"
#include "util/chainlog.h"
#include "util/err.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

/*
 * One record per admission that ends -- the equivalent of Slurm's job accounting. An admission
 * is one stretch of quota held by a Workload: from its quota reservation to the moment the quota
 * is released because the Workload finished, was evicted (preempted, or another eviction: a
 * stop policy, a PodsReady timeout, deactivation) or was deleted. A Workload admitted three
 * times (preempted twice) has three records. The line (docs/accounting.md):
 *
 *   {"seq":4,"prev":"<sha256 of line 3>","time":"2026-12-02T10:00:00.000Z",
 *    "source":"operator","workload":"train-1","namespace":"team-a","uid":"...",
 *    "localQueue":"team-a","clusterQueue":"cq-a","priorityClass":"high","priority":100,
 *    "outcome":"preempted","reason":"InCohortReclamation",
 *    "queuedAt":"...","admittedAt":"...","endedAt":"...","flavors":["h100"],
 *    "podSets":[{"name":"main","count":4,"flavors":{"nvidia.com/gpu":"h100"},
 *                "resources":{"nvidia.com/gpu":"32","cpu":"64"}}]}
 *
 * "time" is endedAt (every line of a sluice log has a "time"). Quantities are Kubernetes
 * quantity strings, exact. "priorityClass" and "uid" are null when unknown. Lines with a "type"
 * are the sink's own (util/chainlog.h: "rotated", "recovered").
 */

typedef enum {
    ACCT_FINISHED = 0, /* the Workload finished (its job succeeded or failed) */
    ACCT_PREEMPTED,    /* evicted by a preemption */
    ACCT_EVICTED,      /* any other eviction (reason says which) */
    ACCT_DELETED,      /* deleted while it held quota */
    ACCT__OUTCOMES
} acct_outcome_t;

/* "finished", "preempted", "evicted", "deleted". */
const char *acct_outcome_str(acct_outcome_t o);
/* The outcome named `s`; false when it is none. */
bool acct_outcome_parse(const char *s, acct_outcome_t *out);

/* What the writer knows about one ended admission; every pointer borrowed. */
typedef struct acct_end_s {
    const char *source;         /* "operator" or "simulator" */
    const char *workload;       /* metadata.name */
    const char *ns;             /* metadata.namespace */
    const char *uid;            /* may be NULL */
    const char *local_queue;    /* spec.queueName, may be NULL */
    const admission_t *adm;     /* status.admission: ClusterQueue, podset flavors, usage, count */
    const char *priority_class; /* may be NULL */
    int32_t priority;
    acct_outcome_t outcome;
    const char *reason; /* Kueue's reason (Preempted's, Evicted's, Finished's), may be NULL */
    int64_t queued_ms;  /* Unix ms: when it last entered its queue (creation or requeue) */
    int64_t admitted_ms;
    int64_t ended_ms;
} acct_end_t;

/* The record for `e` (without seq/prev) into *out, a new reference. ERR_NOMEM. */
err_t acct_record_build(const acct_end_t *e, json_t **out, err_msg_t *msg);

/* One (flavor, resource) total of a record read back (summed over its podsets). */
typedef struct acct_use_s {
    char *flavor;   /* owned */
    char *resource; /* owned */
    qnano_t amount;
} acct_use_t;

/* A record read back from a log (acct_record_parse); strings owned. */
typedef struct acct_rec_s {
    char *workload, *ns, *local_queue, *cluster_queue, *priority_class; /* priority_class "" */
    char *reason;                                                       /* "" when none */
    acct_outcome_t outcome;
    int64_t queued_ms, admitted_ms, ended_ms;
    acct_use_t *use; /* owned, in order of first sight */
    size_t nuse;
} acct_rec_t;

/* Read the accounting record `j` (a parsed line, borrowed) into *out. ERR_PARSE names the field
 * ("podSets[1].resources[cpu]: ..."); `out` is then left empty. A line with a "type" is
 * ERR_NOT_FOUND (the sink's own record, not an admission). */
err_t acct_record_parse(json_t *j, acct_rec_t *out, err_msg_t *msg);

/* Release what `r` owns; NULL-safe. */
void acct_rec_fini(acct_rec_t *r);

/* The accounting log: records appended to a util/chainlog.h sink. */
typedef struct acct_log_s acct_log_t;

/* Open the log at `path`: the operator's resumes the file's chain, rotates past max_bytes (0 =
 * never) keeping `keep` files and syncs every record; the simulator's (`sim` true) starts the
 * file anew and syncs once at close. ERR_IO names the file. */
err_t acct_log_open(const char *path, bool sim, uint64_t max_bytes, unsigned keep, acct_log_t **out,
                    err_msg_t *msg);

/* Append the record of `e`, durably. The first failure is kept (acct_log_close() reports it)
 * and returned: ERR_IO, ERR_NOMEM. */
err_t acct_log_write(acct_log_t *log, const acct_end_t *e, err_msg_t *msg);

/* Append the record `rec` (built by acct_record_build(), maybe completed by acct_record_end();
 * not consumed; NULL stands for a record that could not be built: ERR_NOMEM), durably. Failures
 * are kept as with acct_log_write(). */
err_t acct_log_append(acct_log_t *log, json_t *rec, err_msg_t *msg);

/* Complete a record built before the admission ended (ended_ms -1): outcome, reason (may be
 * NULL), endedAt and time. ERR_NOMEM. */
err_t acct_record_end(json_t *rec, acct_outcome_t outcome, const char *reason, int64_t ended_ms);

/* Records written so far. */
uint64_t acct_log_count(const acct_log_t *log);

/* Close the log; NULL-safe. ERR_IO with the first failure of any write or of the final sync. */
err_t acct_log_close(acct_log_t *log, err_msg_t *msg);

#endif
