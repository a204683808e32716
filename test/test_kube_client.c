/* test_kube_client -- the request engine: pure helpers, and requests against a loopback server. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "kube/client.h"

#include "kube/client_int.h"
#include "kube_testsrv.h"

#include <check.h>
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const kube_resource_t configmaps = {"", "v1", "configmaps", true};
static const kube_resource_t leases = {"coordination.k8s.io", "v1", "leases", true};
static const kube_resource_t nodes = {NULL, "v1", "nodes", false};

/* ---- pure helpers -----------------------------------------------------------------------------
 */

static char *path_of(const kube_resource_t *res, const char *ns, const char *name, const char *sub)
{
    kube__str_t s;

    kube__str_init(&s, 4096);
    kube__path(&s, res, ns, name, sub);
    ck_assert(!s.failed);
    return s.p;
}

START_TEST(test_paths)
{
    char *p;

    p = path_of(&configmaps, "ns1", "cm", NULL);
    ck_assert_str_eq(p, "/api/v1/namespaces/ns1/configmaps/cm");
    free(p);
    p = path_of(&configmaps, NULL, NULL, NULL);
    ck_assert_str_eq(p, "/api/v1/configmaps");
    free(p);
    p = path_of(&leases, "kube-system", "sluice", "status");
    ck_assert_str_eq(p, "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/sluice/status");
    free(p);
    p = path_of(&nodes, "ignored", "n1", NULL);
    ck_assert_str_eq(p, "/api/v1/nodes/n1");
    free(p);
}
END_TEST

START_TEST(test_str_escape_and_ceiling)
{
    kube__str_t s;

    kube__str_init(&s, 64);
    kube__str_add_escaped(&s, "app in (a,b),tier!=x y~");
    ck_assert_str_eq(s.p, "app%20in%20%28a%2Cb%29%2Ctier%21%3Dx%20y~");
    kube__str_fini(&s);
    kube__str_init(&s, 4);
    kube__str_adds(&s, "abcd");
    ck_assert(!s.failed);
    kube__str_adds(&s, "e");
    ck_assert(s.failed);
    ck_assert_str_eq(s.p, "abcd");
    kube__str_fini(&s);
}
END_TEST

START_TEST(test_retry_after)
{
    ck_assert_int_eq(kube__retry_after(" 3\r\n", 4), 3);
    ck_assert_int_eq(kube__retry_after("0", 1), 0);
    ck_assert_int_eq(kube__retry_after("99999999999999999999", 20), 3600);
    ck_assert_int_eq(kube__retry_after("", 0), -1);
    ck_assert_int_eq(kube__retry_after("Wed, 21 Oct 2015 07:28:00 GMT", 29), -1);
    ck_assert_int_eq(kube__retry_after("5x", 2), -1);
    ck_assert_int_eq(kube__retry_after("-1", 2), -1);
}
END_TEST

START_TEST(test_event_parse)
{
    const char *ok = "{\"type\":\"MODIFIED\",\"object\":{\"kind\":\"ConfigMap\"}}";
    kube_event_type_t t;
    json_t *obj = NULL;
    err_msg_t msg;

    ck_assert_int_eq(kube__event_parse(ok, strlen(ok), &t, &obj, &msg), ERR_OK);
    ck_assert_int_eq(t, KUBE_EVENT_MODIFIED);
    ck_assert_str_eq(json_string_value(json_object_get(obj, "kind")), "ConfigMap");
    ck_assert_int_eq(obj->refcount, 1); /* the caller's only reference */
    json_decref(obj);
    ck_assert_int_eq(kube__event_parse("{\"type\":\"ADDED\"", 15, &t, &obj, &msg), ERR_PARSE);
    ck_assert_int_eq(kube__event_parse("{\"type\":\"NOPE\",\"object\":{}}", 27, &t, &obj, &msg),
                     ERR_PARSE);
    ck_assert_str_eq(msg.text, "watch event: type: unknown \"NOPE\"");
    ck_assert_int_eq(kube__event_parse("{\"type\":1,\"object\":{}}", 22, &t, &obj, &msg),
                     ERR_PARSE);
    ck_assert_int_eq(kube__event_parse("{\"type\":\"ADDED\",\"object\":[]}", 28, &t, &obj, &msg),
                     ERR_PARSE);
}
END_TEST

