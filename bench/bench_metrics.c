/* bench_metrics -- the cost of a /metrics scrape and of the resource-seconds tick at
 * scale: the operator over the in-memory API server with N ClusterQueues (one LocalQueue each)
 * and M Workloads, half admitted (taken as admitted at start, as after a restart), half pending.
 * Usage: bench_metrics [CQS [WORKLOADS]]   (default 1000 50000; docs/observability.md) */
/* SPDX-License-Identifier: Apache-2.0 */
#include "ctrl/ctrl.h"
#include "ctrl/ctrl_int.h" /* ctrl__metrics_tick: a benchmark measures the internal call too */

#include "fakeapi.h"
#include "kube/client.h"
#include "obs/metrics.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void quiet(void *data, int level, const char *text)
{
    (void)data;
    (void)level;
    (void)text;
}

static void put(fakeapi_t *fa, const char *json)
{
    json_t *obj = json_loads(json, 0, NULL);
    err_msg_t msg = {{0}};

    if (obj == NULL || fakeapi_put_object(fa, obj, NULL, &msg) != ERR_OK) {
        fprintf(stderr, "put: %s: %s\n", msg.text, json);
        exit(1);
    }
    json_decref(obj);
}

static double cpu_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static void on_guard(uv_timer_t *t)
{
    (void)t;
}

static int ncq = 1000, nwl = 50000;

/* A Check test only because the in-memory API server asserts with Check. */
START_TEST(bench)
{
    int per = nwl / ncq;
    uv_loop_t loop;
    uv_timer_t guard;
    fakeapi_t *fa;
    kube_config_t kcfg;
    kube_client_t *client;
    kube_client_opts_t co = {0};
    ctrl_config_t cfg;
    ctrl_t *ctrl;
    err_msg_t msg = {{0}};
    char buf[2048];
    double t0, best = 1e9, total = 0;
    size_t bytes = 0;

    uv_loop_init(&loop);
    uv_timer_init(&loop, &guard);
    uv_timer_start(&guard, on_guard, 20, 20);
    fakeapi_start(&loop, &fa);
    fakeapi_register_sluice(fa);
    for (int n = 0; n < 50; n++) {
        snprintf(buf, sizeof(buf),
                 "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"ns-%d\"}}",
                 n);
        put(fa, buf);
    }
    put(fa, "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"ResourceFlavor\",\"metadata\":"
            "{\"name\":\"default\"}}");
    for (int i = 0; i < ncq; i++) {
        snprintf(buf, sizeof(buf),
                 "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"ClusterQueue\","
                 "\"metadata\":{\"name\":\"cq-%d\"},\"spec\":{\"namespaceSelector\":{},"
                 "\"resourceGroups\":[{\"coveredResources\":[\"cpu\",\"nvidia.com/gpu\"],"
                 "\"flavors\":[{\"name\":\"default\",\"resources\":[{\"name\":\"cpu\","
                 "\"nominalQuota\":\"%d\"},{\"name\":\"nvidia.com/gpu\",\"nominalQuota\":\"%d\"}]}]"
                 "}]}}",
                 i, per / 2, per / 2);
        put(fa, buf);
        snprintf(buf, sizeof(buf),
                 "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"LocalQueue\",\"metadata\":"
                 "{\"name\":\"lq-%d\",\"namespace\":\"ns-%d\"},\"spec\":{\"clusterQueue\":"
                 "\"cq-%d\"}}",
                 i, i % 50, i);
        put(fa, buf);
        for (int w = 0; w < per; w++) {
            char status[1024] = "";
            if (w < per / 2)
                snprintf(status, sizeof(status),
                         ",\"status\":{\"admission\":{\"clusterQueue\":\"cq-%d\","
                         "\"podSetAssignments\":[{\"name\":\"main\",\"flavors\":{\"cpu\":"
                         "\"default\",\"nvidia.com/gpu\":\"default\"},\"resourceUsage\":{\"cpu\":"
                         "\"1\",\"nvidia.com/gpu\":\"1\"},\"count\":1}]},\"conditions\":[{"
                         "\"type\":\"QuotaReserved\",\"status\":\"True\",\"reason\":"
                         "\"QuotaReserved\",\"message\":\"m\",\"lastTransitionTime\":"
                         "\"2026-12-01T00:00:00Z\"},{\"type\":\"Admitted\",\"status\":\"True\","
                         "\"reason\":\"Admitted\",\"message\":\"m\",\"lastTransitionTime\":"
                         "\"2026-12-01T00:00:00Z\"}]}",
                         i);
            snprintf(buf, sizeof(buf),
                     "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"Workload\","
                     "\"metadata\":{\"name\":\"wl-%d-%d\",\"namespace\":\"ns-%d\"},\"spec\":{"
                     "\"queueName\":\"lq-%d\",\"podSets\":[{\"name\":\"main\",\"count\":1,"
                     "\"template\":{\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"i\","
                     "\"resources\":{\"requests\":{\"cpu\":\"1\",\"nvidia.com/gpu\":\"1\"}}}]}}}]}"
                     "%s}",
                     i, w, i % 50, i, status);
            put(fa, buf);
        }
    }
    kube_config_init(&kcfg);
    kcfg.server = strdup(fakeapi_url(fa));
    co.http1 = true;
    co.qps_milli = 1000000;
    co.burst = 1000;
    if (kube_client_new(&loop, &kcfg, &co, &client, &msg) != ERR_OK ||
        ctrl_config_init(&cfg, &msg) != ERR_OK)
        ck_abort_msg("%s", msg.text);
    cfg.pods_ready.enabled = false;
    cfg.metrics_cq_resources = true;
    if (ctrl_config_finish(&cfg, &msg) != ERR_OK ||
        ctrl_new(client, &cfg, quiet, NULL, &ctrl, &msg) != ERR_OK ||
        ctrl_start(ctrl, &msg) != ERR_OK) {
        ck_abort_msg("%s", msg.text);
    }
    ctrl_set_leader(ctrl, true);
    t0 = (double)uv_now(&loop);
    while (!ctrl_synced(ctrl))
        uv_run(&loop, UV_RUN_ONCE);
    fprintf(stderr, "synced in %.1f s\n", ((double)uv_now(&loop) - t0) / 1e3);
    t0 = (double)uv_now(&loop);
    while ((double)uv_now(&loop) - t0 < 3000) /* the first cycles park the pending ones */
        uv_run(&loop, UV_RUN_ONCE);
    for (int i = 0; i < 5; i++) {
        metrics_buf_t b = {0};
        double c0 = cpu_ms(), d;
        ck_assert_int_eq(ctrl_metrics_render(ctrl, &b), ERR_OK);
        d = cpu_ms() - c0;
        best = d < best ? d : best;
        total += d;
        bytes = b.len;
        metrics_buf_fini(&b);
    }
    printf(
        "scrape: %d ClusterQueues, %d Workloads: %.1f ms CPU (best of 5; mean %.1f), %zu bytes\n",
        ncq, nwl, best, total / 5, bytes);
    best = 1e9;
    for (int i = 0; i < 3; i++) {
        struct timespec pause = {5, 100000000}; /* the tick integrates every 5 s; the loop does
                                                   not run meanwhile, so it is ours to call */
        double c0, d;
        nanosleep(&pause, NULL);
        c0 = cpu_ms();
        ctrl__metrics_tick(ctrl);
        d = cpu_ms() - c0;
        best = d < best ? d : best;
    }
    printf("resource-seconds tick: %.1f ms CPU (best of 3), every 5 s\n", best);
    /* a benchmark: the process exit releases the rest */
}
END_TEST

