/* test_ctrl_idlectl -- idle reclaim in the operator against the in-memory API server and a canned
 * Prometheus on loopback: an admitted Workload whose pod's GPU shows 0% is warned (Event GPUsIdle,
 * condition sluice.dev/Idle=True), then deactivated (spec.active=false, Evicted
 * DeactivatedDueToIdleGPUs, Event, counter); with no series, an error answer or garbage it is
 * never touched, and a warning is taken back when the metrics go away. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "ctrl/ctrl.h"

#include "crd_schema.h"
#include "ctrl/idle.h"
#include "ctrl_fixture.h"
#include "fakeapi.h"
#include "kube_testsrv.h"

#include <check.h>
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The canned Prometheus: answers every request with `status` and `body`. */
typedef struct prom_s {
    testsrv_t srv;
    int status;
    const char *body;
    char target[2048]; /* the last request's path and query */
} prom_t;

static prom_t prom;
static char events[4096]; /* reasons of the Events created, "GPUsIdle;..." */

static const char idle_answer[] =
    "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":["
    "{\"metric\":{\"namespace\":\"ns\",\"pod\":\"w-0\",\"gpu\":\"0\",\"UUID\":\"GPU-1\"},"
    "\"value\":[1764680000,\"0\"]},"
    "{\"metric\":{\"namespace\":\"ns\",\"pod\":\"w-0\",\"gpu\":\"1\",\"UUID\":\"GPU-2\"},"
    "\"value\":[1764680000,\"0.5\"]}]}}";
/* One GPU of the pod's two reported: incomplete, never idle. */
static const char half_answer[] =
    "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":["
    "{\"metric\":{\"namespace\":\"ns\",\"pod\":\"w-0\",\"gpu\":\"0\"},\"value\":[1,\"0\"]}]}}";
static const char empty_answer[] =
    "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":[]}}";
