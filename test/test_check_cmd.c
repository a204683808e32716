/* test_check_cmd -- `sluice check` end to end: the built binary on fixtures and the examples. */
/* SPDX-License-Identifier: Apache-2.0 */
#include <check.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/*
 * The binary is $SLUICE_BINARY_DIR/sluice; it runs in $SLUICE_SOURCE_DIR so that file names in
 * its output are the relative paths given on the command line.
 */

typedef struct result_s {
    int rc;
    char *out; /* owned */
    char *err; /* owned */
} result_t;

static char *slurp(int fd)
{
    size_t cap = 4096, len = 0;
    char *s = malloc(cap);
    ssize_t n;

    ck_assert_ptr_nonnull(s);
    lseek(fd, 0, SEEK_SET);
    while ((n = read(fd, s + len, cap - len - 1)) > 0) {
        len += (size_t)n;
        if (cap - len < 2) {
            cap *= 2;
            s = realloc(s, cap);
            ck_assert_ptr_nonnull(s);
        }
    }
    s[len] = '\0';
    return s;
}

static int temp_fd(void)
{
    char name[] = "/tmp/sluice-check-test-XXXXXX";
    int fd = mkstemp(name);

    ck_assert_int_ge(fd, 0);
    unlink(name);
    return fd;
}

/* Run `sluice check ARGS...` (NULL-terminated) with `stdin_path` (NULL: /dev/null) as input. */
static result_t run(const char *stdin_path, ...)
{
    const char *bin_dir = getenv("SLUICE_BINARY_DIR"), *src_dir = getenv("SLUICE_SOURCE_DIR");
    char bin[4096];
    const char *argv[32];
    int argc = 0, out_fd = temp_fd(), err_fd = temp_fd(), status;
    result_t r;
    va_list ap;
    pid_t pid;

    ck_assert_msg(bin_dir != NULL && src_dir != NULL,
                  "SLUICE_BINARY_DIR and SLUICE_SOURCE_DIR must be set (ctest sets them)");
    snprintf(bin, sizeof(bin), "%s/sluice", bin_dir);
    argv[argc++] = bin;
    argv[argc++] = "check";
    va_start(ap, stdin_path);
    for (const char *a = va_arg(ap, const char *); a != NULL; a = va_arg(ap, const char *)) {
        ck_assert_int_lt(argc, 31);
        argv[argc++] = a;
    }
    va_end(ap);
    argv[argc] = NULL;

    pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        int in = open(stdin_path ? stdin_path : "/dev/null", O_RDONLY);
        if (in < 0 || chdir(src_dir) != 0)
            _exit(127);
        dup2(in, 0);
        dup2(out_fd, 1);
        dup2(err_fd, 2);
        execv(bin, (char *const *)argv);
        _exit(127);
    }
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert_msg(WIFEXITED(status), "sluice check did not exit normally");
    r.rc = WEXITSTATUS(status);
    ck_assert_msg(r.rc != 127, "could not run %s", bin);
    r.out = slurp(out_fd);
    r.err = slurp(err_fd);
    close(out_fd);
    close(err_fd);
    return r;
}

static void result_fini(result_t *r)
{
    free(r->out);
    free(r->err);
}

#define D "test/data/check/"

START_TEST(examples_pass)
{
    result_t r = run(NULL, "examples/platform", NULL);

    ck_assert_msg(r.rc == 0, "examples/platform must pass:\n%s%s", r.out, r.err);
    ck_assert_str_eq(r.out, "");
    ck_assert_str_eq(r.err, "sluice check: 20 objects in 7 files: ok\n");
    result_fini(&r);

    /* The same files named one by one, quietly. */
    r = run(NULL, "--quiet", "examples/platform/00-namespaces.yaml",
            "examples/platform/10-flavors.yaml", "examples/platform/20-priorities.yaml",
            "examples/platform/30-cohort.yaml", "examples/platform/40-clusterqueues.yaml",
            "examples/platform/50-localqueues.yaml", "examples/platform/60-jobs.yaml", NULL);
    ck_assert_int_eq(r.rc, 0);
    ck_assert_str_eq(r.out, "");
    ck_assert_str_eq(r.err, "");
    result_fini(&r);
}
END_TEST

