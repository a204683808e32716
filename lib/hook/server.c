/* server -- an HTTP/1.1 server (optionally TLS) on the libuv loop for webhooks, metrics, health. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "hook/server.h"

#include "util/grow.h"
#include "util/util.h"

#include <ctype.h>
#include <http_parser.h>
#include <openssl/err.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * Data path of one connection:
 *
 *   socket --uv_read--> [TLS: rbio -> SSL_read] --> http_parser --> handler
 *   handler --> response text --> [TLS: SSL_write -> wbio] --uv_write--> socket
 *
 * TLS runs over memory BIOs so that libuv owns the socket and OpenSSL never blocks. Timers:
 * from the first byte of a request until it is complete the request timeout runs (slow
 * senders get 408); between requests the idle timeout runs (then the connection is closed
 * quietly). A connection in state CLOSING reads nothing more; it is closed once its last
 * write has completed.
 */

#define READ_CHUNK       16384
#define WRITE_HIGH_WATER (1u << 20) /* stop reading while this much output is queued */
#define WRITE_LOW_WATER  (256u << 10)

typedef struct sbuf_s {
    char *p;
    size_t len;
    size_t cap;
} sbuf_t;

typedef struct conn_s conn_t;

struct hook_server_s {
    uv_tcp_t listener;
    uv_loop_t *loop;
    hook_server_config_t cfg;
    hook_server_stats_t stats;
    conn_t *conns; /* doubly linked list of open connections */
    size_t live;   /* connections not yet freed (open, or closing handles) */
    int port;
    bool closing;
    bool listener_closed;
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
    sbuf_t body;
    sbuf_t field; /* header name being received */
    sbuf_t value; /* header value being received */
    char *hnames[HOOK_MAX_HEADERS];
    char *hvalues[HOOK_MAX_HEADERS];
    size_t nheaders;
    bool last_was_value;
    size_t header_bytes;
    bool in_request;
    bool closing;     /* no more input is processed; close after pending writes */
    bool reading;     /* uv_read_start active */
    bool read_paused; /* by write backpressure */
    int fail_status;  /* set by a parser callback to answer with this 4xx */
    const char *fail_reason;
    int handles_open; /* tcp + timer */
    size_t writes_pending;
    char peer[64];
};

typedef struct write_req_s {
    uv_write_t req;
    conn_t *conn;
    char *data; /* owned */
} write_req_t;

static void conn_close(conn_t *c);
static void conn_resume(conn_t *c);
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

static void request_reset(conn_t *c)
{
    sbuf_reset(&c->url);
    sbuf_reset(&c->body);
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
    if (c->read_paused &&
        uv_stream_get_write_queue_size((uv_stream_t *)&c->tcp) < WRITE_LOW_WATER) {
        c->read_paused = false;
        conn_resume(c);
    }
}

