/* metrics -- a registry of counters, gauges and histograms with labels, and its Prometheus text. */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_OBS_METRICS_H
#define SLUICE_OBS_METRICS_H

#include "util/err.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * A registry holds metric families (one name, one type, one help text, fixed label names) and
 * their series (one per distinct tuple of label values). It is plain memory with no clock, no
 * I/O and no global state: the operator's loop context owns one (lib/ctrl), tests make their own.
 * Single-threaded, like everything on the loop.
 *
 * Two ways of filling it:
 *   - event-driven: counters and histograms move where things happen (metrics_counter_add,
 *     metrics_histogram_observe); their series live as long as the registry.
 *   - scrape-time: a gauge family is cleared and set again from the current state just before
 *     rendering (metrics_family_clear + metrics_gauge_set), so series of deleted objects vanish.
 *
 * Cardinality policy. Label values come from object names users choose, so a family never holds
 * more than its `max_series` distinct series (metrics_registry_new, per family). An observation
 * for a new label tuple beyond that limit goes into the family's one overflow series, whose every
 * label value is METRICS_OVERFLOW ("__overflow__": no Kubernetes name can contain '_', so it never
 * collides with a real one). Counters keep their totals that way (sum() over the family stays
 * right), nothing grows without bound, and the overflow is visible: metrics_render() appends
 * sluice_metrics_series_overflow_total{metric=...}, the number of observations that went there.
 * A scrape-time gauge family clears its overflow with its series.
 *
 * Rendering follows the Prometheus text exposition format 0.0.4: "# HELP" (with \\ and \n
 * escaped) and "# TYPE" once per family, label values with \\, \" and \n escaped, values in the
 * shortest form that reads back exactly (+Inf, -Inf, NaN spelled so); histograms as cumulative
 * <name>_bucket{le="..."} lines ending with le="+Inf", then <name>_sum and <name>_count. Families
 * appear in registration order, series in the order they were first seen. A family without
 * series is rendered as its HELP and TYPE lines only.
 */

typedef enum { METRICS_COUNTER = 0, METRICS_GAUGE, METRICS_HISTOGRAM } metrics_type_t;

#define METRICS_MAX_LABELS  8
#define METRICS_MAX_BUCKETS 32
#define METRICS_OVERFLOW    "__overflow__"

typedef struct metrics_registry_s metrics_registry_t;
typedef struct metrics_family_s metrics_family_t;

/* A growable text buffer for the exposition; `data` is owned and NUL-terminated when len > 0. */
typedef struct metrics_buf_s {
    char *data;
    size_t len;
    size_t cap;
} metrics_buf_t;

/* Release the buffer's memory; it is empty and usable afterwards. */
void metrics_buf_fini(metrics_buf_t *b);

/* Room for `extra` more bytes (a render sized from the previous one grows without copies).
 * ERR_NOMEM leaves the buffer as it was. */
err_t metrics_buf_reserve(metrics_buf_t *b, size_t extra);

/* Append printf-formatted text. ERR_NOMEM leaves the buffer as it was. */
err_t metrics_buf_printf(metrics_buf_t *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* A new registry whose families hold at most `max_series` series each (0: 10000). NULL only on
 * out-of-memory. */
metrics_registry_t *metrics_registry_new(size_t max_series);

/* Release the registry, its families and series; NULL-safe. */
void metrics_registry_free(metrics_registry_t *r);

/*
 * Register a family. `name`, `help` and `labels` (a NULL-terminated array of at most
 * METRICS_MAX_LABELS names) are copied. Histograms take `buckets`: `nbuckets` finite upper bounds
 * in strictly increasing order (+Inf is implicit), at most METRICS_MAX_BUCKETS; other types pass
 * NULL, 0. ERR_INVALID (with the reason) for a name or label name that is not a Prometheus name,
 * a reserved label ("le" on a histogram, "__" prefixes), bad buckets, or a name already
 * registered; ERR_NOMEM. *out is borrowed from the registry.
 */
err_t metrics_family_add(metrics_registry_t *r, const char *name, const char *help,
                         metrics_type_t type, const char *const *labels, const double *buckets,
                         size_t nbuckets, metrics_family_t **out, err_msg_t *msg);

/* Family `name`, or NULL. */
metrics_family_t *metrics_family_get(const metrics_registry_t *r, const char *name);

/*
 * Observations. `values` holds one label value per label name of the family, in order (NULL
 * for a family without labels; a NULL value reads as ""). Any byte string is a valid value.
 * ERR_INVALID when the call does not fit the family's type (or a counter is given a negative or
 * NaN increment), ERR_NOMEM when a new series could not be made (the observation is lost, the
 * registry unchanged).
 */
err_t metrics_counter_add(metrics_family_t *f, const char *const *values, double delta);
err_t metrics_gauge_set(metrics_family_t *f, const char *const *values, double v);
err_t metrics_gauge_add(metrics_family_t *f, const char *const *values, double delta);
err_t metrics_histogram_observe(metrics_family_t *f, const char *const *values, double v);

/*
 * Exact counters. A counter family switched to exact accumulation keeps each series as an
 * unsigned 128-bit count of 10^-digits units and renders it as that exact decimal, trailing
 * zeros dropped ("9597.853", never "9597.853000000006"): integrating quota (nano-units times
 * milliseconds, digits 12) adds up without rounding however long it runs. Call before the first
 * observation; ERR_INVALID for a family that is no counter, digits above 18, or one that has
 * series. Its series then take metrics_counter_add_exact() only (metrics_counter_add() is
 * ERR_INVALID), and metrics_value() reads them rounded to the nearest double.
 */
__extension__ typedef unsigned __int128 metrics_exact_t;
err_t metrics_family_set_exact(metrics_family_t *f, unsigned digits);
err_t metrics_counter_add_exact(metrics_family_t *f, const char *const *values,
                                metrics_exact_t delta);

/* Format `v` (a count of 10^-digits units) as an exact decimal into `buf` (at least 64 bytes):
 * integer digits, then the fraction without trailing zeros. Returns buf. */
const char *metrics_format_exact(metrics_exact_t v, unsigned digits, char *buf, size_t n);

/* The current value of a counter or gauge series, or of a histogram's count; false when the
 * series does not exist. For tests and for code that reads back its own accumulators. */
bool metrics_value(const metrics_family_t *f, const char *const *values, double *out);

/* Number of series in the family (the overflow series included once it exists). */
size_t metrics_family_len(const metrics_family_t *f);

/* Drop every series of the family (and its overflow count). */
void metrics_family_clear(metrics_family_t *f);

/* Append the whole registry in the text exposition format to `out`. ERR_NOMEM leaves `out`
 * possibly extended by part of the text (discard it). */
err_t metrics_render(const metrics_registry_t *r, metrics_buf_t *out);

/* The text format's Content-Type. */
#define METRICS_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

/* Kueue's histogram layout "exp(n)": 1, then n-1 buckets 2.5 * 2^i (pkg/metrics
 * generateExponentialBuckets). Writes n <= METRICS_MAX_BUCKETS bounds to `out`; returns n. */
size_t metrics_kueue_buckets(size_t n, double *out);

/* Prometheus' client default buckets (.005 ... 10), as Kueue's admission_attempt_duration_seconds
 * uses. Writes 11 bounds; returns 11. */
size_t metrics_default_buckets(double *out);

/* Format `v` as the text format writes it into `buf` (at least 32 bytes): "+Inf", "-Inf", "NaN",
 * or the shortest decimal that reads back as `v`. Returns buf. */
const char *metrics_format_value(double v, char *buf, size_t n);

#endif
