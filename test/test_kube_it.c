/* test_kube_it -- lib/kube against the real kube-apiserver of the integration environment. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "kube/client.h"
#include "kube/informer.h"
#include "kube/informer_int.h"
#include "kube/lease.h"
#include "kube/lease_int.h"
#include "kube_itenv.h"

#include <check.h>
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const kube_resource_t configmaps = {"", "v1", "configmaps", true};
static const kube_resource_t namespaces = {"", "v1", "namespaces", false};

static char ns[64]; /* created in main(), deleted at the end */

/* One loop and one client per test. */
typedef struct it_s {
    uv_loop_t loop;
    kube_config_t cfg;
    kube_client_t *c;
    int closed;
} it_t;

static void it_open(it_t *it)
{
    err_msg_t msg;

    memset(it, 0, sizeof(*it));
    ck_assert_int_eq(uv_loop_init(&it->loop), 0);
    itenv_load(&it->cfg);
    ck_assert_msg(kube_client_new(&it->loop, &it->cfg, NULL, &it->c, &msg) == ERR_OK, "%s",
                  msg.text);
}

static void on_closed(void *data)
{
    (*(int *)data)++;
}

static void it_close(it_t *it)
{
    kube_client_close(it->c, on_closed, &it->closed);
    ck_assert_int_eq(uv_run(&it->loop, UV_RUN_DEFAULT), 0);
    ck_assert_int_eq(it->closed, 1);
    ck_assert_int_eq(uv_loop_close(&it->loop), 0);
    kube_config_fini(&it->cfg);
}

static void on_guard(uv_timer_t *t)
{
    (void)t; /* only wakes the loop */
}

/* Run the loop until `*flag` or `ms` milliseconds have passed; false on timeout. */
static bool run_until(it_t *it, const bool *flag, uint64_t ms)
{
    uv_timer_t guard;
    uint64_t end;

    uv_update_time(&it->loop);
    end = uv_now(&it->loop) + ms;
    /* A repeating timer keeps uv_run(ONCE) from blocking forever when nothing else is due. */
    ck_assert_int_eq(uv_timer_init(&it->loop, &guard), 0);
    uv_timer_start(&guard, on_guard, 50, 50);
    while (!*flag && uv_now(&it->loop) < end)
        uv_run(&it->loop, UV_RUN_ONCE);
    uv_close((uv_handle_t *)&guard, NULL);
    uv_run(&it->loop, UV_RUN_NOWAIT);
    return *flag;
}

/* A finished request, kept past its callback. */
typedef struct sync_s {
    bool done;
    kube_result_t res;
    json_t *body; /* own reference */
} sync_t;

static void on_sync(const kube_result_t *r, void *data)
{
    sync_t *s = data;

    s->res = *r;
    s->body = json_incref(r->body);
    s->res.body = s->body;
    s->done = true;
}

static void sync_reset(sync_t *s)
{
    json_decref(s->body);
    memset(s, 0, sizeof(*s));
}

#define CALL(it, s, call)                                                      \
    do {                                                                       \
        err_msg_t m_;                                                          \
        sync_reset(&(s));                                                      \
        ck_assert_msg((call) == ERR_OK, "%s", m_.text);                        \
        ck_assert_msg(run_until((it), &(s).done, 20000), "request timed out"); \
    } while (0)

static json_t *configmap(const char *name, const char *label)
{
    json_t *o =
        json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:s}}", "apiVersion", "v1", "kind", "ConfigMap",
                  "metadata", "name", name, "namespace", ns, "data", "k", "v1");

    if (label != NULL)
        json_object_set_new(json_object_get(o, "metadata"), "labels",
                            json_pack("{s:s}", "it", label));
    return o;
}

static const char *data_of(json_t *o, const char *key)
{
    return json_string_value(json_object_get(json_object_get(o, "data"), key));
}

