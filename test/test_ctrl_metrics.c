/* test_ctrl_metrics -- the operator's /metrics against the in-memory API server: Kueue's gauges
 * follow the engine (2 admitted + 1 pending in a 2-cpu ClusterQueue), counters move where things
 * happen (admissions, a preemption and its eviction, API writes, webhook answers), the switches
 * of Kueue's metrics configuration add or remove families, and a deleted ClusterQueue's series
 * vanish at the next scrape. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "ctrl/ctrl.h"

#include "fakeapi.h"
#include "kube/client.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct fx_s {
    uv_loop_t loop;
    uv_timer_t guard; /* keeps run_until() from blocking when nothing else is pending */
    fakeapi_t *fa;
    kube_config_t kcfg;
    kube_client_t *client;
    ctrl_config_t cfg;
    ctrl_t *ctrl;
    int closed;
    char *text; /* the last scrape (owned) */
} fx_t;

static void on_guard(uv_timer_t *t)
{
    (void)t;
}

static void quiet(void *data, int level, const char *text)
{
    (void)data;
    if (getenv("SLUICE_TEST_VERBOSE") != NULL)
        fprintf(stderr, "ctrl: %d %s\n", level, text);
}

static void put(fx_t *fx, const char *json)
{
    json_error_t e;
    json_t *obj = json_loads(json, 0, &e);
    err_msg_t msg = {{0}};

    ck_assert_msg(obj != NULL, "%s: %s", e.text, json);
    ck_assert_msg(fakeapi_put_object(fx->fa, obj, NULL, &msg) == ERR_OK, "%s", msg.text);
    json_decref(obj);
}

static void run_until(fx_t *fx, bool (*cond)(fx_t *), double secs, const char *what)
{
    uint64_t deadline = uv_now(&fx->loop) + (uint64_t)(secs * 1000);

    while (!cond(fx)) {
        ck_assert_msg(uv_now(&fx->loop) < deadline, "timed out waiting for %s", what);
        uv_run(&fx->loop, UV_RUN_ONCE);
    }
}

static bool synced(fx_t *fx)
{
    return ctrl_synced(fx->ctrl);
}

/* Scrape into fx->text. */
static void scrape(fx_t *fx)
{
    metrics_buf_t b = {0};

    ck_assert_int_eq(ctrl_metrics_render(fx->ctrl, &b), ERR_OK);
    free(fx->text);
    fx->text = b.data;
}

/* The value of the series rendered exactly as `series` (name and labels), NAN when absent. */
static double value(const fx_t *fx, const char *series)
{
    size_t n = strlen(series);

    for (const char *p = fx->text; p != NULL && *p != '\0';) {
        const char *eol = strchr(p, '\n');
        if (strncmp(p, series, n) == 0 && p[n] == ' ')
            return strtod(p + n + 1, NULL);
        p = eol ? eol + 1 : NULL;
    }
    return NAN;
}

static void want(fx_t *fx, const char *series, double v)
{
    double got = value(fx, series);
    char name[128], lines[2048] = "";
    size_t used = 0;

    /* On failure, show the family's lines (the whole scrape is too long for Check). */
    snprintf(name, sizeof(name), "%.*s", (int)strcspn(series, "{"), series);
    for (const char *p = fx->text; got != v && p != NULL && *p != '\0';) {
        const char *eol = strchr(p, '\n');
        size_t n = eol ? (size_t)(eol - p) + 1 : strlen(p);
        if (strncmp(p, name, strlen(name)) == 0 && used + n < sizeof(lines)) {
            memcpy(lines + used, p, n);
            lines[used += n] = '\0';
        }
        p = eol ? eol + 1 : NULL;
    }
    ck_assert_msg(got == v, "%s = %g, want %g\n%s", series, got, v, lines);
}

/* The configuration's metrics section (a JSON object) or NULL; a 2-cpu ClusterQueue "cq" that
 * preempts lower priorities, LocalQueue ns/lq, WorkloadPriorityClass "high". */
