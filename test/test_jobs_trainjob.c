/* test_jobs_trainjob -- TrainJob through the framework: the runtime it names resolved into pod
 * sets with Trainer's rules (numNodes, resourcesPerNode, initializers, MPI), a missing runtime,
 * start and stop in Kueue's own runtimePatches entry, status. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "jobs/framework.h"
#include "util/alloc.h"

#include "jobs_fixtures.h"
#include "model/quantity.h"
#include "oom_wrap.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FIXTURES "trainjob.yaml"

static const jobs_kind_t *trainjob(void)
{
    const jobs_kind_t *k = jobs_kind_find("trainer.kubeflow.org/v1alpha1", "TrainJob");
    ck_assert_ptr_nonnull(k);
    return k;
}

/* The runtimes of the fixtures: documents 0..2, found by kind, namespace and name. */
static const json_t *find(void *data, const jobs_ref_t *ref)
{
    json_t *docs = data, *d;
    size_t i;

    /* json_object_get only: out_of_memory fails the allocations of the code under test. */
    json_array_foreach(docs, i, d)
    {
        const json_t *md = json_object_get(d, "metadata");
        const char *ns = json_string_value(json_object_get(md, "namespace"));
        const char *name = json_string_value(json_object_get(md, "name"));
        if (strcmp(json_string_value(json_object_get(d, "kind")), ref->kind->kind) == 0 &&
            name != NULL && strcmp(name, ref->name) == 0 &&
            (ref->namespace == NULL ? ns == NULL : ns != NULL && strcmp(ns, ref->namespace) == 0))
            return d;
    }
    return NULL;
}

/* The view of TrainJob document `doc`, resolved against the fixtures; fails the test when it
 * cannot be. */
static json_t *view_of(json_t *obj)
{
    json_t *docs = jf_file(FIXTURES), *view = NULL;
    err_msg_t msg = {{0}};

    ck_assert_msg(jobs_resolve(trainjob(), obj, find, docs, &view, &msg) == ERR_OK, "%s", msg.text);
    json_decref(docs);
    return view;
}

/* Names and counts of the pod sets of `obj`'s view, "name=count,...". */
static void pod_sets_of(json_t *obj, char *out, size_t size)
{
    jobs_podset_t ps[JOBS_PODSETS_MAX];
    json_t *view = view_of(obj);
    size_t n = jf_pod_sets(trainjob(), view, ps);

    out[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        char one[96];
        snprintf(one, sizeof(one), "%s%s=%d", i ? "," : "", ps[i].name, ps[i].count);
        strncat(out, one, size - strlen(out) - 1);
    }
    json_decref(view);
}

static void assert_quantity(const resource_list_t *l, const char *name, const char *want)
{
    const quantity_t *q = resource_list_get(l, name);
    quantity_t w;

    ck_assert_msg(q != NULL, "no %s", name);
    ck_assert_int_eq(quantity_parse(want, strlen(want), &w, NULL), ERR_OK);
    ck_assert_msg(quantity_cmp(*q, w) == 0, "%s is not %s", name, want);
}

START_TEST(kind_in_the_table)
{
    const jobs_kind_t *k = jobs_kind_named("trainer.kubeflow.org/trainjob");

    ck_assert_ptr_eq(k, trainjob());
    ck_assert_str_eq(k->resource, "trainjobs");
    ck_assert_ptr_null(k->set_count); /* no partial admission */
    ck_assert_uint_eq(k->ndeps, 2);
    ck_assert_str_eq(k->deps[0].resource, "clustertrainingruntimes");
    ck_assert(!k->deps[0].namespaced);
    ck_assert_str_eq(k->deps[1].resource, "trainingruntimes");
    ck_assert(k->deps[1].namespaced);
}
END_TEST

