/* test_verify -- the invariant checker: each rule broken once by a hand-made history, and kept. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "verify/verify.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

static verify_t *v;

static void setup(void)
{
    v = verify_new();
    ck_assert_ptr_nonnull(v);
}

static void teardown(void)
{
    verify_free(v);
}

/* ClusterQueue `name` in `cohort` (NULL: none) with flavor "f", resource "gpu": nominal `nom`,
 * borrowingLimit `bl` and lendingLimit `ll` (-1: unset). */
static void cq(const char *name, const char *cohort, int nom, int bl, int ll)
{
    resource_quota_t rq = {.name = (char *)"gpu",
                           .nominal = quantity_from_int(nom, QUANTITY_DECIMAL_SI),
                           .has_borrowing_limit = bl >= 0,
                           .borrowing_limit = quantity_from_int(bl, QUANTITY_DECIMAL_SI),
                           .has_lending_limit = ll >= 0,
                           .lending_limit = quantity_from_int(ll, QUANTITY_DECIMAL_SI)};
    flavor_quotas_t fq = {.name = (char *)"f", .resources = &rq, .nresources = 1};
    char *cov[1] = {(char *)"gpu"};
    resource_group_t rg = {.covered = cov, .ncovered = 1, .flavors = &fq, .nflavors = 1};
    cluster_queue_t q;
    err_msg_t m;

    memset(&q, 0, sizeof(q));
    q.meta.name = (char *)name;
    q.groups = &rg;
    q.ngroups = 1;
    q.cohort = (char *)cohort;
    ck_assert_int_eq(verify_cluster_queue(v, &q, &m), ERR_OK);
}

/* Admit `key` into `queue` holding `gpus` of flavor "f" (and 1 cpu without a flavor, which holds
 * no quota); the checker's answer, its message in `why`. */
static err_t admit(const char *key, const char *queue, int gpus, err_msg_t *why)
{
    resource_t use[2] = {
        {.name = (char *)"cpu", .value = quantity_from_int(1, QUANTITY_DECIMAL_SI)},
        {.name = (char *)"gpu", .value = quantity_from_int(gpus, QUANTITY_DECIMAL_SI)}};
    kv_t fl = {.key = (char *)"gpu", .value = (char *)"f"};
    pod_set_assignment_t ps = {.name = (char *)"main",
                               .flavors = {.items = &fl, .len = 1},
                               .usage = {.items = use, .len = 2}};
    admission_t adm = {.cluster_queue = (char *)queue, .assignments = &ps, .nassignments = 1};

    memset(why, 0, sizeof(*why));
    return verify_admit(v, 61500, key, &adm, why);
}

static void release(const char *key, bool finished)
{
    err_msg_t m;
    ck_assert_int_eq(verify_release(v, 0, key, finished, &m), ERR_OK);
}

START_TEST(lone_queue_holds_its_nominal_quota)
{
    err_msg_t m;
    cq("gpu", NULL, 4, -1, -1);
    ck_assert_int_eq(admit("ns/a", "gpu", 2, &m), ERR_OK);
    ck_assert_int_eq(admit("ns/b", "gpu", 2, &m), ERR_OK);
    ck_assert_int_eq(admit("ns/c", "gpu", 1, &m), ERR_INVALID);
    ck_assert_str_eq(m.text, "t=61.500s: admitting Workload ns/c into ClusterQueue gpu puts "
                             "ClusterQueue gpu f/gpu at 5, above nominalQuota (4)");
    ck_assert(!verify_holds(v, "ns/c")); /* a refused admission is not recorded */
    release("ns/a", false);
    ck_assert_int_eq(admit("ns/c", "gpu", 1, &m), ERR_OK);
    ck_assert_uint_eq(verify_admissions(v), 3);
}
END_TEST

START_TEST(no_second_admission_without_a_release)
{
    err_msg_t m;
    cq("gpu", NULL, 8, -1, -1);
    ck_assert_int_eq(admit("ns/a", "gpu", 1, &m), ERR_OK);
    ck_assert_int_eq(admit("ns/a", "gpu", 1, &m), ERR_INVALID);
    ck_assert_ptr_nonnull(strstr(m.text, "while it still holds quota in gpu"));
    release("ns/a", false); /* preempted: may come back */
    ck_assert_int_eq(admit("ns/a", "gpu", 1, &m), ERR_OK);
    release("ns/a", true);
    ck_assert_int_eq(admit("ns/a", "gpu", 1, &m), ERR_INVALID);
    ck_assert_ptr_nonnull(strstr(m.text, "admitted after it finished"));
    release("ns/never-admitted", false); /* a pending workload deleted */
    ck_assert(!verify_holds(v, "ns/never-admitted"));
}
END_TEST

/* Kueue's ReclaimablePods: a Job of 4 pods x 1 GPU (admitted with count 4) reports 2 pods done
 * for good: it holds 2 GPUs, so another 2 fit; a report that shrinks nothing changes nothing. */
