/* test_obs_estimate -- the start-time estimate: a copy of the engine run forward in virtual time
 * (test/sched_fixtures.h). The engine's order, preemption and cohort borrowing shape it; unknown
 * runtimes, the horizon and the cycle budget leave workloads without one; the live engine is
 * never touched. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "obs/estimate.h"

#include "sched_fixtures.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

/* Runtimes by name: "r<seconds>-..." runs that long; anything else is unknown. */
static int64_t runtime(void *ud, const sched_wl_info_t *info)
{
    const char *name = strchr(info->key, '/') + 1;

    (void)ud;
    if (info->max_exec_ms > 0)
        return info->max_exec_ms;
    return name[0] == 'r' ? strtoll(name + 1, NULL, 10) * 1000 : -1;
}

static estimate_t *run(const sched_t *s, int64_t now, const estimate_opts_t *o)
{
    estimate_t *e = NULL;
    err_msg_t msg = {{0}};

    ck_assert_msg(estimate_run(s, now, o, &e, &msg) == ERR_OK, "%s", msg.text);
    ck_assert_ptr_nonnull(e);
    return e;
}

/* ClusterQueue "cq" (4 cpu of flavor f, `opts`), LocalQueue ns/lq. */
static sched_t *engine(const fx_cq_opts_t *opts)
{
    sched_t *s = sched_new(NULL);

    fx_flavor(s, "f", NULL, NULL);
    fx_cq(s, "cq", "cpu|f:4", opts);
    fx_lq(s, "ns", "lq", "cq", STOP_POLICY_NONE);
    return s;
}

/* Two running (2 cpu for 100 s, 2 cpu for 300 s, from t=0), three pending at 20 s. */
static sched_t *queue(sched_decisions_t *d)
{
    sched_t *s = engine(NULL);

    fx_wl(s, "ns/r100-a", "lq", 0, 0, "cpu=2", NULL);
    fx_wl(s, "ns/r300-b", "lq", 0, 1, "cpu=2", NULL);
    fx_run(s, 0, d, true);
    fx_wl(s, "ns/r50-c", "lq", 0, 10, "cpu=3", NULL);
    fx_wl(s, "ns/r10-d", "lq", 0, 11, "cpu=1", NULL);
    fx_wl(s, "ns/r10-e", "lq", 10, 12, "cpu=4", NULL); /* higher priority: first in queue */
    fx_run(s, 20000, d, true);
    return s;
}

START_TEST(engine_run_forward)
{
    sched_decisions_t d;
    sched_t *s;
    estimate_opts_t o = {.runtime = runtime};
    estimate_t *e;

    sched_decisions_init(&d);
    s = queue(&d);
    e = run(s, 20000, &o);
    /* a ends at 100 s: 2 cpu free, d (1 cpu) passes the larger e and c (BestEffortFIFO);
     * b ends at 300 s: e (4 cpu, priority 10) before c; e ends at 310 s: c */
    ck_assert_uint_eq(e->len, 3);
    ck_assert_uint_eq(e->stats.pending, 3);
    ck_assert_uint_eq(e->stats.estimated, 3);
    ck_assert(!e->stats.truncated);
    ck_assert_str_eq(e->entries[0].key, "ns/r10-d"); /* key order */
    ck_assert_str_eq(e->entries[0].cq, "cq");
    ck_assert_ptr_eq(e->entries[1].cq, e->entries[0].cq); /* one copy per ClusterQueue */
    ck_assert_ptr_eq(e->entries[2].cq, e->entries[0].cq);
    ck_assert_int_eq(estimate_start(e, "ns/r10-d"), 100000);
    ck_assert_int_eq(estimate_start(e, "ns/r10-e"), 300000);
    ck_assert_int_eq(estimate_start(e, "ns/r50-c"), 310000);
    ck_assert_int_eq(estimate_start(e, "ns/r100-a"), -1); /* running: not pending */
    ck_assert_int_eq(estimate_start(e, "ns/nope"), -1);
    ck_assert_int_eq(estimate_start(NULL, "ns/r10-d"), -1);
    ck_assert_int_eq(e->stats.reached, 310000); /* stopped once every one had a start */
    estimate_free(e);
    /* the live engine is untouched: the same three still pending, a and b still running */
    ck_assert_int_eq(fx_state(s, "ns/r10-d"), SCHED_WL_PENDING);
    ck_assert_int_eq(fx_state(s, "ns/r100-a"), SCHED_WL_ADMITTED);
    ck_assert_int_eq(fx_usage(s, "cq", "f", "cpu"), 4);
    sched_decisions_fini(&d);
    sched_free(s);
}
END_TEST

