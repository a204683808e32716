/* test_jobs_ray -- RayJob and RayCluster read as Kueue's ray integrations read them. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "jobs/kind_ray.h"
#include "util/alloc.h"

#include "model/quantity.h"

#include "jobs_fixtures.h"
#include "oom_wrap.h"

#include <check.h>
#include <stdio.h>
#include <string.h>

static const jobs_kind_t *const RJ = &jobs_kind_rayjob;
static const jobs_kind_t *const RC = &jobs_kind_raycluster;

START_TEST(rayjob_pod_sets_head_groups_submitter)
{
    json_t *rj = jf_doc("ray.yaml", 0);
    ck_assert_ptr_null(jf_at(rj, "spec submitterPodTemplate"));
    jobs_podset_t sets[JOBS_PODSETS_MAX];
    ck_assert_uint_eq(jf_pod_sets(RJ, rj, sets), 4);

    ck_assert_str_eq(sets[0].name, "head");
    ck_assert_int_eq(sets[0].count, 1);
    ck_assert_ptr_eq(sets[0].tmpl, jf_at(rj, "spec rayClusterSpec headGroupSpec template"));
    ck_assert_str_eq(sets[1].name, "gpu-workers"); /* groupName lower-cased */
    ck_assert_int_eq(sets[1].count, 3);            /* replicas, not min or max */
    ck_assert_str_eq(sets[2].name, "tpu");
    ck_assert_int_eq(sets[2].count, 8); /* replicas x numOfHosts */
    ck_assert_str_eq(sets[3].name, "submitter");
    ck_assert_int_eq(sets[3].count, 1);
    for (size_t i = 0; i < 4; i++)
        ck_assert_int_eq(sets[i].min_count, 0);

    /* K8sJobMode without a template: the head's template stands in, nothing is written... */
    ck_assert_ptr_eq(sets[3].tmpl, sets[0].tmpl);
    ck_assert_ptr_null(jf_at(rj, "spec submitterPodTemplate"));

    /* ...and the framework reads a prepared copy: KubeRay's default submitter in the Workload. */
    err_msg_t msg = {{0}};
    workload_t wl = {0};
    ck_assert_msg(jobs_workload_build(RJ, rj, NULL, &wl, &msg) == ERR_OK, "%s", msg.text);
    ck_assert_str_eq(wl.pod_sets[3].name, "submitter");
    ck_assert_uint_eq(wl.pod_sets[3].spec.ncontainers, 1);
    ck_assert_str_eq(wl.pod_sets[3].spec.containers[0].name, "ray-job-submitter");
    ck_assert_ptr_null(jf_at(rj, "spec submitterPodTemplate"));
    workload_fini(&wl);
    json_decref(rj);
}
END_TEST

START_TEST(rayjob_submission_modes)
{
    jobs_podset_t sets[JOBS_PODSETS_MAX];
    json_t *rj = jf_doc("ray.yaml", 0);
    json_t *own = jf_yaml("spec: {containers: [{name: submit, image: mine}]}");
    json_object_set_new(json_object_get(rj, "spec"), "submitterPodTemplate", own);
    ck_assert_uint_eq(jf_pod_sets(RJ, rj, sets), 4);
    ck_assert_ptr_eq(sets[3].tmpl, own); /* the user's template, borrowed */

    const char *modes[] = {"HTTPMode", "InteractiveMode", "SidecarMode"};
    for (size_t i = 0; i < 3; i++) {
        json_object_set_new(json_object_get(rj, "spec"), "submissionMode", json_string(modes[i]));
        ck_assert_uint_eq(jf_pod_sets(RJ, rj, sets), 3);
        ck_assert_str_eq(sets[2].name, "tpu");
    }
    json_object_set_new(json_object_get(rj, "spec"), "submissionMode", json_string("K8sJobMode"));
    ck_assert_uint_eq(jf_pod_sets(RJ, rj, sets), 4);
    json_decref(rj);
}
END_TEST

