/* test_util_suggest -- "did you mean": edit distances and the choice of the closest word. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "util/suggest.h"

#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

START_TEST(distance_counts_half_edits)
{
    ck_assert_uint_eq(suggest_distance("cohortName", "cohortName"), 0);
    ck_assert_uint_eq(suggest_distance("cohortname", "cohortName"), 1); /* case only */
    ck_assert_uint_eq(suggest_distance("cohortNam", "cohortName"), 2);  /* one deletion */
    ck_assert_uint_eq(suggest_distance("cohrotName", "cohortName"), 2); /* one swap */
    ck_assert_uint_eq(suggest_distance("cohortXame", "cohortName"), 2); /* one substitution */
    ck_assert_uint_eq(suggest_distance("", "abc"), 6);
    ck_assert_uint_eq(suggest_distance("abc", ""), 6);
}
END_TEST

START_TEST(too_long_is_never_close)
{
    char big[SUGGEST_MAX_LEN + 2];

    memset(big, 'a', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    ck_assert_uint_eq(suggest_distance(big, "a"), SIZE_MAX);
    ck_assert(!suggest_close(big, big + 1));
}
END_TEST

START_TEST(close_enough)
{
    ck_assert(suggest_close("cohortname", "cohortName"));
    ck_assert(suggest_close("queuingStrategy", "queueingStrategy"));
    ck_assert(suggest_close("StrictFifo", "StrictFIFO"));
    ck_assert(!suggest_close("cohortName", "cohortName")); /* identical: nothing to suggest */
    ck_assert(!suggest_close("a", "b"));
    ck_assert(!suggest_close("spec", "kind"));
    ck_assert(!suggest_close("nominal", "borrowingLimit"));
}
END_TEST

START_TEST(pick_the_closest)
{
    const char *const fields[] = {"cohort", "cohortName", "namespaceSelector", "preemption", NULL};
    const char *const none[] = {NULL};

    ck_assert_str_eq(suggest_pick("cohortname", fields), "cohortName");
    ck_assert_str_eq(suggest_pick("cohrt", fields), "cohort");
    ck_assert_str_eq(suggest_pick("premption", fields), "preemption");
    ck_assert_ptr_null(suggest_pick("resourceGroups", fields));
    ck_assert_ptr_null(suggest_pick("x", none));
}
END_TEST

/* The early exits (length difference, two rows past the limit) answer as the whole table does:
 * every pair of words over a small alphabet, close or not. */
START_TEST(early_exits_agree_with_the_whole_table)
{
    static const char alphabet[] = "abA";
    char w[8], k[8];

    for (unsigned a = 0; a < 3 * 3 * 3 * 3 * 3 * 3; a++) {
        for (unsigned b = 0; b < 3 * 3 * 3 * 3 * 3; b += 7) {
            size_t wl = 1 + a % 6, kl = 1 + b % 5, d, shorter;
            unsigned x = a, y = b;

            for (size_t i = 0; i < wl; i++, x /= 3)
                w[i] = alphabet[x % 3];
            w[wl] = '\0';
            for (size_t i = 0; i < kl; i++, y /= 3)
                k[i] = alphabet[(y + i) % 3];
            k[kl] = '\0';
            d = suggest_distance(w, k);
            shorter = wl < kl ? wl : kl;
            ck_assert_msg(suggest_close(w, k) == (d > 0 && d <= 4 && d < shorter), "%s %s: %zu", w,
                          k, d);
        }
    }
}
END_TEST

static Suite *suggest_suite(void)
{
    Suite *s = suite_create("util_suggest");
    TCase *tc = tcase_create("util_suggest");

    tcase_add_test(tc, distance_counts_half_edits);
    tcase_add_test(tc, too_long_is_never_close);
    tcase_add_test(tc, close_enough);
    tcase_add_test(tc, pick_the_closest);
    tcase_add_test(tc, early_exits_agree_with_the_whole_table);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(suggest_suite());
    int failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