/* Nothing that has not arrived is assumed: an estimate made before a higher-priority workload
 * arrives does not leave room for it, and one made after does. */
START_TEST(later_arrival_not_assumed)
{
    sched_t *s = engine(NULL);
    sched_decisions_t d;
    estimate_opts_t o = {.runtime = runtime};
    estimate_t *e;

    sched_decisions_init(&d);
    fx_wl(s, "ns/r100-a", "lq", 0, 0, "cpu=4", NULL);
    fx_run(s, 0, &d, true);
    fx_wl(s, "ns/r50-low", "lq", 0, 10, "cpu=4", NULL);
    fx_run(s, 10000, &d, true);
    e = run(s, 10000, &o);
    ck_assert_int_eq(estimate_start(e, "ns/r50-low"), 100000);
    estimate_free(e);
    fx_wl(s, "ns/r50-high", "lq", 5, 20, "cpu=4", NULL);
    fx_run(s, 20000, &d, true);
    e = run(s, 20000, &o);
    ck_assert_int_eq(estimate_start(e, "ns/r50-high"), 100000);
    ck_assert_int_eq(estimate_start(e, "ns/r50-low"), 150000);
    estimate_free(e);
    sched_decisions_fini(&d);
    sched_free(s);
}
END_TEST

/* withinClusterQueue: LowerPriority. The engine has chosen to preempt the long low-priority
 * workload: the estimate stops it and starts the preemptor now, and the next high-priority one
 * when the preemptor ends -- not after the 1,000 s the victim would have run. */
START_TEST(preemption_makes_it_earlier)
{
    sched_t *s = engine(&(fx_cq_opts_t){.within = PREEMPT_LOWER_PRIORITY});
    sched_decisions_t d;
    estimate_opts_t o = {.runtime = runtime};
    estimate_t *e;

    sched_decisions_init(&d);
    fx_wl(s, "ns/r1000-low", "lq", 0, 0, "cpu=4", NULL);
    fx_run(s, 0, &d, true);
    fx_wl(s, "ns/r100-h1", "lq", 10, 10, "cpu=4", NULL);
    fx_wl(s, "ns/r100-h2", "lq", 10, 11, "cpu=4", NULL);
    fx_run(s, 20000, &d, false); /* the victim is stopping */
    ck_assert_int_eq(fx_state(s, "ns/r1000-low"), SCHED_WL_EVICTING);
    e = run(s, 20000, &o);
    ck_assert_int_eq(estimate_start(e, "ns/r100-h1"), 20000);
    ck_assert_int_eq(estimate_start(e, "ns/r100-h2"), 120000);
    ck_assert_int_eq(estimate_start(e, "ns/r1000-low"), -1); /* not pending at 20 s */
    estimate_free(e);
    ck_assert_int_eq(fx_state(s, "ns/r1000-low"), SCHED_WL_EVICTING);
    sched_decisions_fini(&d);
    sched_free(s);
}
END_TEST

/* Cohort "co": a and b lend each other their 2 cpu. b's workload ends first, and a's waiting
 * one borrows b's quota then, before a's own frees. */
