/* test_convert_cmd -- `sluice convert` end to end: the built binary on v1beta1 manifests, its
 * output accepted by `sluice check`, warnings, errors and exit codes. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "sluice_exec.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

#define D "test/data/convert/"

START_TEST(converts_and_check_accepts)
{
    char out[256];
    sluice_result_t r, c;

    scratch(out, sizeof(out), "out");
    r = sluice_exec(NULL, "convert", D "kueue-v1beta1.yaml", D "kubectl-list.yaml", NULL);
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
    sluice_result_fini(&r);

    /* -o FILE, and `sluice check` accepts what was written. */
    r = sluice_exec(NULL, "convert", "-q", "-o", out, D "kueue-v1beta1.yaml", NULL);
    ck_assert_int_eq(r.rc, 0);
    ck_assert_str_eq(r.out, "");
    c = sluice_exec(NULL, "check", out, NULL);
    ck_assert_msg(c.rc == 0, "sluice check refused the converted manifests:\n%s%s", c.out, c.err);
    ck_assert_ptr_nonnull(strstr(c.err, "7 objects in 1 file: ok"));
    sluice_result_fini(&c);
    sluice_result_fini(&r);

    /* Converting the result again changes nothing (and -o may name the input). */
    {
        char *before = sluice_read_file(out), *after;
        r = sluice_exec(NULL, "convert", "-q", "-o", out, out, NULL);
        ck_assert_int_eq(r.rc, 0);
        ck_assert_str_eq(r.err, "");
        after = sluice_read_file(out);
        ck_assert_str_eq(after, before);
        free(before);
        free(after);
        sluice_result_fini(&r);
    }
    unlink(out);
}
END_TEST

START_TEST(stdin_json_and_passthrough)
{
    char in[256];
    sluice_result_t r;

    scratch(in, sizeof(in), "in");
    write_file(in, "{\"apiVersion\":\"kueue.x-k8s.io/v1beta1\",\"kind\":\"Workload\",\"metadata\":"
                   "{\"name\":\"w\",\"namespace\":\"ml\"},\"spec\":{\"podSets\":[]},\"status\":"
                   "{\"accumulatedPastExexcutionTimeSeconds\":30}}\n"
                   "---\n"
                   "apiVersion: config.kueue.x-k8s.io/v1beta1\nkind: Configuration\n"
                   "namespace: kueue-system\n"
                   "---\n"
                   "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\n");
    r = sluice_exec(in, "convert", "-", NULL);
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
    sluice_result_fini(&r);
    unlink(in);
}
END_TEST

START_TEST(errors_write_nothing)
{
    char out[256], bad[256];
    sluice_result_t r;

    scratch(out, sizeof(out), "never");
    unlink(out);
    r = sluice_exec(NULL, "convert", "-o", out, D "kueue-v1beta1.yaml", D "bad-v1beta1.yaml", NULL);
    ck_assert_int_eq(r.rc, 1);
    ck_assert_str_eq(r.out, "");
    ck_assert_ptr_nonnull(strstr(
        r.err, D "bad-v1beta1.yaml: doc 2: Workload ml/bad: spec.priorityClassSource: Unsupported "
                 "value: \"example.com/priorityclass\""));
    ck_assert_ptr_nonnull(strstr(r.err, "1 error (nothing written)\n"));
    ck_assert_int_ne(access(out, F_OK), 0);
    sluice_result_fini(&r);

    /* Malformed YAML, a missing file, a directory: exit 2, nothing written. */
    scratch(bad, sizeof(bad), "bad");
    write_file(bad, "a: [1,\n");
    r = sluice_exec(NULL, "convert", bad, NULL);
    ck_assert_int_eq(r.rc, 2);
    ck_assert_str_eq(r.out, "");
    ck_assert_ptr_nonnull(strstr(r.err, "line 2"));
    sluice_result_fini(&r);
    unlink(bad);
    r = sluice_exec(NULL, "convert", D "kueue-v1beta1.yaml", "no-such-file.yaml", NULL);
    ck_assert_int_eq(r.rc, 2);
    ck_assert_str_eq(r.out, "");
    ck_assert_ptr_nonnull(strstr(r.err, "no-such-file.yaml: No such file or directory"));
    sluice_result_fini(&r);
    r = sluice_exec(NULL, "convert", "test/data/convert", NULL);
    ck_assert_int_eq(r.rc, 2);
    ck_assert_ptr_nonnull(strstr(r.err, "is a directory"));
    sluice_result_fini(&r);
    /* Usage. */
    r = sluice_exec(NULL, "convert", NULL);
    ck_assert_int_eq(r.rc, 2);
    ck_assert_ptr_nonnull(strstr(r.err, "no FILE given"));
    sluice_result_fini(&r);
    r = sluice_exec(NULL, "convert", "-o", NULL);
    ck_assert_int_eq(r.rc, 2);
    ck_assert_ptr_nonnull(strstr(r.err, "-o needs a FILE"));
    sluice_result_fini(&r);
    r = sluice_exec(NULL, "convert", "--bogus", "x", NULL);
    ck_assert_int_eq(r.rc, 2);
    sluice_result_fini(&r);
    r = sluice_exec(NULL, "convert", "--help", NULL);
    ck_assert_int_eq(r.rc, 0);
    ck_assert_ptr_nonnull(strstr(r.out, "usage: sluice convert"));
    sluice_result_fini(&r);
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
