/* test_fakeapi -- the in-memory API server, driven by sluice's lib/kube client and informer. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "fakeapi.h"

#include "kube/client.h"
#include "kube/informer.h"

#include <check.h>
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const kube_resource_t cms = {"", "v1", "configmaps", true};
static const kube_resource_t wls = {"kueue.x-k8s.io", "v1beta2", "workloads", true};
static const kube_resource_t cqs = {"kueue.x-k8s.io", "v1beta2", "clusterqueues", false};
static const kube_resource_t widgets = {"example.com", "v1", "widgets", true};

/* ---- fixture: a loop, the fake server, a client ---------------------------------------------- */

typedef struct fx_s {
    uv_loop_t loop;
    fakeapi_t *fa;
    kube_config_t cfg;
    kube_client_t *client;
    int closed;
    int client_logs;
    char last_log[512];
} fx_t;

static void on_client_log(void *data, const char *text)
{
    fx_t *fx = data;

    fx->client_logs++;
    snprintf(fx->last_log, sizeof(fx->last_log), "%s", text);
}

/* A loop, a server with the types of `sluice run` (`sluice`) or a few test types, a client. */
static void fx_init_types(fx_t *fx, bool sluice)
{
    kube_client_opts_t co;
    err_msg_t msg;

    memset(fx, 0, sizeof(*fx));
    ck_assert_int_eq(uv_loop_init(&fx->loop), 0);
    ck_assert_int_eq(fakeapi_start(&fx->loop, &fx->fa), ERR_OK);
    if (sluice) {
        ck_assert_int_eq(fakeapi_register_sluice(fx->fa), ERR_OK);
        ck_assert_int_eq(fakeapi_register_sluice(fx->fa), ERR_EXISTS);
        goto client;
    }
    ck_assert_int_eq(fakeapi_register(fx->fa, "", "v1", "configmaps", "ConfigMap", true, false),
                     ERR_OK);
    ck_assert_int_eq(
        fakeapi_register(fx->fa, "kueue.x-k8s.io", "v1beta2", "workloads", "Workload", true, true),
        ERR_OK);
    ck_assert_int_eq(fakeapi_register(fx->fa, "kueue.x-k8s.io", "v1beta2", "clusterqueues",
                                      "ClusterQueue", false, true),
                     ERR_OK);
    ck_assert_int_eq(fakeapi_register(fx->fa, "", "v1", "configmaps", "ConfigMap", true, false),
                     ERR_EXISTS);
    ck_assert_int_eq(fakeapi_register(fx->fa, "x", "", "things", "Thing", true, false),
                     ERR_INVALID);
client:
    fakeapi_set_now(fx->fa, 1700000000); /* 2023-11-14T22:13:20Z */
    kube_config_init(&fx->cfg);
    fx->cfg.server = strdup(fakeapi_url(fx->fa));
    ck_assert_ptr_nonnull(fx->cfg.server);
    memset(&co, 0, sizeof(co));
    co.http1 = true;
    co.log = on_client_log;
    co.log_data = fx;
    ck_assert_int_eq(kube_client_new(&fx->loop, &fx->cfg, &co, &fx->client, &msg), ERR_OK);
}

static void fx_init(fx_t *fx)
{
    fx_init_types(fx, false);
}

static void on_closed(void *data)
{
    ((fx_t *)data)->closed++;
}

/* Close the client and the server; every handle must be gone afterwards. */
static void fx_fini(fx_t *fx, int closers)
{
    kube_client_close(fx->client, on_closed, fx);
    fakeapi_stop(fx->fa);
    ck_assert_int_eq(uv_run(&fx->loop, UV_RUN_DEFAULT), 0);
    ck_assert_int_eq(fx->closed, closers + 1);
    ck_assert_int_eq(uv_loop_close(&fx->loop), 0);
    kube_config_fini(&fx->cfg);
}

/* Run the loop until `*flag` is non-zero (the test case's timeout bounds it). */
static void run_until(fx_t *fx, const int *flag)
{
    while (*flag == 0)
        uv_run(&fx->loop, UV_RUN_ONCE);
}

/* ---- requests through the client ------------------------------------------------------------- */

typedef struct res_s {
    int done;
    err_t err;
    long status;
    char reason[64];
    char msg[512];
    json_t *body; /* owned copy */
} res_t;

static void res_reset(res_t *r)
{
    json_decref(r->body);
    memset(r, 0, sizeof(*r));
}

static void on_done(const kube_result_t *kr, void *data)
{
    res_t *r = data;

    r->done++;
    r->err = kr->err;
    r->status = kr->status;
    snprintf(r->reason, sizeof(r->reason), "%s", kr->reason ? kr->reason : "");
    snprintf(r->msg, sizeof(r->msg), "%s", kr->msg.text);
    r->body = kr->body ? json_deep_copy(kr->body) : NULL;
}

static json_t *parse(const char *text)
{
    json_error_t jerr;
    json_t *j = json_loads(text, 0, &jerr);

    ck_assert_msg(j != NULL, "bad test JSON: %s", jerr.text);
    return j;
}

/* metadata.<k> of `obj` as a string ("" when absent). */
static const char *md(json_t *obj, const char *k)
{
    const char *s = json_string_value(json_object_get(json_object_get(obj, "metadata"), k));

    return s ? s : "";
}

static void create(fx_t *fx, const kube_resource_t *res, const char *ns, const char *text, res_t *r)
{
    json_t *obj = parse(text);
    err_msg_t msg;

    res_reset(r);
    ck_assert_int_eq(kube_create(fx->client, res, ns, obj, on_done, r, NULL, &msg), ERR_OK);
    json_decref(obj);
    run_until(fx, &r->done);
}

static void get(fx_t *fx, const kube_resource_t *res, const char *ns, const char *name, res_t *r)
{
    err_msg_t msg;

    res_reset(r);
    ck_assert_int_eq(kube_get(fx->client, res, ns, name, NULL, on_done, r, NULL, &msg), ERR_OK);
    run_until(fx, &r->done);
}

static void update(fx_t *fx, const kube_resource_t *res, const char *ns, const char *name,
                   const char *sub, json_t *obj, res_t *r)
{
    err_msg_t msg;

    res_reset(r);
    ck_assert_int_eq(kube_update(fx->client, res, ns, name, sub, obj, on_done, r, NULL, &msg),
                     ERR_OK);
    run_until(fx, &r->done);
}

static void patch(fx_t *fx, const kube_resource_t *res, const char *ns, const char *name,
                  const char *sub, const char *text, res_t *r)
{
    json_t *p = parse(text);
    err_msg_t msg;

    res_reset(r);
    ck_assert_int_eq(
        kube_patch(fx->client, res, ns, name, sub, KUBE_PATCH_MERGE, p, on_done, r, NULL, &msg),
        ERR_OK);
    json_decref(p);
    run_until(fx, &r->done);
}

static void del(fx_t *fx, const kube_resource_t *res, const char *ns, const char *name,
                const char *rv, res_t *r)
{
    err_msg_t msg;

    res_reset(r);
    ck_assert_int_eq(kube_delete(fx->client, res, ns, name, rv, on_done, r, NULL, &msg), ERR_OK);
    run_until(fx, &r->done);
}

static void list(fx_t *fx, const kube_resource_t *res, const char *ns, const kube_list_opts_t *lo,
                 res_t *r)
{
    err_msg_t msg;

    res_reset(r);
    ck_assert_int_eq(kube_list(fx->client, res, ns, lo, on_done, r, NULL, &msg), ERR_OK);
    run_until(fx, &r->done);
}

