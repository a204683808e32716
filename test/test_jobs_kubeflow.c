/* test_jobs_kubeflow -- the Kubeflow training jobs through the framework: pod sets in Kueue's
 * replica-type order, runPolicy.suspend, start / stop round trips, status, priority class. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "jobs/framework.h"

#include "jobs_fixtures.h"
#include "model/quantity.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

#define FIXTURES "kubeflow.yaml"

/* The kind of `obj`, from its apiVersion and kind. */
static const jobs_kind_t *kind_of(const json_t *obj)
{
    const jobs_kind_t *k = jobs_kind_find(jf_str(obj, "apiVersion"), jf_str(obj, "kind"));
    ck_assert_msg(k != NULL, "no kind for %s", jf_str(obj, "kind"));
    return k;
}

/* The pod-set names of document `doc`, joined by ",", and their counts likewise. */
static void pod_sets_of(size_t doc, char *names, char *counts, size_t size)
{
    json_t *obj = jf_doc(FIXTURES, doc);
    jobs_podset_t ps[JOBS_PODSETS_MAX];
    size_t n = 0;
    err_msg_t msg = {{0}};

    ck_assert_msg(kind_of(obj)->pod_sets(obj, ps, &n, &msg) == ERR_OK, "%s", msg.text);
    names[0] = counts[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        char c[16];
        snprintf(c, sizeof(c), "%s%d", i ? "," : "", ps[i].count);
        strncat(counts, c, size - strlen(counts) - 1);
        if (i > 0)
            strncat(names, ",", size - strlen(names) - 1);
        strncat(names, ps[i].name, size - strlen(names) - 1);
    }
    json_decref(obj);
}

START_TEST(pod_sets_in_kueue_order)
{
    static const struct {
        size_t doc;
        const char *names, *counts;
    } want[] = {
        {0, "master,worker", "1,3"},
        {1, "chief,ps,worker,evaluator", "1,2,2,1"},
        {2, "launcher,worker", "1,4"},
        {3, "master,worker", "1,2"},
        {4, "worker", "2"},
        {5, "worker", "8"},
    };
    char names[256], counts[256];

    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        pod_sets_of(want[i].doc, names, counts, sizeof(names));
        ck_assert_str_eq(names, want[i].names);
        ck_assert_str_eq(counts, want[i].counts);
    }
}
END_TEST

START_TEST(kinds_in_the_table)
{
    static const char *const fw[] = {"kubeflow.org/pytorchjob", "kubeflow.org/tfjob",
                                     "kubeflow.org/xgboostjob", "kubeflow.org/paddlejob",
                                     "kubeflow.org/jaxjob",     "kubeflow.org/mpijob"};

    for (size_t i = 0; i < sizeof(fw) / sizeof(fw[0]); i++) {
        const jobs_kind_t *k = jobs_kind_named(fw[i]);
        ck_assert_ptr_nonnull(k);
        ck_assert_str_eq(k->group, "kubeflow.org");
        ck_assert_ptr_null(k->set_count); /* no partial admission */
    }
    ck_assert_str_eq(jobs_kind_named("kubeflow.org/mpijob")->version, "v2beta1");
    /* An MPIJob named by the training operator's old v1 API is the same kind. */
    ck_assert_ptr_eq(jobs_kind_find("kubeflow.org/v1", "MPIJob"),
                     jobs_kind_named("kubeflow.org/mpijob"));
    /* TrainJob is an entry of its own (test_jobs_trainjob). */
    ck_assert_str_eq(jobs_kind_named("trainer.kubeflow.org/trainjob")->group,
                     "trainer.kubeflow.org");
}
END_TEST

