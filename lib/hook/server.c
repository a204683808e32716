/* server -- an HTTP/1.1 server (optionally TLS) on the libuv loop for webhooks, metrics, health. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "hook/server.h"

#include "hook/server_int.h"

#include "util/grow.h"
#include "util/util.h"

#include <ctype.h>
#include <http_parser.h>
#include <openssl/err.h>
#include <openssl/x509.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * Data path of one connection:
 *
 *   socket --uv_read--> [TLS: rbio -> SSL_read] --> http_parser --> handler
 *   handler --> response text --> [TLS: SSL_write -> wbio] --uv_write--> socket
 *
 * TLS runs over memory BIOs so that libuv owns the socket and OpenSSL never blocks.
 *
 * One timer per connection, re-armed by conn_arm() to the earliest deadline of its state, so
 * that no state waits forever on the peer (server.h draws the states). A connection in state
 * CLOSING reads nothing more; it is closed once its last write has completed, or when the
 * peer stops reading for write_timeout.
 *
 * Memory a peer can make the server hold: headers (max_header_bytes per connection), the
 * request body (reserved from one server-wide budget, max_buffered_bytes, released as soon as
 * the handler has answered: a keep-alive connection keeps no body buffer between requests),
 * and output (reading stops past WRITE_HIGH_WATER queued, so a pipelining client that never
 * reads holds at most that plus one response, and write_timeout closes it). Bodies above
 * SMALL_BODY may use 3/4 of the budget only, and one client address 1/4 of it: a flood of 3 MiB
 * bodies from one address leaves room for everyone else's AdmissionReviews.
 */

#define READ_CHUNK       16384
#define WRITE_HIGH_WATER (64u << 10) /* stop reading while this much output is queued */
#define WRITE_LOW_WATER  (16u << 10)
#define SMALL_BODY       (64u << 10)
#define PIPELINE_MAX     16 /* answers in flight per connection before parsing pauses */
#define SOCKET_SNDBUF    (128 << 10)
#define ACCEPT_RETRY_MIN 10 /* ms, doubling */
#define ACCEPT_RETRY_MAX 1000

typedef struct sbuf_s {
    char *p;
    size_t len;
    size_t cap;
} sbuf_t;

typedef struct conn_s conn_t;

struct hook_server_s {
    uv_tcp_t listener;
    uv_timer_t accept_retry; /* an accept that failed for memory is tried again */
    uv_loop_t *loop;
    hook_server_config_t cfg;
    hook_server_stats_t stats;
    conn_t *conns; /* doubly linked list of open connections */
    size_t live;   /* connections not yet freed (open, or closing handles) */
    int port;
    bool closing;
    bool listener_closed;
    bool retry_closed;
    bool accept_stalled;        /* an accept failed; retried by accept_retry */
    uint64_t accept_backoff_ms; /* the last retry delay, 0 when accepting */
    unsigned fail_accepts;      /* tests: fail this many accepts */
    void (*on_closed)(void *ud);
    void *on_closed_ud;
};

struct conn_s {
    uv_tcp_t tcp;
    uv_timer_t timer;
    hook_server_t *srv;
    conn_t *prev, *next;
    SSL *ssl;  /* NULL in plain HTTP mode */
    BIO *rbio; /* owned by ssl */
    BIO *wbio; /* owned by ssl */
    http_parser parser;
    sbuf_t url;
    sbuf_t body;  /* cap bytes reserved from the server's budget; freed after each request */
    sbuf_t field; /* header name being received */
    sbuf_t value; /* header value being received */
    char *hnames[HOOK_MAX_HEADERS];
    char *hvalues[HOOK_MAX_HEADERS];
    size_t nheaders;
    bool last_was_value;
    size_t header_bytes;
    bool in_request; /* between the first byte of a request and its end */
    bool headers_done;
    bool closing;      /* no more input is processed; close after pending writes */
    bool reading;      /* uv_read_start active */
    bool read_paused;  /* by write backpressure */
    bool parse_paused; /* the same, between pipelined requests: `held` waits */
    sbuf_t held;       /* input not parsed yet (at most one read's worth) */
    int fail_status;   /* set by a parser callback to answer with this 4xx */
    const char *fail_reason;
    int handles_open; /* tcp + timer */
    size_t writes_pending;
    uint64_t served;           /* requests answered */
    uint64_t req_start_ms;     /* first byte of the current request */
    uint64_t activity_ms;      /* accepted, or last response queued: idle since */
    uint64_t write_prog_ms;    /* last write completed (or first queued) */
    hook_deferred_t *deferred; /* the request awaiting hook_deferred_answer(), or NULL */
    char client_cn[256];       /* the verified client certificate's CN (mutual TLS), or "" */
    char ip[48];               /* the client's address: per-client limits */
    char peer[64];
};

struct hook_deferred_s {
    conn_t *conn;     /* NULL once detached: the connection closed or the timeout answered */
    bool close_after; /* the request asked for Connection: close */
};

typedef struct write_req_s {
    uv_write_t req;
    conn_t *conn;
    char *data; /* owned */
    char *tail; /* owned, NULL: a second buffer written after `data` (an answer's body) */
} write_req_t;

static void conn_close(conn_t *c);
static void conn_resume(conn_t *c);
static void conn_arm(conn_t *c);
static void conn_unpause(conn_t *c);
static void server_maybe_done(hook_server_t *srv);
static void on_listener_closed(uv_handle_t *h);

/* ---- small buffers --------------------------------------------------------------------- */

static int sbuf_append(sbuf_t *b, const char *p, size_t n)
{
    if (util_grow((void **)&b->p, &b->cap, b->len + n + 1, 1) != ERR_OK)
        return -1;
    memcpy(b->p + b->len, p, n);
    b->len += n;
    b->p[b->len] = '\0';
    return 0;
}

