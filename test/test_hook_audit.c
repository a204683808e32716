/* test_hook_audit -- audit trail: field-level changes, records, rotation, the table printer. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "hook/audit.h"

#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
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
                             .authenticated = true,
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
                             .authenticated = true,
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

START_TEST(test_unauthenticated_user_is_a_claim)
{
    json_t *old = cq("all", "16", "64"), *obj = cq("all", "8", "64");
    json_t *groups = json_pack("[s]", "system:masters");
    hook_audit_event_t ev = {.operation = "UPDATE",
                             .kind = "ClusterQueue",
                             .name = "training",
                             .user = "alice",
                             .groups = groups,
                             .old_object = old,
                             .object = obj,
                             .allowed = true};
    json_t *rec = NULL;
    char *line;

    /* A caller nobody authenticated writes whatever userInfo it likes: it is never recorded
     * as the user, only as a claim, and the Event says so. */
    ck_assert_int_eq(audit_record_build(&ev, 0, &rec), ERR_OK);
    ck_assert(json_is_null(json_object_get(rec, "user")) || json_object_get(rec, "user") == NULL);
    ck_assert(json_is_false(json_object_get(rec, "authenticated")));
    ck_assert_str_eq(json_string_value(json_object_get(rec, "claimedUser")), "alice");
    ck_assert_ptr_null(json_object_get(rec, "groups"));
    ck_assert_ptr_nonnull(json_object_get(rec, "claimedGroups"));
    line = audit_event_message(rec);
    ck_assert_str_eq(line, "an unauthenticated caller claiming to be alice changed quota "
                           "h100/nvidia.com/gpu nominalQuota 16 -> 8");
    free(line);
    json_decref(rec);
    ev.authenticated = true;
    ck_assert_int_eq(audit_record_build(&ev, 0, &rec), ERR_OK);
    ck_assert_str_eq(json_string_value(json_object_get(rec, "user")), "alice");
    ck_assert(json_is_true(json_object_get(rec, "authenticated")));
    ck_assert_ptr_null(json_object_get(rec, "claimedUser"));
    json_decref(rec);
    json_decref(old);
    json_decref(obj);
    json_decref(groups);
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

/* Lines of the file at `path` (at most 64) into lines[]; returns the count. */
static int read_lines(const char *path, char lines[][1024])
{
    FILE *f = fopen(path, "r");
    int n = 0;

    ck_assert_ptr_nonnull(f);
    while (n < 64 && fgets(lines[n], 1024, f))
        n++;
    fclose(f);
    return n;
}

static void write_lines(const char *path, char lines[][1024], int n)
{
    FILE *f = fopen(path, "w");

    ck_assert_ptr_nonnull(f);
    for (int i = 0; i < n; i++)
        fputs(lines[i], f);
    fclose(f);
}

static json_t *rec_of(const char *user, int i)
{
    return json_pack("{s:s, s:s, s:b, s:i}", "time", "2026-01-01T00:00:00Z", "user", user,
                     "allowed", 1, "i", i);
}

static void verify_file(const char *path, audit_verify_t *v)
{
    const char *files[] = {path};
    err_msg_t msg;

    ck_assert_int_eq(audit_verify(files, 1, v, &msg), ERR_OK);
}

