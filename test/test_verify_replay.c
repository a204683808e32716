/* test_verify_replay -- the invariant checker fed with API watch records: admissions, releases
 * (finished, deleted, evicted), a re-admission elsewhere, an overcommit named by its record, the
 * end-of-run rule, records that are not Workloads. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "verify/replay.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static verify_replay_t *r;

/* ClusterQueue `name` of 2 cpu, no cohort, into `buf`. */
static void cq_json(char *buf, size_t n, const char *name)
{
    snprintf(buf, n,
             "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"ClusterQueue\",\"metadata\":{"
             "\"name\":\"%s\",\"resourceVersion\":\"7\"},\"spec\":{\"namespaceSelector\":{},"
             "\"resourceGroups\":[{\"coveredResources\":[\"cpu\"],\"flavors\":[{\"name\":"
             "\"default\",\"resources\":[{\"name\":\"cpu\",\"nominalQuota\":\"2\"}]}]}]}}",
             name);
}

/* ClusterQueues "a" and "b" and a ConfigMap in one List, as kubectl get -o json prints it. */
static void setup(void)
{
    char a[1024], b[1024], buf[2560];
    json_t *j;
    err_msg_t msg = {{0}};

    cq_json(a, sizeof(a), "a");
    cq_json(b, sizeof(b), "b");
    snprintf(buf, sizeof(buf),
             "{\"apiVersion\":\"v1\",\"kind\":\"List\",\"items\":[%s,%s,{\"apiVersion\":\"v1\","
             "\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"x\"}}]}",
             a, b);
    r = verify_replay_new();
    ck_assert_ptr_nonnull(r);
    j = json_loads(buf, 0, NULL);
    ck_assert_ptr_nonnull(j);
    ck_assert_int_eq(verify_replay_queues(r, j, &msg), ERR_OK);
    json_decref(j);
}

static void teardown(void)
{
    verify_replay_free(r);
}

typedef enum { PENDING, EXPLAINED, ADMITTED, FINISHED, EVICTED_RELEASED } wstate_t;

/* A watch event `type` of Workload ns/`name` (`cpu` cpus) in `state`, admitted to `cq`. */
static err_t rec(const char *type, const char *name, int cpu, wstate_t state, const char *cq,
                 err_msg_t *msg)
{
    static int rv = 100;
    char status[1024] = "{}", body[3072];
    json_t *j;
    err_t rc;

    if (state == ADMITTED || state == FINISHED)
        snprintf(status, sizeof(status),
                 "{\"admission\":{\"clusterQueue\":\"%s\",\"podSetAssignments\":[{\"name\":"
                 "\"main\",\"flavors\":{\"cpu\":\"default\"},\"resourceUsage\":{\"cpu\":\"%d\"},"
                 "\"count\":1}]},\"conditions\":[{\"type\":\"QuotaReserved\",\"status\":\"True\","
                 "\"reason\":\"QuotaReserved\",\"message\":\"ok\",\"lastTransitionTime\":"
                 "\"2026-12-02T08:00:00Z\"}%s]}",
                 cq, cpu,
                 state == FINISHED ? ",{\"type\":\"Finished\",\"status\":\"True\",\"reason\":"
                                     "\"Succeeded\",\"message\":\"done\",\"lastTransitionTime\":"
                                     "\"2026-12-02T08:01:00Z\"}"
                                   : "");
    else if (state == EXPLAINED || state == EVICTED_RELEASED)
        snprintf(status, sizeof(status),
                 "{\"conditions\":[{\"type\":\"QuotaReserved\",\"status\":\"False\",\"reason\":"
                 "\"Pending\",\"message\":\"couldn't assign flavors: insufficient quota\","
                 "\"lastTransitionTime\":\"2026-12-02T08:00:00Z\"}]}");
    snprintf(body, sizeof(body),
             "{\"type\":\"%s\",\"object\":{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":"
             "\"Workload\",\"metadata\":{\"name\":\"%s\",\"namespace\":\"ns\",\"resourceVersion\":"
             "\"%d\",\"managedFields\":[{\"manager\":\"m\"}],\"someNewField\":1},\"spec\":{"
             "\"queueName\":\"lq\",\"podSets\":[{\"name\":\"main\",\"count\":1,\"template\":{"
             "\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"i\",\"resources\":{"
             "\"requests\":{\"cpu\":\"%d\"}}}]}}}]},\"status\":%s}}",
             type, name, rv++, cpu, status);
    j = json_loads(body, 0, NULL);
    ck_assert_msg(j != NULL, "bad test JSON: %s", body);
    rc = verify_replay_record(r, j, msg);
    json_decref(j);
    return rc;
}

