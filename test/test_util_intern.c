/* test_util_intern -- shared strings: one copy per text, counted references, the table gone with
 * its last string, out-of-memory. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "util/intern.h"

#include "oom_wrap.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

START_TEST(test_one_copy_per_text)
{
    char buf[32];
    const char *a, *b, *c;

    snprintf(buf, sizeof(buf), "%s", "QuotaReserved");
    a = util_intern(buf);
    buf[0] = 'X'; /* the shared copy is its own */
    b = util_intern("QuotaReserved");
    c = util_intern("Admitted");
    ck_assert_ptr_nonnull(a);
    ck_assert_ptr_eq(a, b);
    ck_assert_str_eq(a, "QuotaReserved");
    ck_assert_ptr_ne(a, c);
    ck_assert_str_eq(c, "Admitted");
    ck_assert_uint_eq(util_intern_count(), 2);
    util_intern_drop(a);
    ck_assert_uint_eq(util_intern_count(), 2); /* b still holds it */
    ck_assert_str_eq(b, "QuotaReserved");
    util_intern_drop(b);
    ck_assert_uint_eq(util_intern_count(), 1);
    ck_assert_ptr_null(util_intern(NULL));
    util_intern_drop(NULL);
    util_intern_drop(c);
    ck_assert_uint_eq(util_intern_count(), 0); /* and its table freed: ASan sees no leak */
}
END_TEST

START_TEST(test_many_strings_grow_and_empty)
{
    enum { N = 3000 };
    static const char *refs[N][2];
    char buf[32];

    for (int r = 0; r < 2; r++) {
        for (int i = 0; i < N; i++) {
            snprintf(buf, sizeof(buf), "cq-%d", i);
            refs[i][r] = util_intern(buf);
            ck_assert_ptr_nonnull(refs[i][r]);
        }
    }
    ck_assert_uint_eq(util_intern_count(), N);
    for (int i = 0; i < N; i++) {
        snprintf(buf, sizeof(buf), "cq-%d", i);
        ck_assert_ptr_eq(refs[i][0], refs[i][1]);
        ck_assert_str_eq(refs[i][0], buf);
        util_intern_drop(refs[i][0]);
    }
    ck_assert_uint_eq(util_intern_count(), N);
    for (int i = 0; i < N; i++)
        util_intern_drop(refs[i][1]);
    ck_assert_uint_eq(util_intern_count(), 0);
}
END_TEST

START_TEST(test_out_of_memory)
{
    const char *a = util_intern("kept");
    const char *s, *s2;
    long n;

    /* Each allocation of a new string in turn (its copy, the table's slots) fails cleanly. */
    for (n = 1;; n++) {
        oom_fail_at(n);
        s = util_intern("new");
        long made = oom_count();
        oom_fail_at(0);
        if (made < n)
            break;
        ck_assert_ptr_null(s);
        ck_assert_uint_eq(util_intern_count(), 1);
    }
    ck_assert_ptr_nonnull(s);
    ck_assert_uint_eq(util_intern_count(), 2);
    /* A text already there needs no memory. */
    oom_fail_at(1);
    s2 = util_intern("kept");
    oom_fail_at(0);
    ck_assert_ptr_eq(s2, a);
    util_intern_drop(a);
    util_intern_drop(a);
    util_intern_drop(s);
    ck_assert_uint_eq(util_intern_count(), 0);
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
    tcase_add_test(tc, test_out_of_memory);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
