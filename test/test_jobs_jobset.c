/* test_jobs_jobset -- JobSet through the framework: issue 14's acceptance example (2 replicated
 * Jobs x 4 pods x 1 GPU -> one Workload with 2 pod sets; start injects the flavor into every
 * template and clears spec.suspend; stop restores), counts, status, errors. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "jobs/framework.h"
#include "util/alloc.h"

#include "jobs_fixtures.h"
#define OOM_WRAP_STRDUP
#include "model/quantity.h"
#include "oom_wrap.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Document `i` of test/data/jobs/jobset-acceptance.yaml, a new reference. */
static json_t *fixture(size_t i)
{
    return jf_doc("jobset-acceptance.yaml", i);
}

static const jobs_kind_t *jobset(void)
{
    const jobs_kind_t *k = jobs_kind_find("jobset.x-k8s.io/v1alpha2", "JobSet");
    ck_assert_ptr_nonnull(k);
    return k;
}

/* The pod template of replicated Job `i`. */
static json_t *tmpl(json_t *js, size_t i)
{
    json_t *rj = json_array_get(json_object_get(json_object_get(js, "spec"), "replicatedJobs"), i);
    return json_object_get(json_object_get(json_object_get(rj, "template"), "spec"), "template");
}

static const char *at(json_t *t, const char *where, const char *map, const char *key)
{
    return json_string_value(json_object_get(json_object_get(json_object_get(t, where), map), key));
}

/* The Workload's spec.podSets as Kueue writes it for `js`: name, count, template copy. */
static json_t *workload_pod_sets(json_t *js)
{
    jobs_podset_t ps[JOBS_PODSETS_MAX];
    json_t *arr = json_array();
    size_t n = 0;

    ck_assert_int_eq(jobset()->pod_sets(js, ps, &n, NULL), ERR_OK);
    for (size_t i = 0; i < n; i++)
        ck_assert_int_eq(
            json_array_append_new(arr, json_pack("{s:s, s:i, s:O}", "name", ps[i].name, "count",
                                                 ps[i].count, "template", ps[i].tmpl)),
            0);
    return arr;
}

START_TEST(acceptance_workload)
{
    json_t *js = fixture(0);
    const quantity_t *gpu;
    quantity_t one;
    workload_t wl;
    err_msg_t msg = {{0}};

    ck_assert(jobset()->suspended(js));
    ck_assert_int_eq(jobs_workload_build(jobset(), js, NULL, &wl, &msg), ERR_OK);
    /* printf 'JobSet\njobset.x-k8s.io\ntrain\n0b7c2f5e-...-2a1d5e7c9b01' | sha1sum -> 5a24c... */
    ck_assert_str_eq(wl.meta.name, "jobset-train-5a24c");
    ck_assert_str_eq(wl.meta.namespace, "team-a");
    ck_assert_str_eq(wl.queue_name, "gpu");
    ck_assert_uint_eq(wl.npod_sets, 2);
    ck_assert_str_eq(wl.pod_sets[0].name, "leaders");
    ck_assert_str_eq(wl.pod_sets[1].name, "workers");
    ck_assert_int_eq(quantity_parse("1", 1, &one, NULL), ERR_OK);
    for (size_t i = 0; i < 2; i++) {
        ck_assert_int_eq(wl.pod_sets[i].count, 4);
        ck_assert(!wl.pod_sets[i].has_min_count);
        gpu = resource_list_get(&wl.pod_sets[i].pod_requests, "nvidia.com/gpu");
        ck_assert_ptr_nonnull(gpu);
        ck_assert_int_eq(quantity_cmp(*gpu, one), 0);
    }
    ck_assert_str_eq(kv_list_get(&wl.pod_sets[0].template_labels, "role"), "leader");
    ck_assert_uint_eq(wl.pod_sets[1].spec.ntolerations, 1);
    workload_fini(&wl);
    json_decref(js);
}
END_TEST