START_TEST(test_status_mapping)
{
    kube_result_t res;
    json_t *st = json_pack("{s:s, s:s, s:s, s:i}", "kind", "Status", "reason", "Conflict",
                           "message", "the object has been modified", "code", 409);

    ck_assert_int_eq(kube_status_err(200, NULL), ERR_OK);
    ck_assert_int_eq(kube_status_err(201, NULL), ERR_OK);
    ck_assert_int_eq(kube_status_err(404, NULL), ERR_NOT_FOUND);
    ck_assert_int_eq(kube_status_err(409, "Conflict"), ERR_CONFLICT);
    ck_assert_int_eq(kube_status_err(409, "AlreadyExists"), ERR_EXISTS);
    ck_assert_int_eq(kube_status_err(410, NULL), ERR_GONE);
    ck_assert_int_eq(kube_status_err(422, NULL), ERR_INVALID);
    ck_assert_int_eq(kube_status_err(400, NULL), ERR_INVALID);
    ck_assert_int_eq(kube_status_err(504, NULL), ERR_TIMEOUT);
    ck_assert_int_eq(kube_status_err(403, NULL), ERR_HTTP);
    ck_assert_int_eq(kube_status_err(500, NULL), ERR_HTTP);
    memset(&res, 0, sizeof(res));
    kube__result_from_http(&res, 409, st, "PUT /api/v1/namespaces/a/configmaps/b");
    ck_assert_int_eq(res.err, ERR_CONFLICT);
    ck_assert_str_eq(res.reason, "Conflict");
    ck_assert_str_eq(res.msg.text, "PUT /api/v1/namespaces/a/configmaps/b: the object has been "
                                   "modified (HTTP 409)");
    kube__result_from_http(&res, 502, NULL, "GET /x");
    ck_assert_int_eq(res.err, ERR_HTTP);
    ck_assert_str_eq(res.msg.text, "GET /x: HTTP 502");
    json_decref(st);
}
END_TEST

/* ---- against the loopback server
 * ----------------------------------------------------------------- */

typedef struct fx_s {
    uv_loop_t loop;
    testsrv_t srv;
    kube_config_t cfg;
    kube_client_t *client;
    int done, expect;
    int events[5];
    int logs;
    int closed;
    kube_result_t last;
    char last_body[512];
    char seen_ct[128], seen_auth[128], seen_body[256], seen_method[16], seen_target[256];
    int attempts_429;
    int rmw_gets, rmw_puts, rmw_fn_calls;
    kube_req_t *watch;
    bool cancel_in_event;
    uint64_t t0, t_done;
} fx_t;

static void on_log(void *data, const char *text)
{
    fx_t *fx = data;

    (void)text;
    fx->logs++;
}

static void on_closed(void *data)
{
    ((fx_t *)data)->closed++;
}

static void finish_if_done(fx_t *fx)
{
    if (fx->done == fx->expect) {
        kube_client_close(fx->client, on_closed, fx);
        testsrv_stop(&fx->srv);
    }
}

static void on_done(const kube_result_t *res, void *data)
{
    fx_t *fx = data;

    fx->last = *res;
    fx->last.body = NULL;
    fx->last_body[0] = '\0';
    if (res->body != NULL) {
        char *s = json_dumps(res->body, JSON_COMPACT | JSON_SORT_KEYS);

        snprintf(fx->last_body, sizeof(fx->last_body), "%s", s);
        free(s);
    }
    fx->done++;
    fx->t_done = uv_now(&fx->loop);
    finish_if_done(fx);
}

static void send_str(testsrv_conn_t *conn, const char *s)
{
    testsrv_send(conn, s, strlen(s));
}

