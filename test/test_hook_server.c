/* test_hook_server -- the HTTP(S) server: keep-alive, pipelining, limits, TLS versions, close. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "hook/cert.h"
#include "hook/server.h"
#include "hook/tls.h"

#include <arpa/inet.h>
#include <check.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

/*
 * The server runs on its own loop in a second thread, exactly as in the operator; the test
 * thread is a plain blocking client (sockets + OpenSSL). The loop thread is stopped through a
 * uv_async_t, the only cross-thread call libuv allows.
 */

typedef struct fixture_s {
    uv_loop_t loop;
    uv_async_t stop;
    pthread_t thread;
    hook_server_t *srv;
    hook_tls_t *tls;
    hook_pem_t ca;
    int port;
    bool closed;
} fixture_t;

/* Echoes what it received: "<METHOD> <path> q=<query> len=<body length> ct=<content-type>". */
static void echo_handler(void *ud, const hook_request_t *req, hook_response_t *resp)
{
    const char *ct = "";
    char *text = malloc(512);

    (void)ud;
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

    memset(f, 0, sizeof(*f));
    ck_assert_int_eq(uv_loop_init(&f->loop), 0);
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
    uv_async_init(&f->loop, &f->stop, on_stop);
    f->stop.data = f;
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

static int tcp_connect(int port)
{
    struct sockaddr_in a;
    struct timeval tv = {.tv_sec = 5};
    int fd = socket(AF_INET, SOCK_STREAM, 0);

    ck_assert_int_ge(fd, 0);
    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    ck_assert_int_eq(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
    return fd;
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
    fixture_t f;
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
    fixture_t f;
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
    fixture_t f;
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

START_TEST(test_malformed_request_gets_400)
{
    fixture_t f;
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
    fixture_t f;
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
    fixture_t f;
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
    fixture_t f;
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
    fixture_t f;
    hook_server_config_t cfg = {.max_connections = 1};
    client_t c1, c2;
    char body[256];

    fixture_start(&f, false, &cfg);
    client_open(&c1, f.port, NULL, 0, 0);
    client_send(&c1, "GET /1 HTTP/1.1\r\nHost: x\r\n\r\n", 28);
    ck_assert_int_eq(client_response(&c1, body, sizeof(body), NULL), 200);
    /* the second connection is accepted and reset at once: reading sees EOF or a reset */
    client_open(&c2, f.port, NULL, 0, 0);
    ck_assert_int_le(client_recv(&c2, body, sizeof(body)), 0);
    client_close(&c2);
    client_close(&c1);
    fixture_stop(&f);
}
END_TEST

START_TEST(test_tls_garbage_does_not_stall_loop)
{
    fixture_t f;
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
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_tls_keep_alive_two_requests);
    tcase_add_test(tc, test_tls12_accepted_old_versions_refused);
    tcase_add_test(tc, test_plain_pipelined_in_order);
    tcase_add_test(tc, test_malformed_request_gets_400);
    tcase_add_test(tc, test_oversized_body_gets_413);
    tcase_add_test(tc, test_oversized_headers_get_431);
    tcase_add_test(tc, test_slow_request_gets_408);
    tcase_add_test(tc, test_connection_limit);
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