/* Put a fixture object straight into the store. */
static void put(fx_t *fx, const char *text)
{
    json_t *obj = parse(text);
    err_msg_t msg;

    ck_assert_msg(fakeapi_put_object(fx->fa, obj, NULL, &msg) == ERR_OK, "%s", msg.text);
    json_decref(obj);
}

/* An empty ConfigMap ns/name, stored directly. */
static void put_cm(fx_t *fx, const char *ns, const char *name)
{
    char text[256];

    snprintf(text, sizeof(text),
             "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"%s\","
             "\"namespace\":\"%s\"}}",
             name, ns);
    put(fx, text);
}

/* ---- informer recorder ----------------------------------------------------------------------- */

typedef struct rec_s {
    char log[4096];
    int synced;
} rec_t;

static void rec_add(rec_t *r, const char *text)
{
    size_t used = strlen(r->log);

    snprintf(r->log + used, sizeof(r->log) - used, "%s ", text);
}

static void key_of(json_t *obj, char *buf, size_t n)
{
    ck_assert_int_eq(kube_object_key(obj, buf, n), ERR_OK);
}

static void i_add(kube_informer_t *inf, json_t *obj, void *data)
{
    char key[256], text[512];

    (void)inf;
    key_of(obj, key, sizeof(key));
    snprintf(text, sizeof(text), "add:%s@%s", key, kube_object_rv(obj));
    rec_add(data, text);
}

static void i_update(kube_informer_t *inf, json_t *old, json_t *obj, void *data)
{
    char key[256], text[512];

    (void)inf;
    key_of(obj, key, sizeof(key));
    snprintf(text, sizeof(text), "upd:%s@%s>%s", key, kube_object_rv(old), kube_object_rv(obj));
    rec_add(data, text);
}

static void i_delete(kube_informer_t *inf, json_t *obj, void *data)
{
    char key[256], text[512];

    (void)inf;
    key_of(obj, key, sizeof(key));
    snprintf(text, sizeof(text), "del:%s@%s", key, kube_object_rv(obj));
    rec_add(data, text);
}

static void i_synced(kube_informer_t *inf, void *data)
{
    (void)inf;
    ((rec_t *)data)->synced++;
}

static void i_error(kube_informer_t *inf, const kube_result_t *res, const char *verb, void *data)
{
    char text[64];

    (void)inf;
    if (res != NULL)
        snprintf(text, sizeof(text), "err:%s:%ld", verb, res->status);
    else
        snprintf(text, sizeof(text), "ok:%s", verb);
    rec_add(data, text);
}

static const kube_informer_handlers_t rec_handlers = {i_add, i_update, i_delete, i_synced, i_error};

static kube_informer_t *informer(fx_t *fx, const kube_resource_t *res, const char *ns,
                                 uint32_t page, rec_t *rec)
{
    kube_informer_opts_t o;
    kube_informer_t *inf;
    err_msg_t msg;

    memset(&o, 0, sizeof(o));
    o.ns = ns;
    o.page_size = page;
    o.backoff_base_ms = 20;
    o.backoff_max_ms = 40;
    o.seed = 1;
    inf = kube_informer_new(fx->client, res, &o, &rec_handlers, rec);
    ck_assert_ptr_nonnull(inf);
    ck_assert_int_eq(kube_informer_start(inf, &msg), ERR_OK);
    run_until(fx, &rec->synced);
    /* and until its watch is open, so later writes reach it as events */
    while (fakeapi_watch_count(fx->fa, res->resource) == 0)
        uv_run(&fx->loop, UV_RUN_ONCE);
    return inf;
}

/* Run until the recorder's log contains `text`. */
static void run_until_logged(fx_t *fx, const rec_t *rec, const char *text)
{
    while (strstr(rec->log, text) == NULL)
        uv_run(&fx->loop, UV_RUN_ONCE);
}

/* ---- tests ----------------------------------------------------------------------------------- */

