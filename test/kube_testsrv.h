/* kube_testsrv -- a scripted HTTP/1.1 server on loopback for lib/kube unit tests. */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_KUBE_TESTSRV_H
#define SLUICE_KUBE_TESTSRV_H

#include <stdbool.h>
#include <stddef.h>
#include <uv.h>

typedef struct testsrv_s testsrv_t;
typedef struct testsrv_conn_s testsrv_conn_t;

/* One parsed request, borrowed for the handler call. */
typedef struct testsrv_req_s {
    const char *method;
    const char *target;  /* path and query */
    const char *headers; /* raw header block, lines separated by "\r\n" */
    const char *body;
    size_t body_len;
} testsrv_req_t;

/* Answer `req` on `conn` with testsrv_reply()/testsrv_send()/testsrv_end(), now or later. */
typedef void (*testsrv_handler)(testsrv_t *srv, testsrv_conn_t *conn, const testsrv_req_t *req);

struct testsrv_s {
    uv_loop_t *loop;
    uv_tcp_t listener;
    int port;
    testsrv_handler handler;
    void *data;
    testsrv_conn_t *conns;
    int requests; /* requests seen */
    /* Optional: called once the listener closed by testsrv_stop() is closed (the owner may free
     * `srv` then); set it after testsrv_start(). */
    void (*on_stopped)(testsrv_t *srv);
};

/* Listen on 127.0.0.1 (a free port, in srv->port); aborts the test on failure. */
void testsrv_start(testsrv_t *srv, uv_loop_t *loop, testsrv_handler handler, void *data);

/* Send a complete response (status line, optional extra header lines, body) and close. */
void testsrv_reply(testsrv_conn_t *conn, int status, const char *extra_headers, const char *body);

/* Start a streamed 200 response (no Content-Length; the body ends when the connection closes). */
void testsrv_stream_begin(testsrv_conn_t *conn);

/* Send raw body bytes on a streamed response. */
void testsrv_send(testsrv_conn_t *conn, const char *data, size_t len);

/* Close the connection (ends a streamed response). */
void testsrv_end(testsrv_conn_t *conn);

/* Close `conn` at once with a TCP RST (unsent data is dropped). No-op once it is ending. */
void testsrv_reset(testsrv_conn_t *conn);

/* Have `cb(conn, data)` called once when `conn` ends (testsrv_end(), testsrv_reset(), the peer
 * closing or testsrv_stop()); `conn` must not be used after it. Replaces an earlier callback;
 * `cb` NULL removes it. */
void testsrv_on_end(testsrv_conn_t *conn, void (*cb)(testsrv_conn_t *conn, void *data), void *data);

/* Close the listener and every open connection. */
void testsrv_stop(testsrv_t *srv);

/* Value of header `name` (case-insensitive) in `req`, copied into buf; false when absent. */
bool testsrv_header(const testsrv_req_t *req, const char *name, char *buf, size_t n);

#endif
