/* client -- asynchronous Kubernetes API requests on the libuv loop via libcurl's multi interface.
 */
/* SPDX-License-Identifier: Apache-2.0 */
#include "kube/client.h"

#include "kube/bucket.h"
#include "kube/client_int.h"
#include "kube/lines.h"
#include "util/alloc.h"
#include "util/util.h"

#include <curl/curl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * How the pieces fit (curl docs/examples/multi-uv.c is the pattern):
 *
 *   kube_get() ... -> req_new -> queue (FIFO) --pump: token bucket, Retry-After--> curl multi
 *   curl multi --CURLMOPT_SOCKETFUNCTION--> one uv_poll_t per socket (kube_sock_t)
 *              --CURLMOPT_TIMERFUNCTION---> c->curl_timer
 *   uv poll/timer callbacks -> curl_multi_socket_action -> drain curl_multi_info_read -> finish
 *   finish: 429/503 with retries left -> back to the queue after Retry-After; else callback.
 *
 * One easy handle per request; connections (and HTTP/2 streams on one connection, with
 * CURLOPT_PIPEWAIT) are reused through the multi handle's connection pool.
 *
 * Re-entrancy: user callbacks may start and cancel requests. They run either from drain()
 * (outside libcurl callbacks) or, for watch events, inside the curl write callback where
 * removing the easy handle is forbidden; there a cancel only sets a flag and the write callback
 * aborts the transfer, which drain() then reports as canceled. kube_client_close() from inside
 * a drain defers freeing the multi handle until the drain has unwound (c->busy).
 */

#define DEFAULT_QPS_MILLI  50000u
#define DEFAULT_BURST      100u
#define DEFAULT_TIMEOUT_MS 30000u
#define RESET_MS           50u /* retry of reset_transport() that could not make a new handle */
#define DEFAULT_RETRIES    10u
/* The FIFO's bound. The operator's writes are windowed before they reach the client (64 in
 * flight, lib/ctrl/writer.h), the informers hold one LIST or WATCH per kind, the webhooks' audit
 * Events are rate-budgeted: 10,000 is far above any of it, so reaching it means a bug or a
 * runaway caller -- refused at submission (the caller's error path retries with backoff),
 * never queued in memory without end. */
#define DEFAULT_MAX_REQUESTS 10000u
#define DEFAULT_BODY_MAX     ((size_t)256 << 20)
#define DEFAULT_LINE_MAX     ((size_t)16 << 20)
#define URL_MAX              (64u << 10)
#define RETRY_DEFAULT_S      1

typedef struct kube_sock_s kube_sock_t;

struct kube_sock_s {
    uv_poll_t poll;
    curl_socket_t fd;
    kube_client_t *c;
    kube_sock_t *prev, *next; /* in c->socks, to close leftovers at shutdown */
};

typedef enum { REQ_QUEUED, REQ_ACTIVE } req_state_t;

struct kube_req_s {
    kube_client_t *c;
    kube_req_t *prev, *next; /* in c->reqs */
    req_state_t state;
    uint64_t not_before; /* loop time before which the request may not start (Retry-After) */
    CURL *easy;          /* owned */
    struct curl_slist *headers;
    const char *method; /* static string */
    char *path;         /* owned: path and query */
    char *url;          /* owned: server + path */
    char *body;         /* owned request body or NULL */
    size_t body_len;
    const char *content_type;
    uint32_t timeout_ms;
    uint32_t retries;
    long retry_after; /* seconds from the last response, -1 when none */
    char *resp;       /* owned response bytes (non-watch, or a watch's error body) */
    size_t resp_len, resp_cap;
    bool resp_overflow;
    bool watch;
    bool stream_oom;       /* a watch line could not be buffered or decoded for memory */
    bool sock_oom;         /* its socket could not be watched for memory: fail it (sweep_ooms) */
    bool reset;            /* was active when reset_transport() dropped the multi handle */
    bool cancel_requested; /* canceled while inside a curl callback: finish after it */
    kube_lines_t lines;
    kube_event_cb on_event;
    kube_done_cb cb;
    void *data;
    char errbuf[CURL_ERROR_SIZE];
};

struct kube_client_s {
    uv_loop_t *loop;
    kube_config_t *cfg; /* borrowed from the caller */
    kube_client_opts_t opts;
    CURLM *multi; /* owned */
    uv_timer_t curl_timer;
    uv_timer_t pump_timer;
    kube_bucket_t bucket;
    kube_req_t *reqs, *reqs_tail; /* queued and active, in submission order */
    size_t nreqs;                 /* in that list: at most opts.max_requests */
    kube_sock_t *socks;
    unsigned handles;     /* uv handles not yet closed */
    unsigned busy;        /* nesting depth of socket_action + drain */
    unsigned in_write;    /* inside a curl write callback (watch events): no handle removal */
    bool deferred_cancel; /* some request has cancel_requested set */
    bool deferred_oom;    /* some request has sock_oom set */
    bool reset;           /* reset_transport() could not make a new multi handle: retry */
    bool closing;
    bool multi_done; /* curl_multi_cleanup has run */
    void (*on_closed)(void *data);
    void *closed_data;
};

/* ---- strings, paths and parsing (pure) --------------------------------------------------------
 */

void kube__str_init(kube__str_t *s, size_t max)
{
    memset(s, 0, sizeof(*s));
    s->max = max;
}

void kube__str_add(kube__str_t *s, const char *p, size_t n)
{
    if (s->failed)
        return;
    if (n > s->max || s->len > s->max - n) {
        s->failed = true;
        return;
    }
    if (s->len + n + 1 > s->cap) {
        size_t cap = s->cap ? s->cap : 128;
        char *np;

        while (cap < s->len + n + 1)
            cap *= 2;
        np = realloc(s->p, cap);
        if (np == NULL) {
            s->failed = true;
            return;
        }
        s->p = np;
        s->cap = cap;
    }
    memcpy(s->p + s->len, p, n);
    s->len += n;
    s->p[s->len] = '\0';
}

void kube__str_adds(kube__str_t *s, const char *p)
{
    kube__str_add(s, p, strlen(p));
}

void kube__str_add_escaped(kube__str_t *s, const char *p)
{
    static const char hex[] = "0123456789ABCDEF";

    for (; *p; p++) {
        unsigned char ch = (unsigned char)*p;
        char enc[3];

        if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
            ch == '-' || ch == '.' || ch == '_' || ch == '~') {
            kube__str_add(s, p, 1);
            continue;
        }
        enc[0] = '%';
        enc[1] = hex[ch >> 4];
        enc[2] = hex[ch & 15];
        kube__str_add(s, enc, 3);
    }
}

void kube__str_fini(kube__str_t *s)
{
    free(s->p);
    memset(s, 0, sizeof(*s));
}

void kube__path(kube__str_t *s, const kube_resource_t *res, const char *ns, const char *name,
                const char *sub)
{
    if (res->group == NULL || res->group[0] == '\0') {
        kube__str_adds(s, "/api/");
    } else {
        kube__str_adds(s, "/apis/");
        kube__str_adds(s, res->group);
        kube__str_adds(s, "/");
    }
    kube__str_adds(s, res->version);
    if (res->namespaced && ns != NULL && ns[0] != '\0') {
        kube__str_adds(s, "/namespaces/");
        kube__str_add_escaped(s, ns);
    }
    kube__str_adds(s, "/");
    kube__str_adds(s, res->resource);
    if (name != NULL) {
        kube__str_adds(s, "/");
        kube__str_add_escaped(s, name);
        if (sub != NULL && sub[0] != '\0') {
            kube__str_adds(s, "/");
            kube__str_adds(s, sub);
        }
    }
}