static void handler(testsrv_t *srv, testsrv_conn_t *conn, const testsrv_req_t *req)
{
    fx_t *fx = srv->data;
    static const char big_line[] =
        "{\"type\":\"ADDED\",\"object\":{\"pad\":\""
        "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
        "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
        "\"}}\n";

    snprintf(fx->seen_method, sizeof(fx->seen_method), "%s", req->method);
    snprintf(fx->seen_target, sizeof(fx->seen_target), "%s", req->target);
    if (!testsrv_header(req, "Content-Type", fx->seen_ct, sizeof(fx->seen_ct)))
        fx->seen_ct[0] = '\0';
    if (!testsrv_header(req, "Authorization", fx->seen_auth, sizeof(fx->seen_auth)))
        fx->seen_auth[0] = '\0';
    snprintf(fx->seen_body, sizeof(fx->seen_body), "%.*s", (int)req->body_len, req->body);

    if (strstr(req->target, "/configmaps/missing")) {
        testsrv_reply(conn, 404, NULL,
                      "{\"kind\":\"Status\",\"status\":\"Failure\",\"reason\":\"NotFound\","
                      "\"message\":\"configmaps \\\"missing\\\" not found\",\"code\":404}");
    } else if (strstr(req->target, "/configmaps/busy")) {
        if (fx->attempts_429++ == 0)
            testsrv_reply(conn, 429, "Retry-After: 1\r\n",
                          "{\"kind\":\"Status\",\"reason\":\"TooManyRequests\",\"code\":429}");
        else
            testsrv_reply(conn, 200, NULL, "{\"kind\":\"ConfigMap\",\"data\":{\"k\":\"v\"}}");
    } else if (strstr(req->target, "/configmaps/rmw")) {
        char body[256];

        if (strcmp(req->method, "GET") == 0) {
            snprintf(body, sizeof(body),
                     "{\"kind\":\"ConfigMap\",\"metadata\":{\"resourceVersion\":\"%d\"}}",
                     ++fx->rmw_gets);
            testsrv_reply(conn, 200, NULL, body);
        } else if (fx->rmw_puts++ == 0) {
            testsrv_reply(conn, 409, NULL,
                          "{\"kind\":\"Status\",\"reason\":\"Conflict\",\"code\":409,"
                          "\"message\":\"the object has been modified\"}");
        } else {
            snprintf(body, sizeof(body), "%.*s", (int)req->body_len, req->body);
            testsrv_reply(conn, 200, NULL, body);
        }
    } else if (strstr(req->target, "/configmaps/slow")) {
        /* never answer: the client's timeout must fire */
    } else if (strstr(req->target, "watch=true") && strstr(req->target, "resourceVersion=7")) {
        testsrv_stream_begin(conn);
        send_str(conn, "{\"type\":\"ADDED\",\"object\":{\"n\":1}}\n{\"type\"");
        send_str(conn, ":\"MODIFIED\",\"object\":{\"n\":1}}\r\nnot json at all\n");
        testsrv_send(conn, big_line, sizeof(big_line) - 1);
        send_str(conn, "{\"type\":\"BOOKMARK\",\"object\":{}}\n");
        send_str(conn, "{\"type\":\"DELETED\",\"object\":{\"n\":1}}\n");
        testsrv_end(conn);
    } else if (strstr(req->target, "watch=true")) {
        /* an open stream with one event; the client cancels from inside its callback */
        testsrv_stream_begin(conn);
        send_str(conn, "{\"type\":\"ADDED\",\"object\":{\"n\":2}}\n");
    } else {
        testsrv_reply(conn, 200, NULL, "{\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"x\"}}");
    }
}

static void fx_init(fx_t *fx, const kube_client_opts_t *opts_in)
{
    kube_client_opts_t opts;
    char server[64];
    err_msg_t msg;

    memset(fx, 0, sizeof(*fx));
    ck_assert_int_eq(uv_loop_init(&fx->loop), 0);
    testsrv_start(&fx->srv, &fx->loop, handler, fx);
    kube_config_init(&fx->cfg);
    snprintf(server, sizeof(server), "http://127.0.0.1:%d", fx->srv.port);
    fx->cfg.server = strdup(server);
    fx->cfg.namespace_name = strdup("default");
    fx->cfg.token = strdup("s3cret");
    if (opts_in != NULL)
        opts = *opts_in;
    else
        memset(&opts, 0, sizeof(opts));
    opts.log = on_log;
    opts.log_data = fx;
    opts.http1 = true;
    ck_assert_int_eq(kube_client_new(&fx->loop, &fx->cfg, &opts, &fx->client, &msg), ERR_OK);
    fx->t0 = uv_now(&fx->loop);
}

