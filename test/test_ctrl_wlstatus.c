/* test_ctrl_wlstatus -- the Workload for a Job and the status patches the operator writes. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "ctrl/cond.h"
#include "ctrl/podsready.h"
#include "ctrl/wlstatus.h"

#include "ctrl/ctrl_int.h"
#include "jobs/framework.h"
#include "jobs/job_workload.h"
#include "model/diag.h"
#include "model/object.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

static json_t *load(const char *text)
{
    json_error_t e;
    json_t *j = json_loads(text, 0, &e);
    ck_assert_msg(j != NULL, "%s", e.text);
    return j;
}

static const char *job_text =
    "{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"metadata\":{\"name\":\"train\","
    "\"namespace\":\"ns1\",\"uid\":\"U\",\"labels\":{\"kueue.x-k8s.io/queue-name\":\"lq-a\"},"
    "\"annotations\":{\"kueue.x-k8s.io/job-min-parallelism\":\"2\"}},"
    "\"spec\":{\"parallelism\":4,\"completions\":8,\"suspend\":true,\"template\":{\"metadata\":"
    "{\"labels\":{\"app\":\"x\",\"job-name\":\"train\",\"controller-uid\":\"U\"}},"
    "\"spec\":{\"restartPolicy\":\"Never\",\"containers\":[{\"name\":\"c\",\"image\":\"i\","
    "\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]}}}}";

static const char *wl_text =
    "{\"metadata\":{\"name\":\"job-train-abcde\",\"namespace\":\"ns1\",\"resourceVersion\":\"42\","
    "\"generation\":2},\"spec\":{\"queueName\":\"lq-a\",\"podSets\":[{\"name\":\"main\","
    "\"count\":4}]},\"status\":{\"conditions\":[{\"type\":\"QuotaReserved\",\"status\":\"False\","
    "\"reason\":\"Pending\",\"message\":\"wait\",\"lastTransitionTime\":\"2026-01-01T00:00:00Z\","
    "\"observedGeneration\":2},"
    "{\"type\":\"Evicted\",\"status\":\"True\",\"reason\":\"Preempted\",\"message\":\"by x\","
    "\"lastTransitionTime\":\"2026-01-01T00:00:00Z\"}]}}";

static json_t *cond(json_t *patch, const char *type)
{
    return cond_find(json_object_get(json_object_get(patch, "status"), "conditions"), type);
}

static const char *cs(json_t *patch, const char *type, const char *key)
{
    return json_string_value(json_object_get(cond(patch, type), key));
}

START_TEST(workload_for_job)
{
    json_t *job = load(job_text), *wl, *ps, *labels;
    const jobs_kind_t *k = jobs_kind_named("batch/job");
    jobs_podset_t pss[JOBS_PODSETS_MAX];
    size_t n = 0;
    err_msg_t msg = {{0}};
    workload_t w = {0};

    ck_assert_ptr_nonnull(k);
    ck_assert_msg(jobs_workload_build(k, job, NULL, &w, &msg) == ERR_OK, "%s", msg.text);
    ck_assert_int_eq(k->pod_sets(job, pss, &n, NULL), ERR_OK);
    /* Pod sets that do not match the Workload's: refused, not half-built. */
    ck_assert_ptr_null(wlstatus_for_job(&w, k, job, pss, 0, "batch.test.sluice.dev/v1", &msg));
    wl = wlstatus_for_job(&w, k, job, pss, n, "batch.test.sluice.dev/v1", &msg);
    ck_assert_ptr_nonnull(wl);
    ck_assert_str_eq(json_string_value(json_object_get(wl, "kind")), "Workload");
    ck_assert_str_eq(json_string_value(json_object_get(json_object_get(wl, "metadata"), "name")),
                     w.meta.name);
    ck_assert_str_eq(json_string_value(json_array_get(
                         json_object_get(json_object_get(wl, "metadata"), "finalizers"), 0)),
                     "kueue.x-k8s.io/resource-in-use");
    {
        json_t *ref =
            json_array_get(json_object_get(json_object_get(wl, "metadata"), "ownerReferences"), 0);
        ck_assert_str_eq(json_string_value(json_object_get(ref, "apiVersion")),
                         "batch.test.sluice.dev/v1");
        ck_assert_str_eq(json_string_value(json_object_get(ref, "uid")), "U");
        ck_assert(json_is_true(json_object_get(ref, "controller")));
        ck_assert(json_is_true(json_object_get(ref, "blockOwnerDeletion")));
    }
    ck_assert_str_eq(json_string_value(json_object_get(json_object_get(wl, "spec"), "queueName")),
                     "lq-a");
    ps = json_array_get(json_object_get(json_object_get(wl, "spec"), "podSets"), 0);
    ck_assert_int_eq(json_integer_value(json_object_get(ps, "count")), 4);
    ck_assert_int_eq(json_integer_value(json_object_get(ps, "minCount")), 2);
    labels =
        json_object_get(json_object_get(json_object_get(ps, "template"), "metadata"), "labels");
    ck_assert_ptr_nonnull(json_object_get(labels, "app"));
    ck_assert_ptr_null(json_object_get(labels, "job-name"));
    ck_assert_ptr_null(json_object_get(labels, "controller-uid"));
    {
        json_t *c0 = json_array_get(
            json_object_get(json_object_get(json_object_get(ps, "template"), "spec"), "containers"),
            0);
        ck_assert_str_eq(json_string_value(json_object_get(c0, "image")), "i");
    }
    json_decref(wl);
    workload_fini(&w);
    json_decref(job);
}
END_TEST