long kube__retry_after(const char *value, size_t len)
{
    long v = 0;
    size_t i = 0;

    while (i < len && (value[i] == ' ' || value[i] == '\t'))
        i++;
    if (i == len || value[i] < '0' || value[i] > '9')
        return -1;
    for (; i < len && value[i] >= '0' && value[i] <= '9'; i++) {
        if (v < 3600)
            v = v * 10 + (value[i] - '0');
    }
    while (i < len && (value[i] == ' ' || value[i] == '\t' || value[i] == '\r' || value[i] == '\n'))
        i++;
    if (i != len)
        return -1;
    return v > 3600 ? 3600 : v;
}

bool kube__json_oom(const json_error_t *e)
{
    /* util_json_loadb() says json_error_out_of_memory when an allocation failed; an error left
     * blank is one too (jansson's own paths): every real syntax error has a text. */
    return json_error_code(e) == json_error_out_of_memory || e->text[0] == '\0';
}

err_t kube__event_parse(const char *line, size_t len, kube_event_type_t *type, json_t **object,
                        err_msg_t *msg)
{
    static const struct {
        const char *name;
        kube_event_type_t type;
    } types[] = {
        {"ADDED", KUBE_EVENT_ADDED},     {"MODIFIED", KUBE_EVENT_MODIFIED},
        {"DELETED", KUBE_EVENT_DELETED}, {"BOOKMARK", KUBE_EVENT_BOOKMARK},
        {"ERROR", KUBE_EVENT_ERROR},
    };
    json_error_t jerr;
    json_t *root, *t, *obj;
    const char *ts;

    root = util_json_loadb(line, len, JSON_REJECT_DUPLICATES, &jerr);
    if (root == NULL && kube__json_oom(&jerr))
        return err_set(msg, ERR_NOMEM, "watch event: out of memory");
    if (root == NULL)
        return err_set(msg, ERR_PARSE, "watch event: %s at column %d", jerr.text, jerr.column);
    t = json_object_get(root, "type");
    obj = json_object_get(root, "object");
    ts = json_string_value(t);
    if (ts == NULL) {
        json_decref(root);
        return err_set(msg, ERR_PARSE, "watch event: type: missing or not a string");
    }
    if (!json_is_object(obj)) {
        json_decref(root);
        return err_set(msg, ERR_PARSE, "watch event: object: missing or not an object");
    }
    for (size_t i = 0; i < ARRAY_SIZE(types); i++) {
        if (strcmp(ts, types[i].name) == 0) {
            *type = types[i].type;
            *object = json_incref(obj);
            json_decref(root);
            return ERR_OK;
        }
    }
    err_set(msg, ERR_PARSE, "watch event: type: unknown \"%.32s\"", ts);
    json_decref(root);
    return ERR_PARSE;
}

err_t kube_status_err(long status, const char *reason)
{
    if (status >= 200 && status < 300)
        return ERR_OK;
    switch (status) {
    case 400:
    case 422:
        return ERR_INVALID;
    case 404:
        return ERR_NOT_FOUND;
    case 409:
        return reason != NULL && strcmp(reason, "AlreadyExists") == 0 ? ERR_EXISTS : ERR_CONFLICT;
    case 410:
        return ERR_GONE;
    case 408:
    case 504:
        return ERR_TIMEOUT;
    case 405:
    case 415:
        return ERR_UNSUPPORTED;
    default:
        return ERR_HTTP;
    }
}

void kube__result_from_http(kube_result_t *res, long status, json_t *body, const char *what)
{
    const char *message = NULL, *kind = json_string_value(json_object_get(body, "kind"));

    res->status = status;
    res->body = body;
    res->reason = "";
    if (kind != NULL && strcmp(kind, "Status") == 0) {
        const char *r = json_string_value(json_object_get(body, "reason"));

        message = json_string_value(json_object_get(body, "message"));
        if (r != NULL)
            res->reason = r;
    }
    res->err = kube_status_err(status, res->reason);
    if (res->err == ERR_OK) {
        res->msg.text[0] = '\0';
        return;
    }
    if (message != NULL)
        err_set(&res->msg, res->err, "%s: %s (HTTP %ld)", what, message, status);
    else
        err_set(&res->msg, res->err, "%s: HTTP %ld", what, status);
}

/* ---- client lifetime --------------------------------------------------------------------------
 */

static void on_curl_timer_fire(uv_timer_t *t);
static void on_pump(uv_timer_t *t);
static int on_curl_socket(CURL *e, curl_socket_t s, int what, void *userp, void *socketp);
static int on_curl_timer(CURLM *m, long timeout_ms, void *userp);
static void pump(kube_client_t *c);
static void finish_close(kube_client_t *c);
static void drain(kube_client_t *c);
static void sweep_cancels(kube_client_t *c);
static void sweep_ooms(kube_client_t *c);
static void sock_close(kube_sock_t *ks);
static CURLM *multi_new(kube_client_t *c);

/* A multi handle that reports its sockets and timer to `c`; NULL when out of memory. */
static CURLM *multi_new(kube_client_t *c)
{
    CURLM *m = curl_multi_init();

    if (m != NULL &&
        (curl_multi_setopt(m, CURLMOPT_SOCKETFUNCTION, on_curl_socket) != CURLM_OK ||
         curl_multi_setopt(m, CURLMOPT_SOCKETDATA, c) != CURLM_OK ||
         curl_multi_setopt(m, CURLMOPT_TIMERFUNCTION, on_curl_timer) != CURLM_OK ||
         curl_multi_setopt(m, CURLMOPT_TIMERDATA, c) != CURLM_OK ||
         curl_multi_setopt(m, CURLMOPT_PIPELINING, (long)CURLPIPE_MULTIPLEX) != CURLM_OK)) {
        curl_multi_cleanup(m);
        m = NULL;
    }
    return m;
}

uv_loop_t *kube_client_loop(kube_client_t *c)
{
    return c->loop;
}

const char *kube_client_namespace(const kube_client_t *c)
{
    return c->cfg->namespace_name ? c->cfg->namespace_name : "default";
}

const char *kube_client_server(const kube_client_t *c)
{
    return c->cfg->server ? c->cfg->server : "";
}

void kube_client_log(kube_client_t *c, const char *fmt, ...)
{
    char text[1024];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(text, sizeof(text), fmt, ap);
    va_end(ap);
    if (c->opts.log != NULL)
        c->opts.log(c->opts.log_data, text);
    else
        fprintf(stderr, "kube: %s\n", text);
}