START_TEST(runtime_ref_defaults_and_errors)
{
    const jobs_kind_t *k = trainjob();
    json_t *obj = jf_doc(FIXTURES, 3);
    jobs_ref_t ref;
    err_msg_t msg = {{0}};

    /* No apiGroup, no kind: a ClusterTrainingRuntime, cluster-scoped. */
    ck_assert_int_eq(k->needs(obj, &ref, &msg), ERR_OK);
    ck_assert_str_eq(ref.kind->kind, "ClusterTrainingRuntime");
    ck_assert_ptr_null(ref.namespace);
    ck_assert_str_eq(ref.name, "torch-distributed");
    json_decref(obj);

    obj = jf_doc(FIXTURES, 4);
    ck_assert_int_eq(k->needs(obj, &ref, &msg), ERR_OK);
    ck_assert_str_eq(ref.kind->kind, "TrainingRuntime");
    ck_assert_str_eq(ref.namespace, "team-a");
    json_decref(obj);

    obj = jf_yaml("apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\n"
                  "metadata: {name: x}\nspec:\n  runtimeRef: {name: r, kind: Other}\n");
    ck_assert_int_eq(k->needs(obj, &ref, &msg), ERR_INVALID);
    ck_assert_str_eq(msg.text, "spec.runtimeRef: unsupported runtime: Other.trainer.kubeflow.org");
    json_decref(obj);
    obj = jf_yaml("apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\n"
                  "metadata: {name: x}\nspec: {}\n");
    ck_assert_int_eq(k->needs(obj, &ref, &msg), ERR_INVALID);
    ck_assert_str_eq(msg.text, "spec.runtimeRef.name: Required value");
    json_decref(obj);
}
END_TEST

START_TEST(pod_sets_with_trainers_rules)
{
    static const struct {
        size_t doc;
        const char *want;
    } cases[] = {
        /* numNodes 4 over the runtime's mlPolicy.numNodes 1. */
        {3, "node=4"},
        /* Initializers one pod each, whatever replicas the runtime says; the trainer step the
         * runtime's mlPolicy.numNodes. */
        {4, "dataset-initializer=1,model-initializer=1,node=2"},
        /* MPI with runLauncherAsNode: the launcher is one of the 4 nodes. */
        {5, "launcher=1,node=3"},
    };
    char got[256];

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        json_t *obj = jf_doc(FIXTURES, cases[i].doc);
        pod_sets_of(obj, got, sizeof(got));
        ck_assert_str_eq(got, cases[i].want);
        json_decref(obj);
    }
}
END_TEST

START_TEST(workload_from_the_runtime)
{
    const jobs_kind_t *k = trainjob();
    json_t *obj = jf_doc(FIXTURES, 3), *orig = json_deep_copy(obj), *view = view_of(obj);
    workload_t wl;
    err_msg_t msg = {{0}};

    ck_assert_msg(jobs_workload_build(k, view, NULL, &wl, &msg) == ERR_OK, "%s", msg.text);
    /* printf 'TrainJob\ntrainer.kubeflow.org\nbert\n5b3f...5b6c' | sha1sum -> d47bd... */
    ck_assert_str_eq(wl.meta.name, "trainjob-bert-d47bd");
    ck_assert_str_eq(wl.meta.namespace, "team-a");
    ck_assert_str_eq(wl.queue_name, "gpu");
    ck_assert_uint_eq(wl.npod_sets, 1);
    ck_assert_str_eq(wl.pod_sets[0].name, "node");
    ck_assert_int_eq(wl.pod_sets[0].count, 4);
    /* resourcesPerNode merged into the runtime's requests of the node container. */
    assert_quantity(&wl.pod_sets[0].pod_requests, "nvidia.com/gpu", "2");
    assert_quantity(&wl.pod_sets[0].pod_requests, "cpu", "2");
    assert_quantity(&wl.pod_sets[0].pod_requests, "memory", "4Gi");
    /* The runtime's template, with another manager's patch applied. */
    ck_assert_str_eq(kv_list_get(&wl.pod_sets[0].template_labels, "app"), "torch");
    ck_assert_str_eq(jf_str(view, "spec replicatedJobs 0 template spec template metadata "
                                  "annotations team"),
                     "nlp");
    ck_assert_str_eq(jf_str(view, "spec replicatedJobs 0 template spec template spec "
                                  "containers 0 image"),
                     "registry.example/bert:1");
    workload_fini(&wl);
    /* Resolving never writes into the TrainJob or the runtime. */
    ck_assert(json_equal(obj, orig));
    json_decref(view);
    json_decref(orig);
    json_decref(obj);
}
END_TEST