START_TEST(test_crud_configmap)
{
    json_t *cm = configmap("crud", NULL), *patch;
    char rv1[32];
    it_t it;
    sync_t s = {0};

    it_open(&it);
    CALL(&it, s, kube_create(it.c, &configmaps, ns, cm, on_sync, &s, NULL, &m_));
    ck_assert_msg(s.res.err == ERR_OK, "%s", s.res.msg.text);
    ck_assert_int_eq(s.res.status, 201);
    ck_assert_int_eq(s.res.http_version, 2); /* the API server offers h2 over TLS (ALPN) */
    snprintf(rv1, sizeof(rv1), "%s", kube_object_rv(s.body));
    CALL(&it, s, kube_create(it.c, &configmaps, ns, cm, on_sync, &s, NULL, &m_));
    ck_assert_int_eq(s.res.err, ERR_EXISTS);
    ck_assert_str_eq(s.res.reason, "AlreadyExists");

    CALL(&it, s, kube_get(it.c, &configmaps, ns, "crud", NULL, on_sync, &s, NULL, &m_));
    ck_assert_int_eq(s.res.err, ERR_OK);
    ck_assert_str_eq(data_of(s.body, "k"), "v1");
    ck_assert(s.res.reused); /* the connection of the earlier requests, not a new one */

    /* PUT the read object with a change: optimistic concurrency on its resourceVersion. */
    json_object_set_new(json_object_get(s.body, "data"), "k", json_string("v2"));
    {
        json_t *obj = json_incref(s.body);

        CALL(&it, s, kube_update(it.c, &configmaps, ns, "crud", NULL, obj, on_sync, &s, NULL, &m_));
        json_decref(obj);
    }
    ck_assert_msg(s.res.err == ERR_OK, "%s", s.res.msg.text);
    ck_assert_str_eq(data_of(s.body, "k"), "v2");
    ck_assert_str_ne(kube_object_rv(s.body), rv1);

    patch = json_pack("{s:{s:s}}", "data", "m", "merged");
    CALL(&it, s,
         kube_patch(it.c, &configmaps, ns, "crud", NULL, KUBE_PATCH_MERGE, patch, on_sync, &s, NULL,
                    &m_));
    json_decref(patch);
    ck_assert_msg(s.res.err == ERR_OK, "%s", s.res.msg.text);
    ck_assert_str_eq(data_of(s.body, "m"), "merged");
    ck_assert_str_eq(data_of(s.body, "k"), "v2");

    patch = json_pack("[{s:s, s:s, s:s}]", "op", "replace", "path", "/data/k", "value", "v3");
    CALL(&it, s,
         kube_patch(it.c, &configmaps, ns, "crud", NULL, KUBE_PATCH_JSON, patch, on_sync, &s, NULL,
                    &m_));
    json_decref(patch);
    ck_assert_msg(s.res.err == ERR_OK, "%s", s.res.msg.text);
    ck_assert_str_eq(data_of(s.body, "k"), "v3");

    /* A JSON patch whose test op fails is the server's 422, not a transport error. */
    patch = json_pack("[{s:s, s:s, s:s}]", "op", "test", "path", "/data/k", "value", "nope");
    CALL(&it, s,
         kube_patch(it.c, &configmaps, ns, "crud", NULL, KUBE_PATCH_JSON, patch, on_sync, &s, NULL,
                    &m_));
    json_decref(patch);
    ck_assert_int_ne(s.res.err, ERR_OK);
    ck_assert_int_ge(s.res.status, 400);

    /* The status subresource (Namespace has one). */
    CALL(&it, s, kube_get(it.c, &namespaces, NULL, ns, "status", on_sync, &s, NULL, &m_));
    ck_assert_msg(s.res.err == ERR_OK, "%s", s.res.msg.text);
    ck_assert_str_eq(json_string_value(json_object_get(json_object_get(s.body, "status"), "phase")),
                     "Active");
    patch = json_pack("{s:{}}", "status");
    CALL(&it, s,
         kube_patch(it.c, &namespaces, NULL, ns, "status", KUBE_PATCH_MERGE, patch, on_sync, &s,
                    NULL, &m_));
    json_decref(patch);
    ck_assert_msg(s.res.err == ERR_OK, "%s", s.res.msg.text);

    CALL(&it, s, kube_delete(it.c, &configmaps, ns, "crud", NULL, on_sync, &s, NULL, &m_));
    ck_assert_msg(s.res.err == ERR_OK, "%s", s.res.msg.text);
    CALL(&it, s, kube_get(it.c, &configmaps, ns, "crud", NULL, on_sync, &s, NULL, &m_));
    ck_assert_int_eq(s.res.err, ERR_NOT_FOUND);
    ck_assert_int_eq(s.res.status, 404);
    ck_assert_ptr_nonnull(strstr(s.res.msg.text, "configmaps \"crud\" not found"));
    sync_reset(&s);
    json_decref(cm);
    it_close(&it);
}
END_TEST