err_t kube_client_new(uv_loop_t *loop, kube_config_t *cfg, const kube_client_opts_t *opts,
                      kube_client_t **out, err_msg_t *msg)
{
    kube_client_t *c;
    int rc;

    if (cfg == NULL || cfg->server == NULL)
        return err_set(msg, ERR_INVALID, "kube client: configuration has no server");
    c = calloc(1, sizeof(*c));
    if (c == NULL)
        return err_set(msg, ERR_NOMEM, "kube client: out of memory");
    c->loop = loop;
    c->cfg = cfg;
    if (opts != NULL)
        c->opts = *opts;
    if (c->opts.qps_milli == 0)
        c->opts.qps_milli = DEFAULT_QPS_MILLI;
    if (c->opts.burst == 0)
        c->opts.burst = DEFAULT_BURST;
    if (c->opts.timeout_ms == 0)
        c->opts.timeout_ms = DEFAULT_TIMEOUT_MS;
    if (c->opts.max_retries == 0)
        c->opts.max_retries = DEFAULT_RETRIES;
    if (c->opts.body_max == 0)
        c->opts.body_max = DEFAULT_BODY_MAX;
    if (c->opts.watch_line_max == 0)
        c->opts.watch_line_max = DEFAULT_LINE_MAX;
    if (c->opts.max_requests == 0)
        c->opts.max_requests = DEFAULT_MAX_REQUESTS;
    kube_bucket_init(&c->bucket, c->opts.qps_milli, c->opts.burst, uv_now(loop));

    c->multi = multi_new(c);
    if (c->multi == NULL) {
        free(c);
        return err_set(msg, ERR_NOMEM, "kube client: curl_multi_init failed");
    }

    /* Both timers are infallible to init for a valid loop, but check anyway: nothing is
     * registered with the loop before both succeed. */
    rc = uv_timer_init(loop, &c->curl_timer);
    if (rc == 0) {
        c->handles++;
        c->curl_timer.data = c;
        rc = uv_timer_init(loop, &c->pump_timer);
        if (rc == 0) {
            c->handles++;
            c->pump_timer.data = c;
        }
    }
    if (rc != 0) {
        err_set(msg, ERR_IO, "kube client: uv_timer_init: %s", uv_strerror(rc));
        kube_client_close(c, NULL, NULL);
        return ERR_IO;
    }
    *out = c;
    return ERR_OK;
}

/* One loop handle has closed; the last one frees the client. */
static void client_handle_gone(kube_client_t *c)
{
    if (--c->handles == 0) {
        void (*cb)(void *) = c->on_closed;
        void *data = c->closed_data;

        free(c);
        if (cb != NULL)
            cb(data);
    }
}

static void on_handle_closed(uv_handle_t *h)
{
    client_handle_gone(h->data);
}

static void on_sock_closed(uv_handle_t *h)
{
    kube_sock_t *ks = container_of((uv_poll_t *)h, kube_sock_t, poll);
    kube_client_t *c = ks->c;

    free(ks);
    client_handle_gone(c);
}

static void sock_close(kube_sock_t *ks)
{
    kube_client_t *c = ks->c;

    if (ks->prev)
        ks->prev->next = ks->next;
    else
        c->socks = ks->next;
    if (ks->next)
        ks->next->prev = ks->prev;
    ks->prev = ks->next = NULL;
    uv_poll_stop(&ks->poll);
    uv_close((uv_handle_t *)&ks->poll, on_sock_closed);
}

static void req_complete(kube_req_t *req, kube_result_t *res);

void kube_client_close(kube_client_t *c, void (*on_closed)(void *data), void *data)
{
    if (c == NULL || c->closing)
        return;
    c->closing = true;
    c->on_closed = on_closed;
    c->closed_data = data;
    if (c->in_write > 0) {
        /* Inside a curl callback: mark everything; socket_action() finishes the job. */
        for (kube_req_t *r = c->reqs; r != NULL; r = r->next)
            r->cancel_requested = true;
        c->deferred_cancel = true;
        return;
    }
    /* Cancel in submission order; a callback may submit more, which are refused (closing). */
    while (c->reqs != NULL) {
        kube_result_t res;

        memset(&res, 0, sizeof(res));
        res.err = ERR_IO;
        res.canceled = true;
        res.reason = "";
        err_set(&res.msg, ERR_IO, "%s %s: canceled (client closed)", c->reqs->method,
                c->reqs->path);
        req_complete(c->reqs, &res);
    }
    if (c->busy == 0)
        finish_close(c);
}

/* Free libcurl state and close every loop handle; runs outside any drain. */
static void finish_close(kube_client_t *c)
{
    CURLM *m = c->multi;

    if (c->multi_done)
        return;

    c->multi_done = true;
    c->multi = NULL; /* the socket callback must not touch the multi while it is cleaned up */
    /* Cleanup closes pooled connections and may report CURL_POLL_REMOVE for their sockets. */
    curl_multi_cleanup(m);
    while (c->socks != NULL)
        sock_close(c->socks);
    /* c->handles counts the timers only if their init succeeded. */
    if (c->handles >= 2) {
        uv_timer_stop(&c->curl_timer);
        uv_timer_stop(&c->pump_timer);
        uv_close((uv_handle_t *)&c->curl_timer, on_handle_closed);
        uv_close((uv_handle_t *)&c->pump_timer, on_handle_closed);
    } else if (c->handles == 1) {
        uv_close((uv_handle_t *)&c->curl_timer, on_handle_closed);
    } else {
        void (*cb)(void *) = c->on_closed;
        void *data = c->closed_data;

        free(c);
        if (cb != NULL)
            cb(data);
    }
}

/* ---- requests ----------------------------------------------------------------------------------
 */

static void req_free(kube_req_t *req)
{
    if (req->easy != NULL)
        curl_easy_cleanup(req->easy);
    curl_slist_free_all(req->headers);
    free(req->path);
    free(req->url);
    free(req->body);
    free(req->resp);
    kube_lines_fini(&req->lines);
    free(req);
}

static void req_unlink(kube_req_t *req)
{
    kube_client_t *c = req->c;

    if (req->prev)
        req->prev->next = req->next;
    else
        c->reqs = req->next;
    if (req->next)
        req->next->prev = req->prev;
    else
        c->reqs_tail = req->prev;
    req->prev = req->next = NULL;
    c->nreqs--;
}

/* Detach `req` from the client and curl, fire its callback, free it. */
static void req_complete(kube_req_t *req, kube_result_t *res)
{
    kube_client_t *c = req->c;

    if (req->state == REQ_ACTIVE && c->multi != NULL)
        curl_multi_remove_handle(c->multi, req->easy);
    req_unlink(req);
    if (req->cb != NULL)
        req->cb(res, req->data);
    req_free(req);
}

static size_t on_header(char *buf, size_t size, size_t n, void *userp)
{
    kube_req_t *req = userp;
    size_t len = size * n;

    /* A new status line (redirects, 100-continue) starts a new header block. */
    if (len >= 5 && strncmp(buf, "HTTP/", 5) == 0)
        req->retry_after = -1;
    else if (len > 12 && strncasecmp(buf, "retry-after:", 12) == 0)
        req->retry_after = kube__retry_after(buf + 12, len - 12);
    return len;
}

static void resp_append(kube_req_t *req, const char *p, size_t n)
{
    size_t max = req->c->opts.body_max;

    if (req->resp_overflow)
        return;
    if (n > max || req->resp_len > max - n) {
        req->resp_overflow = true;
        return;
    }
    if (req->resp_len + n + 1 > req->resp_cap) {
        size_t cap = req->resp_cap ? req->resp_cap : 4096;
        char *nb;

        while (cap < req->resp_len + n + 1)
            cap *= 2;
        nb = realloc(req->resp, cap);
        if (nb == NULL) {
            req->resp_overflow = true;
            return;
        }
        req->resp = nb;
        req->resp_cap = cap;
    }
    memcpy(req->resp + req->resp_len, p, n);
    req->resp_len += n;
}