START_TEST(prepare_writes_the_default_submitter)
{
    err_msg_t msg = {{0}};
    json_t *rj = jf_doc("ray.yaml", 0);
    ck_assert_ptr_null(RC->prepare);
    ck_assert_int_eq(RJ->prepare(rj, &msg), ERR_OK);
    json_t *sub = jf_at(rj, "spec submitterPodTemplate");
    ck_assert_str_eq(jf_str(sub, "spec containers 0 name"), "ray-job-submitter");
    json_t *once = json_deep_copy(rj);
    ck_assert_int_eq(RJ->prepare(rj, &msg), ERR_OK); /* idempotent */
    ck_assert(json_equal(rj, once));
    json_decref(once);
    json_decref(rj);

    /* Other submission modes have no submitter Job: nothing to write. */
    rj = jf_doc("ray.yaml", 3);
    once = json_deep_copy(rj);
    ck_assert_int_eq(RJ->prepare(rj, &msg), ERR_OK);
    ck_assert(json_equal(rj, once));
    json_decref(once);
    json_decref(rj);
}
END_TEST

START_TEST(raycluster_pod_sets)
{
    jobs_podset_t sets[JOBS_PODSETS_MAX];
    json_t *rc = jf_doc("ray.yaml", 1);
    ck_assert_uint_eq(jf_pod_sets(RC, rc, sets), 2);
    ck_assert_str_eq(sets[0].name, "head");
    ck_assert_str_eq(sets[1].name, "small");
    ck_assert_int_eq(sets[1].count, 1); /* no replicas: Kueue counts 1, whatever min/max say */
    ck_assert_ptr_eq(sets[1].tmpl, jf_at(rc, "spec workerGroupSpecs 0 template"));
    json_decref(rc);
}
END_TEST

START_TEST(raycluster_head_template_counts_kuberay_additions)
{
    json_t *rc = jf_doc("ray.yaml", 1);
    json_t *head = json_deep_copy(jf_at(rc, "spec headGroupSpec template"));
    json_t *worker = json_deep_copy(jf_at(rc, "spec workerGroupSpecs 0 template"));
    json_t *worker_before = json_deep_copy(worker);
    err_msg_t msg = {{0}};
    ck_assert_int_eq(RC->podset_template(rc, 0, head, &msg), ERR_OK);
    ck_assert_int_eq(RC->podset_template(rc, 1, worker, &msg), ERR_OK);

    /* GCS fault tolerance ("True" counts, as KubeRay lower-cases it): Redis cleanup's requests,
     * keeping the larger of each. */
    ck_assert_str_eq(jf_str(head, "spec containers 0 resources requests cpu"), "200m");
    ck_assert_str_eq(jf_str(head, "spec containers 0 resources requests memory"), "1Gi");
    /* In-tree autoscaling: KubeRay's autoscaler sidecar with its default resources. */
    ck_assert_uint_eq(json_array_size(jf_at(head, "spec containers")), 2);
    ck_assert_str_eq(jf_str(head, "spec containers 1 name"), "autoscaler");
    ck_assert_str_eq(jf_str(head, "spec containers 1 resources requests cpu"), "500m");
    ck_assert_str_eq(jf_str(head, "spec containers 1 resources limits memory"), "512Mi");
    /* The object itself is untouched; worker templates get nothing. */
    ck_assert_uint_eq(json_array_size(jf_at(rc, "spec headGroupSpec template spec containers")), 1);
    ck_assert_str_eq(
        jf_str(rc, "spec headGroupSpec template spec containers 0 resources requests cpu"), "100m");
    ck_assert(json_equal(worker, worker_before));
    json_decref(head);
    json_decref(worker);
    json_decref(worker_before);
    json_decref(rc);
}
END_TEST

START_TEST(rayjob_sidecar_mode_head_template)
{
    jobs_podset_t sets[JOBS_PODSETS_MAX];
    json_t *rj = jf_doc("ray.yaml", 3);
    ck_assert_uint_eq(jf_pod_sets(RJ, rj, sets), 1); /* head only: no submitter Job */
    json_t *head = json_deep_copy(sets[0].tmpl);
    err_msg_t msg = {{0}};
    ck_assert_int_eq(RJ->podset_template(rj, 0, head, &msg), ERR_OK);
    ck_assert_uint_eq(json_array_size(jf_at(head, "spec containers")), 3);
    ck_assert_str_eq(jf_str(head, "spec containers 1 name"), "autoscaler");
    ck_assert_str_eq(jf_str(head, "spec containers 1 resources requests cpu"), "1");
    ck_assert_ptr_null(jf_at(head, "spec containers 1 resources limits"));
    ck_assert_str_eq(jf_str(head, "spec containers 2 name"), "ray-job-submitter");
    ck_assert_str_eq(jf_str(head, "spec containers 2 resources requests memory"), "200Mi");
    ck_assert_ptr_null(jf_at(rj, "spec submitterPodTemplate"));
    json_decref(head);
    json_decref(rj);
}
END_TEST

