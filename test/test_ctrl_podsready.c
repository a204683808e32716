/* test_ctrl_podsready -- waitForPodsReady's pure parts (condition, deadlines, backoff, requeue
 * timestamps) and the child-Job predicate. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "ctrl/cond.h"
#include "ctrl/config.h"
#include "ctrl/jobparent.h"
#include "ctrl/podsready.h"
#include "ctrl/wlstatus.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* 2026-01-01T00:00:00Z and friends. */
#define T0 1767225600LL

static json_t *load(const char *text)
{
    json_error_t e;
    json_t *j = json_loads(text, 0, &e);
    ck_assert_msg(j != NULL, "%s: %s", text, e.text);
    return j;
}

static ctrl_pods_ready_t cfg_3s(void)
{
    ctrl_config_t c;
    ctrl_pods_ready_t p;

    ck_assert_int_eq(ctrl_config_init(&c, NULL), ERR_OK);
    p = c.pods_ready;
    ctrl_config_fini(&c);
    p.timeout_ms = 3000;
    p.recovery_timeout_ms = 5000;
    return p;
}

/* An admitted Workload (Admitted at T0) with extra conditions (JSON array items, may be ""). */
static json_t *admitted_wl(const char *extra)
{
    char text[2048];

    snprintf(text, sizeof(text),
             "{\"metadata\":{\"name\":\"w\",\"namespace\":\"ns\",\"resourceVersion\":\"7\"},"
             "\"spec\":{\"active\":true},"
             "\"status\":{\"admission\":{\"clusterQueue\":\"cq\"},\"conditions\":["
             "{\"type\":\"QuotaReserved\",\"status\":\"True\",\"reason\":\"QuotaReserved\","
             "\"lastTransitionTime\":\"2026-01-01T00:00:00Z\"},"
             "{\"type\":\"Admitted\",\"status\":\"True\",\"reason\":\"Admitted\","
             "\"lastTransitionTime\":\"2026-01-01T00:00:00Z\"}%s%s]}}",
             extra[0] ? "," : "", extra);
    return load(text);
}

START_TEST(job_ready)
{
    /* ready + succeeded + uncounted succeeded >= min(parallelism, completions) */
    static const struct {
        const char *job;
        bool ready;
    } cases[] = {
        {"{\"spec\":{\"parallelism\":2},\"status\":{\"ready\":2}}", true},
        {"{\"spec\":{\"parallelism\":2},\"status\":{\"ready\":1,\"active\":2}}", false},
        {"{\"spec\":{\"parallelism\":2},\"status\":{\"ready\":1,\"succeeded\":1}}", true},
        {"{\"spec\":{\"parallelism\":3,\"completions\":1},\"status\":{\"ready\":1}}", true},
        {"{\"spec\":{\"parallelism\":2},\"status\":{\"ready\":1,"
         "\"uncountedTerminatedPods\":{\"succeeded\":[\"u1\"]}}}",
         true},
        {"{\"spec\":{},\"status\":{}}", false}, /* parallelism defaults to 1 */
        {"{\"spec\":{},\"status\":{\"succeeded\":1}}", true},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        json_t *j = load(cases[i].job);
        ck_assert_msg(podsready_job_ready(j) == cases[i].ready, "%s", cases[i].job);
        json_decref(j);
    }
}
END_TEST

