/* test_kube_informer -- cache diffing and indexes (pure), and list/watch/410/relist on loopback. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "kube/informer.h"

#include "kube/informer_int.h"
#include "kube_testsrv.h"

#include <check.h>
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Every handler call appends "add:key@rv", "upd:key@old>new" or "del:key@rv" to a log. */
typedef struct rec_s {
    char log[2048];
    int synced;
} rec_t;

static void logf_(rec_t *r, const char *what, json_t *obj, json_t *old)
{
    char key[256];
    size_t used = strlen(r->log);

    ck_assert_int_eq(kube_object_key(obj, key, sizeof(key)), ERR_OK);
    if (old != NULL)
        snprintf(r->log + used, sizeof(r->log) - used, "%s:%s@%s>%s ", what, key,
                 kube_object_rv(old), kube_object_rv(obj));
    else
        snprintf(r->log + used, sizeof(r->log) - used, "%s:%s@%s ", what, key, kube_object_rv(obj));
}

static void on_add(kube_informer_t *inf, json_t *obj, void *data)
{
    (void)inf;
    logf_(data, "add", obj, NULL);
}

static void on_update(kube_informer_t *inf, json_t *old, json_t *obj, void *data)
{
    (void)inf;
    logf_(data, "upd", obj, old);
}

static void on_delete(kube_informer_t *inf, json_t *obj, void *data)
{
    (void)inf;
    logf_(data, "del", obj, NULL);
}

static void on_synced(kube_informer_t *inf, void *data)
{
    (void)inf;
    ((rec_t *)data)->synced++;
}

static void on_error(kube_informer_t *inf, const kube_result_t *res, const char *verb, void *data)
{
    rec_t *r = data;
    size_t used = strlen(r->log);

    (void)inf;
    if (res != NULL)
        snprintf(r->log + used, sizeof(r->log) - used, "err:%s:%ld ", verb, res->status);
    else
        snprintf(r->log + used, sizeof(r->log) - used, "ok:%s ", verb);
}

static const kube_informer_handlers_t handlers = {on_add, on_update, on_delete, on_synced,
                                                  on_error};

static json_t *obj(const char *ns, const char *name, const char *rv, const char *team)
{
    json_t *o = json_pack("{s:s, s:{s:s, s:s}}", "kind", "ConfigMap", "metadata", "name", name,
                          "resourceVersion", rv);

    ck_assert_ptr_nonnull(o);
    if (ns != NULL)
        json_object_set_new(json_object_get(o, "metadata"), "namespace", json_string(ns));
    if (team != NULL)
        json_object_set_new(json_object_get(o, "metadata"), "labels",
                            json_pack("{s:s}", "team", team));
    return o;
}

START_TEST(test_object_key)
{
    char key[16];
    json_t *o = obj("ns", "name", "1", NULL), *c = obj(NULL, "node1", "1", NULL);

    ck_assert_int_eq(kube_object_key(o, key, sizeof(key)), ERR_OK);
    ck_assert_str_eq(key, "ns/name");
    ck_assert_int_eq(kube_object_key(c, key, sizeof(key)), ERR_OK);
    ck_assert_str_eq(key, "node1");
    ck_assert_int_eq(kube_object_key(o, key, 7), ERR_OVERFLOW);
    ck_assert_int_eq(kube_object_key(json_object_get(o, "kind"), key, sizeof(key)), ERR_INVALID);
    json_decref(o);
    json_decref(c);
}
END_TEST

/* A typed codec for the cache tests: the value is the object's name@rv as a string, and every
 * decode and free is counted. */
typedef struct tcodec_s {
    int decoded, freed;
    char log[1024];
} tcodec_t;

static void *t_decode(json_t *o, void *data)
{
    tcodec_t *t = data;
    char buf[128];

    t->decoded++;
    snprintf(buf, sizeof(buf), "%s@%s",
             json_string_value(json_object_get(json_object_get(o, "metadata"), "name")),
             kube_object_rv(o));
    return strdup(buf);
}