START_TEST(invalid_lines)
{
    result_t r = run(NULL, D "invalid.yaml", NULL);

    ck_assert_int_eq(r.rc, 1);
    ck_assert_str_eq(
        r.out,
        D "invalid.yaml: doc 2 (ClusterQueue research): "
          "spec.resourceGroups[0].flavors[0].resources[1].lendingLimit: must be nil when cohort "
          "is empty\n" D "invalid.yaml: doc 2 (ClusterQueue research): "
          "spec.resourceGroups[0].flavors[1].resources[1].lendingLimit: must be nil when cohort "
          "is empty\n" D "invalid.yaml: doc 2 (ClusterQueue research): "
          "spec.resourceGroups[0].flavors[1].resources[1].lendingLimit: must be less than or "
          "equal to the nominalQuota\n" D "invalid.yaml: doc 2 (ClusterQueue research): "
          "spec.resourceGroups[0].flavors[1].name: references missing ResourceFlavor \"h100\"\n" D
          "invalid.yaml: doc 3 (LocalQueue research/default): spec.clusterQueue: references "
          "missing ClusterQueue \"reserch\"\n" D "invalid.yaml: doc 4 (ClusterQueue broken): "
          "spec.resourceGroups[0].flavors[0].resources[0].nominalQuota: invalid quantity "
          "\"12x\"\n" D "invalid.yaml: doc 6 (Job research/sweep): warning: "
          "metadata.labels[kueue.x-k8s.io/priority-class]: references missing "
          "WorkloadPriorityClass \"experiments\" (Kueue will not create the Workload)\n");
    ck_assert_str_eq(r.err, "sluice check: 6 objects in 1 file: 6 errors, 1 warning\n");
    result_fini(&r);
}
END_TEST

START_TEST(cohort_cycle)
{
    result_t r = run(NULL, "-q", D "cycle.yaml", NULL);

    ck_assert_int_eq(r.rc, 1);
    ck_assert_str_eq(r.out,
                     D "cycle.yaml: doc 1 (Cohort org): spec.parentName: cohort cycle org -> "
                       "division -> org: Kueue admits no workloads in a cohort cycle\n" D
                       "cycle.yaml: doc 2 (Cohort division): spec.parentName: cohort cycle "
                       "division -> org -> division: Kueue admits no workloads in a cohort "
                       "cycle\n" D "cycle.yaml: doc 3 (ClusterQueue team): spec.cohortName: "
                       "cohort \"org\" is in the cohort cycle org -> division -> org: Kueue "
                       "admits no workloads in a cohort cycle\n");
    ck_assert_str_eq(r.err, "");
    result_fini(&r);
}
END_TEST

START_TEST(warnings_do_not_fail)
{
    result_t r = run(NULL, D "warnings.yaml", NULL);

    ck_assert_int_eq(r.rc, 0);
    ck_assert_str_eq(r.out, D "warnings.yaml: doc 2 (LocalQueue team-a/default): warning: "
                              "spec.clusterQueue: ClusterQueue \"closed\" has no "
                              "namespaceSelector, so it admits no workloads (use "
                              "namespaceSelector: {} for every namespace)\n");
    ck_assert_str_eq(r.err, "sluice check: 2 objects in 1 file: ok, 1 warning\n");
    result_fini(&r);
}
END_TEST

START_TEST(cross_file_references)
{
    result_t r = run(NULL, D "queue.json", NULL);

    ck_assert_int_eq(r.rc, 1);
    ck_assert_str_eq(r.out, D "queue.json: doc 1 (ClusterQueue inference): "
                              "spec.resourceGroups[0].flavors[0].name: references missing "
                              "ResourceFlavor \"l4\"\n");
    result_fini(&r);
    r = run(NULL, D "queue.json", D "flavors.yaml", NULL);
    ck_assert_int_eq(r.rc, 0);
    ck_assert_str_eq(r.out, "");
    ck_assert_str_eq(r.err, "sluice check: 2 objects in 2 files: ok\n");
    result_fini(&r);
}
END_TEST

START_TEST(stdin_input)
{
    const char *src = getenv("SLUICE_SOURCE_DIR");
    char path[4096];
    result_t r;

    ck_assert_ptr_nonnull(src);
    snprintf(path, sizeof(path), "%s/" D "queue.json", src);
    r = run(path, "-", D "flavors.yaml", NULL);
    ck_assert_int_eq(r.rc, 0);
    ck_assert_str_eq(r.err, "sluice check: 2 objects in 2 files: ok\n");
    result_fini(&r);
    r = run(path, "-", NULL);
    ck_assert_int_eq(r.rc, 1);
    ck_assert_str_eq(r.out, "<stdin>: doc 1 (ClusterQueue inference): "
                            "spec.resourceGroups[0].flavors[0].name: references missing "
                            "ResourceFlavor \"l4\"\n");
    result_fini(&r);
}
END_TEST

START_TEST(kubectl_lists)
{
    const char *src = getenv("SLUICE_SOURCE_DIR");
    char path[4096];
    result_t r;

    /* A List from kubectl, on standard input: its items are the objects (the flavor they
     * reference is among them). */
    ck_assert_ptr_nonnull(src);
    snprintf(path, sizeof(path), "%s/" D "list.yaml", src);
    r = run(path, "-", NULL);
    ck_assert_int_eq(r.rc, 1);
    ck_assert_str_eq(r.out, "<stdin>: doc 1 (ClusterQueue gpu): spec.queueingStrategy: "
                            "Unsupported value: \"Wrong\": supported values: \"BestEffortFIFO\", "
                            "\"StrictFIFO\"\n");
    ck_assert_str_eq(r.err, "sluice check: 2 objects in 1 file: 1 error\n");
    result_fini(&r);
}
END_TEST