static void fx_start(fx_t *fx, const char *metrics)
{
    kube_client_opts_t co;
    err_msg_t msg = {{0}};

    memset(fx, 0, sizeof(*fx));
    ck_assert_int_eq(uv_loop_init(&fx->loop), 0);
    uv_timer_init(&fx->loop, &fx->guard);
    uv_timer_start(&fx->guard, on_guard, 20, 20);
    ck_assert_int_eq(fakeapi_start(&fx->loop, &fx->fa), ERR_OK);
    ck_assert_int_eq(fakeapi_register_sluice(fx->fa), ERR_OK);
    put(fx, "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"ns\"}}");
    put(fx, "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"ResourceFlavor\",\"metadata\":"
            "{\"name\":\"default\"}}");
    put(fx, "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"ClusterQueue\",\"metadata\":"
            "{\"name\":\"cq\"},\"spec\":{\"cohortName\":\"co\",\"namespaceSelector\":{},"
            "\"preemption\":{"
            "\"withinClusterQueue\":\"LowerPriority\"},\"resourceGroups\":[{"
            "\"coveredResources\":[\"cpu\"],\"flavors\":[{\"name\":\"default\",\"resources\":[{"
            "\"name\":\"cpu\",\"nominalQuota\":\"2\",\"borrowingLimit\":\"1\"}]}]}]}}");
    put(fx, "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"LocalQueue\",\"metadata\":"
            "{\"name\":\"lq\",\"namespace\":\"ns\"},\"spec\":{\"clusterQueue\":\"cq\"}}");
    put(fx, "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"WorkloadPriorityClass\","
            "\"metadata\":{\"name\":\"high\"},\"value\":1000}");
    kube_config_init(&fx->kcfg);
    fx->kcfg.server = strdup(fakeapi_url(fx->fa));
    memset(&co, 0, sizeof(co));
    co.http1 = true;
    co.qps_milli = 1000000;
    co.burst = 1000;
    ck_assert_int_eq(kube_client_new(&fx->loop, &fx->kcfg, &co, &fx->client, &msg), ERR_OK);
    ck_assert_int_eq(ctrl_config_init(&fx->cfg, &msg), ERR_OK);
    fx->cfg.pods_ready.enabled = false;
    if (metrics != NULL) {
        char doc[512];
        json_t *d;
        snprintf(doc, sizeof(doc),
                 "{\"apiVersion\":\"config.kueue.x-k8s.io/v1beta2\",\"kind\":"
                 "\"Configuration\",\"metrics\":%s}",
                 metrics);
        d = json_loads(doc, 0, NULL);
        ck_assert_msg(ctrl_config_apply(&fx->cfg, d, &msg) == ERR_OK, "%s", msg.text);
        json_decref(d);
    }
    ck_assert_msg(ctrl_config_finish(&fx->cfg, &msg) == ERR_OK, "%s", msg.text);
    ck_assert_int_eq(ctrl_new(fx->client, &fx->cfg, quiet, NULL, &fx->ctrl, &msg), ERR_OK);
    ck_assert_msg(ctrl_start(fx->ctrl, &msg) == ERR_OK, "%s", msg.text);
    ctrl_set_leader(fx->ctrl, true);
    run_until(fx, synced, 10, "the caches");
}

static void on_closed(void *data)
{
    ((fx_t *)data)->closed++;
}

static void on_walk(uv_handle_t *h, void *arg)
{
    (void)arg;
    if (!uv_is_closing(h))
        uv_close(h, NULL);
}

static void fx_stop(fx_t *fx)
{
    ctrl_close(fx->ctrl, on_closed, fx);
    kube_client_close(fx->client, on_closed, fx);
    fakeapi_stop(fx->fa);
    uv_close((uv_handle_t *)&fx->guard, NULL);
    uv_run(&fx->loop, UV_RUN_DEFAULT);
    ck_assert_int_eq(fx->closed, 2);
    uv_walk(&fx->loop, on_walk, NULL);
    uv_run(&fx->loop, UV_RUN_DEFAULT);
    ck_assert_int_eq(uv_loop_close(&fx->loop), 0);
    ctrl_config_fini(&fx->cfg);
    kube_config_fini(&fx->kcfg);
    free(fx->text);
}

/* A suspended Job `name` in ns/lq asking for 1 cpu, of WorkloadPriorityClass `pc` (or none). */
static void job(fx_t *fx, const char *name, const char *pc)
{
    char j[1024], label[128] = "";

    if (pc != NULL)
        snprintf(label, sizeof(label), ",\"kueue.x-k8s.io/priority-class\":\"%s\"", pc);
    snprintf(j, sizeof(j),
             "{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"metadata\":{\"name\":\"%s\","
             "\"namespace\":\"ns\",\"labels\":{\"kueue.x-k8s.io/queue-name\":\"lq\"%s}},\"spec\":"
             "{\"suspend\":true,\"parallelism\":1,\"completions\":1,\"template\":{\"spec\":{"
             "\"restartPolicy\":\"Never\",\"containers\":[{\"name\":\"c\",\"image\":\"i\","
             "\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]}}}}",
             name, label);
    put(fx, j);
}

#define R ",replica_role=\"standalone\""

static bool two_admitted_one_pending(fx_t *fx)
{
    scrape(fx);
    /* The engine's gauges move at the decision, the counters once the write is answered. */
    return value(fx, "kueue_admitted_active_workloads{cluster_queue=\"cq\"" R "}") == 2 &&
           value(fx, "kueue_admitted_workloads_total{cluster_queue=\"cq\",priority_class=\"\"" R
                     "}") == 2 &&
           value(fx,
                 "kueue_pending_workloads{cluster_queue=\"cq\",status=\"inadmissible\"" R "}") == 1;
}