START_TEST(head_template_without_ray_container)
{
    json_t *rc = jf_yaml("kind: RayCluster\nmetadata: {annotations: {ray.io/ft-enabled: 'true'}}\n"
                         "spec: {headGroupSpec: {template: {spec: {containers: []}}}}");
    json_t *head = json_deep_copy(jf_at(rc, "spec headGroupSpec template"));
    err_msg_t msg = {{0}};
    ck_assert_int_eq(RC->podset_template(rc, 0, head, &msg), ERR_INVALID);
    ck_assert_ptr_nonnull(strstr(msg.text, "must include the Ray container"));
    json_decref(head);
    json_decref(rc);
}
END_TEST

START_TEST(pod_set_errors)
{
    jobs_podset_t sets[JOBS_PODSETS_MAX];
    size_t n = 99;
    err_msg_t msg = {{0}};
    json_t *rj = jf_yaml("kind: RayJob\nspec: {entrypoint: x}");
    ck_assert_int_eq(RJ->pod_sets(rj, sets, &n, &msg), ERR_INVALID);
    ck_assert_str_eq(msg.text, "spec.rayClusterSpec: Required value");
    ck_assert_uint_eq(n, 99);
    json_decref(rj);

    json_t *rc = jf_yaml("kind: RayCluster\nspec: {headGroupSpec: {rayStartParams: {}}}");
    ck_assert_int_eq(RC->pod_sets(rc, sets, &n, &msg), ERR_INVALID);
    ck_assert_str_eq(msg.text, "spec.headGroupSpec.template: Required value");
    json_decref(rc);

    /* JOBS_PODSETS_MAX worker groups + head: one pod set too many. */
    rc = jf_yaml("kind: RayCluster\nspec: {headGroupSpec: {template: {}}}");
    json_t *groups = json_array();
    for (int i = 0; i < JOBS_PODSETS_MAX; i++)
        json_array_append_new(
            groups, json_pack("{s:s,s:i,s:{}}", "groupName", "g", "replicas", 1, "template"));
    json_object_set_new(json_object_get(rc, "spec"), "workerGroupSpecs", groups);
    ck_assert_int_eq(RC->pod_sets(rc, sets, &n, &msg), ERR_INVALID);
    char want[128];
    snprintf(want, sizeof(want), "spec.workerGroupSpecs: Too many: %d: must have at most %d items",
             JOBS_PODSETS_MAX + 1, JOBS_PODSETS_MAX);
    ck_assert_str_eq(msg.text, want);
    json_array_remove(groups, 0);
    n = 0;
    ck_assert_int_eq(RC->pod_sets(rc, sets, &n, &msg), ERR_OK);
    ck_assert_uint_eq(n, JOBS_PODSETS_MAX);
    ck_assert_str_eq(sets[1].path, "spec.workerGroupSpecs[0].template");

    json_object_set_new(json_array_get(groups, 0), "replicas", json_integer(-1));
    ck_assert_int_eq(RC->pod_sets(rc, sets, &n, &msg), ERR_INVALID);
    ck_assert_ptr_nonnull(strstr(msg.text, "workerGroupSpecs[0]"));
    json_decref(rc);
}
END_TEST

