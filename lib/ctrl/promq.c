/* promq -- Prometheus instant queries on the loop: idle reclaim's query and its decoded answer. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "ctrl/promq.h"

#include "kube/client.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * The transport is lib/kube's client (libcurl multi on this loop): a second kube_client_t whose
 * "server" is the Prometheus URL, with the endpoint's own CA, token file and limits, and
 * kube_get_raw() for the one path it asks. So the query shares the operator's loop, TLS and
 * token handling, its response-size ceiling (body_max = prometheus.maxResponseBytes: a larger
 * answer ends the transfer, ERR_OVERFLOW) and its timeouts, with no thread of its own.
 */

struct promq_s {
    kube_config_t kcfg; /* owned: server = the endpoint's URL */
    kube_client_t *client;
    bool inflight;
    promq_done_fn cb;
    void *ud;
    void (*on_closed)(void *data);
    void *closed_data;
};

/* ---- the query text and the answer (pure) ------------------------------------------------ */

err_t promq_idle_query(const idle_config_t *cfg, char *buf, size_t n, err_msg_t *msg)
{
    /* The window is at least the interval (whole seconds, rounded up), so consecutive queries
     * cover the time between them, and at least a minute by default, so it holds a scrape of an
     * exporter scraped every 30 s; the names were checked against Prometheus' syntax
     * (idle_config.c). */
    long long secs = (long long)((cfg->window_ms + 999) / 1000);
    int len = snprintf(buf, n, "max by (%s, %s, %s) (max_over_time(%s{%s!=\"\"}[%llds]))",
                       cfg->namespace_label, cfg->pod_label, cfg->gpu_label, cfg->metric,
                       cfg->pod_label, secs);

    if (len < 0 || (size_t)len >= n)
        return err_set(msg, ERR_OVERFLOW, "query longer than %zu bytes", n);
    return ERR_OK;
}

err_t promq_value_milli(const char *s, size_t len, uint32_t *out)
{
    uint64_t whole = 0, frac = 0;
    size_t i = 0, nf = 0;
    bool round_up = false;

    while (i < len && s[i] >= '0' && s[i] <= '9') {
        if (whole <= UINT32_MAX)
            whole = whole * 10 + (uint64_t)(s[i] - '0');
        i++;
    }
    if (i == 0)
        return ERR_PARSE; /* "", "NaN", "+Inf", "-1", ".5" */
    if (i < len && s[i] == '.') {
        size_t start = ++i;
        for (; i < len && s[i] >= '0' && s[i] <= '9'; i++, nf++) {
            if (nf < 3)
                frac = frac * 10 + (uint64_t)(s[i] - '0');
            else if (s[i] != '0')
                round_up = true;
        }
        if (i == start)
            return ERR_PARSE;
    }
    if (i != len)
        return ERR_PARSE; /* exponents, trailing bytes */
    for (; nf < 3; nf++)
        frac *= 10;
    whole = whole * 1000 + frac + (round_up ? 1 : 0);
    *out = whole > UINT32_MAX ? UINT32_MAX : (uint32_t)whole;
    return ERR_OK;
}

/* Copy at most `max` bytes of untrusted text into buf, control bytes as '?'. */
static const char *clean(const char *s, char *buf, size_t n)
{
    size_t i = 0;

    for (; s != NULL && s[i] != '\0' && i + 1 < n; i++)
        buf[i] = (unsigned char)s[i] < 0x20 || s[i] == 0x7f ? '?' : s[i];
    buf[i] = '\0';
    return buf;
}

/* A label value: a string of at most 253 bytes (pod names are DNS subdomains), else NULL. */
static const char *label(const json_t *metric, const char *name)
{
    const json_t *v = json_object_get(metric, name);

    return json_is_string(v) && json_string_length(v) > 0 && json_string_length(v) <= 253 &&
                   strlen(json_string_value(v)) == json_string_length(v)
               ? json_string_value(v)
               : NULL;
}

