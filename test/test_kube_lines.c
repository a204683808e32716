/* test_kube_lines -- watch stream line splitting with a bounded buffer. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "kube/lines.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct seen_s {
    char text[1024];
    int lines, too_long, stop_after;
} seen_t;

static int on_line(void *ctx, const char *line, size_t len, bool too_long)
{
    seen_t *s = ctx;
    size_t used = strlen(s->text);

    ck_assert_uint_eq(strlen(line), len); /* NUL-terminated at len */
    if (too_long) {
        s->too_long++;
        snprintf(s->text + used, sizeof(s->text) - used, "<long>|");
    } else {
        s->lines++;
        snprintf(s->text + used, sizeof(s->text) - used, "%s|", line);
    }
    return s->stop_after > 0 && s->lines + s->too_long >= s->stop_after ? 7 : 0;
}

START_TEST(test_split_across_feeds)
{
    kube_lines_t l;
    seen_t s = {{0}, 0, 0, 0};

    kube_lines_init(&l, 64);
    ck_assert_int_eq(kube_lines_feed(&l, "ab", 2, on_line, &s), 0);
    ck_assert_int_eq(kube_lines_feed(&l, "c\r\nd\n\nef", 8, on_line, &s), 0);
    ck_assert_str_eq(s.text, "abc|d||");
    ck_assert_int_eq(kube_lines_feed(&l, "g\n", 2, on_line, &s), 0);
    ck_assert_str_eq(s.text, "abc|d||efg|");
    kube_lines_fini(&l);
}
END_TEST

START_TEST(test_over_long_line_dropped_once)
{
    kube_lines_t l;
    seen_t s = {{0}, 0, 0, 0};
    char big[100];

    memset(big, 'x', sizeof(big));
    kube_lines_init(&l, 8);
    ck_assert_int_eq(kube_lines_feed(&l, "12345678\n", 9, on_line, &s), 0); /* exactly the max */
    ck_assert_int_eq(kube_lines_feed(&l, "1234", 4, on_line, &s), 0);
    ck_assert_int_eq(kube_lines_feed(&l, big, sizeof(big), on_line, &s), 0);
    ck_assert_int_eq(kube_lines_feed(&l, big, sizeof(big), on_line, &s), 0);
    ck_assert_uint_le(l.cap, 9); /* never grew past the bound */
    ck_assert_int_eq(kube_lines_feed(&l, "tail\nok\n", 8, on_line, &s), 0);
    ck_assert_str_eq(s.text, "12345678|<long>|ok|");
    ck_assert_int_eq(kube_lines_feed(&l, "123456789\nz\n", 12, on_line, &s), 0);
    ck_assert_str_eq(s.text, "12345678|<long>|ok|<long>|z|");
    ck_assert_int_eq(s.too_long, 2);
    kube_lines_fini(&l);
}
END_TEST

START_TEST(test_callback_stops_and_reset)
{
    kube_lines_t l;
    seen_t s = {{0}, 0, 0, 1};

    kube_lines_init(&l, 32);
    ck_assert_int_eq(kube_lines_feed(&l, "a\nb\n", 4, on_line, &s), 7);
    ck_assert_str_eq(s.text, "a|");
    kube_lines_reset(&l);
    s.stop_after = 0;
    ck_assert_int_eq(kube_lines_feed(&l, "partial", 7, on_line, &s), 0);
    kube_lines_reset(&l);
    ck_assert_int_eq(kube_lines_feed(&l, "new\n", 4, on_line, &s), 0);
    ck_assert_str_eq(s.text, "a|new|");
    kube_lines_fini(&l);
}
END_TEST

START_TEST(test_byte_at_a_time)
{
    const char *in = "{\"type\":\"ADDED\"}\n{\"x\":1}\n";
    kube_lines_t l;
    seen_t s = {{0}, 0, 0, 0};

    kube_lines_init(&l, 1 << 20);
    for (size_t i = 0; in[i]; i++)
        ck_assert_int_eq(kube_lines_feed(&l, in + i, 1, on_line, &s), 0);
    ck_assert_str_eq(s.text, "{\"type\":\"ADDED\"}|{\"x\":1}|");
    kube_lines_fini(&l);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("kube_lines");
    TCase *tc = tcase_create("core");
    SRunner *sr;
    int failed;

    tcase_add_test(tc, test_split_across_feeds);
    tcase_add_test(tc, test_over_long_line_dropped_once);
    tcase_add_test(tc, test_callback_stops_and_reset);
    tcase_add_test(tc, test_byte_at_a_time);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