static const char busy_answer[] =
    "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":["
    "{\"metric\":{\"namespace\":\"ns\",\"pod\":\"w-0\",\"gpu\":\"0\"},\"value\":[1,\"0\"]},"
    "{\"metric\":{\"namespace\":\"ns\",\"pod\":\"w-0\",\"gpu\":\"1\"},\"value\":[1,\"64\"]}]}}";

static void on_prom(testsrv_t *t, testsrv_conn_t *conn, const testsrv_req_t *req)
{
    prom_t *p = t->data;

    snprintf(p->target, sizeof(p->target), "%s", req->target);
    testsrv_reply(conn, p->status, "Content-Type: application/json\r\n", p->body);
}

static void on_request(fakeapi_t *fa, const fakeapi_req_t *req, fakeapi_fault_t *fault, void *data)
{
    const char *r;

    (void)fa;
    (void)fault;
    (void)data;
    if (strcmp(req->resource, "events") != 0 || strcmp(req->verb, "create") != 0)
        return;
    r = req->body != NULL ? strstr(req->body, "\"reason\":\"") : NULL;
    if (r != NULL) {
        const char *end = strchr(r + 10, '"');
        size_t len = strlen(events);
        if (end != NULL)
            snprintf(events + len, sizeof(events) - len, "%.*s;", (int)(end - r - 10), r + 10);
    }
}

/* Serve Pods, start the canned Prometheus answering `body`, then the operator with an idle
 * policy on ClusterQueue cq. The policy's times are shortened after the start (the
 * configuration is borrowed by the controller; the file's floor is a minute): idle 2 s, warned
 * 1 s before. A query goes out each second (the controller's periodic tick). */
static void start(fx_t *fx, const char *body)
{
    fx_kind_t kinds[] = {{"", "v1", "pods", "Pod"}};
    char ann[1024];

    events[0] = '\0';
    fx_serve(fx, kinds, 1);
    fakeapi_set_fault(fx->fa, on_request, NULL);
    memset(&prom, 0, sizeof(prom));
    prom.status = 200;
    prom.body = body;
    testsrv_start(&prom.srv, &fx->loop, on_prom, &prom);
    fx_queues(fx, 4);
    snprintf(ann, sizeof(ann),
             "{\"annotations\":{\"" IDLE_CONFIG_ANNOTATION "\":\"{\\\"prometheus\\\":{\\\"url\\\":"
             "\\\"http://127.0.0.1:%d\\\"},\\\"policies\\\":[{\\\"clusterQueue\\\":\\\"cq\\\","
             "\\\"idleFor\\\":\\\"1h\\\",\\\"threshold\\\":1}]}\"}}",
             prom.srv.port);
    fx_operate(fx, "metadata", ann);
    ck_assert_ptr_nonnull(fx->cfg.idle);
    ck_assert_uint_eq(fx->cfg.idle->nrules, 1);
    fx->cfg.idle->rules[0].policy.idle_ms = 2000;
    fx->cfg.idle->rules[0].policy.warn_ms = 1000;
    fx->cfg.idle->rules[0].policy.warn_set = true;
    fx->cfg.idle->interval_ms = 500;
}

static json_t *wl(fx_t *fx)
{
    return fakeapi_get_object(fx->fa, "workloads", "ns", "w");
}

static const json_t *cond(fx_t *fx, const char *type)
{
    json_t *c;
    size_t i;

    json_array_foreach(json_object_get(json_object_get(wl(fx), "status"), "conditions"), i, c)
    {
        if (strcmp(json_string_value(json_object_get(c, "type")), type) == 0)
            return c;
    }
    return NULL;
}

static bool cond_is(fx_t *fx, const char *type, const char *status)
{
    const json_t *c = cond(fx, type);
    return c != NULL && strcmp(json_string_value(json_object_get(c, "status")), status) == 0;
}

static bool admitted(fx_t *fx)
{
    return cond_is(fx, "Admitted", "True");
}

static bool warned(fx_t *fx)
{
    return cond_is(fx, IDLE_CONDITION, "True");
}

static bool unwarned(fx_t *fx)
{
    return cond_is(fx, IDLE_CONDITION, "False");
}

static bool inactive(fx_t *fx)
{
    return json_is_false(json_object_get(json_object_get(wl(fx), "spec"), "active"));
}

static bool evicted(fx_t *fx)
{
    return cond_is(fx, "Evicted", "True");
}

static bool eviction_counted(fx_t *fx)
{
    metrics_buf_t m = {0};
    bool found;

    ck_assert_int_eq(ctrl_metrics_render(fx->ctrl, &m), ERR_OK);
    found = strstr(m.data, "reason=\"Deactivated\",underlying_cause=\"IdleGPUs\"") != NULL;
    metrics_buf_fini(&m);
    return found;
}

/* A Workload created directly in ns/lq, then its running pod holding 2 GPUs as jobs_start()
 * leaves the pods of an admitted job: label kueue.x-k8s.io/podset, annotation
 * kueue.x-k8s.io/workload. */
static void workload_with_pod(fx_t *fx)
{
    fx_put(fx, "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"Workload\",\"metadata\":{"
               "\"name\":\"w\",\"namespace\":\"ns\"},\"spec\":{\"queueName\":\"lq\",\"podSets\":[{"
               "\"name\":\"main\",\"count\":1,\"template\":{\"spec\":{\"containers\":[{\"name\":"
               "\"c\",\"image\":\"i\",\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]}}}]}}");
    fx_run_until(fx, admitted, 10, "the Workload admitted");
    fx_put(fx, "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"w-0\","
               "\"namespace\":\"ns\",\"labels\":{\"kueue.x-k8s.io/podset\":\"main\"},"
               "\"annotations\":{\"kueue.x-k8s.io/workload\":\"w\"}},\"spec\":{\"containers\":[{"
               "\"name\":\"c\",\"image\":\"i\",\"resources\":{\"limits\":{\"nvidia.com/gpu\":"
               "\"2\"},\"requests\":{\"cpu\":\"1\"}}}]},\"status\":{\"phase\":\"Running\"}}");
}

/* The Workload as written must pass Kueue's CRD schema (crds/, as the real API server checks it):
 * the condition type sluice.dev/Idle, its reasons, the Evicted reason, the message lengths. */
static void schema_valid(fx_t *fx)
{
    const char *src = getenv("SLUICE_SOURCE_DIR");
    char dir[1024];
    crd_set_t set;
    diags_t d;
    err_msg_t msg = {{0}};

    snprintf(dir, sizeof(dir), "%s/crds", src != NULL ? src : ".");
    memset(&set, 0, sizeof(set));
    ck_assert_msg(crd_set_load_dir(&set, dir, &msg) == ERR_OK, "%s", msg.text);
    diags_init(&d);
    ck_assert(crd_set_validate_object(&set, wl(fx), &d));
    ck_assert_msg(d.nerrors == 0, "%s: %s", d.len ? d.items[0].path : "",
                  d.len ? d.items[0].message : "");
    diags_fini(&d);
    crd_set_fini(&set);
}

/* Let the loop run for `ms` milliseconds. */
static void run_for(fx_t *fx, uint64_t ms)
{
    uint64_t end = uv_now(&fx->loop) + ms;

    while (uv_now(&fx->loop) < end)
        uv_run(&fx->loop, UV_RUN_ONCE);
}

static void stop(fx_t *fx)
{
    testsrv_stop(&prom.srv);
    fx_stop(fx);
}

START_TEST(idle_workload_warned_then_deactivated)
{
    fx_t fx;
    metrics_buf_t m = {0};
    const json_t *c;

    start(&fx, idle_answer);
    workload_with_pod(&fx);
    fx_run_until(&fx, warned, 10, "the idle warning");
    ck_assert(!inactive(&fx));
    metrics_buf_fini(&m);
    ck_assert_int_eq(ctrl_metrics_render(fx.ctrl, &m), ERR_OK);
    ck_assert_msg(strstr(m.data, "sluice_idle_workloads{state=\"warned\"} 1\n") != NULL, "%s",
                  m.data);
    c = cond(&fx, IDLE_CONDITION);
    ck_assert_str_eq(json_string_value(json_object_get(c, "reason")), "GPUsIdle");
    ck_assert_msg(strstr(json_string_value(json_object_get(c, "message")),
                         "The workload's 2 GPUs have been idle for") != NULL &&
                      strstr(json_string_value(json_object_get(c, "message")),
                             "utilisation at most 0.5%, threshold 1%, policy of ClusterQueue cq") !=
                          NULL,
                  "%s", json_string_value(json_object_get(c, "message")));
    ck_assert_msg(strstr(events, "GPUsIdle;") != NULL, "%s", events);
    schema_valid(&fx);
    /* The query the server got: the configured names, percent-encoded. */
    ck_assert_str_eq(prom.target, "/api/v1/query?query=max%20by%20%28namespace%2C%20pod%2C%20gpu"
                                  "%29%20%28max_over_time%28DCGM_FI_DEV_GPU_UTIL%7Bpod%21%3D%22%22"
                                  "%7D%5B60s%5D%29%29");

    fx_run_until(&fx, inactive, 10, "the deactivation");
    fx_run_until(&fx, evicted, 10, "the eviction condition");
    c = cond(&fx, "Evicted");
    ck_assert_str_eq(json_string_value(json_object_get(c, "reason")), IDLE_REASON);
    ck_assert_msg(strstr(json_string_value(json_object_get(c, "message")),
                         "deactivated by idle reclaim: its 2 GPUs were idle for") != NULL,
                  "%s", json_string_value(json_object_get(c, "message")));
    ck_assert_msg(strstr(events, "IdleGPUsDeactivated;") != NULL, "%s", events);
    schema_valid(&fx);
    /* Kueue's eviction counter, once the eviction write has been answered. */
    fx_run_until(&fx, eviction_counted, 10, "the eviction counted");
    metrics_buf_fini(&m);
    ck_assert_int_eq(ctrl_metrics_render(fx.ctrl, &m), ERR_OK);
    ck_assert_msg(strstr(m.data, "sluice_idle_warnings_total{cluster_queue=\"cq\",namespace=\"ns\","
                                 "local_queue=\"lq\"} 1\n") != NULL,
                  "%s", m.data);
    ck_assert_msg(strstr(m.data, "sluice_idle_deactivations_total{cluster_queue=\"cq\",namespace="
                                 "\"ns\",local_queue=\"lq\"} 1\n") != NULL,
                  "%s", m.data);
    ck_assert_msg(strstr(m.data, "sluice_idle_queries_total{result=\"success\"}") != NULL, "%s",
                  m.data);
    ck_assert_msg(strstr(m.data, "sluice_idle_workloads{state=\"warned\"} 0\n") != NULL, "%s",
                  m.data);

    metrics_buf_fini(&m);
    stop(&fx);
}
END_TEST

START_TEST(missing_metrics_never_deactivate)
{
    static const char *const bodies[] = {empty_answer, half_answer, "<html>login</html>",
                                         "{\"status\":\"success\",\"data\":{\"resultType\":"
                                         "\"vector\",\"result\":[{\"metric\":{\"namespace\":"
                                         "\"ns\",\"pod\":\"w-0\"},\"value\":[1,\"NaN\"]},"
                                         "{\"metric\":{\"namespace\":\"ns\",\"pod\":\"w-0\"},"
                                         "\"value\":[1,\"0\"]}]}}",
                                         busy_answer};
    fx_t fx;
    int seen;

    start(&fx, empty_answer);
    workload_with_pod(&fx);
    for (size_t i = 0; i < sizeof(bodies) / sizeof(bodies[0]); i++) {
        prom.body = bodies[i];
        seen = prom.srv.requests;
        run_for(&fx, 2600); /* two queries or more: idle ones would have warned by then */
        ck_assert_int_ge(prom.srv.requests, seen + 2);
        ck_assert_msg(cond(&fx, IDLE_CONDITION) == NULL, "answer %zu: warned", i);
        ck_assert_msg(!inactive(&fx), "answer %zu: deactivated", i);
    }
    /* A 503 from the endpoint: nothing either. */
    prom.status = 503;
    prom.body = "{\"status\":\"error\",\"errorType\":\"unavailable\",\"error\":\"down\"}";
    run_for(&fx, 2600);
    ck_assert(cond(&fx, IDLE_CONDITION) == NULL && !inactive(&fx));
    ck_assert_msg(strstr(events, "GPUsIdle") == NULL && strstr(events, "Deactivated") == NULL, "%s",
                  events);
    stop(&fx);
}
END_TEST

START_TEST(warning_taken_back_when_metrics_go)
{
    fx_t fx;
    const json_t *c;

    start(&fx, idle_answer);
    workload_with_pod(&fx);
    fx_run_until(&fx, warned, 10, "the idle warning");
    prom.status = 500;
    prom.body = "oops";
    fx_run_until(&fx, unwarned, 10, "the warning taken back");
    c = cond(&fx, IDLE_CONDITION);
    ck_assert_str_eq(json_string_value(json_object_get(c, "reason")), "MetricsUnavailable");
    schema_valid(&fx);
    run_for(&fx, 3000);
    ck_assert(!inactive(&fx));
    /* Busy GPUs take a warning back too. */
    prom.status = 200;
    prom.body = idle_answer;
    fx_run_until(&fx, warned, 10, "the idle warning again");
    prom.body = busy_answer;
    fx_run_until(&fx, unwarned, 10, "the warning taken back");
    c = cond(&fx, IDLE_CONDITION);
    ck_assert_str_eq(json_string_value(json_object_get(c, "reason")), "GPUsActive");
    run_for(&fx, 3000);
    ck_assert(!inactive(&fx));
    stop(&fx);
}
END_TEST

/* LocalQueue ns/lq with `annotations` (a JSON object's members). */
static void lq_annotated(fx_t *fx, const char *annotations)
{
    char lq[1024];

    snprintf(lq, sizeof(lq),
             "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"LocalQueue\",\"metadata\":"
             "{\"name\":\"lq\",\"namespace\":\"ns\",\"annotations\":{%s}},\"spec\":{"
             "\"clusterQueue\":\"cq\"}}",
             annotations);
    fx_put(fx, lq);
}

START_TEST(local_queue_annotations_win)
{
    fx_t fx;
    const json_t *c;
    const char *m;

    start(&fx, idle_answer);
    /* Invalid annotations on the LocalQueue: no policy for its Workloads at all, not even the
     * ClusterQueue's (which would deactivate within 3 s). */
    lq_annotated(&fx, "\"" IDLE_ANN_FOR "\":\"soon\"");
    workload_with_pod(&fx);
    run_for(&fx, 3500);
    ck_assert(cond(&fx, IDLE_CONDITION) == NULL && !inactive(&fx));
    /* Valid: the LocalQueue's policy, its threshold the section's default (0), not the
     * ClusterQueue rule's 1%: utilisation 0.5% is busy there. */
    lq_annotated(&fx, "\"" IDLE_ANN_FOR "\":\"1m\",\"" IDLE_ANN_WARN "\":\"59s\"");
    run_for(&fx, 3500);
    ck_assert(cond(&fx, IDLE_CONDITION) == NULL);
    lq_annotated(&fx, "\"" IDLE_ANN_FOR "\":\"1m\",\"" IDLE_ANN_WARN
                      "\":\"59s\",\"" IDLE_ANN_THRESHOLD "\":\"0.5\"");
    fx_run_until(&fx, warned, 10, "the idle warning");
    c = cond(&fx, IDLE_CONDITION);
    m = json_string_value(json_object_get(c, "message"));
    ck_assert_msg(strstr(m, "threshold 0.5%, policy of LocalQueue ns/lq): it will be deactivated "
                            "(spec.active=false) once idle for 1m") != NULL,
                  "%s", m);
    stop(&fx);
}
END_TEST

/* A replica that stops leading and leads again did not watch the GPUs meanwhile: its clocks
 * restart, and the deactivation waits for a whole idleFor after it leads again. */
START_TEST(leadership_gap_restarts_clocks)
{
    fx_t fx;
    uint64_t back;

    start(&fx, idle_answer);
    workload_with_pod(&fx);
    fx_run_until(&fx, warned, 10, "the idle warning");
    ctrl_set_leader(fx.ctrl, false);
    run_for(&fx, 2500); /* five intervals without a query */
    ck_assert(!inactive(&fx));
    ctrl_set_leader(fx.ctrl, true);
    back = uv_now(&fx.loop);
    while (uv_now(&fx.loop) < back + 1800) {
        uv_run(&fx.loop, UV_RUN_ONCE);
        ck_assert_msg(!inactive(&fx), "deactivated %llu ms after leading again",
                      (unsigned long long)(uv_now(&fx.loop) - back));
    }
    fx_run_until(&fx, inactive, 10, "the deactivation");
    stop(&fx);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("ctrl_idlectl");
    TCase *tc = tcase_create("core");

    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, idle_workload_warned_then_deactivated);
    tcase_add_test(tc, missing_metrics_never_deactivate);
    tcase_add_test(tc, warning_taken_back_when_metrics_go);
    tcase_add_test(tc, local_queue_annotations_win);
    tcase_add_test(tc, leadership_gap_restarts_clocks);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(suite());
    int failed;

    curl_global_init(CURL_GLOBAL_DEFAULT);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    curl_global_cleanup();
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
