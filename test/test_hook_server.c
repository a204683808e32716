/* test_hook_server -- the HTTP(S) server: keep-alive, pipelining, limits, TLS versions, close. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "hook/cert.h"
#include "hook/server.h"
#include "hook/server_int.h"
#include "hook/tls.h"
#include "util/util.h"

#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

/*
 * The server runs on its own loop in a second thread, exactly as in the operator; the test
 * thread is a plain blocking client (sockets + OpenSSL). The loop thread is stopped through a
 * uv_async_t, the only cross-thread call libuv allows.
 */

typedef struct fixture_s {
    uv_loop_t loop;
    uv_async_t stop;
    uv_async_t snap; /* copies the server's counters for the test thread */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    hook_server_stats_t stats;
    bool accepting;
    bool snapped;
    unsigned fail_accepts; /* set before fixture_start: hook_server__fail_accepts() */
    pthread_t thread;
    hook_server_t *srv;
    hook_tls_t *tls;
    hook_pem_t ca;
    int port;
    bool closed;
} fixture_t;

/* Deferred answers (/later?ms=N): a timer on the server's loop answers N ms later. */
static uv_loop_t *later_loop;

typedef struct later_s {
    uv_timer_t t;
    hook_deferred_t *d;
} later_t;

static void on_later_closed(uv_handle_t *h)
{
    free(container_of((uv_timer_t *)h, later_t, t));
}

static void on_later(uv_timer_t *t)
{
    later_t *l = container_of(t, later_t, t);
    hook_response_t resp = {.status = 200, .content_type = "text/plain"};

    resp.owned_body = strdup("answered later");
    resp.body_len = strlen(resp.owned_body);
    hook_deferred_answer(l->d, &resp);
    uv_close((uv_handle_t *)t, on_later_closed);
}

/* Echoes what it received: "<METHOD> <path> q=<query> len=<body length> ct=<content-type>".
 * /big answers 64 KiB, /huge 8 MiB (for clients that do not read). */
static void echo_handler(void *ud, const hook_request_t *req, hook_response_t *resp)
{
    const char *ct = "";
    char *text;

    (void)ud;
    if (strcmp(req->path, "/later") == 0) {
        later_t *l = calloc(1, sizeof(*l));
        ck_assert_ptr_nonnull(l);
        l->d = hook_request_defer(req);
        ck_assert_ptr_nonnull(l->d);
        ck_assert_ptr_null(hook_request_defer(req)); /* once per request */
        uv_timer_init(later_loop, &l->t);
        uv_timer_start(&l->t, on_later, strtoull(req->query + 3, NULL, 10), 0);
        resp->body = "ignored";
        resp->body_len = 7;
        return;
    }
    if (strcmp(req->path, "/big") == 0 || strcmp(req->path, "/huge") == 0) {
        size_t n = req->path[1] == 'b' ? 64u << 10 : 8u << 20;
        resp->owned_body = malloc(n);
        memset(resp->owned_body, 'x', n);
        resp->body_len = n;
        resp->content_type = "text/plain";
        return;
    }
    text = malloc(512);
    for (size_t i = 0; i < req->nheaders; i++)
        if (strcmp(req->headers[i].name, "content-type") == 0)
            ct = req->headers[i].value;
    snprintf(text, 512, "%s %s q=%s len=%zu ct=%s", req->method, req->path, req->query,
             req->body_len, ct);
    resp->owned_body = text;
    resp->body_len = strlen(text);
    resp->content_type = "text/plain";
}

static void on_server_closed(void *ud)
{
    fixture_t *f = ud;
    f->closed = true;
}

static void on_stop(uv_async_t *a)
{
    fixture_t *f = a->data;

    hook_server_close(f->srv, on_server_closed, f);
    uv_close((uv_handle_t *)&f->stop, NULL);
    uv_close((uv_handle_t *)&f->snap, NULL);
}

static void on_snap(uv_async_t *a)
{
    fixture_t *f = a->data;

    pthread_mutex_lock(&f->mu);
    hook_server_stats(f->srv, &f->stats);
    f->accepting = hook_server_accepting(f->srv);
    f->snapped = true;
    pthread_cond_signal(&f->cv);
    pthread_mutex_unlock(&f->mu);
}

/* The server's counters now (read on the loop's thread). */
static hook_server_stats_t fixture_stats(fixture_t *f, bool *accepting)
{
    hook_server_stats_t st;

    pthread_mutex_lock(&f->mu);
    f->snapped = false;
    uv_async_send(&f->snap);
    while (!f->snapped)
        pthread_cond_wait(&f->cv, &f->mu);
    st = f->stats;
    if (accepting != NULL)
        *accepting = f->accepting;
    pthread_mutex_unlock(&f->mu);
    return st;
}

static void *loop_main(void *arg)
{
    fixture_t *f = arg;

    uv_run(&f->loop, UV_RUN_DEFAULT);
    return NULL;
}