static void sbuf_reset(sbuf_t *b)
{
    b->len = 0;
    if (b->p)
        b->p[0] = '\0';
}

static void sbuf_free(sbuf_t *b)
{
    free(b->p);
    memset(b, 0, sizeof(*b));
}

/* ---- the body budget ---------------------------------------------------------------------- */

static void body_release(conn_t *c)
{
    hook_server_t *srv = c->srv;

    srv->stats.buffered_bytes -= c->body.cap;
    free(c->body.p);
    memset(&c->body, 0, sizeof(c->body));
}

/* Bytes of body buffers held by connections from `ip`. */
static size_t client_buffered(const hook_server_t *srv, const char *ip)
{
    size_t n = 0;

    for (const conn_t *o = srv->conns; o != NULL; o = o->next)
        if (strcmp(o->ip, ip) == 0)
            n += o->body.cap;
    return n;
}

/* Make c->body hold `need` bytes, `exact` (a Content-Length) or growing by doubling, within the
 * budget. 0, -1 out of memory, -2 over the budget (the caller answers 503). */
static int body_reserve(conn_t *c, size_t need, bool exact)
{
    hook_server_t *srv = c->srv;
    size_t budget = srv->cfg.max_buffered_bytes, cap = need, delta;
    char *p;

    if (need <= c->body.cap)
        return 0;
    if (!exact) {
        cap = c->body.cap < 4096 ? 4096 : c->body.cap * 2;
        if (cap > srv->cfg.max_body_bytes + 1)
            cap = srv->cfg.max_body_bytes + 1;
        if (cap < need)
            cap = need;
    }
    delta = cap - c->body.cap;
    if (srv->stats.buffered_bytes + delta > budget ||
        (cap > SMALL_BODY && (srv->stats.buffered_bytes + delta > budget - budget / 4 ||
                              client_buffered(srv, c->ip) + delta > budget / 4)))
        return -2;
    p = realloc(c->body.p, cap);
    if (p == NULL)
        return -1;
    c->body.p = p;
    c->body.cap = cap;
    srv->stats.buffered_bytes += delta;
    if (srv->stats.buffered_bytes > srv->stats.buffered_bytes_peak)
        srv->stats.buffered_bytes_peak = srv->stats.buffered_bytes;
    return 0;
}

static void request_reset(conn_t *c)
{
    sbuf_reset(&c->url);
    body_release(c);
    sbuf_reset(&c->field);
    sbuf_reset(&c->value);
    for (size_t i = 0; i < c->nheaders; i++) {
        free(c->hnames[i]);
        free(c->hvalues[i]);
        c->hnames[i] = c->hvalues[i] = NULL;
    }
    c->nheaders = 0;
    c->last_was_value = false;
    c->header_bytes = 0;
}

/* ---- output ------------------------------------------------------------------------------ */

static void on_write(uv_write_t *req, int status)
{
    write_req_t *w = container_of(req, write_req_t, req);
    conn_t *c = w->conn;

    free(w->data);
    free(w->tail);
    free(w);
    c->writes_pending--;
    if (status < 0) {
        conn_close(c);
        return;
    }
    if (c->closing && c->writes_pending == 0) {
        conn_close(c);
        return;
    }
    if (uv_is_closing((uv_handle_t *)&c->tcp))
        return;
    c->write_prog_ms = uv_now(c->srv->loop);
    if (c->read_paused && c->deferred == NULL && c->writes_pending < PIPELINE_MAX / 2 &&
        uv_stream_get_write_queue_size((uv_stream_t *)&c->tcp) < WRITE_LOW_WATER) {
        c->read_paused = false;
        if (c->parse_paused)
            conn_unpause(c);
        if (!c->read_paused)
            conn_resume(c);
    }
    if (!uv_is_closing((uv_handle_t *)&c->tcp))
        conn_arm(c);
}

/* Queue `n` bytes of `data`, then `tn` bytes of `tail` (NULL, 0: none) for the socket in one
 * write request; ownership of both passes here. */
static int raw_write2(conn_t *c, char *data, size_t n, char *tail, size_t tn)
{
    write_req_t *w;
    uv_buf_t bufs[2];

    if (tn == 0) {
        free(tail);
        tail = NULL;
    }
    if (n == 0 && tail == NULL) {
        free(data);
        return 0;
    }
    w = malloc(sizeof(*w));
    if (w == NULL) {
        free(data);
        free(tail);
        return -1;
    }
    w->conn = c;
    w->data = data;
    w->tail = tail;
    bufs[0] = uv_buf_init(data, (unsigned)n);
    bufs[1] = uv_buf_init(tail, (unsigned)tn);
    if (uv_write(&w->req, (uv_stream_t *)&c->tcp, bufs, tail != NULL ? 2 : 1, on_write) != 0) {
        free(data);
        free(tail);
        free(w);
        return -1;
    }
    if (c->writes_pending++ == 0) {
        c->write_prog_ms = uv_now(c->srv->loop);
        conn_arm(c); /* the peer must now read within write_timeout */
    }
    if (uv_stream_get_write_queue_size((uv_stream_t *)&c->tcp) > WRITE_HIGH_WATER && c->reading) {
        uv_read_stop((uv_stream_t *)&c->tcp);
        c->reading = false;
        c->read_paused = true;
    }
    return 0;
}

/* Queue `n` bytes (ownership of `data` passes here) for the socket. */
static int raw_write(conn_t *c, char *data, size_t n)
{
    return raw_write2(c, data, n, NULL, 0);
}