START_TEST(condition)
{
    json_t *pending = load("{\"status\":{\"conditions\":[]}}");
    json_t *fresh = admitted_wl("");
    json_t *was_ready = admitted_wl("{\"type\":\"PodsReady\",\"status\":\"True\","
                                    "\"reason\":\"Started\"}");
    json_t *recovering = admitted_wl("{\"type\":\"PodsReady\",\"status\":\"False\","
                                     "\"reason\":\"WaitForRecovery\"}");
    podsready_cond_t c;

    /* not admitted: WaitForStart whatever the pods say */
    c = podsready_condition(pending, true);
    ck_assert_str_eq(c.status, "False");
    ck_assert_str_eq(c.reason, "WaitForStart");
    ck_assert_str_eq(c.message, "Not all pods are ready or succeeded");
    c = podsready_condition(fresh, false);
    ck_assert_str_eq(c.reason, "WaitForStart");
    c = podsready_condition(fresh, true);
    ck_assert_str_eq(c.status, "True");
    ck_assert_str_eq(c.reason, "Started");
    ck_assert_str_eq(c.message, "All pods reached readiness and the workload is running");
    c = podsready_condition(was_ready, false);
    ck_assert_str_eq(c.status, "False");
    ck_assert_str_eq(c.reason, "WaitForRecovery");
    ck_assert_str_eq(c.message, "At least one pod has failed, waiting for recovery");
    c = podsready_condition(recovering, false);
    ck_assert_str_eq(c.reason, "WaitForRecovery");
    c = podsready_condition(recovering, true);
    ck_assert_str_eq(c.status, "True");
    ck_assert_str_eq(c.reason, "Recovered");
    json_decref(pending);
    json_decref(fresh);
    json_decref(was_ready);
    json_decref(recovering);
}
END_TEST

START_TEST(cond_patch)
{
    json_t *wl = admitted_wl("{\"type\":\"PodsReady\",\"status\":\"False\","
                             "\"reason\":\"WaitForStart\",\"message\":\"old\","
                             "\"lastTransitionTime\":\"2026-01-01T00:00:00Z\"}");
    bool changed = true;
    json_t *p;

    /* same status and reason: nothing to write, whatever the message */
    p = wlstatus_cond_patch(wl, "PodsReady", "False", "WaitForStart", "new", T0 + 5, &changed);
    ck_assert_ptr_null(p);
    ck_assert(!changed);
    p = wlstatus_cond_patch(wl, "PodsReady", "True", "Started", "ready", T0 + 5, &changed);
    ck_assert_ptr_nonnull(p);
    ck_assert(changed);
    ck_assert_str_eq(
        json_string_value(json_object_get(json_object_get(p, "metadata"), "resourceVersion")), "7");
    json_t *c = cond_find(json_object_get(json_object_get(p, "status"), "conditions"), "PodsReady");
    ck_assert_str_eq(json_string_value(json_object_get(c, "status")), "True");
    ck_assert_str_eq(json_string_value(json_object_get(c, "lastTransitionTime")),
                     "2026-01-01T00:00:05Z");
    /* the other conditions travel with it (a merge patch replaces the list) */
    ck_assert_uint_eq(json_array_size(json_object_get(json_object_get(p, "status"), "conditions")),
                      3);
    json_decref(p);
    json_decref(wl);
}
END_TEST

