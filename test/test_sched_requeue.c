/* test_sched_requeue -- driver-requested eviction, requeue backoff (hold), queue timestamp moves.
 */
/* SPDX-License-Identifier: Apache-2.0 */
#include "sched_fixtures.h"

#include "model/quantity.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* Upsert pending workload ns/<name> in LocalQueue q asking for `cpu` whole CPUs, with `opts`
 * (the operator's way: every watch event re-upserts the object with fresh options). */
static void upsert(const char *name, int cpu, const sched_wl_opts_t *opts)
{
    workload_t w;
    pod_set_t ps;
    resource_t r;
    err_msg_t msg = {{0}};
    char text[16];

    memset(&w, 0, sizeof(w));
    memset(&ps, 0, sizeof(ps));
    snprintf(text, sizeof(text), "%d", cpu);
    ck_assert_int_eq(quantity_parse(text, strlen(text), &r.value, NULL), ERR_OK);
    r.name = (char *)"cpu";
    ps.name = (char *)"main";
    ps.count = 1;
    ps.pod_requests.items = &r;
    ps.pod_requests.len = 1;
    w.meta.namespace = (char *)"ns";
    w.meta.name = (char *)name;
    w.queue_name = (char *)"q";
    w.active = true;
    w.pod_sets = &ps;
    w.npod_sets = 1;
    ck_assert_msg(sched_workload_upsert(s, &w, opts, &msg) == ERR_OK, "%s", msg.text);
}

static size_t pending_in(const char *cq)
{
    sched_cq_status_t st;
    ck_assert_int_eq(sched_cq_status(s, cq, &st, NULL), ERR_OK);
    return st.pending;
}

START_TEST(evict_by_driver)
{
    fx_cq(s, "cq", "cpu|f:4", NULL);
    fx_lq(s, "ns", "q", "cq", STOP_POLICY_NONE);
    fx_wl(s, "ns/a", "q", 0, 1, "cpu=3", NULL);
    fx_run(s, 10, &out, false);
    ck_assert_int_eq(fx_state(s, "ns/a"), SCHED_WL_ADMITTED);
    /* a pending workload, an unknown one: not evictable */
    fx_wl(s, "ns/b", "q", 0, 2, "cpu=3", NULL);
    fx_run(s, 11, &out, false);
    ck_assert_int_eq(fx_state(s, "ns/b"), SCHED_WL_PENDING);
    ck_assert_int_eq(sched_workload_evict(s, "ns/b", NULL), ERR_INVALID);
    ck_assert_int_eq(sched_workload_evict(s, "ns/none", NULL), ERR_NOT_FOUND);
    ck_assert_int_eq(sched_evicted(s, "ns/a", 12, NULL), ERR_INVALID);

    ck_assert_int_eq(sched_workload_evict(s, "ns/a", NULL), ERR_OK);
    ck_assert_int_eq(sched_workload_evict(s, "ns/a", NULL), ERR_OK); /* idempotent */
    ck_assert_int_eq(fx_state(s, "ns/a"), SCHED_WL_EVICTING);
    /* the quota stays until the driver says the job stopped: b still waits */
    sched_decisions_clear(&out);
    fx_run(s, 13, &out, false);
    ck_assert_int_eq(fx_usage(s, "cq", "f", "cpu"), 3);
    ck_assert_int_eq(fx_state(s, "ns/b"), SCHED_WL_PENDING);
    ck_assert_int_eq(fx_find(&out, SCHED_DECISION_ADMIT, "ns/b"), -1);
    ck_assert_int_eq(sched_evicted(s, "ns/a", 14, NULL), ERR_OK);
    ck_assert_int_eq(fx_state(s, "ns/a"), SCHED_WL_PENDING);
    fx_run(s, 15, &out, false);
    /* back in its queue with its creation time: a (created 1) goes before b (created 2) */
    ck_assert_int_eq(fx_state(s, "ns/a"), SCHED_WL_ADMITTED);
    ck_assert_int_eq(fx_state(s, "ns/b"), SCHED_WL_PENDING);
}
END_TEST

/* Kueue's nominate: a pending workload with a Retry or Rejected check is inadmissible,
 * "The workload has failed admission checks" (before the ClusterQueue's own state), kept out of
 * capacity requeues, and queued again once its checks are no longer failed. */
START_TEST(failed_checks_inadmissible)
{
    sched_wl_opts_t failed = {.created = 1, .failed_checks = true}, ok = {.created = 1};
    sched_wl_info_t i;

    fx_cq(s, "cq", "cpu|f:4", NULL);
    fx_lq(s, "ns", "q", "cq", STOP_POLICY_NONE);
    upsert("a", 1, &failed);
    sched_decisions_clear(&out);
    fx_run(s, 10, &out, false);
    ck_assert_uint_eq(out.len, 0);
    ck_assert_int_eq(sched_workload_info(s, "ns/a", &i, NULL), ERR_OK);
    ck_assert_int_eq(i.state, SCHED_WL_PENDING);
    ck_assert_int_eq(i.reason, SCHED_REASON_PENDING_EVALUATION);
    ck_assert_str_eq(i.message, "The workload has failed admission checks");
    ck_assert_uint_eq(pending_in("cq"), 1);
    fx_wl(s, "ns/b", "q", 0, 2, "cpu=4", NULL);
    fx_run(s, 11, &out, false);
    ck_assert_int_eq(sched_workload_finish(s, "ns/b", 12, NULL), ERR_OK);
    fx_run(s, 12, &out, false);
    ck_assert_int_eq(fx_state(s, "ns/a"), SCHED_WL_PENDING);
    upsert("a", 1, &ok);
    ck_assert_int_eq(sched_workload_info(s, "ns/a", &i, NULL), ERR_OK);
    ck_assert_str_ne(i.message, "The workload has failed admission checks");
    sched_decisions_clear(&out);
    fx_run(s, 13, &out, false);
    ck_assert_int_ge(fx_find(&out, SCHED_DECISION_ADMIT, "ns/a"), 0);
}
END_TEST

START_TEST(hold_until_released)
{
    sched_wl_opts_t held = {.created = 1, .hold = true}, free_ = {.created = 1};

    fx_cq(s, "cq", "cpu|f:4", NULL);
    fx_lq(s, "ns", "q", "cq", STOP_POLICY_NONE);
    upsert("a", 1, &held);
    sched_decisions_clear(&out);
    fx_run(s, 10, &out, false);
    ck_assert_uint_eq(out.len, 0); /* room for it, but it waits out its backoff */
    ck_assert_int_eq(fx_state(s, "ns/a"), SCHED_WL_PENDING);
    ck_assert_uint_eq(pending_in("cq"), 1); /* counted as pending, as Kueue's inadmissible */
    /* capacity events requeue parked workloads, but not one in backoff */
    fx_wl(s, "ns/b", "q", 0, 2, "cpu=4", NULL);
    fx_run(s, 11, &out, false);
    ck_assert_int_eq(fx_state(s, "ns/b"), SCHED_WL_ADMITTED);
    ck_assert_int_eq(sched_workload_finish(s, "ns/b", 12, NULL), ERR_OK);
    fx_run(s, 12, &out, false);
    ck_assert_int_eq(fx_state(s, "ns/a"), SCHED_WL_PENDING);
    /* an update that keeps the hold keeps it parked */
    upsert("a", 2, &held);
    fx_run(s, 13, &out, false);
    ck_assert_int_eq(fx_state(s, "ns/a"), SCHED_WL_PENDING);
    /* the backoff is over: admitted at the next cycle */
    upsert("a", 2, &free_);
    sched_decisions_clear(&out);
    fx_run(s, 14, &out, false);
    ck_assert_int_ge(fx_find(&out, SCHED_DECISION_ADMIT, "ns/a"), 0);
    ck_assert_uint_eq(pending_in("cq"), 0);
}
END_TEST

/* A copy made with SCHED_CLONE_RELEASE_HOLDS (the start-time estimate's) admits a workload in
 * backoff at its next cycle; a plain copy keeps it held, as the original does. */
START_TEST(hold_released_in_a_clone)
{
    sched_wl_opts_t held = {.created = 1, .hold = true};
    sched_t *plain, *released;

    fx_cq(s, "cq", "cpu|f:4", NULL);
    fx_lq(s, "ns", "q", "cq", STOP_POLICY_NONE);
    upsert("a", 1, &held);
    fx_run(s, 10, &out, false);
    plain = sched_clone(s, 0);
    released = sched_clone(s, SCHED_CLONE_RELEASE_HOLDS);
    ck_assert_ptr_nonnull(plain);
    ck_assert_ptr_nonnull(released);
    sched_decisions_clear(&out);
    fx_run(plain, 11, &out, false);
    ck_assert_uint_eq(out.len, 0);
    fx_run(released, 11, &out, false);
    ck_assert_int_ge(fx_find(&out, SCHED_DECISION_ADMIT, "ns/a"), 0);
    ck_assert_int_eq(fx_state(s, "ns/a"), SCHED_WL_PENDING);
    sched_free(plain);
    sched_free(released);
}
END_TEST

START_TEST(hold_in_strict_fifo_does_not_block)
{
    sched_wl_opts_t held = {.created = 1, .hold = true};

    /* A StrictFIFO head in backoff is parked: the next one is not blocked behind it. */
    fx_cq(s, "cq", "cpu|f:4", &(fx_cq_opts_t){.queueing = QUEUEING_STRICT_FIFO});
    fx_lq(s, "ns", "q", "cq", STOP_POLICY_NONE);
    upsert("old", 1, &held);
    fx_wl(s, "ns/young", "q", 0, 5, "cpu=1", NULL);
    fx_run(s, 10, &out, false);
    ck_assert_int_eq(fx_state(s, "ns/young"), SCHED_WL_ADMITTED);
    ck_assert_int_eq(fx_state(s, "ns/old"), SCHED_WL_PENDING);
}
END_TEST

START_TEST(queue_timestamp_moves)
{
    /* Room for one at a time, StrictFIFO: the older timestamp goes first. A requeued workload
     * whose queue-order timestamp moved to its eviction time goes behind a younger one. */
    fx_cq(s, "cq", "cpu|f:1", &(fx_cq_opts_t){.queueing = QUEUEING_STRICT_FIFO});
    fx_lq(s, "ns", "q", "cq", STOP_POLICY_NONE);
    fx_wl(s, "ns/run", "q", 0, 0, "cpu=1", NULL);
    fx_run(s, 1, &out, false);
    upsert("a", 1, &(sched_wl_opts_t){.created = 10});
    upsert("b", 1, &(sched_wl_opts_t){.created = 20});
    fx_run(s, 21, &out, false);
    upsert("a", 1, &(sched_wl_opts_t){.created = 30}); /* evicted at 30 (Eviction strategy) */
    ck_assert_int_eq(sched_workload_finish(s, "ns/run", 31, NULL), ERR_OK);
    fx_run(s, 32, &out, false);
    ck_assert_int_eq(fx_state(s, "ns/b"), SCHED_WL_ADMITTED);
    ck_assert_int_eq(fx_state(s, "ns/a"), SCHED_WL_PENDING);
    sched_wl_info_t info;
    ck_assert_int_eq(sched_workload_info(s, "ns/a", &info, NULL), ERR_OK);
    ck_assert_int_eq(info.created, 30);
}
END_TEST

static Suite *suite(void)
{
    Suite *su = suite_create("sched_requeue");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, evict_by_driver);
    tcase_add_test(tc, hold_until_released);
    tcase_add_test(tc, failed_checks_inadmissible);
    tcase_add_test(tc, hold_released_in_a_clone);
    tcase_add_test(tc, hold_in_strict_fifo_does_not_block);
    tcase_add_test(tc, queue_timestamp_moves);
    suite_add_tcase(su, tc);
    return su;
}

int main(void)
{
    SRunner *sr = srunner_create(suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