START_TEST(suspend_and_phase)
{
    json_t *rj = jf_doc("ray.yaml", 0);
    err_msg_t msg = {{0}};
    ck_assert(RJ->suspended(rj));
    ck_assert_int_eq(RJ->set_suspended(rj, false, &msg), ERR_OK);
    ck_assert(!RJ->suspended(rj));
    ck_assert(json_is_false(jf_at(rj, "spec suspend")));

    const char *message = "unset";
    ck_assert_int_eq(RJ->phase(rj, &message), JOBS_RUNNING);
    ck_assert(!RJ->active(rj)); /* no status: New */
    json_t *status = jf_yaml("jobDeploymentStatus: Running\njobStatus: RUNNING\n"
                             "rayClusterStatus: {state: ready}");
    json_object_set_new(rj, "status", status);
    ck_assert(RJ->active(rj));
    ck_assert(RJ->pods_ready(rj));
    ck_assert_int_eq(RJ->phase(rj, &message), JOBS_RUNNING);

    json_object_set_new(status, "jobDeploymentStatus", json_string("Suspended"));
    ck_assert(!RJ->active(rj));
    json_object_set_new(status, "jobDeploymentStatus", json_string("Complete"));
    json_object_set_new(status, "jobStatus", json_string("SUCCEEDED"));
    json_object_set_new(status, "message", json_string("Job finished successfully."));
    ck_assert_int_eq(RJ->phase(rj, &message), JOBS_SUCCEEDED);
    ck_assert_str_eq(message, "Job finished successfully.");
    json_object_set_new(status, "jobDeploymentStatus", json_string("Failed"));
    json_object_set_new(status, "jobStatus", json_string("FAILED"));
    ck_assert_int_eq(RJ->phase(rj, &message), JOBS_FAILED);
    /* Complete with a job that did not succeed (STOPPED) is a failure. */
    json_object_set_new(status, "jobDeploymentStatus", json_string("Complete"));
    json_object_set_new(status, "jobStatus", json_string("STOPPED"));
    ck_assert_int_eq(RJ->phase(rj, NULL), JOBS_FAILED);
    json_decref(rj);

    json_t *rc = jf_doc("ray.yaml", 1);
    ck_assert(!RC->suspended(rc)); /* spec.suspend absent */
    ck_assert_int_eq(RC->set_suspended(rc, true, &msg), ERR_OK);
    ck_assert(RC->suspended(rc));
    json_object_set_new(rc, "status", jf_yaml("state: failed\nreason: boom"));
    ck_assert_int_eq(RC->phase(rc, &message), JOBS_RUNNING); /* a RayCluster never finishes */
    ck_assert(!RC->active(rc));
    ck_assert(!RC->pods_ready(rc));
    json_object_set_new(json_object_get(rc, "status"), "state", json_string("ready"));
    ck_assert(RC->active(rc));
    ck_assert(RC->pods_ready(rc));
    json_decref(rc);
}
END_TEST

START_TEST(skip_rules)
{
    json_t *rj = jf_doc("ray.yaml", 0);
    ck_assert(!RJ->skip(rj));
    json_object_set_new(json_object_get(rj, "spec"), "clusterSelector",
                        json_pack("{s:s}", "ray.io/cluster", "shared"));
    ck_assert(RJ->skip(rj)); /* runs on an existing cluster: not Kueue's */
    json_decref(rj);

    json_t *own = jf_doc("ray.yaml", 1), *child = jf_doc("ray.yaml", 2);
    ck_assert(!RC->skip(own));
    ck_assert(RC->skip(child)); /* created by a RayJob: admitted with it */
    json_object_set_new(jf_at(child, "metadata ownerReferences 0"), "controller", json_false());
    ck_assert(!RC->skip(child));
    json_decref(own);
    json_decref(child);
}
END_TEST

START_TEST(kind_identity)
{
    ck_assert_str_eq(RJ->framework, "ray.io/rayjob");
    ck_assert_str_eq(RC->framework, "ray.io/raycluster");
    ck_assert_str_eq(RJ->group, "ray.io");
    ck_assert_str_eq(RJ->version, "v1");
    ck_assert_str_eq(RC->resource, "rayclusters");
    ck_assert_ptr_null(RJ->set_count); /* admitted whole: no partial admission */
    ck_assert_int_eq(RJ->admit, JOBS_ADMIT_OBJECT);
}
END_TEST

static int64_t milli(const resource_list_t *l, const char *name)
{
    const quantity_t *q = resource_list_get(l, name);
    int64_t m = -1;
    ck_assert_ptr_nonnull(q);
    ck_assert_int_eq(quantity_milli_value(*q, &m), ERR_OK);
    return m;
}

