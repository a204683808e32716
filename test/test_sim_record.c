/* test_sim_record -- summary math on hand-made timelines: percentiles, means, ratios, Jain,
 * integrals of usage and nominal quota, borrowing, waits, GPU time, wait reasons. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "sim/record.h"
#include "sim/stats.h"

#include "oom_wrap.h"

#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define NANO ((qnano_t)1000000000)

/* Return the error of `e` from the enclosing function. */
#define TRY(e)             \
    do {                   \
        err_t rc_ = (e);   \
        if (rc_ != ERR_OK) \
            return rc_;    \
    } while (0)

/* Test shorthands for the calls that cannot fail here (no allocation is made to fail). */
static size_t holder(sim_rec_t *r, const char *name, bool is_cohort)
{
    size_t h = SIM_NONE;
    ck_assert_int_eq(sim_rec_holder(r, name, is_cohort, &h), ERR_OK);
    return h;
}

static size_t wl_add(sim_rec_t *r, const char *name, const char *pclass, int32_t prio, size_t cq,
                     sim_ms_t t)
{
    size_t w = SIM_NONE;
    ck_assert_int_eq(sim_rec_wl_add(r, name, "ns", pclass, prio, cq, t, &w), ERR_OK);
    return w;
}

START_TEST(test_percentile_nearest_rank)
{
    sim_ms_t v[] = {10, 9, 8, 7, 6, 5, 4, 3, 2, 1};
    sim_ms_t one[] = {42};

    sim_stats_sort(v, 10);
    ck_assert_int_eq(v[0], 1);
    ck_assert_int_eq(sim_stats_percentile(v, 10, 50), 5);  /* rank ceil(5.0) = 5 */
    ck_assert_int_eq(sim_stats_percentile(v, 10, 90), 9);  /* rank 9 */
    ck_assert_int_eq(sim_stats_percentile(v, 10, 99), 10); /* rank ceil(9.9) = 10 */
    ck_assert_int_eq(sim_stats_percentile(v, 10, 100), 10);
    ck_assert_int_eq(sim_stats_percentile(v, 10, 1), 1);
    ck_assert_int_eq(sim_stats_percentile(one, 1, 50), 42);
    ck_assert_int_eq(sim_stats_percentile(one, 0, 50), 0);
}
END_TEST

START_TEST(test_mean_rounds_half_away_from_zero)
{
    sim_ms_t a[] = {1, 2};       /* 1.5 -> 2 */
    sim_ms_t b[] = {1, 1, 2};    /* 1.333 -> 1 */
    sim_ms_t c[] = {-1, -2};     /* -1.5 -> -2 */
    sim_ms_t d[] = {1000, 2001}; /* 1500.5 -> 1501 */

    ck_assert_int_eq(sim_stats_mean(a, 2), 2);
    ck_assert_int_eq(sim_stats_mean(b, 3), 1);
    ck_assert_int_eq(sim_stats_mean(c, 2), -2);
    ck_assert_int_eq(sim_stats_mean(d, 2), 1501);
    ck_assert_int_eq(sim_stats_mean(a, 0), 0);
}
END_TEST

START_TEST(test_ratio_format)
{
    char buf[SIM_RATIO_STR_MAX];

    ck_assert_str_eq(sim_ratio_format(2, 3, 4, buf), "0.6667");
    ck_assert_str_eq(sim_ratio_format(1, 2, 4, buf), "0.5");
    ck_assert_str_eq(sim_ratio_format(3, 3, 4, buf), "1");
    ck_assert_str_eq(sim_ratio_format(0, 3, 4, buf), "0");
    ck_assert_str_eq(sim_ratio_format(7, 2, 0, buf), "4");
    ck_assert_str_eq(sim_ratio_format(1, 0, 4, buf), "0");
    ck_assert_str_eq(sim_ratio_format(99995, 100000, 4, buf), "1"); /* 0.99995 rounds up */
    ck_assert_str_eq(sim_ratio_format(5, 100000, 4, buf), "0.0001");
    /* Integrals near 1e34 keep their leading digits. */
    sim_wide_t big = (sim_wide_t)1000000000000000000LL * 10000000000000000LL;
    ck_assert_str_eq(sim_ratio_format(big / 4, big, 4, buf), "0.25");
}
END_TEST

START_TEST(test_jain_index)
{
    long double eq[] = {0.5L, 0.5L, 0.5L}, one[] = {1, 0, 0, 0}, two[] = {1, 3}, zero[] = {0, 0};

    ck_assert(fabs(sim_stats_jain(eq, 3) - 1.0) < 1e-12);
    ck_assert(fabs(sim_stats_jain(one, 4) - 0.25) < 1e-12); /* 1/n */
    ck_assert(fabs(sim_stats_jain(two, 2) - 0.8) < 1e-12);  /* 16 / (2*10) */
    ck_assert(fabs(sim_stats_jain(zero, 2) - 1.0) < 1e-12);
    ck_assert(fabs(sim_stats_jain(one, 0)) < 1e-12);
}
END_TEST

