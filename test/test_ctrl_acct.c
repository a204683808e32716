/* test_ctrl_acct -- the operator's accounting log against the in-memory API server: one record
 * per admission that ends (evicted by a stop policy, finished, deleted, preempted), chained and
 * durable. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "acct/acct.h"
#include "ctrl/ctrl.h"
#include "ctrl_fixture.h"
#include "fakeapi.h"
#include "jobs/job_workload.h"
#include "kube/client.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char log_path[64];

/* A suspended Job `name` in ns/lq asking for one cpu. */
static void job(fx_t *fx, const char *name)
{
    char j[1024];

    snprintf(j, sizeof(j),
             "{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"metadata\":{\"name\":\"%s\","
             "\"namespace\":\"ns\",\"labels\":{\"kueue.x-k8s.io/queue-name\":\"lq\"}},\"spec\":"
             "{\"suspend\":true,\"parallelism\":1,\"completions\":1,\"template\":{\"spec\":{"
             "\"restartPolicy\":\"Never\",\"containers\":[{\"name\":\"c\",\"image\":\"i\","
             "\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]}}}}",
             name);
    fx_put(fx, j);
}

/* The Workload of Job `job_name` (borrowed), found by Kueue's name; its name into `name`. */
static json_t *workload_for(fx_t *fx, const char *job_name, char name[JOB_WORKLOAD_NAME_MAX + 1])
{
    json_t *j = fakeapi_get_object(fx->fa, "jobs", "ns", job_name);
    const char *uid = json_string_value(json_object_get(json_object_get(j, "metadata"), "uid"));

    if (uid == NULL || job_workload_name(job_name, uid, JOB_WORKLOAD_NAME_MAX, name,
                                         JOB_WORKLOAD_NAME_MAX + 1, NULL) != ERR_OK)
        return NULL;
    return fakeapi_get_object(fx->fa, "workloads", "ns", name);
}

static bool running(fx_t *fx, const char *job_name)
{
    char name[JOB_WORKLOAD_NAME_MAX + 1];
    json_t *w = workload_for(fx, job_name, name);
    json_t *j = fakeapi_get_object(fx->fa, "jobs", "ns", job_name);

    return w != NULL && json_object_get(json_object_get(w, "status"), "admission") != NULL &&
           !json_is_true(json_object_get(json_object_get(j, "spec"), "suspend"));
}

static bool a_running(fx_t *fx)
{
    return running(fx, "a");
}

static bool b_running(fx_t *fx)
{
    return running(fx, "b");
}

/* Records in the log so far. */
static size_t records(void)
{
    FILE *f = fopen(log_path, "r");
    size_t n = 0;
    int c;

    if (f == NULL)
        return 0;
    while ((c = fgetc(f)) != EOF)
        n += c == '\n';
    fclose(f);
    return n;
}

static bool c_running(fx_t *fx)
{
    return running(fx, "c");
}

static bool four_records(fx_t *fx)
{
    (void)fx;
    return records() >= 4;
}

static bool one_record(fx_t *fx)
{
    (void)fx;
    return records() >= 1;
}

static bool two_records(fx_t *fx)
{
    (void)fx;
    return records() >= 2;
}

static bool three_records(fx_t *fx)
{
    (void)fx;
    return records() >= 3;
}

/* Record `n` (1-based) of the log, parsed (a new reference). */
static json_t *record(size_t n)
{
    FILE *f = fopen(log_path, "r");
    char *line = NULL;
    size_t cap = 0;
    json_t *j = NULL;

    ck_assert_ptr_nonnull(f);
    for (size_t i = 0; i < n; i++)
        ck_assert_int_gt(getline(&line, &cap, f), 0);
    j = json_loads(line, 0, NULL);
    free(line);
    fclose(f);
    ck_assert_ptr_nonnull(j);
    return j;
}

static const char *str(json_t *j, const char *key)
{
    return json_string_value(json_object_get(j, key));
}

static const char cq_fmt[] =
    "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"ClusterQueue\",\"metadata\":"
    "{\"name\":\"cq\"},\"spec\":{\"namespaceSelector\":{},%s\"resourceGroups\":[{"
    "\"coveredResources\":[\"cpu\"],\"flavors\":[{\"name\":\"default\",\"resources\":[{"
    "\"name\":\"cpu\",\"nominalQuota\":\"2\"}]}]}]}}";

static void cq(fx_t *fx, const char *extra)
{
    char buf[1024];
    snprintf(buf, sizeof(buf), cq_fmt, extra);
    fx_put(fx, buf);
}