/* Move whatever TLS produced (handshake records, encrypted data) to the socket. */
static int flush_tls(conn_t *c)
{
    int pending = BIO_ctrl_pending(c->wbio) > 0 ? (int)BIO_ctrl_pending(c->wbio) : 0;
    char *data;

    if (pending <= 0)
        return 0;
    data = malloc((size_t)pending);
    if (data == NULL)
        return -1;
    if (BIO_read(c->wbio, data, pending) != pending) {
        free(data);
        return -1;
    }
    return raw_write(c, data, (size_t)pending);
}

/* Send application bytes (copied). */
static int send_bytes(conn_t *c, const char *p, size_t n)
{
    if (c->ssl == NULL) {
        char *copy = malloc(n ? n : 1);
        if (copy == NULL)
            return -1;
        memcpy(copy, p, n);
        return raw_write(c, copy, n);
    }
    while (n > 0) {
        int chunk = n > (size_t)INT32_MAX ? INT32_MAX : (int)n;
        int wrote = SSL_write(c->ssl, p, chunk);
        if (wrote <= 0)
            return -1;
        p += wrote;
        n -= (size_t)wrote;
    }
    return flush_tls(c);
}

static const char *status_text(int status)
{
    switch (status) {
    case 200:
        return "OK";
    case 201:
        return "Created";
    case 204:
        return "No Content";
    case 400:
        return "Bad Request";
    case 403:
        return "Forbidden";
    case 404:
        return "Not Found";
    case 405:
        return "Method Not Allowed";
    case 408:
        return "Request Timeout";
    case 413:
        return "Payload Too Large";
    case 415:
        return "Unsupported Media Type";
    case 422:
        return "Unprocessable Entity";
    case 431:
        return "Request Header Fields Too Large";
    case 500:
        return "Internal Server Error";
    case 503:
        return "Service Unavailable";
    default:
        return "Unknown";
    }
}

/* Answer `status` with `body`. `owned` is NULL, or `body` itself handed over (freed here or
 * once written): a plain connection then writes it as it is, so a large answer (a /metrics
 * exposition of megabytes) is never copied. */
static int send_response(conn_t *c, int status, const char *content_type, const char *body,
                         size_t body_len, char *owned, bool close_after)
{
    char head[512];
    int n = snprintf(head, sizeof(head),
                     "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n%s\r\n", status,
                     status_text(status), content_type, body_len,
                     close_after ? "Connection: close\r\n" : "");
    size_t total;
    char *all;
    int rc;

    if (n < 0 || (size_t)n >= sizeof(head)) {
        free(owned);
        return -1;
    }
    /* One write per answer: head and body together (a pipelining client costs one write
     * request per answer, not two). */
    total = (size_t)n + (owned != NULL && c->ssl == NULL ? 0 : body_len);
    all = malloc(total);
    if (all == NULL) {
        free(owned);
        return -1;
    }
    memcpy(all, head, (size_t)n);
    if (owned != NULL && c->ssl == NULL)
        return raw_write2(c, all, total, owned, body_len);
    if (body_len > 0)
        memcpy(all + n, body, body_len);
    free(owned);
    if (c->ssl == NULL)
        return raw_write(c, all, total);
    rc = send_bytes(c, all, total);
    free(all);
    return rc;
}

/* Answer with a server-side error and close once it has been written. */
static void conn_fail(conn_t *c, int status, const char *reason)
{
    char body[256];
    int n;

    if (c->closing)
        return;
    c->srv->stats.errors_4xx++;
    if (status == 503)
        c->srv->stats.busy_503++;
    n = snprintf(body, sizeof(body), "%s\n", reason);
    c->closing = true;
    if (c->reading) {
        uv_read_stop((uv_stream_t *)&c->tcp);
        c->reading = false;
    }
    if (send_response(c, status, "text/plain; charset=utf-8", body, (size_t)n, NULL, true) != 0 ||
        c->writes_pending == 0) {
        conn_close(c);
        return;
    }
    conn_arm(c); /* closing with output pending: write_timeout */
}

/* ---- HTTP parsing -------------------------------------------------------------------------- */

/* ---- timers -------------------------------------------------------------------------------- */

typedef enum { DUE_NONE, DUE_WRITE, DUE_REQUEST, DUE_IDLE } due_t;

/* The earliest deadline of c's state and what it is for. */
static due_t conn_due(const conn_t *c, uint64_t *at)
{
    const hook_server_config_t *cfg = &c->srv->cfg;
    due_t what = DUE_NONE;
    uint64_t t = UINT64_MAX, d;

    if (c->writes_pending > 0) {
        t = c->write_prog_ms + cfg->write_timeout_ms;
        what = DUE_WRITE;
    }
    if (!c->closing && c->deferred != NULL) {
        /* a deferred answer is bounded by the request's own timeout */
        d = c->req_start_ms + cfg->request_timeout_ms;
        if (d < t) {
            t = d;
            what = DUE_REQUEST;
        }
    } else if (!c->closing) {
        if (c->in_request || c->served == 0) {
            /* a request under way, or the first one (and the TLS handshake) awaited */
            uint64_t start = c->in_request ? c->req_start_ms : c->activity_ms;
            d = start + cfg->request_timeout_ms;
            if (!c->headers_done && start + cfg->header_timeout_ms < d)
                d = start + cfg->header_timeout_ms;
            if (d < t) {
                t = d;
                what = DUE_REQUEST;
            }
        } else if (c->writes_pending == 0) {
            d = c->activity_ms + cfg->idle_timeout_ms;
            if (d < t) {
                t = d;
                what = DUE_IDLE;
            }
        }
    }
    *at = t;
    return what;
}

static void on_timer(uv_timer_t *t);

static void conn_arm(conn_t *c)
{
    uint64_t at, now = uv_now(c->srv->loop);

    if (uv_is_closing((uv_handle_t *)&c->timer))
        return;
    if (conn_due(c, &at) == DUE_NONE) {
        uv_timer_stop(&c->timer);
        return;
    }
    uv_timer_start(&c->timer, on_timer, at > now ? at - now : 0, 0);
}