START_TEST(deadlines)
{
    ctrl_pods_ready_t cfg = cfg_3s();
    int64_t d = 0;
    json_t *fresh = admitted_wl("");
    json_t *waiting = admitted_wl("{\"type\":\"PodsReady\",\"status\":\"False\","
                                  "\"reason\":\"WaitForStart\","
                                  "\"lastTransitionTime\":\"2026-01-01T00:00:01Z\"}");
    json_t *ready =
        admitted_wl("{\"type\":\"PodsReady\",\"status\":\"True\",\"reason\":\"Started\","
                    "\"lastTransitionTime\":\"2026-01-01T00:00:02Z\"}");
    json_t *recovering = admitted_wl("{\"type\":\"PodsReady\",\"status\":\"False\","
                                     "\"reason\":\"WaitForRecovery\","
                                     "\"lastTransitionTime\":\"2026-01-01T00:01:00Z\"}");
    json_t *evicted = admitted_wl("{\"type\":\"Evicted\",\"status\":\"True\","
                                  "\"reason\":\"PodsReadyTimeout\","
                                  "\"lastTransitionTime\":\"2026-01-01T00:00:04Z\"}");
    json_t *pending = load("{\"status\":{\"conditions\":[]}}");

    /* WaitForStart (or no condition yet): from the Admitted transition */
    ck_assert_int_eq(podsready_deadline(&cfg, fresh, &d), PODSREADY_WAIT_FOR_START);
    ck_assert_int_eq(d, T0 * 1000 + 3000);
    ck_assert_int_eq(podsready_deadline(&cfg, waiting, &d), PODSREADY_WAIT_FOR_START);
    ck_assert_int_eq(d, T0 * 1000 + 3000);
    /* WaitForRecovery: from the PodsReady transition, with recoveryTimeout */
    ck_assert_int_eq(podsready_deadline(&cfg, recovering, &d), PODSREADY_WAIT_FOR_RECOVERY);
    ck_assert_int_eq(d, (T0 + 60) * 1000 + 5000);
    cfg.recovery_timeout_ms = 0; /* "0s": no recovery timeout */
    ck_assert_int_eq(podsready_deadline(&cfg, recovering, &d), PODSREADY_NONE);
    ck_assert_int_eq(podsready_deadline(&cfg, ready, &d), PODSREADY_NONE);
    ck_assert_int_eq(podsready_deadline(&cfg, evicted, &d), PODSREADY_NONE);
    ck_assert_int_eq(podsready_deadline(&cfg, pending, &d), PODSREADY_NONE);
    json_object_set_new(json_object_get(fresh, "spec"), "active", json_false());
    ck_assert_int_eq(podsready_deadline(&cfg, fresh, &d), PODSREADY_NONE);
    cfg.enabled = false;
    ck_assert_int_eq(podsready_deadline(&cfg, waiting, &d), PODSREADY_NONE);
    json_decref(fresh);
    json_decref(waiting);
    json_decref(ready);
    json_decref(recovering);
    json_decref(evicted);
    json_decref(pending);
}
END_TEST

START_TEST(backoff)
{
    ctrl_pods_ready_t cfg = cfg_3s();
    json_t *wl = admitted_wl(""), *rs;

    /* Kueue's defaults: 60 s doubling, at most an hour */
    ck_assert_int_eq(podsready_backoff_s(&cfg, 1), 60);
    ck_assert_int_eq(podsready_backoff_s(&cfg, 2), 120);
    ck_assert_int_eq(podsready_backoff_s(&cfg, 6), 1920);
    ck_assert_int_eq(podsready_backoff_s(&cfg, 7), 3600);
    ck_assert_int_eq(podsready_backoff_s(&cfg, 2000000000), 3600); /* no overflow */
    cfg.backoff_base_s = 1;
    cfg.backoff_max_s = 5;
    ck_assert_int_eq(podsready_backoff_s(&cfg, 3), 4);
    ck_assert_int_eq(podsready_backoff_s(&cfg, 4), 5);

    ck_assert_int_eq(podsready_requeue_count(wl), 0);
    ck_assert(!podsready_limit_exceeded(&cfg, wl)); /* no limit: requeued forever */
    rs = podsready_next_requeue_state(&cfg, wl, T0 + 10);
    ck_assert_int_eq(json_integer_value(json_object_get(rs, "count")), 1);
    ck_assert_str_eq(json_string_value(json_object_get(rs, "requeueAt")), "2026-01-01T00:00:11Z");
    json_object_set_new(json_object_get(wl, "status"), "requeueState", rs);
    ck_assert_int_eq(podsready_requeue_count(wl), 1);
    ck_assert_int_eq(podsready_requeue_at(wl), T0 + 11);
    rs = podsready_next_requeue_state(&cfg, wl, T0 + 20);
    ck_assert_int_eq(json_integer_value(json_object_get(rs, "count")), 2);
    ck_assert_str_eq(json_string_value(json_object_get(rs, "requeueAt")), "2026-01-01T00:00:22Z");
    json_decref(rs);
    /* backoffLimitCount 1: one requeue done, the next would exceed it */
    cfg.has_backoff_limit = true;
    cfg.backoff_limit_count = 1;
    ck_assert(podsready_limit_exceeded(&cfg, wl));
    cfg.backoff_limit_count = 2;
    ck_assert(!podsready_limit_exceeded(&cfg, wl));
    json_decref(wl);
}
END_TEST

