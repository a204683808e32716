/* test_err -- error codes and message formatting. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "util/err.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

START_TEST(test_err_str_names_every_code)
{
    ck_assert_str_eq(err_str(ERR_OK), "success");
    ck_assert_str_eq(err_str(ERR_NOMEM), "out of memory");
    ck_assert_str_eq(err_str(ERR__COUNT), "unknown error");
    ck_assert_str_eq(err_str((err_t)-1), "unknown error");
}
END_TEST

START_TEST(test_err_set_formats_and_returns_code)
{
    err_msg_t msg;

    ck_assert_int_eq(err_set(&msg, ERR_PARSE, "quantity %s: bad suffix", "\"12x\""), ERR_PARSE);
    ck_assert_str_eq(msg.text, "quantity \"12x\": bad suffix");
    ck_assert_int_eq(err_set(NULL, ERR_IO, "ignored %d", 1), ERR_IO);
}
END_TEST

START_TEST(test_err_prefix_prepends_path)
{
    err_msg_t msg;

    err_set(&msg, ERR_INVALID, "must be greater than or equal to 0");
    ck_assert_int_eq(err_prefix(&msg, ERR_INVALID, "spec.resourceGroups[%d].flavors: ", 0),
                     ERR_INVALID);
    ck_assert_str_eq(msg.text, "spec.resourceGroups[0].flavors: must be greater than or equal to 0");
}
END_TEST

START_TEST(test_err_set_truncates_long_text)
{
    err_msg_t msg;
    char big[2 * ERR_MSG_LEN];

    memset(big, 'a', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    err_set(&msg, ERR_INVALID, "%s", big);
    ck_assert_uint_eq(strlen(msg.text), ERR_MSG_LEN - 1);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("err");
    TCase *tc = tcase_create("core");
    SRunner *sr;
    int failed;

    tcase_add_test(tc, test_err_str_names_every_code);
    tcase_add_test(tc, test_err_set_formats_and_returns_code);
    tcase_add_test(tc, test_err_prefix_prepends_path);
    tcase_add_test(tc, test_err_set_truncates_long_text);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