static void ok(const char *type, const char *name, int cpu, wstate_t state, const char *cq)
{
    err_msg_t msg = {{0}};
    err_t rc = rec(type, name, cpu, state, cq, &msg);
    ck_assert_msg(rc == ERR_OK, "%s %s: %s", type, name, msg.text);
}

START_TEST(clean_history_checks_every_admission)
{
    err_msg_t msg = {{0}};
    verify_replay_stats_t st;

    ok("ADDED", "w1", 1, PENDING, NULL);
    ok("MODIFIED", "w1", 1, ADMITTED, "a");
    ok("ADDED", "w2", 1, ADMITTED, "a");
    ok("ADDED", "w3", 1, EXPLAINED, NULL);
    ok("MODIFIED", "w1", 1, FINISHED, "a");          /* releases for good */
    ok("MODIFIED", "w3", 1, ADMITTED, "a");          /* in w1's place */
    ok("MODIFIED", "w2", 1, EVICTED_RELEASED, NULL); /* evicted, released, pending again */
    ok("ADDED", "w4", 1, ADMITTED, "a");
    ok("DELETED", "w4", 1, ADMITTED, "a"); /* a deletion gives the quota back */
    ok("MODIFIED", "w2", 1, ADMITTED, "a");
    ok("MODIFIED", "w3", 1, ADMITTED, "b"); /* moved: a release in a, an admission in b */
    ok("ADDED", "w5", 1, ADMITTED, "a");
    ck_assert_uint_eq(verify_replay_end(r, &msg), 0);
    st = verify_replay_stats(r);
    ck_assert_uint_eq(st.records, 12);
    ck_assert_uint_eq(st.workloads, 5);
    ck_assert_uint_eq(st.admissions, 7);
    ck_assert_uint_eq(st.releases, 4);
    ck_assert_uint_eq(st.violations, 0);
    ck_assert_uint_eq(st.undecodable, 0);
}
END_TEST

START_TEST(overcommit_is_named_by_its_record_and_the_replay_goes_on)
{
    err_msg_t msg = {{0}};

    ok("ADDED", "w1", 1, ADMITTED, "a");
    ok("ADDED", "w2", 1, ADMITTED, "a");
    ck_assert_int_eq(rec("ADDED", "w3", 1, ADMITTED, "a", &msg), ERR_INVALID);
    ck_assert_msg(strstr(msg.text, "record 3 (Workload ns/w3, resourceVersion") != NULL &&
                      strstr(msg.text, "ClusterQueue a") != NULL && strstr(msg.text, "t=") == NULL,
                  "%s", msg.text);
    ok("MODIFIED", "w3", 1, ADMITTED, "a"); /* the same admission again: said once */
    ok("MODIFIED", "w1", 1, FINISHED, "a");
    ok("ADDED", "w4", 1, ADMITTED, "a"); /* w3's refused admission was not counted */
    ck_assert_uint_eq(verify_replay_stats(r).violations, 1);
    ck_assert_uint_eq(verify_replay_end(r, &msg), 0); /* w3 ends admitted, as the API says */
}
END_TEST