/* Two-phase admission: quota reserved, Admitted=False until the checks are Ready; the checks
 * list as the operator builds it (checks.c), and their reset on eviction. */
START_TEST(reserve_patch_with_checks)
{
    json_t *wl = load(wl_text), *p, *list, *item;
    kv_t flavors[] = {{(char *)"cpu", (char *)"f1"}};
    resource_t usage[] = {{(char *)"cpu", quantity_from_int(4, QUANTITY_DECIMAL_SI)}};
    pod_set_assignment_t psa = {(char *)"main", {flavors, 1}, {usage, 1}, true, 4, NULL};
    admission_t a = {(char *)"cq-a", &psa, 1};
    admission_check_state_t st[2];
    workload_t w;
    char *names[] = {(char *)"a-check", (char *)"prov"};

    memset(&w, 0, sizeof(w));
    memset(st, 0, sizeof(st));
    st[0].name = (char *)"prov";
    st[0].state = CHECK_STATE_RETRY;
    st[0].message = (char *)"no capacity";
    st[0].transition_time = 1700000000;
    st[1].name = (char *)"gone";
    st[1].state = CHECK_STATE_PENDING;
    w.check_states = st;
    w.ncheck_states = 1;
    list = ctrl__checks_reserve_list(&w, names, 2, 1800000000);
    ck_assert_uint_eq(json_array_size(list), 2);
    item = json_array_get(list, 0);
    ck_assert_str_eq(json_string_value(json_object_get(item, "name")), "a-check");
    ck_assert_str_eq(json_string_value(json_object_get(item, "state")), "Pending");
    ck_assert_str_eq(json_string_value(json_object_get(item, "message")), "");
    ck_assert_str_eq(json_string_value(json_object_get(item, "lastTransitionTime")),
                     "2027-01-15T08:00:00Z");
    item = json_array_get(list, 1); /* known: kept as it is */
    ck_assert_str_eq(json_string_value(json_object_get(item, "state")), "Retry");
    ck_assert_str_eq(json_string_value(json_object_get(item, "message")), "no capacity");
    p = wlstatus_reserve_patch(wl, &a, list, 1800000000);
    ck_assert_ptr_nonnull(p);
    ck_assert_str_eq(cs(p, "QuotaReserved", "status"), "True");
    ck_assert_str_eq(cs(p, "Admitted", "status"), "False");
    ck_assert_str_eq(cs(p, "Admitted", "reason"), "UnsatisfiedAdmissionChecks");
    ck_assert_str_eq(cs(p, "Admitted", "message"), "The workload has not all checks ready");
    ck_assert(json_equal(json_object_get(json_object_get(p, "status"), "admissionChecks"), list));
    json_decref(p);
    json_decref(list);

    /* Eviction: every check back to Pending, saying what it was; nothing when all are. */
    list = ctrl__checks_reset_list(&w, 1800000060);
    item = json_array_get(list, 0);
    ck_assert_str_eq(json_string_value(json_object_get(item, "state")), "Pending");
    ck_assert_str_eq(json_string_value(json_object_get(item, "message")),
                     "Reset to Pending after eviction. Previously: Retry");
    json_decref(list);
    w.check_states = &st[1];
    ck_assert_ptr_null(ctrl__checks_reset_list(&w, 1800000060));
    json_decref(wl);
}
END_TEST

