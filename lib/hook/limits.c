/* limits -- the HTTP servers' connection, memory and time limits as operators configure them. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "hook/limits.h"

#include "model/quantity.h"
#include "util/duration.h"

#include <stdio.h>
#include <string.h>

/*
 * Bounds, and why:
 * - body-budget >= 16Mi: bodies over 64 KiB may take 3/4 of the budget and one client address
 *   a quarter; the API server calls from one address and may send a 3 MiB AdmissionReview, so a
 *   quarter must hold 3 MiB and then some. <= 4Gi: far above the Deployment's memory limit, and
 *   every product of it in the server stays inside size_t on 32-bit builds too.
 * - max-connections <= 1000000: each connection is a descriptor; beyond that is a typo.
 * - timeouts 1ms..1h: zero would mean "the default" to the server, and a timer of hours pins a
 *   connection of a client that never speaks as surely as no timer at all.
 */
#define BUDGET_MIN      ((size_t)16 << 20)
#define BUDGET_MAX      ((size_t)4 << 30)
#define CONNECTIONS_MAX 1000000
#define TIMEOUT_MAX_MS  3600000

void hook_limits_default(hook_limits_t *l)
{
    l->max_connections = HOOK_SERVER_DEFAULT_MAX_CONNECTIONS;
    l->max_connections_per_client = HOOK_SERVER_DEFAULT_MAX_CONNECTIONS_PER_CLIENT;
    l->body_budget = HOOK_SERVER_DEFAULT_MAX_BUFFERED_BYTES;
    l->header_timeout_ms = HOOK_SERVER_DEFAULT_HEADER_TIMEOUT_MS;
    l->request_timeout_ms = HOOK_SERVER_DEFAULT_REQUEST_TIMEOUT_MS;
    l->idle_timeout_ms = HOOK_SERVER_DEFAULT_IDLE_TIMEOUT_MS;
    l->write_timeout_ms = HOOK_SERVER_DEFAULT_WRITE_TIMEOUT_MS;
}

/* A decimal count in [1, max]. */
static err_t count(const char *v, size_t len, size_t max, size_t *out, err_msg_t *msg)
{
    size_t n = 0;

    if (len == 0)
        return err_set(msg, ERR_INVALID, "want a whole number");
    for (size_t i = 0; i < len; i++) {
        if (v[i] < '0' || v[i] > '9')
            return err_set(msg, ERR_INVALID, "want a whole number");
        n = n * 10 + (size_t)(v[i] - '0');
        if (n > max)
            return err_set(msg, ERR_INVALID, "must be at most %zu", max);
    }
    if (n == 0)
        return err_set(msg, ERR_INVALID, "must be at least 1");
    *out = n;
    return ERR_OK;
}

/* A byte quantity ("64Mi", "67108864") in [BUDGET_MIN, BUDGET_MAX]. */
static err_t bytes(const char *v, size_t len, size_t *out, err_msg_t *msg)
{
    quantity_t q;
    int64_t units, milli;
    err_t rc;

    if ((rc = quantity_parse(v, len, &q, msg)) != ERR_OK)
        return rc;
    if (quantity_value(q, &units) != ERR_OK || quantity_milli_value(q, &milli) != ERR_OK ||
        milli % 1000 != 0 || units < (int64_t)BUDGET_MIN || units > (int64_t)BUDGET_MAX)
        return err_set(msg, ERR_INVALID, "want a whole number of bytes from 16Mi to 4Gi");
    *out = (size_t)units;
    return ERR_OK;
}

/* A Go duration of whole milliseconds in [1ms, 1h]. */
static err_t timeout(const char *v, size_t len, uint64_t *out, err_msg_t *msg)
{
    int64_t ms;
    err_t rc;

    if ((rc = duration_parse_ms(v, len, TIMEOUT_MAX_MS, &ms, msg)) != ERR_OK)
        return rc;
    if (ms == 0)
        return err_set(msg, ERR_INVALID, "must be at least 1ms");
    *out = (uint64_t)ms;
    return ERR_OK;
}

