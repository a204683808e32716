/* kube_testsrv -- a scripted HTTP/1.1 server on loopback for lib/kube unit tests. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "kube_testsrv.h"

#include "util/util.h"

#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

struct testsrv_conn_s {
    uv_tcp_t tcp;
    uv_shutdown_t sd;
    testsrv_t *srv;
    testsrv_conn_t *prev, *next;
    char *in;
    size_t in_len, in_cap;
    bool answered, closing;
    void (*on_end)(testsrv_conn_t *conn, void *data);
    void *end_data;
};

typedef struct wreq_s {
    uv_write_t w;
    char *buf;
} wreq_t;

static void on_conn_closed(uv_handle_t *h)
{
    testsrv_conn_t *c = container_of((uv_tcp_t *)h, testsrv_conn_t, tcp);

    free(c->in);
    free(c);
}

static void on_shutdown(uv_shutdown_t *sd, int status)
{
    testsrv_conn_t *c = container_of(sd, testsrv_conn_t, sd);

    (void)status;
    if (!uv_is_closing((uv_handle_t *)&c->tcp))
        uv_close((uv_handle_t *)&c->tcp, on_conn_closed);
}

/* Mark `c` as ending: unlink it and tell its owner (once). */
static void conn_unlink(testsrv_conn_t *c)
{
    void (*cb)(testsrv_conn_t *, void *) = c->on_end;

    c->closing = true;
    if (c->prev)
        c->prev->next = c->next;
    else
        c->srv->conns = c->next;
    if (c->next)
        c->next->prev = c->prev;
    c->on_end = NULL;
    if (cb != NULL)
        cb(c, c->end_data);
}

void testsrv_on_end(testsrv_conn_t *c, void (*cb)(testsrv_conn_t *conn, void *data), void *data)
{
    c->on_end = cb;
    c->end_data = data;
}

void testsrv_reset(testsrv_conn_t *c)
{
    if (c->closing)
        return;
    conn_unlink(c);
    if (uv_tcp_close_reset(&c->tcp, on_conn_closed) != 0)
        uv_close((uv_handle_t *)&c->tcp, on_conn_closed);
}

void testsrv_end(testsrv_conn_t *c)
{
    if (c->closing)
        return;
    conn_unlink(c);
    /* Shut down after the queued writes have gone out, then close. */
    if (uv_shutdown(&c->sd, (uv_stream_t *)&c->tcp, on_shutdown) != 0)
        uv_close((uv_handle_t *)&c->tcp, on_conn_closed);
}

static void on_written(uv_write_t *w, int status)
{
    wreq_t *wr = container_of(w, wreq_t, w);

    (void)status;
    free(wr->buf);
    free(wr);
}

void testsrv_send(testsrv_conn_t *c, const char *data, size_t len)
{
    wreq_t *wr;
    uv_buf_t b;

    if (c->closing)
        return;
    wr = malloc(sizeof(*wr));
    ck_assert_ptr_nonnull(wr);
    wr->buf = malloc(len ? len : 1);
    ck_assert_ptr_nonnull(wr->buf);
    memcpy(wr->buf, data, len);
    b = uv_buf_init(wr->buf, (unsigned)len);
    if (uv_write(&wr->w, (uv_stream_t *)&c->tcp, &b, 1, on_written) != 0) {
        /* The client is gone (a controller that closed the connection mid-answer, as
         * test_ctrl_oom's failed allocations make it do): nothing to answer. An assertion here
         * ran on the server thread and aborted the whole test (stride-8 run, stop 26). */
        free(wr->buf);
        free(wr);
    }
}

void testsrv_reply(testsrv_conn_t *c, int status, const char *extra_headers, const char *body)
{
    char head[1024];
    int n;

    n = snprintf(head, sizeof(head),
                 "HTTP/1.1 %d X\r\nContent-Type: application/json\r\nContent-Length: %zu\r\n"
                 "Connection: close\r\n%s\r\n",
                 status, strlen(body), extra_headers ? extra_headers : "");
    testsrv_send(c, head, (size_t)n);
    testsrv_send(c, body, strlen(body));
    testsrv_end(c);
}

void testsrv_stream_begin(testsrv_conn_t *c)
{
    static const char head[] =
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n";

    testsrv_send(c, head, sizeof(head) - 1);
}

bool testsrv_header(const testsrv_req_t *req, const char *name, char *buf, size_t n)
{
    size_t nl = strlen(name);

    for (const char *p = req->headers; p && *p;
         p = strstr(p, "\r\n") ? strstr(p, "\r\n") + 2 : NULL) {
        if (strncasecmp(p, name, nl) == 0 && p[nl] == ':') {
            const char *v = p + nl + 1, *e = strstr(v, "\r\n");
            size_t len;

            while (*v == ' ')
                v++;
            len = e ? (size_t)(e - v) : strlen(v);
            if (len >= n)
                len = n - 1;
            memcpy(buf, v, len);
            buf[len] = '\0';
            return true;
        }
    }
    return false;
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    (void)h;
    buf->base = malloc(suggested);
    buf->len = buf->base ? suggested : 0;
}