/* The checks' podSetUpdates for a pod set, merged; a key with two values is a conflict. */
START_TEST(check_podset_updates)
{
    pod_set_update_t up[2];
    kv_t ns[] = {{(char *)"cloud/provisioned", (char *)"yes"}};
    kv_t lb[] = {{(char *)"team", (char *)"a"}};
    kv_t clash[] = {{(char *)"zone", (char *)"b"}};
    toleration_t tol = {(char *)"spot",           NULL,  TOLERATION_OP_EXISTS,
                        TAINT_EFFECT_NO_SCHEDULE, false, 0};
    admission_check_state_t st;
    workload_t w;
    json_t *nodes = json_pack("{s:s}", "zone", "a"), *tols = json_array();
    json_t *labels = json_object(), *ann = json_object();
    err_msg_t msg;

    memset(up, 0, sizeof(up));
    memset(&st, 0, sizeof(st));
    memset(&w, 0, sizeof(w));
    up[0].name = (char *)"main";
    up[0].node_selector = (kv_list_t){ns, 1};
    up[0].labels = (kv_list_t){lb, 1};
    up[0].tolerations = &tol;
    up[0].ntolerations = 1;
    up[1].name = (char *)"other";
    up[1].node_selector = (kv_list_t){clash, 1};
    st.name = (char *)"prov";
    st.state = CHECK_STATE_READY;
    st.updates = up;
    st.nupdates = 2;
    w.check_states = &st;
    w.ncheck_states = 1;
    ck_assert_int_eq(ctrl__checks_podset_updates(&w, "main", nodes, tols, labels, ann, &msg),
                     ERR_OK);
    ck_assert_str_eq(json_string_value(json_object_get(nodes, "cloud/provisioned")), "yes");
    ck_assert_str_eq(json_string_value(json_object_get(labels, "team")), "a");
    ck_assert_uint_eq(json_array_size(tols), 1);
    ck_assert_str_eq(json_string_value(json_object_get(json_array_get(tols, 0), "operator")),
                     "Exists");
    ck_assert_int_eq(ctrl__checks_podset_updates(&w, "other", nodes, tols, labels, ann, &msg),
                     ERR_CONFLICT);
    ck_assert_str_eq(msg.text, "invalid nodeSelector: conflict for key=zone, value1=a, value2=b");
    json_decref(nodes);
    json_decref(tols);
    json_decref(labels);
    json_decref(ann);
}
END_TEST

/* Kueue keeps a check's entry whole (podSetUpdates, requeueAfterSeconds, retryCount) when the
 * quota is reserved again and when a Pending one is reset; an eviction resets every other one to
 * Pending without its podSetUpdates, keeps requeueAfterSeconds and counts a Retry in retryCount
 * (resetChecksOnEviction). */
