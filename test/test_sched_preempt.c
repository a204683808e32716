/* test_sched_preempt -- classical preemption: policies, candidate order, fill-back, reasons. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "sched_fixtures.h"

#include <check.h>
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

static size_t count_kind(sched_decision_kind_t k)
{
    size_t n = 0;
    for (size_t i = 0; i < out.len; i++)
        n += out.items[i].kind == k;
    return n;
}

START_TEST(within_cq_lower_priority_minimal)
{
    fx_cq(s, "cq", "cpu|f:6", &(fx_cq_opts_t){.within = PREEMPT_LOWER_PRIORITY});
    fx_lq(s, "ns", "q", "cq", STOP_POLICY_NONE);
    fx_wl(s, "ns/low-old", "q", 1, 1, "cpu=2", NULL);
    fx_run(s, 0, &out, true);
    fx_wl(s, "ns/low-new", "q", 1, 2, "cpu=2", NULL);
    fx_run(s, 10, &out, true);
    fx_wl(s, "ns/mid", "q", 5, 3, "cpu=2", NULL);
    fx_run(s, 20, &out, true);
    ck_assert_uint_eq(count_kind(SCHED_DECISION_ADMIT), 3);
    /* a priority-10 workload needing 2 cpu: exactly one victim, the lowest priority and, among
     * equals, the most recently admitted one (low-new, admitted at t=10) */
    sched_decisions_clear(&out);
    fx_wl(s, "ns/high", "q", 10, 4, "cpu=2", NULL);
    ck_assert_int_eq(sched_cycle(s, 100, &out, NULL), ERR_OK);
    ck_assert_uint_eq(count_kind(SCHED_DECISION_PREEMPT), 1);
    int p = fx_find(&out, SCHED_DECISION_PREEMPT, "ns/low-new");
    ck_assert_int_ge(p, 0);
    ck_assert_str_eq(out.items[p].preemptor, "ns/high");
    ck_assert_int_eq(out.items[p].reason, SCHED_PREEMPT_IN_CLUSTER_QUEUE);
    /* the victim keeps its quota until it is evicted; the preemptor waits */
    ck_assert_int_eq(fx_state(s, "ns/low-new"), SCHED_WL_EVICTING);
    ck_assert_int_eq(fx_usage(s, "cq", "f", "cpu"), 6);
    ck_assert_int_eq(fx_reason(s, "ns/high"), SCHED_REASON_WAITING_FOR_PREEMPTED);
    size_t n = out.len;
    ck_assert_int_eq(sched_cycle(s, 100, &out, NULL), ERR_OK);
    ck_assert_uint_eq(out.len, n); /* no new decision while the victim is stopping */
    ck_assert_int_eq(sched_evicted(s, "ns/low-new", 101, NULL), ERR_OK);
    fx_run(s, 101, &out, true);
    ck_assert_int_eq(fx_state(s, "ns/high"), SCHED_WL_ADMITTED);
    ck_assert_int_eq(fx_state(s, "ns/low-new"), SCHED_WL_PENDING);
    ck_assert_int_eq(fx_usage(s, "cq", "f", "cpu"), 6);
}
END_TEST

START_TEST(fill_back_keeps_unneeded)
{
    /* candidates in order: a(1 cpu, prio 1), b(3 cpu, prio 2). Removing a is not enough, removing
     * b too fits; then a is added back (fill-back), so only b is preempted. */
    fx_cq(s, "cq", "cpu|f:4", &(fx_cq_opts_t){.within = PREEMPT_LOWER_PRIORITY});
    fx_lq(s, "ns", "q", "cq", STOP_POLICY_NONE);
    fx_wl(s, "ns/a", "q", 1, 1, "cpu=1", NULL);
    fx_wl(s, "ns/b", "q", 2, 2, "cpu=3", NULL);
    fx_run(s, 0, &out, true);
    sched_decisions_clear(&out);
    fx_wl(s, "ns/hi", "q", 10, 3, "cpu=3", NULL);
    fx_run(s, 1, &out, true);
    ck_assert_int_lt(fx_find(&out, SCHED_DECISION_PREEMPT, "ns/a"), 0);
    ck_assert_int_ge(fx_find(&out, SCHED_DECISION_PREEMPT, "ns/b"), 0);
    ck_assert_int_eq(fx_state(s, "ns/hi"), SCHED_WL_ADMITTED);
    ck_assert_int_eq(fx_state(s, "ns/a"), SCHED_WL_ADMITTED);
}
END_TEST