START_TEST(pytorch_workload)
{
    json_t *pt = jf_doc(FIXTURES, 0);
    const quantity_t *gpu;
    quantity_t three;
    workload_t wl;
    err_msg_t msg = {{0}};

    ck_assert_int_eq(jobs_workload_build(kind_of(pt), pt, NULL, &wl, &msg), ERR_OK);
    /* printf 'PyTorchJob\nkubeflow.org\nbert\n7d9e...2c1b' | sha1sum -> 99e35... */
    ck_assert_str_eq(wl.meta.name, "pytorchjob-bert-99e35");
    ck_assert_str_eq(wl.queue_name, "gpu");
    ck_assert_uint_eq(wl.npod_sets, 2);
    ck_assert_str_eq(wl.pod_sets[0].name, "master");
    ck_assert_str_eq(kv_list_get(&wl.pod_sets[0].template_labels, "role"), "master");
    ck_assert_str_eq(wl.pod_sets[1].name, "worker");
    ck_assert_int_eq(wl.pod_sets[1].count, 3);
    gpu = resource_list_get(&wl.pod_sets[1].pod_requests, "nvidia.com/gpu");
    ck_assert_ptr_nonnull(gpu);
    ck_assert_int_eq(quantity_parse("1", 1, &three, NULL), ERR_OK);
    ck_assert_int_eq(quantity_cmp(*gpu, three), 0);
    workload_fini(&wl);
    json_decref(pt);
}
END_TEST

/* The Workload's spec.podSets for `obj`, as Kueue writes them. */
static json_t *workload_pod_sets(json_t *obj)
{
    jobs_podset_t ps[JOBS_PODSETS_MAX];
    json_t *arr = json_array();
    size_t n = 0;

    ck_assert_int_eq(kind_of(obj)->pod_sets(obj, ps, &n, NULL), ERR_OK);
    for (size_t i = 0; i < n; i++)
        ck_assert_int_eq(
            json_array_append_new(arr, json_pack("{s:s, s:i, s:O}", "name", ps[i].name, "count",
                                                 ps[i].count, "template", ps[i].tmpl)),
            0);
    return arr;
}

static void start_stop_round_trip(size_t doc, const char *specs, const char *type0,
                                  const char *type1)
{
    json_t *obj = jf_doc(FIXTURES, doc), *orig = json_deep_copy(obj);
    json_t *pod_sets = workload_pod_sets(obj);
    const jobs_kind_t *k = kind_of(obj);
    json_t *nodes = json_pack("{s:s}", "gpu.example/model", "h100");
    jobs_start_info_t info[2] = {{NULL, "q", "cq", "wl", nodes, NULL, false, 0},
                                 {NULL, "q", "cq", "wl", nodes, NULL, false, 0}};
    uint64_t restored = jobs_digest(k, obj);
    const char *types[2] = {type0, type1};
    bool changed = false;
    char path[128];
    err_msg_t msg = {{0}};

    info[0].name = json_string_value(json_object_get(json_array_get(pod_sets, 0), "name"));
    info[1].name = json_string_value(json_object_get(json_array_get(pod_sets, 1), "name"));
    ck_assert(k->suspended(obj));
    ck_assert_uint_eq(jobs_podsets_digest(pod_sets), restored);
    ck_assert_int_eq(jobs_start(k, obj, info, 2, &msg), ERR_OK);
    ck_assert(!k->suspended(obj));
    ck_assert(json_is_false(jf_at(obj, "spec runPolicy suspend")));
    for (size_t i = 0; i < 2; i++) {
        snprintf(path, sizeof(path), "spec %s %s template spec nodeSelector gpu.example/model",
                 specs, types[i]);
        ck_assert_str_eq(jf_str(obj, path), "h100");
        snprintf(path, sizeof(path), "spec %s %s template metadata labels kueue.x-k8s.io/podset",
                 specs, types[i]);
        ck_assert_str_eq(jf_str(obj, path), info[i].name);
    }
    ck_assert_int_eq(jobs_stop(k, obj, pod_sets, &changed, &msg), ERR_OK);
    ck_assert(changed);
    ck_assert(json_equal(obj, orig));
    ck_assert_uint_eq(jobs_digest(k, obj), restored);
    json_decref(obj);
    json_decref(orig);
    json_decref(pod_sets);
    json_decref(nodes);
}

START_TEST(pytorch_start_stop)
{
    start_stop_round_trip(0, "pytorchReplicaSpecs", "Master", "Worker");
}
END_TEST

START_TEST(mpijob_start_stop)
{
    start_stop_round_trip(2, "mpiReplicaSpecs", "Launcher", "Worker");
}
END_TEST

START_TEST(suspend_creates_run_policy)
{
    json_t *tf = jf_doc(FIXTURES, 1);
    const jobs_kind_t *k = kind_of(tf);

    ck_assert(!k->suspended(tf));
    ck_assert_int_eq(k->set_suspended(tf, true, NULL), ERR_OK);
    ck_assert(json_is_true(jf_at(tf, "spec runPolicy suspend")));
    ck_assert(k->suspended(tf));
    json_decref(tf);
}
END_TEST