START_TEST(test_create_get_list_update)
{
    fx_t fx;
    res_t r = {0};
    kube_list_opts_t lo;
    json_t *obj;
    char name[64], msgtext[256];
    err_msg_t msg;

    fx_init(&fx);
    ck_assert_int_eq(strncmp(fakeapi_url(fx.fa), "http://127.0.0.1:", 17), 0);
    /* POST with generateName: the server picks the name and fills in its own fields. */
    create(&fx, &cms, "a", "{\"metadata\":{\"generateName\":\"cm-\"},\"data\":{\"k\":\"v\"}}", &r);
    ck_assert_int_eq(r.err, ERR_OK);
    ck_assert_int_eq(r.status, 201);
    snprintf(name, sizeof(name), "%s", md(r.body, "name"));
    ck_assert_int_eq(strlen(name), 8);
    ck_assert_int_eq(strncmp(name, "cm-", 3), 0);
    ck_assert_int_eq(strlen(md(r.body, "uid")), 36);
    ck_assert_str_eq(md(r.body, "resourceVersion"), "2");
    ck_assert_str_eq(md(r.body, "creationTimestamp"), "2023-11-14T22:13:20Z");
    ck_assert_str_eq(md(r.body, "namespace"), "a");
    ck_assert_str_eq(json_string_value(json_object_get(r.body, "kind")), "ConfigMap");
    ck_assert_str_eq(json_string_value(json_object_get(r.body, "apiVersion")), "v1");
    ck_assert_ptr_nonnull(fakeapi_get_object(fx.fa, "configmaps", "a", name));
    /* The same name again: 409 AlreadyExists, which the client tells from a Conflict. */
    snprintf(msgtext, sizeof(msgtext), "{\"metadata\":{\"name\":\"%s\"}}", name);
    create(&fx, &cms, "a", msgtext, &r);
    ck_assert_int_eq(r.err, ERR_EXISTS);
    ck_assert_int_eq(r.status, 409);
    ck_assert_str_eq(r.reason, "AlreadyExists");
    snprintf(msgtext, sizeof(msgtext), "configmaps \"%s\" already exists", name);
    ck_assert_ptr_nonnull(strstr(r.msg, msgtext));
    /* A namespace in the body that is not the URL's: 400. A bad name: 422. */
    create(&fx, &cms, "a", "{\"metadata\":{\"name\":\"x\",\"namespace\":\"b\"}}", &r);
    ck_assert_int_eq(r.err, ERR_INVALID);
    ck_assert_int_eq(r.status, 400);
    create(&fx, &cms, "a", "{\"metadata\":{\"name\":\"Bad_Name\"}}", &r);
    ck_assert_int_eq(r.status, 422);
    ck_assert_str_eq(r.reason, "Invalid");
    create(&fx, &cms, "a", "{\"metadata\":{\"name\":\"b\",\"labels\":{\"team\":\"x\"}}}", &r);
    ck_assert_str_eq(md(r.body, "resourceVersion"), "3");
    create(&fx, &cms, "other", "{\"metadata\":{\"name\":\"c\",\"labels\":{\"team\":\"x\"}}}", &r);
    ck_assert_uint_eq(fakeapi_object_count(fx.fa, "configmaps"), 3);
    /* LIST one page at a time: key order, a continue token, the list's resourceVersion. */
    memset(&lo, 0, sizeof(lo));
    lo.limit = 1;
    list(&fx, &cms, "a", &lo, &r);
    ck_assert_int_eq(r.err, ERR_OK);
    ck_assert_str_eq(json_string_value(json_object_get(r.body, "kind")), "ConfigMapList");
    ck_assert_uint_eq(json_array_size(json_object_get(r.body, "items")), 1);
    ck_assert_str_eq(md(json_array_get(json_object_get(r.body, "items"), 0), "name"), "b");
    ck_assert_str_eq(md(r.body, "resourceVersion"), "4");
    snprintf(msgtext, sizeof(msgtext), "%s", md(r.body, "continue"));
    ck_assert_str_ne(msgtext, "");
    lo.continue_token = msgtext;
    list(&fx, &cms, "a", &lo, &r);
    ck_assert_uint_eq(json_array_size(json_object_get(r.body, "items")), 1);
    ck_assert_str_eq(md(json_array_get(json_object_get(r.body, "items"), 0), "name"), name);
    ck_assert_str_eq(md(r.body, "continue"), "");
    ck_assert_str_eq(md(r.body, "resourceVersion"), "4");
    /* All namespaces with a label selector; a malformed selector is a 400. */
    memset(&lo, 0, sizeof(lo));
    lo.label_selector = "team in (x, y),!missing";
    list(&fx, &cms, NULL, &lo, &r);
    ck_assert_uint_eq(json_array_size(json_object_get(r.body, "items")), 2);
    lo.label_selector = "team";
    lo.field_selector = "metadata.namespace=other";
    list(&fx, &cms, NULL, &lo, &r);
    ck_assert_uint_eq(json_array_size(json_object_get(r.body, "items")), 1);
    lo.label_selector = NULL;
    lo.field_selector = "spec.nodeName=n1";
    list(&fx, &cms, NULL, &lo, &r);
    ck_assert_int_eq(r.status, 400);
    ck_assert_ptr_nonnull(strstr(r.msg, "field label not supported: spec.nodeName"));
    /* GET, then PUT with a stale resourceVersion: 409 Conflict with the server's Status. */
    get(&fx, &cms, "a", "b", &r);
    ck_assert_int_eq(r.status, 200);
    obj = json_deep_copy(r.body);
    json_object_set_new(json_object_get(obj, "metadata"), "resourceVersion", json_string("2"));
    json_object_set_new(obj, "data", json_pack("{s:s}", "k", "new"));
    update(&fx, &cms, "a", "b", NULL, obj, &r);
    ck_assert_int_eq(r.err, ERR_CONFLICT);
    ck_assert_int_eq(r.status, 409);
    ck_assert_str_eq(r.reason, "Conflict");
    ck_assert_str_eq(json_string_value(json_object_get(r.body, "kind")), "Status");
    ck_assert_str_eq(json_string_value(json_object_get(r.body, "status")), "Failure");
    ck_assert_int_eq(json_integer_value(json_object_get(r.body, "code")), 409);
    ck_assert_str_eq(json_string_value(json_object_get(r.body, "message")),
                     "Operation cannot be fulfilled on configmaps \"b\": the object has been "
                     "modified; please apply your changes to the latest version and try again");
    ck_assert_str_eq(json_string_value(json_object_get(json_object_get(r.body, "details"), "name")),
                     "b");
    /* With the current version it goes through and takes the next global version. */
    json_object_set_new(json_object_get(obj, "metadata"), "resourceVersion", json_string("3"));
    update(&fx, &cms, "a", "b", NULL, obj, &r);
    ck_assert_int_eq(r.err, ERR_OK);
    ck_assert_str_eq(md(r.body, "resourceVersion"), "5");
    ck_assert_uint_eq(fakeapi_resource_version(fx.fa), 5);
    /* An update that changes nothing writes nothing. */
    json_object_set_new(json_object_get(obj, "metadata"), "resourceVersion", json_string("5"));
    update(&fx, &cms, "a", "b", NULL, obj, &r);
    ck_assert_int_eq(r.err, ERR_OK);
    ck_assert_str_eq(md(r.body, "resourceVersion"), "5");
    ck_assert_uint_eq(fakeapi_resource_version(fx.fa), 5);
    /* The URL's name wins: another name in the body is a 400. */
    json_object_set_new(json_object_get(obj, "metadata"), "name", json_string("zz"));
    update(&fx, &cms, "a", "b", NULL, obj, &r);
    ck_assert_int_eq(r.status, 400);
    json_decref(obj);
    /* Merge patch (RFC 7386): null removes, objects merge; a resourceVersion is a precondition. */
    patch(&fx, &cms, "a", "b", NULL, "{\"data\":{\"k\":null,\"n\":\"1\"}}", &r);
    ck_assert_int_eq(r.err, ERR_OK);
    ck_assert_ptr_null(json_object_get(json_object_get(r.body, "data"), "k"));
    ck_assert_str_eq(json_string_value(json_object_get(json_object_get(r.body, "data"), "n")), "1");
    ck_assert_str_eq(md(r.body, "resourceVersion"), "6");
    patch(&fx, &cms, "a", "b", NULL, "{\"metadata\":{\"resourceVersion\":\"5\"},\"data\":{}}", &r);
    ck_assert_int_eq(r.err, ERR_CONFLICT);
    patch(&fx, &cms, "a", "b", NULL, "{\"metadata\":{\"resourceVersion\":\"6\"},\"data\":{}}", &r);
    ck_assert_int_eq(r.err, ERR_OK);
    /* Other patch types are not served: 415. */
    {
        json_t *jp = parse("[{\"op\":\"remove\",\"path\":\"/data\"}]");

        res_reset(&r);
        ck_assert_int_eq(kube_patch(fx.client, &cms, "a", "b", NULL, KUBE_PATCH_JSON, jp, on_done,
                                    &r, NULL, &msg),
                         ERR_OK);
        json_decref(jp);
        run_until(&fx, &r.done);
        ck_assert_int_eq(r.status, 415);
        ck_assert_int_eq(r.err, ERR_UNSUPPORTED);
    }
    /* 404 for an absent object and for a resource nobody registered. */
    get(&fx, &cms, "a", "nope", &r);
    ck_assert_int_eq(r.err, ERR_NOT_FOUND);
    ck_assert_str_eq(r.reason, "NotFound");
    ck_assert_ptr_nonnull(strstr(r.msg, "configmaps \"nope\" not found"));
    get(&fx, &widgets, "a", "w", &r);
    ck_assert_int_eq(r.status, 404);
    ck_assert_ptr_nonnull(strstr(r.msg, "the server could not find the requested resource"));
    res_reset(&r);
    fx_fini(&fx, 0);
}
END_TEST