static bool preempted(fx_t *fx)
{
    scrape(fx);
    return value(fx, "kueue_evicted_workloads_total{cluster_queue=\"cq\",reason=\"Preempted\","
                     "underlying_cause=\"\",priority_class=\"\"" R "}") == 1;
}

START_TEST(gauges_follow_the_engine)
{
    fx_t fx;

    fx_start(&fx, "{\"enableClusterQueueResources\":true}");
    job(&fx, "a", NULL);
    job(&fx, "b", NULL);
    job(&fx, "c", NULL);
    run_until(&fx, two_admitted_one_pending, 10, "2 admitted, 1 pending in /metrics");
    want(&fx, "kueue_pending_workloads{cluster_queue=\"cq\",status=\"active\"" R "}", 0);
    want(&fx, "kueue_reserving_active_workloads{cluster_queue=\"cq\"" R "}", 2);
    want(&fx, "kueue_cluster_queue_status{cluster_queue=\"cq\",status=\"active\"" R "}", 1);
    want(&fx, "kueue_cluster_queue_status{cluster_queue=\"cq\",status=\"terminating\"" R "}", 0);
    want(&fx, "kueue_admitted_workloads_total{cluster_queue=\"cq\",priority_class=\"\"" R "}", 2);
    want(&fx,
         "kueue_quota_reserved_wait_time_seconds_count{cluster_queue=\"cq\",priority_class=\"\"" R
         "}",
         2);
    want(&fx,
         "kueue_admission_wait_time_seconds_bucket{cluster_queue=\"cq\",priority_class=\"\"" R
         ",le=\"40960\"}",
         2);
    ck_assert(value(&fx, "kueue_admission_attempts_total{result=\"success\"" R "}") >= 1);
    want(&fx,
         "kueue_cluster_queue_resource_reservation{cohort=\"co\",cluster_queue=\"cq\",flavor="
         "\"default\",resource=\"cpu\"" R "}",
         2);
    want(&fx,
         "kueue_cluster_queue_nominal_quota{cohort=\"co\",cluster_queue=\"cq\",flavor=\"default\","
         "resource=\"cpu\"" R "}",
         2);
    want(&fx,
         "kueue_cluster_queue_borrowing_limit{cohort=\"co\",cluster_queue=\"cq\",flavor="
         "\"default\",resource=\"cpu\"" R "}",
         1);
    want(&fx,
         "kueue_cluster_queue_lending_limit{cohort=\"co\",cluster_queue=\"cq\",flavor=\"default\","
         "resource=\"cpu\"" R "}",
         INFINITY);
    ck_assert_ptr_nonnull(strstr(fx.text, "kueue_cluster_queue_lending_limit{cohort=\"co\","
                                          "cluster_queue=\"cq\",flavor=\"default\",resource="
                                          "\"cpu\"" R "} +Inf\n"));
    want(
        &fx,
        "kueue_local_queue_pending_workloads{name=\"lq\",namespace=\"ns\",status=\"inadmissible\"" R
        "}",
        1);
    want(&fx, "kueue_local_queue_admitted_active_workloads{name=\"lq\",namespace=\"ns\"" R "}", 2);
    want(&fx, "kueue_local_queue_status{name=\"lq\",namespace=\"ns\",active=\"True\"" R "}", 1);
    want(&fx,
         "kueue_local_queue_resource_usage{name=\"lq\",namespace=\"ns\",flavor=\"default\","
         "resource=\"cpu\"" R "}",
         2);
    want(&fx,
         "sluice_cluster_queue_idle_nominal_quota{cluster_queue=\"cq\",flavor=\"default\","
         "resource=\"cpu\"}",
         0);
    want(&fx, "sluice_cache_objects{kind=\"workloads\"}", 3);
    want(&fx, "sluice_cache_objects{kind=\"jobs\"}", 3);
    /* A decision whose write met a conflict is made again: at least one per admission. */
    ck_assert(value(&fx, "sluice_engine_decisions_total{kind=\"admit\"}") >= 2);
    ck_assert(value(&fx, "sluice_api_writes_total{resource=\"workloads\",result=\"success\"}") >=
              5); /* 3 created, 2 admitted */
    want(&fx, "sluice_leader", 1);
    ck_assert_ptr_nonnull(strstr(fx.text, "kueue_build_info{git_version=\"v"));

    /* A higher priority preempts one of the two: counted where it is decided and written. */
    job(&fx, "hi", "high");
    run_until(&fx, preempted, 10, "the preemption in /metrics");
    want(&fx,
         "kueue_preempted_workloads_total{preempting_cluster_queue=\"cq\",reason="
         "\"InClusterQueue\"" R "}",
         1);
    want(&fx,
         "kueue_local_queue_evicted_workloads_total{name=\"lq\",namespace=\"ns\",reason="
         "\"Preempted\",underlying_cause=\"\",priority_class=\"\"" R "}",
         1);
    ck_assert(value(&fx, "sluice_engine_decisions_total{kind=\"preempt\"}") >= 1);

    /* A ClusterQueue deleted: its series vanish at the next scrape. */
    ck_assert_int_eq(fakeapi_delete_object(fx.fa, "clusterqueues", NULL, "cq", NULL), ERR_OK);
    for (int i = 0; i < 100; i++)
        uv_run(&fx.loop, UV_RUN_ONCE);
    scrape(&fx);
    ck_assert_ptr_null(strstr(fx.text, "kueue_cluster_queue_status{cluster_queue=\"cq\""));
    fx_stop(&fx);
}
END_TEST