/* Through the framework: the Workload counts what KubeRay adds, start reaches every pod set
 * (the submitter's template included), stop puts the templates back. */
START_TEST(workload_start_stop)
{
    err_msg_t msg = {{0}};
    workload_t wl = {0};
    json_t *rj = jf_doc("ray.yaml", 0);
    ck_assert_msg(jobs_workload_build(RJ, rj, NULL, &wl, &msg) == ERR_OK, "%s", msg.text);
    ck_assert_ptr_nonnull(strstr(wl.meta.name, "rayjob-train-"));
    ck_assert_str_eq(wl.queue_name, "lq-gpu");
    ck_assert_uint_eq(wl.npod_sets, 4);
    const char *names[] = {"head", "gpu-workers", "tpu", "submitter"};
    const int32_t counts[] = {1, 3, 8, 1};
    for (size_t i = 0; i < 4; i++) {
        ck_assert_str_eq(wl.pod_sets[i].name, names[i]);
        ck_assert_int_eq(wl.pod_sets[i].count, counts[i]);
    }
    ck_assert_int_eq(milli(&wl.pod_sets[3].pod_requests, "cpu"), 500); /* default submitter */
    workload_fini(&wl);

    /* The Workload's pod sets as the API holds them, to stop against: those of the RayJob with
     * KubeRay's default submitter, which is also what stop leaves (start writes it, as Kueue). */
    json_t *wl_sets = json_array();
    jobs_podset_t sets[JOBS_PODSETS_MAX];
    size_t n = 0;
    json_t *before = json_deep_copy(rj);
    ck_assert_int_eq(RJ->prepare(before, &msg), ERR_OK);
    ck_assert_int_eq(RJ->pod_sets(before, sets, &n, &msg), ERR_OK);
    for (size_t i = 0; i < n; i++)
        json_array_append_new(wl_sets, json_pack("{s:s,s:i,s:O}", "name", sets[i].name, "count",
                                                 sets[i].count, "template", sets[i].tmpl));
    /* A never-started RayJob reads as restored (no write to make), and reading wrote nothing. */
    ck_assert_uint_eq(jobs_digest(RJ, rj), jobs_podsets_digest(wl_sets));
    ck_assert_ptr_null(jf_at(rj, "spec submitterPodTemplate"));

    json_t *ns = json_pack("{s:s}", "cloud.google.com/gke-accelerator", "a100");
    json_t *tol =
        json_pack("[{s:s,s:s,s:s}]", "key", "gpu", "operator", "Exists", "effect", "NoSchedule");
    jobs_start_info_t info[4];
    for (size_t i = 0; i < 4; i++)
        info[i] = (jobs_start_info_t){.name = names[i],
                                      .local_queue = "lq-gpu",
                                      .cluster_queue = "cq-gpu",
                                      .workload = "rayjob-train-abcde",
                                      .node_selector = ns,
                                      .tolerations = tol};
    ck_assert_msg(jobs_start(RJ, rj, info, 4, &msg) == ERR_OK, "%s", msg.text);
    ck_assert(!RJ->suspended(rj));
    const char *tmpls[] = {"spec rayClusterSpec headGroupSpec template",
                           "spec rayClusterSpec workerGroupSpecs 0 template",
                           "spec rayClusterSpec workerGroupSpecs 1 template",
                           "spec submitterPodTemplate"};
    for (size_t i = 0; i < 4; i++) {
        json_t *t = jf_at(rj, tmpls[i]);
        ck_assert_str_eq(jf_str(t, "spec nodeSelector cloud.google.com/gke-accelerator"), "a100");
        ck_assert_str_eq(jf_str(t, "spec tolerations 0 key"), "gpu");
        ck_assert_str_eq(jf_str(t, "metadata labels kueue.x-k8s.io/podset"), names[i]);
    }

    bool changed = false;
    ck_assert_msg(jobs_stop(RJ, rj, wl_sets, &changed, &msg) == ERR_OK, "%s", msg.text);
    ck_assert(changed);
    ck_assert(RJ->suspended(rj));
    ck_assert(json_equal(rj, before));
    ck_assert_uint_eq(jobs_digest(RJ, rj), jobs_podsets_digest(wl_sets));

    json_decref(ns);
    json_decref(tol);
    json_decref(before);
    json_decref(wl_sets);
    json_decref(rj);
}
END_TEST

