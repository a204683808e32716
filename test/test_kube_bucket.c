/* test_kube_bucket -- token bucket math with an injected clock. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "kube/bucket.h"

#include <check.h>
#include <stdlib.h>

START_TEST(test_burst_then_paced)
{
    kube_bucket_t b;

    kube_bucket_init(&b, 5000, 3, 1000); /* 5 QPS, burst 3 */
    ck_assert_uint_eq(kube_bucket_take(&b, 1000), 0);
    ck_assert_uint_eq(kube_bucket_take(&b, 1000), 0);
    ck_assert_uint_eq(kube_bucket_take(&b, 1000), 0);
    ck_assert_uint_eq(kube_bucket_take(&b, 1000), 200); /* one token per 200 ms */
    ck_assert_uint_eq(kube_bucket_take(&b, 1150), 50);
    ck_assert_uint_eq(kube_bucket_take(&b, 1200), 0);
    ck_assert_uint_eq(kube_bucket_take(&b, 1200), 200);
    /* A long idle period refills to the burst, not beyond. */
    ck_assert_uint_eq(kube_bucket_take(&b, 1000000), 0);
    ck_assert_uint_eq(kube_bucket_take(&b, 1000000), 0);
    ck_assert_uint_eq(kube_bucket_take(&b, 1000000), 0);
    ck_assert_uint_eq(kube_bucket_take(&b, 1000000), 200);
}
END_TEST

START_TEST(test_fractional_qps_is_exact)
{
    kube_bucket_t b;
    uint64_t now = 0, taken = 0;

    kube_bucket_init(&b, 1500, 2, 0); /* 1.5 QPS: 2 tokens every 1333.3 ms */
    ck_assert_uint_eq(kube_bucket_take(&b, 0), 0);
    ck_assert_uint_eq(kube_bucket_take(&b, 0), 0);
    ck_assert_uint_eq(kube_bucket_take(&b, 0), 667); /* ceil(1e6 / 1500) */
    /* Over 60 s exactly 90 more tokens are handed out, no drift from rounding (the bucket never
     * fills up here, so nothing is lost to the cap). */
    for (now = 1; now <= 60000; now++) {
        if (kube_bucket_take(&b, now) == 0)
            taken++;
    }
    ck_assert_uint_eq(taken, 90);
}
END_TEST

START_TEST(test_unlimited_and_clock_step_back)
{
    kube_bucket_t b;

    kube_bucket_init(&b, 0, 1, 0);
    for (int i = 0; i < 1000; i++)
        ck_assert_uint_eq(kube_bucket_take(&b, 0), 0);
    kube_bucket_init(&b, 1000, 0, 500); /* burst 0 is 1 */
    ck_assert_uint_eq(kube_bucket_take(&b, 500), 0);
    ck_assert_uint_eq(kube_bucket_take(&b, 400), 1000); /* earlier time adds nothing */
    ck_assert_uint_eq(kube_bucket_take(&b, 1500), 0);
}
END_TEST

START_TEST(test_huge_rates_do_not_overflow)
{
    kube_bucket_t b;

    kube_bucket_init(&b, UINT64_MAX / 2, 1000, 0);
    for (int i = 0; i < 1000; i++)
        ck_assert_uint_eq(kube_bucket_take(&b, 0), 0);
    ck_assert_uint_eq(kube_bucket_take(&b, 0), 1);
    ck_assert_uint_eq(kube_bucket_take(&b, UINT64_MAX), 0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("kube_bucket");
    TCase *tc = tcase_create("core");
    SRunner *sr;
    int failed;

    tcase_add_test(tc, test_burst_then_paced);
    tcase_add_test(tc, test_fractional_qps_is_exact);
    tcase_add_test(tc, test_unlimited_and_clock_step_back);
    tcase_add_test(tc, test_huge_rates_do_not_overflow);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