/* Kueue's switches: without enableClusterQueueResources no resource families; with
 * localQueueMetrics off no LocalQueue families. Webhook answers are classified by their body. */
START_TEST(switches_and_webhook_results)
{
    fx_t fx;
    static const char allowed[] = "{\"response\":{\"uid\":\"u\",\"allowed\":true}}";
    static const char denied[] = "{\"response\":{\"uid\":\"u\",\"allowed\":false}}";

    fx_start(&fx, "{\"localQueueMetrics\":{\"enable\":false}}");
    scrape(&fx);
    ck_assert_ptr_null(strstr(fx.text, "kueue_cluster_queue_nominal_quota"));
    ck_assert_ptr_null(strstr(fx.text, "kueue_local_queue_"));
    ck_assert_ptr_nonnull(strstr(fx.text, "# TYPE kueue_pending_workloads gauge\n"));
    want(&fx, "kueue_pending_workloads{cluster_queue=\"cq\",status=\"active\"" R "}", 0);
    ctrl_metrics_webhook(fx.ctrl, "/mutate-batch-v1-job", 200, allowed, strlen(allowed));
    ctrl_metrics_webhook(fx.ctrl, "/mutate-batch-v1-job", 200, allowed, strlen(allowed));
    ctrl_metrics_webhook(fx.ctrl, "/validate-batch-v1-job", 200, denied, strlen(denied));
    ctrl_metrics_webhook(fx.ctrl, "/validate-batch-v1-job", 400, "bad", 3);
    ctrl_metrics_webhook(fx.ctrl, "/../../etc/passwd", 404, "not found", 9);
    scrape(&fx);
    want(&fx, "sluice_webhook_requests_total{path=\"/mutate-batch-v1-job\",result=\"allowed\"}", 2);
    want(&fx, "sluice_webhook_requests_total{path=\"/validate-batch-v1-job\",result=\"denied\"}",
         1);
    want(&fx, "sluice_webhook_requests_total{path=\"/validate-batch-v1-job\",result=\"error\"}", 1);
    want(&fx, "sluice_webhook_requests_total{path=\"other\",result=\"error\"}", 1);
    ck_assert_ptr_null(strstr(fx.text, "passwd"));
    fx_stop(&fx);
}
END_TEST

/* localQueueSelector is refused with its path (sluice reports every LocalQueue). */
START_TEST(local_queue_selector_refused)
{
    ctrl_config_t cfg;
    err_msg_t msg = {{0}};
    json_t *d = json_loads("{\"metrics\":{\"localQueueMetrics\":{\"enable\":true,"
                           "\"localQueueSelector\":{}}}}",
                           0, NULL);

    ck_assert_int_eq(ctrl_config_init(&cfg, &msg), ERR_OK);
    ck_assert(cfg.metrics_lq && !cfg.metrics_cq_resources);
    ck_assert_int_eq(ctrl_config_apply(&cfg, d, &msg), ERR_INVALID);
    ck_assert_ptr_nonnull(strstr(msg.text, "metrics.localQueueMetrics.localQueueSelector"));
    json_decref(d);
    d = json_loads("{\"metrics\":{\"enableClusterQueueResources\":\"yes\"}}", 0, NULL);
    ck_assert_int_eq(ctrl_config_apply(&cfg, d, &msg), ERR_INVALID);
    ck_assert_ptr_nonnull(strstr(msg.text, "metrics.enableClusterQueueResources"));
    json_decref(d);
    ctrl_config_fini(&cfg);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("ctrl_metrics");
    TCase *tc = tcase_create("core");

    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, gauges_follow_the_engine);
    tcase_add_test(tc, switches_and_webhook_results);
    tcase_add_test(tc, local_queue_selector_refused);
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
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