START_TEST(never_preempts_equal_priority)
{
    fx_cq(s, "cq", "cpu|f:2", &(fx_cq_opts_t){.within = PREEMPT_LOWER_PRIORITY});
    fx_lq(s, "ns", "q", "cq", STOP_POLICY_NONE);
    fx_wl(s, "ns/a", "q", 5, 1, "cpu=2", NULL);
    fx_run(s, 0, &out, true);
    fx_wl(s, "ns/b", "q", 5, 2, "cpu=2", NULL);
    fx_run(s, 1, &out, true);
    ck_assert_uint_eq(count_kind(SCHED_DECISION_PREEMPT), 0);
    ck_assert_int_eq(fx_state(s, "ns/b"), SCHED_WL_PENDING);
    ck_assert_int_eq(fx_reason(s, "ns/b"), SCHED_REASON_WAITING_FOR_QUOTA);
}
END_TEST

START_TEST(newer_equal_priority_policy)
{
    /* LowerOrNewerEqualPriority: an OLDER workload of equal priority preempts a newer one */
    fx_cq(s, "cq", "cpu|f:2", &(fx_cq_opts_t){.within = PREEMPT_LOWER_OR_NEWER_EQUAL_PRIORITY});
    fx_lq(s, "ns", "q", "cq", STOP_POLICY_NONE);
    fx_wl(s, "ns/newer", "q", 5, 50, "cpu=2", NULL);
    fx_run(s, 60, &out, true);
    fx_wl(s, "ns/older", "q", 5, 10, "cpu=2", NULL);
    fx_run(s, 61, &out, true);
    ck_assert_int_ge(fx_find(&out, SCHED_DECISION_PREEMPT, "ns/newer"), 0);
    ck_assert_int_eq(fx_state(s, "ns/older"), SCHED_WL_ADMITTED);
}
END_TEST

START_TEST(reclaim_within_cohort)
{
    /* b borrows a's idle quota; when a needs its nominal back it reclaims (any priority) */
    fx_pair(s, "cpu|f:4", &(fx_cq_opts_t){.cohort = "c", .reclaim = PREEMPT_ANY}, "cpu|f:4",
            &(fx_cq_opts_t){.cohort = "c"});
    fx_wl(s, "ns/b1", "qb", 100, 1, "cpu=4", NULL);
    fx_run(s, 0, &out, true);
    fx_wl(s, "ns/b2", "qb", 100, 2, "cpu=4", NULL);
    fx_run(s, 1, &out, true);
    ck_assert_int_eq(fx_usage(s, "b", "f", "cpu"), 8);
    sched_decisions_clear(&out);
    fx_wl(s, "ns/a1", "qa", 0, 3, "cpu=2", NULL);
    fx_run(s, 1, &out, true);
    int p = fx_find(&out, SCHED_DECISION_PREEMPT, "ns/b2");
    ck_assert_int_ge(p, 0); /* newest admission of the borrowing CQ */
    ck_assert_int_eq(out.items[p].reason, SCHED_PREEMPT_IN_COHORT_RECLAMATION);
    ck_assert_int_eq(fx_state(s, "ns/a1"), SCHED_WL_ADMITTED);
    ck_assert_int_eq(fx_state(s, "ns/b1"), SCHED_WL_ADMITTED);
}
END_TEST

START_TEST(reclaim_lower_priority_only)
{
    fx_pair(s, "cpu|f:4", &(fx_cq_opts_t){.cohort = "c", .reclaim = PREEMPT_LOWER_PRIORITY},
            "cpu|f:4", &(fx_cq_opts_t){.cohort = "c"});
    fx_wl(s, "ns/b1", "qb", 100, 1, "cpu=4", NULL);
    fx_wl(s, "ns/b2", "qb", 100, 2, "cpu=4", NULL);
    fx_run(s, 0, &out, true);
    fx_wl(s, "ns/a1", "qa", 0, 3, "cpu=2", NULL);
    fx_run(s, 1, &out, true);
    ck_assert_uint_eq(count_kind(SCHED_DECISION_PREEMPT), 0);
    ck_assert_int_eq(fx_state(s, "ns/a1"), SCHED_WL_PENDING);
}
END_TEST