static void fx_run(fx_t *fx)
{
    ck_assert_int_eq(uv_run(&fx->loop, UV_RUN_DEFAULT), 0);
    ck_assert_int_eq(fx->closed, 1);
    ck_assert_int_eq(uv_loop_close(&fx->loop), 0);
    kube_config_fini(&fx->cfg);
}

START_TEST(test_get_ok_and_not_found)
{
    fx_t fx;
    err_msg_t msg;

    fx_init(&fx, NULL);
    fx.expect = 1;
    ck_assert_int_eq(
        kube_get(fx.client, &configmaps, "ns1", "missing", NULL, on_done, &fx, NULL, &msg), ERR_OK);
    fx_run(&fx);
    ck_assert_int_eq(fx.last.err, ERR_NOT_FOUND);
    ck_assert_int_eq(fx.last.status, 404);
    ck_assert_str_eq(fx.last.msg.text, "GET /api/v1/namespaces/ns1/configmaps/missing: configmaps "
                                       "\"missing\" not found (HTTP 404)");
    ck_assert_str_eq(fx.seen_auth, "Bearer s3cret");
    ck_assert_int_eq(fx.last.http_version, 1); /* plain http: no ALPN, HTTP/1.1 */
    ck_assert(!fx.last.reused);
    ck_assert_str_eq(fx.seen_method, "GET");
}
END_TEST

static void on_done_then_rotate(const kube_result_t *res, void *data);

/* The service-account token is re-read when kubelet rotates it: the next request carries it. */
START_TEST(test_rotated_token_file_is_sent)
{
    char path[] = "/tmp/sluice-kube-token-XXXXXX";
    fx_t fx;
    err_msg_t msg;
    int fd;

    fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, "token-one\n", 10), 10);
    close(fd);
    fx_init(&fx, NULL);
    free(fx.cfg.token);
    fx.cfg.token = NULL;
    fx.cfg.token_file = strdup(path);
    fx.expect = 2;
    ck_assert_int_eq(
        kube_get(fx.client, &configmaps, "ns1", "x", NULL, on_done_then_rotate, &fx, NULL, &msg),
        ERR_OK);
    fx_run(&fx);
    ck_assert_str_eq(fx.seen_auth, "Bearer token-two-rotated");
    unlink(path);
}
END_TEST

static void on_done_then_rotate(const kube_result_t *res, void *data)
{
    fx_t *fx = data;
    err_msg_t msg;
    FILE *f;

    ck_assert_str_eq(fx->seen_auth, "Bearer token-one");
    f = fopen(fx->cfg.token_file, "w");
    ck_assert_ptr_nonnull(f);
    fputs("token-two-rotated\n", f); /* another size: seen as changed even within one mtime tick */
    fclose(f);
    ck_assert_int_eq(kube_get(fx->client, &configmaps, "ns1", "x", NULL, on_done, fx, NULL, &msg),
                     ERR_OK);
    fx->done++;
    (void)res;
}