START_TEST(initializer_and_mpi_resources)
{
    const jobs_kind_t *k = trainjob();
    json_t *obj = jf_doc(FIXTURES, 5), *view = view_of(obj);
    workload_t wl;
    err_msg_t msg = {{0}};

    ck_assert_msg(jobs_workload_build(k, view, NULL, &wl, &msg) == ERR_OK, "%s", msg.text);
    /* resourcesPerNode on the `node` container of the replicated Job `node` (with
     * runLauncherAsNode whatever its ancestor label), not on the launcher's. */
    ck_assert_ptr_null(resource_list_get(&wl.pod_sets[0].pod_requests, "cpu"));
    assert_quantity(&wl.pod_sets[1].pod_requests, "cpu", "3");
    workload_fini(&wl);
    json_decref(view);
    json_decref(obj);

    obj = jf_doc(FIXTURES, 4);
    view = view_of(obj);
    ck_assert_msg(jobs_workload_build(k, view, NULL, &wl, &msg) == ERR_OK, "%s", msg.text);
    assert_quantity(&wl.pod_sets[0].pod_requests, "cpu", "1");
    assert_quantity(&wl.pod_sets[2].pod_requests, "nvidia.com/gpu", "1");
    workload_fini(&wl);
    json_decref(view);
    json_decref(obj);
}
END_TEST

START_TEST(missing_runtime)
{
    json_t *docs = jf_file(FIXTURES), *obj = jf_doc(FIXTURES, 6), *view = NULL;
    jobs_podset_t ps[JOBS_PODSETS_MAX];
    workload_t wl;
    size_t n = 0;
    err_msg_t msg = {{0}};

    ck_assert_int_eq(jobs_resolve(trainjob(), obj, find, docs, &view, &msg), ERR_NOT_FOUND);
    ck_assert_str_eq(msg.text, "runtime 'nope' not found");
    ck_assert_ptr_null(view);
    /* Without a lookup at all, the same. */
    ck_assert_int_eq(jobs_resolve(trainjob(), obj, NULL, NULL, &view, &msg), ERR_NOT_FOUND);
    /* The TrainJob itself has no pod set: reading it unresolved says why. */
    ck_assert_int_eq(trainjob()->pod_sets(obj, ps, &n, &msg), ERR_INVALID);
    ck_assert_ptr_nonnull(strstr(msg.text, "spec.runtimeRef"));
    ck_assert_int_eq(jobs_workload_build(trainjob(), obj, NULL, &wl, &msg), ERR_INVALID);
    ck_assert(!trainjob()->pods_ready(obj));
    /* Another kind resolves to itself. */
    ck_assert_int_eq(
        jobs_resolve(jobs_kind_named("jobset.x-k8s.io/jobset"), obj, NULL, NULL, &view, &msg),
        ERR_OK);
    ck_assert_ptr_eq(view, obj);
    json_decref(view);
    json_decref(obj);
    json_decref(docs);
}
END_TEST

START_TEST(runtime_errors_name_the_runtime)
{
    json_t *obj = jf_doc(FIXTURES, 3), *view = NULL;
    json_t *rt = jf_yaml("apiVersion: trainer.kubeflow.org/v1alpha1\n"
                         "kind: ClusterTrainingRuntime\nmetadata: {name: torch-distributed}\n"
                         "spec: {template: {spec: {}}}\n");
    err_msg_t msg = {{0}};

    ck_assert_int_eq(trainjob()->resolve(obj, rt, &view, &msg), ERR_INVALID);
    ck_assert_str_eq(msg.text,
                     "runtime 'torch-distributed': spec.template.spec.replicatedJobs: Required "
                     "value");
    json_decref(rt);
    json_decref(obj);
}
END_TEST

