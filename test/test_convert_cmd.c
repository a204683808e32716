/* test_convert_cmd -- `sluice convert` end to end: the built binary on v1beta1 manifests, its
 * output accepted by `sluice check`, warnings, errors and exit codes. */
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
 * its messages are the relative paths given on the command line.
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
    char name[] = "/tmp/sluice-convert-test-XXXXXX";
    int fd = mkstemp(name);

    ck_assert_int_ge(fd, 0);
    unlink(name);
    return fd;
}

/* Run `sluice SUBCOMMAND ARGS...` (NULL-terminated) with `stdin_path` (NULL: /dev/null). */
static result_t run(const char *stdin_path, const char *sub, ...)
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
    argv[argc++] = sub;
    va_start(ap, sub);
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
    ck_assert_msg(WIFEXITED(status), "sluice %s did not exit normally", sub);
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

/* A scratch file name under /tmp (removed by the caller). */
static void scratch(char *buf, size_t size, const char *tag)
{
    snprintf(buf, size, "/tmp/sluice-convert-test-%s-%ld.yaml", tag, (long)getpid());
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");

    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(fputs(text, f) >= 0, 1);
    ck_assert_int_eq(fclose(f), 0);
}

static char *read_file(const char *path)
{
    int fd = open(path, O_RDONLY);
    char *s;

    ck_assert_int_ge(fd, 0);
    s = slurp(fd);
    close(fd);
    return s;
}

#define D "test/data/convert/"

START_TEST(converts_and_check_accepts)
{
    char out[256];
    result_t r, c;

    scratch(out, sizeof(out), "out");
    r = run(NULL, "convert", D "kueue-v1beta1.yaml", D "kubectl-list.yaml", NULL);
    ck_assert_msg(r.rc == 0, "%s", r.err);
    /* Every Kueue object is v1beta2 with v1beta2's names; the Namespace passes through. */
    ck_assert_ptr_null(strstr(r.out, "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue"));
    ck_assert_ptr_nonnull(
        strstr(r.out, "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor"));
    ck_assert_ptr_nonnull(strstr(r.out, "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Cohort"));
    ck_assert_ptr_nonnull(
        strstr(r.out, "apiVersion: kueue.x-k8s.io/v1beta2\nkind: WorkloadPriorityClass"));
    ck_assert_ptr_nonnull(
        strstr(r.out, "spec:\n  cohortName: research\n  namespaceSelector: {}\n"));
    ck_assert_ptr_nonnull(strstr(r.out, "  flavorFungibility:\n    whenCanBorrow: MayStopSearch\n"
                                        "    whenCanPreempt: MayStopSearch\n"));
    ck_assert_ptr_nonnull(strstr(r.out, "  priorityClassRef:\n    group: kueue.x-k8s.io\n"
                                        "    kind: WorkloadPriorityClass\n    name: high\n"));
    ck_assert_ptr_null(strstr(r.out, "priorityClassSource"));
    ck_assert_ptr_nonnull(strstr(r.out, "nominalQuota: 512Gi\n"));
    ck_assert_ptr_nonnull(strstr(r.out, "cpu: '8'\n"));
    ck_assert_ptr_nonnull(strstr(r.out, "apiVersion: v1\nkind: Namespace\n"));
    /* The List's ClusterQueue item converted, its AdmissionCheck kept with a warning. */
    ck_assert_ptr_nonnull(strstr(r.out, "    admissionChecksStrategy:\n      admissionChecks:\n"
                                        "      - name: provisioning\n"));
    ck_assert_ptr_nonnull(strstr(r.out, "- apiVersion: kueue.x-k8s.io/v1beta1\n  kind: "
                                        "AdmissionCheck\n"));
    ck_assert_ptr_null(strstr(r.out, "pendingWorkloadsStatus"));
    ck_assert_str_eq(
        r.err,
        D "kueue-v1beta1.yaml: doc 4: warning: spec.flavorFungibility.whenCanBorrow: Borrow -> "
          "MayStopSearch (v1beta2 has no Borrow)\n" D
          "kueue-v1beta1.yaml: doc 4: warning: spec.flavorFungibility.whenCanPreempt: Preempt -> "
          "MayStopSearch (v1beta2 has no Preempt)\n" D
          "kubectl-list.yaml: doc 1: warning: items[0]: status.pendingWorkloadsStatus: dropped: "
          "kueue.x-k8s.io/v1beta2 has no such field (Kueue's conversion drops it too)\n" D
          "kubectl-list.yaml: doc 1: warning: items[1]: AdmissionCheck kueue.x-k8s.io/v1beta1 is "
          "left as it is: sluice converts ClusterQueue, LocalQueue, Workload, ResourceFlavor, "
          "Cohort and WorkloadPriorityClass only\n"
          "sluice convert: 8 documents in 2 files: 7 converted, 4 warnings\n");
    result_fini(&r);

    /* -o FILE, and `sluice check` accepts what was written. */
    r = run(NULL, "convert", "-q", "-o", out, D "kueue-v1beta1.yaml", NULL);
    ck_assert_int_eq(r.rc, 0);
    ck_assert_str_eq(r.out, "");
    c = run(NULL, "check", out, NULL);
    ck_assert_msg(c.rc == 0, "sluice check refused the converted manifests:\n%s%s", c.out, c.err);
    ck_assert_ptr_nonnull(strstr(c.err, "7 objects in 1 file: ok"));
    result_fini(&c);
    result_fini(&r);

    /* Converting the result again changes nothing (and -o may name the input). */
    {
        char *before = read_file(out), *after;
        r = run(NULL, "convert", "-q", "-o", out, out, NULL);
        ck_assert_int_eq(r.rc, 0);
        ck_assert_str_eq(r.err, "");
        after = read_file(out);
        ck_assert_str_eq(after, before);
        free(before);
        free(after);
        result_fini(&r);
    }
    unlink(out);
}
END_TEST