/* kube_update_retry() hands the same pointer to the mutate function and the final callback. */
typedef struct rmw_ctx_s {
    sync_t s; /* first: on_sync() sees a sync_t */
    int calls;
} rmw_ctx_t;

static err_t add_key(json_t *obj, void *data, bool *changed, err_msg_t *msg)
{
    rmw_ctx_t *ctx = data;

    (void)msg;
    ctx->calls++;
    *changed = true;
    return json_object_set_new(json_object_get(obj, "data"), "added", json_string("yes"))
               ? ERR_NOMEM
               : ERR_OK;
}

START_TEST(test_conflict_on_stale_resource_version)
{
    json_t *cm = configmap("conflict", NULL), *stale;
    it_t it;
    sync_t s = {0};
    rmw_ctx_t ctx;

    memset(&ctx, 0, sizeof(ctx));
    it_open(&it);
    CALL(&it, s, kube_create(it.c, &configmaps, ns, cm, on_sync, &s, NULL, &m_));
    ck_assert_msg(s.res.err == ERR_OK, "%s", s.res.msg.text);
    stale = json_deep_copy(s.body);
    /* Someone else writes first. */
    json_object_set_new(json_object_get(s.body, "data"), "k", json_string("other"));
    {
        json_t *obj = json_incref(s.body);

        CALL(&it, s,
             kube_update(it.c, &configmaps, ns, "conflict", NULL, obj, on_sync, &s, NULL, &m_));
        json_decref(obj);
    }
    ck_assert_int_eq(s.res.err, ERR_OK);
    /* Our write with the old resourceVersion is refused: 409, never a blind overwrite. */
    json_object_set_new(json_object_get(stale, "data"), "k", json_string("mine"));
    CALL(&it, s,
         kube_update(it.c, &configmaps, ns, "conflict", NULL, stale, on_sync, &s, NULL, &m_));
    ck_assert_int_eq(s.res.err, ERR_CONFLICT);
    ck_assert_int_eq(s.res.status, 409);
    ck_assert_str_eq(s.res.reason, "Conflict");
    ck_assert_ptr_nonnull(strstr(s.res.msg.text, "the object has been modified"));
    /* The helper re-reads and applies the decision to the current object. */
    {
        err_msg_t msg;

        ck_assert_int_eq(kube_update_retry(it.c, &configmaps, ns, "conflict", NULL, add_key, 0,
                                           on_sync, &ctx, &msg),
                         ERR_OK);
    }
    ck_assert(run_until(&it, &ctx.s.done, 20000));
    ck_assert_msg(ctx.s.res.err == ERR_OK, "%s", ctx.s.res.msg.text);
    ck_assert_str_eq(data_of(ctx.s.body, "k"), "other");
    ck_assert_str_eq(data_of(ctx.s.body, "added"), "yes");
    ck_assert_int_eq(ctx.calls, 1);
    sync_reset(&ctx.s);
    sync_reset(&s);
    json_decref(stale);
    json_decref(cm);
    it_close(&it);
}
END_TEST

