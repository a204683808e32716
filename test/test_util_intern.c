/* test_util_intern -- shared strings: one copy per text, counted references, a string gone with
 * its last reference, the table freed whole, out-of-memory. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "util/intern.h"

#include "oom_wrap.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

START_TEST(test_one_copy_per_text)
{
    util_intern_t t;
    char buf[32];
    const char *a, *b, *c;

    util_intern_init(&t);

    snprintf(buf, sizeof(buf), "%s", "QuotaReserved");
    a = util_intern(&t, buf);
    buf[0] = 'X'; /* the shared copy is its own */
    b = util_intern(&t, "QuotaReserved");
    c = util_intern(&t, "Admitted");
    ck_assert_ptr_nonnull(a);
    ck_assert_ptr_eq(a, b);
    ck_assert_str_eq(a, "QuotaReserved");
    ck_assert_ptr_ne(a, c);
    ck_assert_str_eq(c, "Admitted");
    ck_assert_uint_eq(util_intern_count(&t), 2);
    util_intern_drop(&t, a);
    ck_assert_uint_eq(util_intern_count(&t), 2); /* b still holds it */
    ck_assert_str_eq(b, "QuotaReserved");
    util_intern_drop(&t, b);
    ck_assert_uint_eq(util_intern_count(&t), 1);
    ck_assert_ptr_null(util_intern(&t, NULL));
    util_intern_drop(&t, NULL);
    util_intern_drop(&t, c);
    ck_assert_uint_eq(util_intern_count(&t), 0);
    util_intern_fini(&t);
}
END_TEST

START_TEST(test_many_strings_grow_and_empty)
{
    enum { N = 3000 };
    static const char *refs[N][2];
    util_intern_t t;
    char buf[32];

    util_intern_init(&t);

    for (int r = 0; r < 2; r++) {
        for (int i = 0; i < N; i++) {
            snprintf(buf, sizeof(buf), "cq-%d", i);
            refs[i][r] = util_intern(&t, buf);
            ck_assert_ptr_nonnull(refs[i][r]);
        }
    }
    ck_assert_uint_eq(util_intern_count(&t), N);
    for (int i = 0; i < N; i++) {
        snprintf(buf, sizeof(buf), "cq-%d", i);
        ck_assert_ptr_eq(refs[i][0], refs[i][1]);
        ck_assert_str_eq(refs[i][0], buf);
        util_intern_drop(&t, refs[i][0]);
    }
    ck_assert_uint_eq(util_intern_count(&t), N);
    for (int i = 0; i < N; i++)
        util_intern_drop(&t, refs[i][1]);
    ck_assert_uint_eq(util_intern_count(&t), 0);
    util_intern_fini(&t);
}

/* The table's owner goes first: what is still referenced is freed with it (ASan: no leak). */
START_TEST(test_fini_frees_what_is_left)
{
    util_intern_t t;

    util_intern_init(&t);
    ck_assert_ptr_nonnull(util_intern(&t, "Admitted"));
    ck_assert_ptr_nonnull(util_intern(&t, "Admitted"));
    ck_assert_ptr_nonnull(util_intern(&t, "QuotaReserved"));
    ck_assert_uint_eq(util_intern_count(&t), 2);
    util_intern_fini(&t);
}
END_TEST

START_TEST(test_out_of_memory)
{
    util_intern_t t;
    const char *a, *s, *s2;
    long n;

    util_intern_init(&t);
    a = util_intern(&t, "kept");

    /* Each allocation of a new string in turn (its copy, the table's slots) fails cleanly. */
    for (n = 1;; n++) {
        oom_fail_at(n);
        s = util_intern(&t, "new");
        long made = oom_count();
        oom_fail_at(0);
        if (made < n)
            break;
        ck_assert_ptr_null(s);
        ck_assert_uint_eq(util_intern_count(&t), 1);
    }
    ck_assert_ptr_nonnull(s);
    ck_assert_uint_eq(util_intern_count(&t), 2);
    /* A text already there needs no memory. */
    oom_fail_at(1);
    s2 = util_intern(&t, "kept");
    oom_fail_at(0);
    ck_assert_ptr_eq(s2, a);
    util_intern_drop(&t, a);
    util_intern_drop(&t, a);
    util_intern_drop(&t, s);
    ck_assert_uint_eq(util_intern_count(&t), 0);
    util_intern_fini(&t);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("util_intern");
    TCase *tc = tcase_create("core");
    SRunner *sr;
    int failed;

    tcase_add_test(tc, test_one_copy_per_text);
    tcase_add_test(tc, test_many_strings_grow_and_empty);
    tcase_add_test(tc, test_fini_frees_what_is_left);
    tcase_add_test(tc, test_out_of_memory);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
