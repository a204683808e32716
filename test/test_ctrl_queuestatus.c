/* test_ctrl_queuestatus -- ClusterQueue and LocalQueue status computed from the engine. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "ctrl/cond.h"
#include "ctrl/queuestatus.h"
#include "model/diag.h"
#include "model/object.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

/* Decode `text` and upsert it into `s`. */
static void add(sched_t *s, const char *text, bool admitted)
{
    json_error_t e;
    json_t *j = json_loads(text, 0, &e);
    object_t o;
    diags_t d;
    err_msg_t msg = {{0}};
    sched_wl_opts_t opts = {0};
    err_t rc = ERR_OK;

    ck_assert_msg(j != NULL, "%s", e.text);
    diags_init(&d);
    ck_assert_msg(object_decode(j, &o, &d) == ERR_OK, "%s: %s", d.len ? d.items[0].path : "",
                  d.len ? d.items[0].message : "");
    switch (o.kind) {
    case KIND_NAMESPACE:
        rc = sched_namespace_upsert(s, &o.u.ns, &msg);
        break;
    case KIND_RESOURCE_FLAVOR:
        rc = sched_flavor_upsert(s, &o.u.flavor, &msg);
        break;
    case KIND_CLUSTER_QUEUE:
        rc = sched_cq_upsert(s, &o.u.cq, &msg);
        break;
    case KIND_LOCAL_QUEUE:
        rc = sched_lq_upsert(s, &o.u.lq, &msg);
        break;
    case KIND_COHORT:
        rc = sched_cohort_upsert(s, &o.u.cohort, &msg);
        break;
    case KIND_WORKLOAD:
        opts.created = 1000;
        opts.admitted_at = admitted ? 2000 : 0;
        rc = sched_workload_upsert(s, &o.u.wl, &opts, &msg);
        break;
    default:
        ck_abort_msg("unexpected kind");
    }
    ck_assert_msg(rc == ERR_OK, "%s", msg.text);
    object_fini(&o);
    diags_fini(&d);
    json_decref(j);
}

#define WL(name, gpus, admission)                                                                 \
    "{\"apiVersion\":\"kueue.x-k8s.io/"                                                           \
    "v1beta2\",\"kind\":\"Workload\",\"metadata\":{\"name\":\"" name                              \
    "\",\"namespace\":\"ns\"},\"spec\":{\"queueName\":\"lq\",\"podSets\":[{\"name\":"             \
    "\"main\",\"count\":1,\"template\":{\"spec\":{\"containers\":[{\"name\":\"c\",\"resources\":" \
    "{\"requests\":{\"nvidia.com/gpu\":\"" gpus "\"}}}]}}}]}" admission "}"

static sched_t *fixture(void)
{
    sched_t *s = sched_new(NULL);

    ck_assert_ptr_nonnull(s);
    add(s, "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"ns\"}}", false);
    add(s,
        "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"ResourceFlavor\","
        "\"metadata\":{\"name\":\"f1\"}}",
        false);
    add(s,
        "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"ClusterQueue\",\"metadata\":"
        "{\"name\":\"cq\"},\"spec\":{\"cohortName\":\"co\",\"namespaceSelector\":{},"
        "\"resourceGroups\":[{\"coveredResources\":[\"nvidia.com/gpu\"],\"flavors\":[{\"name\":"
        "\"f1\",\"resources\":[{\"name\":\"nvidia.com/gpu\",\"nominalQuota\":2}]}]}]}}",
        false);
    add(s,
        "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"ClusterQueue\",\"metadata\":"
        "{\"name\":\"lender\"},\"spec\":{\"cohortName\":\"co\",\"namespaceSelector\":{},"
        "\"resourceGroups\":[{\"coveredResources\":[\"nvidia.com/gpu\"],\"flavors\":[{\"name\":"
        "\"f1\",\"resources\":[{\"name\":\"nvidia.com/gpu\",\"nominalQuota\":4}]}]}]}}",
        false);
    add(s,
        "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"LocalQueue\",\"metadata\":"
        "{\"name\":\"lq\",\"namespace\":\"ns\"},\"spec\":{\"clusterQueue\":\"cq\"}}",
        false);
    /* Restart-style: an admitted Workload holding 3 GPUs (1 borrowed), one pending. */
    add(s,
        WL("running", "3",
           ",\"status\":{\"admission\":{\"clusterQueue\":\"cq\",\"podSetAssignments\":[{\"name\":"
           "\"main\",\"flavors\":{\"nvidia.com/gpu\":\"f1\"},\"resourceUsage\":{\"nvidia.com/gpu\":"
           "\"3\"},\"count\":1}]},\"conditions\":[{\"type\":\"QuotaReserved\",\"status\":\"True\","
           "\"reason\":\"QuotaReserved\",\"message\":\"\",\"lastTransitionTime\":"
           "\"2026-01-01T00:00:00Z\"},{\"type\":\"Admitted\",\"status\":\"True\",\"reason\":"
           "\"Admitted\",\"message\":\"\",\"lastTransitionTime\":\"2026-01-01T00:00:00Z\"}]}"),
        true);
    add(s, WL("waiting", "8", ""), false);
    return s;
}