START_TEST(test_list_paging_limit_1)
{
    kube_list_opts_t lo;
    it_t it;
    sync_t s = {0};
    char cont[2048] = "";
    int pages = 0, items = 0;

    it_open(&it);
    for (int i = 0; i < 3; i++) {
        char name[32];
        json_t *cm;

        snprintf(name, sizeof(name), "page-%d", i);
        cm = configmap(name, "paging");
        CALL(&it, s, kube_create(it.c, &configmaps, ns, cm, on_sync, &s, NULL, &m_));
        json_decref(cm);
        ck_assert_msg(s.res.err == ERR_OK, "%s", s.res.msg.text);
    }
    do {
        const char *next;

        memset(&lo, 0, sizeof(lo));
        lo.label_selector = "it=paging";
        lo.limit = 1;
        lo.continue_token = cont[0] ? cont : NULL;
        CALL(&it, s, kube_list(it.c, &configmaps, ns, &lo, on_sync, &s, NULL, &m_));
        ck_assert_msg(s.res.err == ERR_OK, "%s", s.res.msg.text);
        ck_assert_uint_eq(json_array_size(json_object_get(s.body, "items")), 1);
        items += (int)json_array_size(json_object_get(s.body, "items"));
        pages++;
        next = json_string_value(json_object_get(json_object_get(s.body, "metadata"), "continue"));
        snprintf(cont, sizeof(cont), "%s", next ? next : "");
    } while (cont[0] && pages < 10);
    ck_assert_int_eq(pages, 3);
    ck_assert_int_eq(items, 3);
    sync_reset(&s);
    it_close(&it);
}
END_TEST

typedef struct wctx_s {
    sync_t s; /* first: the final callback is on_sync() */
    int events[5];
    char log[512];
    bool all_seen;
} wctx_t;

static void on_watch_event(kube_event_type_t type, json_t *obj, void *data)
{
    wctx_t *w = data;
    size_t used = strlen(w->log);
    static const char *const names[] = {"ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR"};
    const char *name = json_string_value(json_object_get(json_object_get(obj, "metadata"), "name"));

    w->events[type]++;
    if (type != KUBE_EVENT_BOOKMARK)
        snprintf(w->log + used, sizeof(w->log) - used, "%s:%s ", names[type], name ? name : "?");
    if (w->events[KUBE_EVENT_DELETED] > 0)
        w->all_seen = true;
}

START_TEST(test_watch_sees_add_update_delete)
{
    wctx_t wctx;
    kube_watch_opts_t wo;
    kube_list_opts_t lo;
    kube_req_t *watch = NULL;
    json_t *cm = configmap("watched", "watch"), *patch;
    char rv[32];
    it_t it;
    sync_t s = {0};
    err_msg_t msg;

    memset(&wctx, 0, sizeof(wctx));
    it_open(&it);
    memset(&lo, 0, sizeof(lo));
    lo.label_selector = "it=watch";
    CALL(&it, s, kube_list(it.c, &configmaps, ns, &lo, on_sync, &s, NULL, &m_));
    ck_assert_int_eq(s.res.err, ERR_OK);
    snprintf(rv, sizeof(rv), "%s", kube_object_rv(s.body));
    memset(&wo, 0, sizeof(wo));
    wo.label_selector = "it=watch";
    wo.resource_version = rv;
    wo.bookmarks = true;
    wo.timeout_seconds = 60;
    ck_assert_int_eq(
        kube_watch(it.c, &configmaps, ns, &wo, on_watch_event, on_sync, &wctx, &watch, &msg),
        ERR_OK);
    CALL(&it, s, kube_create(it.c, &configmaps, ns, cm, on_sync, &s, NULL, &m_));
    ck_assert_int_eq(s.res.err, ERR_OK);
    patch = json_pack("{s:{s:s}}", "data", "k", "changed");
    CALL(&it, s,
         kube_patch(it.c, &configmaps, ns, "watched", NULL, KUBE_PATCH_MERGE, patch, on_sync, &s,
                    NULL, &m_));
    json_decref(patch);
    ck_assert_int_eq(s.res.err, ERR_OK);
    CALL(&it, s, kube_delete(it.c, &configmaps, ns, "watched", NULL, on_sync, &s, NULL, &m_));
    ck_assert_int_eq(s.res.err, ERR_OK);
    ck_assert_msg(run_until(&it, &wctx.all_seen, 20000), "events: %s", wctx.log);
    ck_assert_str_eq(wctx.log, "ADDED:watched MODIFIED:watched DELETED:watched ");
    ck_assert(!wctx.s.done);
    kube_req_cancel(watch);
    ck_assert(wctx.s.done);
    ck_assert(wctx.s.res.canceled);
    sync_reset(&wctx.s);
    sync_reset(&s);
    json_decref(cm);
    it_close(&it);
}
END_TEST