START_TEST(test_status_subresource)
{
    fx_t fx;
    res_t r = {0};
    json_t *obj;
    char rv[32], patchtext[512];
    const fakeapi_logent_t *e;

    fx_init(&fx);
    /* On create the status is dropped (the status strategy), generation starts at 1. */
    create(&fx, &wls, "ns",
           "{\"metadata\":{\"name\":\"wl\"},\"spec\":{\"queueName\":\"q\"},"
           "\"status\":{\"conditions\":[{\"type\":\"QuotaReserved\"}]}}",
           &r);
    ck_assert_int_eq(r.status, 201);
    ck_assert_ptr_null(json_object_get(r.body, "status"));
    ck_assert_int_eq(
        json_integer_value(json_object_get(json_object_get(r.body, "metadata"), "generation")), 1);
    ck_assert_str_eq(json_string_value(json_object_get(r.body, "apiVersion")),
                     "kueue.x-k8s.io/v1beta2");
    snprintf(rv, sizeof(rv), "%s", md(r.body, "resourceVersion"));
    /* A merge patch on /status with a stale resourceVersion: 409. */
    patch(&fx, &wls, "ns", "wl", "status",
          "{\"metadata\":{\"resourceVersion\":\"1\"},\"status\":{\"admission\":"
          "{\"clusterQueue\":\"cq\"}}}",
          &r);
    ck_assert_int_eq(r.err, ERR_CONFLICT);
    ck_assert_ptr_nonnull(
        strstr(r.msg, "Operation cannot be fulfilled on workloads.kueue.x-k8s.io \"wl\""));
    ck_assert_ptr_null(
        json_object_get(fakeapi_get_object(fx.fa, "workloads", "ns", "wl"), "status"));
    /* With the current one: the status changes, the labels in the same patch do not. */
    snprintf(patchtext, sizeof(patchtext),
             "{\"metadata\":{\"resourceVersion\":\"%s\",\"labels\":{\"x\":\"y\"}},"
             "\"spec\":{\"queueName\":\"other\"},"
             "\"status\":{\"admission\":{\"clusterQueue\":\"cq\"}}}",
             rv);
    patch(&fx, &wls, "ns", "wl", "status", patchtext, &r);
    ck_assert_int_eq(r.err, ERR_OK);
    ck_assert_str_eq(
        json_string_value(json_object_get(
            json_object_get(json_object_get(r.body, "status"), "admission"), "clusterQueue")),
        "cq");
    ck_assert_ptr_null(json_object_get(json_object_get(r.body, "metadata"), "labels"));
    ck_assert_str_eq(
        json_string_value(json_object_get(json_object_get(r.body, "spec"), "queueName")), "q");
    /* A PUT of the object keeps the stored status and moves generation with the spec. */
    obj = json_deep_copy(r.body);
    json_object_set_new(obj, "status", json_pack("{s:s}", "bogus", "x"));
    json_object_set_new(json_object_get(obj, "spec"), "queueName", json_string("q2"));
    update(&fx, &wls, "ns", "wl", NULL, obj, &r);
    ck_assert_int_eq(r.err, ERR_OK);
    ck_assert_ptr_nonnull(json_object_get(json_object_get(r.body, "status"), "admission"));
    ck_assert_ptr_null(json_object_get(json_object_get(r.body, "status"), "bogus"));
    ck_assert_int_eq(
        json_integer_value(json_object_get(json_object_get(r.body, "metadata"), "generation")), 2);
    /* A PUT to /status replaces only the status (and does not move generation). */
    json_decref(obj);
    obj = json_deep_copy(r.body);
    json_object_set_new(obj, "status", json_pack("{s:[]}", "conditions"));
    json_object_set_new(json_object_get(obj, "spec"), "queueName", json_string("ignored"));
    update(&fx, &wls, "ns", "wl", "status", obj, &r);
    ck_assert_int_eq(r.err, ERR_OK);
    ck_assert_ptr_null(json_object_get(json_object_get(r.body, "status"), "admission"));
    ck_assert_str_eq(
        json_string_value(json_object_get(json_object_get(r.body, "spec"), "queueName")), "q2");
    ck_assert_int_eq(
        json_integer_value(json_object_get(json_object_get(r.body, "metadata"), "generation")), 2);
    json_decref(obj);
    /* A type without the subresource has no /status path. */
    create(&fx, &cms, "ns", "{\"metadata\":{\"name\":\"c\"}}", &r);
    patch(&fx, &cms, "ns", "c", "status", "{\"status\":{}}", &r);
    ck_assert_int_eq(r.status, 404);
    /* Cluster-scoped: no namespace in the path or the object. */
    create(&fx, &cqs, NULL, "{\"metadata\":{\"name\":\"cq\",\"namespace\":\"ignored\"}}", &r);
    ck_assert_int_eq(r.status, 201);
    ck_assert_ptr_null(json_object_get(json_object_get(r.body, "metadata"), "namespace"));
    get(&fx, &cqs, NULL, "cq", &r);
    ck_assert_int_eq(r.status, 200);
    ck_assert_ptr_nonnull(fakeapi_get_object(fx.fa, "clusterqueues.kueue.x-k8s.io", NULL, "cq"));
    /* The log: what a reconciler test asserts on. */
    ck_assert_uint_eq(fakeapi_count(fx.fa, "patch", "workloads/status"), 2);
    ck_assert_uint_eq(fakeapi_count(fx.fa, "update", "workloads"), 1);
    ck_assert_uint_eq(fakeapi_count(fx.fa, "update", "workloads/status"), 1);
    ck_assert_uint_eq(fakeapi_count(fx.fa, "create", NULL), 3);
    ck_assert_uint_eq(fakeapi_count(fx.fa, NULL, NULL), fakeapi_log_len(fx.fa));
    e = fakeapi_log_at(fx.fa, 1);
    ck_assert_str_eq(e->method, "PATCH");
    ck_assert_str_eq(e->path, "/apis/kueue.x-k8s.io/v1beta2/namespaces/ns/workloads/wl/status");
    ck_assert_str_eq(e->verb, "patch");
    ck_assert_str_eq(e->resource, "workloads/status");
    ck_assert_int_eq(e->status, 409);
    ck_assert_int_eq(fakeapi_log_at(fx.fa, 2)->status, 200);
    ck_assert_ptr_null(fakeapi_log_at(fx.fa, 1000));
    {
        char *text = fakeapi_log_text(fx.fa);

        ck_assert_ptr_nonnull(strstr(text, "PATCH /apis/kueue.x-k8s.io/v1beta2/namespaces/ns/"
                                           "workloads/wl/status -> 409\n"));
        free(text);
    }
    fakeapi_log_clear(fx.fa);
    ck_assert_uint_eq(fakeapi_log_len(fx.fa), 0);
    ck_assert_uint_eq(fakeapi_count(fx.fa, "patch", NULL), 0);
    res_reset(&r);
    fx_fini(&fx, 0);
}
END_TEST