static json_t *res_of(json_t *list, const char *flavor, const char *res)
{
    for (size_t i = 0; i < json_array_size(list); i++) {
        json_t *f = json_array_get(list, i);
        if (strcmp(json_string_value(json_object_get(f, "name")), flavor) != 0)
            continue;
        for (size_t j = 0; j < json_array_size(json_object_get(f, "resources")); j++) {
            json_t *r = json_array_get(json_object_get(f, "resources"), j);
            if (strcmp(json_string_value(json_object_get(r, "name")), res) == 0)
                return r;
        }
    }
    return NULL;
}

START_TEST(cluster_queue_status)
{
    sched_t *s = fixture();
    json_t *st = queuestatus_cq(s, "cq", NULL, false, 100), *r, *again;
    json_t *active;

    ck_assert_ptr_nonnull(st);
    ck_assert_int_eq(json_integer_value(json_object_get(st, "pendingWorkloads")), 1);
    ck_assert_int_eq(json_integer_value(json_object_get(st, "reservingWorkloads")), 1);
    ck_assert_int_eq(json_integer_value(json_object_get(st, "admittedWorkloads")), 1);
    r = res_of(json_object_get(st, "flavorsReservation"), "f1", "nvidia.com/gpu");
    ck_assert_ptr_nonnull(r);
    ck_assert_str_eq(json_string_value(json_object_get(r, "total")), "3");
    ck_assert_str_eq(json_string_value(json_object_get(r, "borrowed")), "1");
    r = res_of(json_object_get(st, "flavorsUsage"), "f1", "nvidia.com/gpu");
    ck_assert_str_eq(json_string_value(json_object_get(r, "total")), "3");
    active = cond_find(json_object_get(st, "conditions"), "Active");
    ck_assert_str_eq(json_string_value(json_object_get(active, "status")), "True");
    ck_assert_str_eq(json_string_value(json_object_get(active, "reason")), "Ready");
    ck_assert_ptr_null(json_object_get(st, "fairSharing"));
    /* Computing again from the written status gives the same object: nothing to write. */
    again = queuestatus_cq(s, "cq", st, false, 200);
    ck_assert(json_equal(again, st));
    json_decref(again);
    ck_assert_ptr_null(queuestatus_cq(s, "nope", NULL, false, 100));
    json_decref(st);
    st = queuestatus_cq(s, "cq", NULL, true, 100);
    ck_assert_ptr_nonnull(json_object_get(json_object_get(st, "fairSharing"), "weightedShare"));
    json_decref(st);
    sched_free(s);
}
END_TEST

