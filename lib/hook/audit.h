/* audit -- the governance audit trail: who changed which quota, queue mapping or priority. */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_HOOK_AUDIT_H
#define SLUICE_HOOK_AUDIT_H

#include "hook/admission.h"
#include "util/chainlog.h"
#include "util/err.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/*
 * One JSON line per audited admission decision:
 *
 *   {"time":"2026-11-29T18:00:00.123Z","user":"alice","groups":["platform"],
 *    "operation":"UPDATE","kind":"ClusterQueue","namespace":null,"name":"training",
 *    "allowed":true,"changes":[{"field":"quota h100/nvidia.com/gpu nominalQuota",
 *    "before":"16","after":"8"}],"warnings":[...]}
 *
 * "reason" replaces "changes" content for a rejection (changes are still listed: what the
 * person tried). Fields compared (quantities by value, so "1000m" -> "1" is no change):
 *   ClusterQueue: every flavor/resource nominalQuota, borrowingLimit, lendingLimit;
 *                 cohortName; fairSharing.weight; stopPolicy
 *   Cohort:       the same quotas; parentName; fairSharing.weight
 *   LocalQueue:   clusterQueue; stopPolicy
 *   WorkloadPriorityClass: value
 *   Job:          labels kueue.x-k8s.io/priority-class, kueue.x-k8s.io/queue-name
 *   Workload:     spec.priorityClassRef.name (v1beta1 priorityClassName), spec.priority,
 *                 label kueue.x-k8s.io/priority-class
 * An accepted change that touches none of these is not recorded; every rejection is.
 */

/* The field-level changes between `old` and `obj` (either may be NULL) of `kind`: a new array
 * of {"field","before","after"} (before/after null when absent), or NULL on OOM. */
json_t *audit_changes(const char *kind, json_t *old, json_t *obj);

/* The record for `ev` at `now_ms` (Unix ms) into *out (a new reference), or NULL when it need
 * not be recorded (accepted, nothing audited changed). ERR_NOMEM leaves *out untouched. */
err_t audit_record_build(const hook_audit_event_t *ev, int64_t now_ms, json_t **out);

/* One line for people, for the Kubernetes Event posted on the object: "alice changed quota
 * h100/nvidia.com/gpu nominalQuota 16 -> 8; cohortName all -> research" or "alice was refused
 * UPDATE: <reason>". Malloc'ed (caller frees), cut at 1024 bytes as Kubernetes does with event
 * messages; NULL on OOM. */
char *audit_event_message(json_t *record);

/*
 * The audit file (auditlog.c, on the shared sink util/chainlog.h): append-only JSON lines, one
 * record each, chained by hash:
 *
 *   {"seq":7,"prev":"<sha256 hex of line 6, without its newline>","time":...,"user":...}
 *
 * seq counts from 1 over the whole history (across rotations and restarts: opening a file
 * resumes after its last line, or after PATH.1's when PATH is empty). The first record ever has
 * prev = 64 zeros. An edited, removed, reordered or inserted line breaks the link of the line
 * after it (or the seq sequence), which audit_verify() finds; only removing lines at the very
 * end is not visible in the file itself (the Events and the logs of the other replica keep
 * them). Records sluice writes for itself have a "type":
 *   "suppressed"  {user, count, since}: records of `user` not written because they exceeded
 *                 the per-user rate (see below); written before that user's next record, and
 *                 at close
 *   "rotated"     {dropped, firstSeq, lastSeq}: rotation deleted the oldest file (whose
 *                 records had that seq range); the first record of the new file
 *   "recovered"   {discardedBytes}: a torn last line (crash mid-write) was cut off at open
 *
 * Durability: each record is written with one write(2) and fdatasync(2)'d before
 * audit_log_write() returns, so before the webhook answers the API server. After a rotation
 * the directory is fsync'd too.
 *
 * Flood: each user (the authenticated user, or "?"+claimed user) may write `rate` records per
 * second with a burst of `burst` (default 10/s, burst 200); beyond that the records are counted
 * in one "suppressed" record instead of being written, so that one user cannot rotate the
 * history of everyone else out of the files. 64 users are tracked; the least recently seen is
 * forgotten first (its pending summary is written then).
 */
typedef struct audit_log_s audit_log_t;

/* Open (create or append) the log at `path`, rotating past max_bytes (0 = never) into PATH.1 ..
 * PATH.keep, and resume its chain. ERR_IO names the file; ERR_PARSE when the last record cannot
 * be read as a chained record (the file is left as it is). */
err_t audit_log_open(const char *path, uint64_t max_bytes, unsigned keep, audit_log_t **out,
                     err_msg_t *msg);

/* Per-user rate: `per_second` records per second, burst `burst` (0, 0 = unlimited). */
void audit_log_set_rate(audit_log_t *log, unsigned per_second, unsigned burst);

/* Append one record (a JSON object; "seq" and "prev" are added in front), durably. ERR_OVERFLOW
 * (with the user in `msg`) when a user's records start being suppressed by the rate limit;
 * the following suppressed ones return ERR_OK. ERR_IO when the file cannot be written. */
err_t audit_log_write(audit_log_t *log, json_t *record, err_msg_t *msg);

/* The same with the time for the rate limit given (ms, monotonic) for tests. */
err_t audit_log_write_at(audit_log_t *log, json_t *record, int64_t now_ms, err_msg_t *msg);

/* The last seq written (0 when none). */
uint64_t audit_log_seq(const audit_log_t *log);

/* Write pending "suppressed" records and close the file; NULL-safe. */
void audit_log_close(audit_log_t *log);

/* Result of audit_verify(): records, first/last seq, anchored, ok, where (util/chainlog.h). */
typedef chainlog_verify_t audit_verify_t;

/* Check the chain over `files` in order (oldest first: PATH.5 ... PATH.1 PATH). Stops at the
 * first broken link (reported in out->where, out->ok false); a file "-" is standard input.
 * ERR_IO when a file cannot be read;
 * a broken chain is ERR_OK with out->ok false. */
err_t audit_verify(const char *const *files, size_t nfiles, audit_verify_t *out, err_msg_t *msg);

/* Filters for audit_print(). */
typedef struct audit_filter_s {
    int64_t since_ms;   /* records at or after this Unix ms time; 0 = all */
    const char *object; /* "Kind/name" or "Kind/namespace/name" (kind case-insensitive); NULL */
} audit_filter_t;

/* Print the records of the JSON-lines stream `in` matching `f` as a table on `out`: time, user,
 * operation, object, result, then one indented line per change. Malformed lines are reported on
 * `err` with their line number and skipped. Returns the number of records printed via *count. */
err_t audit_print(FILE *in, FILE *out, FILE *err, const audit_filter_t *f, size_t *count,
                  err_msg_t *msg);

/* The records of `in` matching `f`, as audit_print reads them (malformed lines reported on `err`
 * and skipped), in a new JSON array (*out, one reference for the caller). ERR_IO when reading
 * fails, ERR_NOMEM; *out is untouched then. */
err_t audit_collect(FILE *in, FILE *err, const audit_filter_t *f, json_t **out, err_msg_t *msg);

#endif