START_TEST(test_delete_with_finalizers)
{
    fx_t fx;
    res_t r = {0};
    rec_t rec = {{0}, 0};
    kube_informer_t *inf;
    char rv[32];
    err_msg_t msg;

    fx_init(&fx);
    inf = informer(&fx, &wls, NULL, 0, &rec);
    create(&fx, &wls, "ns",
           "{\"metadata\":{\"name\":\"w\",\"finalizers\":[\"kueue.x-k8s.io/resource-in-use\"]}}",
           &r);
    ck_assert_str_eq(md(r.body, "resourceVersion"), "2");
    run_until_logged(&fx, &rec, "add:ns/w@2 ");
    /* DELETE with a finalizer: only deletionTimestamp is set (a MODIFIED event). */
    del(&fx, &wls, "ns", "w", NULL, &r);
    ck_assert_int_eq(r.err, ERR_OK);
    ck_assert_int_eq(r.status, 200);
    ck_assert_str_eq(md(r.body, "deletionTimestamp"), "2023-11-14T22:13:20Z");
    ck_assert_str_eq(md(r.body, "resourceVersion"), "3");
    ck_assert_ptr_nonnull(fakeapi_get_object(fx.fa, "workloads", "ns", "w"));
    run_until_logged(&fx, &rec, "upd:ns/w@2>3 ");
    /* Again: nothing changes. */
    del(&fx, &wls, "ns", "w", NULL, &r);
    ck_assert_int_eq(r.status, 200);
    ck_assert_uint_eq(fakeapi_resource_version(fx.fa), 3);
    /* No new finalizers while deleting. */
    patch(&fx, &wls, "ns", "w", NULL, "{\"metadata\":{\"finalizers\":[\"a\",\"b\"]}}", &r);
    ck_assert_int_eq(r.status, 422);
    ck_assert_int_eq(r.err, ERR_INVALID);
    ck_assert_ptr_nonnull(strstr(r.msg, "no new finalizers can be added"));
    /* Removing the last finalizer removes the object: DELETED with the last stored state. */
    patch(&fx, &wls, "ns", "w", NULL, "{\"metadata\":{\"finalizers\":null}}", &r);
    ck_assert_int_eq(r.err, ERR_OK);
    ck_assert_ptr_null(fakeapi_get_object(fx.fa, "workloads", "ns", "w"));
    run_until_logged(&fx, &rec, "del:ns/w@4 ");
    /* Without finalizers: gone at once; a stale precondition first is a 409. */
    create(&fx, &wls, "ns", "{\"metadata\":{\"name\":\"v\"}}", &r);
    snprintf(rv, sizeof(rv), "%s", md(r.body, "resourceVersion"));
    del(&fx, &wls, "ns", "v", "1", &r);
    ck_assert_int_eq(r.err, ERR_CONFLICT);
    ck_assert_ptr_nonnull(strstr(r.msg, "the ResourceVersion in the precondition (1) does not "
                                        "match the ResourceVersion in record"));
    del(&fx, &wls, "ns", "v", rv, &r);
    ck_assert_int_eq(r.err, ERR_OK);
    ck_assert_ptr_null(fakeapi_get_object(fx.fa, "workloads", "ns", "v"));
    del(&fx, &wls, "ns", "v", NULL, &r);
    ck_assert_int_eq(r.err, ERR_NOT_FOUND);
    /* The direct path follows the same rules. */
    put(&fx, "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"Workload\",\"metadata\":"
             "{\"name\":\"d\",\"namespace\":\"ns\",\"finalizers\":[\"f\"]}}");
    ck_assert_int_eq(fakeapi_delete_object(fx.fa, "workloads", "ns", "d", &msg), ERR_OK);
    ck_assert_str_ne(md(fakeapi_get_object(fx.fa, "workloads", "ns", "d"), "deletionTimestamp"),
                     "");
    put(&fx,
        "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"Workload\",\"metadata\":"
        "{\"name\":\"d\",\"namespace\":\"ns\",\"deletionTimestamp\":\"2023-11-14T22:13:20Z\"}}");
    ck_assert_ptr_null(fakeapi_get_object(fx.fa, "workloads", "ns", "d"));
    ck_assert_int_eq(fakeapi_delete_object(fx.fa, "workloads", "ns", "d", &msg), ERR_NOT_FOUND);
    run_until_logged(&fx, &rec, "del:ns/d@");
    ck_assert_str_eq(rec.log, "add:ns/w@2 upd:ns/w@2>3 del:ns/w@4 add:ns/v@5 del:ns/v@6 "
                              "add:ns/d@7 upd:ns/d@7>8 del:ns/d@9 ");
    kube_informer_close(inf, on_closed, &fx);
    res_reset(&r);
    fx_fini(&fx, 1);
}
END_TEST

START_TEST(test_informer_lists_pages_and_watches)
{
    fx_t fx;
    res_t r = {0};
    rec_t rec = {{0}, 0};
    kube_informer_t *inf;
    kube_informer_stats_t st;

    fx_init(&fx);
    put_cm(&fx, "a", "x");
    put_cm(&fx, "a", "y");
    put_cm(&fx, "a", "z");
    put_cm(&fx, "b", "x");
    inf = informer(&fx, &cms, "a", 2, &rec);
    ck_assert_str_eq(rec.log, "add:a/x@2 add:a/y@3 add:a/z@4 ");
    ck_assert_str_eq(kube_informer_resource_version(inf), "5");
    /* Two pages, then a watch from the list's version. */
    ck_assert_uint_eq(fakeapi_count(fx.fa, "list", "configmaps"), 2);
    ck_assert_ptr_nonnull(strstr(fakeapi_log_at(fx.fa, 0)->query, "limit=2"));
    ck_assert_ptr_nonnull(strstr(fakeapi_log_at(fx.fa, 1)->query, "continue="));
    ck_assert_str_eq(fakeapi_log_at(fx.fa, 2)->verb, "watch");
    ck_assert_ptr_nonnull(strstr(fakeapi_log_at(fx.fa, 2)->query, "resourceVersion=5"));
    ck_assert_int_eq(fakeapi_log_at(fx.fa, 2)->status, 200);
    /* Changes by direct access and through the client each arrive exactly once. */
    put(&fx, "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"x\","
             "\"namespace\":\"a\"},\"data\":{\"k\":\"v\"}}");
    create(&fx, &cms, "b", "{\"metadata\":{\"name\":\"other-ns\"}}", &r);
    create(&fx, &cms, "a", "{\"metadata\":{\"name\":\"new\"}}", &r);
    del(&fx, &cms, "a", "y", NULL, &r);
    run_until_logged(&fx, &rec, "del:a/y@");
    ck_assert_str_eq(rec.log, "add:a/x@2 add:a/y@3 add:a/z@4 upd:a/x@2>6 add:a/new@8 del:a/y@9 ");
    ck_assert_ptr_nonnull(kube_informer_get(inf, "a", "new"));
    st = kube_informer_stats(inf);
    ck_assert_uint_eq(st.lists, 1);
    ck_assert_uint_eq(st.watches, 1);
    ck_assert_uint_eq(st.gone, 0);
    kube_informer_close(inf, on_closed, &fx);
    res_reset(&r);
    fx_fini(&fx, 1);
}
END_TEST

/* Watch events as "TYPE:name@rv " (ERROR: "ERROR:<code> "). */
typedef struct wrec_s {
    char log[2048];
    res_t end;
} wrec_t;

static void on_wevent(kube_event_type_t type, json_t *obj, void *data)
{
    static const char *const names[] = {"ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR"};
    wrec_t *w = data;
    size_t used = strlen(w->log);

    if (type == KUBE_EVENT_ERROR)
        snprintf(w->log + used, sizeof(w->log) - used, "ERROR:%lld ",
                 (long long)json_integer_value(json_object_get(obj, "code")));
    else
        snprintf(w->log + used, sizeof(w->log) - used, "%s:%s@%s ", names[type], md(obj, "name"),
                 md(obj, "resourceVersion"));
}

static void on_wdone(const kube_result_t *kr, void *data)
{
    on_done(kr, &((wrec_t *)data)->end);
}

static void watch(fx_t *fx, const kube_resource_t *res, const kube_watch_opts_t *wo, wrec_t *w,
                  kube_req_t **req)
{
    err_msg_t msg;

    memset(w, 0, sizeof(*w));
    ck_assert_int_eq(kube_watch(fx->client, res, "a", wo, on_wevent, on_wdone, w, req, &msg),
                     ERR_OK);
}