START_TEST(cohort_status_fair_sharing)
{
    /* Cohort "team" (under root "org") holds ClusterQueue cq, which borrows 1 GPU from the
     * lender in org: with fair sharing its status carries a positive weightedShare, without it
     * the field is removed and the rest of the status is kept. */
    sched_config_t cfg = {.fair_sharing = true};
    sched_t *s = sched_new(&cfg);
    json_t *st, *cur;
    int64_t share = -1;

    ck_assert_ptr_nonnull(s);
    add(s, "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"ns\"}}", false);
    add(s,
        "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"ResourceFlavor\","
        "\"metadata\":{\"name\":\"f1\"}}",
        false);
    add(s,
        "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"Cohort\",\"metadata\":"
        "{\"name\":\"team\"},\"spec\":{\"parentName\":\"org\"}}",
        false);
    add(s,
        "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"ClusterQueue\",\"metadata\":"
        "{\"name\":\"cq\"},\"spec\":{\"cohortName\":\"team\",\"namespaceSelector\":{},"
        "\"resourceGroups\":[{\"coveredResources\":[\"nvidia.com/gpu\"],\"flavors\":[{\"name\":"
        "\"f1\",\"resources\":[{\"name\":\"nvidia.com/gpu\",\"nominalQuota\":2}]}]}]}}",
        false);
    add(s,
        "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"ClusterQueue\",\"metadata\":"
        "{\"name\":\"lender\"},\"spec\":{\"cohortName\":\"org\",\"namespaceSelector\":{},"
        "\"resourceGroups\":[{\"coveredResources\":[\"nvidia.com/gpu\"],\"flavors\":[{\"name\":"
        "\"f1\",\"resources\":[{\"name\":\"nvidia.com/gpu\",\"nominalQuota\":4}]}]}]}}",
        false);
    add(s,
        "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"LocalQueue\",\"metadata\":"
        "{\"name\":\"lq\",\"namespace\":\"ns\"},\"spec\":{\"clusterQueue\":\"cq\"}}",
        false);
    add(s,
        WL("running", "3",
           ",\"status\":{\"admission\":{\"clusterQueue\":\"cq\",\"podSetAssignments\":[{\"name\":"
           "\"main\",\"flavors\":{\"nvidia.com/gpu\":\"f1\"},\"resourceUsage\":{\"nvidia.com/gpu\":"
           "\"3\"},\"count\":1}]},\"conditions\":[{\"type\":\"QuotaReserved\",\"status\":\"True\","
           "\"reason\":\"QuotaReserved\",\"message\":\"\",\"lastTransitionTime\":"
           "\"2026-01-01T00:00:00Z\"}]}"),
        true);
    ck_assert_int_eq(sched_cohort_weighted_share(s, "team", &share, NULL), ERR_OK);
    ck_assert_int_gt(share, 0);
    ck_assert_int_eq(sched_cohort_weighted_share(s, "org", &share, NULL), ERR_OK);
    ck_assert_int_eq(share, 0); /* the root borrows from nobody */
    cur = json_pack("{s:{s:s}}", "other", "k", "v");
    st = queuestatus_cohort(s, "team", cur, true);
    ck_assert_int_gt(
        json_integer_value(json_object_get(json_object_get(st, "fairSharing"), "weightedShare")),
        0);
    ck_assert_ptr_nonnull(json_object_get(st, "other"));
    json_decref(cur);
    cur = st;
    st = queuestatus_cohort(s, "team", cur, false);
    ck_assert_ptr_null(json_object_get(st, "fairSharing"));
    ck_assert_ptr_nonnull(json_object_get(st, "other"));
    json_decref(st);
    json_decref(cur);
    ck_assert_ptr_null(queuestatus_cohort(s, "nope", NULL, true));
    sched_free(s);
}
END_TEST

START_TEST(cluster_queue_inactive)
{
    sched_t *s = fixture();
    json_t *st, *active;

    ck_assert_int_eq(sched_flavor_delete(s, "f1", NULL), ERR_OK);
    st = queuestatus_cq(s, "cq", NULL, false, 100);
    active = cond_find(json_object_get(st, "conditions"), "Active");
    ck_assert_str_eq(json_string_value(json_object_get(active, "status")), "False");
    ck_assert_str_eq(json_string_value(json_object_get(active, "reason")), "FlavorNotFound");
    json_decref(st);
    sched_free(s);
}
END_TEST

START_TEST(local_queue_status)
{
    sched_t *s = fixture();
    queuestatus_lqs_t lqs = {0};
    json_t *st, *r, *active;

    ck_assert_int_eq(queuestatus_lq_collect(s, &lqs), ERR_OK);
    st = queuestatus_lq(s, &lqs, "ns/lq", "cq", false, NULL, 100);
    ck_assert_int_eq(json_integer_value(json_object_get(st, "pendingWorkloads")), 1);
    ck_assert_int_eq(json_integer_value(json_object_get(st, "reservingWorkloads")), 1);
    ck_assert_int_eq(json_integer_value(json_object_get(st, "admittedWorkloads")), 1);
    r = res_of(json_object_get(st, "flavorsUsage"), "f1", "nvidia.com/gpu");
    ck_assert_str_eq(json_string_value(json_object_get(r, "total")), "3");
    active = cond_find(json_object_get(st, "conditions"), "Active");
    ck_assert_str_eq(json_string_value(json_object_get(active, "status")), "True");
    json_decref(st);
    /* A LocalQueue naming no known ClusterQueue is inactive, with no counts. */
    st = queuestatus_lq(s, &lqs, "ns/other", "missing", false, NULL, 100);
    ck_assert_int_eq(json_integer_value(json_object_get(st, "pendingWorkloads")), 0);
    active = cond_find(json_object_get(st, "conditions"), "Active");
    ck_assert_str_eq(json_string_value(json_object_get(active, "reason")),
                     "ClusterQueueDoesNotExist");
    json_decref(st);
    /* A stopped LocalQueue (stopPolicy Hold or HoldAndDrain) is inactive, counts kept. */
    st = queuestatus_lq(s, &lqs, "ns/lq", "cq", true, NULL, 100);
    ck_assert_int_eq(json_integer_value(json_object_get(st, "pendingWorkloads")), 1);
    active = cond_find(json_object_get(st, "conditions"), "Active");
    ck_assert_str_eq(json_string_value(json_object_get(active, "status")), "False");
    ck_assert_str_eq(json_string_value(json_object_get(active, "reason")), "Stopped");
    ck_assert_str_eq(json_string_value(json_object_get(active, "message")),
                     "LocalQueue is stopped");
    json_decref(st);
    queuestatus_lqs_fini(&lqs);
    sched_free(s);
}
END_TEST