START_TEST(borrow_within_cohort)
{
    /* a (nominal 2) needs 4: it must borrow. borrowWithinCohort LowerPriority lets it preempt a
     * lower-priority workload of borrowing CQ b while a itself ends up borrowing. */
    fx_pair(
        s, "cpu|f:2",
        &(fx_cq_opts_t){.cohort = "c", .reclaim = PREEMPT_ANY, .borrow = PREEMPT_LOWER_PRIORITY},
        "cpu|f:4", &(fx_cq_opts_t){.cohort = "c"});
    fx_wl(s, "ns/b1", "qb", 1, 1, "cpu=2", NULL);
    fx_run(s, 0, &out, true);
    fx_wl(s, "ns/b2", "qb", 1, 2, "cpu=3", NULL);
    fx_run(s, 1, &out, true);
    sched_decisions_clear(&out);
    fx_wl(s, "ns/a1", "qa", 10, 3, "cpu=4", NULL);
    fx_run(s, 1, &out, true);
    int p = fx_find(&out, SCHED_DECISION_PREEMPT, "ns/b2");
    ck_assert_int_ge(p, 0);
    ck_assert_int_eq(out.items[p].reason, SCHED_PREEMPT_IN_COHORT_RECLAIM_WHILE_BORROWING);
    int a = fx_find(&out, SCHED_DECISION_ADMIT, "ns/a1");
    ck_assert_int_ge(a, 0);
    ck_assert(out.items[a].borrowing);
    ck_assert_int_eq(fx_state(s, "ns/b1"), SCHED_WL_ADMITTED);
}
END_TEST

START_TEST(issue17_kueue_victim_in_borrowing_queue)
{
    /* Issue 17's scenario, Kueue's outcome (the default): a and b, 4 cpu each, cohort co,
     * withinClusterQueue LowerPriority, reclaimWithinCohort Any. In a: L1 (prio 10, 4 cpu, t=0),
     * L2 (prio 10, 2 cpu, t=1), so a borrows 2; H (prio 200, 4 cpu, t=2). Kueue's candidates in
     * a: most recently admitted first, so L2; without L2, H fits by borrowing 4 of b's idle
     * quota: L2 alone is preempted and H admitted next to L1. */
    fx_cq_opts_t o = {.cohort = "co", .within = PREEMPT_LOWER_PRIORITY, .reclaim = PREEMPT_ANY};
    fx_pair(s, "cpu|f:4", &o, "cpu|f:4", &o);
    fx_wl(s, "ns/L1", "qa", 10, 0, "cpu=4", NULL);
    fx_run(s, 0, &out, true);
    fx_wl(s, "ns/L2", "qa", 10, 1000, "cpu=2", NULL);
    fx_run(s, 1000, &out, true);
    ck_assert_int_eq(fx_usage(s, "a", "f", "cpu"), 6);
    sched_decisions_clear(&out);
    fx_wl(s, "ns/H", "qa", 200, 2000, "cpu=4", NULL);
    fx_run(s, 2000, &out, true);
    ck_assert_uint_eq(count_kind(SCHED_DECISION_PREEMPT), 1);
    int p = fx_find(&out, SCHED_DECISION_PREEMPT, "ns/L2");
    ck_assert_int_ge(p, 0);
    ck_assert_str_eq(out.items[p].preemptor, "ns/H");
    ck_assert_int_eq(out.items[p].reason, SCHED_PREEMPT_IN_CLUSTER_QUEUE);
    ck_assert_int_eq(fx_state(s, "ns/H"), SCHED_WL_ADMITTED);
    ck_assert_int_eq(fx_state(s, "ns/L1"), SCHED_WL_ADMITTED);
    ck_assert_int_eq(fx_state(s, "ns/L2"), SCHED_WL_PENDING);
    ck_assert_int_eq(fx_usage(s, "a", "f", "cpu"), 8);
}
END_TEST