START_TEST(borrowing_from_the_cohort)
{
    sched_t *s = sched_new(NULL);
    sched_decisions_t d;
    estimate_opts_t o = {.runtime = runtime};
    estimate_t *e;

    sched_decisions_init(&d);
    fx_flavor(s, "f", NULL, NULL);
    fx_pair(s, "cpu|f:2", &(fx_cq_opts_t){.cohort = "co"}, "cpu|f:2",
            &(fx_cq_opts_t){.cohort = "co"});
    fx_wl(s, "ns/r100-a1", "qa", 0, 0, "cpu=2", NULL);
    fx_wl(s, "ns/r50-b1", "qb", 0, 1, "cpu=2", NULL);
    fx_run(s, 0, &d, true);
    fx_wl(s, "ns/r10-a2", "qa", 0, 10, "cpu=2", NULL);
    fx_run(s, 10000, &d, true);
    e = run(s, 10000, &o);
    ck_assert_int_eq(estimate_start(e, "ns/r10-a2"), 50000);
    ck_assert_str_eq(e->entries[0].cq, "a");
    estimate_free(e);
    sched_decisions_fini(&d);
    sched_free(s);
}
END_TEST

/* The horizon: starts past now + horizon are not estimated, and the run stops there. */
START_TEST(horizon)
{
    sched_decisions_t d;
    sched_t *s;
    estimate_opts_t o = {.runtime = runtime, .horizon_ms = 200000};
    estimate_t *e;

    sched_decisions_init(&d);
    s = queue(&d);
    e = run(s, 20000, &o); /* up to 220 s: d at 100 s only */
    ck_assert_int_eq(estimate_start(e, "ns/r10-d"), 100000);
    ck_assert_int_eq(estimate_start(e, "ns/r10-e"), -1);
    ck_assert_int_eq(estimate_start(e, "ns/r50-c"), -1);
    ck_assert_uint_eq(e->stats.estimated, 1);
    ck_assert_int_le(e->stats.reached, 220000);
    estimate_free(e);
    sched_decisions_fini(&d);
    sched_free(s);
}
END_TEST

/* A running workload of unknown runtime never frees its quota within the horizon: what needs it
 * gets no estimate. A maximum execution time is a runtime; a resource without quota never fits. */
START_TEST(unknown_runtime)
{
    sched_t *s = engine(NULL);
    sched_decisions_t d;
    estimate_opts_t o = {.runtime = runtime};
    fx_wl_opts_t mx = {.max_exec_seconds = 30};
    estimate_t *e;

    sched_decisions_init(&d);
    fx_wl(s, "ns/r100-a", "lq", 0, 0, "cpu=2", NULL);
    fx_wl(s, "ns/x-b", "lq", 0, 1, "cpu=1", NULL); /* unknown runtime: never frees */
    fx_run(s, 0, &d, true);
    fx_wl(s, "ns/r10-c", "lq", 0, 10, "cpu=4", NULL); /* needs b's too: never */
    fx_wl(s, "ns/r10-d", "lq", 0, 11, "cpu=1", NULL); /* the free cpu: admitted at once */
    fx_wl(s, "ns/y-e", "lq", 0, 12, "cpu=2", &mx);    /* max execution time 30 s; at 100 s */
    fx_wl(s, "ns/x-f", "lq", 0, 13, "cpu=1", NULL);   /* unknown runtime itself: known start */
    fx_wl(s, "ns/r1-g", "lq", 0, 14, "cpu=1,nvidia.com/gpu=1", NULL); /* no gpu quota */
    fx_run(s, 1000, &d, true);
    ck_assert_int_eq(fx_state(s, "ns/r10-d"), SCHED_WL_ADMITTED);
    e = run(s, 1000, &o);
    ck_assert_uint_eq(e->stats.pending, 4);
    ck_assert_int_eq(estimate_start(e, "ns/r10-c"), -1);
    ck_assert_int_eq(estimate_start(e, "ns/x-f"), 11000);  /* d ends at 11 s */
    ck_assert_int_eq(estimate_start(e, "ns/y-e"), 100000); /* a ends at 100 s */
    ck_assert_int_eq(estimate_start(e, "ns/r1-g"), -1);
    estimate_free(e);
    sched_decisions_fini(&d);
    sched_free(s);
}
END_TEST