static void t_free(void *v, void *data)
{
    ((tcodec_t *)data)->freed++;
    free(v);
}

static void t_log(tcodec_t *t, const char *what, const char *key, const char *v, json_t *raw)
{
    size_t used = strlen(t->log);

    snprintf(t->log + used, sizeof(t->log) - used, "%s:%s=%s%s ", what, key, v,
             raw ? "" : "(no raw)");
}

static void t_add(kube_informer_t *inf, const char *key, void *v, json_t *raw, void *data)
{
    (void)inf;
    t_log(data, "add", key, v, raw);
}

static void t_update(kube_informer_t *inf, const char *key, void *old, void *v, json_t *raw,
                     void *data)
{
    (void)inf, (void)old;
    t_log(data, "upd", key, v, raw);
}

static void t_delete(kube_informer_t *inf, const char *key, void *old, json_t *raw, void *data)
{
    (void)inf;
    t_log(data, "del", key, old, raw);
}

static const kube_informer_typed_handlers_t thandlers = {t_add, t_update, t_delete, NULL, NULL};

START_TEST(test_watch_events_deduplicated)
{
    kube__cache_t cache;
    tcodec_t t = {0, 0, ""};
    kube_codec_t codec = {t_decode, t_free, &t};
    json_t *a1 = obj("ns", "a", "1", "x"), *a1again = obj("ns", "a", "1", "x");
    json_t *a2 = obj("ns", "a", "2", "y"), *gone = obj("ns", "zz", "3", NULL);
    err_msg_t msg;

    ck_assert_int_eq(kube__cache_init(&cache, &codec, &thandlers, NULL, &t), ERR_OK);
    ck_assert_int_eq(kube__cache_apply(&cache, KUBE_EVENT_ADDED, a1, &msg), ERR_OK);
    ck_assert_int_eq(kube__cache_apply(&cache, KUBE_EVENT_ADDED, a1again, &msg), ERR_OK);
    ck_assert_int_eq(kube__cache_apply(&cache, KUBE_EVENT_MODIFIED, a1again, &msg), ERR_OK);
    /* A replayed version is neither reported nor decoded again. */
    ck_assert_int_eq(t.decoded, 1);
    ck_assert_int_eq(kube__cache_apply(&cache, KUBE_EVENT_MODIFIED, a2, &msg), ERR_OK);
    ck_assert_int_eq(kube__cache_apply(&cache, KUBE_EVENT_DELETED, gone, &msg), ERR_OK);
    ck_assert_int_eq(kube__cache_apply(&cache, KUBE_EVENT_DELETED, a2, &msg), ERR_OK);
    ck_assert_int_eq(kube__cache_apply(&cache, KUBE_EVENT_DELETED, a2, &msg), ERR_OK);
    ck_assert_int_eq(kube__cache_apply(&cache, KUBE_EVENT_BOOKMARK, a2, &msg), ERR_OK);
    ck_assert_int_eq(kube__cache_apply(&cache, KUBE_EVENT_ADDED, json_object_get(a1, "kind"), &msg),
                     ERR_INVALID);
    ck_assert_str_eq(t.log, "add:ns/a=a@1 upd:ns/a=a@2 del:ns/a=a@2 ");
    ck_assert_uint_eq(util_hmap_len(&cache.items), 0);
    kube__cache_fini(&cache);
    /* Every decoded value was freed exactly once. */
    ck_assert_int_eq(t.decoded, 2);
    ck_assert_int_eq(t.freed, 2);
    json_decref(a1);
    json_decref(a1again);
    json_decref(a2);
    json_decref(gone);
}
END_TEST

/* resourceVersions are compared as the server wrote them: etcd's decimal revisions are kept as
 * numbers, anything else (leading zeros, letters, past 64 bits) as text, and never equal to a
 * number of the same value. */