static void fixture_start(fixture_t *f, bool with_tls, hook_server_config_t *cfg)
{
    err_msg_t msg;
    hook_pem_t serving;
    const char *dns[] = {"localhost"};
    const char *ips[] = {"127.0.0.1"};

    unsigned fail_accepts = f->fail_accepts;

    memset(f, 0, sizeof(*f));
    pthread_mutex_init(&f->mu, NULL);
    pthread_cond_init(&f->cv, NULL);
    ck_assert_int_eq(uv_loop_init(&f->loop), 0);
    later_loop = &f->loop;
    if (with_tls) {
        ck_assert_int_eq(hook_cert_ca("sluice-test-ca", 1, &f->ca, &msg), ERR_OK);
        ck_assert_int_eq(hook_cert_serving(&f->ca, dns, 1, ips, 1, 1, &serving, &msg), ERR_OK);
        ck_assert_int_eq(hook_tls_new_pem(serving.cert, serving.cert_len, serving.key,
                                          serving.key_len, &f->tls, &msg),
                         ERR_OK);
        hook_pem_fini(&serving);
    }
    cfg->host = "127.0.0.1";
    cfg->port = 0;
    cfg->tls = f->tls;
    cfg->handler = echo_handler;
    ck_assert_msg(hook_server_start(&f->loop, cfg, &f->srv, &msg) == ERR_OK, "%s", msg.text);
    f->port = hook_server_port(f->srv);
    ck_assert_int_gt(f->port, 0);
    hook_server__fail_accepts(f->srv, fail_accepts);
    uv_async_init(&f->loop, &f->stop, on_stop);
    f->stop.data = f;
    uv_async_init(&f->loop, &f->snap, on_snap);
    f->snap.data = f;
    ck_assert_int_eq(pthread_create(&f->thread, NULL, loop_main, f), 0);
}

static void fixture_stop(fixture_t *f)
{
    uv_async_send(&f->stop);
    pthread_join(f->thread, NULL);
    ck_assert(f->closed);
    ck_assert_int_eq(uv_loop_close(&f->loop), 0);
    hook_tls_free(f->tls);
    hook_pem_fini(&f->ca);
}

/* ---- a blocking client ----------------------------------------------------------------------- */

typedef struct client_s {
    int fd;
    SSL_CTX *ctx;
    SSL *ssl;
} client_t;

