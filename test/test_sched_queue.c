/* test_sched_queue -- queueing strategies, stop policies, max execution time, priorities. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "sched_fixtures.h"

#include <check.h>
#include <stdlib.h>

static sched_t *s;
static sched_decisions_t out;

static void setup(void)
{
    s = sched_new(NULL);
    ck_assert_ptr_nonnull(s);
    sched_decisions_init(&out);
    fx_flavor(s, "f", NULL, NULL);
}

static void teardown(void)
{
    sched_decisions_fini(&out);
    sched_free(s);
}

START_TEST(strict_fifo_blocks)
{
    /* StrictFIFO: the big head blocks the small one behind it; BestEffortFIFO lets it pass */
    fx_cq(s, "strict", "cpu|f:4", &(fx_cq_opts_t){.queueing = QUEUEING_STRICT_FIFO});
    fx_cq(s, "best", "cpu|f:4", NULL);
    fx_lq(s, "ns", "qs", "strict", STOP_POLICY_NONE);
    fx_lq(s, "ns", "qb", "best", STOP_POLICY_NONE);
    fx_wl(s, "ns/s-big", "qs", 0, 1, "cpu=3", NULL);
    fx_wl(s, "ns/b-big", "qb", 0, 1, "cpu=3", NULL);
    fx_run(s, 0, &out, true);
    fx_wl(s, "ns/s-huge", "qs", 0, 2, "cpu=4", NULL);
    fx_wl(s, "ns/s-small", "qs", 0, 3, "cpu=1", NULL);
    fx_wl(s, "ns/b-huge", "qb", 0, 2, "cpu=4", NULL);
    fx_wl(s, "ns/b-small", "qb", 0, 3, "cpu=1", NULL);
    fx_run(s, 1, &out, true);
    ck_assert_int_eq(fx_state(s, "ns/s-small"), SCHED_WL_PENDING);
    ck_assert_int_eq(fx_state(s, "ns/b-small"), SCHED_WL_ADMITTED);
    /* repeated cycles without change decide nothing (no spinning) */
    size_t n = out.len;
    ck_assert_int_eq(sched_cycle(s, 2, &out, NULL), ERR_OK);
    ck_assert_uint_eq(out.len, n);
}
END_TEST

START_TEST(stop_policies)
{
    fx_cq(s, "cq", "cpu|f:4", NULL);
    fx_lq(s, "ns", "q", "cq", STOP_POLICY_NONE);
    fx_wl(s, "ns/run", "q", 0, 1, "cpu=2", NULL);
    fx_run(s, 0, &out, false);
    /* Hold: running workloads stay, new ones wait */
    fx_cq(s, "cq", "cpu|f:4", &(fx_cq_opts_t){.stop = STOP_POLICY_HOLD});
    fx_wl(s, "ns/new", "q", 0, 2, "cpu=1", NULL);
    fx_run(s, 1, &out, false);
    ck_assert_int_eq(fx_state(s, "ns/run"), SCHED_WL_ADMITTED);
    ck_assert_int_eq(fx_state(s, "ns/new"), SCHED_WL_PENDING);
    ck_assert_int_eq(fx_reason(s, "ns/new"), SCHED_REASON_SUSPENDED);
    /* HoldAndDrain: running workloads are evicted */
    fx_cq(s, "cq", "cpu|f:4", &(fx_cq_opts_t){.stop = STOP_POLICY_HOLD_AND_DRAIN});
    sched_decisions_clear(&out);
    fx_run(s, 2, &out, true);
    int e = fx_find(&out, SCHED_DECISION_EVICT, "ns/run");
    ck_assert_int_ge(e, 0);
    ck_assert_str_eq(out.items[e].reason_str, "ClusterQueueStopped");
    ck_assert_int_eq(fx_usage(s, "cq", "f", "cpu"), 0);
    /* restart: both get in */
    fx_cq(s, "cq", "cpu|f:4", NULL);
    fx_run(s, 3, &out, true);
    ck_assert_int_eq(fx_state(s, "ns/run"), SCHED_WL_ADMITTED);
    ck_assert_int_eq(fx_state(s, "ns/new"), SCHED_WL_ADMITTED);
}
END_TEST

START_TEST(max_execution_time)
{
    fx_cq(s, "cq", "cpu|f:1", NULL);
    fx_lq(s, "ns", "q", "cq", STOP_POLICY_NONE);
    fx_wl(s, "ns/long", "q", 0, 1, "cpu=1", &(fx_wl_opts_t){.max_exec_seconds = 30});
    fx_wl(s, "ns/next", "q", 0, 2, "cpu=1", NULL);
    fx_run(s, 1000, &out, true);
    ck_assert_int_eq(fx_state(s, "ns/long"), SCHED_WL_ADMITTED);
    ck_assert_int_eq(sched_next_deadline(s, 1000), 31000);
    fx_run(s, 30999, &out, true);
    ck_assert_int_eq(fx_state(s, "ns/long"), SCHED_WL_ADMITTED);
    sched_decisions_clear(&out);
    fx_run(s, 31000, &out, true);
    int d = fx_find(&out, SCHED_DECISION_DEACTIVATE, "ns/long");
    ck_assert_int_ge(d, 0);
    ck_assert_str_eq(out.items[d].reason_str, "MaximumExecutionTimeExceeded");
    ck_assert_int_eq(fx_state(s, "ns/long"), SCHED_WL_DEACTIVATED);
    ck_assert_int_eq(fx_state(s, "ns/next"), SCHED_WL_ADMITTED); /* quota freed at once */
    ck_assert_int_eq(sched_next_deadline(s, 31000), INT64_MAX);
}
END_TEST

START_TEST(priority_class_and_namespace_selector)
{
    workload_priority_class_t wpc = {.meta = {.name = (char *)"high"}, .value = 1000};
    ck_assert_int_eq(sched_wpc_upsert(s, &wpc, NULL), ERR_OK);
    fx_cq(s, "cq", "cpu|f:1", &(fx_cq_opts_t){.ns_label = "team=a"});
    fx_ns(s, "a", "team=a");
    fx_ns(s, "b", "team=b");
    fx_lq(s, "a", "q", "cq", STOP_POLICY_NONE);
    fx_lq(s, "b", "q", "cq", STOP_POLICY_NONE);
    fx_wl(s, "b/other", "q", 5000, 1, "cpu=1", NULL);
    fx_wl(s, "a/low", "q", 0, 2, "cpu=1", NULL);
    fx_wl(s, "a/hi", "q", 0, 3, "cpu=1", &(fx_wl_opts_t){.wpc = "high"});
    fx_run(s, 0, &out, true);
    ck_assert_int_eq(fx_state(s, "b/other"), SCHED_WL_PENDING);
    ck_assert_int_eq(fx_reason(s, "b/other"), SCHED_REASON_MISCONFIGURED);
    ck_assert_int_eq(fx_state(s, "a/hi"), SCHED_WL_ADMITTED); /* class value 1000 > 0 */
    ck_assert_int_eq(fx_state(s, "a/low"), SCHED_WL_PENDING);
}
END_TEST

static Suite *suite(void)
{
    Suite *su = suite_create("sched_queue");
    TCase *tc = tcase_create("queue");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, strict_fifo_blocks);
    tcase_add_test(tc, stop_policies);
    tcase_add_test(tc, max_execution_time);
    tcase_add_test(tc, priority_class_and_namespace_selector);
    suite_add_tcase(su, tc);
    return su;
}

int main(void)
{
    SRunner *sr = srunner_create(suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