START_TEST(test_write_methods_and_content_types)
{
    json_t *obj = json_pack("{s:s}", "kind", "ConfigMap");
    fx_t fx;
    err_msg_t msg;

    fx_init(&fx, NULL);
    fx.expect = 1;
    ck_assert_int_eq(kube_patch(fx.client, &configmaps, "ns1", "x", "status", KUBE_PATCH_MERGE, obj,
                                on_done, &fx, NULL, &msg),
                     ERR_OK);
    fx_run(&fx);
    ck_assert_int_eq(fx.last.err, ERR_OK);
    ck_assert_str_eq(fx.seen_method, "PATCH");
    ck_assert_str_eq(fx.seen_target, "/api/v1/namespaces/ns1/configmaps/x/status");
    ck_assert_str_eq(fx.seen_ct, "application/merge-patch+json");
    ck_assert_str_eq(fx.seen_body, "{\"kind\":\"ConfigMap\"}");
    ck_assert_str_eq(fx.last_body, "{\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"x\"}}");

    fx_init(&fx, NULL);
    fx.expect = 1;
    ck_assert_int_eq(kube_patch(fx.client, &configmaps, "ns1", "x", NULL, KUBE_PATCH_JSON, obj,
                                on_done, &fx, NULL, &msg),
                     ERR_OK);
    fx_run(&fx);
    ck_assert_str_eq(fx.seen_ct, "application/json-patch+json");

    fx_init(&fx, NULL);
    fx.expect = 1;
    ck_assert_int_eq(
        kube_update(fx.client, &configmaps, "ns1", "x", NULL, obj, on_done, &fx, NULL, &msg),
        ERR_OK);
    fx_run(&fx);
    ck_assert_str_eq(fx.seen_method, "PUT");
    ck_assert_str_eq(fx.seen_ct, "application/json");

    fx_init(&fx, NULL);
    fx.expect = 1;
    ck_assert_int_eq(
        kube_delete(fx.client, &configmaps, "ns1", "x", "42", on_done, &fx, NULL, &msg), ERR_OK);
    fx_run(&fx);
    ck_assert_str_eq(fx.seen_method, "DELETE");
    ck_assert_ptr_nonnull(strstr(fx.seen_body, "\"preconditions\":{\"resourceVersion\":\"42\"}"));

    fx_init(&fx, NULL);
    fx.expect = 1;
    {
        kube_list_opts_t lo = {"app=a b", NULL, NULL, "tok/=", 1};

        ck_assert_int_eq(kube_list(fx.client, &configmaps, NULL, &lo, on_done, &fx, NULL, &msg),
                         ERR_OK);
    }
    fx_run(&fx);
    ck_assert_str_eq(fx.seen_target,
                     "/api/v1/configmaps?labelSelector=app%3Da%20b&continue=tok%2F%3D&limit=1");
    json_decref(obj);
}
END_TEST

START_TEST(test_429_retry_after_honoured)
{
    fx_t fx;
    err_msg_t msg;
    uint64_t elapsed;

    fx_init(&fx, NULL);
    fx.expect = 1;
    ck_assert_int_eq(
        kube_get(fx.client, &configmaps, "ns1", "busy", NULL, on_done, &fx, NULL, &msg), ERR_OK);
    fx_run(&fx);
    ck_assert_int_eq(fx.last.err, ERR_OK);
    ck_assert_int_eq(fx.attempts_429, 2);
    ck_assert_int_eq(fx.logs, 1); /* the retry is logged */
    ck_assert_str_eq(fx.last_body, "{\"data\":{\"k\":\"v\"},\"kind\":\"ConfigMap\"}");
    elapsed = fx.t_done - fx.t0;
    ck_assert_uint_ge(elapsed, 990);
    ck_assert_uint_lt(elapsed, 5000);
}
END_TEST

START_TEST(test_timeout)
{
    kube_client_opts_t o;
    fx_t fx;
    err_msg_t msg;

    memset(&o, 0, sizeof(o));
    o.timeout_ms = 200;
    fx_init(&fx, &o);
    fx.expect = 1;
    ck_assert_int_eq(
        kube_get(fx.client, &configmaps, "ns1", "slow", NULL, on_done, &fx, NULL, &msg), ERR_OK);
    fx_run(&fx);
    ck_assert_int_eq(fx.last.err, ERR_TIMEOUT);
    ck_assert_int_eq(fx.last.status, 0);
}
END_TEST

START_TEST(test_per_request_timeout)
{
    kube_req_t *req = NULL;
    fx_t fx;
    err_msg_t msg;

    fx_init(&fx, NULL); /* default timeout 30 s */
    fx.expect = 1;
    ck_assert_int_eq(
        kube_get(fx.client, &configmaps, "ns1", "slow", NULL, on_done, &fx, &req, &msg), ERR_OK);
    kube_req_set_timeout(req, 150);
    fx_run(&fx);
    ck_assert_int_eq(fx.last.err, ERR_TIMEOUT);
    ck_assert_uint_lt(fx.t_done - fx.t0, 5000);
}
END_TEST