START_TEST(test_resource_version_forms)
{
    static const char *seq[][2] = {
        {"7", "add:ns/a=a@7 "},
        {"7", ""},
        {"007", "upd:ns/a=a@007 "}, /* not the number 7 */
        {"007", ""},
        {"7", "upd:ns/a=a@7 "},
        {"18446744073709551615", "upd:ns/a=a@18446744073709551615 "},
        {"18446744073709551615", ""},
        {"18446744073709551616", "upd:ns/a=a@18446744073709551616 "}, /* past 64 bits: text */
        {"18446744073709551616", ""},
        {"abc", "upd:ns/a=a@abc "},
        {"abc", ""},
        {"", "upd:ns/a=a@ "},
        {"", ""},
        {"0", "upd:ns/a=a@0 "},
        {"0", ""},
    };
    kube__cache_t cache;
    tcodec_t t = {0, 0, ""};
    kube_codec_t codec = {t_decode, t_free, &t};
    err_msg_t msg;

    ck_assert_int_eq(kube__cache_init(&cache, &codec, &thandlers, NULL, &t), ERR_OK);
    for (size_t i = 0; i < sizeof(seq) / sizeof(seq[0]); i++) {
        json_t *o = obj("ns", "a", seq[i][0], "x");
        t.log[0] = '\0';
        ck_assert_int_eq(kube__cache_apply(&cache, KUBE_EVENT_MODIFIED, o, &msg), ERR_OK);
        ck_assert_msg(strcmp(t.log, seq[i][1]) == 0, "step %zu (%s): %s", i, seq[i][0], t.log);
        json_decref(o);
    }
    {
        size_t pos = 0;
        const char *key = NULL;
        void *e = NULL;
        ck_assert(util_hmap_next(&cache.items, &pos, &key, &e));
        ck_assert_str_eq(key, "ns/a");
        ck_assert_ptr_eq(key, ((kube__entry_t *)e)->key); /* the entry holds its own key */
        ck_assert_str_eq(((kube__entry_t *)e)->value, "a@0");
    }
    kube__cache_fini(&cache);
    ck_assert_int_eq(t.freed, t.decoded);
}
END_TEST

START_TEST(test_relist_diff)
{
    kube__cache_t cache;
    tcodec_t t = {0, 0, ""};
    kube_codec_t codec = {t_decode, t_free, &t};
    json_t *first = json_array(), *page1 = json_array(), *page2 = json_array();
    json_t *noname = json_pack("{s:{}}", "metadata");
    err_msg_t msg;

    json_array_append_new(first, obj("ns", "keep", "5", "x"));
    json_array_append_new(first, obj("ns", "change", "6", "x"));
    json_array_append_new(first, obj("ns", "vanish", "7", "x"));
    json_array_append_new(page1, obj("ns", "change", "9", "y"));
    json_array_append_new(page1, obj("ns", "keep", "5", "x"));
    json_array_append_new(page2, obj("ns", "new", "10", "y"));
    json_array_append(page2, noname);
    ck_assert_int_eq(kube__cache_init(&cache, &codec, &thandlers, NULL, &t), ERR_OK);
    kube__cache_list_begin(&cache);
    ck_assert_int_eq(kube__cache_list_page(&cache, first, &msg), ERR_OK);
    kube__cache_list_end(&cache);
    ck_assert_str_eq(t.log, "add:ns/keep=keep@5 add:ns/change=change@6 add:ns/vanish=vanish@7 ");
    t.log[0] = '\0';
    /* A relist in two pages: adds and updates as the pages come, deletions at the end. */
    kube__cache_list_begin(&cache);
    ck_assert_int_eq(kube__cache_list_page(&cache, page1, &msg), ERR_OK);
    ck_assert_str_eq(t.log, "upd:ns/change=change@9 ");
    ck_assert_int_eq(kube__cache_list_page(&cache, page2, &msg), ERR_OK);
    kube__cache_list_end(&cache);
    ck_assert_str_eq(t.log,
                     "upd:ns/change=change@9 add:ns/new=new@10 del:ns/vanish=vanish@7(no raw) ");
    ck_assert_uint_eq(util_hmap_len(&cache.items), 3);
    /* The same list again changes nothing and decodes nothing. */
    t.log[0] = '\0';
    t.decoded = 0;
    kube__cache_list_begin(&cache);
    ck_assert_int_eq(kube__cache_list_page(&cache, page1, &msg), ERR_OK);
    ck_assert_int_eq(kube__cache_list_page(&cache, page2, &msg), ERR_OK);
    kube__cache_list_end(&cache);
    ck_assert_str_eq(t.log, "");
    ck_assert_int_eq(t.decoded, 0);
    kube__cache_fini(&cache);
    ck_assert_int_eq(t.freed, 5);
    json_decref(first);
    json_decref(page1);
    json_decref(page2);
    json_decref(noname);
}
END_TEST