err_t promq_parse(const json_t *body, const char *ns_label, const char *pod_label,
                  promq_series_fn fn, void *ud, size_t *count, err_msg_t *msg)
{
    const json_t *data, *result, *item;
    const char *status;
    char b1[128], b2[256];
    size_t i;

    if (!json_is_object(body))
        return err_set(msg, ERR_PARSE, "answer: not a JSON object");
    status = json_string_value(json_object_get(body, "status"));
    if (status == NULL)
        return err_set(msg, ERR_PARSE, "status: missing");
    if (strcmp(status, "success") != 0)
        return err_set(msg, ERR_PARSE, "status %s: %s: %s", clean(status, b1, 32),
                       clean(json_string_value(json_object_get(body, "errorType")), b1 + 32, 64),
                       clean(json_string_value(json_object_get(body, "error")), b2, sizeof(b2)));
    data = json_object_get(body, "data");
    if (!json_is_object(data))
        return err_set(msg, ERR_PARSE, "data: missing or not an object");
    if (!json_is_string(json_object_get(data, "resultType")) ||
        strcmp(json_string_value(json_object_get(data, "resultType")), "vector") != 0)
        return err_set(msg, ERR_PARSE, "data.resultType: %s: want vector",
                       clean(json_string_value(json_object_get(data, "resultType")), b1, 32));
    result = json_object_get(data, "result");
    if (!json_is_array(result))
        return err_set(msg, ERR_PARSE, "data.result: missing or not a list");
    json_array_foreach(result, i, item)
    {
        const json_t *metric = json_object_get(item, "metric");
        const json_t *value = json_object_get(item, "value");
        const json_t *text = json_array_get(value, 1);
        promq_series_t s = {0};

        if (!json_is_object(metric))
            return err_set(msg, ERR_PARSE, "data.result[%zu].metric: missing or not an object", i);
        if (!json_is_array(value) || json_array_size(value) != 2 ||
            !json_is_number(json_array_get(value, 0)))
            return err_set(msg, ERR_PARSE, "data.result[%zu].value: want [time, \"value\"]", i);
        s.ns = label(metric, ns_label);
        s.pod = label(metric, pod_label);
        s.valid = json_is_string(text) &&
                  promq_value_milli(json_string_value(text), json_string_length(text), &s.milli) ==
                      ERR_OK;
        fn(&s, ud);
    }
    if (count != NULL)
        *count = json_array_size(result);
    return ERR_OK;
}

/* ---- on the loop ------------------------------------------------------------------------- */

err_t promq_new(uv_loop_t *loop, const idle_config_t *cfg, promq_t **out, err_msg_t *msg)
{
    promq_t *q = calloc(1, sizeof(*q));
    kube_client_opts_t co = {0};
    err_t rc;

    if (q == NULL)
        return err_set(msg, ERR_NOMEM, "prometheus: out of memory");
    kube_config_init(&q->kcfg);
    q->kcfg.server = strdup(cfg->url);
    q->kcfg.namespace_name = strdup("default");
    q->kcfg.ca_file = cfg->ca_file ? strdup(cfg->ca_file) : NULL;
    q->kcfg.token_file = cfg->token_file ? strdup(cfg->token_file) : NULL;
    q->kcfg.insecure = cfg->insecure;
    if (q->kcfg.server == NULL || q->kcfg.namespace_name == NULL ||
        (cfg->ca_file && q->kcfg.ca_file == NULL) ||
        (cfg->token_file && q->kcfg.token_file == NULL)) {
        rc = err_set(msg, ERR_NOMEM, "prometheus: out of memory");
        goto fail;
    }
    co.timeout_ms = cfg->timeout_ms;
    co.body_max = cfg->max_bytes;
    co.max_retries = 1;  /* the next interval is the retry */
    co.max_requests = 4; /* one query at a time */
    co.qps_milli = 10000;
    co.burst = 10;
    rc = kube_client_new(loop, &q->kcfg, &co, &q->client, msg);
    if (rc != ERR_OK) {
        err_prefix(msg, rc, "prometheus %s: ", cfg->url);
        goto fail;
    }
    *out = q;
    return ERR_OK;
fail:
    kube_config_fini(&q->kcfg);
    free(q);
    return rc;
}

static void on_done(const kube_result_t *res, void *data)
{
    promq_t *q = data;
    const char *err = json_string_value(json_object_get(res->body, "error"));
    char why[sizeof(res->msg.text) + 160], b[128];

    q->inflight = false;
    if (res->err == ERR_OK) {
        q->cb(q, ERR_OK, res->body, "", q->ud);
        return;
    }
    /* Prometheus answers 400/422/503 with {"status":"error","error":"..."}: quote it. */
    snprintf(why, sizeof(why), "%s%s%s", res->msg.text, err ? ": " : "",
             err ? clean(err, b, sizeof(b)) : "");
    q->cb(q, res->err, NULL, why, q->ud);
}

err_t promq_query(promq_t *q, const char *promql, promq_done_fn cb, void *ud, err_msg_t *msg)
{
    const char *params[] = {"query", promql, NULL};
    err_t rc;

    if (q->inflight)
        return err_set(msg, ERR_CONFLICT, "prometheus: a query is in flight");
    q->cb = cb;
    q->ud = ud;
    rc = kube_get_raw(q->client, "/api/v1/query", params, on_done, q, NULL, msg);
    if (rc == ERR_OK)
        q->inflight = true;
    return rc;
}

static void on_client_closed(void *data)
{
    promq_t *q = data;
    void (*cb)(void *) = q->on_closed;
    void *cb_data = q->closed_data;

    kube_config_fini(&q->kcfg);
    free(q);
    if (cb != NULL)
        cb(cb_data);
}

void promq_close(promq_t *q, void (*on_closed)(void *data), void *data)
{
    if (q == NULL)
        return;
    q->on_closed = on_closed;
    q->closed_data = data;
    kube_client_close(q->client, on_client_closed, q);
}
