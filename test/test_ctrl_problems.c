/* test_ctrl_problems -- problems are said once, repeated at most once per interval, resolved. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "ctrl/problems.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct log_s {
    char text[4096];
    int lines;
} log_t;

static void rec(void *data, int level, const char *text)
{
    log_t *l = data;
    size_t used = strlen(l->text);

    snprintf(l->text + used, sizeof(l->text) - used, "%s|%s\n", level == 0 ? "E" : "I", text);
    l->lines++;
}

START_TEST(said_once_repeated_per_interval_resolved_once)
{
    log_t l = {"", 0};
    problems_t *p = problems_new(rec, &l, 60000);

    ck_assert_ptr_nonnull(p);
    problems_set(p, "crd:cq", 1000, "CRD %s missing", "cq");
    ck_assert_str_eq(l.text, "E|CRD cq missing\n");
    /* The same again within the interval: silent. */
    for (int i = 0; i < 5; i++)
        problems_set(p, "crd:cq", 2000 + (uint64_t)i * 1000, "CRD %s missing", "cq");
    ck_assert_int_eq(l.lines, 1);
    /* After the interval: once, with how long and how often. */
    problems_set(p, "crd:cq", 61000, "CRD %s missing", "cq");
    ck_assert_int_eq(l.lines, 2);
    ck_assert_ptr_nonnull(
        strstr(l.text, "E|CRD cq missing (still, for 60 s; 6 more times since the last report)"));
    /* Numbers that change (a port, a duration) do not make a new problem. */
    problems_set(p, "crd:cq", 61500, "CRD cq missing");
    problems_set(p, "api", 61500, "connect failed after 3 ms");
    problems_set(p, "api", 61600, "connect failed after 12 ms");
    ck_assert_int_eq(l.lines, 3);
    problems_clear(p, "api", 61700);
    ck_assert_int_eq(l.lines, 4);
    /* A changed text is news: said at once. */
    problems_set(p, "crd:cq", 62000, "CRD cq does not serve v1beta2");
    ck_assert_int_eq(l.lines, 5);
    ck_assert(problems_has(p, "crd:cq"));
    ck_assert_uint_eq(problems_count(p), 1);
    /* Resolving says so once; clearing an unknown key says nothing. */
    problems_clear(p, "crd:cq", 91000);
    problems_clear(p, "crd:cq", 92000);
    problems_clear(p, "never", 92000);
    ck_assert_int_eq(l.lines, 6);
    ck_assert_ptr_nonnull(strstr(l.text, "I|resolved after 90 s: CRD cq does not serve v1beta2\n"));
    ck_assert(!problems_has(p, "crd:cq"));
    ck_assert_uint_eq(problems_count(p), 0);
    problems_free(p);
}
END_TEST

START_TEST(describe_and_clear_prefix)
{
    log_t l = {"", 0};
    problems_t *p = problems_new(rec, &l, 1000);
    char buf[256] = "head\n";

    problems_set(p, "rbac:list:jobs.batch", 0, "no list on jobs");
    problems_set(p, "api", 0, "unreachable");
    problems_set(p, "rbac:watch:jobs.batch", 0, "no watch on jobs");
    ck_assert_uint_eq(problems_describe(p, "  ", buf, sizeof(buf)), 3);
    ck_assert_str_eq(buf, "head\n  no list on jobs\n  unreachable\n  no watch on jobs\n");
    problems_clear_prefix(p, "rbac:", 5000);
    ck_assert_uint_eq(problems_count(p), 1);
    ck_assert(problems_has(p, "api"));
    /* A small buffer is filled and terminated, never overrun. */
    {
        char small[8] = "";
        problems_describe(p, "  ", small, sizeof(small));
        ck_assert_uint_eq(strlen(small), 7);
    }
    problems_free(p);
    problems_free(NULL);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("ctrl_problems");
    TCase *tc = tcase_create("core");
    SRunner *sr;
    int failed;

    tcase_add_test(tc, said_once_repeated_per_interval_resolved_once);
    tcase_add_test(tc, describe_and_clear_prefix);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