static int on_line(void *ctx, const char *line, size_t len, bool too_long)
{
    kube_req_t *req = ctx;
    kube_event_type_t type;
    json_t *obj = NULL;
    err_msg_t emsg;
    err_t rc;

    if (too_long) {
        kube_client_log(req->c, "%s: watch event longer than %zu bytes skipped", req->path,
                        req->c->opts.watch_line_max);
        return 0;
    }
    if (len == 0)
        return 0;
    rc = kube__event_parse(line, len, &type, &obj, &emsg);
    if (rc == ERR_NOMEM) {
        /* Skipping the event would lose it for good (the next one moves the resourceVersion
         * past it): end the stream instead, and the watcher resumes from the last event it
         * took, which the server sends again. */
        req->stream_oom = true;
        return 1;
    }
    if (rc != ERR_OK) {
        kube_client_log(req->c, "%s: malformed watch line skipped: %s", req->path, emsg.text);
        return 0;
    }
    req->c->in_write++;
    req->on_event(type, obj, req->data);
    req->c->in_write--;
    json_decref(obj);
    return req->cancel_requested ? 1 : 0;
}

static size_t on_write(char *buf, size_t size, size_t n, void *userp)
{
    kube_req_t *req = userp;
    size_t len = size * n;
    long status = 0;

    if (req->cancel_requested)
        return 0;
    if (!req->watch) {
        resp_append(req, buf, len);
        return req->resp_overflow ? 0 : len;
    }
    curl_easy_getinfo(req->easy, CURLINFO_RESPONSE_CODE, &status);
    if (status != 200) {
        resp_append(req, buf, len); /* an error Status, decoded at the end */
        return len;
    }
    if (kube_lines_feed(&req->lines, buf, len, on_line, req) < 0)
        req->stream_oom = true; /* the rest of the line is lost: end the stream, as above */
    return req->cancel_requested || req->stream_oom ? 0 : len;
}

/* curl_easy_setopt() keeping the first failure in `bad` (string options are copied, and the
 * copy can fail). */
#define SETOPT(e, opt, val)                                 \
    do {                                                    \
        CURLcode rc_ = curl_easy_setopt((e), (opt), (val)); \
        if (rc_ != CURLE_OK && bad == CURLE_OK)             \
            bad = rc_;                                      \
    } while (0)

/* Prepare the easy handle for (re)submission: options are set once, headers each time. */
static err_t req_setup(kube_req_t *req, err_msg_t *msg)
{
    kube_client_t *c = req->c;
    kube_config_t *cfg = c->cfg;
    const char *token = NULL;
    char auth[64 + 8192];
    err_msg_t tmsg;
    CURLcode bad = CURLE_OK;
    CURL *e;

    curl_slist_free_all(req->headers);
    req->headers = NULL;
    if (kube_config_token(cfg, &token, &tmsg) != ERR_OK)
        kube_client_log(c, "token: %s (using the previous one)", tmsg.text);
    {
        struct curl_slist *h = NULL, *t;
        const char *lines[4];
        size_t n = 0;

        lines[n++] = "Accept: application/json";
        lines[n++] = "Expect:"; /* no 100-continue round trip */
        lines[n++] = req->content_type;
        if (token != NULL && strlen(token) < sizeof(auth) - 32) {
            snprintf(auth, sizeof(auth), "Authorization: Bearer %s", token);
            lines[n++] = auth;
        }
        for (size_t i = 0; i < n; i++) {
            if (lines[i] == NULL)
                continue;
            t = curl_slist_append(h, lines[i]);
            if (t == NULL) {
                curl_slist_free_all(h);
                return err_set(msg, ERR_NOMEM, "%s %s: out of memory", req->method, req->path);
            }
            h = t;
        }
        req->headers = h;
    }
    if (req->easy != NULL) {
        if (curl_easy_setopt(req->easy, CURLOPT_HTTPHEADER, req->headers) != CURLE_OK)
            return err_set(msg, ERR_NOMEM, "%s %s: out of memory", req->method, req->path);
        return ERR_OK;
    }
    e = curl_easy_init();
    if (e == NULL)
        return err_set(msg, ERR_NOMEM, "%s %s: curl_easy_init failed", req->method, req->path);
    req->easy = e;
    SETOPT(e, CURLOPT_URL, req->url);
    SETOPT(e, CURLOPT_PRIVATE, req);
    SETOPT(e, CURLOPT_ERRORBUFFER, req->errbuf);
    SETOPT(e, CURLOPT_NOSIGNAL, 1L);
    SETOPT(e, CURLOPT_HTTPHEADER, req->headers);
    SETOPT(e, CURLOPT_USERAGENT, "sluice/0.1");
    SETOPT(e, CURLOPT_WRITEFUNCTION, on_write);
    SETOPT(e, CURLOPT_WRITEDATA, req);
    SETOPT(e, CURLOPT_HEADERFUNCTION, on_header);
    SETOPT(e, CURLOPT_HEADERDATA, req);
    SETOPT(e, CURLOPT_HTTP_VERSION,
           c->opts.http1 ? (long)CURL_HTTP_VERSION_1_1 : (long)CURL_HTTP_VERSION_2TLS);
    SETOPT(e, CURLOPT_PIPEWAIT, 1L); /* prefer a new HTTP/2 stream over a new socket */
    SETOPT(e, CURLOPT_TCP_KEEPALIVE, 1L);
    SETOPT(e, CURLOPT_CONNECTTIMEOUT_MS, 10000L);
    SETOPT(e, CURLOPT_TIMEOUT_MS, (long)req->timeout_ms);
    SETOPT(e, CURLOPT_ACCEPT_ENCODING, "");
    if (strcmp(req->method, "GET") == 0) {
        SETOPT(e, CURLOPT_HTTPGET, 1L);
    } else {
        SETOPT(e, CURLOPT_CUSTOMREQUEST, req->method);
        if (req->body != NULL) {
            SETOPT(e, CURLOPT_POSTFIELDS, req->body);
            SETOPT(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)req->body_len);
        }
    }
    if (cfg->insecure) {
        SETOPT(e, CURLOPT_SSL_VERIFYPEER, 0L);
        SETOPT(e, CURLOPT_SSL_VERIFYHOST, 0L);
    } else if (cfg->ca_data.data != NULL) {
        struct curl_blob b = {cfg->ca_data.data, cfg->ca_data.len, CURL_BLOB_COPY};

        SETOPT(e, CURLOPT_CAINFO_BLOB, &b);
    } else if (cfg->ca_file != NULL) {
        SETOPT(e, CURLOPT_CAINFO, cfg->ca_file);
    }
    if (cfg->cert_data.data != NULL) {
        struct curl_blob b = {cfg->cert_data.data, cfg->cert_data.len, CURL_BLOB_COPY};

        SETOPT(e, CURLOPT_SSLCERT_BLOB, &b);
        SETOPT(e, CURLOPT_SSLCERTTYPE, "PEM");
    } else if (cfg->cert_file != NULL) {
        SETOPT(e, CURLOPT_SSLCERT, cfg->cert_file);
    }
    if (cfg->key_data.data != NULL) {
        struct curl_blob b = {cfg->key_data.data, cfg->key_data.len, CURL_BLOB_COPY};

        SETOPT(e, CURLOPT_SSLKEY_BLOB, &b);
        SETOPT(e, CURLOPT_SSLKEYTYPE, "PEM");
    } else if (cfg->key_file != NULL) {
        SETOPT(e, CURLOPT_SSLKEY, cfg->key_file);
    }
    if (bad != CURLE_OK) {
        /* A string option curl could not copy (out of memory): a handle without its URL,
         * method or CA must not be sent; the next attempt starts from a new one. */
        curl_easy_cleanup(e);
        req->easy = NULL;
        return err_set(msg, bad == CURLE_OUT_OF_MEMORY ? ERR_NOMEM : ERR_INVALID, "%s %s: %s",
                       req->method, req->path, curl_easy_strerror(bad));
    }
    return ERR_OK;
}