/* A connection from source address `from` (any 127.x.y.z is loopback: one "client" each). */
static int tcp_connect_from(int port, const char *from)
{
    struct sockaddr_in a;
    struct timeval tv = {.tv_sec = 5};
    int fd = socket(AF_INET, SOCK_STREAM, 0);

    ck_assert_int_ge(fd, 0);
    if (from != NULL) {
        memset(&a, 0, sizeof(a));
        a.sin_family = AF_INET;
        ck_assert_int_eq(inet_pton(AF_INET, from, &a.sin_addr), 1);
        ck_assert_int_eq(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
    }
    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    ck_assert_int_eq(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
    return fd;
}

static int tcp_connect(int port)
{
    return tcp_connect_from(port, NULL);
}

/* Connect; with `ca` verify the server with it, limited to TLS versions [min, max]. Returns
 * false when the TLS handshake fails. */
static bool client_open(client_t *c, int port, const hook_pem_t *ca, int min_v, int max_v)
{
    memset(c, 0, sizeof(*c));
    c->fd = tcp_connect(port);
    if (ca == NULL)
        return true;
    c->ctx = SSL_CTX_new(TLS_client_method());
    ck_assert_ptr_nonnull(c->ctx);
    SSL_CTX_set_security_level(c->ctx, 0); /* allow offering TLS 1.0/1.1 to test refusal */
    SSL_CTX_set_min_proto_version(c->ctx, min_v);
    SSL_CTX_set_max_proto_version(c->ctx, max_v);
    {
        BIO *b = BIO_new_mem_buf(ca->cert, (int)ca->cert_len);
        X509 *x = PEM_read_bio_X509(b, NULL, NULL, NULL);
        X509_STORE_add_cert(SSL_CTX_get_cert_store(c->ctx), x);
        X509_free(x);
        BIO_free(b);
    }
    SSL_CTX_set_verify(c->ctx, SSL_VERIFY_PEER, NULL);
    c->ssl = SSL_new(c->ctx);
    SSL_set_fd(c->ssl, c->fd);
    SSL_set1_host(c->ssl, "localhost");
    if (SSL_connect(c->ssl) != 1) {
        ERR_clear_error();
        return false;
    }
    return true;
}

static void client_close(client_t *c)
{
    if (c->ssl) {
        SSL_shutdown(c->ssl);
        SSL_free(c->ssl);
    }
    SSL_CTX_free(c->ctx);
    close(c->fd);
}

static void client_send(client_t *c, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = c->ssl ? SSL_write(c->ssl, p, (int)n) : send(c->fd, p, n, MSG_NOSIGNAL);
        ck_assert_int_gt(w, 0);
        p += w;
        n -= (size_t)w;
    }
}

static ssize_t client_recv(client_t *c, char *p, size_t n)
{
    if (c->ssl) {
        int r = SSL_read(c->ssl, p, (int)n);
        if (r <= 0)
            ERR_clear_error();
        return r;
    }
    return read(c->fd, p, n);
}

/* Read one response; returns its status and copies its body into `body`. -1 on EOF. */
static int client_response(client_t *c, char *body, size_t cap, bool *closes)
{
    static char buf[65536];
    static size_t have;
    static const client_t *owner;
    char *end;
    size_t head_len, clen;
    int status;

    if (owner != c) {
        have = 0;
        owner = c;
    }
    for (;;) {
        buf[have] = '\0';
        end = strstr(buf, "\r\n\r\n");
        if (end != NULL) {
            char *cl = strstr(buf, "Content-Length: ");
            head_len = (size_t)(end - buf) + 4;
            ck_assert_ptr_nonnull(cl);
            clen = strtoul(cl + 16, NULL, 10);
            if (have >= head_len + clen)
                break;
        }
        ssize_t r = client_recv(c, buf + have, sizeof(buf) - 1 - have);
        if (r <= 0)
            return -1;
        have += (size_t)r;
    }
    status = atoi(buf + 9);
    if (closes)
        *closes =
            strstr(buf, "Connection: close") != NULL && strstr(buf, "Connection: close") < end;
    ck_assert_uint_lt(clen, cap);
    memcpy(body, buf + head_len, clen);
    body[clen] = '\0';
    memmove(buf, buf + head_len + clen, have - head_len - clen);
    have -= head_len + clen;
    return status;
}

/* ---- tests ------------------------------------------------------------------------------------
 */

START_TEST(test_tls_keep_alive_two_requests)
{
    fixture_t f = {0};
    hook_server_config_t cfg = {0};
    client_t c;
    char body[1024];
    bool closes;
    const char *req = "POST /validate-kueue-x-k8s-io-v1beta2-clusterqueue?timeout=10s HTTP/1.1\r\n"
                      "Host: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}";

    fixture_start(&f, true, &cfg);
    ck_assert(client_open(&c, f.port, &f.ca, TLS1_2_VERSION, TLS1_3_VERSION));
    client_send(&c, req, strlen(req));
    ck_assert_int_eq(client_response(&c, body, sizeof(body), &closes), 200);
    ck_assert_str_eq(body, "POST /validate-kueue-x-k8s-io-v1beta2-clusterqueue q=timeout=10s len=2 "
                           "ct=application/json");
    ck_assert(!closes);
    client_send(&c, req, strlen(req)); /* same connection */
    ck_assert_int_eq(client_response(&c, body, sizeof(body), &closes), 200);
    client_close(&c);
    fixture_stop(&f);
}
END_TEST

START_TEST(test_tls12_accepted_old_versions_refused)
{
    fixture_t f = {0};
    hook_server_config_t cfg = {0};
    client_t c;
    char body[256];

    fixture_start(&f, true, &cfg);
    ck_assert(client_open(&c, f.port, &f.ca, TLS1_2_VERSION, TLS1_2_VERSION));
    client_send(&c, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n", 34);
    ck_assert_int_eq(client_response(&c, body, sizeof(body), NULL), 200);
    client_close(&c);
    ck_assert(!client_open(&c, f.port, &f.ca, TLS1_VERSION, TLS1_1_VERSION));
    client_close(&c);
    fixture_stop(&f);
}
END_TEST

START_TEST(test_plain_pipelined_in_order)
{
    fixture_t f = {0};
    hook_server_config_t cfg = {0};
    client_t c;
    char body[256];
    const char *reqs = "GET /a HTTP/1.1\r\nHost: x\r\n\r\nGET /b HTTP/1.1\r\nHost: x\r\n\r\n"
                       "GET /c HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
    bool closes;

    fixture_start(&f, false, &cfg);
    client_open(&c, f.port, NULL, 0, 0);
    client_send(&c, reqs, strlen(reqs));
    ck_assert_int_eq(client_response(&c, body, sizeof(body), NULL), 200);
    ck_assert_str_eq(body, "GET /a q= len=0 ct=");
    ck_assert_int_eq(client_response(&c, body, sizeof(body), NULL), 200);
    ck_assert_str_eq(body, "GET /b q= len=0 ct=");
    ck_assert_int_eq(client_response(&c, body, sizeof(body), &closes), 200);
    ck_assert_str_eq(body, "GET /c q= len=0 ct=");
    ck_assert(closes);
    ck_assert_int_eq(client_response(&c, body, sizeof(body), NULL), -1); /* closed */
    client_close(&c);
    fixture_stop(&f);
}
END_TEST

/* A large owned answer (a /metrics exposition of megabytes) goes out as it is, head and body in
 * one write request: every byte arrives, in order, and the answer pipelined behind it follows. */
START_TEST(test_plain_large_owned_answer_whole_and_in_order)
{
    fixture_t f = {0};
    hook_server_config_t cfg = {0};
    client_t c;
    const char *reqs = "GET /huge HTTP/1.1\r\nHost: x\r\n\r\n"
                       "GET /a HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
    size_t cap = (8u << 20) + 4096, have = 0, head_len, body = 8u << 20;
    char *buf = malloc(cap + 1), *end;

    ck_assert_ptr_nonnull(buf);
    fixture_start(&f, false, &cfg);
    client_open(&c, f.port, NULL, 0, 0);
    client_send(&c, reqs, strlen(reqs));
    for (;;) { /* until the server closes after the second answer */
        ssize_t r = client_recv(&c, buf + have, cap - have);
        if (r <= 0)
            break;
        have += (size_t)r;
    }
    buf[have] = '\0';
    end = strstr(buf, "\r\n\r\n");
    ck_assert_ptr_nonnull(end);
    head_len = (size_t)(end - buf) + 4;
    ck_assert_int_eq(atoi(buf + 9), 200);
    ck_assert_ptr_nonnull(strstr(buf, "Content-Length: 8388608\r\n"));
    ck_assert_uint_gt(have, head_len + body);
    for (size_t i = 0; i < body; i++)
        if (buf[head_len + i] != 'x')
            ck_abort_msg("byte %zu of the body is %d", i, buf[head_len + i]);
    ck_assert_int_eq(strncmp(buf + head_len + body, "HTTP/1.1 200 OK\r\n", 17), 0);
    ck_assert_ptr_nonnull(strstr(buf + head_len + body, "\r\n\r\nGET /a q= len=0 ct="));
    client_close(&c);
    fixture_stop(&f);
    free(buf);
}
END_TEST

/* A deferred answer keeps the connection's order: the request pipelined behind it waits. */
START_TEST(test_deferred_answer_in_order)
{
    fixture_t f = {0};
    hook_server_config_t cfg = {0};
    client_t c;
    char body[256];
    const char *reqs =
        "GET /later?ms=80 HTTP/1.1\r\nHost: x\r\n\r\nGET /a HTTP/1.1\r\nHost: x\r\n\r\n";
    hook_server_stats_t st;

    fixture_start(&f, true, &cfg);
    ck_assert(client_open(&c, f.port, &f.ca, TLS1_2_VERSION, TLS1_3_VERSION));
    client_send(&c, reqs, strlen(reqs));
    ck_assert_int_eq(client_response(&c, body, sizeof(body), NULL), 200);
    ck_assert_str_eq(body, "answered later");
    ck_assert_int_eq(client_response(&c, body, sizeof(body), NULL), 200);
    ck_assert_str_eq(body, "GET /a q= len=0 ct=");
    /* and again on the same connection */
    client_send(&c, reqs, strlen(reqs));
    ck_assert_int_eq(client_response(&c, body, sizeof(body), NULL), 200);
    ck_assert_str_eq(body, "answered later");
    ck_assert_int_eq(client_response(&c, body, sizeof(body), NULL), 200);
    st = fixture_stats(&f, NULL);
    ck_assert_uint_eq(st.deferred, 2);
    ck_assert_uint_eq(st.deferred_timeouts, 0);
    client_close(&c);
    fixture_stop(&f);
}
END_TEST

/* An answer later than the request timeout: the server answers 503 and closes; the late answer
 * only frees (ASan: no use after free); so does one for a client gone before it. */
START_TEST(test_deferred_answer_too_late_gets_503)
{
    fixture_t f = {0};
    hook_server_config_t cfg = {.request_timeout_ms = 100};
    client_t c;
    char body[256];
    bool closes = false;
    hook_server_stats_t st;
    const char *req = "GET /later?ms=300 HTTP/1.1\r\nHost: x\r\n\r\n";

    fixture_start(&f, false, &cfg);
    client_open(&c, f.port, NULL, 0, 0);
    client_send(&c, req, strlen(req));
    ck_assert_int_eq(client_response(&c, body, sizeof(body), &closes), 503);
    ck_assert_str_eq(body, "the answer was not ready in time; retry\n");
    ck_assert(closes);
    client_close(&c);
    client_open(&c, f.port, NULL, 0, 0); /* gone before its answer */
    client_send(&c, req, strlen(req));
    client_close(&c);
    usleep(400 * 1000); /* both late answers come */
    st = fixture_stats(&f, NULL);
    ck_assert_uint_eq(st.deferred, 2);
    /* the connection reads nothing while its answer is deferred: the gone client is noticed at
     * the timeout too */
    ck_assert_uint_eq(st.deferred_timeouts, 2);
    fixture_stop(&f);
}
END_TEST

/* A connection waiting for its deferred answer is not idle: the per-client limit refuses a new
 * connection rather than closing it. */
START_TEST(test_deferred_connection_not_evicted)
{
    fixture_t f = {0};
    hook_server_config_t cfg = {.max_connections_per_client = 1};
    client_t a;
    char body[256];
    int b;
    const char *req = "GET /later?ms=300 HTTP/1.1\r\nHost: x\r\n\r\n";

    fixture_start(&f, false, &cfg);
    client_open(&a, f.port, NULL, 0, 0);
    client_send(&a, req, strlen(req));
    usleep(100 * 1000); /* the request is deferred now */
    b = tcp_connect(f.port);
    for (int k = 0; k < 40 && fixture_stats(&f, NULL).rejected_connections < 1; k++)
        usleep(25000);
    ck_assert_uint_eq(fixture_stats(&f, NULL).rejected_connections, 1);
    ck_assert_uint_eq(fixture_stats(&f, NULL).evicted_idle, 0);
    ck_assert_int_eq(client_response(&a, body, sizeof(body), NULL), 200);
    ck_assert_str_eq(body, "answered later");
    close(b);
    client_close(&a);
    fixture_stop(&f);
}
END_TEST

START_TEST(test_malformed_request_gets_400)
{
    fixture_t f = {0};
    hook_server_config_t cfg = {0};
    client_t c;
    char body[256];
    bool closes;

    fixture_start(&f, false, &cfg);
    client_open(&c, f.port, NULL, 0, 0);
    client_send(&c, "HELLO WORLD\r\n\r\n", 15);
    ck_assert_int_eq(client_response(&c, body, sizeof(body), &closes), 400);
    ck_assert_ptr_nonnull(strstr(body, "malformed HTTP request"));
    ck_assert(closes);
    client_close(&c);
    fixture_stop(&f);
}
END_TEST

START_TEST(test_oversized_body_gets_413)
{
    fixture_t f = {0};
    hook_server_config_t cfg = {.max_body_bytes = 1024};
    client_t c;
    char body[256];
    const char *head = "POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: 4096\r\n\r\n";
    const char *chunked = "POST /x HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                          "800\r\n";
    char big[2048];

    fixture_start(&f, false, &cfg);
    client_open(&c, f.port, NULL, 0, 0);
    client_send(&c, head, strlen(head));
    ck_assert_int_eq(client_response(&c, body, sizeof(body), NULL), 413);
    client_close(&c);
    /* without a Content-Length the body is counted as it arrives */
    client_open(&c, f.port, NULL, 0, 0);
    memset(big, 'a', sizeof(big));
    client_send(&c, chunked, strlen(chunked));
    client_send(&c, big, sizeof(big));
    ck_assert_int_eq(client_response(&c, body, sizeof(body), NULL), 413);
    client_close(&c);
    fixture_stop(&f);
}
END_TEST

START_TEST(test_oversized_headers_get_431)
{
    fixture_t f = {0};
    hook_server_config_t cfg = {.max_header_bytes = 512};
    client_t c;
    char body[256];
    char req[2048];

    fixture_start(&f, false, &cfg);
    client_open(&c, f.port, NULL, 0, 0);
    memset(req, 0, sizeof(req));
    strcpy(req, "GET /x HTTP/1.1\r\nX-Big: ");
    memset(req + strlen(req), 'b', 1000);
    strcat(req, "\r\n\r\n");
    client_send(&c, req, strlen(req));
    ck_assert_int_eq(client_response(&c, body, sizeof(body), NULL), 431);
    client_close(&c);
    fixture_stop(&f);
}
END_TEST

START_TEST(test_slow_request_gets_408)
{
    fixture_t f = {0};
    hook_server_config_t cfg = {.request_timeout_ms = 150};
    client_t c;
    char body[256];

    fixture_start(&f, false, &cfg);
    client_open(&c, f.port, NULL, 0, 0);
    client_send(&c, "GET /x HTTP/1.1\r\nHo", 19); /* and then nothing */
    ck_assert_int_eq(client_response(&c, body, sizeof(body), NULL), 408);
    client_close(&c);
    fixture_stop(&f);
}
END_TEST

START_TEST(test_connection_limit)
{
    fixture_t f = {0};
    hook_server_config_t cfg = {.max_connections = 1};
    client_t c1, c2, c3;
    char body[256];

    fixture_start(&f, false, &cfg);
    /* c1 is mid-request: it is never cut, so c2 is refused (reset at once: EOF or a reset) */
    client_open(&c1, f.port, NULL, 0, 0);
    client_send(&c1, "GET /1 HTTP/1.1\r\nHo", 19);
    usleep(300000); /* the server has read it (a loaded machine takes its time) */
    client_open(&c2, f.port, NULL, 0, 0);
    ck_assert_int_le(client_recv(&c2, body, sizeof(body)), 0);
    client_close(&c2);
    /* c1 answered and idle: a new connection takes its place (c1 is closed, c3 served) */
    client_send(&c1, "st: x\r\n\r\n", 9);
    ck_assert_int_eq(client_response(&c1, body, sizeof(body), NULL), 200);
    client_open(&c3, f.port, NULL, 0, 0);
    client_send(&c3, "GET /3 HTTP/1.1\r\nHost: x\r\n\r\n", 28);
    ck_assert_int_eq(client_response(&c3, body, sizeof(body), NULL), 200);
    ck_assert_int_le(client_recv(&c1, body, sizeof(body)), 0);
    ck_assert_uint_eq(fixture_stats(&f, NULL).evicted_idle, 1);
    client_close(&c3);
    client_close(&c1);
    fixture_stop(&f);
}
END_TEST

/* ---- floods: the legitimate client (127.0.0.1) is served while others hold connections ---- */

#define FLOOD 256

static uint64_t now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Flood client i's source address: 64 addresses, 4 connections each (under the per-client
 * limit: these floods test the server-wide limits; test_per_client_limit the other). */
static const char *flood_addr(int i, char *buf, size_t n)
{
    snprintf(buf, n, "127.0.%d.%d", 1 + i / 4 / 250, 2 + (i / 4) % 250);
    return buf;
}

/* One request from 127.0.0.1 on a new connection: its status, and the time it took in `ms`. */
static int legit_request(fixture_t *f, uint64_t *ms)
{
    client_t c;
    char body[256];
    uint64_t t0 = now_ms();
    int status;

    client_open(&c, f->port, NULL, 0, 0);
    client_send(&c, "GET /legit HTTP/1.1\r\nHost: x\r\n\r\n", 32);
    status = client_response(&c, body, sizeof(body), NULL);
    client_close(&c);
    *ms = now_ms() - t0;
    return status;
}

static long rss_kib(void)
{
    FILE *fp = fopen("/proc/self/status", "r");
    char line[256];
    long kib = -1;

    while (fp != NULL && fgets(line, sizeof(line), fp) != NULL)
        if (strncmp(line, "VmRSS:", 6) == 0)
            kib = strtol(line + 6, NULL, 10);
    if (fp != NULL)
        fclose(fp);
    return kib;
}

START_TEST(test_flood_idle_keepalive_and_silent)
{
    fixture_t f = {0};
    /* today's 256 total; the flood fills it exactly */
    hook_server_config_t cfg = {.max_connections = FLOOD};
    static client_t fl[FLOOD];
    char addr[32], body[256];
    uint64_t ms;
    hook_server_stats_t st;

    fixture_start(&f, false, &cfg);
    /* half served one request and idle on keep-alive, half never sent a byte (the probe-port
     * flood) */
    for (int i = 0; i < FLOOD; i++) {
        memset(&fl[i], 0, sizeof(fl[i]));
        fl[i].fd = tcp_connect_from(f.port, flood_addr(i, addr, sizeof(addr)));
        if (i % 2 == 0) {
            client_send(&fl[i], "GET /k HTTP/1.1\r\nHost: x\r\n\r\n", 28);
            ck_assert_int_eq(client_response(&fl[i], body, sizeof(body), NULL), 200);
        }
    }
    ck_assert_int_eq(legit_request(&f, &ms), 200);
    fprintf(stderr, "idle flood: legitimate request served in %llu ms\n", (unsigned long long)ms);
    ck_assert_uint_lt(ms, 4500); /* on a loaded machine, under ASan */
    st = fixture_stats(&f, NULL);
    ck_assert_uint_eq(st.rejected_connections, 0);
    ck_assert_uint_ge(st.evicted_idle, 1);
    ck_assert_uint_le(st.open_connections, FLOOD);
    for (int i = 0; i < FLOOD; i++)
        client_close(&fl[i]);
    fixture_stop(&f);
}
END_TEST

START_TEST(test_idle_and_silent_connections_time_out)
{
    fixture_t f = {0};
    hook_server_config_t cfg = {.idle_timeout_ms = 150, .header_timeout_ms = 150};
    client_t a, b;
    char body[256];
    uint64_t t0;

    fixture_start(&f, false, &cfg);
    client_open(&a, f.port, NULL, 0, 0); /* sends nothing: 408 after the header timeout */
    client_open(&b, f.port, NULL, 0, 0); /* keep-alive, then idle: closed quietly */
    client_send(&b, "GET /k HTTP/1.1\r\nHost: x\r\n\r\n", 28);
    ck_assert_int_eq(client_response(&b, body, sizeof(body), NULL), 200);
    t0 = now_ms();
    ck_assert_int_eq(client_response(&a, body, sizeof(body), NULL), 408);
    ck_assert_int_le(client_recv(&b, body, sizeof(body)), 0);
    ck_assert_uint_lt(now_ms() - t0, 1000);
    client_close(&a);
    client_close(&b);
    fixture_stop(&f);
}
END_TEST

START_TEST(test_slow_headers_get_408_before_the_request_timeout)
{
    fixture_t f = {0};
    hook_server_config_t cfg = {.header_timeout_ms = 150, .request_timeout_ms = 20000};
    client_t c;
    char body[256];
    uint64_t t0 = now_ms();

    fixture_start(&f, false, &cfg);
    client_open(&c, f.port, NULL, 0, 0);
    client_send(&c, "GET /x HTTP/1.1\r\nHo", 19); /* one byte at a time would do the same */
    usleep(100000);
    client_send(&c, "s", 1);
    ck_assert_int_eq(client_response(&c, body, sizeof(body), NULL), 408);
    ck_assert_ptr_nonnull(strstr(body, "headers"));
    ck_assert_uint_lt(now_ms() - t0, 2000);
    client_close(&c);
    fixture_stop(&f);
}
END_TEST

START_TEST(test_per_client_limit)
{
    fixture_t f = {0};
    hook_server_config_t cfg = {.max_connections_per_client = 4};
    client_t fl[8], legit;
    char body[256];
    hook_server_stats_t st;

    fixture_start(&f, false, &cfg);
    /* one address, eight connections, each mid-request: four are refused */
    for (int i = 0; i < 8; i++) {
        memset(&fl[i], 0, sizeof(fl[i]));
        fl[i].fd = tcp_connect_from(f.port, "127.0.0.2");
        (void)!send(fl[i].fd, "GET /x HTTP/1.1\r\nHo", 19, MSG_NOSIGNAL); /* may be reset */
        usleep(10000);
    }
    /* the refusals are counted by the server (a reset seen by the client may come late) */
    for (int k = 0; k < 60 && fixture_stats(&f, NULL).rejected_connections < 4; k++)
        usleep(50000);
    st = fixture_stats(&f, NULL);
    ck_assert_uint_eq(st.rejected_connections, 4);
    ck_assert_uint_eq(st.open_connections, 4);
    /* another address is served */
    client_open(&legit, f.port, NULL, 0, 0);
    client_send(&legit, "GET /l HTTP/1.1\r\nHost: x\r\n\r\n", 28);
    ck_assert_int_eq(client_response(&legit, body, sizeof(body), NULL), 200);
    client_close(&legit);
    for (int i = 0; i < 8; i++)
        client_close(&fl[i]);
    fixture_stop(&f);
}
END_TEST

START_TEST(test_flood_pipelining_clients_that_never_read)
{
    fixture_t f = {0};
    hook_server_config_t cfg = {.write_timeout_ms = 300};
    static client_t fl[FLOOD];
    char addr[32], reqs[16 * 32];
    int small = 2048;
    uint64_t ms, t0;
    hook_server_stats_t st;

    reqs[0] = '\0';
    for (int k = 0; k < 16; k++)
        strcat(reqs, "GET /big HTTP/1.1\r\nHost: x\r\n\r\n");
    fixture_start(&f, false, &cfg);
    for (int i = 0; i < FLOOD; i++) {
        memset(&fl[i], 0, sizeof(fl[i]));
        fl[i].fd = tcp_connect_from(f.port, flood_addr(i, addr, sizeof(addr)));
        setsockopt(fl[i].fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
        client_send(&fl[i], reqs, strlen(reqs)); /* 1 MiB of answers asked, none read */
    }
    ck_assert_int_eq(legit_request(&f, &ms), 200);
    fprintf(stderr, "pipelining non-readers: legitimate request served in %llu ms\n",
            (unsigned long long)ms);
    ck_assert_uint_lt(ms, 4500); /* on a loaded machine, under ASan */
    /* every non-reader is closed once its output stalls for the write timeout */
    t0 = now_ms();
    do {
        usleep(50000);
        st = fixture_stats(&f, NULL);
    } while (st.open_connections > 0 && now_ms() - t0 < 5000);
    ck_assert_uint_eq(st.open_connections, 0);
    ck_assert_uint_ge(st.write_timeouts, FLOOD);
    for (int i = 0; i < FLOOD; i++)
        client_close(&fl[i]);
    fixture_stop(&f);
}
END_TEST

/* Small answers fit the kernel's buffers, so nothing backs up: the danger is CPU. 256 clients
 * with 2048 pipelined requests each (half a million) must not keep a legitimate request waiting
 * behind all of them: each connection gets PIPELINE_MAX answers per loop turn. */
START_TEST(test_flood_pipelined_small_requests_take_turns)
{
    fixture_t f = {0};
    hook_server_config_t cfg = {0};
    static client_t fl[FLOOD];
    static char reqs[2048 * 28 + 1];
    char addr[32];
    uint64_t ms;

    for (int k = 0; k < 2048; k++)
        memcpy(reqs + k * 28, "GET /k HTTP/1.1\r\nHost: x\r\n\r\n", 28);
    fixture_start(&f, false, &cfg);
    for (int i = 0; i < FLOOD; i++) {
        memset(&fl[i], 0, sizeof(fl[i]));
        fl[i].fd = tcp_connect_from(f.port, flood_addr(i, addr, sizeof(addr)));
        (void)!send(fl[i].fd, reqs, 2048 * 28, MSG_NOSIGNAL);
    }
    ck_assert_int_eq(legit_request(&f, &ms), 200);
    fprintf(stderr, "pipelined small requests: legitimate request served in %llu ms\n",
            (unsigned long long)ms);
    ck_assert_uint_lt(ms, 4500); /* on a loaded machine, under ASan */
    for (int i = 0; i < FLOOD; i++)
        client_close(&fl[i]);
    fixture_stop(&f);
}
END_TEST

START_TEST(test_closing_connection_with_unread_output_times_out)
{
    fixture_t f = {0};
    hook_server_config_t cfg = {.write_timeout_ms = 200};
    client_t c;
    int small = 2048;
    uint64_t t0;
    hook_server_stats_t st;

    fixture_start(&f, false, &cfg);
    client_open(&c, f.port, NULL, 0, 0);
    setsockopt(c.fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
    /* the server closes after this answer (CLOSING), but 8 MiB cannot be written to a peer
     * that does not read: before, the connection stayed open for ever with no timer */
    client_send(&c, "GET /huge HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", 50);
    t0 = now_ms();
    do {
        usleep(50000);
        st = fixture_stats(&f, NULL);
    } while (st.open_connections > 0 && now_ms() - t0 < 3000);
    ck_assert_uint_eq(st.open_connections, 0);
    ck_assert_uint_eq(st.write_timeouts, 1);
    client_close(&c);
    fixture_stop(&f);
}
END_TEST

START_TEST(test_flood_3mib_bodies_stay_within_the_budget)
{
    fixture_t f = {0};
    hook_server_config_t cfg = {0}; /* defaults: 3 MiB bodies, 64 MiB budget */
    static client_t fl[FLOOD];
    size_t n = 3u << 20;
    char *big = malloc(n), addr[32], head[128];
    long rss0 = rss_kib();
    uint64_t ms;
    hook_server_stats_t st;
    int head_len = snprintf(head, sizeof(head),
                            "POST /b HTTP/1.1\r\nHost: x\r\nContent-Length: %zu\r\n\r\n", n);

    memset(big, '{', n);
    fixture_start(&f, false, &cfg);
    /* every client sends all of its body but the last byte, so nothing completes: the
     * server holds what it accepted until the end */
    for (int i = 0; i < FLOOD; i++) {
        memset(&fl[i], 0, sizeof(fl[i]));
        fl[i].fd = tcp_connect_from(f.port, flood_addr(i, addr, sizeof(addr)));
        if (send(fl[i].fd, head, (size_t)head_len, MSG_NOSIGNAL) == head_len) {
            size_t off = 0;
            while (off < n - 1) {
                ssize_t w = send(fl[i].fd, big + off, n - 1 - off, MSG_NOSIGNAL);
                if (w <= 0)
                    break; /* refused with 503 and closed, or not read (timeout) */
                off += (size_t)w;
            }
        }
    }
    st = fixture_stats(&f, NULL);
    ck_assert_uint_le(st.buffered_bytes_peak, 64u << 20);
    ck_assert_uint_ge(st.busy_503, FLOOD / 2);
    ck_assert_int_eq(legit_request(&f, &ms), 200);
    fprintf(stderr,
            "3 MiB body flood: legitimate request served in %llu ms; bodies held at most %zu "
            "bytes; %llu refused 503; RSS grew %ld KiB\n",
            (unsigned long long)ms, st.buffered_bytes_peak, (unsigned long long)st.busy_503,
            rss_kib() - rss0);
    ck_assert_uint_lt(ms, 4500); /* on a loaded machine, under ASan */
    /* the process (server and this client; ASan keeps freed memory a while) stays small */
    ck_assert_int_lt(rss_kib() - rss0, 192 * 1024); /* unbounded: 256 x 4 MiB */
    for (int i = 0; i < FLOOD; i++)
        client_close(&fl[i]);
    st = fixture_stats(&f, NULL);
    free(big);
    fixture_stop(&f);
}
END_TEST

START_TEST(test_accept_failure_recovers_and_says_so)
{
    fixture_t f = {.fail_accepts = 6}; /* retries after 10+20+40+80+160+320 ms */
    hook_server_config_t cfg = {0};
    client_t c;
    char body[256];
    bool accepting = true, saw = false;
    hook_server_stats_t st;

    fixture_start(&f, false, &cfg);
    client_open(&c, f.port, NULL, 0, 0); /* the kernel completes it; sluice's accept fails */
    client_send(&c, "GET /x HTTP/1.1\r\nHost: x\r\n\r\n", 28);
    /* between the first failure and the last retry (630 ms), accepting is false */
    for (int k = 0; k < 400 && !saw; k++) {
        st = fixture_stats(&f, &accepting);
        if (st.accept_failures >= 1 && st.accept_failures < 6) {
            ck_assert(!accepting); /* /readyz says so */
            saw = true;
        }
        usleep(5000);
    }
    ck_assert(saw);
    ck_assert_int_eq(client_response(&c, body, sizeof(body), NULL), 200);
    st = fixture_stats(&f, &accepting);
    ck_assert(accepting);
    ck_assert_uint_eq(st.accept_failures, 6);
    client_close(&c);
    fixture_stop(&f);
}
END_TEST

START_TEST(test_tls_garbage_does_not_stall_loop)
{
    fixture_t f = {0};
    hook_server_config_t cfg = {0};
    client_t bad, good;
    char body[256];

    fixture_start(&f, true, &cfg);
    client_open(&bad, f.port, NULL, 0, 0); /* plain text to a TLS port */
    client_send(&bad, "GET / HTTP/1.1\r\n\r\n", 18);
    ck_assert(client_open(&good, f.port, &f.ca, TLS1_2_VERSION, TLS1_3_VERSION));
    client_send(&good, "GET /ok HTTP/1.1\r\nHost: x\r\n\r\n", 29);
    ck_assert_int_eq(client_response(&good, body, sizeof(body), NULL), 200);
    client_close(&good);
    client_close(&bad);
    fixture_stop(&f);
}
END_TEST

START_TEST(test_certificate_expiry_and_hot_replace)
{
    hook_pem_t ca, a, b;
    hook_tls_t *tls;
    err_msg_t msg;
    int64_t not_after;
    const char *dns[] = {"sluice-webhook-service.sluice-system.svc"};

    ck_assert_int_eq(hook_cert_ca("ca", 365, &ca, &msg), ERR_OK);
    ck_assert_int_eq(hook_cert_serving(&ca, dns, 1, NULL, 0, 30, &a, &msg), ERR_OK);
    ck_assert_int_eq(hook_cert_not_after(a.cert, a.cert_len, &not_after, &msg), ERR_OK);
    ck_assert_int_gt(not_after, (int64_t)time(NULL) + 29 * 86400);
    ck_assert_int_lt(not_after, (int64_t)time(NULL) + 31 * 86400);
    ck_assert_int_eq(hook_tls_new_pem(a.cert, a.cert_len, a.key, a.key_len, &tls, &msg), ERR_OK);
    ck_assert_int_eq(hook_cert_serving(&ca, dns, 1, NULL, 0, 30, &b, &msg), ERR_OK);
    /* a key that does not match the certificate is refused and the old context stays */
    ck_assert_int_eq(hook_tls_replace_pem(tls, a.cert, a.cert_len, b.key, b.key_len, &msg),
                     ERR_TLS);
    ck_assert_ptr_nonnull(strstr(msg.text, "does not match"));
    ck_assert_int_eq(hook_tls_replace_pem(tls, b.cert, b.cert_len, b.key, b.key_len, &msg), ERR_OK);
    ck_assert_int_eq(hook_cert_serving(&ca, NULL, 0, NULL, 0, 30, &b, &msg), ERR_INVALID);
    hook_tls_free(tls);
    hook_pem_fini(&ca);
    hook_pem_fini(&a);
    hook_pem_fini(&b);
}
END_TEST

START_TEST(test_listen_errors)
{
    uv_loop_t loop;
    hook_server_config_t cfg = {.host = "not-an-ip", .handler = echo_handler};
    hook_server_t *srv = NULL;
    err_msg_t msg;

    ck_assert_int_eq(uv_loop_init(&loop), 0);
    ck_assert_int_eq(hook_server_start(&loop, &cfg, &srv, &msg), ERR_INVALID);
    ck_assert_ptr_nonnull(strstr(msg.text, "not-an-ip"));
    cfg.host = "127.0.0.1";
    cfg.handler = NULL;
    ck_assert_int_eq(hook_server_start(&loop, &cfg, &srv, &msg), ERR_INVALID);
    ck_assert_int_eq(uv_run(&loop, UV_RUN_DEFAULT), 0);
    ck_assert_int_eq(uv_loop_close(&loop), 0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("hook_server");
    TCase *tc = tcase_create("server");
    SRunner *sr;
    int failed;

    signal(SIGPIPE, SIG_IGN); /* as `sluice run` does: a peer's reset must not kill the loop */
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_tls_keep_alive_two_requests);
    tcase_add_test(tc, test_tls12_accepted_old_versions_refused);
    tcase_add_test(tc, test_plain_pipelined_in_order);
    tcase_add_test(tc, test_plain_large_owned_answer_whole_and_in_order);
    tcase_add_test(tc, test_deferred_answer_in_order);
    tcase_add_test(tc, test_deferred_answer_too_late_gets_503);
    tcase_add_test(tc, test_deferred_connection_not_evicted);
    tcase_add_test(tc, test_malformed_request_gets_400);
    tcase_add_test(tc, test_oversized_body_gets_413);
    tcase_add_test(tc, test_oversized_headers_get_431);
    tcase_add_test(tc, test_slow_request_gets_408);
    tcase_add_test(tc, test_connection_limit);
    tcase_add_test(tc, test_flood_idle_keepalive_and_silent);
    tcase_add_test(tc, test_idle_and_silent_connections_time_out);
    tcase_add_test(tc, test_slow_headers_get_408_before_the_request_timeout);
    tcase_add_test(tc, test_per_client_limit);
    tcase_add_test(tc, test_flood_pipelining_clients_that_never_read);
    tcase_add_test(tc, test_flood_pipelined_small_requests_take_turns);
    tcase_add_test(tc, test_closing_connection_with_unread_output_times_out);
    tcase_add_test(tc, test_flood_3mib_bodies_stay_within_the_budget);
    tcase_add_test(tc, test_accept_failure_recovers_and_says_so);
    tcase_add_test(tc, test_tls_garbage_does_not_stall_loop);
    tcase_add_test(tc, test_certificate_expiry_and_hot_replace);
    tcase_add_test(tc, test_listen_errors);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
