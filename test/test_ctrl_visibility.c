/* test_ctrl_visibility -- Kueue's visibility API from the engine against the in-memory API server:
 * routes and their errors (pure), then pending workloads of a ClusterQueue and of each of its
 * LocalQueues with their positions, limit and offset, discovery, and unknown queues; the CA
 * handed over by the webhook Secret injected into the APIService that routes to sluice's
 * visibility Service (not into another's), again after a new CA. */
/* SPDX-License-Identifier: Apache-2.0 */
#define _GNU_SOURCE /* strptime, timegm */
#include "ctrl/visibility.h"

#include "ctrl/visibility_ca.h"
#include "ctrl/visibility_server.h"
#include "ctrl_fixture.h"
#include "hook/cert.h"
#include "util/base64.h"

#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

START_TEST(routes)
{
    visibility_route_t r;
    err_msg_t msg = {{0}};

    ck_assert_int_eq(visibility_route("/apis/visibility.kueue.x-k8s.io/v1beta2/clusterqueues/gpu/"
                                      "pendingworkloads",
                                      "", &r, &msg),
                     ERR_OK);
    ck_assert(!r.discovery && !r.local_queue);
    ck_assert_str_eq(r.name, "gpu");
    ck_assert_str_eq(r.version, "v1beta2");
    ck_assert_int_eq(r.limit, 1000);
    ck_assert_int_eq(r.offset, 0);
    ck_assert_int_eq(visibility_route("/apis/visibility.kueue.x-k8s.io/v1beta1/namespaces/team-a/"
                                      "localqueues/lq/pendingworkloads",
                                      "limit=2&offset=3&timeout=32s", &r, &msg),
                     ERR_OK);
    ck_assert(r.local_queue);
    ck_assert_str_eq(r.ns, "team-a");
    ck_assert_str_eq(r.name, "lq");
    ck_assert_int_eq(r.limit, 2);
    ck_assert_int_eq(r.offset, 3);
    ck_assert_int_eq(visibility_route("/apis", "", &r, &msg), ERR_OK);
    ck_assert(r.discovery);
    ck_assert_int_eq(visibility_route("/apis/visibility.kueue.x-k8s.io/v1beta2", "", &r, &msg),
                     ERR_OK);
    ck_assert(r.discovery);
    static const char *const missing[] = {
        "/",
        "/api/v1",
        "/apis/kueue.x-k8s.io/v1beta2",
        "/apis/visibility.kueue.x-k8s.io/v1/clusterqueues/gpu/pendingworkloads",
        "/apis/visibility.kueue.x-k8s.io/v1beta2/clusterqueues/gpu",
        "/apis/visibility.kueue.x-k8s.io/v1beta2/clusterqueues//pendingworkloads",
        "/apis/visibility.kueue.x-k8s.io/v1beta2/clusterqueues/gpu/pendingworkloads/x",
        "/apis/visibility.kueue.x-k8s.io/v1beta2/namespaces/ns/clusterqueues/q/pendingworkloads",
        "/apis/visibility.kueue.x-k8s.io/v1beta2/workloads/q/pendingworkloads"};
    for (size_t i = 0; i < sizeof(missing) / sizeof(missing[0]); i++)
        ck_assert_msg(visibility_route(missing[i], "", &r, &msg) == ERR_NOT_FOUND, "%s",
                      missing[i]);
    static const char *const bad[] = {"limit=0", "limit=-1", "offset=x",
                                      "limit=", "offset=9999999999999999999"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        ck_assert_msg(visibility_route("/apis/visibility.kueue.x-k8s.io/v1beta2/clusterqueues/gpu/"
                                       "pendingworkloads",
                                       bad[i], &r, &msg) == ERR_INVALID,
                      "%s", bad[i]);
    ck_assert_ptr_nonnull(strstr(msg.text, "offset"));
}
END_TEST

/* ---- against the engine ---------------------------------------------------------------------- */

static json_t *got;
static int got_status;

static void get(fx_t *fx, const char *path, const char *query)
{
    hook_request_t req = {.method = "GET", .path = path, .query = query ? query : ""};
    hook_response_t resp = {.status = 200};
    json_error_t e;

    ctrl_visibility_serve(fx->ctrl, &req, &resp);
    json_decref(got);
    got_status = resp.status;
    got = json_loadb(resp.owned_body ? resp.owned_body : resp.body, resp.body_len, 0, &e);
    ck_assert_msg(got != NULL || resp.body_len == 2, "%d: %.*s", resp.status, (int)resp.body_len,
                  resp.owned_body);
    free(resp.owned_body);
}

/* A suspended 1-cpu Job `name` in ns/`lq`, of priority class `pc` (or none; "max:<s>": a
 * maximum execution time of <s> seconds instead). */
static void job(fx_t *fx, const char *name, const char *lq, const char *pc)
{
    char j[1024], label[128] = "";

    if (pc != NULL && strncmp(pc, "max:", 4) == 0)
        snprintf(label, sizeof(label), ",\"kueue.x-k8s.io/max-exec-time-seconds\":\"%s\"", pc + 4);
    else if (pc != NULL)
        snprintf(label, sizeof(label), ",\"kueue.x-k8s.io/priority-class\":\"%s\"", pc);
    snprintf(j, sizeof(j),
             "{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"metadata\":{\"name\":\"%s\","
             "\"namespace\":\"ns\",\"uid\":\"uid-%s\",\"labels\":{\"kueue.x-k8s.io/queue-name\":"
             "\"%s\"%s}},\"spec\":{\"suspend\":true,\"parallelism\":1,\"completions\":1,"
             "\"template\":{\"spec\":{\"restartPolicy\":\"Never\",\"containers\":[{\"name\":\"c\","
             "\"image\":\"i\",\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]}}}}",
             name, name, lq, label);
    fx_put(fx, j);
}

#define PW "/apis/visibility.kueue.x-k8s.io/v1beta2/"

static size_t want_workloads;

static bool workloads_made(fx_t *fx)
{
    return fakeapi_object_count(fx->fa, "workloads") >= want_workloads;
}

static bool five_pending(fx_t *fx)
{
    get(fx, PW "clusterqueues/cq/pendingworkloads", NULL);
    return got_status == 200 && json_array_size(json_object_get(got, "items")) == 5;
}

/* The first item has a start-time estimate: a periodic run (every second here) has seen it. */
static bool first_estimated(fx_t *fx)
{
    json_t *it;

    if (!five_pending(fx))
        return false;
    it = json_array_get(json_object_get(got, "items"), 0);
    return json_object_get(json_object_get(it, "metadata"), "annotations") != NULL;
}

/* The owner's name of item i. */
static const char *owner_of(size_t i)
{
    json_t *it = json_array_get(json_object_get(got, "items"), i);
    json_t *refs = json_object_get(json_object_get(it, "metadata"), "ownerReferences");

    return json_string_value(json_object_get(json_array_get(refs, 0), "name"));
}

static json_int_t field(size_t i, const char *name)
{
    return json_integer_value(
        json_object_get(json_array_get(json_object_get(got, "items"), i), name));
}

START_TEST(pending_in_queue_order)
{
    fx_t fx;

    fx_serve(&fx, NULL, 0);
    fx_queues(&fx, 1); /* ClusterQueue cq of 1 cpu, LocalQueue ns/lq */
    fx_put(&fx, "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"LocalQueue\",\"metadata\":"
                "{\"name\":\"lq2\",\"namespace\":\"ns\"},\"spec\":{\"clusterQueue\":\"cq\"}}");
    fx_put(&fx, "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"WorkloadPriorityClass\","
                "\"metadata\":{\"name\":\"high\"},\"value\":1000}");
    /* the start-time estimate every second */
    fx_operate(&fx, "metadata", "{\"annotations\":{\"sluice.dev/estimate-interval\":\"1s\"}}");
    get(&fx, "/apis", NULL);
    ck_assert_int_eq(got_status, 200);
    ck_assert_str_eq(json_string_value(json_object_get(got, "kind")), "APIGroupList");
    get(&fx, PW, NULL);
    ck_assert_int_eq(got_status, 200);
    ck_assert_str_eq(json_string_value(json_object_get(got, "kind")), "APIResourceList");
    ck_assert_int_eq(json_array_size(json_object_get(got, "resources")), 4);

    /* One creation second apart (the queue order's timestamp), each Workload made before the
     * next Job. "run" is admitted (not pending); "hi" jumps the queue by priority. */
    static const char *const jobs[][3] = {{"run", "lq", "max:600"}, {"a1", "lq", NULL},
                                          {"b1", "lq2", NULL},      {"a2", "lq", NULL},
                                          {"b2", "lq2", NULL},      {"hi", "lq2", "high"}};
    for (size_t i = 0; i < 6; i++) {
        fakeapi_set_now(fx.fa, 1800000000 + (time_t)i);
        job(&fx, jobs[i][0], jobs[i][1], jobs[i][2]);
        want_workloads = i + 1;
        fx_run_until(&fx, workloads_made, 10, "the Job's Workload");
    }
    fx_run_until(&fx, five_pending, 10, "5 pending in ClusterQueue cq");
    ck_assert_str_eq(json_string_value(json_object_get(got, "kind")), "PendingWorkloadsSummary");
    ck_assert_str_eq(json_string_value(json_object_get(got, "apiVersion")),
                     "visibility.kueue.x-k8s.io/v1beta2");
    /* Queue order: priority first, then creation. Positions in the CQ and in each LQ. */
    static const char *const order[] = {"hi", "a1", "b1", "a2", "b2"};
    static const int lqpos[] = {0, 0, 1, 1, 2};
    for (size_t i = 0; i < 5; i++) {
        ck_assert_str_eq(owner_of(i), order[i]);
        ck_assert_int_eq(field(i, "positionInClusterQueue"), (json_int_t)i);
        ck_assert_int_eq(field(i, "positionInLocalQueue"), lqpos[i]);
    }
    ck_assert_int_eq(field(0, "priority"), 1000);
    json_t *it = json_array_get(json_object_get(got, "items"), 1);
    ck_assert_str_eq(json_string_value(json_object_get(it, "localQueueName")), "lq");
    ck_assert_str_eq(
        json_string_value(json_object_get(json_object_get(it, "metadata"), "namespace")), "ns");
    ck_assert_ptr_nonnull(json_object_get(json_object_get(it, "metadata"), "creationTimestamp"));

    /* The start-time estimate (the operator's periodic run, which the answer reads): "run" holds
     * the only cpu for at most 600 s (its maximum execution time) from its admission a moment
     * ago, so "hi" starts then; the others wait behind "hi", whose runtime nothing tells yet:
     * no estimate. */
    fx_run_until(&fx, first_estimated, 10, "a start-time estimate for the first item");
    it = json_array_get(json_object_get(got, "items"), 0);
    const char *est = json_string_value(
        json_object_get(json_object_get(json_object_get(it, "metadata"), "annotations"),
                        "sluice.dev/estimated-start-time"));
    struct tm tm = {0};
    ck_assert_ptr_nonnull(est);
    ck_assert_ptr_nonnull(strptime(est, "%Y-%m-%dT%H:%M:%SZ", &tm));
    ck_assert_int_le(labs((long)(timegm(&tm) - (time(NULL) + 600))), 30);
    it = json_array_get(json_object_get(got, "items"), 1);
    ck_assert_ptr_null(json_object_get(json_object_get(it, "metadata"), "annotations"));

    /* limit and offset */
    get(&fx, PW "clusterqueues/cq/pendingworkloads", "offset=1&limit=2");
    ck_assert_int_eq(json_array_size(json_object_get(got, "items")), 2);
    ck_assert_str_eq(owner_of(0), "a1");
    ck_assert_int_eq(field(1, "positionInClusterQueue"), 2);
    ck_assert_int_eq(field(1, "positionInLocalQueue"), 1); /* b1: after hi in lq2 */

    /* a LocalQueue's: its own workloads, with their positions in the ClusterQueue */
    get(&fx, PW "namespaces/ns/localqueues/lq2/pendingworkloads", NULL);
    ck_assert_int_eq(json_array_size(json_object_get(got, "items")), 3);
    ck_assert_str_eq(owner_of(2), "b2");
    ck_assert_int_eq(field(2, "positionInClusterQueue"), 4);
    ck_assert_int_eq(field(2, "positionInLocalQueue"), 2);
    get(&fx, PW "namespaces/ns/localqueues/lq2/pendingworkloads", "offset=1&limit=1");
    ck_assert_int_eq(json_array_size(json_object_get(got, "items")), 1);
    ck_assert_str_eq(owner_of(0), "b1");
    ck_assert_int_eq(field(0, "positionInLocalQueue"), 1);
    ck_assert_int_eq(field(0, "positionInClusterQueue"), 2);

    /* errors: metav1.Status */
    get(&fx, PW "clusterqueues/nope/pendingworkloads", NULL);
    ck_assert_int_eq(got_status, 404);
    ck_assert_str_eq(json_string_value(json_object_get(got, "reason")), "NotFound");
    get(&fx, PW "namespaces/other/localqueues/lq/pendingworkloads", NULL);
    ck_assert_int_eq(got_status, 404);
    get(&fx, PW "clusterqueues/cq/pendingworkloads", "limit=0");
    ck_assert_int_eq(got_status, 400);
    ck_assert_str_eq(json_string_value(json_object_get(got, "kind")), "Status");
    hook_request_t post = {
        .method = "POST", .path = PW "clusterqueues/cq/pendingworkloads", .query = ""};
    hook_response_t resp = {.status = 200};
    ctrl_visibility_serve(fx.ctrl, &post, &resp);
    ck_assert_int_eq(resp.status, 405);
    free(resp.owned_body);
    json_decref(got);
    got = NULL;
    fx_stop(&fx);
}
END_TEST

/* ---- the caBundle of the APIServices ------------------------------------------------------ */

static ctrl_visibility_ca_t *vca;

static bool vca_done(fx_t *fx)
{
    (void)fx;
    return ctrl_visibility_ca_done(vca);
}

static const char *apiservice_field(fx_t *fx, const char *name, const char *field)
{
    json_t *o = fakeapi_get_object(fx->fa, "apiservices", NULL, name);

    return json_string_value(json_object_get(json_object_get(o, "spec"), field));
}

static char *want_b64; /* owned: the caBundle expected */

static bool v1beta2_has_bundle(fx_t *fx)
{
    const char *have = apiservice_field(fx, "v1beta2.visibility.kueue.x-k8s.io", "caBundle");

    return have != NULL && strcmp(have, want_b64) == 0;
}

static void closed_cb(void *data)
{
    (*(int *)data)++;
}

START_TEST(cabundle_injected)
{
    fx_t fx;
    ctrl_visibility_server_t *srv = NULL;
    ctrl_visibility_opts_t vo = {"127.0.0.1", 0, NULL, NULL, "sluice-visibility-server.sys.svc",
                                 NULL};
    hook_pem_t ca1 = {0}, ca2 = {0};
    char *bundle = NULL;
    err_msg_t msg = {{0}};
    json_t *o;
    int closed = 0;

    fx_serve(&fx, NULL, 0);
    ck_assert_int_eq(fakeapi_register(fx.fa, "apiregistration.k8s.io", "v1", "apiservices",
                                      "APIService", false, true),
                     ERR_OK);
    /* Ours, as an older manifest shipped it (insecureSkipTLSVerify); v1beta1 routes elsewhere. */
    fx_put(&fx, "{\"apiVersion\":\"apiregistration.k8s.io/v1\",\"kind\":\"APIService\","
                "\"metadata\":{\"name\":\"v1beta2.visibility.kueue.x-k8s.io\"},\"spec\":{"
                "\"group\":\"visibility.kueue.x-k8s.io\",\"version\":\"v1beta2\","
                "\"groupPriorityMinimum\":100,\"versionPriority\":100,"
                "\"insecureSkipTLSVerify\":true,\"service\":{\"name\":"
                "\"sluice-visibility-server\",\"namespace\":\"sys\"}}}");
    fx_put(&fx, "{\"apiVersion\":\"apiregistration.k8s.io/v1\",\"kind\":\"APIService\","
                "\"metadata\":{\"name\":\"v1beta1.visibility.kueue.x-k8s.io\"},\"spec\":{"
                "\"group\":\"visibility.kueue.x-k8s.io\",\"version\":\"v1beta1\","
                "\"groupPriorityMinimum\":100,\"versionPriority\":90,"
                "\"insecureSkipTLSVerify\":true,\"service\":{\"name\":"
                "\"kueue-visibility-server\",\"namespace\":\"kueue-system\"}}}");
    fx_operate(&fx, NULL, NULL);
    ck_assert_int_eq(ctrl_visibility_server_start(fx.client, fx.ctrl, &vo, NULL, NULL, &srv, &msg),
                     ERR_OK);
    vca = ctrl_visibility_ca_new(fx.client, fx.ctrl, srv, "sluice-visibility-server", "sys", NULL,
                                 NULL);
    ck_assert_ptr_nonnull(vca);

    /* The first CA: into ours, insecureSkipTLSVerify dropped; the other one untouched. */
    ck_assert_int_eq(hook_cert_ca("ca-1", 30, &ca1, &msg), ERR_OK);
    ck_assert_int_eq(base64_encode(ca1.cert, ca1.cert_len, &want_b64), ERR_OK);
    ctrl_visibility_ca_use(vca, ca1.cert, ca1.cert_len, ca1.key, ca1.key_len);
    fx_run_until(&fx, vca_done, 10, "both APIServices handled");
    ck_assert(v1beta2_has_bundle(&fx));
    o = json_object_get(
        fakeapi_get_object(fx.fa, "apiservices", NULL, "v1beta2.visibility.kueue.x-k8s.io"),
        "spec");
    ck_assert_ptr_null(json_object_get(o, "insecureSkipTLSVerify"));
    ck_assert_ptr_null(apiservice_field(&fx, "v1beta1.visibility.kueue.x-k8s.io", "caBundle"));
    ck_assert(json_is_true(
        json_object_get(json_object_get(fakeapi_get_object(fx.fa, "apiservices", NULL,
                                                           "v1beta1.visibility.kueue.x-k8s.io"),
                                        "spec"),
                        "insecureSkipTLSVerify")));

    /* The same CA again (the hourly read of the Secret): nothing is written. */
    fakeapi_log_clear(fx.fa);
    ctrl_visibility_ca_use(vca, ca1.cert, ca1.cert_len, ca1.key, ca1.key_len);
    for (int i = 0; i < 50; i++)
        uv_run(&fx.loop, UV_RUN_ONCE);
    ck_assert_uint_eq(fakeapi_count(fx.fa, "update", "apiservices"), 0);

    /* A rotation: the new CA with the old one beside it, as the Secret's ca.crt then holds. */
    ck_assert_int_eq(hook_cert_ca("ca-2", 30, &ca2, &msg), ERR_OK);
    ck_assert_int_eq(hook_cert_bundle(ca2.cert, ca1.cert, (int64_t)time(NULL), &bundle, &msg),
                     ERR_OK);
    free(want_b64);
    want_b64 = NULL;
    ck_assert_int_eq(base64_encode(bundle, strlen(bundle), &want_b64), ERR_OK);
    ctrl_visibility_ca_use(vca, bundle, strlen(bundle), ca2.key, ca2.key_len);
    fx_run_until(&fx, v1beta2_has_bundle, 10, "the rotated bundle in the APIService");
    fx_run_until(&fx, vca_done, 10, "both APIServices handled again");

    ctrl_visibility_ca_close(vca);
    vca = NULL;
    ctrl_visibility_server_close(srv, closed_cb, &closed);
    fx_stop(&fx);
    ck_assert_int_eq(closed, 1);
    hook_pem_fini(&ca1);
    hook_pem_fini(&ca2);
    free(bundle);
    free(want_b64);
    want_b64 = NULL;
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("ctrl_visibility");
    TCase *tc = tcase_create("core");

    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, routes);
    tcase_add_test(tc, pending_in_queue_order);
    tcase_add_test(tc, cabundle_injected);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(suite());
    int failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