START_TEST(check_entries_kept_and_reset)
{
    pod_set_update_t up;
    kv_t ns[] = {{(char *)"cloud/provisioned", (char *)"yes"}};
    toleration_t tol = {(char *)"spot",           NULL,  TOLERATION_OP_EXISTS,
                        TAINT_EFFECT_NO_SCHEDULE, false, 0};
    admission_check_state_t st[3];
    workload_t w;
    char *names[] = {(char *)"a-pend", (char *)"b-ready", (char *)"c-retry"};
    json_t *list, *item, *psu;

    memset(&up, 0, sizeof(up));
    memset(st, 0, sizeof(st));
    memset(&w, 0, sizeof(w));
    up.name = (char *)"main";
    up.node_selector = (kv_list_t){ns, 1};
    up.tolerations = &tol;
    up.ntolerations = 1;
    for (int i = 0; i < 3; i++) {
        st[i].name = names[i];
        st[i].transition_time = 1700000000;
        st[i].updates = &up;
        st[i].nupdates = 1;
    }
    st[0].state = CHECK_STATE_PENDING;
    st[1].state = CHECK_STATE_READY;
    st[1].has_retry_count = true;
    st[1].retry_count = 4;
    st[2].state = CHECK_STATE_RETRY;
    st[2].message = (char *)"later";
    st[2].has_requeue_after = true;
    st[2].requeue_after_s = 90;
    st[2].has_retry_count = true;
    st[2].retry_count = 2;
    w.check_states = st;
    w.ncheck_states = 3;

    list = ctrl__checks_reserve_list(&w, names, 3, 1800000000);
    ck_assert_uint_eq(json_array_size(list), 3);
    for (size_t i = 0; i < 3; i++) {
        item = json_array_get(list, i);
        psu = json_array_get(json_object_get(item, "podSetUpdates"), 0);
        ck_assert_str_eq(json_string_value(json_object_get(psu, "name")), "main");
        ck_assert_str_eq(json_string_value(json_object_get(json_object_get(psu, "nodeSelector"),
                                                           "cloud/provisioned")),
                         "yes");
        ck_assert_str_eq(json_string_value(json_object_get(
                             json_array_get(json_object_get(psu, "tolerations"), 0), "effect")),
                         "NoSchedule");
        ck_assert_str_eq(json_string_value(json_object_get(item, "lastTransitionTime")),
                         "2023-11-14T22:13:20Z");
    }
    item = json_array_get(list, 2);
    ck_assert_int_eq(json_integer_value(json_object_get(item, "requeueAfterSeconds")), 90);
    ck_assert_int_eq(json_integer_value(json_object_get(item, "retryCount")), 2);
    json_decref(list);

    list = ctrl__checks_reset_list(&w, 1800000060);
    ck_assert_uint_eq(json_array_size(list), 3);
    item = json_array_get(list, 0); /* Pending: kept whole */
    ck_assert_str_eq(json_string_value(json_object_get(item, "lastTransitionTime")),
                     "2023-11-14T22:13:20Z");
    ck_assert_uint_eq(json_array_size(json_object_get(item, "podSetUpdates")), 1);
    item = json_array_get(list, 1); /* Ready: reset, its retryCount gone */
    ck_assert_str_eq(json_string_value(json_object_get(item, "state")), "Pending");
    ck_assert_ptr_null(json_object_get(item, "podSetUpdates"));
    ck_assert_ptr_null(json_object_get(item, "retryCount"));
    item = json_array_get(list, 2); /* Retry: counted, its delay kept */
    ck_assert_str_eq(json_string_value(json_object_get(item, "state")), "Pending");
    ck_assert_str_eq(json_string_value(json_object_get(item, "message")),
                     "Reset to Pending after eviction. Previously: Retry");
    ck_assert_str_eq(json_string_value(json_object_get(item, "lastTransitionTime")),
                     "2027-01-15T08:01:00Z");
    ck_assert_ptr_null(json_object_get(item, "podSetUpdates"));
    ck_assert_int_eq(json_integer_value(json_object_get(item, "retryCount")), 3);
    ck_assert_int_eq(json_integer_value(json_object_get(item, "requeueAfterSeconds")), 90);
    json_decref(list);
    st[2].has_retry_count = false; /* a first Retry: retryCount 1 */
    list = ctrl__checks_reset_list(&w, 1800000060);
    ck_assert_int_eq(json_integer_value(json_object_get(json_array_get(list, 2), "retryCount")), 1);
    json_decref(list);
}
END_TEST

/* A Retry check's requeueAfterSeconds: the latest lastTransitionTime + delay of the checks in
 * Retry (GetMaxRetryTime); the release then leaves Requeued=False AdmissionCheck until
 * requeueState.requeueAt, and that backoff holds the Workload as a PodsReady one does. */