/* One NAME=VALUE entry (`len` bytes of `e`) over `l`. */
static err_t entry(hook_limits_t *l, const char *e, size_t len, err_msg_t *msg)
{
    const char *eq = memchr(e, '=', len);
    const char *v;
    size_t nlen, vlen;
    err_t rc;

    if (eq == NULL)
        return err_set(msg, ERR_INVALID, "\"%.*s\": want NAME=VALUE", (int)len, e);
    nlen = (size_t)(eq - e);
    v = eq + 1;
    vlen = len - nlen - 1;
#define IS(name) (nlen == sizeof(name) - 1 && memcmp(e, name, nlen) == 0)
    if (IS("max-connections"))
        rc = count(v, vlen, CONNECTIONS_MAX, &l->max_connections, msg);
    else if (IS("max-connections-per-client"))
        rc = count(v, vlen, CONNECTIONS_MAX, &l->max_connections_per_client, msg);
    else if (IS("body-budget"))
        rc = bytes(v, vlen, &l->body_budget, msg);
    else if (IS("header-timeout"))
        rc = timeout(v, vlen, &l->header_timeout_ms, msg);
    else if (IS("request-timeout"))
        rc = timeout(v, vlen, &l->request_timeout_ms, msg);
    else if (IS("idle-timeout"))
        rc = timeout(v, vlen, &l->idle_timeout_ms, msg);
    else if (IS("write-timeout"))
        rc = timeout(v, vlen, &l->write_timeout_ms, msg);
    else
        return err_set(msg, ERR_INVALID,
                       "\"%.*s\": unknown limit (known: max-connections, "
                       "max-connections-per-client, body-budget, header-timeout, "
                       "request-timeout, idle-timeout, write-timeout)",
                       (int)nlen, e);
#undef IS
    if (rc != ERR_OK)
        return err_prefix(msg, rc, "%.*s: ", (int)len, e);
    return ERR_OK;
}

/* The limits against each other. */
static err_t check(const hook_limits_t *l, err_msg_t *msg)
{
    if (l->max_connections_per_client > l->max_connections)
        return err_set(msg, ERR_INVALID,
                       "max-connections-per-client (%zu) must not exceed max-connections (%zu)",
                       l->max_connections_per_client, l->max_connections);
    if (l->header_timeout_ms > l->request_timeout_ms)
        return err_set(msg, ERR_INVALID,
                       "header-timeout (%llums) must not exceed request-timeout (%llums): the "
                       "headers are part of the request",
                       (unsigned long long)l->header_timeout_ms,
                       (unsigned long long)l->request_timeout_ms);
    return ERR_OK;
}

err_t hook_limits_parse(hook_limits_t *l, const char *text, err_msg_t *msg)
{
    hook_limits_t n = *l;
    const char *p = text;
    err_t rc;

    for (;;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        while (len > 0 && (*p == ' ' || *p == '\t'))
            p++, len--;
        while (len > 0 && (p[len - 1] == ' ' || p[len - 1] == '\t'))
            len--;
        if (len == 0)
            return err_set(msg, ERR_INVALID, "an empty entry: want NAME=VALUE[,NAME=VALUE...]");
        if ((rc = entry(&n, p, len, msg)) != ERR_OK)
            return rc;
        if (end == NULL)
            break;
        p = end + 1;
    }
    if ((rc = check(&n, msg)) != ERR_OK)
        return rc;
    *l = n;
    return ERR_OK;
}

char *hook_limits_format(const hook_limits_t *l, char *buf, size_t size)
{
    char h[DURATION_STR_MAX], r[DURATION_STR_MAX], i[DURATION_STR_MAX], w[DURATION_STR_MAX];

    snprintf(buf, size,
             "max-connections=%zu,max-connections-per-client=%zu,body-budget=%zu,"
             "header-timeout=%s,request-timeout=%s,idle-timeout=%s,write-timeout=%s",
             l->max_connections, l->max_connections_per_client, l->body_budget,
             duration_format((int64_t)l->header_timeout_ms, h),
             duration_format((int64_t)l->request_timeout_ms, r),
             duration_format((int64_t)l->idle_timeout_ms, i),
             duration_format((int64_t)l->write_timeout_ms, w));
    return buf;
}

void hook_limits_apply(const hook_limits_t *l, hook_server_config_t *sc)
{
    sc->max_connections = l->max_connections;
    sc->max_connections_per_client = l->max_connections_per_client;
    sc->max_buffered_bytes = l->body_budget;
    sc->header_timeout_ms = l->header_timeout_ms;
    sc->request_timeout_ms = l->request_timeout_ms;
    sc->idle_timeout_ms = l->idle_timeout_ms;
    sc->write_timeout_ms = l->write_timeout_ms;
}