/* Hand `req` to curl now; returns false when it failed and has completed with the error. */
static bool req_start(kube_req_t *req)
{
    kube_client_t *c = req->c;
    kube_result_t res;
    CURLMcode mc;

    memset(&res, 0, sizeof(res));
    res.reason = "";
    req->resp_len = 0;
    req->resp_overflow = false;
    req->stream_oom = false;
    req->sock_oom = false;
    req->retry_after = -1;
    req->errbuf[0] = '\0';
    kube_lines_reset(&req->lines);
    res.err = req_setup(req, &res.msg);
    if (res.err == ERR_OK) {
        mc = curl_multi_add_handle(c->multi, req->easy);
        if (mc == CURLM_OK) {
            req->state = REQ_ACTIVE;
            return true;
        }
        res.err =
            err_set(&res.msg, ERR_IO, "%s %s: %s", req->method, req->path, curl_multi_strerror(mc));
    }
    req_complete(req, &res);
    return false;
}

/* Start every queued request that is due and has a token; arm the pump timer for the rest. */
static void pump(kube_client_t *c)
{
    uint64_t now = uv_now(c->loop), wake = 0;
    kube_req_t *req = c->reqs, *next;

    c->busy++;
    for (; req != NULL; req = next) {
        uint64_t wait;

        next = req->next;
        if (req->state != REQ_QUEUED)
            continue;
        if (req->not_before > now) {
            if (wake == 0 || req->not_before - now < wake)
                wake = req->not_before - now;
            continue;
        }
        if (c->multi == NULL)
            break; /* reset_transport() retries first (RESET_MS) */
        wait = kube_bucket_take(&c->bucket, now);
        if (wait > 0) {
            /* FIFO: later requests wait for the same token. */
            if (wake == 0 || wait < wake)
                wake = wait;
            break;
        }
        if (!req_start(req))
            next = c->reqs; /* its callback may have canceled anything: rescan */
        if (c->closing)
            break;
    }
    c->busy--;
    if (c->closing) {
        if (c->busy == 0)
            finish_close(c);
        return;
    }
    if (c->reset && (wake == 0 || wake > RESET_MS))
        wake = RESET_MS;
    if (wake > 0)
        uv_timer_start(&c->pump_timer, on_pump, wake, 0);
}

/*
 * libcurl 7.88's state after CURLM_OUT_OF_MEMORY from curl_multi_socket_action() cannot be
 * trusted: when it cannot add a transfer's new socket to its socket hash it never reports that
 * socket to on_curl_socket() (nothing polls it: the transfer waits for its timeout, minutes for
 * a watch), and when it cannot add the transfer to the socket's entry it destroys that entry's
 * table and keeps the entry, so the next run of the transfer divides by zero in that table
 * (SIGFPE; multi.c singlesocket(), found by test_ctrl_oom SLUICE_OOM_CURL=only). So the client
 * drops the multi handle at once, before curl runs anything else: every connection is closed
 * and every active request fails as a connection reset (no answer: the owners treat its outcome
 * as unknown and retry); queued ones start on a new handle. While even a new handle cannot be
 * made, c->multi stays NULL and pump() tries again every RESET_MS.
 */
static void reset_transport(kube_client_t *c)
{
    CURLM *old = c->multi;
    kube_req_t *req;

    c->busy++;
    if (old != NULL) {
        c->multi = NULL; /* the socket callback: cleanup in progress */
        for (req = c->reqs; req != NULL; req = req->next)
            if (req->state == REQ_ACTIVE) {
                /* safe on the broken state: removal only deletes from the tables */
                curl_multi_remove_handle(old, req->easy);
                req->state = REQ_QUEUED;
                req->reset = true;
            }
        curl_multi_cleanup(old);
        while (c->socks != NULL)
            sock_close(c->socks);
        uv_timer_stop(&c->curl_timer);
        kube_client_log(c, "libcurl ran out of memory: every connection reset");
    }
    c->multi = multi_new(c);
    c->reset = c->multi == NULL;
    for (req = c->reqs; req != NULL;) {
        kube_result_t res;

        if (!req->reset) {
            req = req->next;
            continue;
        }
        memset(&res, 0, sizeof(res));
        res.reason = "";
        res.err = err_set(&res.msg, ERR_IO, "%s %s: connection reset: libcurl ran out of memory",
                          req->method, req->path);
        req_complete(req, &res);
        req = c->reqs; /* its callback may have changed the list: rescan */
    }
    c->busy--;
}

static void on_pump(uv_timer_t *t)
{
    kube_client_t *c = container_of(t, kube_client_t, pump_timer);

    if (c->reset && !c->closing)
        reset_transport(c);
    if (c->closing) {
        if (c->busy == 0)
            finish_close(c);
        return;
    }
    pump(c);
}

/* Translate a finished transfer into a result, a retry, or a callback. */
static void req_done(kube_req_t *req, CURLcode code)
{
    kube_client_t *c = req->c;
    kube_result_t res;
    char what[512];
    json_t *body = NULL;
    long status = 0;

    memset(&res, 0, sizeof(res));
    res.reason = "";
    snprintf(what, sizeof(what), "%s %.480s", req->method, req->path);
    curl_easy_getinfo(req->easy, CURLINFO_RESPONSE_CODE, &status);
    res.status = status;
    if (status != 0) {
        long ver = 0, connects = 0;

        curl_easy_getinfo(req->easy, CURLINFO_HTTP_VERSION, &ver);
        curl_easy_getinfo(req->easy, CURLINFO_NUM_CONNECTS, &connects);
        res.http_version = ver == CURL_HTTP_VERSION_2_0 ? 2 : ver == CURL_HTTP_VERSION_3 ? 3 : 1;
        res.reused = connects == 0;
    }
    if (req->cancel_requested) {
        res.canceled = true;
        res.err = err_set(&res.msg, ERR_IO, "%s: canceled", what);
        req_complete(req, &res);
        return;
    }
    if (code != CURLE_OK) {
        const char *detail = req->errbuf[0] ? req->errbuf : curl_easy_strerror(code);
        err_t e = ERR_IO;

        if (code == CURLE_OPERATION_TIMEDOUT)
            e = ERR_TIMEOUT;
        else if (code == CURLE_SSL_CONNECT_ERROR || code == CURLE_PEER_FAILED_VERIFICATION ||
                 code == CURLE_SSL_CERTPROBLEM || code == CURLE_SSL_CACERT_BADFILE)
            e = ERR_TLS;
        else if (code == CURLE_WRITE_ERROR && req->resp_overflow)
            e = ERR_OVERFLOW;
        else if (code == CURLE_WRITE_ERROR && req->stream_oom) {
            e = ERR_NOMEM;
            detail = "watch stream ended: out of memory";
        }
        res.err = err_set(&res.msg, e, "%s: %s", what, detail);
        req_complete(req, &res);
        return;
    }
    /* 429 (and 503 with Retry-After) are the server's flow control: wait and resubmit. */
    if ((status == 429 || (status == 503 && req->retry_after >= 0)) &&
        req->retries < c->opts.max_retries && !req->watch) {
        long secs = req->retry_after >= 0 ? req->retry_after : RETRY_DEFAULT_S;

        req->retries++;
        kube_client_log(c, "%s: HTTP %ld, retry %u in %lds", what, status, req->retries, secs);
        curl_multi_remove_handle(c->multi, req->easy);
        req->state = REQ_QUEUED;
        req->not_before = uv_now(c->loop) + (uint64_t)secs * 1000u;
        return; /* drain() pumps afterwards */
    }
    if (req->watch && status == 200) {
        res.status = status;
        req_complete(req, &res);
        return;
    }
    if (req->resp_len > 0) {
        json_error_t jerr;

        body = util_json_loadb(req->resp, req->resp_len, 0, &jerr);
        if (body == NULL && status >= 200 && status < 300) {
            res.err = kube__json_oom(&jerr)
                          ? err_set(&res.msg, ERR_NOMEM, "%s: response: out of memory", what)
                          : err_set(&res.msg, ERR_PARSE, "%s: response: %s", what, jerr.text);
            res.status = status;
            req_complete(req, &res);
            return;
        }
    }
    kube__result_from_http(&res, status, body, what);
    req_complete(req, &res);
    json_decref(body);
}