START_TEST(issue17_scenario_with_own_queue_borrowing_guard)
{
    /* The same scenario with the opt-in loop guard own-queue-borrowing: removing L2 alone would
     * leave a borrowing 4 instead of 2, so the minimal set is L1, which H replaces one for one. */
    sched_config_t cfg = {.loop_guards = SCHED_GUARD_OWN_QUEUE_BORROWING};
    sched_set_config(s, &cfg);
    fx_cq_opts_t o = {.cohort = "co", .within = PREEMPT_LOWER_PRIORITY, .reclaim = PREEMPT_ANY};
    fx_pair(s, "cpu|f:4", &o, "cpu|f:4", &o);
    fx_wl(s, "ns/L1", "qa", 10, 0, "cpu=4", NULL);
    fx_run(s, 0, &out, true);
    fx_wl(s, "ns/L2", "qa", 10, 1000, "cpu=2", NULL);
    fx_run(s, 1000, &out, true);
    sched_decisions_clear(&out);
    fx_wl(s, "ns/H", "qa", 200, 2000, "cpu=4", NULL);
    fx_run(s, 2000, &out, true);
    ck_assert_uint_eq(count_kind(SCHED_DECISION_PREEMPT), 1);
    ck_assert_int_ge(fx_find(&out, SCHED_DECISION_PREEMPT, "ns/L1"), 0);
    ck_assert_int_eq(fx_state(s, "ns/H"), SCHED_WL_ADMITTED);
    ck_assert_int_eq(fx_state(s, "ns/L2"), SCHED_WL_ADMITTED);
    ck_assert_int_eq(fx_usage(s, "a", "f", "cpu"), 6);
}
END_TEST

START_TEST(own_queue_preemption_does_not_grow_borrowing)
{
    /* With the loop guard own-queue-borrowing (docs/engine.md, "Loops", cause 4). a (nominal 4)
     * borrows 2 from b (nominal 4, idle): low (2 cpu, prio 0) and fill (4 cpu, prio 5) run in a,
     * 2 cpu are free. high (4 cpu, prio 10) arrives. Kueue (and sluice by default) preempts low
     * and takes the 2 freed plus the 2 free, leaving a borrowing 4. The guard never lets a
     * preemption within a ClusterQueue grow that queue's borrowing: removing low alone would, so
     * the minimal set is fill, which high replaces one for one. */
    sched_config_t cfg = {.loop_guards = SCHED_GUARD_OWN_QUEUE_BORROWING};
    sched_set_config(s, &cfg);
    fx_pair(
        s, "cpu|f:4",
        &(fx_cq_opts_t){.cohort = "c", .within = PREEMPT_LOWER_PRIORITY, .reclaim = PREEMPT_ANY},
        "cpu|f:4", &(fx_cq_opts_t){.cohort = "c", .reclaim = PREEMPT_ANY});
    fx_wl(s, "ns/low", "qa", 0, 1, "cpu=2", NULL);
    fx_wl(s, "ns/fill", "qa", 5, 2, "cpu=4", NULL);
    fx_run(s, 0, &out, true);
    ck_assert_int_eq(fx_usage(s, "a", "f", "cpu"), 6);
    sched_decisions_clear(&out);
    fx_wl(s, "ns/high", "qa", 10, 3, "cpu=4", NULL);
    fx_run(s, 10, &out, true);
    ck_assert_uint_eq(count_kind(SCHED_DECISION_PREEMPT), 1);
    int p = fx_find(&out, SCHED_DECISION_PREEMPT, "ns/fill");
    ck_assert_int_ge(p, 0);
    ck_assert_int_eq(out.items[p].reason, SCHED_PREEMPT_IN_CLUSTER_QUEUE);
    ck_assert_int_eq(fx_state(s, "ns/high"), SCHED_WL_ADMITTED);
    ck_assert_int_eq(fx_state(s, "ns/low"), SCHED_WL_ADMITTED);
    ck_assert_int_eq(fx_usage(s, "a", "f", "cpu"), 6);
    /* within nominal nothing changes: once a is under nominal, growth up to it is free */
    ck_assert_int_eq(sched_workload_finish(s, "ns/high", 20, NULL), ERR_OK);
    ck_assert_int_eq(sched_workload_delete(s, "ns/fill", 20, NULL), ERR_OK);
    fx_run(s, 20, &out, true);
    ck_assert_int_eq(fx_usage(s, "a", "f", "cpu"), 2);
    sched_decisions_clear(&out);
    fx_wl(s, "ns/high2", "qa", 10, 21, "cpu=4", NULL);
    fx_run(s, 21, &out, true);
    ck_assert_uint_eq(count_kind(SCHED_DECISION_PREEMPT), 0);
    ck_assert_int_eq(fx_usage(s, "a", "f", "cpu"), 6);
}
END_TEST

