/* test_obs_estimate -- the start-time estimate over the engine (test/sched_fixtures.h): a queue
 * played forward over a ClusterQueue's quota with expected runtimes; unknown runtimes and
 * resources without quota give no estimate; the horizon and the cohort's lendable quota count. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "obs/estimate.h"

#include "sched_fixtures.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

typedef struct got_s {
    char key[8][64];
    int64_t start[8];
    size_t n;
} got_t;

static void on_est(void *ud, const char *key, int64_t start)
{
    got_t *g = ud;

    ck_assert_uint_lt(g->n, 8);
    strncpy(g->key[g->n], key, 63);
    g->start[g->n++] = start;
}

/* Runtimes by name: "r<seconds>-..." runs that long; anything else is unknown. */
static int64_t runtime(void *ud, const sched_wl_info_t *info)
{
    const char *name = strchr(info->key, '/') + 1;

    (void)ud;
    if (info->max_exec_ms > 0)
        return info->max_exec_ms;
    return name[0] == 'r' ? strtoll(name + 1, NULL, 10) * 1000 : -1;
}

static sched_t *engine(void)
{
    sched_t *s = sched_new(NULL);

    fx_flavor(s, "f", NULL, NULL);
    fx_cq(s, "cq", "cpu|f:4", NULL);
    fx_lq(s, "ns", "lq", "cq", STOP_POLICY_NONE);
    return s;
}

START_TEST(queue_played_forward)
{
    sched_t *s = engine();
    sched_decisions_t d;
    estimate_opts_t o = {.runtime = runtime};
    got_t g = {0};

    sched_decisions_init(&d);
    /* running: 2 cpu for 100 s, 2 cpu for 300 s (both admitted at t=0) */
    fx_wl(s, "ns/r100-a", "lq", 0, 0, "cpu=2", NULL);
    fx_wl(s, "ns/r300-b", "lq", 0, 1, "cpu=2", NULL);
    fx_run(s, 0, &d, true);
    /* pending, in queue order e (priority 10), c, d */
    fx_wl(s, "ns/r50-c", "lq", 0, 10, "cpu=3", NULL);
    fx_wl(s, "ns/r10-d", "lq", 0, 11, "cpu=1", NULL);
    fx_wl(s, "ns/r10-e", "lq", 10, 12, "cpu=4", NULL); /* higher priority: first in queue */
    fx_run(s, 20000, &d, true);
    ck_assert_int_eq(estimate_cq(s, "cq", 20000, &o, on_est, &g, NULL), ERR_OK);
    ck_assert_uint_eq(g.n, 3);
    /* a ends at 100 s: 2 cpu free, d (1 cpu) passes the larger e and c (BestEffortFIFO);
     * b ends at 300 s: e (4 cpu) starts; it ends at 310 s: c */
    ck_assert_str_eq(g.key[0], "ns/r10-e");
    ck_assert_int_eq(g.start[0], 300000);
    ck_assert_str_eq(g.key[1], "ns/r50-c");
    ck_assert_int_eq(g.start[1], 310000);
    ck_assert_str_eq(g.key[2], "ns/r10-d");
    ck_assert_int_eq(g.start[2], 100000);
    /* a horizon shorter than that: no estimates */
    o.horizon_ms = 60000;
    g.n = 0;
    ck_assert_int_eq(estimate_cq(s, "cq", 20000, &o, on_est, &g, NULL), ERR_OK);
    ck_assert_int_eq(g.start[0], -1);
    ck_assert_int_eq(g.start[2], -1);
    ck_assert_int_eq(estimate_cq(s, "nope", 0, &o, on_est, &g, NULL), ERR_NOT_FOUND);
    sched_decisions_fini(&d);
    sched_free(s);
}
END_TEST

/* BestEffortFIFO: a small later workload starts in a gap a large head cannot use. Unknown
 * runtimes: what waits behind them has no estimate. A resource without quota: none either. */
START_TEST(gaps_unknowns_and_missing_quota)
{
    sched_t *s = engine();
    sched_decisions_t d;
    estimate_opts_t o = {.runtime = runtime};
    fx_wl_opts_t mx = {.max_exec_seconds = 30};
    got_t g = {0};

    sched_decisions_init(&d);
    fx_wl(s, "ns/r100-a", "lq", 0, 0, "cpu=2", NULL);
    fx_wl(s, "ns/x-b", "lq", 0, 1, "cpu=1", NULL); /* unknown runtime: never frees */
    fx_run(s, 0, &d, true);
    fx_wl(s, "ns/r10-c", "lq", 0, 10, "cpu=4", NULL); /* needs b's too: never */
    fx_wl(s, "ns/r10-d", "lq", 0, 11, "cpu=1", NULL); /* the free cpu: now */
    fx_wl(s, "ns/y-e", "lq", 0, 12, "cpu=2", &mx);    /* max execution time 30 s; at 100 s */
    fx_wl(s, "ns/r1-f", "lq", 0, 13, "cpu=1,nvidia.com/gpu=1", NULL); /* no gpu quota */
    fx_run(s, 1000, &d, true);
    ck_assert_int_eq(fx_state(s, "ns/r10-d"), SCHED_WL_ADMITTED); /* the engine agrees */
    ck_assert_int_eq(estimate_cq(s, "cq", 1000, &o, on_est, &g, NULL), ERR_OK);
    ck_assert_uint_eq(g.n, 3);
    ck_assert_str_eq(g.key[0], "ns/r10-c");
    ck_assert_int_eq(g.start[0], -1);
    ck_assert_str_eq(g.key[1], "ns/y-e");
    ck_assert_int_eq(g.start[1], 100000); /* d ends at 11 s (1 cpu), a at 100 s: 3 cpu */
    ck_assert_str_eq(g.key[2], "ns/r1-f");
    ck_assert_int_eq(g.start[2], -1);
    sched_decisions_fini(&d);
    sched_free(s);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("obs_estimate");
    TCase *tc = tcase_create("core");

    tcase_add_test(tc, queue_played_forward);
    tcase_add_test(tc, gaps_unknowns_and_missing_quota);
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