static void drain(kube_client_t *c)
{
    CURLMsg *m;
    int left;

    while (c->multi != NULL && (m = curl_multi_info_read(c->multi, &left)) != NULL) {
        kube_req_t *req = NULL;

        if (m->msg != CURLMSG_DONE)
            continue;
        curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, (char **)&req);
        if (req != NULL)
            req_done(req, m->data.result);
    }
}

/* Complete the requests canceled from inside a curl callback. */
static void sweep_cancels(kube_client_t *c)
{
    kube_req_t *req;

    while (c->deferred_cancel) {
        c->deferred_cancel = false;
        for (req = c->reqs; req != NULL; req = req->next) {
            if (req->cancel_requested) {
                kube_result_t res;

                memset(&res, 0, sizeof(res));
                res.reason = "";
                res.canceled = true;
                res.err = err_set(&res.msg, ERR_IO, "%s %s: canceled", req->method, req->path);
                req_complete(req, &res);
                c->deferred_cancel = true; /* the list changed: scan again */
                break;
            }
        }
    }
}

/* Fail the requests whose socket could not be watched (on_curl_socket): ERR_NOMEM, and their
 * owners retry as after any failed request. */
static void sweep_ooms(kube_client_t *c)
{
    kube_req_t *req;

    while (c->deferred_oom) {
        c->deferred_oom = false;
        for (req = c->reqs; req != NULL; req = req->next) {
            if (req->sock_oom && req->state == REQ_ACTIVE) {
                kube_result_t res;

                memset(&res, 0, sizeof(res));
                res.reason = "";
                res.err = err_set(&res.msg, ERR_NOMEM, "%s %s: out of memory watching its socket",
                                  req->method, req->path);
                req->sock_oom = false;
                req_complete(req, &res);
                c->deferred_oom = true; /* the list changed: scan again */
                break;
            }
        }
    }
}

/* Run curl on `fd` (or its timeout), drain finished transfers, then pump the queue. */
static void socket_action(kube_client_t *c, curl_socket_t fd, int flags)
{
    int running = 0;

    if (c->multi == NULL)
        return; /* reset_transport() could not make a new handle yet */
    c->busy++;
    if (curl_multi_socket_action(c->multi, fd, flags, &running) == CURLM_OUT_OF_MEMORY)
        reset_transport(c); /* before curl runs anything else */
    else
        drain(c);
    sweep_cancels(c);
    sweep_ooms(c);
    c->busy--;
    if (c->closing) {
        if (c->busy == 0)
            finish_close(c);
        return;
    }
    pump(c);
}

static void on_poll(uv_poll_t *p, int status, int events)
{
    kube_sock_t *ks = container_of(p, kube_sock_t, poll);
    int flags = 0;

    if (status < 0)
        flags = CURL_CSELECT_ERR;
    else {
        if (events & UV_READABLE)
            flags |= CURL_CSELECT_IN;
        if (events & UV_WRITABLE)
            flags |= CURL_CSELECT_OUT;
    }
    socket_action(ks->c, ks->fd, flags);
}

static void on_curl_timer_fire(uv_timer_t *t)
{
    socket_action(container_of(t, kube_client_t, curl_timer), CURL_SOCKET_TIMEOUT, 0);
}

static int on_curl_timer(CURLM *m, long timeout_ms, void *userp)
{
    kube_client_t *c = userp;

    (void)m;
    if (c->multi_done)
        return 0;
    if (timeout_ms < 0)
        uv_timer_stop(&c->curl_timer);
    else /* 0 means "now": run from the loop, never recursively from inside curl */
        uv_timer_start(&c->curl_timer, on_curl_timer_fire,
                       timeout_ms == 0 ? 1 : (uint64_t)timeout_ms, 0);
    return 0;
}

static int on_curl_socket(CURL *e, curl_socket_t s, int what, void *userp, void *socketp)
{
    kube_client_t *c = userp;
    kube_sock_t *ks = socketp;
    int events = 0, rc;

    if (c->multi == NULL && what != CURL_POLL_REMOVE)
        return 0; /* curl_multi_cleanup() in progress: no new sockets */
    if (what == CURL_POLL_REMOVE) {
        if (ks != NULL) {
            if (c->multi != NULL)
                curl_multi_assign(c->multi, s, NULL);
            sock_close(ks);
        }
        return 0;
    }
    if (ks == NULL) {
        ks = calloc(1, sizeof(*ks));
        rc = ks == NULL ? UV_ENOMEM : uv_poll_init_socket(c->loop, &ks->poll, s);
        if (rc != 0) {
            /* Returning -1 would make curl abort every transfer and refuse all later ones
             * (the multi handle is dead for good): fail only this one, after the callback. */
            kube_req_t *req = NULL;

            kube_client_log(c, "socket %d: %s", (int)s, uv_strerror(rc));
            free(ks);
            curl_easy_getinfo(e, CURLINFO_PRIVATE, (char **)&req);
            if (req != NULL) {
                req->sock_oom = true;
                c->deferred_oom = true;
            }
            return 0;
        }
        ks->fd = s;
        ks->c = c;
        ks->next = c->socks;
        if (c->socks)
            c->socks->prev = ks;
        c->socks = ks;
        c->handles++;
        curl_multi_assign(c->multi, s, ks);
    }
    if (what & CURL_POLL_IN)
        events |= UV_READABLE;
    if (what & CURL_POLL_OUT)
        events |= UV_WRITABLE;
    uv_poll_start(&ks->poll, events, on_poll);
    return 0;
}

size_t kube_client_queued(const kube_client_t *c)
{
    return c->nreqs;
}