START_TEST(test_rate_limit_paces_requests)
{
    kube_client_opts_t o;
    fx_t fx;
    err_msg_t msg;

    memset(&o, 0, sizeof(o));
    o.qps_milli = 10000; /* 10 QPS */
    o.burst = 1;
    fx_init(&fx, &o);
    fx.expect = 4;
    for (int i = 0; i < 4; i++)
        ck_assert_int_eq(
            kube_get(fx.client, &configmaps, "ns1", "x", NULL, on_done, &fx, NULL, &msg), ERR_OK);
    fx_run(&fx);
    ck_assert_int_eq(fx.srv.requests, 4);
    ck_assert_uint_ge(fx.t_done - fx.t0, 295); /* 3 waits of 100 ms */
    ck_assert_uint_lt(fx.t_done - fx.t0, 5000);
}
END_TEST

/* Issue 15: the client's FIFO had no bound. Beyond max_requests (queued or in flight) a request
 * is refused at once (ERR_OVERFLOW, nothing queued, its callback never fires); room comes back
 * as requests finish. */
START_TEST(test_queue_is_bounded)
{
    kube_client_opts_t o;
    fx_t fx;
    err_msg_t msg;

    memset(&o, 0, sizeof(o));
    o.qps_milli = 10000;
    o.burst = 1;
    o.max_requests = 3;
    fx_init(&fx, &o);
    fx.expect = 4;
    for (int i = 0; i < 3; i++)
        ck_assert_int_eq(
            kube_get(fx.client, &configmaps, "ns1", "x", NULL, on_done, &fx, NULL, &msg), ERR_OK);
    ck_assert_int_eq(kube_get(fx.client, &configmaps, "ns1", "x", NULL, on_done, &fx, NULL, &msg),
                     ERR_OVERFLOW);
    ck_assert_ptr_nonnull(strstr(msg.text, "3 requests queued or in flight"));
    ck_assert_uint_eq(kube_client_queued(fx.client), 3);
    while (fx.done < 3)
        uv_run(&fx.loop, UV_RUN_ONCE);
    ck_assert_uint_eq(kube_client_queued(fx.client), 0);
    ck_assert_int_eq(kube_get(fx.client, &configmaps, "ns1", "x", NULL, on_done, &fx, NULL, &msg),
                     ERR_OK);
    fx_run(&fx);
    ck_assert_int_eq(fx.srv.requests, 4);
}
END_TEST

static void on_event(kube_event_type_t type, json_t *obj, void *data)
{
    fx_t *fx = data;

    ck_assert_ptr_nonnull(obj);
    fx->events[type]++;
    if (fx->cancel_in_event)
        kube_req_cancel(fx->watch);
}

START_TEST(test_watch_skips_bad_lines)
{
    kube_client_opts_t o;
    kube_watch_opts_t wo = {NULL, NULL, "7", true, 30};
    fx_t fx;
    err_msg_t msg;

    memset(&o, 0, sizeof(o));
    o.watch_line_max = 100;
    fx_init(&fx, &o);
    fx.expect = 1;
    ck_assert_int_eq(
        kube_watch(fx.client, &configmaps, "ns1", &wo, on_event, on_done, &fx, &fx.watch, &msg),
        ERR_OK);
    fx_run(&fx);
    ck_assert_int_eq(fx.last.err, ERR_OK);
    ck_assert(!fx.last.canceled);
    ck_assert_int_eq(fx.events[KUBE_EVENT_ADDED], 1);
    ck_assert_int_eq(fx.events[KUBE_EVENT_MODIFIED], 1);
    ck_assert_int_eq(fx.events[KUBE_EVENT_BOOKMARK], 1);
    ck_assert_int_eq(fx.events[KUBE_EVENT_DELETED], 1);
    ck_assert_int_eq(fx.logs, 2); /* the malformed and the over-long line */
    ck_assert_str_eq(fx.seen_target,
                     "/api/v1/namespaces/ns1/configmaps?watch=true&"
                     "resourceVersion=7&allowWatchBookmarks=true&timeoutSeconds=30");
}
END_TEST

