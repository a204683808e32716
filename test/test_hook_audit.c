/* test_hook_audit -- audit trail: field-level changes, records, rotation, the table printer. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "hook/audit.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char cq_fmt[] =
    "{\"kind\":\"ClusterQueue\",\"metadata\":{\"name\":\"training\"},\"spec\":{\"cohortName\":"
    "\"%s\",\"resourceGroups\":[{\"coveredResources\":[\"nvidia.com/gpu\",\"cpu\"],\"flavors\":[{"
    "\"name\":\"h100\",\"resources\":[{\"name\":\"nvidia.com/gpu\",\"nominalQuota\":\"%s\"},{"
    "\"name\":\"cpu\",\"nominalQuota\":\"%s\",\"borrowingLimit\":\"8\"}]}]}]}}";

static json_t *cq(const char *cohort, const char *gpu, const char *cpu)
{
    char buf[2048];
    snprintf(buf, sizeof(buf), cq_fmt, cohort, gpu, cpu);
    return json_loads(buf, 0, NULL);
}

static json_t *change(json_t *changes, const char *field)
{
    size_t i;
    json_t *c;

    json_array_foreach(changes, i, c)
    {
        if (strcmp(json_string_value(json_object_get(c, "field")), field) == 0)
            return c;
    }
    return NULL;
}

START_TEST(test_cluster_queue_quota_changes)
{
    json_t *old = cq("all", "16", "64"), *obj = cq("research", "8", "64000m");
    json_t *changes = audit_changes("ClusterQueue", old, obj), *c;

    /* cpu 64 -> 64000m is the same quantity: no change recorded */
    ck_assert_uint_eq(json_array_size(changes), 2);
    c = change(changes, "quota h100/nvidia.com/gpu nominalQuota");
    ck_assert_ptr_nonnull(c);
    ck_assert_str_eq(json_string_value(json_object_get(c, "before")), "16");
    ck_assert_str_eq(json_string_value(json_object_get(c, "after")), "8");
    c = change(changes, "cohortName");
    ck_assert_str_eq(json_string_value(json_object_get(c, "before")), "all");
    ck_assert_str_eq(json_string_value(json_object_get(c, "after")), "research");
    json_decref(changes);
    /* creation: every quota appears with before = null */
    changes = audit_changes("ClusterQueue", NULL, obj);
    c = change(changes, "quota h100/cpu borrowingLimit");
    ck_assert(json_is_null(json_object_get(c, "before")));
    ck_assert_str_eq(json_string_value(json_object_get(c, "after")), "8");
    ck_assert_ptr_null(change(changes, "quota h100/cpu lendingLimit")); /* absent both sides */
    json_decref(changes);
    json_decref(old);
    json_decref(obj);
}
END_TEST

START_TEST(test_event_message_lists_changes)
{
    json_t *old = cq("all", "16", "64"), *obj = cq("research", "8", "64");
    hook_audit_event_t ev = {.operation = "UPDATE",
                             .kind = "ClusterQueue",
                             .name = "training",
                             .user = "alice",
                             .old_object = old,
                             .object = obj,
                             .allowed = true};
    json_t *rec = NULL;
    char *line;

    ck_assert_int_eq(audit_record_build(&ev, 0, &rec), ERR_OK);
    line = audit_event_message(rec);

    ck_assert_str_eq(line, "alice changed cohortName all -> research; quota h100/nvidia.com/gpu "
                           "nominalQuota 16 -> 8");
    free(line);
    json_decref(rec);
    json_decref(old);
    json_decref(obj);
}
END_TEST

