/* test_kube_backoff -- exponential backoff sequence and seeded jitter. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "kube/backoff.h"

#include <check.h>
#include <stdlib.h>

START_TEST(test_doubling_capped_without_jitter)
{
    static const uint64_t want[] = {800, 1600, 3200, 6400, 12800, 25600, 30000, 30000};
    kube_backoff_t b;

    kube_backoff_init(&b, 800, 30000, 0, 42);
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
        ck_assert_uint_eq(kube_backoff_next(&b), want[i]);
    kube_backoff_reset(&b);
    ck_assert_uint_eq(kube_backoff_next(&b), 800);
}
END_TEST

START_TEST(test_jitter_bounded_and_seeded)
{
    kube_backoff_t a, b, c;
    int differs = 0;

    kube_backoff_init(&a, 1000, 8000, 50, 7);
    kube_backoff_init(&b, 1000, 8000, 50, 7);
    kube_backoff_init(&c, 1000, 8000, 50, 8);
    for (int i = 0; i < 200; i++) {
        uint64_t base = i == 0 ? 1000 : i == 1 ? 2000 : i == 2 ? 4000 : 8000;
        uint64_t da = kube_backoff_next(&a), db = kube_backoff_next(&b), dc = kube_backoff_next(&c);

        ck_assert_uint_eq(da, db); /* same seed, same sequence */
        ck_assert_uint_ge(da, base);
        ck_assert_uint_le(da, base + base / 2);
        ck_assert_uint_ge(dc, base);
        ck_assert_uint_le(dc, base + base / 2);
        differs += da != dc;
    }
    ck_assert_int_gt(differs, 150); /* another seed, another sequence */
}
END_TEST

START_TEST(test_degenerate_parameters)
{
    kube_backoff_t b;

    kube_backoff_init(&b, 0, 0, 0, 1);
    ck_assert_uint_eq(kube_backoff_next(&b), 1);
    ck_assert_uint_eq(kube_backoff_next(&b), 1);
    kube_backoff_init(&b, 1, UINT64_MAX, 0, 1);
    for (int i = 0; i < 100; i++)
        ck_assert_uint_ge(kube_backoff_next(&b), 1);      /* doubling never wraps */
    ck_assert_uint_eq(kube_backoff_next(&b), UINT64_MAX); /* capped at max */
}
END_TEST

int main(void)
{
    Suite *s = suite_create("kube_backoff");
    TCase *tc = tcase_create("core");
    SRunner *sr;
    int failed;

    tcase_add_test(tc, test_doubling_capped_without_jitter);
    tcase_add_test(tc, test_jitter_bounded_and_seeded);
    tcase_add_test(tc, test_degenerate_parameters);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