START_TEST(test_watch_cancel_from_event)
{
    fx_t fx;
    err_msg_t msg;

    fx_init(&fx, NULL);
    fx.expect = 1;
    fx.cancel_in_event = true;
    ck_assert_int_eq(
        kube_watch(fx.client, &configmaps, "ns1", NULL, on_event, on_done, &fx, &fx.watch, &msg),
        ERR_OK);
    fx_run(&fx);
    ck_assert(fx.last.canceled);
    ck_assert_int_eq(fx.events[KUBE_EVENT_ADDED], 1);
}
END_TEST

static err_t mutate(json_t *obj, void *data, bool *changed, err_msg_t *msg)
{
    fx_t *fx = data;

    (void)msg;
    fx->rmw_fn_calls++;
    *changed = true;
    return json_object_set_new(obj, "data", json_pack("{s:s}", "k", "v")) ? ERR_NOMEM : ERR_OK;
}

START_TEST(test_update_retry_rereads_on_conflict)
{
    fx_t fx;
    err_msg_t msg;

    fx_init(&fx, NULL);
    fx.expect = 1;
    ck_assert_int_eq(kube_update_retry(fx.client, &configmaps, "ns1", "rmw", NULL, mutate, 0,
                                       on_done, &fx, &msg),
                     ERR_OK);
    fx_run(&fx);
    ck_assert_int_eq(fx.last.err, ERR_OK);
    ck_assert_int_eq(fx.rmw_gets, 2);
    ck_assert_int_eq(fx.rmw_puts, 2);
    ck_assert_int_eq(fx.rmw_fn_calls, 2);
    /* The second write carries the re-read resourceVersion, not the stale one. */
    ck_assert_str_eq(fx.last_body, "{\"data\":{\"k\":\"v\"},\"kind\":\"ConfigMap\","
                                   "\"metadata\":{\"resourceVersion\":\"2\"}}");
}
END_TEST

static void on_done_count(const kube_result_t *res, void *data)
{
    fx_t *fx = data;

    if (res->canceled)
        fx->done++;
}

START_TEST(test_close_cancels_everything)
{
    kube_client_opts_t o;
    fx_t fx;
    err_msg_t msg;
    kube_req_t *req = NULL;

    memset(&o, 0, sizeof(o));
    o.qps_milli = 1000;
    o.burst = 1;
    fx_init(&fx, &o);
    /* One active (never answered), one held back by the rate limit, one open watch. */
    ck_assert_int_eq(
        kube_get(fx.client, &configmaps, "ns1", "slow", NULL, on_done_count, &fx, &req, &msg),
        ERR_OK);
    ck_assert_ptr_nonnull(req);
    ck_assert_int_eq(
        kube_get(fx.client, &configmaps, "ns1", "slow", NULL, on_done_count, &fx, NULL, &msg),
        ERR_OK);
    ck_assert_int_eq(uv_run(&fx.loop, UV_RUN_NOWAIT), 1);
    kube_client_close(fx.client, on_closed, &fx);
    ck_assert_int_eq(fx.done, 2); /* synchronously */
    ck_assert_int_eq(
        kube_get(fx.client, &configmaps, "ns1", "x", NULL, on_done_count, &fx, NULL, &msg),
        ERR_INVALID); /* closing: refused */
    testsrv_stop(&fx.srv);
    fx_run(&fx);
}
END_TEST

/* libcurl's allocations, counted and failed by the test (curl_global_init_mem in main()). */
static long curl_allocs, curl_fail_at;

static bool curl_fails(void)
{
    return ++curl_allocs == curl_fail_at;
}

static void *curl_malloc(size_t n)
{
    return curl_fails() ? NULL : malloc(n);
}

static void *curl_calloc(size_t n, size_t size)
{
    return curl_fails() ? NULL : calloc(n, size);
}

static void *curl_realloc(void *p, size_t n)
{
    return curl_fails() ? NULL : realloc(p, n);
}

static char *curl_strdup(const char *str)
{
    size_t n = strlen(str) + 1;
    char *d = curl_malloc(n);

    return d == NULL ? NULL : memcpy(d, str, n);
}

static void on_done_any(const kube_result_t *res, void *data)
{
    fx_t *fx = data;

    fx->last.err = res->err;
    fx->done++;
}