/* ---- submission ---------------------------------------------------------------------------------
 */

/* Build and queue a request. `path` is consumed (freed on failure too). */
static err_t submit(kube_client_t *c, const char *method, kube__str_t *path, json_t *body,
                    const char *content_type, bool watch, uint32_t timeout_ms,
                    kube_event_cb on_event, kube_done_cb cb, void *data, kube_req_t **out,
                    err_msg_t *msg)
{
    kube_req_t *req = NULL;
    kube__str_t url;

    kube__str_init(&url, URL_MAX);
    if (c->closing) {
        kube__str_fini(path);
        return err_set(msg, ERR_INVALID, "%s: client is closing", method);
    }
    if (path->failed || path->p == NULL) {
        kube__str_fini(path);
        return err_set(msg, ERR_NOMEM, "%s: request path too long or out of memory", method);
    }
    if (c->nreqs >= c->opts.max_requests) {
        err_set(msg, ERR_OVERFLOW,
                "%s %s: refused: the client has %zu requests queued or in flight (its limit)",
                method, path->p, c->nreqs);
        kube__str_fini(path);
        return ERR_OVERFLOW;
    }
    req = calloc(1, sizeof(*req));
    if (req == NULL)
        goto nomem;
    req->c = c;
    req->method = method;
    req->path = path->p;
    path->p = NULL;
    kube__str_adds(&url, c->cfg->server);
    kube__str_adds(&url, req->path);
    if (url.failed)
        goto nomem;
    req->url = url.p;
    url.p = NULL;
    if (body != NULL) {
        req->body = util_json_dumps(body, JSON_COMPACT); /* never a text with a key left out */
        if (req->body == NULL)
            goto nomem;
        req->body_len = strlen(req->body);
    }
    req->content_type = content_type;
    req->watch = watch;
    req->timeout_ms = timeout_ms;
    req->retry_after = -1;
    req->on_event = on_event;
    req->cb = cb;
    req->data = data;
    kube_lines_init(&req->lines, c->opts.watch_line_max);
    req->state = REQ_QUEUED;
    req->not_before = 0;
    req->prev = c->reqs_tail;
    if (c->reqs_tail)
        c->reqs_tail->next = req;
    else
        c->reqs = req;
    c->reqs_tail = req;
    c->nreqs++;
    if (out != NULL)
        *out = req;
    /* Start from the next loop iteration at the earliest: a callback never fires before the
     * submitting call has returned, so `*out` is always set first. */
    uv_timer_start(&c->pump_timer, on_pump, 0, 0);
    return ERR_OK;
nomem:
    kube__str_fini(path);
    kube__str_fini(&url);
    if (req != NULL)
        req_free(req);
    return err_set(msg, ERR_NOMEM, "%s: out of memory", method);
}

err_t kube_get(kube_client_t *c, const kube_resource_t *res, const char *ns, const char *name,
               const char *subresource, kube_done_cb cb, void *data, kube_req_t **out,
               err_msg_t *msg)
{
    kube__str_t p;

    kube__str_init(&p, URL_MAX);
    kube__path(&p, res, ns, name, subresource);
    return submit(c, "GET", &p, NULL, NULL, false, c->opts.timeout_ms, NULL, cb, data, out, msg);
}

static void add_param(kube__str_t *p, bool *first, const char *key, const char *value)
{
    if (value == NULL)
        return;
    kube__str_adds(p, *first ? "?" : "&");
    *first = false;
    kube__str_adds(p, key);
    kube__str_adds(p, "=");
    kube__str_add_escaped(p, value);
}

err_t kube_get_raw(kube_client_t *c, const char *path, const char *const *params, kube_done_cb cb,
                   void *data, kube_req_t **out, err_msg_t *msg)
{
    kube__str_t p;
    bool first = true;

    if (path == NULL || path[0] != '/')
        return err_set(msg, ERR_INVALID, "GET: path must start with '/'");
    kube__str_init(&p, URL_MAX);
    kube__str_adds(&p, path);
    for (size_t i = 0; params != NULL && params[i] != NULL && params[i + 1] != NULL; i += 2)
        add_param(&p, &first, params[i], params[i + 1]);
    return submit(c, "GET", &p, NULL, NULL, false, c->opts.timeout_ms, NULL, cb, data, out, msg);
}

err_t kube_list(kube_client_t *c, const kube_resource_t *res, const char *ns,
                const kube_list_opts_t *opts, kube_done_cb cb, void *data, kube_req_t **out,
                err_msg_t *msg)
{
    kube_list_opts_t o = {NULL, NULL, NULL, NULL, 0};
    kube__str_t p;
    bool first = true;
    char limit[24];

    if (opts != NULL)
        o = *opts;
    kube__str_init(&p, URL_MAX);
    kube__path(&p, res, ns, NULL, NULL);
    add_param(&p, &first, "labelSelector", o.label_selector);
    add_param(&p, &first, "fieldSelector", o.field_selector);
    add_param(&p, &first, "resourceVersion", o.resource_version);
    add_param(&p, &first, "continue", o.continue_token);
    if (o.limit > 0) {
        snprintf(limit, sizeof(limit), "%u", o.limit);
        add_param(&p, &first, "limit", limit);
    }
    return submit(c, "GET", &p, NULL, NULL, false, c->opts.timeout_ms, NULL, cb, data, out, msg);
}

err_t kube_create(kube_client_t *c, const kube_resource_t *res, const char *ns, json_t *obj,
                  kube_done_cb cb, void *data, kube_req_t **out, err_msg_t *msg)
{
    kube__str_t p;

    kube__str_init(&p, URL_MAX);
    kube__path(&p, res, ns, NULL, NULL);
    return submit(c, "POST", &p, obj, "Content-Type: application/json", false, c->opts.timeout_ms,
                  NULL, cb, data, out, msg);
}

err_t kube_update(kube_client_t *c, const kube_resource_t *res, const char *ns, const char *name,
                  const char *subresource, json_t *obj, kube_done_cb cb, void *data,
                  kube_req_t **out, err_msg_t *msg)
{
    kube__str_t p;

    kube__str_init(&p, URL_MAX);
    kube__path(&p, res, ns, name, subresource);
    return submit(c, "PUT", &p, obj, "Content-Type: application/json", false, c->opts.timeout_ms,
                  NULL, cb, data, out, msg);
}

err_t kube_patch(kube_client_t *c, const kube_resource_t *res, const char *ns, const char *name,
                 const char *subresource, kube_patch_type_t type, json_t *patch, kube_done_cb cb,
                 void *data, kube_req_t **out, err_msg_t *msg)
{
    kube__str_t p;
    const char *ct = type == KUBE_PATCH_JSON ? "Content-Type: application/json-patch+json"
                                             : "Content-Type: application/merge-patch+json";

    kube__str_init(&p, URL_MAX);
    kube__path(&p, res, ns, name, subresource);
    return submit(c, "PATCH", &p, patch, ct, false, c->opts.timeout_ms, NULL, cb, data, out, msg);
}