START_TEST(check_retry_delay)
{
    admission_check_state_t st[3];
    workload_t w;
    json_t *wl, *p;

    memset(st, 0, sizeof(st));
    memset(&w, 0, sizeof(w));
    st[0].name = (char *)"a";
    st[0].state = CHECK_STATE_RETRY;
    st[0].transition_time = 1000;
    st[0].has_requeue_after = true;
    st[0].requeue_after_s = 60;
    st[1].name = (char *)"b";
    st[1].state = CHECK_STATE_RETRY;
    st[1].transition_time = 1030;
    st[1].has_requeue_after = true;
    st[1].requeue_after_s = 45;
    st[2].name = (char *)"c"; /* not Retry: its delay does not count */
    st[2].state = CHECK_STATE_PENDING;
    st[2].transition_time = 1000;
    st[2].has_requeue_after = true;
    st[2].requeue_after_s = 600;
    w.check_states = st;
    w.ncheck_states = 3;
    ck_assert_int_eq(ctrl__checks_retry_at(&w), 1075);
    st[1].has_requeue_after = false;
    ck_assert_int_eq(ctrl__checks_retry_at(&w), 1060);
    st[0].state = CHECK_STATE_READY;
    ck_assert_int_eq(ctrl__checks_retry_at(&w), 0);

    wl = load("{\"metadata\":{\"name\":\"w\",\"namespace\":\"ns\"},\"status\":{"
              "\"requeueState\":{\"requeueAt\":\"2027-01-15T08:01:40Z\"},\"conditions\":[{"
              "\"type\":\"Evicted\",\"status\":\"True\",\"reason\":\"AdmissionCheck\","
              "\"message\":\"Evicted due to AdmissionCheck in Retry state: \\\"a\\\"\","
              "\"lastTransitionTime\":\"2027-01-15T08:00:00Z\"}]}}");
    p = wlstatus_release_patch(wl, 1800000000);
    ck_assert_str_eq(cs(p, "Requeued", "status"), "False");
    ck_assert_str_eq(cs(p, "Requeued", "reason"), "AdmissionCheck");
    ck_assert_str_eq(cs(p, "Requeued", "message"),
                     "Evicted due to AdmissionCheck in Retry state: \"a\"");
    json_object_set(json_object_get(wl, "status"), "conditions",
                    json_object_get(json_object_get(p, "status"), "conditions"));
    ck_assert(podsready_held(wl));
    json_decref(p);
    p = wlstatus_release_patch(wl, 1800000100); /* the delay is over: requeued at once */
    ck_assert_str_eq(cs(p, "Requeued", "status"), "True");
    ck_assert_str_eq(cs(p, "Requeued", "reason"), "BackoffFinished");
    json_decref(p);
    json_decref(wl);
}
END_TEST

/* Kueue's NeedsRequeueAtUpdate: a check set to Retry on a Workload already evicted (or
 * requeued) moves requeueState.requeueAt to its lastTransitionTime + requeueAfterSeconds when
 * that is later than the current one and still to come; never earlier. At that time the
 * backoff ends even when Requeued is already True: only requeueAt goes. */
START_TEST(check_retry_moves_requeue_at)
{
    admission_check_state_t st[2];
    workload_t w;
    json_t *wl, *p, *rs;

    memset(st, 0, sizeof(st));
    memset(&w, 0, sizeof(w));
    st[0].name = (char *)"a";
    st[0].state = CHECK_STATE_RETRY;
    st[0].transition_time = 1000;
    st[0].has_requeue_after = true;
    st[0].requeue_after_s = 60;
    st[1].name = (char *)"b";
    st[1].state = CHECK_STATE_PENDING;
    w.check_states = st;
    w.ncheck_states = 2;
    /* no requeueAt yet: 1060 */
    ck_assert_int_eq(ctrl__checks_requeue_at_update(&w, 0, 1000 * 1000), 1060);
    /* an earlier one moves later */
    ck_assert_int_eq(ctrl__checks_requeue_at_update(&w, 1030, 1000 * 1000), 1060);
    /* the same or a later one stays */
    ck_assert_int_eq(ctrl__checks_requeue_at_update(&w, 1060, 1000 * 1000), 0);
    ck_assert_int_eq(ctrl__checks_requeue_at_update(&w, 1200, 1000 * 1000), 0);
    /* already past: nothing to wait for */
    ck_assert_int_eq(ctrl__checks_requeue_at_update(&w, 0, 1060 * 1000), 0);
    /* a second check in Retry later, with a longer delay: the latest wins */
    st[1].state = CHECK_STATE_RETRY;
    st[1].transition_time = 1050;
    st[1].has_requeue_after = true;
    st[1].requeue_after_s = 120;
    ck_assert_int_eq(ctrl__checks_requeue_at_update(&w, 1060, 1055 * 1000), 1170);
    /* no delay asked: nothing */
    st[0].has_requeue_after = false;
    st[1].has_requeue_after = false;
    ck_assert_int_eq(ctrl__checks_requeue_at_update(&w, 0, 1000 * 1000), 0);

    wl = load("{\"metadata\":{\"name\":\"w\",\"namespace\":\"ns\",\"resourceVersion\":\"7\"},"
              "\"status\":{\"requeueState\":{\"count\":1,\"requeueAt\":\"2027-01-15T08:01:40Z\"},"
              "\"conditions\":[{\"type\":\"Requeued\",\"status\":\"True\","
              "\"reason\":\"BackoffFinished\",\"message\":\"The workload backoff was finished\","
              "\"lastTransitionTime\":\"2027-01-15T08:00:00Z\"}]}}");
    p = podsready_backoff_done_patch(wl, 1800000000);
    ck_assert_ptr_nonnull(p);
    ck_assert_str_eq(
        json_string_value(json_object_get(json_object_get(p, "metadata"), "resourceVersion")), "7");
    rs = json_object_get(json_object_get(p, "status"), "requeueState");
    ck_assert(json_is_null(json_object_get(rs, "requeueAt")));
    ck_assert_ptr_null(json_object_get(rs, "count"));
    ck_assert_ptr_null(json_object_get(json_object_get(p, "status"), "conditions"));
    json_decref(p);
    json_decref(wl);
}
END_TEST

