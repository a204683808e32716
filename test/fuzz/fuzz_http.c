/* fuzz_http -- arbitrary client bytes through the webhook server's HTTP layer (lib/hook/server,
 * plain HTTP on loopback) into the admission and conversion handlers: never crash, answer only
 * with well-formed HTTP responses, and hold nothing once the connection is gone. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "hook/admission.h"
#include "hook/conversion.h"
#include "hook/server.h"
#include "util/util.h"

#include "fuzz_check.h"

#include <jansson.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <uv.h>

/*
 * One loop and one server for the whole run (created on the first input); per input one
 * client connection on the same loop:
 *
 *   connect -> write the input -> shutdown (half-close) -> read until EOF -> close
 *
 * The input is one or more requests as a client would send them (request line, headers,
 * Content-Length or chunked bodies, pipelining, garbage). The server answers what it can parse
 * and closes the connection at the client's EOF (an answer already written still arrives), so
 * the client always sees EOF. Then the loop runs until the server has closed its side too.
 *
 * Invariants: what the client received is a sequence of responses "HTTP/1.1 NNN ..." with a
 * Content-Length (the last may be cut short by the close), nothing after a "Connection: close"
 * answer, and a 200 from a webhook path carries a JSON body; afterwards the server has no open
 * connection and no body bytes reserved from its budget.
 */

static uv_loop_t loop;
static hook_server_t *srv;
static int port;
static const hook_admission_env_t env;

typedef struct client_s {
    uv_tcp_t tcp;
    uv_connect_t connect;
    uv_write_t write;
    uv_shutdown_t shutdown;
    char *in; /* the response bytes received */
    size_t len, cap;
    bool closed;
} client_t;

static void on_request(void *ud, const hook_request_t *req, hook_response_t *resp)
{
    (void)ud;
    if (strcmp(req->path, HOOK_CONVERSION_PATH) == 0)
        hook_conversion_handler(NULL, req, resp);
    else
        hook_admission_handler((void *)&env, req, resp);
}

static void setup(void)
{
    hook_server_config_t sc = {0};
    err_msg_t msg;

    signal(SIGPIPE, SIG_IGN);
    CHECK(uv_loop_init(&loop) == 0);
    sc.host = "127.0.0.1";
    sc.port = 0;
    sc.handler = on_request;
    /* the defaults, except small bodies: a fuzz input is at most a few KiB */
    sc.max_body_bytes = 64 << 10;
    CHECK(hook_server_start(&loop, &sc, &srv, &msg) == ERR_OK);
    port = hook_server_port(srv);
}

static void on_client_closed(uv_handle_t *h)
{
    client_t *c = container_of((uv_tcp_t *)h, client_t, tcp);
    c->closed = true;
}

static void on_alloc(uv_handle_t *h, size_t hint, uv_buf_t *buf)
{
    client_t *c = container_of((uv_tcp_t *)h, client_t, tcp);
    (void)hint;
    if (c->cap - c->len < 4096) {
        char *p = realloc(c->in, c->cap + 65536);
        CHECK(p != NULL);
        c->in = p;
        c->cap += 65536;
    }
    *buf = uv_buf_init(c->in + c->len, (unsigned)(c->cap - c->len));
}

static void on_read(uv_stream_t *s, ssize_t n, const uv_buf_t *buf)
{
    client_t *c = container_of((uv_tcp_t *)s, client_t, tcp);
    (void)buf;
    if (n > 0)
        c->len += (size_t)n;
    else if (n < 0 && !uv_is_closing((uv_handle_t *)s))
        uv_close((uv_handle_t *)s, on_client_closed); /* EOF, or reset by the server */
}

static void on_shutdown(uv_shutdown_t *req, int status)
{
    (void)req;
    (void)status; /* a reset connection is read as such */
}

static void on_write(uv_write_t *req, int status)
{
    client_t *c = container_of(req, client_t, write);
    if (status == 0 && !uv_is_closing((uv_handle_t *)&c->tcp))
        uv_shutdown(&c->shutdown, (uv_stream_t *)&c->tcp, on_shutdown);
}

static void on_connect(uv_connect_t *req, int status)
{
    client_t *c = container_of(req, client_t, connect);
    uv_buf_t b = uv_buf_init(c->in, (unsigned)c->len);

    CHECK(status == 0);
    c->len = 0; /* the input was parked in `in` until now */
    CHECK(uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read) == 0);
    CHECK(uv_write(&c->write, (uv_stream_t *)&c->tcp, &b, 1, on_write) == 0);
}

/* Case-insensitive search for header `name` in the head [p, end); its value or NULL. */
static const char *header(const char *p, const char *end, const char *name)
{
    size_t n = strlen(name);
    for (; p + n < end; p++) {
        if (p[-1] == '\n' && strncasecmp(p, name, n) == 0)
            return p + n;
    }
    return NULL;
}

/* The received bytes are well-formed responses, the last maybe cut short. */
static void check_responses(const char *p, size_t len)
{
    const char *end = p + len;

    while (p < end) {
        const char *head_end = NULL, *cl, *q;
        size_t body_len = 0;
        int status;

        for (q = p; q + 4 <= end; q++) {
            if (memcmp(q, "\r\n\r\n", 4) == 0) {
                head_end = q + 4;
                break;
            }
        }
        if ((size_t)(end - p) >= 13)
            CHECK(memcmp(p, "HTTP/1.1 ", 9) == 0);
        if (head_end == NULL)
            return; /* cut short by the close */
        status = (p[9] - '0') * 100 + (p[10] - '0') * 10 + (p[11] - '0');
        CHECK(status >= 200 && status <= 599 && p[12] == ' ');
        cl = header(p + 1, head_end, "content-length: ");
        CHECK(cl != NULL);
        for (; *cl >= '0' && *cl <= '9'; cl++)
            body_len = body_len * 10 + (size_t)(*cl - '0');
        if ((size_t)(end - head_end) < body_len)
            return; /* cut short */
        if (status == 200) {
            json_t *doc = json_loadb(head_end, body_len, 0, NULL);
            CHECK(json_is_object(json_object_get(doc, "response")));
            json_decref(doc);
        }
        /* nothing follows an answer that closes the connection */
        if (header(p + 1, head_end, "connection: close") != NULL)
            CHECK(head_end + body_len == end);
        p = head_end + body_len;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    client_t c;
    struct sockaddr_in addr;
    hook_server_stats_t st;

    if (srv == NULL)
        setup();
    memset(&c, 0, sizeof(c));
    c.cap = size + 1;
    c.in = malloc(c.cap);
    CHECK(c.in != NULL);
    memcpy(c.in, data, size);
    c.len = size;
    if (size == 0) {
        free(c.in);
        return 0; /* a connection that sends nothing waits for the header timeout */
    }
    CHECK(uv_ip4_addr("127.0.0.1", port, &addr) == 0);
    CHECK(uv_tcp_init(&loop, &c.tcp) == 0);
    CHECK(uv_tcp_connect(&c.connect, &c.tcp, (const struct sockaddr *)&addr, on_connect) == 0);
    while (!c.closed)
        uv_run(&loop, UV_RUN_ONCE);
    check_responses(c.in, c.len);
    for (;;) {
        hook_server_stats(srv, &st);
        if (st.open_connections == 0)
            break;
        uv_run(&loop, UV_RUN_ONCE);
    }
    CHECK(st.buffered_bytes == 0);
    free(c.in);
    return 0;
}