START_TEST(evicted_finished_deleted_preempted_each_recorded)
{
    fx_t fx;
    char conf[256], wname[JOB_WORKLOAD_NAME_MAX + 1];
    const char *files[1] = {log_path};
    chainlog_verify_t v;
    acct_rec_t r;
    json_t *j, *rec;
    err_msg_t msg;

    snprintf(log_path, sizeof(log_path), "/tmp/sluice-test-ctrl-acct-%d.jsonl", (int)getpid());
    unlink(log_path);
    snprintf(conf, sizeof(conf), "{\"annotations\":{\"sluice.dev/accounting-log\":\"%s\"}}",
             log_path);
    fx_serve(&fx, NULL, 0);
    fx_queues(&fx, 2);
    fx_operate(&fx, "metadata", conf);
    job(&fx, "a");
    fx_run_until(&fx, a_running, 10, "Job a admitted and started");
    ck_assert_uint_eq(records(), 0); /* an admission that has not ended has no record */

    /* 1. HoldAndDrain: evicted, released -> "evicted", ClusterQueueStopped */
    cq(&fx, "\"stopPolicy\":\"HoldAndDrain\",");
    fx_run_until(&fx, one_record, 10, "the eviction's record");
    rec = record(1);
    ck_assert_str_eq(str(rec, "source"), "operator");
    ck_assert_str_eq(str(rec, "namespace"), "ns");
    ck_assert_str_eq(str(rec, "localQueue"), "lq");
    ck_assert_str_eq(str(rec, "clusterQueue"), "cq");
    ck_assert_str_eq(str(rec, "outcome"), "evicted");
    ck_assert_str_eq(str(rec, "reason"), "ClusterQueueStopped");
    ck_assert_ptr_nonnull(str(rec, "uid"));
    ck_assert_str_eq(
        str(json_object_get(json_array_get(json_object_get(rec, "podSets"), 0), "resources"),
            "cpu"),
        "1");
    ck_assert_int_eq(acct_record_parse(rec, &r, &msg), ERR_OK);
    ck_assert_int_le(r.queued_ms, r.admitted_ms);
    ck_assert_int_le(r.admitted_ms, r.ended_ms);
    acct_rec_fini(&r);
    json_decref(rec);

    /* 2. Readmitted, the Job completes -> "finished" */
    cq(&fx, "");
    fx_run_until(&fx, a_running, 10, "Job a readmitted");
    j = json_deep_copy(fakeapi_get_object(fx.fa, "jobs", "ns", "a"));
    json_object_set_new(j, "status",
                        json_pack("{s:i,s:[{s:s,s:s,s:s}]}", "succeeded", 1, "conditions", "type",
                                  "Complete", "status", "True", "message", "done"));
    ck_assert_int_eq(fakeapi_put_object(fx.fa, j, NULL, NULL), ERR_OK);
    json_decref(j);
    fx_run_until(&fx, two_records, 10, "the finished admission's record");
    rec = record(2);
    ck_assert_str_eq(str(rec, "outcome"), "finished");
    /* The second admission queued again from the eviction (whole seconds: the same second as
     * the creation in a fast test, never before it). */
    ck_assert_int_eq(acct_record_parse(rec, &r, &msg), ERR_OK);
    {
        json_t *first = record(1);
        acct_rec_t r1;
        ck_assert_int_eq(acct_record_parse(first, &r1, &msg), ERR_OK);
        ck_assert_int_ge(r.queued_ms, r1.queued_ms);
        ck_assert_int_ge(r.admitted_ms, r1.ended_ms / 1000 * 1000);
        acct_rec_fini(&r1);
        json_decref(first);
    }
    acct_rec_fini(&r);
    json_decref(rec);

    /* 3. Job b's Workload is deleted while admitted -> "deleted" */
    job(&fx, "b");
    fx_run_until(&fx, b_running, 10, "Job b admitted and started");
    ck_assert_ptr_nonnull(workload_for(&fx, "b", wname));
    ck_assert_int_eq(fakeapi_delete_object(fx.fa, "workloads", "ns", wname, NULL), ERR_OK);
    fx_run_until(&fx, three_records, 10, "the deleted admission's record");
    rec = record(3);
    ck_assert_str_eq(str(rec, "outcome"), "deleted");
    ck_assert(json_is_null(json_object_get(rec, "reason")));
    json_decref(rec);

    /* 4. Someone else (a Kueue replica, a script) preempts Job c's Workload: the release is
     * seen all the same -> "preempted" with the Preempted condition's reason. */
    job(&fx, "c");
    fx_run_until(&fx, c_running, 10, "Job c admitted and started");
    j = json_deep_copy(workload_for(&fx, "c", wname));
    {
        json_t *st = json_object_get(j, "status"), *conds = json_object_get(st, "conditions"), *c;
        size_t i;
        json_object_del(st, "admission");
        json_array_foreach(conds, i, c)
        {
            if (strcmp(str(c, "type"), "QuotaReserved") == 0 ||
                strcmp(str(c, "type"), "Admitted") == 0) {
                json_object_set_new(c, "status", json_string("False"));
                json_object_set_new(c, "reason", json_string("Pending"));
            }
        }
        json_array_append_new(conds, json_pack("{s:s,s:s,s:s,s:s,s:s}", "type", "Evicted", "status",
                                               "True", "reason", "Preempted", "message", "x",
                                               "lastTransitionTime", "2026-12-02T10:00:00Z"));
        json_array_append_new(conds,
                              json_pack("{s:s,s:s,s:s,s:s,s:s}", "type", "Preempted", "status",
                                        "True", "reason", "InClusterQueue", "message", "x",
                                        "lastTransitionTime", "2026-12-02T10:00:00Z"));
    }
    ck_assert_int_eq(fakeapi_put_object(fx.fa, j, NULL, &msg), ERR_OK);
    json_decref(j);
    fx_run_until(&fx, four_records, 10, "the preempted admission's record");
    rec = record(4);
    ck_assert_str_eq(str(rec, "outcome"), "preempted");
    ck_assert_str_eq(str(rec, "reason"), "InClusterQueue");
    json_decref(rec);

    ck_assert_uint_eq(ctrl_stats(fx.ctrl).acct_written, 4);
    ck_assert_uint_eq(ctrl_stats(fx.ctrl).acct_failed, 0);
    fx_stop(&fx);
    /* Chained from the first record ever, each line synced as it was written. */
    ck_assert_int_eq(chainlog_verify(files, 1, "accounting", &v, &msg), ERR_OK);
    ck_assert_msg(v.ok, "%s", v.where);
    ck_assert(v.anchored);
    ck_assert_uint_eq(v.records, 4);
    unlink(log_path);
}
END_TEST