/* Two admissions in one LocalQueue: counted twice, their usage summed exactly in one entry. */
START_TEST(local_queue_sums_admissions)
{
    sched_t *s = fixture();
    queuestatus_lqs_t lqs;
    json_t *st, *flv;

    add(s,
        WL("second", "1",
           ",\"status\":{\"admission\":{\"clusterQueue\":\"cq\",\"podSetAssignments\":[{\"name\":"
           "\"main\",\"flavors\":{\"nvidia.com/gpu\":\"f1\"},\"resourceUsage\":{\"nvidia.com/gpu\":"
           "\"1\"},\"count\":1}]},\"conditions\":[{\"type\":\"QuotaReserved\",\"status\":\"True\","
           "\"reason\":\"QuotaReserved\",\"message\":\"\",\"lastTransitionTime\":"
           "\"2026-01-01T00:00:00Z\"}]}"),
        true);
    ck_assert_int_eq(queuestatus_lq_collect(s, &lqs), ERR_OK);
    st = queuestatus_lq(s, &lqs, "ns/lq", "cq", false, NULL, 100);
    ck_assert_int_eq(json_integer_value(json_object_get(st, "pendingWorkloads")), 1);
    ck_assert_int_eq(json_integer_value(json_object_get(st, "admittedWorkloads")), 2);
    flv = json_object_get(st, "flavorsReservation");
    ck_assert_uint_eq(json_array_size(flv), 1);
    ck_assert_uint_eq(json_array_size(json_object_get(json_array_get(flv, 0), "resources")), 1);
    ck_assert_str_eq(
        json_string_value(json_object_get(res_of(flv, "f1", "nvidia.com/gpu"), "total")), "4");
    json_decref(st);
    queuestatus_lqs_fini(&lqs);
    sched_free(s);
}
END_TEST

/* Admission fair sharing: status.fairSharing of a LocalQueue from the engine, and the seed a
 * restarted operator takes from it. */
static sched_t *afs_engine(void)
{
    sched_config_t cfg = {0};
    cfg.afs = true;
    cfg.afs_half_life_ms = 10 * 60 * 1000;
    cfg.afs_sampling_ms = 5 * 60 * 1000;
    sched_t *s = sched_new(&cfg);
    ck_assert_ptr_nonnull(s);
    add(s,
        "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"ResourceFlavor\","
        "\"metadata\":{\"name\":\"f1\"}}",
        false);
    add(s,
        "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"ClusterQueue\",\"metadata\":"
        "{\"name\":\"cq\"},\"spec\":{\"namespaceSelector\":{},\"admissionScope\":{"
        "\"admissionMode\":\"UsageBasedAdmissionFairSharing\"},"
        "\"resourceGroups\":[{\"coveredResources\":[\"nvidia.com/gpu\"],\"flavors\":[{\"name\":"
        "\"f1\",\"resources\":[{\"name\":\"nvidia.com/gpu\",\"nominalQuota\":8}]}]}]}}",
        false);
    add(s,
        "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"LocalQueue\",\"metadata\":"
        "{\"name\":\"lq\",\"namespace\":\"ns\"},\"spec\":{\"clusterQueue\":\"cq\"}}",
        false);
    return s;
}

static const char *afs_field(json_t *st, const char *field)
{
    json_t *a = json_object_get(json_object_get(st, "fairSharing"), "admissionFairSharingStatus");
    if (strcmp(field, "lastUpdate") == 0)
        return json_string_value(json_object_get(a, "lastUpdate"));
    return json_string_value(json_object_get(json_object_get(a, "consumedResources"), field));
}