/* Run at most `max` cycles at `now`, victims evicted at once; true when the instant settled. */
static bool settles_within(int max, int64_t now)
{
    for (int i = 0; i < max; i++) {
        size_t before = out.len;
        ck_assert_int_eq(sched_cycle(s, now, &out, NULL), ERR_OK);
        if (out.len == before)
            return true;
        for (size_t k = before; k < out.len; k++)
            if (out.items[k].kind == SCHED_DECISION_PREEMPT)
                ck_assert_int_eq(sched_evicted(s, out.items[k].workload, now, NULL), ERR_OK);
    }
    return false;
}

/* The loop the guard own-queue-borrowing prevents (docs/engine.md, "Loops", cause 4;
 * test/data/sim/loop-own-queue-borrowing.yaml, from property seed 260). Cohort co: a (9 cpu,
 * withinClusterQueue LowerPriority) and b (5 cpu, lendingLimit 1, LowerOrNewerEqualPriority,
 * borrowWithinCohort LowerPriority), both reclaimWithinCohort Any. Fillers (priority 30) hold
 * 4 of a and 3 of b, so the cohort has 6 cpu for a-small (2, prio 10), a-big (6, prio 20),
 * b-big (6, prio 20) and b-small (2, prio 20, newest). a-big preempts a-small and borrows;
 * b-small reclaims a-big; b-big preempts b-small and borrows; a-small reclaims b-big; and again. */
static void loop_scenario(unsigned guards)
{
    sched_config_t cfg = {.loop_guards = guards};
    sched_set_config(s, &cfg);
    fx_pair(
        s, "cpu|f:9",
        &(fx_cq_opts_t){.cohort = "co", .within = PREEMPT_LOWER_PRIORITY, .reclaim = PREEMPT_ANY},
        "cpu|f:5/l1",
        &(fx_cq_opts_t){.cohort = "co",
                        .within = PREEMPT_LOWER_OR_NEWER_EQUAL_PRIORITY,
                        .reclaim = PREEMPT_ANY,
                        .borrow = PREEMPT_LOWER_PRIORITY});
    static const struct {
        const char *key, *lq;
        int32_t prio;
        const char *req;
    } wls[] = {{"ns/fill-a", "qa", 30, "cpu=4"}, {"ns/fill-b", "qb", 30, "cpu=2"},
               {"ns/b-big", "qb", 20, "cpu=6"},  {"ns/a-small", "qa", 10, "cpu=2"},
               {"ns/a-big", "qa", 20, "cpu=6"},  {"ns/b-small", "qb", 20, "cpu=2"},
               {"ns/fill-b2", "qb", 30, "cpu=1"}};
    for (int i = 0; i < 6; i++) {
        fx_wl(s, wls[i].key, wls[i].lq, wls[i].prio, i * 1000, wls[i].req, NULL);
        fx_run(s, i * 1000, &out, true);
    }
    fx_wl(s, wls[6].key, wls[6].lq, wls[6].prio, 6000, wls[6].req, NULL);
}

START_TEST(own_queue_borrowing_loop_without_guard)
{
    loop_scenario(0);
    ck_assert(!settles_within(400, 6000));
}
END_TEST

