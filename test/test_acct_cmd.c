/* test_acct_cmd -- `sluice report` and `sluice sim --accounting/--compare` as a user runs them:
 * exit codes, where output goes, what a broken or foreign log does. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "sluice_exec.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char log_path[128];

static void setup(void)
{
    snprintf(log_path, sizeof(log_path), "/tmp/sluice-test-acct-cmd-%d.jsonl", (int)getpid());
}

static void teardown(void)
{
    unlink(log_path);
}

/* `sluice sim --accounting LOG examples/03-fair-sharing.yaml`, checked. */
static void sim_log(void)
{
    sluice_result_t r = sluice_exec(NULL, "sim", "--quiet", "--accounting", log_path,
                                    "examples/03-fair-sharing.yaml", NULL);
    ck_assert_msg(r.rc == 0, "%s", r.err);
    sluice_result_fini(&r);
}

START_TEST(report_reads_the_simulators_log)
{
    sluice_result_t r;

    sim_log();
    r = sluice_exec(NULL, "report", "--verify", log_path, NULL);
    ck_assert_msg(r.rc == 0, "%s", r.err);
    ck_assert_ptr_nonnull(strstr(r.err, "chain intact: 62 records"));
    ck_assert_ptr_nonnull(strstr(r.out, "NAMESPACE   ADMITTED  nvidia.com/gpu-H"));
    ck_assert_ptr_nonnull(
        strstr(r.out, "TOTAL             62           412.000        2h        7h        7h"));
    sluice_result_fini(&r);
    /* The same from standard input, as CSV by ClusterQueue. */
    r = sluice_exec(log_path, "report", "-o", "csv", "--by=clusterqueue", "-", NULL);
    ck_assert_int_eq(r.rc, 0);
    ck_assert_ptr_nonnull(strstr(r.out, "delta,13,96,0,7200,7200,12,1,0,0\n"));
    sluice_result_fini(&r);
    /* A range in virtual time (0 = the Unix epoch). */
    r = sluice_exec(NULL, "report", "-o", "json", "--since", "1970-01-01T02:00:00Z", "--until",
                    "1970-01-01T04:00:00Z", log_path, NULL);
    ck_assert_int_eq(r.rc, 0);
    ck_assert_ptr_nonnull(strstr(r.out, "\"since\":\"1970-01-01T02:00:00.000Z\""));
    sluice_result_fini(&r);
}
END_TEST

START_TEST(broken_or_foreign_lines_exit_1)
{
    sluice_result_t r;
    char *text;
    FILE *f;

    sim_log();
    /* An edited record: the report still prints, --verify names the line after it. */
    text = sluice_read_file(log_path);
    char *p = strstr(text, "\"nvidia.com/gpu\":\"4\"");
    ck_assert_ptr_nonnull(p);
    p[18] = '2';
    f = fopen(log_path, "w");
    fputs(text, f);
    fputs("not an accounting record\n", f);
    fclose(f);
    free(text);
    r = sluice_exec(NULL, "report", "--verify", log_path, NULL);
    ck_assert_int_eq(r.rc, 1);
    ck_assert_ptr_nonnull(strstr(r.err, "chain broken:"));
    ck_assert_ptr_nonnull(strstr(r.err, ":2 (seq 2): prev does not match"));
    ck_assert_ptr_nonnull(strstr(r.err, ":63: not JSON"));
    ck_assert_ptr_nonnull(strstr(r.out, "TOTAL"));
    sluice_result_fini(&r);
}
END_TEST

START_TEST(usage_errors_exit_2)
{
    static const char *const bad[][4] = {
        {"report", NULL},
        {"report", "--since", "yesterday", "x"},
        {"report", "--by", "team", "x"},
        {"report", "-o", "yaml", "x"},
        {"report", "/nonexistent/acct.jsonl", NULL},
        {"sim", "--compare", "examples/03-fair-sharing.yaml", NULL},
        {"sim", "examples/03-fair-sharing.yaml", "examples/designs/static-quotas.yaml", NULL},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
        sluice_result_t r = sluice_exec(NULL, bad[i][0], bad[i][1], bad[i][2], bad[i][3], NULL);
        ck_assert_msg(r.rc == 2, "case %zu: exit %d", i, r.rc);
        ck_assert_msg(strchr(r.err, '\n') == r.err + strlen(r.err) - 1, "case %zu: one line: %s", i,
                      r.err);
        sluice_result_fini(&r);
    }
}
END_TEST

START_TEST(compare_prints_both_sides)
{
    sluice_result_t r = sluice_exec(NULL, "sim", "--compare", "examples/03-fair-sharing.yaml",
                                    "examples/designs/static-quotas.yaml", NULL);

    ck_assert_msg(r.rc == 0, "%s", r.err);
    ck_assert_ptr_nonnull(strstr(r.out, "B: examples/designs/static-quotas.yaml"));
    ck_assert_ptr_nonnull(strstr(r.out, "preemptions                                  14"));
    sluice_result_fini(&r);
}
END_TEST

static Suite *acct_cmd_suite(void)
{
    Suite *s = suite_create("acct_cmd");
    TCase *tc = tcase_create("core");

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, report_reads_the_simulators_log);
    tcase_add_test(tc, broken_or_foreign_lines_exit_1);
    tcase_add_test(tc, usage_errors_exit_2);
    tcase_add_test(tc, compare_prints_both_sides);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(acct_cmd_suite());
    int failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