/* ---- the informer against a scripted server
 * ------------------------------------------------------ */

typedef struct ifx_s {
    uv_loop_t loop;
    testsrv_t srv;
    kube_config_t cfg;
    kube_client_t *client;
    kube_informer_t *inf;
    rec_t rec;
    int lists, watches, closed;
    char watch_targets[1024];
} ifx_t;

static void ifx_closed(void *data)
{
    ((ifx_t *)data)->closed++;
}

static void ifx_stop(ifx_t *fx)
{
    kube_informer_close(fx->inf, ifx_closed, fx);
    kube_client_close(fx->client, ifx_closed, fx);
    testsrv_stop(&fx->srv);
}

static void send_str(testsrv_conn_t *conn, const char *s)
{
    testsrv_send(conn, s, strlen(s));
}

/*
 * Script: LIST page 1 (a, b; continue) -> page 2 (c) at rv 10 -> WATCH from 10: MODIFIED a,
 * BOOKMARK 12, then ERROR 410 -> LIST (a@11, c@3, d@13 at rv 20: b vanished, d is new) ->
 * WATCH from 20 stays open until the test stops everything.
 */
static void ihandler(testsrv_t *srv, testsrv_conn_t *conn, const testsrv_req_t *req)
{
    ifx_t *fx = srv->data;
    char body[1024], a[128], a11[128], b[128], c[128], d[128];

#define ITEM "{\"metadata\":{\"namespace\":\"ns\",\"name\":\"%s\",\"resourceVersion\":\"%s\"}}"
    snprintf(a, sizeof(a), ITEM, "a", "1");
    snprintf(a11, sizeof(a11), ITEM, "a", "11");
    snprintf(b, sizeof(b), ITEM, "b", "2");
    snprintf(c, sizeof(c), ITEM, "c", "3");
    snprintf(d, sizeof(d), ITEM, "d", "13");
#undef ITEM
    if (strstr(req->target, "watch=true") == NULL) {
        ck_assert_ptr_nonnull(strstr(req->target, "limit=2"));
        if (strstr(req->target, "continue=") == NULL && fx->lists == 0) {
            snprintf(body, sizeof(body),
                     "{\"kind\":\"ConfigMapList\",\"metadata\":{\"resourceVersion\":\"10\","
                     "\"continue\":\"p2\"},\"items\":[%s,%s]}",
                     a, b);
        } else if (fx->lists == 0) {
            ck_assert_ptr_nonnull(strstr(req->target, "continue=p2"));
            fx->lists++;
            snprintf(body, sizeof(body),
                     "{\"kind\":\"ConfigMapList\",\"metadata\":{\"resourceVersion\":\"10\"},"
                     "\"items\":[%s]}",
                     c);
        } else {
            fx->lists++;
            snprintf(body, sizeof(body),
                     "{\"kind\":\"ConfigMapList\",\"metadata\":{\"resourceVersion\":\"20\"},"
                     "\"items\":[%s,%s,%s]}",
                     a11, c, d);
        }
        testsrv_reply(conn, 200, NULL, body);
        return;
    }
    fx->watches++;
    {
        size_t used = strlen(fx->watch_targets);
        const char *rv = strstr(req->target, "resourceVersion=");

        snprintf(fx->watch_targets + used, sizeof(fx->watch_targets) - used, "%.*s ",
                 (int)strcspn(rv, "&"), rv);
    }
    testsrv_stream_begin(conn);
    if (fx->watches == 1) {
        /* a@1 -> a@11 by event; the relist later sees a@11 again: no second update */
        snprintf(body, sizeof(body), "{\"type\":\"MODIFIED\",\"object\":%s}\n", a11);
        send_str(conn, body);
        send_str(conn, "{\"type\":\"BOOKMARK\",\"object\":{\"metadata\":{\"resourceVersion\":"
                       "\"12\"}}}\n");
        send_str(conn, "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"code\":410,"
                       "\"reason\":\"Expired\",\"message\":\"too old resource version\"}}\n");
        testsrv_end(conn);
    }
    /* the second watch stays open: the test inspects the state, then stops everything */
}