static void on_timer(uv_timer_t *t)
{
    conn_t *c = container_of(t, conn_t, timer);
    hook_server_t *srv = c->srv;
    uint64_t at;
    due_t what = conn_due(c, &at);

    if (what == DUE_NONE || at > uv_now(srv->loop)) {
        conn_arm(c); /* the state moved on since the timer was set */
        return;
    }
    switch (what) {
    case DUE_WRITE: /* the peer does not read what it asked for */
        srv->stats.timeouts++;
        srv->stats.write_timeouts++;
        conn_close(c);
        return;
    case DUE_REQUEST:
        srv->stats.timeouts++;
        if (c->deferred != NULL) {
            c->deferred->conn = NULL; /* its late answer only frees it */
            c->deferred = NULL;
            srv->stats.deferred_timeouts++;
            conn_fail(c, 503, "the answer was not ready in time; retry");
            return;
        }
        conn_fail(c, 408,
                  c->headers_done || !c->in_request ? "request not received in time"
                                                    : "request headers not received in time");
        return;
    default:
        conn_close(c); /* idle keep-alive connection */
        return;
    }
}

static int count_header_bytes(conn_t *c, size_t n)
{
    c->header_bytes += n;
    if (c->header_bytes > c->srv->cfg.max_header_bytes) {
        c->fail_status = 431;
        c->fail_reason = "request headers too large";
        return -1;
    }
    return 0;
}

static int commit_header(conn_t *c)
{
    if (c->field.len == 0)
        return 0;
    if (c->nheaders < HOOK_MAX_HEADERS) {
        char *name = strdup(c->field.p);
        char *value;
        size_t vlen = c->value.len;
        const char *v = c->value.p ? c->value.p : "";

        while (vlen > 0 && (v[vlen - 1] == ' ' || v[vlen - 1] == '\t'))
            vlen--;
        while (vlen > 0 && (*v == ' ' || *v == '\t')) {
            v++;
            vlen--;
        }
        value = strndup(v, vlen);
        if (name == NULL || value == NULL) {
            free(name);
            free(value);
            return -1;
        }
        for (char *p = name; *p; p++)
            *p = (char)tolower((unsigned char)*p);
        c->hnames[c->nheaders] = name;
        c->hvalues[c->nheaders] = value;
        c->nheaders++;
    }
    sbuf_reset(&c->field);
    sbuf_reset(&c->value);
    return 0;
}

/* body_reserve() for a parser callback: over the budget answers 503. */
static int body_budget(conn_t *c, size_t need, bool exact)
{
    int rc = body_reserve(c, need, exact);

    if (rc == -2) {
        c->fail_status = 503;
        c->fail_reason = "server busy: request bodies in flight exceed the server's memory "
                         "budget; retry";
    }
    return rc == 0 ? 0 : -1;
}

static int on_message_begin(http_parser *p)
{
    conn_t *c = p->data;

    request_reset(c);
    c->in_request = true;
    c->headers_done = false;
    c->req_start_ms = uv_now(c->srv->loop);
    conn_arm(c);
    return 0;
}

static int on_url(http_parser *p, const char *at, size_t n)
{
    conn_t *c = p->data;

    if (count_header_bytes(c, n) != 0)
        return -1;
    return sbuf_append(&c->url, at, n);
}

static int on_header_field(http_parser *p, const char *at, size_t n)
{
    conn_t *c = p->data;

    if (count_header_bytes(c, n) != 0)
        return -1;
    if (c->last_was_value) {
        if (commit_header(c) != 0)
            return -1;
        c->last_was_value = false;
    }
    return sbuf_append(&c->field, at, n);
}

static int on_header_value(http_parser *p, const char *at, size_t n)
{
    conn_t *c = p->data;

    if (count_header_bytes(c, n) != 0)
        return -1;
    c->last_was_value = true;
    return sbuf_append(&c->value, at, n);
}

static int on_headers_complete(http_parser *p)
{
    conn_t *c = p->data;

    if (commit_header(c) != 0)
        return -1;
    c->headers_done = true;
    if ((p->flags & F_CONTENTLENGTH) && p->content_length != ULLONG_MAX &&
        p->content_length > c->srv->cfg.max_body_bytes) {
        c->fail_status = 413;
        c->fail_reason = "request body too large";
        return -1;
    }
    if ((p->flags & F_CONTENTLENGTH) && p->content_length > 0)
        return body_budget(c, (size_t)p->content_length + 1, true);
    return 0;
}

static int on_body(http_parser *p, const char *at, size_t n)
{
    conn_t *c = p->data;

    if (c->body.len + n > c->srv->cfg.max_body_bytes) {
        c->fail_status = 413;
        c->fail_reason = "request body too large";
        return -1;
    }
    if (body_budget(c, c->body.len + n + 1, false) != 0)
        return -1;
    memcpy(c->body.p + c->body.len, at, n);
    c->body.len += n;
    c->body.p[c->body.len] = '\0';
    return 0;
}