typedef struct irec_s {
    char log[1024];
    bool synced;
    bool saw_a, saw_b;
} irec_t;

static void inf_add(kube_informer_t *inf, json_t *obj, void *data)
{
    irec_t *r = data;
    const char *name = json_string_value(json_object_get(json_object_get(obj, "metadata"), "name"));
    size_t used = strlen(r->log);

    (void)inf;
    snprintf(r->log + used, sizeof(r->log) - used, "add:%s ", name);
    r->saw_a |= strcmp(name, "inf-a") == 0;
    r->saw_b |= strcmp(name, "inf-b") == 0;
}

static void inf_update(kube_informer_t *inf, json_t *old, json_t *obj, void *data)
{
    irec_t *r = data;
    size_t used = strlen(r->log);

    (void)inf;
    (void)old;
    snprintf(r->log + used, sizeof(r->log) - used, "upd:%s ",
             json_string_value(json_object_get(json_object_get(obj, "metadata"), "name")));
}

static void inf_delete(kube_informer_t *inf, json_t *obj, void *data)
{
    irec_t *r = data;
    size_t used = strlen(r->log);

    (void)inf;
    snprintf(r->log + used, sizeof(r->log) - used, "del:%s ",
             json_string_value(json_object_get(json_object_get(obj, "metadata"), "name")));
}

static void inf_synced(kube_informer_t *inf, void *data)
{
    (void)inf;
    ((irec_t *)data)->synced = true;
}

static size_t on_curl_body(char *p, size_t size, size_t n, void *data)
{
    char *buf = data;
    size_t used = strlen(buf), len = size * n;

    if (used + len < 1024) {
        memcpy(buf + used, p, len);
        buf[used + len] = '\0';
    }
    return len;
}

/* POST `body` to etcd's JSON gateway at `url`; the answer goes to `out` (1 KiB). */
static bool etcd_post(const char *url, const char *body, char *out)
{
    CURL *e = curl_easy_init();
    CURLcode rc;

    out[0] = '\0';
    curl_easy_setopt(e, CURLOPT_URL, url);
    curl_easy_setopt(e, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_curl_body);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, out);
    curl_easy_setopt(e, CURLOPT_TIMEOUT, 10L);
    rc = curl_easy_perform(e);
    curl_easy_cleanup(e);
    return rc == CURLE_OK;
}

/* Compact etcd's history up to its current revision, as the API server's compactor does every
 * five minutes: afterwards a watch from an older resourceVersion gets 410 Gone. */
static void etcd_compact(const char *etcd)
{
    char url[256], out[1024], body[128];
    const char *rev;

    snprintf(url, sizeof(url), "%s/v3/kv/range", etcd);
    ck_assert(etcd_post(url, "{\"key\":\"AA==\"}", out));
    rev = strstr(out, "\"revision\":\"");
    ck_assert_msg(rev != NULL, "etcd range answer: %s", out);
    snprintf(body, sizeof(body), "{\"revision\":\"%.*s\"}", (int)strcspn(rev + 12, "\""), rev + 12);
    snprintf(url, sizeof(url), "%s/v3/kv/compaction", etcd);
    ck_assert(etcd_post(url, body, out));
    ck_assert_msg(strstr(out, "\"header\"") != NULL, "etcd compaction answer: %s", out);
}

static json_t *event_obj(const char *name)
{
    return json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:s, s:s, s:s}, s:s, s:s, s:s}", "apiVersion",
                     "v1", "kind", "Event", "metadata", "name", name, "namespace", ns,
                     "involvedObject", "kind", "ConfigMap", "name", "x", "namespace", ns, "reason",
                     "SluiceTest", "message", "integration test", "type", "Normal");
}