START_TEST(test_informer_pages_watches_and_relists_on_410)
{
    kube_informer_opts_t o;
    kube_informer_stats_t st;
    ifx_t fx;
    err_msg_t msg;
    char server[64];

    memset(&fx, 0, sizeof(fx));
    ck_assert_int_eq(uv_loop_init(&fx.loop), 0);
    testsrv_start(&fx.srv, &fx.loop, ihandler, &fx);
    kube_config_init(&fx.cfg);
    snprintf(server, sizeof(server), "http://127.0.0.1:%d", fx.srv.port);
    fx.cfg.server = strdup(server);
    {
        kube_client_opts_t co;

        memset(&co, 0, sizeof(co));
        co.http1 = true;
        ck_assert_int_eq(kube_client_new(&fx.loop, &fx.cfg, &co, &fx.client, &msg), ERR_OK);
    }
    memset(&o, 0, sizeof(o));
    o.ns = "ns";
    o.page_size = 2;
    o.seed = 1;
    {
        static const kube_resource_t cms = {"", "v1", "configmaps", true};

        fx.inf = kube_informer_new(fx.client, &cms, &o, &handlers, &fx.rec);
    }
    ck_assert_ptr_nonnull(fx.inf);
    ck_assert_int_eq(kube_informer_start(fx.inf, &msg), ERR_OK);
    ck_assert_int_eq(kube_informer_start(fx.inf, &msg), ERR_INVALID);
    /* Run until the script's second watch has started. */
    while (fx.watches < 2 && uv_run(&fx.loop, UV_RUN_ONCE) != 0)
        ;
    ck_assert_int_eq(fx.closed, 0);
    ck_assert_str_eq(fx.rec.log, "add:ns/a@1 add:ns/b@2 add:ns/c@3 upd:ns/a@1>11 "
                                 "add:ns/d@13 del:ns/b@2 ");
    ck_assert_int_eq(fx.rec.synced, 1);
    ck_assert_str_eq(fx.watch_targets, "resourceVersion=10 resourceVersion=20 ");
    ck_assert_str_eq(kube_informer_resource_version(fx.inf), "20");
    ck_assert_ptr_nonnull(kube_informer_get(fx.inf, "ns", "d"));
    ck_assert_ptr_null(kube_informer_get(fx.inf, "ns", "b"));
    ck_assert_uint_eq(kube_informer_len(fx.inf), 3);
    st = kube_informer_stats(fx.inf);
    ck_assert_uint_eq(st.lists, 2);
    ck_assert_uint_eq(st.gone, 1);
    ck_assert_uint_eq(st.watches, 2);
    ck_assert_uint_eq(st.backoffs, 0);
    ifx_stop(&fx);
    ck_assert_int_eq(uv_run(&fx.loop, UV_RUN_DEFAULT), 0);
    ck_assert_int_eq(fx.closed, 2);
    ck_assert_int_eq(uv_loop_close(&fx.loop), 0);
    kube_config_fini(&fx.cfg);
}
END_TEST