static int on_message_complete(http_parser *p)
{
    conn_t *c = p->data;
    hook_server_t *srv = c->srv;
    hook_request_t req;
    hook_response_t resp;
    bool keep_alive = http_should_keep_alive(p) != 0;
    char *query;
    int rc;

    memset(&req, 0, sizeof(req));
    memset(&resp, 0, sizeof(resp));
    if (c->url.p == NULL && sbuf_append(&c->url, "", 0) != 0)
        return -1;
    query = strchr(c->url.p, '?');
    if (query != NULL)
        *query++ = '\0';
    req.method = http_method_str((enum http_method)p->method);
    req.path = c->url.p;
    req.query = query ? query : "";
    for (size_t i = 0; i < c->nheaders; i++) {
        req.headers[i].name = c->hnames[i];
        req.headers[i].value = c->hvalues[i];
    }
    req.nheaders = c->nheaders;
    req.body = c->body.p ? c->body.p : "";
    req.body_len = c->body.len;
    req.peer = c->peer;
    req.client_cn = c->client_cn;
    req.internal_ = c;
    resp.status = 200;
    resp.content_type = "application/json";

    srv->stats.requests++;
    srv->cfg.handler(srv->cfg.ud, &req, &resp);

    if (c->deferred != NULL) {
        /* Answered later: read and parse nothing more until then (hook_deferred_answer). */
        srv->stats.deferred++;
        c->deferred->close_after = !keep_alive || srv->closing;
        free(resp.owned_body);
        request_reset(c);
        c->in_request = false;
        http_parser_pause(p, 1);
        c->parse_paused = true;
        c->read_paused = true;
        if (c->reading) {
            uv_read_stop((uv_stream_t *)&c->tcp);
            c->reading = false;
        }
        conn_arm(c);
        return 0;
    }
    c->in_request = false;
    c->served++;
    c->activity_ms = uv_now(srv->loop);
    if (!keep_alive || srv->closing)
        c->closing = true;
    rc = send_response(c, resp.status, resp.content_type ? resp.content_type : "application/json",
                       resp.owned_body ? resp.owned_body : resp.body, resp.body_len,
                       resp.owned_body, c->closing);
    request_reset(c);
    if (rc != 0)
        return -1;
    if (c->closing) {
        if (c->reading) {
            uv_read_stop((uv_stream_t *)&c->tcp);
            c->reading = false;
        }
        http_parser_pause(p, 1); /* ignore anything pipelined after a closing request */
    } else if (uv_stream_get_write_queue_size((uv_stream_t *)&c->tcp) > WRITE_HIGH_WATER ||
               c->writes_pending >= PIPELINE_MAX) {
        /* A client pipelining requests without reading the answers: parse no further (the
         * rest of this read waits in `held`) until its output drains, or write_timeout. The
         * count also takes turns between pipelining clients: at most PIPELINE_MAX answers per
         * connection per loop turn (answers written at once complete on the next turn), so
         * 256 clients with 2048 requests each in their socket buffers cannot keep one
         * legitimate request waiting behind half a million. */
        http_parser_pause(p, 1);
        c->parse_paused = true;
        c->read_paused = true;
        if (c->reading) {
            uv_read_stop((uv_stream_t *)&c->tcp);
            c->reading = false;
        }
    }
    conn_arm(c);
    return 0;
}

static const http_parser_settings parser_settings = {
    .on_message_begin = on_message_begin,
    .on_url = on_url,
    .on_header_field = on_header_field,
    .on_header_value = on_header_value,
    .on_headers_complete = on_headers_complete,
    .on_body = on_body,
    .on_message_complete = on_message_complete,
};

/* Feed plaintext HTTP bytes to the parser; errors answer 4xx. */
static void feed_http(conn_t *c, const char *data, size_t n)
{
    size_t done;

    if (c->closing)
        return;
    done = http_parser_execute(&c->parser, &parser_settings, data, n);
    if (c->closing)
        return; /* answered and closing: the rest is ignored */
    if (c->parse_paused && HTTP_PARSER_ERRNO(&c->parser) == HPE_PAUSED) {
        if (sbuf_append(&c->held, data + done, n - done) != 0)
            conn_close(c);
        return;
    }
    if (HTTP_PARSER_ERRNO(&c->parser) != HPE_OK || done != n) {
        char reason[160];
        if (c->fail_status) {
            conn_fail(c, c->fail_status, c->fail_reason);
            return;
        }
        snprintf(reason, sizeof(reason), "malformed HTTP request: %s",
                 http_errno_description(HTTP_PARSER_ERRNO(&c->parser)));
        conn_fail(c, 400, reason);
    }
}

/* ---- input --------------------------------------------------------------------------------- */

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    (void)h;
    (void)suggested;
    buf->base = malloc(READ_CHUNK);
    buf->len = buf->base ? READ_CHUNK : 0;
}

/* After the handshake: the common name of the client certificate OpenSSL verified, if any. */
static void peer_cn(conn_t *c)
{
    X509 *cert = SSL_get1_peer_certificate(c->ssl);

    c->client_cn[0] = '\0';
    if (cert != NULL && SSL_get_verify_result(c->ssl) == X509_V_OK) {
        int len = X509_NAME_get_text_by_NID(X509_get_subject_name(cert), NID_commonName,
                                            c->client_cn, (int)sizeof(c->client_cn));
        if (len < 0 || (size_t)len >= sizeof(c->client_cn) ||
            memchr(c->client_cn, '\0', (size_t)len) != NULL)
            c->client_cn[0] = '\0'; /* absent, too long, or with a NUL inside: none */
    }
    X509_free(cert);
}

static void feed_tls(conn_t *c, const char *data, size_t n)
{
    char plain[READ_CHUNK];

    if (n > 0 && BIO_write(c->rbio, data, (int)n) != (int)n) {
        conn_close(c);
        return;
    }
    if (!SSL_is_init_finished(c->ssl)) {
        int r = SSL_do_handshake(c->ssl);
        if (r != 1) {
            int e = SSL_get_error(c->ssl, r);
            flush_tls(c); /* an alert, or the next handshake flight */
            if (e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE) {
                c->srv->stats.tls_failures++;
                ERR_clear_error();
                c->closing = true;
                if (c->writes_pending == 0)
                    conn_close(c);
            }
            return;
        }
        if (flush_tls(c) != 0) {
            conn_close(c);
            return;
        }
        peer_cn(c);
    }
    while (!c->closing && !c->parse_paused) {
        int got = SSL_read(c->ssl, plain, sizeof(plain));
        if (got <= 0) {
            int e = SSL_get_error(c->ssl, got);
            if (e == SSL_ERROR_WANT_READ)
                break;
            ERR_clear_error();
            /* close_notify or a protocol error: nothing more can be read */
            flush_tls(c);
            c->closing = true;
            if (c->writes_pending == 0)
                conn_close(c);
            return;
        }
        feed_http(c, plain, (size_t)got);
    }
}