START_TEST(test_priority_changes)
{
    json_t *wpc_old = json_loads("{\"value\":100}", 0, NULL);
    json_t *wpc_new = json_loads("{\"value\":1000}", 0, NULL);
    json_t *job_old =
        json_loads("{\"metadata\":{\"labels\":{\"kueue.x-k8s.io/queue-name\":\"q\"}}}", 0, NULL);
    json_t *job_new = json_loads("{\"metadata\":{\"labels\":{\"kueue.x-k8s.io/queue-name\":\"q\","
                                 "\"kueue.x-k8s.io/priority-class\":\"high\"}}}",
                                 0, NULL);
    json_t *changes, *c;

    changes = audit_changes("WorkloadPriorityClass", wpc_old, wpc_new);
    c = change(changes, "value");
    ck_assert_str_eq(json_string_value(json_object_get(c, "before")), "100");
    ck_assert_str_eq(json_string_value(json_object_get(c, "after")), "1000");
    json_decref(changes);
    changes = audit_changes("Job", job_old, job_new);
    ck_assert_uint_eq(json_array_size(changes), 1);
    c = change(changes, "label kueue.x-k8s.io/priority-class");
    ck_assert(json_is_null(json_object_get(c, "before")));
    json_decref(changes);
    json_decref(wpc_old);
    json_decref(wpc_new);
    json_decref(job_old);
    json_decref(job_new);
}
END_TEST

START_TEST(test_records_only_what_matters)
{
    json_t *old = cq("all", "16", "64"), *same = cq("all", "16", "64");
    json_t *groups = json_pack("[s]", "platform");
    json_t *warnings = json_array();
    hook_audit_event_t ev = {.operation = "UPDATE",
                             .kind = "ClusterQueue",
                             .name = "training",
                             .user = "alice",
                             .groups = groups,
                             .old_object = old,
                             .object = same,
                             .allowed = true,
                             .warnings = warnings};
    json_t *rec = (json_t *)&ev; /* not NULL: "nothing to record" must set it */

    /* an accepted update that changes nothing audited is not recorded */
    ck_assert_int_eq(audit_record_build(&ev, 0, &rec), ERR_OK);
    ck_assert_ptr_null(rec);
    /* a rejection always is, with its reason */
    ev.allowed = false;
    ev.reason = "spec.x: bad";
    ck_assert_int_eq(audit_record_build(&ev, 1764439200123LL, &rec), ERR_OK);
    ck_assert_ptr_nonnull(rec);
    ck_assert_str_eq(json_string_value(json_object_get(rec, "time")), "2025-11-29T18:00:00.123Z");
    ck_assert_str_eq(json_string_value(json_object_get(rec, "user")), "alice");
    ck_assert_str_eq(json_string_value(json_array_get(json_object_get(rec, "groups"), 0)),
                     "platform");
    ck_assert_str_eq(json_string_value(json_object_get(rec, "reason")), "spec.x: bad");
    ck_assert(json_is_null(json_object_get(rec, "namespace")));
    {
        char *line = audit_event_message(rec);
        ck_assert_str_eq(line, "alice was refused UPDATE: spec.x: bad");
        free(line);
    }
    json_decref(rec);
    json_decref(old);
    json_decref(same);
    json_decref(groups);
    json_decref(warnings);
}
END_TEST

static char *temp_path(void)
{
    char *p = strdup("/tmp/sluice-audit-XXXXXX");
    int fd = mkstemp(p);
    ck_assert_int_ge(fd, 0);
    close(fd);
    return p;
}

START_TEST(test_log_rotates_by_size)
{
    char *path = temp_path(), rotated[256];
    audit_log_t *log;
    err_msg_t msg;
    json_t *rec = json_pack("{s:s}", "time", "2026-01-01T00:00:00Z");
    FILE *f;
    char line[128];
    int lines = 0;

    /* each line is 32 bytes: a 70-byte limit holds two */
    ck_assert_int_eq(audit_log_open(path, 70, 2, &log, &msg), ERR_OK);
    for (int i = 0; i < 5; i++)
        ck_assert_int_eq(audit_log_write(log, rec, &msg), ERR_OK);
    audit_log_close(log);
    f = fopen(path, "r");
    while (fgets(line, sizeof(line), f))
        lines++;
    fclose(f);
    ck_assert_int_eq(lines, 1); /* 2 + 2 rotated away, 1 in the live file */
    snprintf(rotated, sizeof(rotated), "%s.1", path);
    ck_assert_int_eq(access(rotated, F_OK), 0);
    unlink(rotated);
    snprintf(rotated, sizeof(rotated), "%s.2", path);
    ck_assert_int_eq(access(rotated, F_OK), 0);
    unlink(rotated);
    snprintf(rotated, sizeof(rotated), "%s.3", path);
    ck_assert_int_ne(access(rotated, F_OK), 0); /* keep = 2 */
    unlink(path);
    free(path);
    json_decref(rec);
    ck_assert_int_eq(audit_log_open("/nonexistent-dir/audit.log", 0, 0, &log, &msg), ERR_IO);
    ck_assert_ptr_nonnull(strstr(msg.text, "/nonexistent-dir/audit.log"));
}
END_TEST