err_t kube_delete(kube_client_t *c, const kube_resource_t *res, const char *ns, const char *name,
                  const char *precondition_rv, kube_done_cb cb, void *data, kube_req_t **out,
                  err_msg_t *msg)
{
    kube__str_t p;
    json_t *opts = NULL;
    err_t rc;

    kube__str_init(&p, URL_MAX);
    kube__path(&p, res, ns, name, NULL);
    if (precondition_rv != NULL) {
        opts = json_pack("{s:s, s:s, s:{s:s}}", "kind", "DeleteOptions", "apiVersion", "v1",
                         "preconditions", "resourceVersion", precondition_rv);
        if (opts == NULL) {
            kube__str_fini(&p);
            return err_set(msg, ERR_NOMEM, "DELETE: out of memory");
        }
    }
    rc = submit(c, "DELETE", &p, opts, opts ? "Content-Type: application/json" : NULL, false,
                c->opts.timeout_ms, NULL, cb, data, out, msg);
    json_decref(opts);
    return rc;
}

err_t kube_watch(kube_client_t *c, const kube_resource_t *res, const char *ns,
                 const kube_watch_opts_t *opts, kube_event_cb on_event, kube_done_cb cb, void *data,
                 kube_req_t **out, err_msg_t *msg)
{
    kube_watch_opts_t o = {NULL, NULL, NULL, false, 0};
    kube__str_t p;
    bool first = true;
    char secs[24];
    uint32_t timeout_ms = 0;

    if (opts != NULL)
        o = *opts;
    if (on_event == NULL)
        return err_set(msg, ERR_INVALID, "WATCH: on_event is required");
    kube__str_init(&p, URL_MAX);
    kube__path(&p, res, ns, NULL, NULL);
    add_param(&p, &first, "watch", "true");
    add_param(&p, &first, "labelSelector", o.label_selector);
    add_param(&p, &first, "fieldSelector", o.field_selector);
    add_param(&p, &first, "resourceVersion", o.resource_version);
    if (o.bookmarks)
        add_param(&p, &first, "allowWatchBookmarks", "true");
    if (o.timeout_seconds > 0) {
        snprintf(secs, sizeof(secs), "%u", o.timeout_seconds);
        add_param(&p, &first, "timeoutSeconds", secs);
        /* The server ends the stream; the client-side limit only catches a dead peer. */
        timeout_ms = (o.timeout_seconds + 60u) * 1000u;
    }
    return submit(c, "GET", &p, NULL, NULL, true, timeout_ms, on_event, cb, data, out, msg);
}

void kube_req_set_timeout(kube_req_t *req, uint32_t timeout_ms)
{
    req->timeout_ms = timeout_ms;
    if (req->easy != NULL) /* a 429 resubmission reuses the handle */
        curl_easy_setopt(req->easy, CURLOPT_TIMEOUT_MS, (long)timeout_ms);
}

void kube_req_cancel(kube_req_t *req)
{
    kube_result_t res;

    if (req == NULL)
        return;
    if (req->c->in_write > 0) {
        /* Removing an easy handle inside a curl callback is not allowed: the write callback
         * aborts this transfer, and socket_action() completes it once curl has returned. */
        req->cancel_requested = true;
        req->c->deferred_cancel = true;
        return;
    }
    memset(&res, 0, sizeof(res));
    res.reason = "";
    res.canceled = true;
    res.err = err_set(&res.msg, ERR_IO, "%s %s: canceled", req->method, req->path);
    req_complete(req, &res);
}

/* ---- read-modify-write with conflict retries
 * ------------------------------------------------------ */

/*
 * GET -> fn(copy) -> PUT -(409 Conflict)-> GET ... The 409 means someone else wrote between our
 * read and our write; the decision in `fn` is made again on the fresh object rather than
 * forcing our copy through, which is what optimistic concurrency asks of a controller.
 */
typedef struct rmw_s {
    kube_client_t *c;
    kube_resource_t res; /* strings borrowed from the caller (static in practice) */
    char *ns, *name, *sub;
    kube_mutate_fn fn;
    uint32_t attempts_left;
    kube_done_cb cb;
    void *data;
} rmw_t;

static void rmw_free(rmw_t *op)
{
    free(op->ns);
    free(op->name);
    free(op->sub);
    free(op);
}

static void rmw_finish(rmw_t *op, const kube_result_t *res)
{
    op->cb(res, op->data);
    rmw_free(op);
}

static void rmw_on_get(const kube_result_t *res, void *data);

static void rmw_fail(rmw_t *op, err_t code, const err_msg_t *msg)
{
    kube_result_t r;

    memset(&r, 0, sizeof(r));
    r.reason = "";
    r.err = code;
    r.msg = *msg;
    rmw_finish(op, &r);
}

static void rmw_on_put(const kube_result_t *res, void *data)
{
    rmw_t *op = data;
    err_msg_t msg;

    if (res->err == ERR_CONFLICT && !res->canceled && op->attempts_left > 0) {
        kube_client_log(op->c, "%s: conflict, re-reading (%u attempts left)", res->msg.text,
                        op->attempts_left);
        if (kube_get(op->c, &op->res, op->ns, op->name, NULL, rmw_on_get, op, NULL, &msg) !=
            ERR_OK) {
            rmw_fail(op, ERR_IO, &msg);
        }
        return;
    }
    rmw_finish(op, res);
}

static void rmw_on_get(const kube_result_t *res, void *data)
{
    rmw_t *op = data;
    json_t *copy;
    bool changed = true;
    err_msg_t msg;
    err_t rc;

    if (res->err != ERR_OK) {
        rmw_finish(op, res);
        return;
    }
    op->attempts_left--;
    copy = json_deep_copy(res->body);
    if (copy == NULL) {
        err_set(&msg, ERR_NOMEM, "update %s: out of memory", op->name);
        rmw_fail(op, ERR_NOMEM, &msg);
        return;
    }
    msg.text[0] = '\0';
    rc = op->fn(copy, op->data, &changed, &msg);
    if (rc != ERR_OK) {
        json_decref(copy);
        rmw_fail(op, rc, &msg);
        return;
    }
    if (!changed) {
        json_decref(copy);
        rmw_finish(op, res);
        return;
    }
    rc = kube_update(op->c, &op->res, op->ns, op->name, op->sub, copy, rmw_on_put, op, NULL, &msg);
    json_decref(copy);
    if (rc != ERR_OK)
        rmw_fail(op, rc, &msg);
}

err_t kube_update_retry(kube_client_t *c, const kube_resource_t *res, const char *ns,
                        const char *name, const char *subresource, kube_mutate_fn fn,
                        uint32_t attempts, kube_done_cb cb, void *data, err_msg_t *msg)
{
    rmw_t *op;
    err_t rc;

    if (fn == NULL || cb == NULL || name == NULL)
        return err_set(msg, ERR_INVALID, "update: name, fn and cb are required");
    op = calloc(1, sizeof(*op));
    if (op == NULL)
        return err_set(msg, ERR_NOMEM, "update %s: out of memory", name);
    op->c = c;
    op->res = *res;
    op->ns = ns ? strdup(ns) : NULL;
    op->name = strdup(name);
    op->sub = subresource ? strdup(subresource) : NULL;
    if ((ns && !op->ns) || !op->name || (subresource && !op->sub)) {
        rmw_free(op);
        return err_set(msg, ERR_NOMEM, "update %s: out of memory", name);
    }
    op->fn = fn;
    op->attempts_left = attempts ? attempts : 5;
    op->cb = cb;
    op->data = data;
    rc = kube_get(c, res, ns, name, NULL, rmw_on_get, op, NULL, msg);
    if (rc != ERR_OK)
        rmw_free(op);
    return rc;
}