static void on_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf)
{
    conn_t *c = container_of((uv_tcp_t *)s, conn_t, tcp);

    if (nread < 0) {
        /* EOF or error: a half-sent request cannot be answered, so just close */
        free(buf->base);
        conn_close(c);
        return;
    }
    if (nread > 0 && !c->closing) {
        if (c->ssl != NULL)
            feed_tls(c, buf->base, (size_t)nread);
        else
            feed_http(c, buf->base, (size_t)nread);
    }
    free(buf->base);
}

/* Output drained: parse what was held back, then (TLS) what OpenSSL still holds. */
static void conn_unpause(conn_t *c)
{
    sbuf_t held = c->held;

    memset(&c->held, 0, sizeof(c->held));
    c->parse_paused = false;
    http_parser_pause(&c->parser, 0);
    if (held.len > 0)
        feed_http(c, held.p, held.len);
    sbuf_free(&held);
    if (c->ssl != NULL && !c->parse_paused && !c->closing)
        feed_tls(c, NULL, 0);
}

static void conn_resume(conn_t *c)
{
    if (c->closing || c->reading)
        return;
    if (uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read) == 0)
        c->reading = true;
}

/* ---- connection lifecycle ------------------------------------------------------------------- */

static void on_conn_handle_closed(uv_handle_t *h)
{
    conn_t *c = h->data;
    hook_server_t *srv = c->srv;

    if (--c->handles_open > 0)
        return;
    request_reset(c); /* releases the body's budget */
    sbuf_free(&c->url);
    sbuf_free(&c->field);
    sbuf_free(&c->value);
    sbuf_free(&c->held);
    SSL_free(c->ssl);
    free(c);
    srv->live--;
    server_maybe_done(srv);
}

static void conn_unlink(conn_t *c)
{
    hook_server_t *srv = c->srv;

    if (c->prev)
        c->prev->next = c->next;
    else
        srv->conns = c->next;
    if (c->next)
        c->next->prev = c->prev;
    c->prev = c->next = NULL;
    srv->stats.open_connections--;
}

/* Close c's handles; `reset`: with a TCP RST (a refusal the client sees at once). */
static void conn_close_how(conn_t *c, bool reset)
{
    if (uv_is_closing((uv_handle_t *)&c->tcp))
        return;
    c->closing = true;
    if (c->deferred != NULL) {
        c->deferred->conn = NULL; /* the owner's answer only frees it */
        c->deferred = NULL;
    }
    conn_unlink(c);
    if (!reset || uv_tcp_close_reset(&c->tcp, on_conn_handle_closed) != 0)
        uv_close((uv_handle_t *)&c->tcp, on_conn_handle_closed);
    uv_close((uv_handle_t *)&c->timer, on_conn_handle_closed);
}

static void conn_close(conn_t *c)
{
    conn_close_how(c, false);
}

static void peer_name(uv_tcp_t *tcp, char *ip, size_t ipcap, char *out, size_t cap)
{
    struct sockaddr_storage ss;
    int len = sizeof(ss);
    int port = 0;

    snprintf(ip, ipcap, "?");
    if (uv_tcp_getpeername(tcp, (struct sockaddr *)&ss, &len) == 0) {
        if (ss.ss_family == AF_INET) {
            struct sockaddr_in *a = (struct sockaddr_in *)&ss;
            uv_ip4_name(a, ip, ipcap);
            port = ntohs(a->sin_port);
        } else if (ss.ss_family == AF_INET6) {
            struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;
            uv_ip6_name(a, ip, ipcap);
            port = ntohs(a->sin6_port);
        }
    }
    snprintf(out, cap, "%s:%d", ip, port);
}

/* Make room for `c` (just accepted, already linked) under the connection limits: close the
 * longest-idle connection of the same client (over its limit) or of anyone (over the total).
 * False when nothing idle can go: `c` is refused. An idle connection is one between requests
 * (or not yet sent anything) with no output pending; one mid-request is never cut. */
static bool make_room(hook_server_t *srv, conn_t *c)
{
    size_t same = 0;
    conn_t *victim = NULL;
    bool per_client;

    for (conn_t *o = srv->conns; o != NULL; o = o->next)
        if (strcmp(o->ip, c->ip) == 0)
            same++;
    per_client = same > srv->cfg.max_connections_per_client;
    if (!per_client && srv->stats.open_connections <= srv->cfg.max_connections)
        return true;
    for (conn_t *o = srv->conns; o != NULL; o = o->next) {
        if (o == c || o->closing || o->in_request || o->writes_pending > 0 || o->deferred != NULL)
            continue; /* a deferred answer is a request under way too */
        if (per_client && strcmp(o->ip, c->ip) != 0)
            continue;
        if (victim == NULL || o->activity_ms < victim->activity_ms)
            victim = o;
    }
    if (victim == NULL)
        return false;
    srv->stats.evicted_idle++;
    conn_close(victim);
    return true;
}

static void on_lone_tcp_closed(uv_handle_t *h)
{
    free(container_of((uv_tcp_t *)h, conn_t, tcp));
}

/* Accept one pending connection. 0 when it was accepted or refused; -1 when it could not be
 * allocated: it stays pending (libuv stops polling the listener until uv_accept). */