/*
 * Core v1 Events have no watch cache in 1.20 (DefaultWatchCacheSizes sets it to 0), so their
 * watches are served by etcd itself: once etcd's history is compacted, resuming from an older
 * resourceVersion gets a real 410 Gone, the way informers meet it in production.
 */
START_TEST(test_informer_survives_forced_410)
{
    static const kube_informer_handlers_t h = {inf_add, inf_update, inf_delete, inf_synced,
                                               NULL};
    static const kube_resource_t events = {"", "v1", "events", true};
    kube_informer_opts_t o;
    kube_informer_t *inf;
    json_t *ev;
    irec_t rec;
    it_t it;
    sync_t s = {0};
    err_msg_t msg;
    char etcd[256];
    int closed = 0;
    bool relisted = false, local = itenv_etcd_url(etcd, sizeof(etcd));

    memset(&rec, 0, sizeof(rec));
    it_open(&it);
    memset(&o, 0, sizeof(o));
    o.ns = ns;
    o.field_selector = "reason=SluiceTest";
    o.page_size = 1;
    inf = kube_informer_new(it.c, &events, &o, &h, &rec);
    ck_assert_ptr_nonnull(inf);
    ck_assert_int_eq(kube_informer_start(inf, &msg), ERR_OK);
    ck_assert(run_until(&it, &rec.synced, 20000));
    ev = event_obj("inf-a");
    CALL(&it, s, kube_create(it.c, &events, ns, ev, on_sync, &s, NULL, &m_));
    json_decref(ev);
    ck_assert_msg(s.res.err == ERR_OK, "%s", s.res.msg.text);
    ck_assert(run_until(&it, &rec.saw_a, 20000));

    if (local)
        etcd_compact(etcd);
    else
        fprintf(stderr, "external cluster: etcd cannot be compacted from here; the watch is "
                        "resumed from resourceVersion 1 and 410 is not guaranteed\n");
    kube__informer_restart_watch(inf, "1");
    for (int i = 0; i < 200 && !relisted; i++) {
        bool tick = false;
        kube_informer_stats_t st;

        run_until(&it, &tick, 50);
        st = kube_informer_stats(inf);
        relisted = st.watches >= 3 && (!local || (st.gone >= 1 && st.lists >= 2));
    }
    ck_assert_msg(relisted, "gone=%llu lists=%llu watches=%llu",
                  (unsigned long long)kube_informer_stats(inf).gone,
                  (unsigned long long)kube_informer_stats(inf).lists,
                  (unsigned long long)kube_informer_stats(inf).watches);
    ev = event_obj("inf-b");
    CALL(&it, s, kube_create(it.c, &events, ns, ev, on_sync, &s, NULL, &m_));
    json_decref(ev);
    ck_assert(run_until(&it, &rec.saw_b, 20000));
    /* Exactly once each: the relist found inf-a unchanged and reported nothing for it. */
    ck_assert_str_eq(rec.log, "add:inf-a add:inf-b ");
    ck_assert_ptr_nonnull(kube_informer_get(inf, ns, "inf-b"));
    kube_informer_close(inf, on_closed, &closed);
    sync_reset(&s);
    it_close(&it);
    ck_assert_int_eq(closed, 1);
}
END_TEST

typedef struct cand_s {
    bool leading, ever_led, stopped;
} cand_t;

static void lease_started(kube_lease_t *l, void *data)
{
    cand_t *c = data;

    (void)l;
    c->leading = c->ever_led = true;
}

static void lease_stopped(kube_lease_t *l, void *data)
{
    cand_t *c = data;

    (void)l;
    c->leading = false;
    c->stopped = true;
}