START_TEST(reclaimable_pods_give_quota_back)
{
    resource_t use = {.name = (char *)"gpu", .value = quantity_from_int(4, QUANTITY_DECIMAL_SI)};
    kv_t fl = {.key = (char *)"gpu", .value = (char *)"f"};
    pod_set_assignment_t psa = {.name = (char *)"main",
                                .flavors = {.items = &fl, .len = 1},
                                .usage = {.items = &use, .len = 1},
                                .has_count = true,
                                .count = 4};
    admission_t adm = {.cluster_queue = (char *)"gpu", .assignments = &psa, .nassignments = 1};
    pod_set_t ps = {.name = (char *)"main", .count = 4};
    reclaimable_pod_t rp = {.name = (char *)"main", .count = 2};
    workload_t wl;
    err_msg_t m;

    memset(&wl, 0, sizeof(wl));
    wl.pod_sets = &ps;
    wl.npod_sets = 1;
    wl.admission = &adm;
    cq("gpu", NULL, 4, -1, -1);
    ck_assert_int_eq(verify_admit(v, 0, "ns/job", &adm, &m), ERR_OK);
    ck_assert_int_eq(verify_reclaim(v, "ns/job", &wl, &m), ERR_OK); /* none reported */
    ck_assert_int_eq(admit("ns/b", "gpu", 2, &m), ERR_INVALID);
    wl.reclaimable_pods = &rp;
    wl.nreclaimable_pods = 1;
    ck_assert_int_eq(verify_reclaim(v, "ns/job", &wl, &m), ERR_OK);
    ck_assert_int_eq(verify_reclaim(v, "ns/job", &wl, &m), ERR_OK);
    ck_assert_int_eq(admit("ns/b", "gpu", 2, &m), ERR_OK);
    ck_assert_int_eq(admit("ns/c", "gpu", 1, &m), ERR_INVALID);
    release("ns/job", true);
    ck_assert_int_eq(admit("ns/c", "gpu", 2, &m), ERR_OK);
}
END_TEST

START_TEST(cohort_lends_what_its_members_do_not_use)
{
    err_msg_t m;
    cq("a", "co", 4, -1, -1);
    cq("b", "co", 4, -1, -1); /* the cohort itself is never declared: implicit */
    ck_assert_int_eq(admit("ns/x", "a", 6, &m), ERR_OK); /* borrows 2 of b's */
    ck_assert_int_eq(admit("ns/y", "b", 3, &m), ERR_INVALID);
    ck_assert_str_eq(m.text, "t=61.500s: admitting Workload ns/y into ClusterQueue b puts Cohort "
                             "co f/gpu at 9, above the cohort tree's quota (8)");
    ck_assert_int_eq(admit("ns/y", "b", 2, &m), ERR_OK);
}
END_TEST

START_TEST(borrowing_limit_caps_a_queue)
{
    err_msg_t m;
    cq("a", "co", 4, 1, -1);
    cq("b", "co", 4, -1, -1);
    ck_assert_int_eq(admit("ns/x", "a", 5, &m), ERR_OK);
    ck_assert_int_eq(admit("ns/y", "a", 1, &m), ERR_INVALID);
    ck_assert_ptr_nonnull(strstr(m.text, "ClusterQueue a f/gpu at 6, above subtree quota + "
                                         "borrowingLimit (5)"));
}
END_TEST

START_TEST(lending_limit_keeps_the_rest_for_its_owner)
{
    err_msg_t m;
    cq("a", "co", 4, -1, -1);
    cq("b", "co", 4, -1, 1); /* b lends at most 1: 3 are b's alone */
    ck_assert_int_eq(admit("ns/x", "a", 6, &m), ERR_INVALID); /* 4 + 1 lendable */
    ck_assert_int_eq(admit("ns/x", "a", 5, &m), ERR_OK);
    ck_assert_int_eq(admit("ns/y", "b", 3, &m), ERR_OK);      /* the guaranteed part */
    ck_assert_int_eq(admit("ns/z", "b", 1, &m), ERR_INVALID); /* its 4th was lent to a */
    ck_assert_ptr_nonnull(
        strstr(m.text, "Cohort co f/gpu at 6, above the cohort tree's quota (5)"));
}
END_TEST

START_TEST(lowered_quota_blocks_only_new_admissions)
{
    err_msg_t m;
    cq("gpu", NULL, 4, -1, -1);
    ck_assert_int_eq(admit("ns/a", "gpu", 2, &m), ERR_OK);
    ck_assert_int_eq(admit("ns/b", "gpu", 2, &m), ERR_OK);
    cq("gpu", NULL, 2, -1, -1); /* lowered: nobody is evicted for it, as in Kueue */
    ck_assert_int_eq(admit("ns/c", "gpu", 1, &m), ERR_INVALID);
    release("ns/a", false);
    ck_assert_int_eq(admit("ns/c", "gpu", 1, &m), ERR_INVALID); /* 3 > 2 */
    release("ns/b", false);
    ck_assert_int_eq(admit("ns/c", "gpu", 1, &m), ERR_OK);
}
END_TEST

START_TEST(unknown_queue_holds_nothing)
{
    err_msg_t m;
    ck_assert_int_eq(admit("ns/a", "nowhere", 1, &m), ERR_INVALID);
    ck_assert_ptr_nonnull(strstr(m.text, "above nominalQuota (0)"));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("verify");
    TCase *tc = tcase_create("rules");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, lone_queue_holds_its_nominal_quota);
    tcase_add_test(tc, reclaimable_pods_give_quota_back);
    tcase_add_test(tc, no_second_admission_without_a_release);
    tcase_add_test(tc, cohort_lends_what_its_members_do_not_use);
    tcase_add_test(tc, borrowing_limit_caps_a_queue);
    tcase_add_test(tc, lending_limit_keeps_the_rest_for_its_owner);
    tcase_add_test(tc, lowered_quota_blocks_only_new_admissions);
    tcase_add_test(tc, unknown_queue_holds_nothing);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