static int accept_one(hook_server_t *srv)
{
    uv_stream_t *listener = (uv_stream_t *)&srv->listener;
    conn_t *c;

    if (srv->fail_accepts > 0) {
        srv->fail_accepts--;
        return -1;
    }
    c = calloc(1, sizeof(*c));
    if (c == NULL)
        return -1;
    c->srv = srv;
    if (uv_tcp_init(srv->loop, &c->tcp) != 0) {
        free(c);
        return -1;
    }
    if (uv_timer_init(srv->loop, &c->timer) != 0) {
        uv_close((uv_handle_t *)&c->tcp, on_lone_tcp_closed);
        return -1;
    }
    srv->live++;
    c->tcp.data = c;
    c->timer.data = c;
    c->handles_open = 2;
    /* from here on the handles own `c`: link it so that conn_close can release it */
    c->next = srv->conns;
    if (srv->conns)
        srv->conns->prev = c;
    srv->conns = c;
    srv->stats.open_connections++;
    if (uv_accept(listener, (uv_stream_t *)&c->tcp) != 0) {
        conn_close(c); /* nothing was pending after all */
        return 0;
    }
    srv->stats.accepted++;
    c->activity_ms = uv_now(srv->loop);
    peer_name(&c->tcp, c->ip, sizeof(c->ip), c->peer, sizeof(c->peer));
    if (!make_room(srv, c)) {
        srv->stats.rejected_connections++;
        conn_close_how(c, true); /* reset at once: the client sees the refusal, not a hang */
        return 0;
    }
    uv_tcp_nodelay(&c->tcp, 1);
    {
        /* The kernel's send buffer is charged to the pod's memory cgroup too, and autotuning
         * grows it to megabytes for a peer that does not read: fix it (the kernel doubles
         * this). Answers are kilobytes; a larger one just takes more round trips. */
        int sndbuf = SOCKET_SNDBUF;
        uv_send_buffer_size((uv_handle_t *)&c->tcp, &sndbuf);
    }
    http_parser_init(&c->parser, HTTP_REQUEST);
    c->parser.data = c;
    if (srv->cfg.tls != NULL) {
        SSL_CTX *ctx = hook_tls_ctx(srv->cfg.tls);
        c->ssl = SSL_new(ctx);
        SSL_CTX_free(ctx); /* the SSL holds its own reference */
        c->rbio = BIO_new(BIO_s_mem());
        c->wbio = BIO_new(BIO_s_mem());
        if (c->ssl == NULL || c->rbio == NULL || c->wbio == NULL) {
            BIO_free(c->rbio);
            BIO_free(c->wbio);
            c->rbio = c->wbio = NULL;
            conn_close(c);
            return 0;
        }
        SSL_set_bio(c->ssl, c->rbio, c->wbio);
        SSL_set_accept_state(c->ssl);
    }
    /* The first request's headers (and the TLS handshake) must arrive within header_timeout. */
    conn_arm(c);
    conn_resume(c);
    if (!c->reading)
        conn_close(c);
    return 0;
}

static void on_accept_retry(uv_timer_t *t);

/* Accept what is pending; on an allocation failure retry later, with backoff, and say so
 * (hook_server_accepting), instead of leaving the listener unpolled forever. */
static void accept_pending(hook_server_t *srv)
{
    if (srv->closing)
        return;
    if (accept_one(srv) == 0) {
        srv->accept_stalled = false;
        srv->accept_backoff_ms = 0;
        return;
    }
    srv->stats.accept_failures++;
    srv->accept_stalled = true;
    srv->accept_backoff_ms =
        srv->accept_backoff_ms == 0 ? ACCEPT_RETRY_MIN : srv->accept_backoff_ms * 2;
    if (srv->accept_backoff_ms > ACCEPT_RETRY_MAX)
        srv->accept_backoff_ms = ACCEPT_RETRY_MAX;
    uv_timer_start(&srv->accept_retry, on_accept_retry, srv->accept_backoff_ms, 0);
}

static void on_accept_retry(uv_timer_t *t)
{
    accept_pending(container_of(t, hook_server_t, accept_retry));
}

static void on_connection(uv_stream_t *listener, int status)
{
    hook_server_t *srv = container_of((uv_tcp_t *)listener, hook_server_t, listener);

    if (status < 0 || srv->accept_stalled)
        return; /* EMFILE and the like: libuv's reserve-fd trick already refused it */
    accept_pending(srv);
}

/* ---- deferred answers ----------------------------------------------------------------------- */

hook_deferred_t *hook_request_defer(const hook_request_t *req)
{
    conn_t *c = req->internal_;
    hook_deferred_t *d;

    if (c == NULL || c->deferred != NULL || c->closing)
        return NULL;
    d = calloc(1, sizeof(*d));
    if (d == NULL)
        return NULL;
    d->conn = c;
    c->deferred = d;
    return d;
}

void hook_deferred_answer(hook_deferred_t *d, const hook_response_t *resp)
{
    conn_t *c = d->conn;
    int rc;

    if (c == NULL || c->deferred != d) {
        free(resp->owned_body);
        free(d);
        return;
    }
    c->deferred = NULL;
    c->served++;
    c->activity_ms = uv_now(c->srv->loop);
    if (d->close_after || c->srv->closing)
        c->closing = true;
    free(d);
    rc = send_response(c, resp->status ? resp->status : 200,
                       resp->content_type ? resp->content_type : "application/json",
                       resp->owned_body ? resp->owned_body : resp->body, resp->body_len,
                       resp->owned_body, c->closing);
    if (rc != 0 || (c->closing && c->writes_pending == 0)) {
        conn_close(c);
        return;
    }
    if (c->closing) {
        conn_arm(c); /* closing with output pending: write_timeout */
        return;
    }
    /* Parse what was pipelined meanwhile (it may defer again), then read on. */
    c->read_paused = false;
    conn_unpause(c);
    if (!c->read_paused && !c->parse_paused)
        conn_resume(c);
    if (!uv_is_closing((uv_handle_t *)&c->timer))
        conn_arm(c);
}

