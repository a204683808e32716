/* test_sched_fair -- fair sharing: exact shares, tournament ordering, fair preemption. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "sched_fixtures.h"

#include <check.h>
#include <stdlib.h>

static sched_t *s;
static sched_decisions_t out;

static void setup(void)
{
    sched_config_t cfg = {.fair_sharing = true};
    s = sched_new(&cfg);
    ck_assert_ptr_nonnull(s);
    sched_decisions_init(&out);
    fx_flavor(s, "f", NULL, NULL);
}

static void teardown(void)
{
    sched_decisions_fini(&out);
    sched_free(s);
}

START_TEST(tournament_prefers_lower_share)
{
    /* The cohort owns 10 cpu; a and b own nothing, so everything they use is borrowed. a already
     * uses 6 (share 600 per mille of what the cohort can lend); both heads need 4 and only 4 are
     * left: b (share 0 before, 400 after) wins over a (1000 after). */
    fx_cohort(s, "c", NULL, "cpu|f:10", NULL);
    fx_pair(s, "cpu|f:0", &(fx_cq_opts_t){.cohort = "c"}, "cpu|f:0",
            &(fx_cq_opts_t){.cohort = "c"});
    fx_wl(s, "ns/a0", "qa", 0, 1, "cpu=6", NULL);
    fx_run(s, 0, &out, true);
    sched_cq_status_t st;
    ck_assert_int_eq(sched_cq_status(s, "a", &st, NULL), ERR_OK);
    ck_assert_int_eq(st.weighted_share, 600);
    fx_wl(s, "ns/a1", "qa", 100, 2, "cpu=4", NULL); /* higher priority does not matter */
    fx_wl(s, "ns/b1", "qb", 0, 3, "cpu=4", NULL);
    fx_run(s, 1, &out, true);
    ck_assert_int_eq(fx_state(s, "ns/b1"), SCHED_WL_ADMITTED);
    ck_assert_int_eq(fx_state(s, "ns/a1"), SCHED_WL_PENDING);
}
END_TEST

START_TEST(fair_preemption)
{
    /* a uses the whole cohort (10 of 10, share 1000); b arrives with 4 and reclaimWithinCohort
     * Any: after preempting one of a's 5-cpu workloads, b's share (400) <= a's final share (500):
     * LessThanOrEqualToFinalShare accepts; reason InCohortFairSharing. */
    fx_cohort(s, "c", NULL, "cpu|f:10", NULL);
    fx_pair(s, "cpu|f:0", &(fx_cq_opts_t){.cohort = "c"}, "cpu|f:0",
            &(fx_cq_opts_t){.cohort = "c", .reclaim = PREEMPT_ANY});
    fx_wl(s, "ns/a1", "qa", 0, 1, "cpu=5", NULL);
    fx_run(s, 0, &out, true);
    fx_wl(s, "ns/a2", "qa", 0, 2, "cpu=5", NULL);
    fx_run(s, 1, &out, true);
    sched_decisions_clear(&out);
    fx_wl(s, "ns/b1", "qb", 0, 3, "cpu=4", NULL);
    fx_run(s, 2, &out, true);
    int p = fx_find(&out, SCHED_DECISION_PREEMPT, "ns/a2");
    ck_assert_int_ge(p, 0); /* most recently admitted first */
    ck_assert_int_eq(out.items[p].reason, SCHED_PREEMPT_IN_COHORT_FAIR_SHARING);
    ck_assert_int_eq(fx_state(s, "ns/b1"), SCHED_WL_ADMITTED);
    ck_assert_int_eq(fx_state(s, "ns/a1"), SCHED_WL_ADMITTED);
    /* a2 (5) cannot come back: it would need to preempt b1, and a's share after (1000) is not
     * <= b's final share (0) nor < b's initial share (400) */
    ck_assert_int_eq(fx_state(s, "ns/a2"), SCHED_WL_PENDING);
}
END_TEST

static Suite *suite(void)
{
    Suite *su = suite_create("sched_fair");
    TCase *tc = tcase_create("fair");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, tournament_prefers_lower_share);
    tcase_add_test(tc, fair_preemption);
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