START_TEST(test_log_rotates_by_size)
{
    char *path = temp_path(), rotated[256], lines[64][1024];
    const char *files[3];
    audit_log_t *log;
    err_msg_t msg;
    audit_verify_t v;
    int n;

    /* each line is about 140 bytes: a 400-byte limit holds two */
    ck_assert_int_eq(audit_log_open(path, 400, 2, &log, &msg), ERR_OK);
    for (int i = 0; i < 8; i++) {
        json_t *rec = rec_of("alice", i);
        ck_assert_int_eq(audit_log_write(log, rec, &msg), ERR_OK);
        json_decref(rec);
    }
    audit_log_close(log);
    snprintf(rotated, sizeof(rotated), "%s.2", path);
    ck_assert_int_eq(access(rotated, F_OK), 0);
    files[0] = strdup(rotated);
    snprintf(rotated, sizeof(rotated), "%s.1", path);
    ck_assert_int_eq(access(rotated, F_OK), 0);
    files[1] = strdup(rotated);
    files[2] = path;
    snprintf(rotated, sizeof(rotated), "%s.3", path);
    ck_assert_int_ne(access(rotated, F_OK), 0); /* keep = 2 */
    /* The deletion of the oldest file is not silent: the new file starts by saying what went. */
    n = read_lines(path, lines);
    ck_assert_int_ge(n, 1);
    ck_assert_ptr_nonnull(strstr(lines[0], "\"type\":\"rotated\""));
    ck_assert_ptr_nonnull(strstr(lines[0], "\"firstSeq\":"));
    /* The chain runs across the files, but not from the first record ever. */
    ck_assert_int_eq(audit_verify(files, 3, &v, &msg), ERR_OK);
    ck_assert_msg(v.ok, "%s", v.where);
    ck_assert(!v.anchored);
    ck_assert_uint_gt(v.first_seq, 1);
    ck_assert_uint_eq(v.last_seq, v.first_seq + v.records - 1);
    /* Out of order: broken. */
    files[2] = files[0];
    files[0] = path;
    ck_assert_int_eq(audit_verify(files, 3, &v, &msg), ERR_OK);
    ck_assert(!v.ok);
    unlink(files[1]);
    unlink(files[2]);
    free((char *)files[1]);
    free((char *)files[2]);
    unlink(path);
    free(path);
    ck_assert_int_eq(audit_log_open("/nonexistent-dir/audit.log", 0, 0, &log, &msg), ERR_IO);
    ck_assert_ptr_nonnull(strstr(msg.text, "/nonexistent-dir/audit.log"));
}
END_TEST

START_TEST(test_chain_detects_edit_and_gap)
{
    char *path = temp_path(), lines[64][1024], copy[64][1024];
    audit_log_t *log;
    err_msg_t msg;
    audit_verify_t v;
    int n;

    ck_assert_int_eq(audit_log_open(path, 0, 0, &log, &msg), ERR_OK);
    for (int i = 0; i < 5; i++) {
        json_t *rec = rec_of("alice", i);
        ck_assert_int_eq(audit_log_write(log, rec, &msg), ERR_OK);
        json_decref(rec);
    }
    ck_assert_uint_eq(audit_log_seq(log), 5);
    audit_log_close(log);
    verify_file(path, &v);
    ck_assert_msg(v.ok, "%s", v.where);
    ck_assert(v.anchored);
    ck_assert_uint_eq(v.records, 5);
    ck_assert_uint_eq(v.first_seq, 1);
    ck_assert_uint_eq(v.last_seq, 5);
    n = read_lines(path, lines);
    ck_assert_int_eq(n, 5);
    ck_assert_ptr_nonnull(strstr(lines[0], "{\"seq\":1,\"prev\":\"0000000000"));

    /* An edit of record 2 (alice -> bobby, same length): found at line 3. */
    memcpy(copy, lines, sizeof(copy));
    memcpy(strstr(copy[1], "alice"), "bobby", 5);
    write_lines(path, copy, n);
    verify_file(path, &v);
    ck_assert(!v.ok);
    ck_assert_uint_eq(v.records, 2);
    ck_assert_ptr_nonnull(strstr(v.where, ":3 (seq 3): prev does not match the hash of"));
    ck_assert_ptr_nonnull(strstr(v.where, ":2: that record was edited"));

    /* A removed record (line 3): a gap in seq at line 3. */
    memcpy(copy, lines, sizeof(copy));
    memmove(copy[2], copy[3], sizeof(copy[0]) * 2);
    write_lines(path, copy, n - 1);
    verify_file(path, &v);
    ck_assert(!v.ok);
    ck_assert_ptr_nonnull(strstr(v.where, ":3 (seq 4): follows seq 2"));

    /* A forged record that renumbers the rest still breaks the hash link. */
    memcpy(copy, lines, sizeof(copy));
    snprintf(copy[2], sizeof(copy[2]), "%s", lines[2]);
    memcpy(strstr(copy[2], "\"i\":2"), "\"i\":9", 5);
    write_lines(path, copy, n);
    verify_file(path, &v);
    ck_assert(!v.ok);
    ck_assert_ptr_nonnull(strstr(v.where, ":4 (seq 4)"));

    /* Not a chained record at all. */
    snprintf(copy[0], sizeof(copy[0]), "{\"time\":\"2026-01-01T00:00:00Z\"}\n");
    write_lines(path, copy, 1);
    verify_file(path, &v);
    ck_assert(!v.ok);
    ck_assert_ptr_nonnull(strstr(v.where, ":1: not a chained audit record"));
    unlink(path);
    free(path);
}
END_TEST