START_TEST(test_watch_resume_selectors_bookmarks_timeout)
{
    fx_t fx;
    kube_watch_opts_t wo;
    wrec_t w1, w2, w3;
    kube_req_t *req2;
    fakeapi_fault_t f;
    uint64_t t0;

    fx_init(&fx);
    put(&fx, "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"p\","
             "\"namespace\":\"a\",\"labels\":{\"team\":\"x\"}}}");
    put_cm(&fx, "a", "q");
    put(&fx, "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"p\","
             "\"namespace\":\"a\",\"labels\":{\"team\":\"x\"},\"data\":{\"k\":\"v\"}}}");
    /* From resourceVersion 2: the history after it, bookmarks, then the end at timeoutSeconds. */
    memset(&wo, 0, sizeof(wo));
    wo.resource_version = "2";
    wo.bookmarks = true;
    wo.timeout_seconds = 1;
    t0 = uv_now(&fx.loop);
    watch(&fx, &cms, &wo, &w1, NULL);
    /* Without a resourceVersion: the current state as ADDED, in key order; with a selector. */
    memset(&wo, 0, sizeof(wo));
    wo.label_selector = "team=x";
    watch(&fx, &cms, &wo, &w2, &req2);
    /* From "0": the current state too. */
    memset(&wo, 0, sizeof(wo));
    wo.resource_version = "0";
    watch(&fx, &cms, &wo, &w3, NULL);
    while (fakeapi_watch_count(fx.fa, "configmaps") < 3)
        uv_run(&fx.loop, UV_RUN_ONCE);
    fakeapi_bookmark(fx.fa);
    /* p leaves the selection (DELETED for w2), then comes back (ADDED). */
    put(&fx, "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"p\","
             "\"namespace\":\"a\",\"labels\":{\"team\":\"y\"}}}");
    put(&fx, "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"p\","
             "\"namespace\":\"a\",\"labels\":{\"team\":\"x\"}}}");
    run_until(&fx, &w1.end.done);
    ck_assert_int_eq(w1.end.err, ERR_OK);
    ck_assert_int_eq(w1.end.status, 200);
    ck_assert_uint_ge(uv_now(&fx.loop) - t0, 1000);
    ck_assert_str_eq(w1.log, "ADDED:q@3 MODIFIED:p@4 BOOKMARK:@4 MODIFIED:p@5 MODIFIED:p@6 ");
    ck_assert_str_eq(w2.log, "ADDED:p@4 DELETED:p@5 ADDED:p@6 ");
    ck_assert_str_eq(w3.log, "ADDED:p@4 ADDED:q@3 MODIFIED:p@5 MODIFIED:p@6 ");
    ck_assert_uint_eq(fakeapi_watch_count(fx.fa, NULL), 2);
    /* The client going away ends the watch on the server too. */
    kube_req_cancel(req2);
    ck_assert_int_eq(w2.end.done, 1);
    ck_assert(w2.end.body == NULL);
    while (fakeapi_watch_count(fx.fa, NULL) > 1)
        uv_run(&fx.loop, UV_RUN_ONCE);
    /* A clean end from the server side, as after timeoutSeconds. */
    ck_assert_uint_eq(fakeapi_close_watches(fx.fa, "configmaps", false), 1);
    run_until(&fx, &w3.end.done);
    ck_assert_int_eq(w3.end.err, ERR_OK);
    /* CUT: one event, then the connection breaks in the middle of the chunked response. */
    memset(&f, 0, sizeof(f));
    f.action = FAKEAPI_CUT;
    f.cut_after = 1;
    fakeapi_fault_next(fx.fa, "watch", "configmaps", &f, 1);
    memset(&wo, 0, sizeof(wo));
    res_reset(&w3.end);
    watch(&fx, &cms, &wo, &w3, NULL);
    run_until(&fx, &w3.end.done);
    ck_assert_str_eq(w3.log, "ADDED:p@6 ");
    ck_assert_int_eq(w3.end.err, ERR_IO);
    ck_assert_int_eq(w3.end.status, 200);
    res_reset(&w1.end);
    res_reset(&w2.end);
    res_reset(&w3.end);
    fx_fini(&fx, 0);
}
END_TEST

/* ---- faults ---------------------------------------------------------------------------------- */

static const char *cm_text(const char *name)
{
    static char buf[128];

    snprintf(buf, sizeof(buf), "{\"metadata\":{\"name\":\"%s\"}}", name);
    return buf;
}

START_TEST(test_faults_seen_by_the_client)
{
    fx_t fx;
    res_t r = {0};
    fakeapi_fault_t f;
    kube_req_t *req;
    json_t *obj;
    err_msg_t msg;
    uint64_t t0;

    fx_init(&fx);
    /* DROP: applied, but the connection closes without an answer -- the ambiguous case. */
    memset(&f, 0, sizeof(f));
    f.action = FAKEAPI_DROP;
    fakeapi_fault_next(fx.fa, "create", "configmaps", &f, 1);
    create(&fx, &cms, "a", cm_text("dropped"), &r);
    ck_assert_int_eq(r.status, 0);
    ck_assert_int_eq(r.err, ERR_IO);
    ck_assert_msg(strstr(r.msg, "Empty reply from server") != NULL, "%s", r.msg);
    ck_assert_ptr_nonnull(fakeapi_get_object(fx.fa, "configmaps", "a", "dropped"));
    ck_assert_str_eq(fakeapi_log_at(fx.fa, 0)->fault, "drop");
    ck_assert_int_eq(fakeapi_log_at(fx.fa, 0)->status, 0);
    /* The same with a TCP reset. */
    f.reset = true;
    fakeapi_fault_next(fx.fa, "create", NULL, &f, 1);
    create(&fx, &cms, "a", cm_text("reset"), &r);
    ck_assert_int_eq(r.status, 0);
    ck_assert_int_eq(r.err, ERR_IO);
    ck_assert_ptr_nonnull(fakeapi_get_object(fx.fa, "configmaps", "a", "reset"));
    /* LOSE: closed before anything happened. */
    memset(&f, 0, sizeof(f));
    f.action = FAKEAPI_LOSE;
    fakeapi_fault_next(fx.fa, NULL, NULL, &f, 1);
    create(&fx, &cms, "a", cm_text("lost"), &r);
    ck_assert_int_eq(r.status, 0);
    ck_assert_int_eq(r.err, ERR_IO);
    ck_assert_ptr_null(fakeapi_get_object(fx.fa, "configmaps", "a", "lost"));
    /* 503 with Retry-After: the client waits and sends it again, which succeeds. */
    memset(&f, 0, sizeof(f));
    f.action = FAKEAPI_FAIL;
    f.status = 503;
    f.retry_after = "0";
    fakeapi_fault_next(fx.fa, "create", "configmaps", &f, 2);
    fx.client_logs = 0;
    create(&fx, &cms, "a", cm_text("retried"), &r);
    ck_assert_int_eq(r.err, ERR_OK);
    ck_assert_int_eq(r.status, 201);
    ck_assert_int_eq(fx.client_logs, 2);
    ck_assert_ptr_nonnull(strstr(fx.last_log, "HTTP 503, retry 2"));
    ck_assert_uint_eq(fakeapi_count(fx.fa, "create", "configmaps"), 3 + 3);
    /* 429 likewise. */
    f.status = 429;
    fakeapi_fault_next(fx.fa, "get", NULL, &f, 1);
    get(&fx, &cms, "a", "retried", &r);
    ck_assert_int_eq(r.err, ERR_OK);
    /* 500: an error with the server's Status, nothing applied. */
    memset(&f, 0, sizeof(f));
    f.action = FAKEAPI_FAIL;
    f.status = 500;
    fakeapi_fault_next(fx.fa, "create", NULL, &f, 1);
    create(&fx, &cms, "a", cm_text("failed"), &r);
    ck_assert_int_eq(r.err, ERR_HTTP);
    ck_assert_int_eq(r.status, 500);
    ck_assert_str_eq(r.reason, "InternalError");
    ck_assert_ptr_nonnull(strstr(r.msg, "Internal error occurred: injected fault"));
    ck_assert_ptr_null(fakeapi_get_object(fx.fa, "configmaps", "a", "failed"));
    /* 409, 403 and a custom message. */
    f.status = 409;
    fakeapi_fault_next(fx.fa, "patch", "configmaps", &f, 1);
    patch(&fx, &cms, "a", "retried", NULL, "{\"data\":{\"a\":\"b\"}}", &r);
    ck_assert_int_eq(r.err, ERR_CONFLICT);
    ck_assert_ptr_null(
        json_object_get(fakeapi_get_object(fx.fa, "configmaps", "a", "retried"), "data"));
    f.status = 403;
    fakeapi_fault_next(fx.fa, "delete", "configmaps", &f, 1);
    del(&fx, &cms, "a", "retried", NULL, &r);
    ck_assert_int_eq(r.err, ERR_HTTP);
    ck_assert_str_eq(r.reason, "Forbidden");
    ck_assert_ptr_nonnull(strstr(r.msg, "configmaps \"retried\" is forbidden"));
    f.status = 400;
    f.message = "you asked for it";
    fakeapi_fault_next(fx.fa, "get", NULL, &f, 1);
    get(&fx, &cms, "a", "retried", &r);
    ck_assert_int_eq(r.err, ERR_INVALID);
    ck_assert_ptr_nonnull(strstr(r.msg, "you asked for it"));
    /* FAIL_APPLIED 504: the write happened, the answer says it timed out. */
    memset(&f, 0, sizeof(f));
    f.action = FAKEAPI_FAIL_APPLIED;
    f.status = 504;
    fakeapi_fault_next(fx.fa, "create", NULL, &f, 1);
    create(&fx, &cms, "a", cm_text("slow"), &r);
    ck_assert_int_eq(r.err, ERR_TIMEOUT);
    ck_assert_int_eq(r.status, 504);
    ck_assert_ptr_nonnull(fakeapi_get_object(fx.fa, "configmaps", "a", "slow"));
    /* A delay longer than the client's timeout: the client gives up (status 0), the write lands
     * later anyway, as on a slow server. */
    memset(&f, 0, sizeof(f));
    f.delay_ms = 300;
    fakeapi_fault_next(fx.fa, "create", NULL, &f, 1);
    obj = parse(cm_text("late"));
    res_reset(&r);
    ck_assert_int_eq(kube_create(fx.client, &cms, "a", obj, on_done, &r, &req, &msg), ERR_OK);
    json_decref(obj);
    kube_req_set_timeout(req, 100);
    t0 = uv_now(&fx.loop);
    run_until(&fx, &r.done);
    ck_assert_int_eq(r.err, ERR_TIMEOUT);
    ck_assert_int_eq(r.status, 0);
    ck_assert_ptr_null(fakeapi_get_object(fx.fa, "configmaps", "a", "late"));
    while (fakeapi_get_object(fx.fa, "configmaps", "a", "late") == NULL)
        uv_run(&fx.loop, UV_RUN_ONCE);
    ck_assert_uint_ge(uv_now(&fx.loop) - t0, 290);
    ck_assert_uint_eq(fakeapi_log_at(fx.fa, fakeapi_log_len(fx.fa) - 1)->delay_ms, 300);
    ck_assert_int_eq(fakeapi_log_at(fx.fa, fakeapi_log_len(fx.fa) - 1)->status, 0);
    /* A delay within the timeout only slows the answer. */
    f.delay_ms = 50;
    fakeapi_fault_next(fx.fa, "get", NULL, &f, 1);
    t0 = uv_now(&fx.loop);
    get(&fx, &cms, "a", "late", &r);
    ck_assert_int_eq(r.err, ERR_OK);
    ck_assert_uint_ge(uv_now(&fx.loop) - t0, 49);
    /* Stopping with a request parked: the client sees the connection go. */
    f.delay_ms = 10000;
    fakeapi_fault_next(fx.fa, "get", NULL, &f, 1);
    res_reset(&r);
    ck_assert_int_eq(kube_get(fx.client, &cms, "a", "late", NULL, on_done, &r, NULL, &msg), ERR_OK);
    while (fakeapi_log_len(fx.fa) == 0 ||
           fakeapi_log_at(fx.fa, fakeapi_log_len(fx.fa) - 1)->delay_ms != 10000)
        uv_run(&fx.loop, UV_RUN_ONCE);
    kube_client_close(fx.client, on_closed, &fx);
    fakeapi_stop(fx.fa);
    ck_assert_int_eq(uv_run(&fx.loop, UV_RUN_DEFAULT), 0);
    ck_assert_int_eq(r.done, 1);
    ck_assert_int_eq(fx.closed, 1);
    ck_assert_int_eq(uv_loop_close(&fx.loop), 0);
    kube_config_fini(&fx.cfg);
    res_reset(&r);
}
END_TEST