/* One ClusterQueue with nominal cpu 10 on flavor f (and 2 GPUs):
 *   t=0      w1 (4 cpu) admitted; w2 (8 cpu) submitted, waits
 *   t=5s     w2 admitted: usage 12 > nominal 10, borrowing 2
 *   t=10s    w1 finishes
 *   t=15s    w2 finishes
 *   t=20s    end
 * usage integral = 4*10 + 8*10 = 120 cpu-s; nominal integral = 10*20 = 200 cpu-s -> share 0.6;
 * borrowed = 2 * 5 = 10 cpu-s; w2 waited 5 s; w1 used 1 GPU for 10 s. */
static err_t record_basic(sim_rec_t *r, size_t *w1, size_t *w2)
{
    char fname[] = "f", cpu[] = "cpu", gpu[] = "nvidia.com/gpu", mainps[] = "main";
    resource_quota_t rq[] = {{.name = cpu, .nominal = quantity_from_int(10, 0)},
                             {.name = gpu, .nominal = quantity_from_int(2, 0)}};
    flavor_quotas_t fq = {.name = fname, .resources = rq, .nresources = 2};
    resource_group_t g = {.flavors = &fq, .nflavors = 1};
    kv_t fl[] = {{cpu, fname}, {gpu, fname}};
    resource_t u1[] = {{cpu, quantity_from_int(4, 0)}, {gpu, quantity_from_int(1, 0)}};
    resource_t u2[] = {{cpu, quantity_from_int(8, 0)}};
    pod_set_assignment_t a1 = {.name = mainps, .flavors = {fl, 2}, .usage = {u1, 2}};
    pod_set_assignment_t a2 = {.name = mainps, .flavors = {fl, 2}, .usage = {u2, 1}};
    admission_t adm1 = {.assignments = &a1, .nassignments = 1};
    admission_t adm2 = {.assignments = &a2, .nassignments = 1};
    size_t cq;

    TRY(sim_rec_holder(r, "cq-a", false, &cq));
    TRY(sim_rec_set_quotas(r, cq, &g, 1, 0));
    TRY(sim_rec_wl_add(r, "ns/w1", "ns", "high", 100, cq, 0, w1));
    TRY(sim_rec_wl_add(r, "ns/w2", "ns", "", 0, cq, 0, w2));
    TRY(sim_rec_wl_admit(r, *w1, cq, &adm1, 0));
    TRY(sim_rec_wl_reason(r, *w2,
                          "insufficient quota for cpu in flavor f: requested 8, available 6", 0));
    TRY(sim_rec_wl_admit(r, *w2, cq, &adm2, 5000));
    TRY(sim_rec_wl_leave(r, *w1, SIM_WL_FINISHED, 10000));
    TRY(sim_rec_wl_leave(r, *w2, SIM_WL_FINISHED, 15000));
    sim_rec_end(r, 20000);
    return ERR_OK;
}

static void build_basic(sim_rec_t *r, size_t *w1, size_t *w2)
{
    sim_rec_init(r);
    ck_assert_int_eq(record_basic(r, w1, w2), ERR_OK);
    ck_assert_uint_eq(r->nholders, 1);
}

/* Each allocation of recording the basic timeline fails in turn: the call that met it says
 * ERR_NOMEM and the incomplete record still finalises without a leak (ASan). */
START_TEST(test_record_allocation_failures)
{
    long n;

    for (n = 1;; n++) {
        sim_rec_t r;
        size_t w1, w2;
        long made;
        err_t rc;

        sim_rec_init(&r);
        oom_fail_at(n);
        rc = record_basic(&r, &w1, &w2);
        made = oom_count();
        oom_fail_at(0);
        sim_rec_fini(&r);
        if (made < n) {
            ck_assert_int_eq(rc, ERR_OK);
            break;
        }
        ck_assert_msg(rc == ERR_NOMEM, "allocation %ld: %s", n, err_str(rc));
    }
    ck_assert_int_gt(n, 10);
}
END_TEST