START_TEST(test_reopen_resumes_and_cuts_torn_tail)
{
    char *path = temp_path(), lines[64][1024];
    audit_log_t *log;
    err_msg_t msg;
    audit_verify_t v;
    json_t *rec = rec_of("alice", 0);
    FILE *f;
    int n;

    ck_assert_int_eq(audit_log_open(path, 0, 0, &log, &msg), ERR_OK);
    ck_assert_int_eq(audit_log_write(log, rec, &msg), ERR_OK);
    ck_assert_int_eq(audit_log_write(log, rec, &msg), ERR_OK);
    audit_log_close(log);
    /* A crash mid-write leaves half a line. */
    f = fopen(path, "a");
    fputs("{\"seq\":3,\"prev\":\"ab", f);
    fclose(f);
    verify_file(path, &v);
    ck_assert(!v.ok);
    ck_assert_ptr_nonnull(strstr(v.where, "incomplete"));
    /* Reopening cuts it off, says so in the chain, and continues the numbering. */
    ck_assert_int_eq(audit_log_open(path, 0, 0, &log, &msg), ERR_OK);
    ck_assert_uint_eq(audit_log_seq(log), 3);
    ck_assert_int_eq(audit_log_write(log, rec, &msg), ERR_OK);
    audit_log_close(log);
    n = read_lines(path, lines);
    ck_assert_int_eq(n, 4);
    ck_assert_ptr_nonnull(strstr(lines[2], "\"type\":\"recovered\",\"discardedBytes\":19"));
    verify_file(path, &v);
    ck_assert_msg(v.ok, "%s", v.where);
    ck_assert_uint_eq(v.last_seq, 4);
    json_decref(rec);
    unlink(path);
    free(path);
}
END_TEST

/* A write that fails half-way (the file size limit here, a full disk in life) is taken back:
 * the next record starts on a line of its own and the chain stays intact. */
START_TEST(test_failed_write_leaves_no_torn_line)
{
    char *path = temp_path();
    audit_log_t *log;
    err_msg_t msg;
    audit_verify_t v;
    struct rlimit old, lim;
    struct stat st;
    json_t *rec = rec_of("alice", 0);

    signal(SIGXFSZ, SIG_IGN);
    ck_assert_int_eq(audit_log_open(path, 0, 0, &log, &msg), ERR_OK);
    ck_assert_int_eq(audit_log_write(log, rec, &msg), ERR_OK);
    ck_assert_int_eq(stat(path, &st), 0);
    ck_assert_int_eq(getrlimit(RLIMIT_FSIZE, &old), 0);
    lim = old;
    lim.rlim_cur = (rlim_t)st.st_size + 50; /* half a record fits */
    ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &lim), 0);
    ck_assert_int_eq(audit_log_write(log, rec, &msg), ERR_IO);
    ck_assert_ptr_nonnull(strstr(msg.text, "writing audit log"));
    ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &old), 0);
    ck_assert_int_eq(stat(path, &st), 0);
    ck_assert_uint_eq(audit_log_seq(log), 1);
    ck_assert_int_eq(audit_log_write(log, rec, &msg), ERR_OK);
    audit_log_close(log);
    verify_file(path, &v);
    ck_assert_msg(v.ok, "%s", v.where);
    ck_assert_uint_eq(v.records, 2);
    json_decref(rec);
    unlink(path);
    free(path);
}
END_TEST

