/* test_ctrl_metrics -- the operator's /metrics against the in-memory API server: Kueue's gauges
 * follow the engine (2 admitted + 1 pending in a 2-cpu ClusterQueue), counters move where things
 * happen (admissions, a preemption and its eviction, API writes, webhook answers), the switches
 * of Kueue's metrics configuration add or remove families, a deleted ClusterQueue's series
 * vanish at the next scrape, and the resource-seconds counter counts a Workload's use up to the
 * instant its quota is released (finished, preempted) rather than up to the last 5-second tick. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "ctrl/ctrl.h"

#include "ctrl_fixture.h"
#include "fakeapi.h"
#include "kube/client.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static char *scraped; /* the last scrape (owned) */

static void scrape(fx_t *fx)
{
    free(scraped);
    scraped = fx_scrape(fx);
}

static double value(const char *series)
{
    return fx_metric_value(scraped, series);
}

static void want(const char *series, double v)
{
    double got = value(series);
    char name[128], lines[2048] = "";
    size_t used = 0;

    /* On failure, show the family's lines (the whole scrape is too long for Check). */
    snprintf(name, sizeof(name), "%.*s", (int)strcspn(series, "{"), series);
    for (const char *p = scraped; got != v && p != NULL && *p != '\0';) {
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
    fx_serve(fx, NULL, 0);
    fx_put(fx, "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"ns\"}}");
    fx_put(fx,
           "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"ResourceFlavor\",\"metadata\":"
           "{\"name\":\"default\"}}");
    fx_put(fx, "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"ClusterQueue\",\"metadata\":"
               "{\"name\":\"cq\"},\"spec\":{\"cohortName\":\"co\",\"namespaceSelector\":{},"
               "\"preemption\":{"
               "\"withinClusterQueue\":\"LowerPriority\"},\"resourceGroups\":[{"
               "\"coveredResources\":[\"cpu\"],\"flavors\":[{\"name\":\"default\",\"resources\":[{"
               "\"name\":\"cpu\",\"nominalQuota\":\"2\",\"borrowingLimit\":\"1\"}]}]}]}}");
    fx_put(fx, "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"LocalQueue\",\"metadata\":"
               "{\"name\":\"lq\",\"namespace\":\"ns\"},\"spec\":{\"clusterQueue\":\"cq\"}}");
    fx_put(fx, "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"WorkloadPriorityClass\","
               "\"metadata\":{\"name\":\"high\"},\"value\":1000}");
    fx_operate(fx, "metrics", metrics);
}

/* Stop and forget the last scrape. */
static void done(fx_t *fx)
{
    fx_stop(fx);
    free(scraped);
    scraped = NULL;
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
    fx_put(fx, j);
}

#define R ",replica_role=\"standalone\""

static bool two_admitted_one_pending(fx_t *fx)
{
    scrape(fx);
    /* The engine's gauges move at the decision, the counters once the write is answered. */
    return value("kueue_admitted_active_workloads{cluster_queue=\"cq\"" R "}") == 2 &&
           value("kueue_admitted_workloads_total{cluster_queue=\"cq\",priority_class=\"\"" R "}") ==
               2 &&
           value("kueue_pending_workloads{cluster_queue=\"cq\",status=\"inadmissible\"" R "}") == 1;
}

static bool preempted(fx_t *fx)
{
    scrape(fx);
    return value("kueue_evicted_workloads_total{cluster_queue=\"cq\",reason=\"Preempted\","
                 "underlying_cause=\"\",priority_class=\"\"" R "}") == 1;
}

START_TEST(gauges_follow_the_engine)
{
    fx_t fx;

    fx_start(&fx, "{\"enableClusterQueueResources\":true}");
    job(&fx, "a", NULL);
    job(&fx, "b", NULL);
    job(&fx, "c", NULL);
    fx_run_until(&fx, two_admitted_one_pending, 10, "2 admitted, 1 pending in /metrics");
    want("kueue_pending_workloads{cluster_queue=\"cq\",status=\"active\"" R "}", 0);
    want("kueue_reserving_active_workloads{cluster_queue=\"cq\"" R "}", 2);
    want("kueue_cluster_queue_status{cluster_queue=\"cq\",status=\"active\"" R "}", 1);
    want("kueue_cluster_queue_status{cluster_queue=\"cq\",status=\"terminating\"" R "}", 0);
    want("kueue_admitted_workloads_total{cluster_queue=\"cq\",priority_class=\"\"" R "}", 2);
    want("kueue_quota_reserved_wait_time_seconds_count{cluster_queue=\"cq\",priority_class=\"\"" R
         "}",
         2);
    want("kueue_admission_wait_time_seconds_bucket{cluster_queue=\"cq\",priority_class=\"\"" R
         ",le=\"40960\"}",
         2);
    ck_assert(value("kueue_admission_attempts_total{result=\"success\"" R "}") >= 1);
    /* The third Job was tried and did not fit: an inadmissible attempt, as Kueue counts it
     * (before, only cycles that decided something were seen). Each attempt has its duration. */
    ck_assert(value("kueue_admission_attempts_total{result=\"inadmissible\"" R "}") >= 1);
    want("kueue_admission_attempt_duration_seconds_count{result=\"inadmissible\"" R "}",
         value("kueue_admission_attempts_total{result=\"inadmissible\"" R "}"));
    want("kueue_admission_attempt_duration_seconds_count{result=\"success\"" R "}",
         value("kueue_admission_attempts_total{result=\"success\"" R "}"));
    want("kueue_cluster_queue_resource_reservation{cohort=\"co\",cluster_queue=\"cq\",flavor="
         "\"default\",resource=\"cpu\"" R "}",
         2);
    want("kueue_cluster_queue_nominal_quota{cohort=\"co\",cluster_queue=\"cq\",flavor=\"default\","
         "resource=\"cpu\"" R "}",
         2);
    want("kueue_cluster_queue_borrowing_limit{cohort=\"co\",cluster_queue=\"cq\",flavor="
         "\"default\",resource=\"cpu\"" R "}",
         1);
    want("kueue_cluster_queue_lending_limit{cohort=\"co\",cluster_queue=\"cq\",flavor=\"default\","
         "resource=\"cpu\"" R "}",
         INFINITY);
    ck_assert_ptr_nonnull(strstr(scraped, "kueue_cluster_queue_lending_limit{cohort=\"co\","
                                          "cluster_queue=\"cq\",flavor=\"default\",resource="
                                          "\"cpu\"" R "} +Inf\n"));
    want(
        "kueue_local_queue_pending_workloads{name=\"lq\",namespace=\"ns\",status=\"inadmissible\"" R
        "}",
        1);
    want("kueue_local_queue_admitted_active_workloads{name=\"lq\",namespace=\"ns\"" R "}", 2);
    want("kueue_local_queue_status{name=\"lq\",namespace=\"ns\",active=\"True\"" R "}", 1);
    want("kueue_local_queue_resource_usage{name=\"lq\",namespace=\"ns\",flavor=\"default\","
         "resource=\"cpu\"" R "}",
         2);
    want("sluice_cluster_queue_idle_nominal_quota{cluster_queue=\"cq\",flavor=\"default\","
         "resource=\"cpu\"}",
         0);
    want("sluice_cache_objects{kind=\"workloads\"}", 3);
    want("sluice_cache_objects{kind=\"jobs\"}", 3);
    /* Every informer keeps a watch open: requests in flight however idle the controller. */
    ck_assert(value("sluice_api_requests_queued") >= 2);
    /* A decision whose write met a conflict is made again: at least one per admission. */
    ck_assert(value("sluice_engine_decisions_total{kind=\"admit\"}") >= 2);
    ck_assert(value("sluice_api_writes_total{resource=\"workloads\",result=\"success\"}") >=
              5); /* 3 created, 2 admitted */
    want("sluice_leader", 1);
    ck_assert_ptr_nonnull(strstr(scraped, "kueue_build_info{git_version=\"v"));

    /* A higher priority preempts one of the two: counted where it is decided and written. */
    job(&fx, "hi", "high");
    fx_run_until(&fx, preempted, 10, "the preemption in /metrics");
    want("kueue_preempted_workloads_total{preempting_cluster_queue=\"cq\",reason="
         "\"InClusterQueue\"" R "}",
         1);
    want("kueue_local_queue_evicted_workloads_total{name=\"lq\",namespace=\"ns\",reason="
         "\"Preempted\",underlying_cause=\"\",priority_class=\"\"" R "}",
         1);
    ck_assert(value("sluice_engine_decisions_total{kind=\"preempt\"}") >= 1);

    /* A ClusterQueue deleted: its series vanish at the next scrape. */
    ck_assert_int_eq(fakeapi_delete_object(fx.fa, "clusterqueues", NULL, "cq", NULL), ERR_OK);
    for (int i = 0; i < 100; i++)
        uv_run(&fx.loop, UV_RUN_ONCE);
    scrape(&fx);
    ck_assert_ptr_null(strstr(scraped, "kueue_cluster_queue_status{cluster_queue=\"cq\""));
    done(&fx);
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
    ck_assert_ptr_null(strstr(scraped, "kueue_cluster_queue_nominal_quota"));
    ck_assert_ptr_null(strstr(scraped, "kueue_local_queue_"));
    ck_assert_ptr_nonnull(strstr(scraped, "# TYPE kueue_pending_workloads gauge\n"));
    want("kueue_pending_workloads{cluster_queue=\"cq\",status=\"active\"" R "}", 0);
    ctrl_metrics_webhook(fx.ctrl, "/mutate-batch-v1-job", 200, allowed, strlen(allowed));
    ctrl_metrics_webhook(fx.ctrl, "/mutate-batch-v1-job", 200, allowed, strlen(allowed));
    ctrl_metrics_webhook(fx.ctrl, "/validate-batch-v1-job", 200, denied, strlen(denied));
    ctrl_metrics_webhook(fx.ctrl, "/validate-batch-v1-job", 400, "bad", 3);
    ctrl_metrics_webhook(fx.ctrl, "/../../etc/passwd", 404, "not found", 9);
    scrape(&fx);
    want("sluice_webhook_requests_total{path=\"/mutate-batch-v1-job\",result=\"allowed\"}", 2);
    want("sluice_webhook_requests_total{path=\"/validate-batch-v1-job\",result=\"denied\"}", 1);
    want("sluice_webhook_requests_total{path=\"/validate-batch-v1-job\",result=\"error\"}", 1);
    want("sluice_webhook_requests_total{path=\"other\",result=\"error\"}", 1);
    ck_assert_ptr_null(strstr(scraped, "passwd"));
    done(&fx);
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

/* ---- resource-seconds exact at release ------------------------------------------------------ */

static int64_t wall_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A suspended Job `name` in LocalQueue ns/`lq` asking for 1 cpu, of class `pc` (or none). */
static void job_in(fx_t *fx, const char *name, const char *lq, const char *pc)
{
    char j[1024], label[128] = "";

    if (pc != NULL)
        snprintf(label, sizeof(label), ",\"kueue.x-k8s.io/priority-class\":\"%s\"", pc);
    snprintf(j, sizeof(j),
             "{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"metadata\":{\"name\":\"%s\","
             "\"namespace\":\"ns\",\"labels\":{\"kueue.x-k8s.io/queue-name\":\"%s\"%s}},\"spec\":"
             "{\"suspend\":true,\"parallelism\":1,\"completions\":1,\"template\":{\"spec\":{"
             "\"restartPolicy\":\"Never\",\"containers\":[{\"name\":\"c\",\"image\":\"i\","
             "\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]}}}}",
             name, lq, label);
    fx_put(fx, j);
}

static bool unsuspended(fx_t *fx, const char *name)
{
    json_t *j = fakeapi_get_object(fx->fa, "jobs", "ns", name);

    return j != NULL && json_is_false(json_object_get(json_object_get(j, "spec"), "suspend"));
}

static bool a_runs(fx_t *fx)
{
    return unsuspended(fx, "a");
}

static bool b_and_f_run(fx_t *fx)
{
    return unsuspended(fx, "b") && unsuspended(fx, "f");
}

static bool hi_runs(fx_t *fx)
{
    return unsuspended(fx, "hi");
}

static int64_t hold_until; /* wall ms: held() is true from then on */

static bool held(fx_t *fx)
{
    (void)fx;
    return wall_ms() >= hold_until;
}

static bool nothing_reserved(fx_t *fx)
{
    scrape(fx);
    return value("kueue_reserving_active_workloads{cluster_queue=\"cq\"" R "}") == 0;
}

#define RSEC_LQ                                                                         \
    "sluice_quota_reserved_resource_seconds_total{namespace=\"ns\",local_queue=\"lq\"," \
    "cluster_queue=\"cq\",flavor=\"default\",resource=\"cpu\"}"

/* The counter of LocalQueue lq is within [lo, hi] ms of 1 cpu. Only a release counts before the
 * first tick (5 s after the start): before the fix the series did not exist yet. */
static void rsec_within(int64_t lo_ms, int64_t hi_ms)
{
    double got = value(RSEC_LQ);

    ck_assert_msg(got >= (double)lo_ms / 1000 && got <= (double)hi_ms / 1000,
                  "%s = %g, want the time held: between %.3f and %.3f", RSEC_LQ, got,
                  (double)lo_ms / 1000, (double)hi_ms / 1000);
}

/* A Workload that finishes, then one that is preempted, each well inside one 5-second interval
 * of the periodic integration: the counter holds exactly the time each held its cpu (bounded
 * here by what the test saw: from seeing it run to asking for the release, and from creating it
 * to seeing the release). Before, the time since the last tick was lost: both counted 0. */
START_TEST(resource_seconds_exact_at_release)
{
    fx_t fx;
    int64_t t0, t1, t2, t3, before;
    json_t *j;

    fx_start(&fx, NULL);
    fx_put(&fx, "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"LocalQueue\",\"metadata\":"
                "{\"name\":\"lq2\",\"namespace\":\"ns\"},\"spec\":{\"clusterQueue\":\"cq\"}}");

    /* 1. finished: the Job completes after holding 1 cpu for about 0.6 s */
    t0 = wall_ms();
    job_in(&fx, "a", "lq", NULL);
    fx_run_until(&fx, a_runs, 10, "Job a admitted and running");
    t1 = wall_ms();
    hold_until = t1 + 600;
    fx_run_until(&fx, held, 10, "0.6 s");
    t2 = wall_ms();
    j = json_deep_copy(fakeapi_get_object(fx.fa, "jobs", "ns", "a"));
    json_object_set_new(j, "status",
                        json_pack("{s:i,s:[{s:s,s:s,s:s}]}", "succeeded", 1, "conditions", "type",
                                  "Complete", "status", "True", "message", "done"));
    ck_assert_int_eq(fakeapi_put_object(fx.fa, j, NULL, NULL), ERR_OK);
    json_decref(j);
    fx_run_until(&fx, nothing_reserved, 10, "Job a's quota released");
    t3 = wall_ms();
    rsec_within(t2 - t1, t3 - t0);
    before = (int64_t)(value(RSEC_LQ) * 1000 + 0.5);

    /* 2. preempted: b (lq) is the one lower priority beside f (lq2, high); hi (lq2, high)
     * takes b's cpu. Nothing of lq2 shows in lq's series. */
    t0 = wall_ms();
    job_in(&fx, "b", "lq", NULL);
    job_in(&fx, "f", "lq2", "high");
    fx_run_until(&fx, b_and_f_run, 10, "Jobs b and f running");
    t1 = wall_ms();
    hold_until = t1 + 600;
    fx_run_until(&fx, held, 10, "0.6 s");
    t2 = wall_ms();
    job_in(&fx, "hi", "lq2", "high");
    fx_run_until(&fx, hi_runs, 10, "hi admitted in b's place");
    t3 = wall_ms();
    scrape(&fx);
    rsec_within(before + t2 - t1, before + t3 - t0);
    done(&fx);
}
END_TEST

/* A Workload past its maximum execution time is released inside the engine's cycle: its use up
 * to that cycle is counted first (ctrl__metrics_release_due), at least the 1 s it was allowed.
 * Before, the series did not exist until the first 5-second tick. */
START_TEST(resource_seconds_at_max_execution_time)
{
    fx_t fx;
    int64_t t0, t1;
    char j[1024];

    fx_start(&fx, NULL);
    t0 = wall_ms();
    snprintf(j, sizeof(j),
             "{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"metadata\":{\"name\":\"a\","
             "\"namespace\":\"ns\",\"labels\":{\"kueue.x-k8s.io/queue-name\":\"lq\","
             "\"kueue.x-k8s.io/max-exec-time-seconds\":\"1\"}},\"spec\":{\"suspend\":true,"
             "\"parallelism\":1,\"completions\":1,\"template\":{\"spec\":{\"restartPolicy\":"
             "\"Never\",\"containers\":[{\"name\":\"c\",\"image\":\"i\",\"resources\":{"
             "\"requests\":{\"cpu\":\"1\"}}}]}}}}");
    fx_put(&fx, j);
    fx_run_until(&fx, a_runs, 10, "Job a admitted and running");
    fx_run_until(&fx, nothing_reserved, 10, "Job a deactivated after 1 s");
    t1 = wall_ms();
    rsec_within(1000, t1 - t0);
    done(&fx);
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
    tcase_add_test(tc, resource_seconds_exact_at_release);
    tcase_add_test(tc, resource_seconds_at_max_execution_time);
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