/* Queue `n` bytes (ownership of `data` passes here) for the socket. */
static int raw_write(conn_t *c, char *data, size_t n)
{
    write_req_t *w;
    uv_buf_t buf;

    if (n == 0) {
        free(data);
        return 0;
    }
    w = malloc(sizeof(*w));
    if (w == NULL) {
        free(data);
        return -1;
    }
    w->conn = c;
    w->data = data;
    buf = uv_buf_init(data, (unsigned)n);
    if (uv_write(&w->req, (uv_stream_t *)&c->tcp, &buf, 1, on_write) != 0) {
        free(data);
        free(w);
        return -1;
    }
    c->writes_pending++;
    if (uv_stream_get_write_queue_size((uv_stream_t *)&c->tcp) > WRITE_HIGH_WATER && c->reading) {
        uv_read_stop((uv_stream_t *)&c->tcp);
        c->reading = false;
        c->read_paused = true;
    }
    return 0;
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

static int send_response(conn_t *c, int status, const char *content_type, const char *body,
                         size_t body_len, bool close_after)
{
    char head[512];
    int n = snprintf(head, sizeof(head),
                     "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n%s\r\n", status,
                     status_text(status), content_type, body_len,
                     close_after ? "Connection: close\r\n" : "");

    if (n < 0 || (size_t)n >= sizeof(head))
        return -1;
    if (send_bytes(c, head, (size_t)n) != 0)
        return -1;
    if (body_len > 0 && send_bytes(c, body, body_len) != 0)
        return -1;
    return 0;
}

/* Answer with a server-side error and close once it has been written. */
static void conn_fail(conn_t *c, int status, const char *reason)
{
    char body[256];
    int n;

    if (c->closing)
        return;
    c->srv->stats.errors_4xx++;
    n = snprintf(body, sizeof(body), "%s\n", reason);
    c->closing = true;
    if (c->reading) {
        uv_read_stop((uv_stream_t *)&c->tcp);
        c->reading = false;
    }
    uv_timer_stop(&c->timer);
    if (send_response(c, status, "text/plain; charset=utf-8", body, (size_t)n, true) != 0 ||
        c->writes_pending == 0)
        conn_close(c);
}

/* ---- HTTP parsing -------------------------------------------------------------------------- */

static void on_timer(uv_timer_t *t)
{
    conn_t *c = container_of(t, conn_t, timer);

    if (c->in_request)
        conn_fail(c, 408, "request not received in time");
    else
        conn_close(c); /* idle keep-alive connection */
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

static int on_message_begin(http_parser *p)
{
    conn_t *c = p->data;

    request_reset(c);
    c->in_request = true;
    uv_timer_start(&c->timer, on_timer, c->srv->cfg.request_timeout_ms, 0);
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
    if ((p->flags & F_CONTENTLENGTH) && p->content_length != ULLONG_MAX &&
        p->content_length > c->srv->cfg.max_body_bytes) {
        c->fail_status = 413;
        c->fail_reason = "request body too large";
        return -1;
    }
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
    return sbuf_append(&c->body, at, n);
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
    if (c->body.p == NULL && sbuf_append(&c->body, "", 0) != 0)
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
    req.body = c->body.p;
    req.body_len = c->body.len;
    req.peer = c->peer;
    resp.status = 200;
    resp.content_type = "application/json";

    srv->stats.requests++;
    srv->cfg.handler(srv->cfg.ud, &req, &resp);

    c->in_request = false;
    if (!keep_alive || srv->closing)
        c->closing = true;
    rc = send_response(c, resp.status, resp.content_type ? resp.content_type : "application/json",
                       resp.owned_body ? resp.owned_body : resp.body, resp.body_len, c->closing);
    free(resp.owned_body);
    request_reset(c);
    if (rc != 0)
        return -1;
    if (c->closing) {
        if (c->reading) {
            uv_read_stop((uv_stream_t *)&c->tcp);
            c->reading = false;
        }
        uv_timer_stop(&c->timer);
        http_parser_pause(p, 1); /* ignore anything pipelined after a closing request */
    } else {
        uv_timer_start(&c->timer, on_timer, srv->cfg.idle_timeout_ms, 0);
    }
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

static void feed_tls(conn_t *c, const char *data, size_t n)
{
    char plain[READ_CHUNK];

    if (BIO_write(c->rbio, data, (int)n) != (int)n) {
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
    }
    while (!c->closing) {
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
    request_reset(c);
    sbuf_free(&c->url);
    sbuf_free(&c->body);
    sbuf_free(&c->field);
    sbuf_free(&c->value);
    SSL_free(c->ssl);
    free(c);
    srv->live--;
    server_maybe_done(srv);
}

static void conn_close(conn_t *c)
{
    hook_server_t *srv = c->srv;

    if (uv_is_closing((uv_handle_t *)&c->tcp))
        return;
    c->closing = true;
    if (c->prev)
        c->prev->next = c->next;
    else
        srv->conns = c->next;
    if (c->next)
        c->next->prev = c->prev;
    c->prev = c->next = NULL;
    srv->stats.open_connections--;
    uv_close((uv_handle_t *)&c->tcp, on_conn_handle_closed);
    uv_close((uv_handle_t *)&c->timer, on_conn_handle_closed);
}

static void on_rejected_closed(uv_handle_t *h)
{
    free(h);
}

static void peer_name(uv_tcp_t *tcp, char *out, size_t cap)
{
    struct sockaddr_storage ss;
    int len = sizeof(ss);
    char ip[48] = "?";
    int port = 0;

    if (uv_tcp_getpeername(tcp, (struct sockaddr *)&ss, &len) == 0) {
        if (ss.ss_family == AF_INET) {
            struct sockaddr_in *a = (struct sockaddr_in *)&ss;
            uv_ip4_name(a, ip, sizeof(ip));
            port = ntohs(a->sin_port);
        } else if (ss.ss_family == AF_INET6) {
            struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;
            uv_ip6_name(a, ip, sizeof(ip));
            port = ntohs(a->sin6_port);
        }
    }
    snprintf(out, cap, "%s:%d", ip, port);
}

static void on_connection(uv_stream_t *listener, int status)
{
    hook_server_t *srv = container_of((uv_tcp_t *)listener, hook_server_t, listener);
    conn_t *c;

    if (status < 0 || srv->closing)
        return;
    if (srv->stats.open_connections >= srv->cfg.max_connections) {
        uv_tcp_t *reject = malloc(sizeof(*reject));
        srv->stats.rejected_connections++;
        if (reject == NULL || uv_tcp_init(srv->loop, reject) != 0) {
            free(reject);
            return;
        }
        if (uv_accept(listener, (uv_stream_t *)reject) == 0) {
            /* reset at once: the client sees the refusal instead of a hang */
            uv_tcp_close_reset(reject, on_rejected_closed);
        } else {
            uv_close((uv_handle_t *)reject, on_rejected_closed);
        }
        return;
    }
    c = calloc(1, sizeof(*c));
    if (c == NULL)
        return;
    c->srv = srv;
    if (uv_tcp_init(srv->loop, &c->tcp) != 0) {
        free(c);
        return;
    }
    srv->live++;
    c->tcp.data = c;
    c->timer.data = c;
    c->handles_open = 1;
    if (uv_timer_init(srv->loop, &c->timer) == 0)
        c->handles_open = 2;
    /* from here on the handles own `c`: link it so that conn_close can release it */
    c->next = srv->conns;
    if (srv->conns)
        srv->conns->prev = c;
    srv->conns = c;
    srv->stats.open_connections++;
    srv->stats.accepted++;
    if (c->handles_open != 2 || uv_accept(listener, (uv_stream_t *)&c->tcp) != 0) {
        if (c->handles_open != 2) {
            /* only the tcp handle exists: close it alone */
            c->closing = true;
            if (c->prev)
                c->prev->next = c->next;
            else
                srv->conns = c->next;
            if (c->next)
                c->next->prev = c->prev;
            srv->stats.open_connections--;
            uv_close((uv_handle_t *)&c->tcp, on_conn_handle_closed);
            return;
        }
        conn_close(c);
        return;
    }
    uv_tcp_nodelay(&c->tcp, 1);
    peer_name(&c->tcp, c->peer, sizeof(c->peer));
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
            return;
        }
        SSL_set_bio(c->ssl, c->rbio, c->wbio);
        SSL_set_accept_state(c->ssl);
    }
    /* The first request must arrive within the request timeout (also covers the handshake). */
    c->in_request = true;
    uv_timer_start(&c->timer, on_timer, srv->cfg.request_timeout_ms, 0);
    conn_resume(c);
    if (!c->reading)
        conn_close(c);
}

/* ---- server ------------------------------------------------------------------------------- */

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
        srv->cfg.max_header_bytes = 16 * 1024;
    if (srv->cfg.max_body_bytes == 0)
        srv->cfg.max_body_bytes = 3 * 1024 * 1024;
    if (srv->cfg.max_connections == 0)
        srv->cfg.max_connections = 256;
    if (srv->cfg.request_timeout_ms == 0)
        srv->cfg.request_timeout_ms = 10000;
    if (srv->cfg.idle_timeout_ms == 0)
        srv->cfg.idle_timeout_ms = 90000;
    r = uv_tcp_init(loop, &srv->listener);
    if (r != 0) {
        free(srv);
        return err_set(msg, ERR_IO, "listen: %s", uv_strerror(r));
    }
    r = uv_tcp_bind(&srv->listener, (const struct sockaddr *)&addr, 0);
    if (r == 0)
        r = uv_listen((uv_stream_t *)&srv->listener, 128, on_connection);
    if (r == 0)
        r = uv_tcp_getsockname(&srv->listener, (struct sockaddr *)&bound, &len);
    if (r != 0) {
        err_set(msg, ERR_IO, "listen on %s:%d: %s", cfg->host, cfg->port, uv_strerror(r));
        srv->closing = true;
        uv_close((uv_handle_t *)&srv->listener, on_listener_closed);
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

void hook_server_stats(const hook_server_t *srv, hook_server_stats_t *out)
{
    *out = srv->stats;
}

static void server_maybe_done(hook_server_t *srv)
{
    /* closing connections still hold handles that point back here: wait for the last one */
    if (!srv->closing || !srv->listener_closed || srv->live != 0)
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

void hook_server_close(hook_server_t *srv, void (*on_closed)(void *ud), void *ud)
{
    if (srv == NULL || srv->closing)
        return;
    srv->closing = true;
    srv->on_closed = on_closed;
    srv->on_closed_ud = ud;
    uv_close((uv_handle_t *)&srv->listener, on_listener_closed);
    while (srv->conns != NULL)
        conn_close(srv->conns);
}