START_TEST(acceptance_start_and_stop)
{
    json_t *js = fixture(0), *orig = json_deep_copy(js), *pod_sets = workload_pod_sets(js);
    json_t *nodes = json_pack("{s:s}", "cloud.google.com/gke-accelerator", "nvidia-a100");
    json_t *tols = json_pack("[{s:s, s:s, s:s}]", "key", "nvidia.com/gpu", "operator", "Exists",
                             "effect", "NoSchedule");
    jobs_start_info_t info[2] = {
        {"leaders", "gpu", "gpus", "jobset-train-abcde", nodes, tols, false, 0},
        {"workers", "gpu", "gpus", "jobset-train-abcde", nodes, tols, false, 0},
    };
    uint64_t restored = jobs_digest(jobset(), js);
    bool changed = false;
    err_msg_t msg = {{0}};

    ck_assert_uint_ne(restored, 0);
    ck_assert_uint_eq(jobs_podsets_digest(pod_sets), restored);
    ck_assert_int_eq(jobs_start(jobset(), js, info, 2, &msg), ERR_OK);
    ck_assert(!jobset()->suspended(js));
    ck_assert(json_is_false(json_object_get(json_object_get(js, "spec"), "suspend")));
    for (size_t i = 0; i < 2; i++) {
        json_t *t = tmpl(js, i);
        ck_assert_str_eq(at(t, "spec", "nodeSelector", "cloud.google.com/gke-accelerator"),
                         "nvidia-a100");
        ck_assert_str_eq(at(t, "metadata", "labels", JOBS_LABEL_PODSET), info[i].name);
        ck_assert_str_eq(at(t, "metadata", "labels", JOBS_LABEL_LOCAL_QUEUE), "gpu");
        ck_assert_str_eq(at(t, "metadata", "labels", JOBS_LABEL_CLUSTER_QUEUE), "gpus");
        ck_assert_str_eq(at(t, "metadata", "annotations", JOBS_ANNOTATION_WORKLOAD),
                         "jobset-train-abcde");
    }
    /* The worker template keeps its own toleration and gains the flavor's. */
    ck_assert_uint_eq(
        json_array_size(json_object_get(json_object_get(tmpl(js, 1), "spec"), "tolerations")), 2);
    ck_assert_str_eq(at(tmpl(js, 0), "metadata", "labels", "role"), "leader");
    ck_assert_uint_ne(jobs_digest(jobset(), js), restored);

    /* Preempted: held again, every template back to the Workload's. */
    ck_assert_int_eq(jobs_stop(jobset(), js, pod_sets, &changed, &msg), ERR_OK);
    ck_assert(changed);
    ck_assert(jobset()->suspended(js));
    ck_assert(json_equal(js, orig));
    ck_assert_uint_eq(jobs_digest(jobset(), js), restored);
    ck_assert_int_eq(jobs_stop(jobset(), js, pod_sets, &changed, &msg), ERR_OK);
    ck_assert(!changed);
    json_decref(js);
    json_decref(orig);
    json_decref(pod_sets);
    json_decref(nodes);
    json_decref(tols);
}
END_TEST

START_TEST(start_conflict_in_second_pod_set_leaves_jobset)
{
    json_t *js = fixture(0), *before;
    json_t *nodes = json_pack("{s:s}", "pool", "a");
    jobs_start_info_t info[2] = {
        {"leaders", "gpu", "gpus", "w", nodes, NULL, false, 0},
        {"workers", "gpu", "gpus", "w", nodes, NULL, false, 0},
    };
    err_msg_t msg = {{0}};

    json_object_set_new(json_object_get(tmpl(js, 1), "spec"), "nodeSelector",
                        json_pack("{s:s}", "pool", "b"));
    before = json_deep_copy(js);
    ck_assert_int_eq(jobs_start(jobset(), js, info, 2, &msg), ERR_CONFLICT);
    ck_assert_str_eq(msg.text, "invalid nodeSelector: conflict for key=pool, value1=b, value2=a");
    ck_assert(json_equal(js, before));
    json_decref(js);
    json_decref(before);
    json_decref(nodes);
}
END_TEST

START_TEST(replicas_and_status)
{
    json_t *js = fixture(1);
    jobs_podset_t ps[JOBS_PODSETS_MAX];
    const char *m = NULL;
    size_t n = 0;

    ck_assert_int_eq(jobset()->pod_sets(js, ps, &n, NULL), ERR_OK);
    ck_assert_uint_eq(n, 1);
    ck_assert_str_eq(ps[0].name, "shards");
    ck_assert_int_eq(ps[0].count, 6); /* 3 replicas x min(2, 5) */
    ck_assert_int_eq(ps[0].min_count, 0);
    ck_assert_str_eq(ps[0].path, "spec.replicatedJobs[0].template.spec.template");
    ck_assert(!jobset()->suspended(js));
    ck_assert_int_eq(jobset()->phase(js, &m), JOBS_SUCCEEDED);
    ck_assert_str_eq(m, "jobset completed successfully");
    ck_assert(jobset()->active(js));
    ck_assert(jobset()->pods_ready(js)); /* 3 replica Jobs: 1 ready + 2 succeeded */
    ck_assert_ptr_null(jobset()->set_count);
    json_decref(js);

    js = fixture(0);
    ck_assert_int_eq(jobset()->phase(js, &m), JOBS_RUNNING);
    ck_assert(!jobset()->active(js));
    ck_assert(!jobset()->pods_ready(js));
    json_object_set_new(js, "status",
                        json_pack("{s:[{s:s, s:s, s:s}]}", "conditions", "type", "Failed", "status",
                                  "True", "message", "a job failed"));
    ck_assert_int_eq(jobset()->phase(js, &m), JOBS_FAILED);
    ck_assert_str_eq(m, "a job failed");
    json_decref(js);
}
END_TEST