START_TEST(admitted_after_finishing_is_a_violation)
{
    err_msg_t msg = {{0}};

    ok("ADDED", "w1", 1, ADMITTED, "a");
    ok("MODIFIED", "w1", 1, FINISHED, "a");
    ck_assert_int_eq(rec("MODIFIED", "w1", 1, ADMITTED, "a", &msg), ERR_INVALID);
    ck_assert_msg(strstr(msg.text, "after it finished") != NULL, "%s", msg.text);
}
END_TEST

START_TEST(pending_without_a_reason_at_the_end)
{
    err_msg_t msg = {{0}};

    ok("ADDED", "w1", 1, PENDING, NULL);
    ok("ADDED", "w2", 1, EXPLAINED, NULL);
    ok("ADDED", "w3", 1, PENDING, NULL);
    ok("DELETED", "w3", 1, PENDING, NULL);
    ck_assert_uint_eq(verify_replay_end(r, &msg), 1);
    ck_assert_msg(strstr(msg.text, "ns/w1") != NULL, "%s", msg.text);
    ck_assert_uint_eq(verify_replay_stats(r).unexplained, 1);
}
END_TEST

START_TEST(other_records_are_skipped_and_counted)
{
    err_msg_t msg = {{0}};
    json_t *bookmark = json_loads("{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"Workload\","
                                  "\"metadata\":{\"resourceVersion\":\"9\"}}}",
                                  0, NULL);
    json_t *cm = json_loads("{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{"
                            "\"name\":\"x\",\"namespace\":\"ns\"}}",
                            0, NULL);
    json_t *bad = json_loads("{\"type\":\"ADDED\",\"object\":{\"apiVersion\":"
                             "\"kueue.x-k8s.io/v1beta2\",\"kind\":\"Workload\",\"metadata\":{"
                             "\"name\":\"w\",\"namespace\":\"ns\"},\"spec\":{\"podSets\":\"x\"}}}",
                             0, NULL);

    ck_assert_int_eq(verify_replay_record(r, bookmark, &msg), ERR_OK);
    ck_assert_int_eq(verify_replay_record(r, cm, &msg), ERR_OK); /* not a record */
    ck_assert_int_eq(verify_replay_record(r, bad, &msg), ERR_OK);
    ck_assert_uint_eq(verify_replay_stats(r).records, 1);
    ck_assert_uint_eq(verify_replay_stats(r).undecodable, 1);
    json_decref(bookmark);
    json_decref(cm);
    json_decref(bad);
}
END_TEST

START_TEST(a_queue_that_cannot_be_decoded_is_named)
{
    err_msg_t msg = {{0}};
    json_t *bad = json_loads("{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"ClusterQueue\","
                             "\"metadata\":{\"name\":\"c\"},\"spec\":{\"resourceGroups\":[{"
                             "\"coveredResources\":[\"cpu\"],\"flavors\":[{\"name\":\"default\","
                             "\"resources\":[{\"name\":\"cpu\",\"nominalQuota\":\"two\"}]}]}]}}",
                             0, NULL);

    ck_assert_int_eq(verify_replay_queues(r, bad, &msg), ERR_INVALID);
    ck_assert_msg(strstr(msg.text, "ClusterQueue c: spec.resourceGroups[0]") != NULL, "%s",
                  msg.text);
    json_decref(bad);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("verify_replay");
    TCase *tc = tcase_create("replay");
    SRunner *sr;
    int failed;

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, clean_history_checks_every_admission);
    tcase_add_test(tc, overcommit_is_named_by_its_record_and_the_replay_goes_on);
    tcase_add_test(tc, admitted_after_finishing_is_a_violation);
    tcase_add_test(tc, pending_without_a_reason_at_the_end);
    tcase_add_test(tc, other_records_are_skipped_and_counted);
    tcase_add_test(tc, a_queue_that_cannot_be_decoded_is_named);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