/* Kueue's entry of the TrainJob's runtimePatches, or NULL. */
static json_t *kueue_entry(json_t *obj)
{
    json_t *p;
    size_t i;

    json_array_foreach(jf_at(obj, "spec runtimePatches"), i, p)
    {
        if (strcmp(jf_str(p, "manager"), "kueue.x-k8s.io/manager") == 0)
            return p;
    }
    return NULL;
}

/* The Workload's spec.podSets for `view`, as Kueue writes them. */
static json_t *workload_pod_sets(json_t *view)
{
    jobs_podset_t ps[JOBS_PODSETS_MAX];
    json_t *arr = json_array();
    size_t n = jf_pod_sets(trainjob(), view, ps);

    for (size_t i = 0; i < n; i++)
        ck_assert_int_eq(
            json_array_append_new(arr, json_pack("{s:s, s:i, s:O}", "name", ps[i].name, "count",
                                                 ps[i].count, "template", ps[i].tmpl)),
            0);
    return arr;
}

START_TEST(start_and_stop_in_runtime_patches)
{
    const jobs_kind_t *k = trainjob();
    json_t *obj = jf_doc(FIXTURES, 3), *orig, *view, *pod_sets, *entry, *t, *held;
    json_t *nodes = json_pack("{s:s}", "gpu.example/model", "h100");
    json_t *tols = json_pack("[{s:s, s:s}]", "key", "gpu", "operator", "Exists");
    jobs_start_info_t info = {"node", "gpu", "gpus", "trainjob-bert-d47bd", nodes, tols, false, 0};
    bool changed = false;
    err_msg_t msg = {{0}};

    /* The webhook's entry, once. */
    ck_assert_int_eq(k->create_defaults(obj, &msg), ERR_OK);
    ck_assert_int_eq(k->create_defaults(obj, &msg), ERR_OK);
    ck_assert_uint_eq(json_array_size(jf_at(obj, "spec runtimePatches")), 2);
    ck_assert_ptr_nonnull(jf_at(kueue_entry(obj), "trainingRuntimeSpec template spec"));
    orig = json_deep_copy(obj);
    view = view_of(obj);
    pod_sets = workload_pod_sets(view);
    ck_assert_uint_eq(jobs_digest(k, view), jobs_podsets_digest(pod_sets));
    json_decref(view);

    /* Two writes, as Kueue: the patch while held, then the release. */
    ck_assert_msg(jobs_start(k, obj, &info, 1, &msg) == ERR_OK, "%s", msg.text);
    ck_assert(k->suspended(obj));
    ck_assert_ptr_nonnull(jf_at(kueue_entry(obj), "trainingRuntimeSpec template spec "
                                                  "replicatedJobs 0 template"));
    held = json_deep_copy(obj);
    /* An API server that defaults a field of the written patch: still the same patch. */
    ck_assert_int_eq(json_object_set_new(jf_at(kueue_entry(obj), "trainingRuntimeSpec template "
                                                                 "spec replicatedJobs 0 template "
                                                                 "spec"),
                                         "completionMode", json_string("NonIndexed")),
                     0);
    ck_assert_msg(jobs_start(k, obj, &info, 1, &msg) == ERR_OK, "%s", msg.text);
    ck_assert(!k->suspended(obj));
    /* A patch written for another admission is rewritten first, held. */
    info.workload = "trainjob-bert-other";
    ck_assert_int_eq(jobs_start(k, held, &info, 1, &msg), ERR_OK);
    ck_assert(k->suspended(held));
    ck_assert_str_eq(jf_str(kueue_entry(held), "trainingRuntimeSpec template spec replicatedJobs "
                                               "0 template spec template metadata annotations "
                                               "kueue.x-k8s.io/workload"),
                     "trainjob-bert-other");
    json_decref(held);
    info.workload = "trainjob-bert-d47bd";
    json_object_del(jf_at(kueue_entry(obj), "trainingRuntimeSpec template spec replicatedJobs 0 "
                                            "template spec"),
                    "completionMode");
    entry = kueue_entry(obj);
    t = jf_at(entry, "trainingRuntimeSpec template spec replicatedJobs 0");
    ck_assert_str_eq(jf_str(t, "name"), "node");
    ck_assert_str_eq(jf_str(t, "template spec template spec nodeSelector gpu.example/model"),
                     "h100");
    ck_assert_str_eq(jf_str(t, "template spec template metadata labels kueue.x-k8s.io/podset"),
                     "node");
    ck_assert_str_eq(
        jf_str(t, "template spec template metadata annotations kueue.x-k8s.io/workload"),
        "trainjob-bert-d47bd");
    /* The other manager's patch is left as it was. */
    ck_assert(json_equal(json_array_get(jf_at(obj, "spec runtimePatches"), 0),
                         json_array_get(jf_at(orig, "spec runtimePatches"), 0)));

    /* What Trainer builds: the runtime's node selector and the flavor's, the flavor's
     * tolerations replacing the runtime's (a patch replaces the list, as in Kueue). */
    view = view_of(obj);
    t = jf_at(view, "spec replicatedJobs 0 template spec template");
    ck_assert_str_eq(jf_str(t, "spec nodeSelector arch"), "amd64");
    ck_assert_str_eq(jf_str(t, "spec nodeSelector gpu.example/model"), "h100");
    ck_assert_uint_eq(json_array_size(jf_at(t, "spec tolerations")), 1);
    ck_assert_str_eq(jf_str(t, "spec tolerations 0 key"), "gpu");
    ck_assert_str_eq(jf_str(t, "metadata labels kueue.x-k8s.io/cluster-queue-name"), "gpus");
    ck_assert_str_eq(jf_str(t, "metadata annotations team"), "nlp");
    ck_assert_uint_ne(jobs_digest(k, view), jobs_podsets_digest(pod_sets));
    json_decref(view);

    /* Stop: held, the entry emptied, the view's templates the runtime's again. */
    ck_assert_int_eq(jobs_stop(k, obj, pod_sets, &changed, &msg), ERR_OK);
    ck_assert(changed && k->suspended(obj));
    ck_assert(json_equal(obj, orig));
    view = view_of(obj);
    ck_assert_uint_eq(jobs_digest(k, view), jobs_podsets_digest(pod_sets));
    json_decref(view);
    ck_assert_int_eq(jobs_stop(k, obj, pod_sets, &changed, &msg), ERR_OK);
    ck_assert(!changed);

    json_decref(pod_sets);
    json_decref(orig);
    json_decref(obj);
    json_decref(nodes);
    json_decref(tols);
}
END_TEST