START_TEST(local_queue_afs_status_and_seed)
{
    sched_t *s = afs_engine();
    sched_decisions_t out;
    json_t *st = json_object();
    const int64_t t0 = 1767225600000; /* 2026-01-01T00:00:00Z */

    /* no time seen yet: nothing written */
    ck_assert_int_eq(queuestatus_lq_afs(s, "ns/lq", t0, st), ERR_OK);
    ck_assert_ptr_null(json_object_get(st, "fairSharing"));
    add(s, WL("w", "4", ""), false);
    sched_decisions_init(&out);
    ck_assert_int_eq(sched_cycle(s, t0, &out, NULL), ERR_OK);
    ck_assert_uint_eq(out.len, 1);
    /* the entry penalty: 4 x (1 - 2^-0.5) */
    ck_assert_int_eq(queuestatus_lq_afs(s, "ns/lq", t0 + 1000, st), ERR_OK);
    ck_assert_int_eq(
        json_integer_value(json_object_get(json_object_get(st, "fairSharing"), "weightedShare")),
        0);
    ck_assert_str_eq(afs_field(st, "nvidia.com/gpu"), "1171572875n");
    ck_assert_str_eq(afs_field(st, "lastUpdate"), "2026-01-01T00:00:00Z");
    /* the sample at 5m */
    ck_assert_int_eq(queuestatus_lq_afs(s, "ns/lq", t0 + 5 * 60000, st), ERR_OK);
    ck_assert_str_eq(afs_field(st, "nvidia.com/gpu"), "1999999999n");
    ck_assert_str_eq(afs_field(st, "lastUpdate"), "2026-01-01T00:05:00Z");
    sched_decisions_fini(&out);
    sched_free(s);

    /* a restart: the status written seeds the new engine once, its clock from the next time
     * (not from the admitted workload restored before any time was passed) */
    s = afs_engine();
    add(s,
        "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"Workload\",\"metadata\":{"
        "\"name\":\"w\",\"namespace\":\"ns\"},\"spec\":{\"queueName\":\"lq\",\"podSets\":[{"
        "\"name\":\"main\",\"count\":1,\"template\":{\"spec\":{\"containers\":[{\"name\":"
        "\"c\",\"resources\":{\"requests\":{\"nvidia.com/gpu\":\"4\"}}}]}}}]},\"status\":{"
        "\"admission\":{\"clusterQueue\":\"cq\",\"podSetAssignments\":[{\"name\":\"main\","
        "\"flavors\":{\"nvidia.com/gpu\":\"f1\"},\"resourceUsage\":{\"nvidia.com/gpu\":\"4\"},"
        "\"count\":1}]},\"conditions\":[{\"type\":\"QuotaReserved\",\"status\":\"True\","
        "\"reason\":\"QuotaReserved\",\"message\":\"\",\"lastTransitionTime\":"
        "\"2026-01-01T00:00:00Z\"}]}}",
        true);
    ck_assert_int_eq(queuestatus_lq_afs_seed(s, "ns/lq", st), ERR_OK);
    ck_assert_int_eq(queuestatus_lq_afs_seed(s, "ns/missing", st), ERR_OK);
    sched_decisions_init(&out);
    ck_assert_int_eq(sched_cycle(s, t0 + 7 * 60000, &out, NULL), ERR_OK);
    json_t *st2 = json_object();
    ck_assert_int_eq(queuestatus_lq_afs(s, "ns/lq", t0 + 7 * 60000, st2), ERR_OK);
    ck_assert_str_eq(afs_field(st2, "nvidia.com/gpu"), "1999999999n");
    ck_assert_str_eq(afs_field(st2, "lastUpdate"), "2026-01-01T00:07:00Z");
    /* the sample 5m later: 1.999999999 x 2^-0.5 + 4 x (1 - 2^-0.5) (the restored workload) */
    ck_assert_int_eq(queuestatus_lq_afs(s, "ns/lq", t0 + 12 * 60000, st2), ERR_OK);
    ck_assert_str_eq(afs_field(st2, "nvidia.com/gpu"), "2585786436n");
    json_decref(st2);
    json_decref(st);
    sched_decisions_fini(&out);
    sched_free(s);
}
END_TEST

int main(void)
{
    Suite *su = suite_create("ctrl_queuestatus");
    TCase *tc = tcase_create("core");
    SRunner *sr;
    int failed;

    tcase_add_test(tc, cluster_queue_status);
    tcase_add_test(tc, cluster_queue_inactive);
    tcase_add_test(tc, cohort_status_fair_sharing);
    tcase_add_test(tc, local_queue_sums_admissions);
    tcase_add_test(tc, local_queue_status);
    tcase_add_test(tc, local_queue_afs_status_and_seed);
    suite_add_tcase(su, tc);
    sr = srunner_create(su);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