START_TEST(scenario_updates)
{
    result_t r = run(NULL, "-q", D "scenario.yaml", NULL);

    ck_assert_int_eq(r.rc, 1);
    ck_assert_str_eq(r.out, D "scenario.yaml: doc 4 (ClusterQueue cq): metadata.name: Duplicate "
                              "value: \"cq\": also defined by " D "scenario.yaml doc 2\n" D
                              "scenario.yaml: doc 5 (LocalQueue ns/q): metadata.name: Duplicate "
                              "value: \"q\": also defined by " D "scenario.yaml doc 3\n");
    result_fini(&r);
    r = run(NULL, "-q", "--scenario", D "scenario.yaml", NULL);
    ck_assert_int_eq(r.rc, 1);
    ck_assert_str_eq(r.out, D "scenario.yaml: doc 5 (LocalQueue ns/q): spec.clusterQueue: field "
                              "is immutable\n");
    result_fini(&r);
}
END_TEST

/* Workload status updates go through Kueue's update rules (reclaimable pods, podSetUpdates of
 * a Ready check, clusterName) when --scenario reads the second document as an update. */
START_TEST(workload_status_updates)
{
    result_t r = run(NULL, "-q", "--scenario", D "workload-status.yaml", NULL);

    ck_assert_int_eq(r.rc, 1);
    ck_assert_str_eq(r.out,
                     D "workload-status.yaml: doc 5 (Workload ns/train): "
                       "status.reclaimablePods[workers]: Required value: cannot be removed\n" D
                       "workload-status.yaml: doc 5 (Workload ns/train): "
                       "status.admissionChecks[0].podSetUpdates: field is immutable\n" D
                       "workload-status.yaml: doc 5 (Workload ns/train): "
                       "status.clusterName: when setting clusterName it must be one of the "
                       "nominatedClusterNames\n");
    result_fini(&r);
}
END_TEST

START_TEST(io_errors)
{
    result_t r = run(NULL, D "no-such-file.yaml", NULL);

    ck_assert_int_eq(r.rc, 2);
    ck_assert_str_eq(r.out, "");
    ck_assert_str_eq(r.err, "sluice check: " D "no-such-file.yaml: No such file or directory\n"
                            "sluice check: 0 objects in 0 files: 0 errors; 1 file could not be "
                            "read\n");
    result_fini(&r);

    /* A syntax error names the file and line; the documents before it are still checked, and
     * a read error outranks invalid objects in the exit status. */
    r = run(NULL, D "syntax-error.yaml", D "cycle.yaml", NULL);
    ck_assert_int_eq(r.rc, 2);
    ck_assert_ptr_nonnull(strstr(r.err, "sluice check: " D "syntax-error.yaml: line 10, column "
                                        "1: "));
    ck_assert_ptr_nonnull(strstr(r.out, D "cycle.yaml: doc 1 (Cohort org)"));
    ck_assert_ptr_nonnull(strstr(r.err, "sluice check: 4 objects in 2 files: 3 errors; 1 file "
                                        "could not be read\n"));
    result_fini(&r);
}
END_TEST

START_TEST(usage)
{
    result_t r = run(NULL, "--help", NULL);

    ck_assert_int_eq(r.rc, 0);
    ck_assert_ptr_nonnull(strstr(r.out, "usage: sluice check [options] FILE..."));
    ck_assert_ptr_nonnull(strstr(r.out, "--quiet"));
    ck_assert_ptr_nonnull(strstr(r.out, "--scenario"));
    ck_assert_ptr_nonnull(strstr(r.out, "--help"));
    ck_assert_ptr_nonnull(strstr(r.out, "exit status"));
    result_fini(&r);

    r = run(NULL, NULL);
    ck_assert_int_eq(r.rc, 2);
    ck_assert_ptr_nonnull(strstr(r.err, "sluice check: no FILE given"));
    result_fini(&r);

    r = run(NULL, "--bogus", D "flavors.yaml", NULL);
    ck_assert_int_eq(r.rc, 2);
    ck_assert_ptr_nonnull(strstr(r.err, "sluice check: unknown option '--bogus'"));
    result_fini(&r);
}
END_TEST

static Suite *check_cmd_suite(void)
{
    Suite *s = suite_create("check_cmd");
    TCase *tc = tcase_create("check_cmd");

    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, examples_pass);
    tcase_add_test(tc, invalid_lines);
    tcase_add_test(tc, cohort_cycle);
    tcase_add_test(tc, warnings_do_not_fail);
    tcase_add_test(tc, cross_file_references);
    tcase_add_test(tc, stdin_input);
    tcase_add_test(tc, kubectl_lists);
    tcase_add_test(tc, scenario_updates);
    tcase_add_test(tc, workload_status_updates);
    tcase_add_test(tc, io_errors);
    tcase_add_test(tc, usage);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(check_cmd_suite());
    int failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