START_TEST(test_print_filters_and_skips_garbage)
{
    const char *text =
        "{\"time\":\"2026-11-29T10:00:00Z\",\"user\":\"alice\",\"operation\":\"UPDATE\","
        "\"kind\":\"ClusterQueue\",\"namespace\":null,\"name\":\"training\",\"allowed\":true,"
        "\"changes\":[{\"field\":\"quota h100/nvidia.com/gpu nominalQuota\",\"before\":\"16\","
        "\"after\":\"8\"}]}\n"
        "this is not json\n"
        "{\"time\":\"2026-11-29T12:00:00.5Z\",\"user\":\"bob\",\"operation\":\"CREATE\","
        "\"kind\":\"LocalQueue\",\"namespace\":\"team-a\",\"name\":\"main\",\"allowed\":false,"
        "\"reason\":\"spec.clusterQueue: field is immutable\",\"changes\":[]}\n";
    char out[4096], err[512];
    FILE *in, *o, *e;
    size_t count;
    err_msg_t msg;
    audit_filter_t f = {0};

    in = fmemopen((void *)text, strlen(text), "r");
    o = fmemopen(out, sizeof(out), "w");
    e = fmemopen(err, sizeof(err), "w");
    ck_assert_int_eq(audit_print(in, o, e, &f, &count, &msg), ERR_OK);
    fclose(in);
    fclose(o);
    fclose(e);
    ck_assert_uint_eq(count, 2);
    ck_assert_ptr_nonnull(strstr(out, "quota h100/nvidia.com/gpu nominalQuota: 16 -> 8"));
    ck_assert_ptr_nonnull(strstr(out, "LocalQueue/team-a/main"));
    ck_assert_ptr_nonnull(strstr(out, "reason: spec.clusterQueue: field is immutable"));
    ck_assert_ptr_nonnull(strstr(err, "line 2: not an audit record"));

    f.object = "localqueue/team-a/main";
    in = fmemopen((void *)text, strlen(text), "r");
    o = fmemopen(out, sizeof(out), "w");
    e = fmemopen(err, sizeof(err), "w");
    ck_assert_int_eq(audit_print(in, o, e, &f, &count, &msg), ERR_OK);
    fclose(in);
    fclose(o);
    fclose(e);
    ck_assert_uint_eq(count, 1);
    ck_assert_ptr_null(strstr(out, "training"));

    f.object = NULL;
    f.since_ms = 1795953600000LL; /* 2026-11-29T12:00:00Z: only bob's record */
    in = fmemopen((void *)text, strlen(text), "r");
    o = fmemopen(out, sizeof(out), "w");
    e = fmemopen(err, sizeof(err), "w");
    ck_assert_int_eq(audit_print(in, o, e, &f, &count, &msg), ERR_OK);
    fclose(in);
    fclose(o);
    fclose(e);
    ck_assert_uint_eq(count, 1);
    ck_assert_ptr_nonnull(strstr(out, "bob"));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("hook_audit");
    TCase *tc = tcase_create("audit");
    SRunner *sr;
    int failed;

    tcase_add_test(tc, test_cluster_queue_quota_changes);
    tcase_add_test(tc, test_priority_changes);
    tcase_add_test(tc, test_event_message_lists_changes);
    tcase_add_test(tc, test_records_only_what_matters);
    tcase_add_test(tc, test_log_rotates_by_size);
    tcase_add_test(tc, test_print_filters_and_skips_garbage);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
