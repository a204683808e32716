/* test_sim_cmd -- `sluice sim` as a user runs it: exit codes, where each output goes, --help. */
/* SPDX-License-Identifier: Apache-2.0 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static char out_path[256], err_path[256];

/* Run `sluice sim ARGS` (from the source directory), stdout and stderr to files; returns the
 * exit status. */
static int sim(const char *args)
{
    const char *bin = getenv("SLUICE_BINARY_DIR"), *src = getenv("SLUICE_SOURCE_DIR");
    char cmd[2048];
    int st;

    snprintf(cmd, sizeof(cmd), "cd '%s' && '%s/sluice' sim %s >'%s' 2>'%s' </dev/null",
             src != NULL ? src : "..", bin != NULL ? bin : ".", args, out_path, err_path);
    st = system(cmd);
    ck_assert_msg(st != -1 && WIFEXITED(st), "%s did not exit", cmd);
    return WEXITSTATUS(st);
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    static char buf[1 << 16];
    size_t n;

    if (f == NULL)
        return NULL;
    n = fread(buf, 1, sizeof(buf) - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

static void setup(void)
{
    snprintf(out_path, sizeof(out_path), "/tmp/sluice-test-sim-cmd-%d.out", (int)getpid());
    snprintf(err_path, sizeof(err_path), "/tmp/sluice-test-sim-cmd-%d.err", (int)getpid());
}

static void teardown(void)
{
    unlink(out_path);
    unlink(err_path);
}

START_TEST(test_help_tells_every_flag)
{
    ck_assert_int_eq(sim("--help"), 0);
    const char *out = slurp(out_path);
    static const char *const words[] = {"--events", "--summary",   "--report",         "--until",
                                        "--quiet",  "exit status", "sim.sluice.dev/at"};
    for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
        ck_assert_msg(strstr(out, words[i]) != NULL, "--help does not mention %s", words[i]);
}
END_TEST

START_TEST(test_usage_errors_exit_2)
{
    ck_assert_int_eq(sim(""), 2);
    ck_assert_ptr_nonnull(strstr(slurp(err_path), "no scenario file"));
    ck_assert_int_eq(sim("--bogus test/data/sim/basic.yaml"), 2);
    ck_assert_int_eq(sim("--until soon test/data/sim/basic.yaml"), 2);
    ck_assert_int_eq(sim("--events"), 2);
    ck_assert_int_eq(sim("test/data/sim/does-not-exist.yaml"), 2);
    ck_assert_int_eq(sim("--events - --summary - test/data/sim/basic.yaml"), 2);
    ck_assert_int_eq(sim("--events /nonexistent-dir/x.jsonl test/data/sim/basic.yaml"), 2);
}
END_TEST

START_TEST(test_invalid_scenario_exit_1_and_runs_nothing)
{
    char args[512], events[300];

    snprintf(events, sizeof(events), "%s.jsonl", out_path);
    snprintf(args, sizeof(args), "--events '%s' test/data/sim/invalid.yaml", events);
    ck_assert_int_eq(sim(args), 1);
    const char *err = slurp(err_path);
    ck_assert_ptr_nonnull(strstr(err, "doc 2 (ClusterQueue cq-a): spec.resourceGroups[0]."
                                      "flavors[0].resources[0].nominalQuota: invalid quantity "
                                      "\"12x\""));
    ck_assert_ptr_nonnull(strstr(err, "doc 3 (Job team-a/j): metadata.annotations[sim.sluice.dev/"
                                      "runtime]: duration \"10 minutes\""));
    ck_assert_ptr_nonnull(strstr(err, "doc 4 (CronJob nightly): kind: "));
    ck_assert_ptr_nonnull(strstr(err, "nothing was run"));
    ck_assert_ptr_null(slurp(events)); /* not even created */
    ck_assert_str_eq(slurp(out_path), "");
}
END_TEST

START_TEST(test_outputs_go_where_asked)
{
    const char *src = getenv("SLUICE_SOURCE_DIR");
    char golden[512], want[1 << 14];
    FILE *f;
    size_t n;

    /* Default: the human summary on stdout, nothing on stderr (not a terminal: no progress). */
    ck_assert_int_eq(sim("test/data/sim/basic.yaml"), 0);
    ck_assert_ptr_nonnull(strstr(slurp(out_path), "ClusterQueue"));
    ck_assert_str_eq(slurp(err_path), "");
    /* --events -: exactly the JSON Lines on stdout. */
    ck_assert_int_eq(sim("--events - test/data/sim/basic.yaml"), 0);
    snprintf(golden, sizeof(golden), "%s/test/data/sim/basic.jsonl", src != NULL ? src : "..");
    f = fopen(golden, "rb");
    ck_assert_ptr_nonnull(f);
    n = fread(want, 1, sizeof(want) - 1, f);
    want[n] = '\0';
    fclose(f);
    ck_assert_str_eq(slurp(out_path), want);
    /* --events without FILE (before or after the scenario) is standard output too. */
    ck_assert_int_eq(sim("--events test/data/sim/basic.yaml"), 0);
    ck_assert_str_eq(slurp(out_path), want);
    ck_assert_int_eq(sim("test/data/sim/basic.yaml --events"), 0);
    ck_assert_str_eq(slurp(out_path), want);
    ck_assert_int_eq(sim("--events test/data/sim/basic.yaml --until 1h"), 0);
    ck_assert_str_eq(slurp(out_path), want);
    /* --events FILE and --events=FILE write the file; stdout gets the human summary. */
    ck_assert_int_eq(sim("--events /dev/null test/data/sim/basic.yaml"), 0);
    ck_assert_ptr_nonnull(strstr(slurp(out_path), "ClusterQueue"));
    ck_assert_int_eq(sim("--events=/dev/null test/data/sim/basic.yaml"), 0);
    ck_assert_ptr_nonnull(strstr(slurp(out_path), "ClusterQueue"));
    /* --quiet: nothing at all. */
    ck_assert_int_eq(sim("--quiet test/data/sim/basic.yaml"), 0);
    ck_assert_str_eq(slurp(out_path), "");
    /* --summary -: the JSON document on stdout. */
    ck_assert_int_eq(sim("--summary - test/data/sim/basic.yaml"), 0);
    ck_assert_ptr_nonnull(strstr(slurp(out_path), "\"makespan\": 1200"));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("sim_cmd");
    TCase *tc = tcase_create("core");
    SRunner *sr;
    int failed;

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_help_tells_every_flag);
    tcase_add_test(tc, test_usage_errors_exit_2);
    tcase_add_test(tc, test_invalid_scenario_exit_1_and_runs_nothing);
    tcase_add_test(tc, test_outputs_go_where_asked);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