START_TEST(held_and_requeued)
{
    ctrl_pods_ready_t cfg = cfg_3s();
    json_t *wl = load("{\"metadata\":{\"resourceVersion\":\"9\"},\"status\":{"
                      "\"requeueState\":{\"count\":1,\"requeueAt\":\"2026-01-01T00:01:00Z\"},"
                      "\"conditions\":["
                      "{\"type\":\"Evicted\",\"status\":\"True\",\"reason\":\"PodsReadyTimeout\","
                      "\"lastTransitionTime\":\"2026-01-01T00:00:30Z\"},"
                      "{\"type\":\"Requeued\",\"status\":\"False\",\"reason\":\"PodsReadyTimeout\","
                      "\"lastTransitionTime\":\"2026-01-01T00:00:31Z\"}]}}");
    json_t *p, *c;

    ck_assert(podsready_held(wl));
    ck_assert_int_eq(podsready_requeue_at(wl), T0 + 60);
    /* Eviction strategy: queued by eviction time; Creation: by creation */
    ck_assert_int_eq(podsready_queue_ts(&cfg, wl, 5), (T0 + 30) * 1000);
    cfg.timestamp = REQUEUE_TS_CREATION;
    ck_assert_int_eq(podsready_queue_ts(&cfg, wl, 5), 5);
    /* a Retry admission check's eviction orders by its time, with any strategy or none */
    json_object_set_new(
        json_array_get(json_object_get(json_object_get(wl, "status"), "conditions"), 0), "reason",
        json_string("AdmissionCheck"));
    ck_assert_int_eq(podsready_queue_ts(&cfg, wl, 5), (T0 + 30) * 1000);
    cfg.enabled = false;
    ck_assert_int_eq(podsready_queue_ts(&cfg, wl, 5), (T0 + 30) * 1000);
    cfg.enabled = true;
    cfg.timestamp = REQUEUE_TS_EVICTION;
    json_object_set_new(
        json_array_get(json_object_get(json_object_get(wl, "status"), "conditions"), 0), "reason",
        json_string("PodsReadyTimeout"));

    p = podsready_backoff_done_patch(wl, T0 + 61);
    ck_assert_ptr_nonnull(p);
    c = cond_find(json_object_get(json_object_get(p, "status"), "conditions"), "Requeued");
    ck_assert_str_eq(json_string_value(json_object_get(c, "status")), "True");
    ck_assert_str_eq(json_string_value(json_object_get(c, "reason")), "BackoffFinished");
    ck_assert_str_eq(json_string_value(json_object_get(c, "message")),
                     "The workload backoff was finished");
    /* requeueAt removed (null in a merge patch), count kept (absent) */
    json_t *rs = json_object_get(json_object_get(p, "status"), "requeueState");
    ck_assert(json_is_null(json_object_get(rs, "requeueAt")));
    ck_assert_ptr_null(json_object_get(rs, "count"));
    /* applied, the workload is no longer held */
    json_object_set(json_object_get(wl, "status"), "conditions",
                    json_object_get(json_object_get(p, "status"), "conditions"));
    ck_assert(!podsready_held(wl));
    json_decref(p);
    json_decref(wl);

    /* other evictions (preemption, stopped queues) never hold a workload here */
    wl = load("{\"status\":{\"conditions\":[{\"type\":\"Requeued\",\"status\":\"False\","
              "\"reason\":\"ClusterQueueStopped\"}]}}");
    ck_assert(!podsready_held(wl));
    ck_assert_int_eq(podsready_requeue_at(wl), -1);
    json_decref(wl);
}
END_TEST

