/* test_util_grow -- util_grow: doubling capacity, untouched array on failure. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "util/grow.h"

#include "oom_wrap.h"

#include <check.h>
#include <stdint.h>
#include <stdlib.h>

START_TEST(test_grow_from_empty_doubles_from_eight)
{
    int *v = NULL;
    size_t cap = 0;

    ck_assert_int_eq(util_grow((void **)&v, &cap, 1, sizeof(*v)), ERR_OK);
    ck_assert_uint_eq(cap, 8);
    ck_assert_ptr_nonnull(v);
    for (int i = 0; i < 8; i++)
        v[i] = i;
    ck_assert_int_eq(util_grow((void **)&v, &cap, 9, sizeof(*v)), ERR_OK);
    ck_assert_uint_eq(cap, 16);
    ck_assert_int_eq(util_grow((void **)&v, &cap, 100, sizeof(*v)), ERR_OK);
    ck_assert_uint_eq(cap, 128);
    for (int i = 0; i < 8; i++)
        ck_assert_int_eq(v[i], i); /* contents kept */
    free(v);
}
END_TEST

START_TEST(test_grow_is_a_no_op_when_there_is_room)
{
    char *v = malloc(5);
    char *before = v;
    size_t cap = 5;

    ck_assert_int_eq(util_grow((void **)&v, &cap, 5, 1), ERR_OK);
    ck_assert_int_eq(util_grow((void **)&v, &cap, 0, 1), ERR_OK);
    ck_assert_ptr_eq(v, before);
    ck_assert_uint_eq(cap, 5);
    /* A capacity that is not a power of two doubles from where it is. */
    ck_assert_int_eq(util_grow((void **)&v, &cap, 6, 1), ERR_OK);
    ck_assert_uint_eq(cap, 10);
    free(v);
}
END_TEST

START_TEST(test_grow_appends_one_at_a_time)
{
    size_t *v = NULL, cap = 0, len = 0, reallocs = 0, last_cap = 0;

    for (size_t i = 0; i < 10000; i++) {
        ck_assert_int_eq(util_grow((void **)&v, &cap, len + 1, sizeof(*v)), ERR_OK);
        if (cap != last_cap)
            reallocs++;
        last_cap = cap;
        v[len++] = i;
    }
    ck_assert_uint_eq(cap, 16384);
    ck_assert_uint_le(reallocs, 12); /* 8, 16, ..., 16384 */
    for (size_t i = 0; i < len; i++)
        ck_assert_uint_eq(v[i], i);
    free(v);
}
END_TEST

START_TEST(test_grow_failure_leaves_the_array)
{
    int *v = NULL;
    size_t cap = 0;

    ck_assert_int_eq(util_grow((void **)&v, &cap, 3, sizeof(*v)), ERR_OK);
    v[0] = 42;
    oom_fail_at(1);
    ck_assert_int_eq(util_grow((void **)&v, &cap, 9, sizeof(*v)), ERR_NOMEM);
    oom_fail_at(0);
    ck_assert_uint_eq(cap, 8);
    ck_assert_int_eq(v[0], 42);
    free(v);
}
END_TEST

START_TEST(test_grow_refuses_sizes_that_overflow)
{
    char *v = NULL;
    size_t cap = 0;

    ck_assert_int_eq(util_grow((void **)&v, &cap, SIZE_MAX, 1), ERR_NOMEM);
    ck_assert_int_eq(util_grow((void **)&v, &cap, SIZE_MAX / 4, 16), ERR_NOMEM);
    ck_assert_ptr_null(v);
    ck_assert_uint_eq(cap, 0);
    ck_assert_int_eq(util_grow((void **)&v, &cap, 1, 0), ERR_INVALID);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("util_grow");
    TCase *tc = tcase_create("core");
    SRunner *sr;
    int failed;

    tcase_add_test(tc, test_grow_from_empty_doubles_from_eight);
    tcase_add_test(tc, test_grow_is_a_no_op_when_there_is_room);
    tcase_add_test(tc, test_grow_appends_one_at_a_time);
    tcase_add_test(tc, test_grow_failure_leaves_the_array);
    tcase_add_test(tc, test_grow_refuses_sizes_that_overflow);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