START_TEST(workload_counts_head_sidecars)
{
    err_msg_t msg = {{0}};
    workload_t wl = {0};
    json_t *rj = jf_doc("ray.yaml", 3);
    ck_assert_msg(jobs_workload_build(RJ, rj, NULL, &wl, &msg) == ERR_OK, "%s", msg.text);
    ck_assert_uint_eq(wl.npod_sets, 1);
    /* ray-head (nothing) + autoscaler (1 CPU, 1Gi) + sidecar submitter (500m, 200Mi). */
    ck_assert_int_eq(milli(&wl.pod_sets[0].pod_requests, "cpu"), 1500);
    ck_assert_int_eq(milli(&wl.pod_sets[0].pod_requests, "memory"), (int64_t)1224 * 1048576 * 1000);
    workload_fini(&wl);
    json_decref(rj);

    json_t *rc = jf_doc("ray.yaml", 1);
    ck_assert_msg(jobs_workload_build(RC, rc, NULL, &wl, &msg) == ERR_OK, "%s", msg.text);
    /* ray-head 100m raised to Redis cleanup's 200m + autoscaler 500m. */
    ck_assert_int_eq(milli(&wl.pod_sets[0].pod_requests, "cpu"), 700);
    ck_assert_str_eq(wl.pod_sets[1].name, "small");
    ck_assert_int_eq(wl.pod_sets[1].count, 1);
    workload_fini(&wl);
    json_decref(rc);
}
END_TEST

/* Every allocation of reading a RayJob (the default submitter written in) and of amending its
 * head template fails in turn. */
START_TEST(out_of_memory)
{
    json_t *orig = jf_doc("ray.yaml", 0), *orig_rc = jf_doc("ray.yaml", 1);
    util_alloc_install();
    for (long n = 1;; n++) {
        json_t *rj = json_deep_copy(orig), *rc = json_deep_copy(orig_rc), *head = NULL;
        jobs_podset_t sets[JOBS_PODSETS_MAX];
        size_t k = 0;
        err_msg_t msg = {{0}};
        oom_fail_at(n);
        err_t e = RJ->pod_sets(rj, sets, &k, &msg);
        if (e == ERR_OK) {
            head = json_deep_copy(jf_at(rc, "spec headGroupSpec template"));
            e = head == NULL ? ERR_NOMEM : RC->podset_template(rc, 0, head, &msg);
        }
        long made = oom_count();
        oom_fail_at(0);
        size_t containers = json_array_size(jf_at(head, "spec containers"));
        json_decref(head);
        json_decref(rj);
        json_decref(rc);
        if (made < n) {
            ck_assert_msg(e == ERR_OK, "%s", msg.text);
            ck_assert_uint_eq(k, 4);
            ck_assert_uint_eq(containers, 2);
            break;
        }
        ck_assert_msg(e == ERR_NOMEM, "allocation %ld: %d %s", n, e, msg.text);
    }
    util_alloc_install();
    json_decref(orig);
    json_decref(orig_rc);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("jobs_ray");
    TCase *tc = tcase_create("ray");
    tcase_add_test(tc, rayjob_pod_sets_head_groups_submitter);
    tcase_add_test(tc, rayjob_submission_modes);
    tcase_add_test(tc, prepare_writes_the_default_submitter);
    tcase_add_test(tc, raycluster_pod_sets);
    tcase_add_test(tc, raycluster_head_template_counts_kuberay_additions);
    tcase_add_test(tc, rayjob_sidecar_mode_head_template);
    tcase_add_test(tc, head_template_without_ray_container);
    tcase_add_test(tc, pod_set_errors);
    tcase_add_test(tc, suspend_and_phase);
    tcase_add_test(tc, skip_rules);
    tcase_add_test(tc, kind_identity);
    tcase_add_test(tc, workload_start_stop);
    tcase_add_test(tc, workload_counts_head_sidecars);
    tcase_add_test(tc, out_of_memory);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
