/* test_obs_logfmt -- log lines as text and as JSON: object references, reasons, escaping, and
 * truncation that keeps each line valid JSON. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "obs/logfmt.h"

#include <check.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#define T0 1796188200123LL /* 2026-12-02T05:10:00.123Z */

/* Format `text` as JSON, check it is one valid JSON object on one line, return it (decref). */
static json_t *json_of(const char *text, size_t n)
{
    char *buf = malloc(n);
    size_t len = logfmt_line(LOGFMT_JSON, T0, "info", text, buf, n);
    json_error_t e;
    json_t *j;

    ck_assert_uint_lt(len, n);
    ck_assert_uint_eq(strlen(buf), len);
    ck_assert_msg(len > 0 && buf[len - 1] == '\n', "no newline: %s", buf);
    ck_assert_ptr_null(memchr(buf, '\n', len - 1));
    j = json_loadb(buf, len, 0, &e);
    ck_assert_msg(j != NULL && json_is_object(j), "not JSON (%s): %s", e.text, buf);
    free(buf);
    return j;
}

static const char *str(json_t *j, const char *path1, const char *path2)
{
    json_t *v = json_object_get(j, path1);
    if (path2 != NULL)
        v = json_object_get(v, path2);
    return json_string_value(v);
}

START_TEST(text_format)
{
    char buf[256];

    logfmt_line(LOGFMT_TEXT, T0, "info", "workload ns/w: admitted to gpu", buf, sizeof(buf));
    ck_assert_str_eq(buf, "2026-12-02T05:10:00.123Z info  workload ns/w: admitted to gpu\n");
    logfmt_line(LOGFMT_TEXT, T0, "error", "x", buf, 10);
    ck_assert_uint_eq(strlen(buf), 9);
}
END_TEST

START_TEST(admission_preemption_eviction)
{
    json_t *j = json_of("workload team-a/job-train-5x2k9: admitted to gpu (borrowing)", 4096);

    ck_assert_str_eq(str(j, "ts", NULL), "2026-12-02T05:10:00.123Z");
    ck_assert_str_eq(str(j, "level", NULL), "info");
    ck_assert_str_eq(str(j, "msg", NULL),
                     "workload team-a/job-train-5x2k9: admitted to gpu (borrowing)");
    ck_assert_str_eq(str(j, "workload", "name"), "job-train-5x2k9");
    ck_assert_str_eq(str(j, "workload", "namespace"), "team-a");
    ck_assert_str_eq(str(j, "reason", NULL), "Admitted");
    ck_assert_str_eq(str(j, "clusterQueue", NULL), "gpu");
    json_decref(j);

    j = json_of("workload ns/w: Preempted: Preempted to accommodate a workload (UID: 1) due to "
                "prioritization in the ClusterQueue",
                4096);
    ck_assert_str_eq(str(j, "reason", NULL), "Preempted");
    ck_assert_str_eq(str(j, "workload", "name"), "w");
    ck_assert_ptr_null(json_object_get(j, "clusterQueue"));
    json_decref(j);

    j = json_of("workload ns/w: PodsReadyTimeout (Exceeded the PodsReady timeout ns/w), requeue #1",
                4096);
    ck_assert_str_eq(str(j, "reason", NULL), "PodsReadyTimeout");
    json_decref(j);

    j = json_of("jobset ns/js: started", 4096);
    ck_assert_str_eq(str(j, "jobset", "name"), "js");
    ck_assert_ptr_null(json_object_get(j, "reason"));
    json_decref(j);

    j = json_of("clusterqueue gpu: Stopped", 4096);
    ck_assert_str_eq(str(j, "clusterqueue", "name"), "gpu");
    ck_assert_ptr_null(str(j, "clusterqueue", "namespace"));
    ck_assert_str_eq(str(j, "reason", NULL), "Stopped");
    json_decref(j);
}
END_TEST

/* Messages that merely look like "<word> <word>: ..." carry no reference. */
START_TEST(no_false_references)
{
    static const char *const texts[] = {
        "caches synced: 5 workloads, 3 jobs, 1 cluster queues",
        "leader election: sluice_1 acquired the lease",
        "integration kubeflow.org/tfjob skipped: the API server does not serve ...",
        "workload a/b/c: three parts",
        "workload /b: no namespace",
        "workload a/: no name",
        "Workload ns/w: upper case kind",
        "",
    };

    for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
        json_t *j = json_of(texts[i], 4096);
        ck_assert_msg(json_object_size(j) == 3, "%s: %zu fields", texts[i], json_object_size(j));
        ck_assert_str_eq(str(j, "msg", NULL), texts[i]);
        json_decref(j);
    }
}
END_TEST

START_TEST(escaped)
{
    json_t *j = json_of("workload ns/w: Failed: \"quoted\" \\ back\nnew\tline \x01 end", 4096);

    ck_assert_str_eq(str(j, "msg", NULL),
                     "workload ns/w: Failed: \"quoted\" \\ back\nnew\tline \x01 end");
    ck_assert_str_eq(str(j, "reason", NULL), "Failed");
    json_decref(j);
}
END_TEST

/* Every buffer size from tiny to ample gives one valid JSON line; escapes are never cut. */
START_TEST(truncation_keeps_json)
{
    const char *text = "workload ns/w: Preempted: \"a\" \\ \n\x02 and a long tail of words";

    for (size_t n = 4; n < 300; n++) {
        json_t *j = json_of(text, n);
        const char *msg = str(j, "msg", NULL);
        if (msg != NULL)
            ck_assert(strncmp(text, msg, strlen(msg)) == 0);
        json_decref(j);
    }
}
END_TEST

START_TEST(format_names)
{
    logfmt_t f = LOGFMT_TEXT;
    err_msg_t msg = {{0}};

    ck_assert_int_eq(logfmt_parse("json", &f, &msg), ERR_OK);
    ck_assert_int_eq(f, LOGFMT_JSON);
    ck_assert_int_eq(logfmt_parse("text", &f, &msg), ERR_OK);
    ck_assert_int_eq(f, LOGFMT_TEXT);
    ck_assert_int_eq(logfmt_parse("JSON", &f, &msg), ERR_INVALID);
    ck_assert_ptr_nonnull(strstr(msg.text, "want text or json"));
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("obs_logfmt");
    TCase *tc = tcase_create("core");

    tcase_add_test(tc, text_format);
    tcase_add_test(tc, admission_preemption_eviction);
    tcase_add_test(tc, no_false_references);
    tcase_add_test(tc, escaped);
    tcase_add_test(tc, truncation_keeps_json);
    tcase_add_test(tc, format_names);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(suite());
    int failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
