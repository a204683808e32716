/* promq -- Prometheus instant queries on the loop: idle reclaim's query and its decoded answer. */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_CTRL_PROMQ_H
#define SLUICE_CTRL_PROMQ_H

#include "ctrl/idle.h"
#include "util/err.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

/*
 * The endpoint is any server of Prometheus' HTTP query API (Prometheus, Thanos Query,
 * VictoriaMetrics, Mimir): GET <url>/api/v1/query?query=<PromQL>. Its answer is untrusted: the
 * transport bounds its size (prometheus.maxResponseBytes) and time, jansson decodes it, and
 * promq_parse() accepts only the documented shape
 *
 *   {"status":"success","data":{"resultType":"vector","result":[
 *     {"metric":{"namespace":"ns","pod":"p-0","gpu":"0",...},"value":[1764680000.5,"37"]},...]}}
 *
 * Anything else is an error of the whole answer; a series whose labels or value cannot be read
 * is reported as not valid rather than skipped, so its pod counts as unknown, never as idle.
 */

typedef struct promq_s promq_t;

/* One series of an instant vector (strings borrowed for the callback; a label the series lacks
 * is NULL). */
typedef struct promq_series_s {
    const char *ns;
    const char *pod;
    bool valid;     /* the value is a finite, non-negative decimal */
    uint32_t milli; /* the value in thousandths (rounded up), at most UINT32_MAX */
} promq_series_t;

typedef void (*promq_series_fn)(const promq_series_t *s, void *ud);

/* The PromQL of idle reclaim for `cfg` into buf: the highest utilisation of each GPU of each pod
 * over the window (the interval or more),
 *   max by (namespace, pod, gpu) (max_over_time(DCGM_FI_DEV_GPU_UTIL{pod!=""}[60s]))
 * with the configured names. ERR_OVERFLOW when it does not fit. */
err_t promq_idle_query(const idle_config_t *cfg, char *buf, size_t n, err_msg_t *msg);

/* A sample value ("0", "37", "12.5", "1e-05" is refused) in thousandths, rounded up so that any
 * activity above a threshold stays above it; values beyond UINT32_MAX thousandths are capped.
 * ERR_PARSE for NaN, infinities, signs, exponents and anything else. */
err_t promq_value_milli(const char *s, size_t len, uint32_t *out);

/* Walk the instant-query answer `body` (borrowed), calling `fn` per series with the labels
 * `ns_label` and `pod_label`; *count (may be NULL) gets the number of series. ERR_PARSE names
 * what is wrong ("data.result[3].value: ..."), and for a status "error" answer quotes its
 * errorType and error (cleaned of control bytes, cut). `fn` may have been called for the
 * series before a failure: callers keep what they collect only on ERR_OK. */
err_t promq_parse(const json_t *body, const char *ns_label, const char *pod_label,
                  promq_series_fn fn, void *ud, size_t *count, err_msg_t *msg);

/* The final callback of a query: `err` ERR_OK with `body` (borrowed, a decoded JSON answer of a
 * 2xx), or the transport's or server's error in `why`. Fires exactly once per query started. */
typedef void (*promq_done_fn)(promq_t *q, err_t err, const json_t *body, const char *why, void *ud);

/* A query client on `loop` for the endpoint of `cfg` (borrowed: outlives the client). ERR_TLS,
 * ERR_NOMEM. */
err_t promq_new(uv_loop_t *loop, const idle_config_t *cfg, promq_t **out, err_msg_t *msg);

/* Start the instant query `promql` (copied); `cb` fires once, later, on the loop. ERR_CONFLICT
 * while a query is in flight, or the transport's submission error (nothing fires then). */
err_t promq_query(promq_t *q, const char *promql, promq_done_fn cb, void *ud, err_msg_t *msg);

/* Cancel a query in flight (its callback fires with an error) and free the client once its
 * handles are closed; `on_closed` (may be NULL) fires then. NULL-safe. */
void promq_close(promq_t *q, void (*on_closed)(void *data), void *data);

#endif