START_TEST(start_without_entry_and_bad_patches)
{
    const jobs_kind_t *k = trainjob();
    json_t *obj = jf_doc(FIXTURES, 4), *bad, *orig;
    jobs_start_info_t info = {"node", "q", "cq", "w", NULL, NULL, false, 0};
    err_msg_t msg = {{0}};

    /* Created before the webhook: the entry is made (Kueue would refuse to start it). */
    ck_assert_int_eq(jobs_start(k, obj, &info, 1, &msg), ERR_OK);
    ck_assert_str_eq(jf_str(kueue_entry(obj), "trainingRuntimeSpec template spec replicatedJobs "
                                              "0 template spec template metadata labels "
                                              "kueue.x-k8s.io/local-queue-name"),
                     "q");
    json_decref(obj);

    bad = jf_yaml("apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\n"
                  "metadata: {name: x}\nspec: {suspend: true, runtimeRef: {name: r},\n"
                  "  runtimePatches: {manager: kueue.x-k8s.io/manager}}\n");
    orig = json_deep_copy(bad);
    ck_assert_int_eq(jobs_start(k, bad, &info, 1, &msg), ERR_INVALID);
    ck_assert_str_eq(msg.text, "spec.runtimePatches: must be of type array");
    ck_assert(json_equal(bad, orig));
    json_decref(orig);
    json_decref(bad);
}
END_TEST