START_TEST(own_queue_borrowing_loop_guarded)
{
    loop_scenario(SCHED_GUARD_OWN_QUEUE_BORROWING);
    ck_assert(settles_within(40, 6000));
    ck_assert_int_eq(fx_state(s, "ns/b-small"), SCHED_WL_ADMITTED);
    ck_assert_int_eq(fx_state(s, "ns/a-small"), SCHED_WL_ADMITTED);
    ck_assert_int_eq(fx_state(s, "ns/a-big"), SCHED_WL_PENDING);
    ck_assert_int_eq(fx_state(s, "ns/b-big"), SCHED_WL_PENDING);
}
END_TEST

START_TEST(priority_boost_annotation)
{
    /* kueue.x-k8s.io/priority-boost is added to the priority: low (prio 1) boosted by 10 is
     * above mid (prio 5), so mid cannot preempt it, and a boosted pending workload preempts. A
     * malformed boost reads as 0 (Kueue's EffectivePriority). */
    fx_cq(s, "cq", "cpu|f:2", &(fx_cq_opts_t){.within = PREEMPT_LOWER_PRIORITY});
    fx_lq(s, "ns", "q", "cq", STOP_POLICY_NONE);
    fx_wl(s, "ns/low", "q", 1, 1, "cpu=2",
          &(fx_wl_opts_t){.annotations = "kueue.x-k8s.io/priority-boost=10"});
    fx_run(s, 0, &out, true);
    sched_wl_info_t info;
    ck_assert_int_eq(sched_workload_info(s, "ns/low", &info, NULL), ERR_OK);
    ck_assert_int_eq(info.priority, 11);
    fx_wl(s, "ns/mid", "q", 5, 2, "cpu=2", NULL);
    fx_run(s, 10, &out, true);
    ck_assert_uint_eq(count_kind(SCHED_DECISION_PREEMPT), 0);
    fx_wl(s, "ns/neg", "q", 20, 3, "cpu=2",
          &(fx_wl_opts_t){.annotations = "kueue.x-k8s.io/priority-boost=-15"});
    fx_run(s, 20, &out, true);
    ck_assert_uint_eq(count_kind(SCHED_DECISION_PREEMPT), 0);
    fx_wl(s, "ns/up", "q", 5, 4, "cpu=2",
          &(fx_wl_opts_t){.annotations = "kueue.x-k8s.io/priority-boost=+7"});
    fx_run(s, 30, &out, true);
    ck_assert_int_ge(fx_find(&out, SCHED_DECISION_PREEMPT, "ns/low"), 0);
    ck_assert_int_eq(fx_state(s, "ns/up"), SCHED_WL_ADMITTED);
    fx_wl(s, "ns/bad", "q", 3, 5, "cpu=2",
          &(fx_wl_opts_t){.annotations = "kueue.x-k8s.io/priority-boost=9x"});
    ck_assert_int_eq(sched_workload_info(s, "ns/bad", &info, NULL), ERR_OK);
    ck_assert_int_eq(info.priority, 3);
    fx_wl(s, "ns/huge", "q", 3, 6, "cpu=2",
          &(fx_wl_opts_t){.annotations = "kueue.x-k8s.io/priority-boost=2147483648"});
    ck_assert_int_eq(sched_workload_info(s, "ns/huge", &info, NULL), ERR_OK);
    ck_assert_int_eq(info.priority, 3);
}
END_TEST

static Suite *suite(void)
{
    Suite *su = suite_create("sched_preempt");
    TCase *tc = tcase_create("preempt");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, within_cq_lower_priority_minimal);
    tcase_add_test(tc, fill_back_keeps_unneeded);
    tcase_add_test(tc, never_preempts_equal_priority);
    tcase_add_test(tc, newer_equal_priority_policy);
    tcase_add_test(tc, reclaim_within_cohort);
    tcase_add_test(tc, reclaim_lower_priority_only);
    tcase_add_test(tc, borrow_within_cohort);
    tcase_add_test(tc, own_queue_preemption_does_not_grow_borrowing);
    tcase_add_test(tc, issue17_kueue_victim_in_borrowing_queue);
    tcase_add_test(tc, issue17_scenario_with_own_queue_borrowing_guard);
    tcase_add_test(tc, own_queue_borrowing_loop_without_guard);
    tcase_add_test(tc, own_queue_borrowing_loop_guarded);
    tcase_add_test(tc, priority_boost_annotation);
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