START_TEST(test_record_integrals_and_borrowing)
{
    sim_rec_t r;
    size_t w1, w2;
    char buf[SIM_RATIO_STR_MAX];

    build_basic(&r, &w1, &w2);
    const sim_holder_t *h = &r.holders[0];
    ck_assert_uint_eq(h->nfrs, 2);
    const sim_fr_rec_t *cpu = &h->frs[0];
    ck_assert_str_eq(cpu->flavor, "f");
    ck_assert_str_eq(cpu->resource, "cpu");
    ck_assert(cpu->usage_int == (sim_wide_t)120000 * NANO);
    ck_assert(cpu->nominal_int == (sim_wide_t)200000 * NANO);
    ck_assert(cpu->borrowed_int == (sim_wide_t)10000 * NANO);
    ck_assert(cpu->peak == 12 * NANO);
    ck_assert(cpu->usage == 0);
    ck_assert_str_eq(sim_ratio_format(cpu->usage_int, cpu->nominal_int, 4, buf), "0.6");
    ck_assert_uint_eq(h->admissions, 2);
    ck_assert_uint_eq(h->finished, 2);
    ck_assert_int_eq(h->pending, 0);
    /* Global (flavor, resource) totals follow the ClusterQueue's. */
    ck_assert_uint_eq(r.ngfrs, 2);
    ck_assert(r.gfrs[0].usage_int == cpu->usage_int);
    ck_assert(r.gfrs[0].nominal_int == cpu->nominal_int);
    ck_assert(sim_series_at(&r.gfrs[0].usage_series, 7000) == 12 * NANO);
    ck_assert(sim_series_at(&r.gfrs[0].usage_series, 12000) == 8 * NANO);
    ck_assert(sim_series_at(&r.gfrs[0].usage_series, 16000) == 0);
    /* Workloads. */
    ck_assert_int_eq(r.wls[w1].wait, 0);
    ck_assert_int_eq(r.wls[w2].wait, 5000);
    ck_assert_int_eq(r.wls[w2].first_admit, 5000);
    ck_assert_int_eq(r.wls[w2].finish, 15000);
    ck_assert(r.wls[w1].gpu_nano_ms == (sim_wide_t)10000 * NANO);
    ck_assert(h->gpu_nano_ms == (sim_wide_t)10000 * NANO);
    /* The pending series: 1 pending from 0 to 5 s. */
    ck_assert(sim_series_at(&h->pending_series, 0) == 1);
    ck_assert(sim_series_at(&h->pending_series, 5000) == 0);
    /* The wait reason, with its numbers normalised. */
    ck_assert_uint_eq(r.nreasons, 1);
    ck_assert_str_eq(r.reasons[0].text,
                     "insufficient quota for cpu in flavor f: requested N, available N");
    ck_assert_int_eq(r.reasons[0].total, 5000);
    ck_assert_uint_eq(r.reasons[0].waits, 1);
    ck_assert_uint_eq(sim_rec_wl_find(&r, "ns/w2"), w2);
    ck_assert_uint_eq(sim_rec_wl_find(&r, "ns/none"), SIM_NONE);
    sim_rec_fini(&r);
}
END_TEST

