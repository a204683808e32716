/* test_ctrl_cond -- condition updates with apimeta.SetStatusCondition's lastTransitionTime rules.
 */
/* SPDX-License-Identifier: Apache-2.0 */
#include "ctrl/cond.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

static const char *field(json_t *conds, const char *type, const char *key)
{
    return json_string_value(json_object_get(cond_find(conds, type), key));
}

/* cond_set() succeeds, and says "changed" exactly when `want`. */
#define SET_CHANGED(want, ...)                                      \
    do {                                                            \
        bool changed_ = !(want);                                    \
        ck_assert_int_eq(cond_set(__VA_ARGS__, &changed_), ERR_OK); \
        ck_assert(changed_ == (want));                              \
    } while (0)

START_TEST(time_format)
{
    char buf[32];
    ck_assert_str_eq(cond_time_str(0, buf, sizeof(buf)), "1970-01-01T00:00:00Z");
    ck_assert_str_eq(cond_time_str(1764439200, buf, sizeof(buf)), "2025-11-29T18:00:00Z");
}
END_TEST

START_TEST(transition_time_only_on_status_change)
{
    json_t *c = json_array();

    SET_CHANGED(true, c, "QuotaReserved", "False", "Pending", "wait", 3, 1000);
    ck_assert_str_eq(field(c, "QuotaReserved", "lastTransitionTime"), "1970-01-01T00:16:40Z");
    ck_assert_int_eq(
        json_integer_value(json_object_get(cond_find(c, "QuotaReserved"), "observedGeneration")),
        3);
    /* Same everything: no change, nothing written. */
    SET_CHANGED(false, c, "QuotaReserved", "False", "Pending", "wait", 3, 2000);
    /* Reason and message change in place, the transition time stays. */
    SET_CHANGED(true, c, "QuotaReserved", "False", "WaitingForQuota", "more", 3, 2000);
    ck_assert_str_eq(field(c, "QuotaReserved", "reason"), "WaitingForQuota");
    ck_assert_str_eq(field(c, "QuotaReserved", "message"), "more");
    ck_assert_str_eq(field(c, "QuotaReserved", "lastTransitionTime"), "1970-01-01T00:16:40Z");
    /* Status flips: new transition time. */
    SET_CHANGED(true, c, "QuotaReserved", "True", "QuotaReserved", "ok", 4, 3000);
    ck_assert_str_eq(field(c, "QuotaReserved", "lastTransitionTime"), "1970-01-01T00:50:00Z");
    ck_assert(cond_is_true(c, "QuotaReserved"));
    ck_assert(!cond_is_true(c, "Admitted"));
    /* Another type is appended; generation < 0 leaves observedGeneration out. */
    SET_CHANGED(true, c, "Admitted", "True", "Admitted", NULL, -1, 3000);
    ck_assert_uint_eq(json_array_size(c), 2);
    ck_assert_ptr_null(json_object_get(cond_find(c, "Admitted"), "observedGeneration"));
    ck_assert_str_eq(field(c, "Admitted", "message"), "");
    ck_assert(cond_remove(c, "Admitted"));
    ck_assert(!cond_remove(c, "Admitted"));
    ck_assert_uint_eq(json_array_size(c), 1);
    ck_assert_int_eq(cond_set(NULL, "X", "True", "r", "m", 0, 0, NULL), ERR_INVALID);
    json_decref(c);
}
END_TEST

START_TEST(message_cut_on_utf8_boundary)
{
    size_t n = COND_MESSAGE_MAX + 10;
    char *m = malloc(n + 1);
    json_t *c = json_array();

    /* "é" is two bytes; an odd offset puts the limit inside one. */
    m[0] = 'x';
    for (size_t i = 1; i + 1 < n; i += 2) {
        m[i] = (char)0xC3;
        m[i + 1] = (char)0xA9;
    }
    m[n - 1] = 'y';
    m[n] = '\0';
    ck_assert_uint_eq(cond_utf8_cut(m, COND_MESSAGE_MAX), COND_MESSAGE_MAX - 1);
    ck_assert_uint_eq(cond_utf8_cut("abc", 10), 3);
    SET_CHANGED(true, c, "Finished", "True", "Failed", m, 1, 0);
    ck_assert_uint_eq(strlen(field(c, "Finished", "message")), COND_MESSAGE_MAX - 1);
    /* Setting the same long message again is a no-op (compared after the cut). */
    SET_CHANGED(false, c, "Finished", "True", "Failed", m, 1, 0);
    free(m);
    json_decref(c);
}
END_TEST

START_TEST(same_but_numbers)
{
    ck_assert(cond_same_but_numbers("requested 8, available 4 (used 4)",
                                    "requested 8, available 2 (used 16)"));
    ck_assert(cond_same_but_numbers("usage 1.5Gi", "usage 12.25Gi"));
    ck_assert(cond_same_but_numbers("", ""));
    ck_assert(!cond_same_but_numbers("in flavor a100: requested 8", "in flavor h100: requested 8"));
    ck_assert(!cond_same_but_numbers("requested 8", "requested 8 cpu"));
    ck_assert(!cond_same_but_numbers("requested 8", "requested x"));
    ck_assert(!cond_same_but_numbers("abc", "ab"));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("ctrl_cond");
    TCase *tc = tcase_create("core");
    SRunner *sr;
    int failed;

    tcase_add_test(tc, time_format);
    tcase_add_test(tc, transition_time_only_on_status_change);
    tcase_add_test(tc, message_cut_on_utf8_boundary);
    tcase_add_test(tc, same_but_numbers);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