START_TEST(stdin_json_and_passthrough)
{
    char in[256];
    result_t r;

    scratch(in, sizeof(in), "in");
    write_file(in, "{\"apiVersion\":\"kueue.x-k8s.io/v1beta1\",\"kind\":\"Workload\",\"metadata\":"
                   "{\"name\":\"w\",\"namespace\":\"ml\"},\"spec\":{\"podSets\":[]},\"status\":"
                   "{\"accumulatedPastExexcutionTimeSeconds\":30}}\n"
                   "---\n"
                   "apiVersion: config.kueue.x-k8s.io/v1beta1\nkind: Configuration\n"
                   "namespace: kueue-system\n"
                   "---\n"
                   "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\n");
    r = run(in, "convert", "-", NULL);
    ck_assert_msg(r.rc == 0, "%s", r.err);
    ck_assert_str_eq(r.out, "apiVersion: kueue.x-k8s.io/v1beta2\n"
                            "kind: Workload\n"
                            "metadata:\n"
                            "  name: w\n"
                            "  namespace: ml\n"
                            "spec:\n"
                            "  podSets: []\n"
                            "status:\n"
                            "  accumulatedPastExecutionTimeSeconds: 30\n"
                            "---\n"
                            "apiVersion: config.kueue.x-k8s.io/v1beta1\n"
                            "kind: Configuration\n"
                            "namespace: kueue-system\n"
                            "---\n"
                            "apiVersion: batch/v1\n"
                            "kind: Job\n"
                            "metadata:\n"
                            "  name: j\n");
    ck_assert_ptr_nonnull(strstr(r.err, "<stdin>: doc 2: warning: Configuration "
                                        "config.kueue.x-k8s.io/v1beta1 is left as it is"));
    ck_assert_ptr_nonnull(strstr(r.err, "3 documents in 1 file: 1 converted, 1 warning\n"));
    result_fini(&r);
    unlink(in);
}
END_TEST

START_TEST(errors_write_nothing)
{
    char out[256], bad[256];
    result_t r;

    scratch(out, sizeof(out), "never");
    unlink(out);
    r = run(NULL, "convert", "-o", out, D "kueue-v1beta1.yaml", D "bad-v1beta1.yaml", NULL);
    ck_assert_int_eq(r.rc, 1);
    ck_assert_str_eq(r.out, "");
    ck_assert_ptr_nonnull(strstr(
        r.err, D "bad-v1beta1.yaml: doc 2: Workload ml/bad: spec.priorityClassSource: Unsupported "
                 "value: \"example.com/priorityclass\""));
    ck_assert_ptr_nonnull(strstr(r.err, "1 error (nothing written)\n"));
    ck_assert_int_ne(access(out, F_OK), 0);
    result_fini(&r);

    /* Malformed YAML, a missing file, a directory: exit 2, nothing written. */
    scratch(bad, sizeof(bad), "bad");
    write_file(bad, "a: [1,\n");
    r = run(NULL, "convert", bad, NULL);
    ck_assert_int_eq(r.rc, 2);
    ck_assert_str_eq(r.out, "");
    ck_assert_ptr_nonnull(strstr(r.err, "line 2"));
    result_fini(&r);
    unlink(bad);
    r = run(NULL, "convert", D "kueue-v1beta1.yaml", "no-such-file.yaml", NULL);
    ck_assert_int_eq(r.rc, 2);
    ck_assert_str_eq(r.out, "");
    ck_assert_ptr_nonnull(strstr(r.err, "no-such-file.yaml: No such file or directory"));
    result_fini(&r);
    r = run(NULL, "convert", "test/data/convert", NULL);
    ck_assert_int_eq(r.rc, 2);
    ck_assert_ptr_nonnull(strstr(r.err, "is a directory"));
    result_fini(&r);
    /* Usage. */
    r = run(NULL, "convert", NULL);
    ck_assert_int_eq(r.rc, 2);
    ck_assert_ptr_nonnull(strstr(r.err, "no FILE given"));
    result_fini(&r);
    r = run(NULL, "convert", "-o", NULL);
    ck_assert_int_eq(r.rc, 2);
    ck_assert_ptr_nonnull(strstr(r.err, "-o needs a FILE"));
    result_fini(&r);
    r = run(NULL, "convert", "--bogus", "x", NULL);
    ck_assert_int_eq(r.rc, 2);
    result_fini(&r);
    r = run(NULL, "convert", "--help", NULL);
    ck_assert_int_eq(r.rc, 0);
    ck_assert_ptr_nonnull(strstr(r.out, "usage: sluice convert"));
    result_fini(&r);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("convert_cmd");
    TCase *tc = tcase_create("core");
    SRunner *sr;
    int failed;

    tcase_add_test(tc, converts_and_check_accepts);
    tcase_add_test(tc, stdin_json_and_passthrough);
    tcase_add_test(tc, errors_write_nothing);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
