/* test_ctrl_writer -- the write budget: admissions first, other classes rate-limited in half the
 * window, Events dropped past their budget. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "ctrl/writer.h"

#include <check.h>
#include <stdlib.h>

START_TEST(admissions_use_the_whole_window_others_half)
{
    ctrl_writer_opts_t o = {.window = 4, .status_qps_milli = 1000000, .burst = 100};
    ctrl_writer_t w;
    uint64_t wait = 99;

    ctrl_writer_init(&w, &o, 0);
    /* Two statuses fill the lower classes' half of the window. */
    ck_assert(ctrl_writer_start(&w, CTRL_WRITE_STATUS, 0, &wait));
    ck_assert(ctrl_writer_start(&w, CTRL_WRITE_STATUS, 0, &wait));
    ck_assert(!ctrl_writer_ready(&w, CTRL_WRITE_STATUS, 0));
    ck_assert(!ctrl_writer_start(&w, CTRL_WRITE_EXPLAIN, 0, &wait));
    ck_assert_uint_eq(wait, 0); /* the window, not the rate: ask again when one is done */
    /* Admissions still get the other half. */
    ck_assert(ctrl_writer_ready(&w, CTRL_WRITE_ADMISSION, 0));
    ck_assert(ctrl_writer_start(&w, CTRL_WRITE_ADMISSION, 0, NULL));
    ck_assert(ctrl_writer_start(&w, CTRL_WRITE_ADMISSION, 0, NULL));
    ck_assert(!ctrl_writer_start(&w, CTRL_WRITE_ADMISSION, 0, NULL));
    ck_assert_uint_eq(w.inflight, 4);
    ctrl_writer_done(&w);
    ck_assert(ctrl_writer_start(&w, CTRL_WRITE_ADMISSION, 0, NULL));
    ck_assert_uint_eq(w.stats.started[CTRL_WRITE_ADMISSION], 3);
    ck_assert_uint_eq(w.stats.refused[CTRL_WRITE_ADMISSION], 1);
    ck_assert_uint_eq(w.stats.started[CTRL_WRITE_STATUS], 2);
    for (int i = 0; i < 10; i++)
        ctrl_writer_done(&w);
    ck_assert_uint_eq(w.inflight, 0); /* never below zero */
}
END_TEST

START_TEST(lower_classes_keep_their_rate)
{
    ctrl_writer_opts_t o = {.window = 100, .event_qps_milli = 2000, .burst = 3};
    ctrl_writer_t w;
    uint64_t wait = 0;
    int started = 0;

    ctrl_writer_init(&w, &o, 1000);
    /* The burst, then nothing until the bucket refills: 2 per second. */
    for (int i = 0; i < 10; i++) {
        if (ctrl_writer_start(&w, CTRL_WRITE_EVENT, 1000, &wait)) {
            started++;
            ctrl_writer_done(&w);
        }
    }
    ck_assert_int_eq(started, 3);
    ck_assert_uint_eq(wait, 500);
    ck_assert(!ctrl_writer_ready(&w, CTRL_WRITE_EVENT, 1499));
    ck_assert(ctrl_writer_ready(&w, CTRL_WRITE_EVENT, 1500));
    /* Readiness takes nothing. */
    ck_assert(ctrl_writer_ready(&w, CTRL_WRITE_EVENT, 1500));
    ck_assert(ctrl_writer_start(&w, CTRL_WRITE_EVENT, 1500, NULL));
    ck_assert(!ctrl_writer_start(&w, CTRL_WRITE_EVENT, 1500, NULL));
    /* Classes have separate budgets: explanations are untouched by Events. */
    ck_assert(ctrl_writer_start(&w, CTRL_WRITE_EXPLAIN, 1500, NULL));
    ctrl_writer_drop_event(&w);
    ck_assert_uint_eq(w.stats.dropped_events, 1);
}
END_TEST

START_TEST(defaults)
{
    ctrl_writer_t w;

    ctrl_writer_init(&w, NULL, 0);
    ck_assert_uint_eq(w.opts.window, 64);
    ck_assert_uint_eq(w.opts.status_qps_milli, 10000);
    ck_assert_uint_eq(w.opts.explain_qps_milli, 2000);
    ck_assert_uint_eq(w.opts.event_qps_milli, 2000);
    ck_assert_uint_eq(w.opts.burst, 20);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("ctrl_writer");
    TCase *tc = tcase_create("core");
    SRunner *sr;
    int failed;

    tcase_add_test(tc, admissions_use_the_whole_window_others_half);
    tcase_add_test(tc, lower_classes_keep_their_rate);
    tcase_add_test(tc, defaults);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