START_TEST(admit_patch)
{
    json_t *wl = load(wl_text), *p, *adm;
    kv_t flavors[] = {{(char *)"cpu", (char *)"f1"}};
    resource_t usage[] = {{(char *)"cpu", quantity_from_int(4, QUANTITY_DECIMAL_SI)}};
    pod_set_assignment_t psa = {(char *)"main", {flavors, 1}, {usage, 1}, true, 4, NULL};
    admission_t a = {(char *)"cq-a", &psa, 1};

    p = wlstatus_admit_patch(wl, &a, 1800000000);
    ck_assert_ptr_nonnull(p);
    /* Optimistic concurrency: the version the decision saw. */
    ck_assert_str_eq(
        json_string_value(json_object_get(json_object_get(p, "metadata"), "resourceVersion")),
        "42");
    adm = json_object_get(json_object_get(p, "status"), "admission");
    ck_assert_str_eq(json_string_value(json_object_get(adm, "clusterQueue")), "cq-a");
    adm = json_array_get(json_object_get(adm, "podSetAssignments"), 0);
    ck_assert_str_eq(json_string_value(json_object_get(json_object_get(adm, "flavors"), "cpu")),
                     "f1");
    ck_assert_str_eq(
        json_string_value(json_object_get(json_object_get(adm, "resourceUsage"), "cpu")), "4");
    ck_assert_int_eq(json_integer_value(json_object_get(adm, "count")), 4);
    ck_assert_str_eq(cs(p, "QuotaReserved", "status"), "True");
    ck_assert_str_eq(cs(p, "QuotaReserved", "message"), "Quota reserved in ClusterQueue cq-a");
    ck_assert_str_eq(cs(p, "QuotaReserved", "lastTransitionTime"), "2027-01-15T08:00:00Z");
    ck_assert_int_eq(
        json_integer_value(json_object_get(cond(p, "QuotaReserved"), "observedGeneration")), 2);
    ck_assert_str_eq(cs(p, "Admitted", "status"), "True");
    ck_assert_str_eq(cs(p, "Admitted", "message"), "The workload is admitted");
    /* A previous eviction is reset to False with its old message kept. */
    ck_assert_str_eq(cs(p, "Evicted", "status"), "False");
    ck_assert_str_eq(cs(p, "Evicted", "reason"), "QuotaReserved");
    ck_assert_str_eq(cs(p, "Evicted", "message"), "Previously: by x");
    /* The input object is not modified. */
    ck_assert_str_eq(
        json_string_value(json_object_get(
            cond_find(json_object_get(json_object_get(wl, "status"), "conditions"), "Evicted"),
            "status")),
        "True");
    json_decref(p);
    json_decref(wl);
}
END_TEST

/* The placement of topology-aware scheduling, written as Kueue writes v1beta2: slices (issue 17's
 * four rack-2 nodes, one pod each: one slice with a common prefix). */