START_TEST(test_record_preemption_and_quota_change)
{
    sim_rec_t r;
    char fname[] = "f", cpu[] = "cpu", mainps[] = "main";
    resource_quota_t rq = {.name = cpu, .nominal = quantity_from_int(10, 0)};
    flavor_quotas_t fq = {.name = fname, .resources = &rq, .nresources = 1};
    resource_group_t g = {.flavors = &fq, .nflavors = 1};
    kv_t fl[] = {{cpu, fname}};
    resource_t u[] = {{cpu, quantity_from_int(10, 0)}};
    pod_set_assignment_t a = {.name = mainps, .flavors = {fl, 1}, .usage = {u, 1}};
    admission_t adm = {.assignments = &a, .nassignments = 1};
    size_t cq, lo, hi;

    sim_rec_init(&r);
    cq = holder(&r, "cq", false);
    ck_assert_uint_eq(holder(&r, "cq", true), 1); /* a cohort of the same name */
    ck_assert_uint_eq(holder(&r, "cq", false), cq);
    ck_assert_int_eq(sim_rec_set_quotas(&r, SIM_NONE, &g, 1, 0), ERR_INVALID);
    sim_rec_set_quotas(&r, cq, &g, 1, 0);
    lo = wl_add(&r, "ns/lo", "", 0, cq, 0);
    sim_rec_wl_admit(&r, lo, cq, &adm, 0);
    hi = wl_add(&r, "ns/hi", "urgent", 1000, cq, 1000);
    ck_assert_int_eq(sim_rec_wl_preempt(&r, lo, hi, "InClusterQueue", 1000), ERR_OK);
    ck_assert_int_eq(sim_rec_wl_preempt(&r, lo, hi, "InClusterQueue", 1000), ERR_INVALID);
    sim_rec_wl_admit(&r, hi, cq, &adm, 1000);
    /* Quota cut to 5 at t=2s: the running workload keeps its 10, which now counts as borrowed. */
    rq.nominal = quantity_from_int(5, 0);
    sim_rec_set_quotas(&r, cq, &g, 1, 2000);
    ck_assert_int_eq(sim_rec_wl_leave(&r, hi, SIM_WL_DELETED, 3000), ERR_OK);
    ck_assert_int_eq(sim_rec_wl_leave(&r, lo, SIM_WL_DEACTIVATED, 3500), ERR_OK);
    /* already gone: ignored */
    ck_assert_int_eq(sim_rec_wl_leave(&r, lo, SIM_WL_FINISHED, 3600), ERR_OK);
    sim_rec_end(&r, 4000);

    const sim_fr_rec_t *fr = &r.holders[cq].frs[0];
    ck_assert(fr->usage_int == (sim_wide_t)(10 * 1000 + 10 * 2000) * NANO);
    ck_assert(fr->nominal_int == (sim_wide_t)(10 * 2000 + 5 * 2000) * NANO);
    ck_assert(fr->borrowed_int == (sim_wide_t)(5 * 1000) * NANO);
    ck_assert_uint_eq(r.npreemptions, 1);
    ck_assert_uint_eq(r.preemptions[0].victim, lo);
    ck_assert_uint_eq(r.preemptions[0].preemptor, hi);
    ck_assert_str_eq(r.preemptions[0].reason, "InClusterQueue");
    ck_assert_uint_eq(r.wls[lo].preemptions, 1);
    ck_assert_int_eq(r.wls[lo].wait, 2500); /* pending from 1 s until deactivated at 3.5 s */
    ck_assert_int_eq(r.wls[lo].state, SIM_WL_DEACTIVATED);
    ck_assert_int_eq(r.wls[lo].finish, -1);
    ck_assert_int_eq(r.wls[hi].left, 3000);
    ck_assert_uint_eq(r.holders[cq].preemptions, 1);
    ck_assert_uint_eq(r.holders[cq].deleted, 1);
    ck_assert_uint_eq(r.holders[cq].deactivated, 1);
    ck_assert_int_eq(r.holders[cq].pending, 0);
    ck_assert(sim_series_at(&r.gfrs[0].nominal_series, 1999) == 10 * NANO);
    ck_assert(sim_series_at(&r.gfrs[0].nominal_series, 2000) == 5 * NANO);
    sim_rec_fini(&r);
}
END_TEST

START_TEST(test_record_still_pending_at_end)
{
    sim_rec_t r;
    size_t cq, w;

    sim_rec_init(&r);
    cq = holder(&r, "cq", false);
    w = wl_add(&r, "ns/w", "", 0, cq, 1000);
    sim_rec_wl_reason(&r, w, "a 1", 1000);
    sim_rec_wl_reason(&r, w, "a 2", 2000); /* same normalised text: no new wait */
    sim_rec_wl_reason(&r, w, "b", 3000);
    ck_assert_int_eq(sim_rec_wl_retarget(&r, w, holder(&r, "other", false), 3500), ERR_OK);
    sim_rec_end(&r, 6000);
    sim_rec_end(&r, 9000); /* only the first end counts */
    ck_assert_int_eq(r.wls[w].wait, 5000);
    ck_assert_uint_eq(r.nreasons, 2);
    ck_assert_int_eq(r.reasons[0].total, 2000);
    ck_assert_int_eq(r.reasons[1].total, 3000);
    ck_assert_int_eq(r.holders[cq].pending, 0);
    ck_assert_int_eq(r.holders[1].pending, 1);
    sim_rec_fini(&r);
}
END_TEST

START_TEST(test_reason_normalize_and_gpu_names)
{
    static const char *const cases[][2] = {
        {"requested 8, available 2 (nominal 16, used 14, borrowing limit 0)",
         "requested N, available N (nominal N, used N, borrowing limit N)"},
        {"flavor h100 and a100 in cq-2", "flavor h100 and a100 in cq-2"},
        {"1500m more needed; 2Gi; 1e3; -3 and 4.5.", "N more needed; N; N; N and N."},
        {"", ""},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char *n = sim_reason_normalize(cases[i][0]);
        ck_assert_str_eq(n, cases[i][1]);
        free(n);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("sim_record");
    TCase *tc = tcase_create("core");
    SRunner *sr;
    int failed;

    tcase_add_test(tc, test_percentile_nearest_rank);
    tcase_add_test(tc, test_mean_rounds_half_away_from_zero);
    tcase_add_test(tc, test_ratio_format);
    tcase_add_test(tc, test_jain_index);
    tcase_add_test(tc, test_record_integrals_and_borrowing);
    tcase_add_test(tc, test_record_preemption_and_quota_change);
    tcase_add_test(tc, test_record_still_pending_at_end);
    tcase_add_test(tc, test_record_allocation_failures);
    tcase_add_test(tc, test_reason_normalize_and_gpu_names);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