START_TEST(child_jobs)
{
    /* Kueue's IsOwnerManagedByKueue: an owner of an enabled integration's kind, or of an
     * external framework. */
    static const struct {
        const char *refs;
        bool child;
    } cases[] = {
        {"[{\"apiVersion\":\"jobset.x-k8s.io/v1alpha2\",\"kind\":\"JobSet\",\"name\":\"js\","
         "\"controller\":true}]",
         true},
        /* another version of an enabled kind's group */
        {"[{\"apiVersion\":\"jobset.x-k8s.io/v1\",\"kind\":\"JobSet\",\"name\":\"js\","
         "\"controller\":true}]",
         true},
        {"[{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"name\":\"j\",\"controller\":true}]",
         true},
        /* integrations not enabled: their Jobs are queued as Jobs */
        {"[{\"apiVersion\":\"kubeflow.org/v1\",\"kind\":\"PyTorchJob\",\"name\":\"p\","
         "\"controller\":true}]",
         false},
        {"[{\"apiVersion\":\"ray.io/v1\",\"kind\":\"RayCluster\",\"name\":\"r\","
         "\"controller\":true}]",
         false},
        /* externalFrameworks: the exact group/version */
        {"[{\"apiVersion\":\"workload.codeflare.dev/v1beta2\",\"kind\":\"AppWrapper\","
         "\"name\":\"a\",\"controller\":true}]",
         true},
        {"[{\"apiVersion\":\"workload.codeflare.dev/v1beta1\",\"kind\":\"AppWrapper\","
         "\"name\":\"a\",\"controller\":true}]",
         false},
        /* a CronJob's Jobs are ordinary Jobs */
        {"[{\"apiVersion\":\"batch/v1\",\"kind\":\"CronJob\",\"name\":\"c\","
         "\"controller\":true}]",
         false},
        /* not the controller: does not count */
        {"[{\"apiVersion\":\"jobset.x-k8s.io/v1alpha2\",\"kind\":\"JobSet\",\"name\":\"js\"}]",
         false},
        /* the kind alone is not enough: the group must match */
        {"[{\"apiVersion\":\"example.com/v1\",\"kind\":\"JobSet\",\"name\":\"js\","
         "\"controller\":true}]",
         false},
        {"[{\"apiVersion\":\"v1\",\"kind\":\"JobSet\",\"name\":\"js\",\"controller\":true}]",
         false},
        {"[]", false},
    };
    ctrl_config_t cfg;
    err_msg_t msg = {{0}};
    json_t *doc =
        load("{\"integrations\":{\"frameworks\":[\"batch/job\",\"jobset.x-k8s.io/jobset\"],"
             "\"externalFrameworks\":[\"AppWrapper.v1beta2.workload.codeflare.dev\"]}}");

    ck_assert_int_eq(ctrl_config_init(&cfg, NULL), ERR_OK);
    /* Kueue's default (batch/job only): a JobSet is no parent, its Jobs are queued. */
    ck_assert(!jobparent_kind(&cfg, "jobset.x-k8s.io/v1alpha2", "JobSet"));
    ck_assert(jobparent_kind(&cfg, "batch/v1", "Job"));
    ck_assert_msg(ctrl_config_apply(&cfg, doc, &msg) == ERR_OK, "%s", msg.text);
    json_decref(doc);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char text[512];
        const char *kind = NULL, *name = NULL;
        snprintf(text, sizeof(text), "{\"metadata\":{\"ownerReferences\":%s}}", cases[i].refs);
        json_t *job = load(text);
        ck_assert_msg(jobparent_managed(&cfg, job, &kind, &name) == cases[i].child, "%s",
                      cases[i].refs);
        if (cases[i].child) {
            ck_assert_ptr_nonnull(kind);
            ck_assert_ptr_nonnull(name);
        }
        json_decref(job);
    }
    json_t *none = load("{\"metadata\":{}}");
    ck_assert(!jobparent_managed(&cfg, none, NULL, NULL));
    ck_assert(!jobparent_kind(&cfg, NULL, "Job"));
    json_decref(none);
    ctrl_config_fini(&cfg);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("ctrl_podsready");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, job_ready);
    tcase_add_test(tc, condition);
    tcase_add_test(tc, cond_patch);
    tcase_add_test(tc, deadlines);
    tcase_add_test(tc, backoff);
    tcase_add_test(tc, held_and_requeued);
    tcase_add_test(tc, child_jobs);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