START_TEST(status)
{
    json_t *tf = jf_doc(FIXTURES, 1), *mpi = jf_doc(FIXTURES, 2), *xgb = jf_doc(FIXTURES, 3);
    json_t *pt = jf_doc(FIXTURES, 0);
    const char *m = NULL;

    ck_assert_int_eq(kind_of(tf)->phase(tf, &m), JOBS_FAILED);
    ck_assert_str_eq(m, "TFJob team-a/mnist has failed because 1 Worker replica(s) failed.");
    ck_assert(kind_of(tf)->active(tf)); /* 2 PS active */
    ck_assert(!kind_of(tf)->pods_ready(tf));
    ck_assert_int_eq(kind_of(mpi)->phase(mpi, &m), JOBS_RUNNING);
    ck_assert(kind_of(mpi)->active(mpi));
    ck_assert(kind_of(mpi)->pods_ready(mpi)); /* Running=True */
    ck_assert_int_eq(kind_of(xgb)->phase(xgb, &m), JOBS_SUCCEEDED);
    ck_assert_str_eq(m, "XGBoostJob xgb is successfully completed.");
    ck_assert(!kind_of(xgb)->active(xgb));
    ck_assert_int_eq(kind_of(pt)->phase(pt, &m), JOBS_RUNNING);
    ck_assert(!kind_of(pt)->active(pt));
    json_decref(tf);
    json_decref(mpi);
    json_decref(xgb);
    json_decref(pt);
}
END_TEST

START_TEST(priority_class)
{
    json_t *mpi = jf_doc(FIXTURES, 2), *pt = jf_doc(FIXTURES, 0), *tf = jf_doc(FIXTURES, 1);

    /* runPolicy.schedulingPolicy.priorityClass first, then the templates in pod-set order. */
    ck_assert_str_eq(jobs_priority_class(kind_of(mpi), mpi), "high");
    json_object_del(jf_at(mpi, "spec runPolicy"), "schedulingPolicy");
    ck_assert_str_eq(jobs_priority_class(kind_of(mpi), mpi), "low");
    ck_assert_str_eq(jobs_priority_class(kind_of(pt), pt), "worker-priority");
    ck_assert_ptr_null(jobs_priority_class(kind_of(tf), tf));
    json_decref(mpi);
    json_decref(pt);
    json_decref(tf);
}
END_TEST

START_TEST(errors_name_the_field)
{
    json_t *pt = jf_doc(FIXTURES, 0);
    json_t *specs = jf_at(pt, "spec pytorchReplicaSpecs");
    workload_t wl;
    err_msg_t msg = {{0}};

    json_object_del(json_object_get(specs, "Worker"), "template");
    ck_assert_int_eq(jobs_workload_build(kind_of(pt), pt, NULL, &wl, &msg), ERR_INVALID);
    ck_assert_msg(strstr(msg.text, "spec.pytorchReplicaSpecs.Worker.template") != NULL, "%s",
                  msg.text);
    /* Replica types Kueue does not know are no pod sets; none known is an error. */
    json_object_clear(specs);
    json_object_set_new(specs, "Launcher", json_pack("{s:{s:{}}}", "template", "spec"));
    ck_assert_int_eq(jobs_workload_build(kind_of(pt), pt, NULL, &wl, &msg), ERR_INVALID);
    ck_assert_msg(strstr(msg.text, "spec.pytorchReplicaSpecs") != NULL, "%s", msg.text);
    ck_assert_uint_eq(jobs_digest(kind_of(pt), pt), 0);
    json_decref(pt);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("jobs_kubeflow");
    TCase *t = tcase_create("kubeflow");

    tcase_add_test(t, pod_sets_in_kueue_order);
    tcase_add_test(t, kinds_in_the_table);
    tcase_add_test(t, pytorch_workload);
    tcase_add_test(t, pytorch_start_stop);
    tcase_add_test(t, mpijob_start_stop);
    tcase_add_test(t, suspend_creates_run_policy);
    tcase_add_test(t, status);
    tcase_add_test(t, priority_class);
    tcase_add_test(t, errors_name_the_field);
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
