/* test_util_str -- util_strdup (NULL-tolerant, untouched on failure) and util_asprintf. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "util/str.h"

#include "oom_wrap.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

START_TEST(test_strdup_copies)
{
    const char *s = "kueue.x-k8s.io/queue-name";
    char *c = NULL;

    ck_assert_int_eq(util_strdup(s, &c), ERR_OK);
    ck_assert_ptr_ne(c, s);
    ck_assert_str_eq(c, s);
    free(c);
    ck_assert_int_eq(util_strdup("", &c), ERR_OK);
    ck_assert_str_eq(c, "");
    free(c);
}
END_TEST

START_TEST(test_strdup_of_null_is_null)
{
    char *c = (char *)"sentinel";

    ck_assert_int_eq(util_strdup(NULL, &c), ERR_OK);
    ck_assert_ptr_null(c);
}
END_TEST

START_TEST(test_strdup_failure_leaves_out)
{
    char *c = (char *)"sentinel";

    oom_fail_at(1);
    ck_assert_int_eq(util_strdup("x", &c), ERR_NOMEM);
    oom_fail_at(0);
    ck_assert_str_eq(c, "sentinel");
}
END_TEST

START_TEST(test_asprintf_short_and_long)
{
    char *s = util_asprintf("%s/%s #%d", "ns", "name", 7);
    char big[3000];

    ck_assert_str_eq(s, "ns/name #7");
    free(s);
    memset(big, 'x', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    s = util_asprintf("[%s]", big); /* longer than the one-pass buffer */
    ck_assert_uint_eq(strlen(s), sizeof(big) + 1);
    ck_assert_int_eq(s[0], '[');
    ck_assert_int_eq(s[sizeof(big)], ']');
    ck_assert_int_eq(s[1500], 'x');
    free(s);
}
END_TEST

START_TEST(test_asprintf_out_of_memory)
{
    oom_fail_at(1);
    ck_assert_ptr_null(util_asprintf("%d", 1));
    oom_fail_at(0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("util_str");
    TCase *tc = tcase_create("core");
    SRunner *sr;
    int failed;

    tcase_add_test(tc, test_strdup_copies);
    tcase_add_test(tc, test_strdup_of_null_is_null);
    tcase_add_test(tc, test_strdup_failure_leaves_out);
    tcase_add_test(tc, test_asprintf_short_and_long);
    tcase_add_test(tc, test_asprintf_out_of_memory);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