START_TEST(admit_patch_topology_assignment)
{
    json_t *wl = load(wl_text), *p, *ta, *want;
    char *levels[] = {(char *)"kubernetes.io/hostname"};
    char *values[] = {(char *)"r2-n1", (char *)"r2-n2", (char *)"r2-n3", (char *)"r2-n4"};
    int32_t counts[] = {1, 1, 1, 1};
    topology_assignment_t t = {levels, 1, values, counts, 4};
    kv_t flavors[] = {{(char *)"nvidia.com/gpu", (char *)"gpu"}};
    resource_t usage[] = {{(char *)"nvidia.com/gpu", quantity_from_int(32, QUANTITY_DECIMAL_SI)}};
    pod_set_assignment_t psa = {(char *)"main", {flavors, 1}, {usage, 1}, true, 4, &t};
    admission_t a = {(char *)"cq-a", &psa, 1};

    p = wlstatus_admit_patch(wl, &a, 1800000000);
    ck_assert_ptr_nonnull(p);
    ta = json_object_get(
        json_array_get(json_object_get(json_object_get(json_object_get(p, "status"), "admission"),
                                       "podSetAssignments"),
                       0),
        "topologyAssignment");
    want = load("{\"levels\":[\"kubernetes.io/hostname\"],\"slices\":[{\"domainCount\":4,"
                "\"valuesPerLevel\":[{\"individual\":{\"prefix\":\"r2-n\",\"roots\":[\"1\","
                "\"2\",\"3\",\"4\"]}}],\"podCounts\":{\"universal\":1}}]}");
    ck_assert_msg(json_equal(ta, want), "got %s", json_dumps(ta, JSON_COMPACT));
    json_decref(want);
    json_decref(p);

    /* Failed-node replacement: the new admission alone, the failed-node record removed */
    p = wlstatus_replace_patch(&a);
    ck_assert_ptr_nonnull(p);
    ck_assert_uint_eq(json_object_size(p), 1);
    ck_assert_uint_eq(json_object_size(json_object_get(p, "status")), 2);
    ck_assert_ptr_nonnull(json_object_get(json_object_get(p, "status"), "admission"));
    ck_assert(json_is_null(json_object_get(json_object_get(p, "status"), "unhealthyNodes")));
    json_decref(p);
    json_decref(wl);
}
END_TEST

/* status.unhealthyNodes as Kueue's node controller writes it: [{name}], or removed. */
START_TEST(unhealthy_patch)
{
    const char *nodes[] = {"n1", "n2"};
    json_t *p = wlstatus_unhealthy_patch(nodes, 2), *want;

    want = load("{\"status\":{\"unhealthyNodes\":[{\"name\":\"n1\"},{\"name\":\"n2\"}]}}");
    ck_assert(json_equal(p, want));
    json_decref(want);
    json_decref(p);
    p = wlstatus_unhealthy_patch(NULL, 0);
    want = load("{\"status\":{\"unhealthyNodes\":null}}");
    ck_assert(json_equal(p, want));
    json_decref(want);
    json_decref(p);
}
END_TEST

START_TEST(release_accumulates_execution_time)
{
    /* Admitted since 2027-01-15T08:00:00Z (1800000000), 5 s accumulated before: released 100 s
     * later, 105 s; a deactivation for exceeding the maximum execution time clears it. */
    json_t *wl = load("{\"metadata\":{\"name\":\"w\",\"namespace\":\"ns\"},\"status\":{"
                      "\"accumulatedPastExecutionTimeSeconds\":5,\"conditions\":[{\"type\":"
                      "\"Admitted\",\"status\":\"True\",\"reason\":\"Admitted\",\"message\":"
                      "\"\",\"lastTransitionTime\":\"2027-01-15T08:00:00Z\"},{\"type\":"
                      "\"Evicted\",\"status\":\"True\",\"reason\":\"Preempted\",\"message\":"
                      "\"x\",\"lastTransitionTime\":\"2027-01-15T08:01:40Z\"}]}}");
    json_t *p = wlstatus_release_patch(wl, 1800000000 + 100);
    const json_t *acc =
        json_object_get(json_object_get(p, "status"), "accumulatedPastExecutionTimeSeconds");
    ck_assert(json_is_integer(acc));
    ck_assert_int_eq(json_integer_value(acc), 105);
    ck_assert_str_eq(cs(p, "Admitted", "status"), "False");
    json_decref(p);
    json_decref(wl);
    wl = load("{\"metadata\":{\"name\":\"w\",\"namespace\":\"ns\"},\"status\":{"
              "\"accumulatedPastExecutionTimeSeconds\":5,\"conditions\":[{\"type\":"
              "\"Admitted\",\"status\":\"True\",\"reason\":\"Admitted\",\"message\":"
              "\"\",\"lastTransitionTime\":\"2027-01-15T08:00:00Z\"},{\"type\":"
              "\"Evicted\",\"status\":\"True\",\"reason\":"
              "\"DeactivatedDueToMaximumExecutionTimeExceeded\",\"message\":\"x\","
              "\"lastTransitionTime\":\"2027-01-15T08:01:40Z\"}]}}");
    p = wlstatus_release_patch(wl, 1800000000 + 100);
    acc = json_object_get(json_object_get(p, "status"), "accumulatedPastExecutionTimeSeconds");
    ck_assert(json_is_null(acc));
    json_decref(p);
    json_decref(wl);
}
END_TEST