/* The text alone, as the large-scale run's scrape renders it: 4 wait-time histograms (Kueue's 16
 * buckets, 3 to 4 labels) for each of `ncq` ClusterQueues and as many LocalQueues, every series
 * observed (the families of the live run's 13.5 MB). */
START_TEST(render_histograms)
{
    static const char *const cq_labels[] = {"cluster_queue", "priority", "replica_role", NULL};
    static const char *const lq_labels[] = {"name", "namespace", "priority", "replica_role", NULL};
    metrics_registry_t *r = metrics_registry_new(0);
    metrics_family_t *f[4];
    double buckets[METRICS_MAX_BUCKETS], t0, best = 1e9;
    size_t nb = metrics_kueue_buckets(16, buckets), bytes = 0;
    char name[64], ns[64];

    ck_assert_ptr_nonnull(r);
    for (int i = 0; i < 4; i++) {
        snprintf(name, sizeof(name), "bench_wait_time_seconds_%d", i);
        ck_assert_int_eq(metrics_family_add(r, name, "Wait time.", METRICS_HISTOGRAM,
                                            i < 2 ? cq_labels : lq_labels, buckets, nb, &f[i],
                                            NULL),
                         ERR_OK);
    }
    for (int q = 0; q < ncq; q++) {
        snprintf(name, sizeof(name), "cq-%d-%d-cohort-%d", q % 6, q % 100, q % 10);
        snprintf(ns, sizeof(ns), "ns-%d", q);
        for (int i = 0; i < 4; i++)
            for (int o = 0; o < 50; o++)
                ck_assert_int_eq(metrics_histogram_observe(
                                     f[i],
                                     i < 2 ? (const char *const[]){name, "0", "standalone"}
                                           : (const char *const[]){"lq", ns, "0", "standalone"},
                                     (double)(o * 7 % 600) + 0.25),
                                 ERR_OK);
    }
    for (int i = 0; i < 5; i++) {
        metrics_buf_t b = {0};
        double d;
        t0 = cpu_ms();
        ck_assert_int_eq(metrics_render(r, &b), ERR_OK);
        d = cpu_ms() - t0;
        best = d < best ? d : best;
        bytes = b.len;
        metrics_buf_fini(&b);
    }
    printf("render: %d x 4 wait-time histograms (16 buckets): %.1f ms CPU (best of 5), %zu bytes\n",
           ncq, best, bytes);
    metrics_registry_free(r);
}
END_TEST

int main(int argc, char **argv)
{
    Suite *s = suite_create("bench_metrics");
    TCase *tc = tcase_create("bench");
    SRunner *sr;

    if (argc > 1)
        ncq = atoi(argv[1]);
    if (argc > 2)
        nwl = atoi(argv[2]);
    tcase_set_timeout(tc, 3600);
    tcase_add_test(tc, render_histograms);
    tcase_add_test(tc, bench);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_set_fork_status(sr, CK_NOFORK);
    srunner_run_all(sr, CK_SILENT);
    return srunner_ntests_failed(sr) == 0 ? 0 : 1;
}