static void on_tick(uv_timer_t *t)
{
    (void)t;
}

/* Run until `n` requests of fx are done, at most 5 s (the requests' own timeout is 30 s). */
static bool run_until_done(fx_t *fx, int n)
{
    uint64_t end = uv_now(&fx->loop) + 5000;

    while (fx->done < n && uv_now(&fx->loop) < end)
        uv_run(&fx->loop, UV_RUN_ONCE);
    return fx->done >= n;
}

/*
 * Each of libcurl's allocations while two GETs run fails in turn: both complete at once (an
 * answer or an error, never a wait for their timeout) and the client then serves a third.
 * libcurl 7.88 strands a socket, or keeps a table that divides by zero on its next use, when
 * some of them fail inside curl_multi_socket_action(); the client replaces its multi handle
 * (reset_transport, docs/reliability.md).
 */
START_TEST(test_curl_allocation_failures_never_hang)
{
    uv_timer_t tick;
    long n, made;

    for (n = 1;; n++) {
        fx_t fx;
        err_msg_t msg;

        fx_init(&fx, NULL);
        uv_timer_init(&fx.loop, &tick);
        uv_timer_start(&tick, on_tick, 10, 10);
        curl_allocs = 0;
        curl_fail_at = n;
        ck_assert_int_eq(
            kube_get(fx.client, &configmaps, "ns1", "a", NULL, on_done_any, &fx, NULL, &msg),
            ERR_OK);
        ck_assert_int_eq(
            kube_get(fx.client, &configmaps, "ns1", "b", NULL, on_done_any, &fx, NULL, &msg),
            ERR_OK);
        ck_assert_msg(run_until_done(&fx, 2), "allocation %ld of libcurl failed: %d of 2 done", n,
                      fx.done);
        made = curl_allocs;
        curl_fail_at = 0;
        ck_assert_int_eq(
            kube_get(fx.client, &configmaps, "ns1", "c", NULL, on_done_any, &fx, NULL, &msg),
            ERR_OK);
        ck_assert_msg(run_until_done(&fx, 3), "allocation %ld: the next request hangs", n);
        ck_assert_msg(fx.last.err == ERR_OK, "allocation %ld: the next request failed", n);
        uv_close((uv_handle_t *)&tick, NULL);
        kube_client_close(fx.client, on_closed, &fx);
        testsrv_stop(&fx.srv);
        fx_run(&fx);
        if (made < n)
            break; /* nothing failed: every allocation has been failed once */
    }
    ck_assert_int_gt(n, 50);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("kube_client");
    TCase *pure = tcase_create("pure"), *net = tcase_create("loopback"), *oom = tcase_create("oom");
    SRunner *sr;
    int failed;

    curl_global_init_mem(CURL_GLOBAL_DEFAULT, curl_malloc, free, curl_realloc, curl_strdup,
                         curl_calloc);
    tcase_add_test(pure, test_paths);
    tcase_add_test(pure, test_str_escape_and_ceiling);
    tcase_add_test(pure, test_retry_after);
    tcase_add_test(pure, test_event_parse);
    tcase_add_test(pure, test_status_mapping);
    tcase_set_timeout(net, 20);
    tcase_add_test(net, test_get_ok_and_not_found);
    tcase_add_test(net, test_write_methods_and_content_types);
    tcase_add_test(net, test_rotated_token_file_is_sent);
    tcase_add_test(net, test_429_retry_after_honoured);
    tcase_add_test(net, test_timeout);
    tcase_add_test(net, test_per_request_timeout);
    tcase_add_test(net, test_rate_limit_paces_requests);
    tcase_add_test(net, test_queue_is_bounded);
    tcase_add_test(net, test_watch_skips_bad_lines);
    tcase_add_test(net, test_watch_cancel_from_event);
    tcase_add_test(net, test_close_cancels_everything);
    tcase_add_test(net, test_update_retry_rereads_on_conflict);
    tcase_add_test(oom, test_curl_allocation_failures_never_hang);
    tcase_set_timeout(oom, 300);
    suite_add_tcase(s, oom);
    suite_add_tcase(s, pure);
    suite_add_tcase(s, net);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    curl_global_cleanup();
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