/* Script 2: LIST at rv 10 -> WATCH ends at once without events (a drop) -> backoff -> WATCH
 * answered 500 -> backoff -> WATCH stays open. Drops resume from rv 10 without a relist. */
static void dhandler(testsrv_t *srv, testsrv_conn_t *conn, const testsrv_req_t *req)
{
    ifx_t *fx = srv->data;
    size_t used = strlen(fx->watch_targets);

    if (strstr(req->target, "watch=true") == NULL) {
        fx->lists++;
        testsrv_reply(conn, 200, NULL,
                      "{\"kind\":\"ConfigMapList\",\"metadata\":{\"resourceVersion\":\"10\"},"
                      "\"items\":[]}");
        return;
    }
    fx->watches++;
    snprintf(fx->watch_targets + used, sizeof(fx->watch_targets) - used, "%.*s ",
             (int)strcspn(strstr(req->target, "resourceVersion="), "&"),
             strstr(req->target, "resourceVersion="));
    if (fx->watches == 1) {
        testsrv_stream_begin(conn);
        testsrv_end(conn);
    } else if (fx->watches == 2) {
        testsrv_reply(conn, 500, NULL,
                      "{\"kind\":\"Status\",\"code\":500,\"message\":\"etcd is sad\"}");
    } else {
        testsrv_stream_begin(conn);
    }
}

START_TEST(test_informer_backs_off_on_drops_without_relisting)
{
    static const kube_resource_t cms = {"", "v1", "configmaps", true};
    kube_informer_opts_t o;
    kube_client_opts_t co;
    kube_informer_stats_t st;
    ifx_t fx;
    err_msg_t msg;
    char server[64];
    uint64_t t0;

    memset(&fx, 0, sizeof(fx));
    ck_assert_int_eq(uv_loop_init(&fx.loop), 0);
    testsrv_start(&fx.srv, &fx.loop, dhandler, &fx);
    kube_config_init(&fx.cfg);
    snprintf(server, sizeof(server), "http://127.0.0.1:%d", fx.srv.port);
    fx.cfg.server = strdup(server);
    memset(&co, 0, sizeof(co));
    co.http1 = true;
    ck_assert_int_eq(kube_client_new(&fx.loop, &fx.cfg, &co, &fx.client, &msg), ERR_OK);
    memset(&o, 0, sizeof(o));
    o.backoff_base_ms = 100;
    o.seed = 42;
    fx.inf = kube_informer_new(fx.client, &cms, &o, &handlers, &fx.rec);
    ck_assert_ptr_nonnull(fx.inf);
    t0 = uv_now(&fx.loop);
    ck_assert_int_eq(kube_informer_start(fx.inf, &msg), ERR_OK);
    while (fx.watches < 3 && uv_run(&fx.loop, UV_RUN_ONCE) != 0)
        ;
    st = kube_informer_stats(fx.inf);
    ck_assert_uint_eq(st.lists, 1);
    ck_assert_uint_eq(st.backoffs, 2);
    ck_assert_uint_eq(st.gone, 0);
    ck_assert_str_eq(fx.watch_targets, "resourceVersion=10 resourceVersion=10 resourceVersion=10 ");
    /* A drop is routine; the 500 is a failure the owner hears about. */
    ck_assert_str_eq(fx.rec.log, "err:watch:500 ");
    /* 100 ms then 200 ms, each plus up to 100 % jitter. */
    ck_assert_uint_ge(uv_now(&fx.loop) - t0, 300);
    ck_assert_uint_le(uv_now(&fx.loop) - t0, 2000);
    ifx_stop(&fx);
    ck_assert_int_eq(uv_run(&fx.loop, UV_RUN_DEFAULT), 0);
    ck_assert_int_eq(fx.closed, 2);
    ck_assert_int_eq(uv_loop_close(&fx.loop), 0);
    kube_config_fini(&fx.cfg);
}
END_TEST