/* The cycle budget bounds the cost: the run stops when it is spent, says so, and what had not
 * started by then has no estimate. */
START_TEST(cost_bound)
{
    sched_decisions_t d;
    sched_t *s;
    estimate_opts_t o = {.runtime = runtime, .max_cycles = 2};
    estimate_t *e;

    sched_decisions_init(&d);
    s = queue(&d);
    e = run(s, 20000, &o); /* cycle 1 at 20 s decides nothing, cycle 2 at 100 s admits d */
    ck_assert_uint_eq(e->stats.cycles, 2);
    ck_assert(e->stats.truncated);
    ck_assert_int_eq(estimate_start(e, "ns/r10-d"), 100000);
    ck_assert_int_eq(estimate_start(e, "ns/r10-e"), -1);
    ck_assert_uint_eq(e->stats.estimated, 1);
    estimate_free(e);
    sched_decisions_fini(&d);
    sched_free(s);
}
END_TEST

/* The expected runtime: maximum execution time, else the mean per LocalQueue and priority
 * class, then LocalQueue, then ClusterQueue. */
START_TEST(means)
{
    estimate_means_t m;
    sched_wl_info_t w = {
        .key = "ns/a", .local_queue_key = "ns/lq", .priority_class = "hi", .cluster_queue = "cq"};

    estimate_means_init(&m, 0);
    ck_assert_int_eq(estimate_means_runtime(&m, &w), -1);
    ck_assert_int_eq(estimate_means_add(&m, &w, 1000), ERR_OK);
    ck_assert_int_eq(estimate_means_add(&m, &w, 3000), ERR_OK);
    w.priority_class = NULL;
    ck_assert_int_eq(estimate_means_add(&m, &w, 8000), ERR_OK);
    ck_assert_int_eq(estimate_means_runtime(&m, &w), 8000); /* its class: the one without */
    w.priority_class = "hi";
    ck_assert_int_eq(estimate_means_runtime(&m, &w), 2000);
    w.priority_class = "lo"; /* never seen: the LocalQueue's mean */
    ck_assert_int_eq(estimate_means_runtime(&m, &w), 4000);
    w.local_queue_key = "ns/other"; /* the ClusterQueue's */
    ck_assert_int_eq(estimate_means_runtime(&m, &w), 4000);
    w.cluster_queue = "cq2";
    ck_assert_int_eq(estimate_means_runtime(&m, &w), -1);
    w.max_exec_ms = 60000;
    ck_assert_int_eq(estimate_means_runtime(&m, &w), 60000);
    estimate_means_fini(&m);
    /* bounded: past max_keys nothing new is learnt */
    estimate_means_init(&m, 3);
    w = (sched_wl_info_t){.key = "ns/a", .local_queue_key = "ns/lq", .cluster_queue = "cq"};
    ck_assert_int_eq(estimate_means_add(&m, &w, 1000), ERR_OK);
    w.local_queue_key = "ns/lq2";
    ck_assert_int_eq(estimate_means_add(&m, &w, 5000), ERR_OK);
    ck_assert_int_eq(estimate_means_runtime(&m, &w), 3000); /* the ClusterQueue's two */
    ck_assert_uint_eq(util_hmap_len(&m.m), 3);
    estimate_means_fini(&m);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("obs_estimate");
    TCase *tc = tcase_create("core");

    tcase_add_test(tc, engine_run_forward);
    tcase_add_test(tc, later_arrival_not_assumed);
    tcase_add_test(tc, preemption_makes_it_earlier);
    tcase_add_test(tc, borrowing_from_the_cohort);
    tcase_add_test(tc, horizon);
    tcase_add_test(tc, unknown_runtime);
    tcase_add_test(tc, cost_bound);
    tcase_add_test(tc, means);
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
