/* test_ctrl_estimate -- the operator's start-time estimates (lib/ctrl/estimate.c) against the
 * in-memory API server: a periodic run over the whole engine, off the loop, whose result /metrics
 * publishes; the interval's off switch; the settings' errors name their field. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "ctrl/ctrl.h"
#include "ctrl/ctrl_int.h"

#include "ctrl_fixture.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* A suspended 1-cpu Job `name` in ns/lq; `max` > 0: its maximum execution time in seconds. */
static void job(fx_t *fx, const char *name, int max)
{
    char j[1024], label[128] = "";

    if (max > 0)
        snprintf(label, sizeof(label), ",\"kueue.x-k8s.io/max-exec-time-seconds\":\"%d\"", max);
    snprintf(j, sizeof(j),
             "{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"metadata\":{\"name\":\"%s\","
             "\"namespace\":\"ns\",\"uid\":\"uid-%s\",\"labels\":{\"kueue.x-k8s.io/queue-name\":"
             "\"lq\"%s}},\"spec\":{\"suspend\":true,\"parallelism\":1,\"completions\":1,"
             "\"template\":{\"spec\":{\"restartPolicy\":\"Never\",\"containers\":[{\"name\":\"c\","
             "\"image\":\"i\",\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]}}}}",
             name, name, label);
    fx_put(fx, j);
}

static bool admitted_one(fx_t *fx)
{
    scrape(fx);
    return value("kueue_admitted_active_workloads{cluster_queue=\"cq\","
                 "replica_role=\"standalone\"}") == 1;
}

static bool admitted_one_pending_two(fx_t *fx)
{
    scrape(fx);
    return value("kueue_admitted_active_workloads{cluster_queue=\"cq\","
                 "replica_role=\"standalone\"}") == 1 &&
           value("kueue_pending_workloads{cluster_queue=\"cq\",status=\"inadmissible\","
                 "replica_role=\"standalone\"}") == 2;
}

static bool estimated_two(fx_t *fx)
{
    scrape(fx);
    return value("sluice_estimated_pending_workloads{cluster_queue=\"cq\",estimate=\"known\"}") +
               value("sluice_estimated_pending_workloads{cluster_queue=\"cq\","
                     "estimate=\"unknown\"}") ==
           2;
}

/* ClusterQueue cq of 1 cpu: "run" (at most 600 s) holds it, "next" (at most 60 s) starts when
 * it ends, "last" then waits behind "next": 600 s and 660 s. */
START_TEST(periodic_run_published)
{
    fx_t fx;

    fx_serve(&fx, NULL, 0);
    fx_queues(&fx, 1);
    fx_operate(&fx, "metadata",
               "{\"annotations\":{\"sluice.dev/estimate-interval\":\"1s\","
               "\"sluice.dev/estimate-horizon\":\"1h\"}}");
    job(&fx, "run", 600);
    fx_run_until(&fx, admitted_one, 10, "\"run\" admitted");
    job(&fx, "next", 60);
    job(&fx, "last", 60);
    fx_run_until(&fx, admitted_one_pending_two, 10, "1 admitted, 2 pending");
    fx_run_until(&fx, estimated_two, 10, "a start-time estimate of the 2 pending");
    ck_assert_double_eq(
        value("sluice_estimated_pending_workloads{cluster_queue=\"cq\",estimate=\"known\"}"), 2);
    ck_assert(value("sluice_estimated_wait_seconds{cluster_queue=\"cq\",statistic=\"p50\"}") >=
              570);
    ck_assert_double_eq_tol(
        value("sluice_estimated_wait_seconds{cluster_queue=\"cq\",statistic=\"max\"}"), 660, 30);
    ck_assert(value("sluice_estimate_run_cycles") >= 2);
    ck_assert(value("sluice_estimate_run_seconds") >= 0);
    ck_assert(value("sluice_estimate_timestamp_seconds") > 1.7e9);
    ck_assert_ptr_nonnull(strstr(scraped, "# TYPE sluice_estimated_wait_seconds gauge\n"));
    fx_stop(&fx);
    free(scraped);
    scraped = NULL;
}
END_TEST

static uint64_t since;

static bool two_seconds(fx_t *fx)
{
    return uv_now(&fx->loop) - since >= 2000;
}

