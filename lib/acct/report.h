/* report -- `sluice report`: resource-hours, waits and preemptions from accounting logs. */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_ACCT_REPORT_H
#define SLUICE_ACCT_REPORT_H

#include "acct/acct.h"
#include "util/err.h"

#include <stdint.h>
#include <stdio.h>

/*
 * Over a time range [since, until) (either end open), per group (namespace, LocalQueue
 * "namespace/name", ClusterQueue or flavor):
 *   resource-hours  each record's quantities times the part of [admittedAt, endedAt] inside the
 *                   range, exact (nano-units x milliseconds), shown in hours (GiB-hours for
 *                   memory-like resources); GPU resources (name contains "gpu") come first
 *   admissions      records admitted inside the range; their waits (admittedAt - queuedAt):
 *                   p50, p90, p99 by nearest rank
 *   outcomes        records ended inside the range: finished, preempted, evicted, deleted
 * By flavor, a record counts in each flavor it used. The TOTAL line counts each record once.
 */

typedef enum {
    ACCT_BY_NAMESPACE = 0,
    ACCT_BY_LOCALQUEUE,
    ACCT_BY_CLUSTERQUEUE,
    ACCT_BY_FLAVOR,
} acct_by_t;

typedef enum { ACCT_OUT_TABLE = 0, ACCT_OUT_CSV, ACCT_OUT_JSON } acct_out_t;

/* Parse "namespace", "localqueue", "clusterqueue", "flavor" (also "ns", "lq", "cq"; the command
 * line takes the full names only). */
bool acct_by_parse(const char *s, acct_by_t *out);

typedef struct acct_report_s acct_report_t;

/* A new, empty report grouping by `by` over [since_ms, until_ms) (-1: open end); NULL on OOM. */
acct_report_t *acct_report_new(acct_by_t by, int64_t since_ms, int64_t until_ms);

/* Release the report; NULL-safe. */
void acct_report_free(acct_report_t *r);

/* Count one record. ERR_NOMEM; ERR_OVERFLOW when a total leaves the exact range. */
err_t acct_report_add(acct_report_t *r, const acct_rec_t *rec, err_msg_t *msg);

/* Read the accounting log `in` (JSON lines; `name` for messages) into the report. A line that
 * is not an accounting record is reported on `err` as "NAME:LINE: field: problem" and skipped
 * (counted in *skipped); the log's own records ("rotated": history dropped) are noted on `err`.
 * ERR_IO on a read error, ERR_NOMEM, ERR_OVERFLOW. */
err_t acct_report_read(acct_report_t *r, FILE *in, const char *name, FILE *err, size_t *skipped,
                       err_msg_t *msg);

/* Write the report as a table, CSV or JSON (docs/accounting.md). ERR_NOMEM, ERR_IO. */
err_t acct_report_write(const acct_report_t *r, acct_out_t fmt, FILE *out, err_msg_t *msg);

#endif
