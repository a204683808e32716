/* test_ctrl_workqueue -- keys once each, failures back off per key, success resets. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "ctrl/workqueue.h"

#include <check.h>
#include <stdlib.h>

static size_t take_count(ctrl_wq_t *q, uint64_t now, const char *want)
{
    json_t *keys = ctrl_wq_take(q, now);
    size_t n;

    ck_assert_ptr_nonnull(keys);
    n = json_object_size(keys);
    if (want != NULL)
        ck_assert_ptr_nonnull(json_object_get(keys, want));
    json_decref(keys);
    return n;
}

START_TEST(keys_once_each)
{
    ctrl_wq_t q;

    ck_assert_int_eq(ctrl_wq_init(&q, 100, 1000), ERR_OK);
    ck_assert_uint_eq(ctrl_wq_next(&q, 0), UINT64_MAX);
    ck_assert_int_eq(ctrl_wq_add(&q, "a"), ERR_OK);
    ck_assert_int_eq(ctrl_wq_add(&q, "a"), ERR_OK);
    ck_assert_int_eq(ctrl_wq_add(&q, "b"), ERR_OK);
    ck_assert_uint_eq(ctrl_wq_next(&q, 0), 0);
    ck_assert_uint_eq(take_count(&q, 0, "a"), 2);
    ck_assert_uint_eq(take_count(&q, 0, NULL), 0);
    ctrl_wq_fini(&q);
}
END_TEST

START_TEST(failures_back_off_and_success_resets)
{
    ctrl_wq_t q;

    ck_assert_int_eq(ctrl_wq_init(&q, 100, 1000), ERR_OK);
    /* 100, 200, 400, 800, then capped at 1000 ms. */
    ck_assert_int_eq(ctrl_wq_fail(&q, "a", 0), ERR_OK);
    ck_assert_uint_eq(ctrl_wq_next(&q, 0), 100);
    ck_assert_uint_eq(take_count(&q, 99, NULL), 0);
    ck_assert_uint_eq(take_count(&q, 100, "a"), 1);
    ck_assert_int_eq(ctrl_wq_fail(&q, "a", 100), ERR_OK);
    ck_assert_uint_eq(ctrl_wq_next(&q, 100), 200);
    ck_assert_int_eq(ctrl_wq_fail(&q, "a", 100), ERR_OK);
    ck_assert_int_eq(ctrl_wq_fail(&q, "a", 100), ERR_OK);
    ck_assert_int_eq(ctrl_wq_fail(&q, "a", 100), ERR_OK);
    ck_assert_uint_eq(ctrl_wq_failures(&q, "a"), 5);
    ck_assert_uint_eq(ctrl_wq_next(&q, 100), 1000);
    /* A failed key queued to run now waits for its backoff instead... */
    ck_assert_int_eq(ctrl_wq_add(&q, "b"), ERR_OK);
    ck_assert_int_eq(ctrl_wq_fail(&q, "b", 0), ERR_OK);
    ck_assert_uint_eq(take_count(&q, 50, NULL), 0);
    /* ...but an add (a new event) brings a delayed key back at once, failures kept. */
    ck_assert_int_eq(ctrl_wq_add(&q, "a"), ERR_OK);
    ck_assert_uint_eq(take_count(&q, 99, "a"), 1);
    ck_assert_uint_eq(ctrl_wq_failures(&q, "a"), 5);
    ctrl_wq_forget(&q, "a");
    ck_assert_uint_eq(ctrl_wq_failures(&q, "a"), 0);
    ck_assert_int_eq(ctrl_wq_fail(&q, "a", 1000), ERR_OK);
    ck_assert_uint_eq(ctrl_wq_next(&q, 1000), 0); /* "b" is due by now */
    ck_assert_uint_eq(take_count(&q, 1100, "a"), 2);
    ctrl_wq_fini(&q);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("ctrl_workqueue");
    TCase *tc = tcase_create("core");
    SRunner *sr;
    int failed;

    tcase_add_test(tc, keys_once_each);
    tcase_add_test(tc, failures_back_off_and_success_resets);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