/* Parse one complete request from c->in, if there is one, and hand it to the handler. */
static void try_dispatch(testsrv_conn_t *c)
{
    char *end, *line_end, *sp1, *sp2, clen[32];
    testsrv_req_t req;
    size_t body_len = 0, head_len;

    if (c->answered || c->closing || c->in == NULL)
        return;
    c->in[c->in_len] = '\0';
    end = strstr(c->in, "\r\n\r\n");
    if (end == NULL)
        return;
    head_len = (size_t)(end - c->in) + 4;
    line_end = strstr(c->in, "\r\n");
    req.headers = line_end + 2;
    *end = '\0';
    req.method = c->in;
    req.body = NULL;
    req.body_len = 0;
    if (testsrv_header(&req, "Content-Length", clen, sizeof(clen)))
        body_len = (size_t)strtoul(clen, NULL, 10);
    if (c->in_len < head_len + body_len) {
        *end = '\r';
        return;
    }
    *line_end = '\0';
    sp1 = strchr(c->in, ' ');
    ck_assert_ptr_nonnull(sp1);
    *sp1 = '\0';
    req.target = sp1 + 1;
    sp2 = strchr(sp1 + 1, ' ');
    ck_assert_ptr_nonnull(sp2);
    *sp2 = '\0';
    req.body = c->in + head_len;
    req.body_len = body_len;
    c->answered = true;
    c->srv->requests++;
    c->srv->handler(c->srv, c, &req);
}

static void on_read(uv_stream_t *s, ssize_t n, const uv_buf_t *buf)
{
    testsrv_conn_t *c = container_of((uv_tcp_t *)s, testsrv_conn_t, tcp);

    if (n < 0) {
        free(buf->base);
        testsrv_end(c);
        return;
    }
    if (c->in_len + (size_t)n + 1 > c->in_cap) {
        c->in_cap = (c->in_len + (size_t)n + 1) * 2;
        c->in = realloc(c->in, c->in_cap);
        ck_assert_ptr_nonnull(c->in);
    }
    memcpy(c->in + c->in_len, buf->base, (size_t)n);
    c->in_len += (size_t)n;
    free(buf->base);
    try_dispatch(c);
}

static void on_connection(uv_stream_t *server, int status)
{
    testsrv_t *srv = container_of((uv_tcp_t *)server, testsrv_t, listener);
    testsrv_conn_t *c;

    ck_assert_int_eq(status, 0);
    c = calloc(1, sizeof(*c));
    ck_assert_ptr_nonnull(c);
    c->srv = srv;
    ck_assert_int_eq(uv_tcp_init(srv->loop, &c->tcp), 0);
    c->next = srv->conns;
    if (srv->conns)
        srv->conns->prev = c;
    srv->conns = c;
    ck_assert_int_eq(uv_accept(server, (uv_stream_t *)&c->tcp), 0);
    ck_assert_int_eq(uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read), 0);
}

void testsrv_start(testsrv_t *srv, uv_loop_t *loop, testsrv_handler handler, void *data)
{
    struct sockaddr_in addr;
    struct sockaddr_storage bound;
    int len = sizeof(bound);

    /* A client that hangs up before its answer is written must not kill the test with SIGPIPE
     * (libuv does not ignore it; kube_lease's saturation test met it under ASan in CI). */
    signal(SIGPIPE, SIG_IGN);

    memset(srv, 0, sizeof(*srv));
    srv->loop = loop;
    srv->handler = handler;
    srv->data = data;
    ck_assert_int_eq(uv_tcp_init(loop, &srv->listener), 0);
    ck_assert_int_eq(uv_ip4_addr("127.0.0.1", 0, &addr), 0);
    ck_assert_int_eq(uv_tcp_bind(&srv->listener, (const struct sockaddr *)&addr, 0), 0);
    ck_assert_int_eq(uv_listen((uv_stream_t *)&srv->listener, 64, on_connection), 0);
    ck_assert_int_eq(uv_tcp_getsockname(&srv->listener, (struct sockaddr *)&bound, &len), 0);
    srv->port = ntohs(((struct sockaddr_in *)&bound)->sin_port);
}

static void on_listener_closed(uv_handle_t *h)
{
    testsrv_t *srv = container_of((uv_tcp_t *)h, testsrv_t, listener);

    if (srv->on_stopped != NULL)
        srv->on_stopped(srv);
}

void testsrv_stop(testsrv_t *srv)
{
    while (srv->conns != NULL)
        testsrv_end(srv->conns);
    if (!uv_is_closing((uv_handle_t *)&srv->listener))
        uv_close((uv_handle_t *)&srv->listener, on_listener_closed);
}