START_TEST(errors_name_the_field)
{
    json_t *js = fixture(0);
    json_t *rjobs = json_object_get(json_object_get(js, "spec"), "replicatedJobs");
    workload_t wl;
    err_msg_t msg = {{0}};

    json_object_set_new(tmpl(js, 1), "spec",
                        json_pack("{s:[{s:s, s:{s:{s:s}}}]}", "containers", "name", "c",
                                  "resources", "requests", "cpu", "two"));
    ck_assert_int_eq(jobs_workload_build(jobset(), js, NULL, &wl, &msg), ERR_INVALID);
    ck_assert_msg(strstr(msg.text, "spec.replicatedJobs[1].template.spec.template.spec."
                                   "containers[0].resources.requests.cpu") != NULL,
                  "%s", msg.text);
    json_object_del(json_array_get(rjobs, 0), "name");
    ck_assert_int_eq(jobs_workload_build(jobset(), js, NULL, &wl, &msg), ERR_INVALID);
    ck_assert_msg(strstr(msg.text, "spec.replicatedJobs[0].name") != NULL, "%s", msg.text);
    json_array_clear(rjobs);
    ck_assert_int_eq(jobs_workload_build(jobset(), js, NULL, &wl, &msg), ERR_INVALID);
    ck_assert_msg(strstr(msg.text, "spec.replicatedJobs") != NULL, "%s", msg.text);
    ck_assert_uint_eq(jobs_digest(jobset(), js), 0);
    json_decref(js);
}
END_TEST

/* Every allocation of building the Workload, starting and stopping fails in turn: ERR_NOMEM, no
 * leak (ASan), and a start that fails before its final swap leaves the JobSet as it was. */
START_TEST(out_of_memory)
{
    json_t *orig = fixture(0), *pod_sets = workload_pod_sets(orig);
    json_t *nodes = json_pack("{s:s}", "pool", "gpu");
    json_t *tols = json_pack("[{s:s, s:s}]", "key", "gpu", "operator", "Exists");
    jobs_start_info_t info[2] = {{"leaders", "gpu", "gpus", "w", nodes, tols, false, 0},
                                 {"workers", "gpu", "gpus", "w", nodes, tols, false, 0}};

    const jobs_kind_t *k = jobset(); /* Check allocates in ck_assert: not between the fail points */

    util_alloc_install();
    for (int op = 0; op < 3; op++) {
        for (long n = 1;; n++) {
            json_t *js = json_deep_copy(orig), *started = json_deep_copy(orig);
            workload_t wl;
            bool changed = false;
            err_msg_t msg = {{0}};
            err_t rc;
            long made;

            ck_assert_int_eq(jobs_start(k, started, info, 2, NULL), ERR_OK);
            oom_fail_at(n);
            if (op == 0)
                rc = jobs_workload_build(k, js, NULL, &wl, &msg);
            else if (op == 1)
                rc = jobs_start(k, js, info, 2, &msg);
            else
                rc = jobs_stop(k, started, pod_sets, &changed, &msg);
            made = oom_count();
            oom_fail_at(0);
            if (made < n) {
                ck_assert_msg(rc == ERR_OK, "%s", msg.text);
                if (op == 0) {
                    ck_assert_uint_eq(wl.npod_sets, 2);
                    workload_fini(&wl);
                }
                if (op == 2)
                    ck_assert(changed && json_equal(started, orig));
                json_decref(js);
                json_decref(started);
                break;
            }
            ck_assert_msg(rc == ERR_NOMEM, "op %d allocation %ld: %d %s", op, n, rc, msg.text);
            if (op == 0)
                ck_assert_ptr_null(wl.pod_sets);
            json_decref(js);
            json_decref(started);
        }
    }
    util_alloc_install();
    json_decref(orig);
    json_decref(pod_sets);
    json_decref(nodes);
    json_decref(tols);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("jobs_jobset");
    TCase *t = tcase_create("jobset");

    tcase_add_test(t, acceptance_workload);
    tcase_add_test(t, acceptance_start_and_stop);
    tcase_add_test(t, start_conflict_in_second_pod_set_leaves_jobset);
    tcase_add_test(t, replicas_and_status);
    tcase_add_test(t, errors_name_the_field);
    tcase_add_test(t, out_of_memory);
    /* out_of_memory runs build, start and stop some 700 times: seconds under ASan on a busy
     * machine, past Check's default of 4. */
    tcase_set_timeout(t, 60);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    SRunner *r = srunner_create(suite());
    int failed;

    srunner_run_all(r, CK_NORMAL);
    failed = srunner_ntests_failed(r);
    srunner_free(r);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