/* A hook that cuts the first watch of configmaps after one event and fails the second with 500. */
typedef struct hook_s {
    int watches;
    char seen[512];
} hook_t;

static void cut_hook(fakeapi_t *fa, const fakeapi_req_t *req, fakeapi_fault_t *f, void *data)
{
    hook_t *h = data;
    size_t used = strlen(h->seen);

    (void)fa;
    snprintf(h->seen + used, sizeof(h->seen) - used, "%u:%s:%s%s%s ", req->seq, req->verb,
             req->resource, req->subresource[0] ? "/" : "", req->subresource);
    if (strcmp(req->verb, "watch") != 0)
        return;
    h->watches++;
    if (h->watches == 1) {
        f->action = FAKEAPI_CUT;
        f->cut_after = 1;
    } else if (h->watches == 2) {
        f->action = FAKEAPI_FAIL;
        f->status = 500;
    }
}

START_TEST(test_cut_watch_resumes_without_relist)
{
    fx_t fx;
    res_t r = {0};
    rec_t rec = {{0}, 0};
    hook_t hook;
    kube_informer_t *inf;
    kube_informer_stats_t st;

    fx_init(&fx);
    memset(&hook, 0, sizeof(hook));
    fakeapi_set_fault(fx.fa, cut_hook, &hook);
    inf = informer(&fx, &cms, "a", 0, &rec);
    /* Two changes: the first goes out, then the stream breaks mid-response. */
    put_cm(&fx, "a", "m");
    put_cm(&fx, "a", "n");
    /* The informer reconnects from the last version it saw (after backoff: a broken stream, a
     * routine drop it does not report, then a 500, which it does), gets the missed change from
     * the history, and never relists. */
    while (hook.watches < 3 || fakeapi_watch_count(fx.fa, "configmaps") == 0)
        uv_run(&fx.loop, UV_RUN_ONCE);
    run_until_logged(&fx, &rec, "ok:watch ");
    ck_assert_str_eq(rec.log, "add:a/m@2 err:watch:500 add:a/n@3 ok:watch ");
    st = kube_informer_stats(inf);
    ck_assert_uint_eq(st.lists, 1);
    ck_assert_uint_eq(st.watches, 3);
    ck_assert_uint_eq(st.gone, 0);
    ck_assert_str_eq(hook.seen, "1:list:configmaps 2:watch:configmaps 3:watch:configmaps "
                                "4:watch:configmaps ");
    ck_assert_ptr_nonnull(strstr(fakeapi_log_at(fx.fa, 2)->query, "resourceVersion=2"));
    ck_assert_ptr_nonnull(strstr(fakeapi_log_at(fx.fa, 3)->query, "resourceVersion=2"));
    ck_assert_str_eq(fakeapi_log_at(fx.fa, 1)->fault, "cut");
    ck_assert_str_eq(fakeapi_log_at(fx.fa, 2)->fault, "fail");
    ck_assert_int_eq(fakeapi_log_at(fx.fa, 2)->status, 500);
    fakeapi_set_fault(fx.fa, NULL, NULL);
    kube_informer_close(inf, on_closed, &fx);
    res_reset(&r);
    fx_fini(&fx, 1);
}
END_TEST

