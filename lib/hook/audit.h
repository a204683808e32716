/* audit -- the governance audit trail: who changed which quota, queue mapping or priority. */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_HOOK_AUDIT_H
#define SLUICE_HOOK_AUDIT_H

#include "hook/admission.h"
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

/* An append-only JSON-lines file rotated by size: when a write would take it past max_bytes it
 * is renamed to PATH.1 (PATH.1 to PATH.2, ... up to `keep` files) and a new one started. */
typedef struct audit_log_s audit_log_t;

/* Open (create or append) the log at `path`. */
err_t audit_log_open(const char *path, uint64_t max_bytes, unsigned keep, audit_log_t **out,
                     err_msg_t *msg);

/* Append one record as a line (flushed). */
err_t audit_log_write(audit_log_t *log, json_t *record, err_msg_t *msg);

/* Close the file; NULL-safe. */
void audit_log_close(audit_log_t *log);

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

#endif