START_TEST(test_flood_is_rate_limited_per_user)
{
    char *path = temp_path(), lines[64][1024];
    audit_log_t *log;
    err_msg_t msg;
    audit_verify_t v;
    int n, overflow = 0;

    ck_assert_int_eq(audit_log_open(path, 0, 0, &log, &msg), ERR_OK);
    audit_log_set_rate(log, 1, 3);
    /* mallory: 20 records at once -> 3 written, 17 counted */
    for (int i = 0; i < 20; i++) {
        json_t *rec = rec_of("mallory", i);
        err_t rc = audit_log_write_at(log, rec, 1000, &msg);
        json_decref(rec);
        if (rc == ERR_OVERFLOW) {
            overflow++;
            ck_assert_ptr_nonnull(strstr(msg.text, "mallory"));
        } else {
            ck_assert_int_eq(rc, ERR_OK);
        }
    }
    ck_assert_int_eq(overflow, 1); /* said once per episode */
    /* alice is not affected by mallory's flood */
    {
        json_t *rec = rec_of("alice", 0);
        ck_assert_int_eq(audit_log_write_at(log, rec, 1000, &msg), ERR_OK);
        json_decref(rec);
    }
    /* a second later mallory may write one again: the summary comes first */
    {
        json_t *rec = rec_of("mallory", 99);
        ck_assert_int_eq(audit_log_write_at(log, rec, 2000, &msg), ERR_OK);
        json_decref(rec);
    }
    audit_log_close(log);
    n = read_lines(path, lines);
    ck_assert_int_eq(n, 6);
    ck_assert_ptr_nonnull(strstr(lines[3], "\"user\":\"alice\""));
    ck_assert_ptr_nonnull(
        strstr(lines[4], "\"type\":\"suppressed\",\"user\":\"mallory\",\"count\":17"));
    ck_assert_ptr_nonnull(strstr(lines[5], "\"i\":99"));
    verify_file(path, &v);
    ck_assert_msg(v.ok, "%s", v.where);
    unlink(path);
    free(path);
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
        "\"reason\":\"spec.clusterQueue: field is immutable\",\"changes\":[]}\n"
        "{\"seq\":4,\"prev\":\"x\",\"time\":\"2026-11-29T13:00:00Z\",\"type\":\"suppressed\","
        "\"user\":\"?mallory\",\"count\":17,\"since\":\"2026-11-29T12:59:59Z\"}\n"
        "{\"time\":\"2026-11-29T14:00:00Z\",\"user\":null,\"authenticated\":false,"
        "\"claimedUser\":\"eve\",\"operation\":\"UPDATE\",\"kind\":\"Cohort\",\"name\":\"c\","
        "\"allowed\":true,\"changes\":[]}\n";
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
    ck_assert_uint_eq(count, 3);
    ck_assert_ptr_nonnull(strstr(out, "(audit log)           17 records of ?mallory not written "
                                      "(rate limit) since 2026-11-29T12:59:59Z"));
    ck_assert_ptr_nonnull(strstr(out, "  ?eve  ")); /* a claim, not a user */
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
    f.since_ms = 1795953600000LL; /* 2026-11-29T12:00:00Z: bob's and eve's records */
    in = fmemopen((void *)text, strlen(text), "r");
    o = fmemopen(out, sizeof(out), "w");
    e = fmemopen(err, sizeof(err), "w");
    ck_assert_int_eq(audit_print(in, o, e, &f, &count, &msg), ERR_OK);
    fclose(in);
    fclose(o);
    fclose(e);
    ck_assert_uint_eq(count, 2);
    ck_assert_ptr_nonnull(strstr(out, "bob"));

    /* audit_collect (sluice audit -o json): the same records, as they are, in one array; the
     * log's own records (suppressed) too */
    json_t *all = NULL;
    in = fmemopen((void *)text, strlen(text), "r");
    e = fmemopen(err, sizeof(err), "w");
    ck_assert_int_eq(audit_collect(in, e, &f, &all, &msg), ERR_OK);
    fclose(in);
    fclose(e);
    ck_assert_uint_eq(json_array_size(all), 3);
    ck_assert_str_eq(json_string_value(json_object_get(json_array_get(all, 0), "user")), "bob");
    ck_assert_str_eq(json_string_value(json_object_get(json_array_get(all, 1), "type")),
                     "suppressed");
    ck_assert_str_eq(json_string_value(json_object_get(json_array_get(all, 2), "claimedUser")),
                     "eve");
    json_decref(all);
    f.since_ms = 0;
    f.object = "localqueue/team-a/main";
    in = fmemopen((void *)text, strlen(text), "r");
    e = fmemopen(err, sizeof(err), "w");
    ck_assert_int_eq(audit_collect(in, e, &f, &all, &msg), ERR_OK);
    fclose(in);
    fclose(e);
    ck_assert_uint_eq(json_array_size(all), 1);
    ck_assert_ptr_nonnull(strstr(err, "line 2: not an audit record"));
    json_decref(all);
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
    tcase_add_test(tc, test_unauthenticated_user_is_a_claim);
    tcase_add_test(tc, test_log_rotates_by_size);
    tcase_add_test(tc, test_chain_detects_edit_and_gap);
    tcase_add_test(tc, test_reopen_resumes_and_cuts_torn_tail);
    tcase_add_test(tc, test_flood_is_rate_limited_per_user);
    tcase_add_test(tc, test_failed_write_leaves_no_torn_line);
    tcase_add_test(tc, test_print_filters_and_skips_garbage);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