START_TEST(test_compaction_gives_410_and_a_relist)
{
    fx_t fx;
    res_t r = {0};
    rec_t rec = {{0}, 0};
    wrec_t w;
    kube_watch_opts_t wo;
    kube_list_opts_t lo;
    kube_informer_t *inf;
    kube_informer_stats_t st;
    char cont[256];

    fx_init(&fx);
    put_cm(&fx, "a", "k1");
    put_cm(&fx, "a", "k2");
    inf = informer(&fx, &cms, "a", 0, &rec);
    ck_assert_str_eq(kube_informer_resource_version(inf), "3");
    /* A continue token from before the compaction. */
    memset(&lo, 0, sizeof(lo));
    lo.limit = 1;
    list(&fx, &cms, "a", &lo, &r);
    snprintf(cont, sizeof(cont), "%s", md(r.body, "continue"));
    /* The watch breaks; while the informer is away, k1 changes, k2 goes, k3 comes, and the
     * history is compacted: its resourceVersion 3 is too old now. */
    ck_assert_uint_eq(fakeapi_close_watches(fx.fa, NULL, true), 1);
    put(&fx, "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"k1\","
             "\"namespace\":\"a\"},\"data\":{\"v\":\"2\"}}");
    ck_assert_int_eq(fakeapi_delete_object(fx.fa, "configmaps", "a", "k2", NULL), ERR_OK);
    put_cm(&fx, "a", "k3");
    fakeapi_compact(fx.fa);
    run_until_logged(&fx, &rec, "add:a/k3@6 ");
    /* One 410, one relist, and each change reported once by the relist's diff. */
    ck_assert_str_eq(rec.log, "add:a/k1@2 add:a/k2@3 upd:a/k1@2>4 add:a/k3@6 del:a/k2@3 ");
    st = kube_informer_stats(inf);
    ck_assert_uint_eq(st.gone, 1);
    ck_assert_uint_eq(st.lists, 2);
    ck_assert_str_eq(kube_informer_resource_version(inf), "6");
    /* A plain watch from the old version: 200, one ERROR event with 410, then the end. */
    memset(&wo, 0, sizeof(wo));
    wo.resource_version = "3";
    watch(&fx, &cms, &wo, &w, NULL);
    run_until(&fx, &w.end.done);
    ck_assert_str_eq(w.log, "ERROR:410 ");
    ck_assert_int_eq(w.end.err, ERR_OK);
    /* From the compaction point on, the history is there again. */
    put_cm(&fx, "a", "k4");
    wo.resource_version = "6";
    wo.timeout_seconds = 1;
    res_reset(&w.end);
    watch(&fx, &cms, &wo, &w, NULL);
    while (strstr(w.log, "ADDED:k4@7") == NULL)
        uv_run(&fx.loop, UV_RUN_ONCE);
    fakeapi_close_watches(fx.fa, NULL, false);
    run_until(&fx, &w.end.done);
    ck_assert_str_eq(w.log, "ADDED:k4@7 ");
    /* The old continue token: 410 Expired. */
    lo.continue_token = cont;
    list(&fx, &cms, "a", &lo, &r);
    ck_assert_int_eq(r.status, 410);
    ck_assert_int_eq(r.err, ERR_GONE);
    ck_assert_str_eq(r.reason, "Expired");
    kube_informer_close(inf, on_closed, &fx);
    res_reset(&r);
    res_reset(&w.end);
    fx_fini(&fx, 1);
}
END_TEST

static err_t unsuspend(json_t *obj, void *data, bool *changed, err_msg_t *msg)
{
    (void)data;
    (void)msg;
    json_object_set_new(json_object_get(obj, "spec"), "suspend", json_false());
    *changed = true;
    return ERR_OK;
}

START_TEST(test_sluice_types_and_update_retry)
{
    static const kube_resource_t nss = {"", "v1", "namespaces", false};
    static const kube_resource_t jobs = {"batch", "v1", "jobs", true};
    static const kube_resource_t events = {"", "v1", "events", true};
    static const kube_resource_t lqs = {"kueue.x-k8s.io", "v1beta2", "localqueues", true};
    fx_t fx;
    res_t r = {0};
    fakeapi_fault_t f;
    err_msg_t msg;
    json_t *job;

    fx_init_types(&fx, true);
    /* Namespaces are a cluster-scoped type with a status subresource of their own. */
    create(&fx, &nss, NULL, "{\"metadata\":{\"name\":\"team\",\"labels\":{\"a\":\"b\"}}}", &r);
    ck_assert_int_eq(r.status, 201);
    get(&fx, &nss, NULL, "team", &r);
    ck_assert_int_eq(r.status, 200);
    patch(&fx, &nss, NULL, "team", "status", "{\"status\":{\"phase\":\"Active\"}}", &r);
    ck_assert_int_eq(r.status, 200);
    ck_assert_str_eq(fakeapi_log_at(fx.fa, 2)->resource, "namespaces/status");
    /* A suspended Job; its status is the job controller's, dropped on create. */
    create(&fx, &jobs, "team",
           "{\"metadata\":{\"name\":\"j\",\"labels\":{\"kueue.x-k8s.io/queue-name\":\"lq\"}},"
           "\"spec\":{\"suspend\":true,\"parallelism\":2},\"status\":{\"active\":1}}",
           &r);
    ck_assert_int_eq(r.status, 201);
    ck_assert_ptr_null(json_object_get(r.body, "status"));
    ck_assert_str_eq(json_string_value(json_object_get(r.body, "apiVersion")), "batch/v1");
    /* Read-modify-write against a conflicting writer: the injected 409 makes the client read
     * again and redo its change on the fresh object. */
    memset(&f, 0, sizeof(f));
    f.action = FAKEAPI_FAIL;
    f.status = 409;
    fakeapi_fault_next(fx.fa, "update", "jobs", &f, 1);
    fakeapi_log_clear(fx.fa);
    res_reset(&r);
    ck_assert_int_eq(
        kube_update_retry(fx.client, &jobs, "team", "j", NULL, unsuspend, 0, on_done, &r, &msg),
        ERR_OK);
    run_until(&fx, &r.done);
    ck_assert_int_eq(r.err, ERR_OK);
    job = fakeapi_get_object(fx.fa, "jobs", "team", "j");
    ck_assert(json_is_false(json_object_get(json_object_get(job, "spec"), "suspend")));
    ck_assert_int_eq(
        json_integer_value(json_object_get(json_object_get(job, "metadata"), "generation")), 2);
    ck_assert_uint_eq(fakeapi_count(fx.fa, "get", "jobs"), 2);
    ck_assert_uint_eq(fakeapi_count(fx.fa, "update", "jobs"), 2);
    /* Events with generateName, a LocalQueue with its status. */
    create(&fx, &events, "team",
           "{\"metadata\":{\"generateName\":\"j.\"},\"reason\":\"Admitted\","
           "\"involvedObject\":{\"kind\":\"Job\",\"name\":\"j\"}}",
           &r);
    ck_assert_int_eq(r.status, 201);
    ck_assert_int_eq(strlen(md(r.body, "name")), 7);
    create(&fx, &lqs, "team", "{\"metadata\":{\"name\":\"lq\"},\"spec\":{\"clusterQueue\":\"cq\"}}",
           &r);
    patch(&fx, &lqs, "team", "lq", "status", "{\"status\":{\"admittedWorkloads\":1}}", &r);
    ck_assert_int_eq(r.status, 200);
    ck_assert_uint_eq(fakeapi_object_count(fx.fa, NULL), 4);
    res_reset(&r);
    fx_fini(&fx, 0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("fakeapi");
    TCase *tc = tcase_create("loopback");
    SRunner *sr;
    int failed;

    curl_global_init(CURL_GLOBAL_DEFAULT);
    tcase_set_timeout(tc, 20);
    tcase_add_test(tc, test_create_get_list_update);
    tcase_add_test(tc, test_status_subresource);
    tcase_add_test(tc, test_delete_with_finalizers);
    tcase_add_test(tc, test_informer_lists_pages_and_watches);
    tcase_add_test(tc, test_watch_resume_selectors_bookmarks_timeout);
    tcase_add_test(tc, test_faults_seen_by_the_client);
    tcase_add_test(tc, test_cut_watch_resumes_without_relist);
    tcase_add_test(tc, test_compaction_gives_410_and_a_relist);
    tcase_add_test(tc, test_sluice_types_and_update_retry);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    curl_global_cleanup();
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
