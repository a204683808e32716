/* test_sched_assign -- flavor assignment: order, fungibility, taints, affinity, partial admission.
 */
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
}

static void teardown(void)
{
    sched_decisions_fini(&out);
    sched_free(s);
}

START_TEST(first_flavor_that_fits)
{
    fx_flavor(s, "on-demand", NULL, NULL);
    fx_flavor(s, "spot", NULL, NULL);
    fx_cq(s, "cq", "cpu,memory|on-demand:4,8Gi|spot:8,16Gi", NULL);
    fx_lq(s, "ns", "q", "cq", STOP_POLICY_NONE);
    fx_wl(s, "ns/a", "q", 0, 1, "cpu=3,memory=2Gi", NULL);
    fx_wl(s, "ns/b", "q", 0, 2, "cpu=3,memory=2Gi", NULL);
    fx_run(s, 0, &out, true);
    /* a takes on-demand; b does not fit there any more and goes to spot; one flavor per group */
    ck_assert_str_eq(fx_flavor_of(s, "ns/a", "cpu"), "on-demand");
    ck_assert_str_eq(fx_flavor_of(s, "ns/a", "memory"), "on-demand");
    ck_assert_str_eq(fx_flavor_of(s, "ns/b", "cpu"), "spot");
    ck_assert_str_eq(fx_flavor_of(s, "ns/b", "memory"), "spot");
    ck_assert_int_eq(fx_usage(s, "cq", "spot", "cpu"), 3);
    int i = fx_find(&out, SCHED_DECISION_ADMIT, "ns/b");
    ck_assert_int_ge(i, 0);
    ck_assert_uint_eq(out.items[i].admission.nassignments, 1);
    ck_assert_int_eq(out.items[i].admission.assignments[0].count, 1);
    ck_assert_uint_eq(out.items[i].admission.assignments[0].usage.len, 2);
}
END_TEST

START_TEST(taints_and_affinity)
{
    fx_flavor(s, "gpu-a", "pool=a", "nvidia.com/gpu=present:NoSchedule");
    fx_flavor(s, "gpu-b", "pool=b", NULL);
    fx_cq(s, "cq", "cpu|gpu-a:10|gpu-b:10", NULL);
    fx_lq(s, "ns", "q", "cq", STOP_POLICY_NONE);
    /* no toleration: the tainted flavor is skipped */
    fx_wl(s, "ns/plain", "q", 0, 1, "cpu=1", NULL);
    /* tolerates the taint: first flavor */
    fx_wl(s, "ns/tol", "q", 0, 2, "cpu=1",
          &(fx_wl_opts_t){.tolerations = "nvidia.com/gpu=present:NoSchedule"});
    /* nodeSelector pool=b: only gpu-b matches even with the toleration */
    fx_wl(s, "ns/sel", "q", 0, 3, "cpu=1",
          &(fx_wl_opts_t){.tolerations = "nvidia.com/gpu:NoSchedule", .node_selector = "pool=b"});
    /* nodeSelector on a key no flavor defines is ignored */
    fx_wl(s, "ns/other", "q", 0, 4, "cpu=1",
          &(fx_wl_opts_t){.tolerations = "nvidia.com/gpu:NoSchedule", .node_selector = "zone=x"});
    /* pool=c matches nothing */
    fx_wl(s, "ns/none", "q", 0, 5, "cpu=1", &(fx_wl_opts_t){.node_selector = "pool=c"});
    fx_run(s, 0, &out, true);
    ck_assert_str_eq(fx_flavor_of(s, "ns/plain", "cpu"), "gpu-b");
    ck_assert_str_eq(fx_flavor_of(s, "ns/tol", "cpu"), "gpu-a");
    ck_assert_str_eq(fx_flavor_of(s, "ns/sel", "cpu"), "gpu-b");
    ck_assert_str_eq(fx_flavor_of(s, "ns/other", "cpu"), "gpu-a");
    ck_assert_int_eq(fx_state(s, "ns/none"), SCHED_WL_PENDING);
    ck_assert_int_eq(fx_reason(s, "ns/none"), SCHED_REASON_NO_MATCHING_FLAVOR);
    ck_assert_str_eq(fx_message(s, "ns/none"),
                     "couldn't assign flavors to pod set main: flavor gpu-b doesn't match node "
                     "affinity, untolerated taint nvidia.com/gpu=present:NoSchedule in flavor "
                     "gpu-a"); /* taints are checked before affinity; reasons sorted */
}
END_TEST

START_TEST(resource_not_covered)
{
    fx_flavor(s, "f", NULL, NULL);
    fx_cq(s, "cq", "cpu|f:10", NULL);
    fx_lq(s, "ns", "q", "cq", STOP_POLICY_NONE);
    fx_wl(s, "ns/gpu", "q", 0, 1, "cpu=1,nvidia.com/gpu=1", NULL);
    fx_wl(s, "ns/zero", "q", 0, 2, "cpu=1,nvidia.com/gpu=0", NULL);
    fx_run(s, 0, &out, true);
    ck_assert_int_eq(fx_state(s, "ns/gpu"), SCHED_WL_PENDING);
    ck_assert_str_eq(fx_message(s, "ns/gpu"), "couldn't assign flavors to pod set main: resource "
                                              "nvidia.com/gpu unavailable in ClusterQueue");
    ck_assert_int_eq(fx_state(s, "ns/zero"), SCHED_WL_ADMITTED);
}
END_TEST