/* estimate-interval 0: no run, no series. */
START_TEST(off_switch)
{
    fx_t fx;

    fx_serve(&fx, NULL, 0);
    fx_queues(&fx, 0);
    fx_operate(&fx, "metadata", "{\"annotations\":{\"sluice.dev/estimate-interval\":\"0\"}}");
    job(&fx, "a", 60);
    since = uv_now(&fx.loop);
    fx_run_until(&fx, two_seconds, 10, "a while");
    scrape(&fx);
    ck_assert_ptr_null(strstr(scraped, "\nsluice_estimate_run_cycles "));
    ck_assert_ptr_null(strstr(scraped, "\nsluice_estimated_pending_workloads{"));
    ck_assert_ptr_nonnull(strstr(scraped, "\nkueue_pending_workloads{")); /* the rest is there */
    fx_stop(&fx);
    free(scraped);
    scraped = NULL;
}
END_TEST

/* The settings: durations, the off switch, a cycle count; errors name the annotation. */
/* A run that cost more than a ninth of the interval pushes the next one out: a tenth of a core
 * at most, whatever the cluster's size. */
START_TEST(costly_runs_paced)
{
    ck_assert_uint_eq(ctrl__estimate_pause_ms(60000, 0), 60000);
    ck_assert_uint_eq(ctrl__estimate_pause_ms(60000, 1000000000ull), 60000); /* 1 s: 9 s < 60 s */
    ck_assert_uint_eq(ctrl__estimate_pause_ms(60000, 10000000000ull), 90000);
    ck_assert_uint_eq(ctrl__estimate_pause_ms(1000, 250000000ull), 2250);
}
END_TEST

START_TEST(settings)
{
    ctrl_config_t cfg;
    err_msg_t msg = {{0}};
    json_t *d;

    ck_assert_int_eq(ctrl_config_init(&cfg, &msg), ERR_OK);
    ck_assert_uint_eq(cfg.estimate_interval_ms, 60000);
    ck_assert_uint_eq(cfg.estimate_horizon_ms, 86400000);
    ck_assert_uint_eq(cfg.estimate_max_cycles, 5000);
    ck_assert_int_eq(ctrl_config_set_estimate_interval(&cfg, "0", &msg), ERR_OK);
    ck_assert_uint_eq(cfg.estimate_interval_ms, 0);
    ck_assert_int_eq(ctrl_config_set_estimate_interval(&cfg, "2m", &msg), ERR_OK);
    ck_assert_uint_eq(cfg.estimate_interval_ms, 120000);
    ck_assert_int_eq(ctrl_config_set_estimate_interval(&cfg, "500ms", &msg), ERR_INVALID);
    ck_assert_ptr_nonnull(strstr(msg.text, "at least 1s"));
    ck_assert_int_eq(ctrl_config_set_estimate_horizon(&cfg, "0s", &msg), ERR_INVALID);
    ck_assert_int_eq(ctrl_config_set_estimate_horizon(&cfg, "soon", &msg), ERR_INVALID);
    ck_assert_int_eq(ctrl_config_set_estimate_horizon(&cfg, "2h", &msg), ERR_OK);
    ck_assert_uint_eq(cfg.estimate_horizon_ms, 7200000);
    ck_assert_int_eq(ctrl_config_set_estimate_max_cycles(&cfg, "0", &msg), ERR_INVALID);
    ck_assert_int_eq(ctrl_config_set_estimate_max_cycles(&cfg, "", &msg), ERR_INVALID);
    ck_assert_int_eq(ctrl_config_set_estimate_max_cycles(&cfg, "12x", &msg), ERR_INVALID);
    ck_assert_int_eq(ctrl_config_set_estimate_max_cycles(&cfg, "99999999999", &msg), ERR_INVALID);
    ck_assert_int_eq(ctrl_config_set_estimate_max_cycles(&cfg, "5000", &msg), ERR_OK);
    ck_assert_uint_eq(cfg.estimate_max_cycles, 5000);
    d = json_loads("{\"metadata\":{\"annotations\":{\"sluice.dev/estimate-horizon\":\"later\"}}}",
                   0, NULL);
    ck_assert_int_eq(ctrl_config_apply(&cfg, d, &msg), ERR_INVALID);
    ck_assert_ptr_nonnull(strstr(msg.text, "metadata.annotations[sluice.dev/estimate-horizon]"));
    json_decref(d);
    d = json_loads("{\"metadata\":{\"annotations\":{\"sluice.dev/estimate-max-cycles\":\"7\"}}}", 0,
                   NULL);
    ck_assert_int_eq(ctrl_config_apply(&cfg, d, &msg), ERR_OK);
    ck_assert_uint_eq(cfg.estimate_max_cycles, 7);
    json_decref(d);
    ctrl_config_fini(&cfg);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("ctrl_estimate");
    TCase *tc = tcase_create("core");

    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, periodic_run_published);
    tcase_add_test(tc, off_switch);
    tcase_add_test(tc, costly_runs_paced);
    tcase_add_test(tc, settings);
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