/* ---- server ------------------------------------------------------------------------------- */

static void on_retry_closed(uv_handle_t *h);

err_t hook_server_start(uv_loop_t *loop, const hook_server_config_t *cfg, hook_server_t **out,
                        err_msg_t *msg)
{
    hook_server_t *srv;
    struct sockaddr_storage addr;
    struct sockaddr_storage bound;
    int len = sizeof(bound);
    int r;

    if (cfg->handler == NULL)
        return err_set(msg, ERR_INVALID, "hook server needs a handler");
    if (uv_ip4_addr(cfg->host, cfg->port, (struct sockaddr_in *)&addr) != 0 &&
        uv_ip6_addr(cfg->host, cfg->port, (struct sockaddr_in6 *)&addr) != 0)
        return err_set(msg, ERR_INVALID, "invalid listen address \"%s\"", cfg->host);
    srv = calloc(1, sizeof(*srv));
    if (srv == NULL)
        return err_set(msg, ERR_NOMEM, "out of memory");
    srv->loop = loop;
    srv->cfg = *cfg;
    if (srv->cfg.max_header_bytes == 0)
        srv->cfg.max_header_bytes = HOOK_SERVER_DEFAULT_MAX_HEADER_BYTES;
    if (srv->cfg.max_body_bytes == 0)
        srv->cfg.max_body_bytes = HOOK_SERVER_DEFAULT_MAX_BODY_BYTES;
    if (srv->cfg.max_connections == 0)
        srv->cfg.max_connections = HOOK_SERVER_DEFAULT_MAX_CONNECTIONS;
    if (srv->cfg.max_connections_per_client == 0)
        srv->cfg.max_connections_per_client = HOOK_SERVER_DEFAULT_MAX_CONNECTIONS_PER_CLIENT;
    if (srv->cfg.max_buffered_bytes == 0)
        srv->cfg.max_buffered_bytes = HOOK_SERVER_DEFAULT_MAX_BUFFERED_BYTES;
    if (srv->cfg.header_timeout_ms == 0)
        srv->cfg.header_timeout_ms = HOOK_SERVER_DEFAULT_HEADER_TIMEOUT_MS;
    if (srv->cfg.request_timeout_ms == 0)
        srv->cfg.request_timeout_ms = HOOK_SERVER_DEFAULT_REQUEST_TIMEOUT_MS;
    if (srv->cfg.idle_timeout_ms == 0)
        srv->cfg.idle_timeout_ms = HOOK_SERVER_DEFAULT_IDLE_TIMEOUT_MS;
    if (srv->cfg.write_timeout_ms == 0)
        srv->cfg.write_timeout_ms = HOOK_SERVER_DEFAULT_WRITE_TIMEOUT_MS;
    r = uv_tcp_init(loop, &srv->listener);
    if (r != 0) {
        free(srv);
        return err_set(msg, ERR_IO, "listen: %s", uv_strerror(r));
    }
    uv_timer_init(loop, &srv->accept_retry); /* cannot fail */
    r = uv_tcp_bind(&srv->listener, (const struct sockaddr *)&addr, 0);
    if (r == 0)
        r = uv_listen((uv_stream_t *)&srv->listener, 511, on_connection);
    if (r == 0)
        r = uv_tcp_getsockname(&srv->listener, (struct sockaddr *)&bound, &len);
    if (r != 0) {
        err_set(msg, ERR_IO, "listen on %s:%d: %s", cfg->host, cfg->port, uv_strerror(r));
        srv->closing = true;
        uv_close((uv_handle_t *)&srv->listener, on_listener_closed);
        uv_close((uv_handle_t *)&srv->accept_retry, on_retry_closed);
        return ERR_IO;
    }
    srv->port = bound.ss_family == AF_INET6 ? ntohs(((struct sockaddr_in6 *)&bound)->sin6_port)
                                            : ntohs(((struct sockaddr_in *)&bound)->sin_port);
    *out = srv;
    return ERR_OK;
}

int hook_server_port(const hook_server_t *srv)
{
    return srv->port;
}

bool hook_server_accepting(const hook_server_t *srv)
{
    return srv == NULL || !srv->accept_stalled;
}

void hook_server__fail_accepts(hook_server_t *srv, unsigned n)
{
    srv->fail_accepts = n;
}

void hook_server_stats(const hook_server_t *srv, hook_server_stats_t *out)
{
    *out = srv->stats;
}

static void server_maybe_done(hook_server_t *srv)
{
    /* closing connections still hold handles that point back here: wait for the last one */
    if (!srv->closing || !srv->listener_closed || !srv->retry_closed || srv->live != 0)
        return;
    if (srv->on_closed)
        srv->on_closed(srv->on_closed_ud);
    free(srv);
}

static void on_listener_closed(uv_handle_t *h)
{
    hook_server_t *srv = container_of((uv_tcp_t *)h, hook_server_t, listener);

    srv->listener_closed = true;
    server_maybe_done(srv);
}

static void on_retry_closed(uv_handle_t *h)
{
    hook_server_t *srv = container_of((uv_timer_t *)h, hook_server_t, accept_retry);

    srv->retry_closed = true;
    server_maybe_done(srv);
}

void hook_server_close(hook_server_t *srv, void (*on_closed)(void *ud), void *ud)
{
    if (srv == NULL || srv->closing)
        return;
    srv->closing = true;
    srv->on_closed = on_closed;
    srv->on_closed_ud = ud;
    uv_close((uv_handle_t *)&srv->listener, on_listener_closed);
    uv_close((uv_handle_t *)&srv->accept_retry, on_retry_closed);
    while (srv->conns != NULL)
        conn_close(srv->conns);
}