START_TEST(borrow_vs_next_flavor)
{
    /* whenCanBorrow MayStopSearch (default): borrow in the first flavor;
     * TryNextFlavor: prefer a later flavor that fits without borrowing */
    fx_flavor(s, "x", NULL, NULL);
    fx_flavor(s, "y", NULL, NULL);
    fx_cq(s, "lender", "cpu|x:10|y:0", &(fx_cq_opts_t){.cohort = "c"});
    fx_cq(s, "stop", "cpu|x:1|y:10", &(fx_cq_opts_t){.cohort = "c"});
    fx_cq(s, "next", "cpu|x:1|y:10", &(fx_cq_opts_t){.cohort = "c", .try_next_on_borrow = true});
    fx_lq(s, "ns", "qs", "stop", STOP_POLICY_NONE);
    fx_lq(s, "ns", "qn", "next", STOP_POLICY_NONE);
    fx_wl(s, "ns/s", "qs", 0, 1, "cpu=3", NULL);
    fx_wl(s, "ns/n", "qn", 0, 1, "cpu=3", NULL);
    fx_run(s, 0, &out, true);
    ck_assert_str_eq(fx_flavor_of(s, "ns/s", "cpu"), "x");
    ck_assert_str_eq(fx_flavor_of(s, "ns/n", "cpu"), "y");
    ck_assert(out.items[fx_find(&out, SCHED_DECISION_ADMIT, "ns/s")].borrowing);
    ck_assert(!out.items[fx_find(&out, SCHED_DECISION_ADMIT, "ns/n")].borrowing);
}
END_TEST

START_TEST(partial_admission)
{
    fx_flavor(s, "f", NULL, NULL);
    fx_cq(s, "cq", "cpu|f:10", NULL);
    fx_lq(s, "ns", "q", "cq", STOP_POLICY_NONE);
    fx_wl(s, "ns/hog", "q", 10, 1, "cpu=3", NULL);
    /* 10 pods of 1 cpu, minCount 4: 7 cpu are left, so the largest count that fits is 7 */
    fx_wl(s, "ns/elastic", "q", 0, 2, "cpu=1", &(fx_wl_opts_t){.count = 10, .min_count = 4});
    /* minCount 9 cannot be met */
    fx_wl(s, "ns/rigid", "q", 0, 3, "cpu=1", &(fx_wl_opts_t){.count = 10, .min_count = 9});
    fx_run(s, 0, &out, true);
    int i = fx_find(&out, SCHED_DECISION_ADMIT, "ns/elastic");
    ck_assert_int_ge(i, 0);
    ck_assert_int_eq(out.items[i].admission.assignments[0].count, 7);
    ck_assert_int_eq(fx_usage(s, "cq", "f", "cpu"), 10);
    ck_assert_int_eq(fx_state(s, "ns/rigid"), SCHED_WL_PENDING);
}
END_TEST

START_TEST(multiple_podsets_share_quota)
{
    fx_flavor(s, "f", NULL, NULL);
    fx_cq(s, "cq", "cpu|f:5", NULL);
    fx_lq(s, "ns", "q", "cq", STOP_POLICY_NONE);
    /* driver 1 cpu + 2 workers x 2 cpu = 5: fits exactly */
    fx_wl(s, "ns/job", "q", 0, 1, "cpu=1", &(fx_wl_opts_t){.podsets = "workers:2:cpu=2"});
    /* 1 + 3x2 = 7 > 5: earlier podsets count against later ones */
    fx_wl(s, "ns/big", "q", 0, 2, "cpu=1", &(fx_wl_opts_t){.podsets = "workers:3:cpu=2"});
    fx_run(s, 0, &out, true);
    ck_assert_int_eq(fx_state(s, "ns/job"), SCHED_WL_ADMITTED);
    ck_assert_int_eq(fx_usage(s, "cq", "f", "cpu"), 5);
    ck_assert_int_eq(fx_state(s, "ns/big"), SCHED_WL_PENDING);
    ck_assert_int_eq(fx_reason(s, "ns/big"), SCHED_REASON_EXCEEDS_MAX_QUOTA);
}
END_TEST

START_TEST(missing_flavor_inactive)
{
    fx_cq(s, "cq", "cpu|ghost:5", NULL);
    fx_lq(s, "ns", "q", "cq", STOP_POLICY_NONE);
    fx_wl(s, "ns/w", "q", 0, 1, "cpu=1", NULL);
    fx_run(s, 0, &out, true);
    sched_cq_status_t st;
    ck_assert_int_eq(sched_cq_status(s, "cq", &st, NULL), ERR_OK);
    ck_assert(!st.active);
    ck_assert_int_eq(st.reason, SCHED_CQ_FLAVOR_NOT_FOUND);
    ck_assert_str_eq(st.message,
                     "Can't admit new workloads: references missing ResourceFlavor(s): ghost.");
    ck_assert_int_eq(fx_reason(s, "ns/w"), SCHED_REASON_SUSPENDED);
    fx_flavor(s, "ghost", NULL, NULL);
    fx_run(s, 1, &out, true);
    ck_assert_int_eq(fx_state(s, "ns/w"), SCHED_WL_ADMITTED);
}
END_TEST

static Suite *suite(void)
{
    Suite *su = suite_create("sched_assign");
    TCase *tc = tcase_create("assign");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, first_flavor_that_fits);
    tcase_add_test(tc, taints_and_affinity);
    tcase_add_test(tc, resource_not_covered);
    tcase_add_test(tc, borrow_vs_next_flavor);
    tcase_add_test(tc, partial_admission);
    tcase_add_test(tc, multiple_podsets_share_quota);
    tcase_add_test(tc, missing_flavor_inactive);
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