START_TEST(test_leader_election_takeover)
{
    static const kube_lease_handlers_t h = {lease_started, lease_stopped, NULL};
    kube_lease_opts_t o = {NULL, "it-leader", "a", 3000, 2000, 300};
    cand_t a = {0}, b = {0}, c = {0};
    kube_lease_t *la, *lb, *lc;
    uint64_t t;
    it_t it;
    err_msg_t msg;
    int closed = 0;

    it_open(&it);
    o.ns = ns;
    la = kube_lease_new(it.c, &o, &h, &a);
    o.identity = "b";
    lb = kube_lease_new(it.c, &o, &h, &b);
    o.identity = "c";
    lc = kube_lease_new(it.c, &o, &h, &c);
    ck_assert_ptr_nonnull(la);
    ck_assert_int_eq(kube_lease_start(la, &msg), ERR_OK);
    ck_assert(run_until(&it, &a.leading, 10000));
    ck_assert_int_eq(kube_lease_start(lb, &msg), ERR_OK);
    /* While a renews, b only watches: run for longer than the lease duration. */
    {
        bool never = false;

        run_until(&it, &never, 4000);
    }
    ck_assert(a.leading);
    ck_assert(!b.ever_led);
    ck_assert_str_eq(kube_lease_holder(lb), "a");
    /* a stops renewing (crash): b takes over within a lease duration (+ its retry period). */
    kube__lease_freeze(la);
    t = uv_now(&it.loop);
    ck_assert(run_until(&it, &b.leading, 8000));
    ck_assert_uint_le(uv_now(&it.loop) - t, 3000 + 2 * 300 + 1000);
    ck_assert_str_eq(kube_lease_holder(lb), "b");
    /* b shuts down cleanly: on_stopped first, then the released Lease lets c in at once. */
    kube_lease_close(lb, on_closed, &closed);
    ck_assert(b.stopped);
    ck_assert_int_eq(kube_lease_start(lc, &msg), ERR_OK);
    t = uv_now(&it.loop);
    ck_assert(run_until(&it, &c.leading, 8000));
    ck_assert_uint_lt(uv_now(&it.loop) - t, 2500); /* well under the 3 s lease */
    ck_assert_int_eq(closed, 1);
    kube_lease_close(la, on_closed, &closed);
    kube_lease_close(lc, on_closed, &closed);
    {
        bool never = false;

        run_until(&it, &never, 500); /* let the releases finish */
    }
    ck_assert_int_eq(closed, 3);
    it_close(&it);
}
END_TEST

/* Create or delete the test namespace (unchecked fixture: once, in the runner process). */
static void namespace_op(bool create)
{
    json_t *obj = json_pack("{s:s, s:s, s:{s:s}}", "apiVersion", "v1", "kind", "Namespace",
                            "metadata", "name", ns);
    sync_t s = {0};
    it_t it;

    it_open(&it);
    if (create)
        CALL(&it, s, kube_create(it.c, &namespaces, NULL, obj, on_sync, &s, NULL, &m_));
    else
        CALL(&it, s, kube_delete(it.c, &namespaces, NULL, ns, NULL, on_sync, &s, NULL, &m_));
    ck_assert_msg(s.res.err == ERR_OK, "namespace %s: %s", ns, s.res.msg.text);
    sync_reset(&s);
    json_decref(obj);
    it_close(&it);
}

static void ns_create(void)
{
    namespace_op(true);
}

static void ns_delete(void)
{
    namespace_op(false);
}

int main(void)
{
    Suite *s = suite_create("kube_it");
    TCase *tc = tcase_create("apiserver");
    kube_config_t probe;
    SRunner *sr;
    int failed;

    itenv_load(&probe); /* exits 77 when the environment is unavailable */
    kube_config_fini(&probe);
    curl_global_init(CURL_GLOBAL_DEFAULT);
    snprintf(ns, sizeof(ns), "sluice-it-kube-%ld", (long)getpid());
    tcase_add_unchecked_fixture(tc, ns_create, ns_delete);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_crud_configmap);
    tcase_add_test(tc, test_conflict_on_stale_resource_version);
    tcase_add_test(tc, test_list_paging_limit_1);
    tcase_add_test(tc, test_watch_sees_add_update_delete);
    tcase_add_test(tc, test_informer_survives_forced_410);
    tcase_add_test(tc, test_leader_election_takeover);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    curl_global_cleanup();
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