/* Script 3: LIST 404 (CRD not installed) -> LIST 403 (RBAC) -> LIST 200 -> WATCH with one
 * event. The owner hears each failure, then one recovery per verb that had failed. */
static void ehandler(testsrv_t *srv, testsrv_conn_t *conn, const testsrv_req_t *req)
{
    ifx_t *fx = srv->data;

    if (strstr(req->target, "watch=true") == NULL) {
        fx->lists++;
        if (fx->lists == 1)
            testsrv_reply(conn, 404, NULL,
                          "{\"kind\":\"Status\",\"code\":404,\"reason\":\"NotFound\","
                          "\"message\":\"the server could not find the requested resource\"}");
        else if (fx->lists == 2)
            testsrv_reply(conn, 403, NULL,
                          "{\"kind\":\"Status\",\"code\":403,\"reason\":\"Forbidden\","
                          "\"message\":\"widgets.example.com is forbidden\"}");
        else
            testsrv_reply(conn, 200, NULL,
                          "{\"kind\":\"WidgetList\",\"metadata\":{\"resourceVersion\":\"5\"},"
                          "\"items\":[]}");
        return;
    }
    fx->watches++;
    testsrv_stream_begin(conn);
    send_str(conn, "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"w\","
                   "\"resourceVersion\":\"6\"}}}\n");
}

START_TEST(test_informer_reports_failures_and_recovery)
{
    static const kube_resource_t widgets = {"example.com", "v1", "widgets", false};
    kube_informer_opts_t o;
    kube_client_opts_t co;
    ifx_t fx;
    err_msg_t msg;
    char server[64];

    memset(&fx, 0, sizeof(fx));
    ck_assert_int_eq(uv_loop_init(&fx.loop), 0);
    testsrv_start(&fx.srv, &fx.loop, ehandler, &fx);
    kube_config_init(&fx.cfg);
    snprintf(server, sizeof(server), "http://127.0.0.1:%d", fx.srv.port);
    fx.cfg.server = strdup(server);
    memset(&co, 0, sizeof(co));
    co.http1 = true;
    ck_assert_int_eq(kube_client_new(&fx.loop, &fx.cfg, &co, &fx.client, &msg), ERR_OK);
    memset(&o, 0, sizeof(o));
    o.backoff_base_ms = 20;
    o.seed = 7;
    fx.inf = kube_informer_new(fx.client, &widgets, &o, &handlers, &fx.rec);
    ck_assert_ptr_nonnull(fx.inf);
    ck_assert_int_eq(kube_informer_start(fx.inf, &msg), ERR_OK);
    while (strstr(fx.rec.log, "add:") == NULL && uv_run(&fx.loop, UV_RUN_ONCE) != 0)
        ;
    ck_assert_str_eq(fx.rec.log, "err:list:404 err:list:403 ok:list add:w@6 ");
    ck_assert_int_eq(fx.rec.synced, 1);
    ifx_stop(&fx);
    ck_assert_int_eq(uv_run(&fx.loop, UV_RUN_DEFAULT), 0);
    ck_assert_int_eq(uv_loop_close(&fx.loop), 0);
    kube_config_fini(&fx.cfg);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("kube_informer");
    TCase *tc = tcase_create("cache"), *net = tcase_create("loopback");
    SRunner *sr;
    int failed;

    curl_global_init(CURL_GLOBAL_DEFAULT);
    tcase_add_test(tc, test_object_key);
    tcase_add_test(tc, test_watch_events_deduplicated);
    tcase_add_test(tc, test_resource_version_forms);
    tcase_add_test(tc, test_relist_diff);
    tcase_set_timeout(net, 20);
    tcase_add_test(net, test_informer_pages_watches_and_relists_on_410);
    tcase_add_test(net, test_informer_backs_off_on_drops_without_relisting);
    tcase_add_test(net, test_informer_reports_failures_and_recovery);
    suite_add_tcase(s, tc);
    suite_add_tcase(s, net);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    curl_global_cleanup();
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