START_TEST(status)
{
    const jobs_kind_t *k = trainjob();
    json_t *obj = jf_doc(FIXTURES, 4), *view;
    const char *m = NULL;

    ck_assert(!k->suspended(obj));
    ck_assert_int_eq(k->phase(obj, &m), JOBS_RUNNING);
    ck_assert(!k->active(obj));
    ck_assert_int_eq(
        json_object_set_new(obj, "status",
                            json_pack("{s:[{s:s,s:i,s:i,s:i},{s:s,s:i,s:i,s:i},{s:s,s:i,s:i,s:i}]}",
                                      "jobsStatus", "name", "dataset-initializer", "ready", 0,
                                      "succeeded", 1, "active", 0, "name", "model-initializer",
                                      "ready", 0, "succeeded", 1, "active", 0, "name", "node",
                                      "ready", 1, "succeeded", 0, "active", 1)),
        0);
    ck_assert(k->active(obj));
    /* Three replicated Jobs of one replica each, all ready or succeeded. */
    view = view_of(obj);
    ck_assert(k->pods_ready(view));
    json_decref(view);
    ck_assert_int_eq(json_integer_set(jf_at(obj, "status jobsStatus 2 ready"), 0), 0);
    view = view_of(obj);
    ck_assert(!k->pods_ready(view));
    json_decref(view);

    ck_assert_int_eq(
        json_object_set_new(json_object_get(obj, "status"), "conditions",
                            json_pack("[{s:s,s:s,s:s},{s:s,s:s,s:s}]", "type", "Failed", "status",
                                      "False", "message", "no", "type", "Complete", "status",
                                      "True", "message", "done")),
        0);
    ck_assert_int_eq(k->phase(obj, &m), JOBS_SUCCEEDED);
    ck_assert_str_eq(m, "done");
    json_decref(obj);
}
END_TEST

START_TEST(out_of_memory)
{
    const jobs_kind_t *k = trainjob();
    json_t *docs = jf_file(FIXTURES), *orig = jf_doc(FIXTURES, 3);
    json_t *nodes = json_pack("{s:s}", "pool", "gpu");
    json_t *tols = json_pack("[{s:s, s:s}]", "key", "gpu", "operator", "Exists");
    jobs_start_info_t info = {"node", "gpu", "gpus", "w", nodes, tols, false, 0};

    util_alloc_install();
    for (int op = 0; op < 3; op++) {
        for (long n = 1;; n++) {
            json_t *obj = json_deep_copy(orig), *view = NULL;
            bool changed = false;
            err_msg_t msg = {{0}};
            err_t rc;
            long made;

            if (op == 2)
                ck_assert_int_eq(jobs_start(k, obj, &info, 1, NULL), ERR_OK);
            oom_fail_at(n);
            if (op == 0)
                rc = jobs_resolve(k, obj, find, docs, &view, &msg);
            else if (op == 1)
                rc = jobs_start(k, obj, &info, 1, &msg);
            else
                rc = jobs_stop(k, obj, NULL, &changed, &msg);
            made = oom_count();
            oom_fail_at(0);
            json_decref(view);
            json_decref(obj);
            if (made < n) {
                ck_assert_msg(rc == ERR_OK, "%s", msg.text);
                break;
            }
            ck_assert_msg(rc == ERR_NOMEM, "op %d, allocation %ld: rc %d %s", op, n, (int)rc,
                          msg.text);
        }
    }
    util_alloc_install();
    json_decref(nodes);
    json_decref(tols);
    json_decref(orig);
    json_decref(docs);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("jobs_trainjob");
    TCase *t = tcase_create("trainjob");

    tcase_add_test(t, kind_in_the_table);
    tcase_add_test(t, runtime_ref_defaults_and_errors);
    tcase_add_test(t, pod_sets_with_trainers_rules);
    tcase_add_test(t, workload_from_the_runtime);
    tcase_add_test(t, initializer_and_mpi_resources);
    tcase_add_test(t, missing_runtime);
    tcase_add_test(t, runtime_errors_name_the_runtime);
    tcase_add_test(t, start_and_stop_in_runtime_patches);
    tcase_add_test(t, start_without_entry_and_bad_patches);
    tcase_add_test(t, status);
    tcase_add_test(t, out_of_memory);
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