START_TEST(evict_release_finish)
{
    json_t *wl = load(wl_text), *p, *reserved;

    p = wlstatus_evict_patch(wl, "Preempted", "InClusterQueue", "to make room", 100);
    ck_assert_str_eq(cs(p, "Evicted", "message"), "to make room");
    ck_assert_str_eq(cs(p, "Preempted", "reason"), "InClusterQueue");
    json_decref(p);
    p = wlstatus_evict_patch(wl, "ClusterQueueStopped", "", "stopped", 100);
    ck_assert_ptr_null(cond(p, "Preempted"));
    ck_assert_ptr_null(json_object_get(json_object_get(p, "status"), "unhealthyNodes"));
    json_decref(p);
    /* a Workload waiting for a failed node's replacement: the eviction removes the record */
    ck_assert_int_eq(json_object_set_new(json_object_get(wl, "status"), "unhealthyNodes",
                                         json_pack("[{s:s}]", "name", "n1")),
                     0);
    p = wlstatus_evict_patch(wl, "NodeFailures", "", "no replacement", 100);
    ck_assert(json_is_null(json_object_get(json_object_get(p, "status"), "unhealthyNodes")));
    json_decref(p);
    json_object_del(json_object_get(wl, "status"), "unhealthyNodes");

    p = wlstatus_release_patch(wl, 100);
    ck_assert(json_is_null(json_object_get(json_object_get(p, "status"), "admission")));
    ck_assert_str_eq(cs(p, "QuotaReserved", "status"), "False");
    ck_assert_str_eq(cs(p, "QuotaReserved", "reason"), "PendingEvaluation");
    ck_assert_str_eq(cs(p, "Admitted", "reason"), "NoReservation");
    ck_assert_str_eq(cs(p, "Requeued", "status"), "True");
    ck_assert_str_eq(cs(p, "Requeued", "reason"), "Preempted");
    json_decref(p);

    p = wlstatus_finish_patch(wl, "Succeeded", "done", 100);
    ck_assert_str_eq(cs(p, "Finished", "status"), "True");
    ck_assert_str_eq(cs(p, "Finished", "reason"), "Succeeded");
    json_decref(p);

    ck_assert(!wlstatus_reserved(wl));
    ck_assert(wlstatus_cond(wl, "Evicted"));
    reserved = load("{\"status\":{\"admission\":{\"clusterQueue\":\"a\"},\"conditions\":"
                    "[{\"type\":\"QuotaReserved\",\"status\":\"True\"}]}}");
    ck_assert(wlstatus_reserved(reserved));
    json_decref(reserved);
    json_decref(wl);
}
END_TEST

START_TEST(pending_only_when_changed)
{
    json_t *wl = load(wl_text), *p;
    bool changed = true;

    p = wlstatus_pending_patch(wl, "Pending", "wait", 100, &changed);
    ck_assert_ptr_null(p);
    ck_assert(!changed);
    p = wlstatus_pending_patch(wl, "WaitingForQuota", "insufficient quota", 100, &changed);
    ck_assert_ptr_nonnull(p);
    ck_assert(changed);
    ck_assert_str_eq(cs(p, "QuotaReserved", "reason"), "WaitingForQuota");
    /* Same status: the transition time stays. */
    ck_assert_str_eq(cs(p, "QuotaReserved", "lastTransitionTime"), "2026-01-01T00:00:00Z");
    json_decref(p);
    json_decref(wl);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("ctrl_wlstatus");
    TCase *tc = tcase_create("core");
    SRunner *sr;
    int failed;

    tcase_add_test(tc, workload_for_job);
    tcase_add_test(tc, admit_patch);
    tcase_add_test(tc, reserve_patch_with_checks);
    tcase_add_test(tc, check_podset_updates);
    tcase_add_test(tc, check_entries_kept_and_reset);
    tcase_add_test(tc, check_retry_delay);
    tcase_add_test(tc, check_retry_moves_requeue_at);
    tcase_add_test(tc, admit_patch_topology_assignment);
    tcase_add_test(tc, unhealthy_patch);
    tcase_add_test(tc, evict_release_finish);
    tcase_add_test(tc, release_accumulates_execution_time);
    tcase_add_test(tc, pending_only_when_changed);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