static void on_client_closed(void *data)
{
    (*(int *)data)++;
}

START_TEST(unwritable_log_refuses_to_start)
{
    fx_t fx;
    kube_client_opts_t co;
    err_msg_t msg = {{0}};
    ctrl_t *c = NULL;
    int closed = 0;

    fx_serve(&fx, NULL, 0);
    kube_config_init(&fx.kcfg);
    fx.kcfg.server = strdup(fakeapi_url(fx.fa));
    memset(&co, 0, sizeof(co));
    co.http1 = true;
    ck_assert_int_eq(kube_client_new(&fx.loop, &fx.kcfg, &co, &fx.client, &msg), ERR_OK);
    ck_assert_int_eq(ctrl_config_init(&fx.cfg, &msg), ERR_OK);
    fx.cfg.acct_log = strdup("/nonexistent-dir/accounting.jsonl");
    ck_assert_int_eq(ctrl_config_finish(&fx.cfg, &msg), ERR_OK);
    /* Asked for an accounting log it cannot write, the operator does not start without it. */
    ck_assert_int_eq(ctrl_new(fx.client, &fx.cfg, NULL, NULL, &c, &msg), ERR_IO);
    ck_assert_ptr_null(c);
    ck_assert_ptr_nonnull(strstr(msg.text, "accounting log /nonexistent-dir/accounting.jsonl"));
    kube_client_close(fx.client, on_client_closed, &closed);
    fakeapi_stop(fx.fa);
    uv_close((uv_handle_t *)&fx.guard, NULL);
    uv_run(&fx.loop, UV_RUN_DEFAULT);
    ck_assert_int_eq(closed, 1);
    ck_assert_int_eq(uv_loop_close(&fx.loop), 0);
    ctrl_config_fini(&fx.cfg);
    kube_config_fini(&fx.kcfg);
}
END_TEST

START_TEST(max_bytes_checked_and_off_by_default)
{
    ctrl_config_t cfg;
    err_msg_t msg;
    json_t *d = json_loads("{\"apiVersion\":\"config.kueue.x-k8s.io/v1beta2\",\"kind\":"
                           "\"Configuration\",\"metadata\":{\"annotations\":{\"sluice.dev/"
                           "accounting-log-max-bytes\":\"12\"}}}",
                           0, NULL);

    ck_assert_int_eq(ctrl_config_init(&cfg, &msg), ERR_OK);
    ck_assert_int_eq(ctrl_config_apply(&cfg, d, &msg), ERR_INVALID);
    ck_assert_ptr_nonnull(strstr(msg.text, "sluice.dev/accounting-log-max-bytes"));
    ck_assert_ptr_nonnull(strstr(msg.text, "at least 4096"));
    ck_assert_ptr_null(cfg.acct_log); /* off by default */
    ctrl_config_fini(&cfg);
    json_decref(d);
}
END_TEST

static Suite *ctrl_acct_suite(void)
{
    Suite *s = suite_create("ctrl_acct");
    TCase *tc = tcase_create("core");

    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, evicted_finished_deleted_preempted_each_recorded);
    tcase_add_test(tc, max_bytes_checked_and_off_by_default);
    tcase_add_test(tc, unwritable_log_refuses_to_start);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(ctrl_acct_suite());
    int failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
