/* test_jobs_framework -- the job integrations' common code over the Job entry: names, the
 * Workload, start / stop / digest round trips, conflicts, partial admission, the table. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "jobs/framework.h"

#include "jobs/job_workload.h"
#include "model/object.h"
#include "model/quantity.h"
#include "squote.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const jobs_kind_t *job_kind(void)
{
    const jobs_kind_t *k = jobs_kind_named("batch/job");
    ck_assert_ptr_nonnull(k);
    return k;
}

/* A Job the way the API server stores it: template labels of the Job controller included. */
static const char *job_text =
    "{'apiVersion':'batch/v1','kind':'Job','metadata':{'name':'train','namespace':'ns1',"
    "'uid':'u-1','labels':{'kueue.x-k8s.io/queue-name':'lq','team':'a',"
    "'kueue.x-k8s.io/priority-class':'high','kueue.x-k8s.io/max-exec-time-seconds':'600'},"
    "'annotations':{'provreq.kueue.x-k8s.io/x':'y'}},"
    "'spec':{'suspend':true,'parallelism':4,'completions':8,'template':{'metadata':{'labels':"
    "{'app':'x','job-name':'train','controller-uid':'u-1','batch.kubernetes.io/job-name':"
    "'train','batch.kubernetes.io/controller-uid':'u-1'}},'spec':{'restartPolicy':'Never',"
    "'nodeSelector':{'zone':'z1'},'containers':[{'name':'c','image':'i','resources':"
    "{'requests':{'cpu':'1','nvidia.com/gpu':'1'},'limits':{'memory':'2Gi'}}}]}}}}";

/* ---- names ------------------------------------------------------------------------------- */

START_TEST(job_names_identical)
{
    static const char *const names[] = {"myjob", "train", "a", NULL};
    static const char *const uids[] = {"uid1", "", NULL};
    char a[JOB_WORKLOAD_NAME_MAX + 1], b[JOB_WORKLOAD_NAME_MAX + 1], big[301];

    for (size_t i = 0; names[i] != NULL; i++)
        for (size_t j = 0; j < 3; j++)
            for (size_t m = 0; m < 2; m++) {
                size_t max = m ? JOB_WORKLOAD_NAME_MAX_SHORT : JOB_WORKLOAD_NAME_MAX;
                ck_assert_int_eq(job_workload_name(names[i], uids[j], max, a, sizeof(a), NULL),
                                 ERR_OK);
                ck_assert_int_eq(
                    jobs_workload_name(job_kind(), names[i], uids[j], max, b, sizeof(b), NULL),
                    ERR_OK);
                ck_assert_str_eq(a, b);
            }
    ck_assert_int_eq(
        jobs_workload_name(job_kind(), "myjob", "uid1", JOB_WORKLOAD_NAME_MAX, b, sizeof(b), NULL),
        ERR_OK);
    ck_assert_str_eq(b, "job-myjob-af4e6");
    /* Long names are cut the same way, for both limits. */
    memset(big, 'x', 300);
    big[300] = '\0';
    for (size_t m = 0; m < 2; m++) {
        size_t max = m ? JOB_WORKLOAD_NAME_MAX_SHORT : JOB_WORKLOAD_NAME_MAX;
        ck_assert_int_eq(job_workload_name(big, "u", max, a, sizeof(a), NULL), ERR_OK);
        ck_assert_int_eq(jobs_workload_name(job_kind(), big, "u", max, b, sizeof(b), NULL), ERR_OK);
        ck_assert_str_eq(a, b);
        ck_assert_uint_eq(strlen(b), max);
    }
}
END_TEST

START_TEST(other_kind_names)
{
    const jobs_kind_t *js = jobs_kind_named("jobset.x-k8s.io/jobset");
    char b[JOB_WORKLOAD_NAME_MAX_SHORT + 1];
    err_msg_t msg = {{0}};

    ck_assert_ptr_nonnull(js);
    /* printf 'JobSet\njobset.x-k8s.io\ntrain\nuid1' | sha1sum -> ae7c02a6... */
    ck_assert_int_eq(
        jobs_workload_name(js, "train", "uid1", JOB_WORKLOAD_NAME_MAX_SHORT, b, sizeof(b), &msg),
        ERR_OK);
    ck_assert_str_eq(b, "jobset-train-ae7c0");
    /* A buffer too small for the limit is refused. */
    ck_assert_int_eq(
        jobs_workload_name(js, "train", "uid1", JOB_WORKLOAD_NAME_MAX, b, sizeof(b), &msg),
        ERR_INVALID);
}
END_TEST

/* ---- the table ----------------------------------------------------------------------------- */

START_TEST(table_lookups)
{
    const jobs_kind_t *k;
    size_t n = 0;

    ck_assert_ptr_eq(jobs_kind_at(0), job_kind());
    ck_assert_ptr_eq(jobs_kind_find("batch/v1", "Job"), job_kind());
    /* Another version of the same group and kind is the same kind. */
    ck_assert_ptr_eq(jobs_kind_find("batch/v2", "Job"), job_kind());
    ck_assert_ptr_null(jobs_kind_find("v1", "Job"));
    ck_assert_ptr_null(jobs_kind_find("batchx/v1", "Job"));
    ck_assert_ptr_null(jobs_kind_find("batch/v1", "job"));
    ck_assert_ptr_null(jobs_kind_find(NULL, "Job"));
    ck_assert_ptr_null(jobs_kind_named("nope"));
    ck_assert_ptr_eq(jobs_kind_find("jobset.x-k8s.io/v1alpha2", "JobSet"),
                     jobs_kind_named("jobset.x-k8s.io/jobset"));
    /* Every entry is complete and found by both its names. */
    for (; (k = jobs_kind_at(n)) != NULL; n++) {
        char av[128];
        ck_assert_ptr_nonnull(k->pod_sets);
        ck_assert_ptr_nonnull(k->suspended);
        ck_assert_ptr_nonnull(k->set_suspended);
        ck_assert_ptr_nonnull(k->phase);
        ck_assert_ptr_nonnull(k->active);
        ck_assert_ptr_nonnull(k->pods_ready);
        ck_assert_ptr_eq(jobs_kind_named(k->framework), k);
        snprintf(av, sizeof(av), "%s%s%s", k->group, k->group[0] ? "/" : "", k->version);
        ck_assert_ptr_eq(jobs_kind_find(av, k->kind), k);
    }
    ck_assert_uint_ge(n, 2);
}
END_TEST

/* ---- build --------------------------------------------------------------------------------- */

static void assert_kv_equal(const kv_list_t *a, const kv_list_t *b)
{
    ck_assert_uint_eq(a->len, b->len);
    for (size_t i = 0; i < a->len; i++) {
        ck_assert_str_eq(a->items[i].key, b->items[i].key);
        ck_assert_str_eq(a->items[i].value, b->items[i].value);
    }
}

static void assert_resources_equal(const resource_list_t *a, const resource_list_t *b)
{
    ck_assert_uint_eq(a->len, b->len);
    for (size_t i = 0; i < a->len; i++) {
        ck_assert_str_eq(a->items[i].name, b->items[i].name);
        ck_assert_int_eq(quantity_cmp(a->items[i].value, b->items[i].value), 0);
    }
}

/* The framework's Workload for a Job is the one job_workload_build() makes from the decoded Job. */
START_TEST(build_job_same_as_job_workload)
{
    json_t *j = squote_json(job_text);
    workload_t a, b;
    object_t obj;
    diags_t d;
    err_msg_t msg = {{0}};

    diags_init(&d);
    ck_assert_int_eq(object_decode(j, &obj, &d), ERR_OK);
    ck_assert_int_eq(job_workload_build(&obj.u.job, &a, &msg), ERR_OK);
    ck_assert_int_eq(jobs_workload_build(job_kind(), j, NULL, &b, &msg), ERR_OK);
    ck_assert_str_eq(a.meta.name, b.meta.name);
    ck_assert_str_eq(b.meta.namespace, "ns1");
    ck_assert_str_eq(a.queue_name, b.queue_name);
    ck_assert_str_eq(a.priority_class, b.priority_class);
    ck_assert_int_eq(b.priority_source, PRIORITY_SOURCE_WORKLOAD_PRIORITY_CLASS);
    ck_assert(b.has_max_exec_seconds && b.max_exec_seconds == 600);
    ck_assert(b.active);
    ck_assert_uint_eq(b.meta.nfinalizers, 1);
    ck_assert_str_eq(b.meta.finalizers[0], JOB_FINALIZER_RESOURCE_IN_USE);
    assert_kv_equal(&a.meta.labels, &b.meta.labels);
    assert_kv_equal(&a.meta.annotations, &b.meta.annotations);
    ck_assert_uint_eq(b.npod_sets, 1);
    ck_assert_str_eq(b.pod_sets[0].name, "main");
    ck_assert_int_eq(b.pod_sets[0].count, 4);
    ck_assert(!b.pod_sets[0].has_min_count);
    assert_kv_equal(&a.pod_sets[0].template_labels, &b.pod_sets[0].template_labels);
    /* Kueue's cleanLabels: batch.kubernetes.io/job-name stays, the rest of the controller's go. */
    ck_assert_str_eq(kv_list_get(&b.pod_sets[0].template_labels, "batch.kubernetes.io/job-name"),
                     "train");
    ck_assert_ptr_null(kv_list_get(&b.pod_sets[0].template_labels, "job-name"));
    ck_assert_ptr_null(
        kv_list_get(&b.pod_sets[0].template_labels, "batch.kubernetes.io/controller-uid"));
    assert_resources_equal(&a.pod_sets[0].pod_requests, &b.pod_sets[0].pod_requests);
    ck_assert_uint_eq(b.pod_sets[0].pod_requests.len, 3); /* cpu, memory (from limit), gpu */
    /* The object is not changed by building. */
    {
        json_t *again = squote_json(job_text);
        ck_assert(json_equal(again, j));
        json_decref(again);
    }
    workload_fini(&a);
    workload_fini(&b);
    object_fini(&obj);
    diags_fini(&d);
    json_decref(j);
}
END_TEST

START_TEST(build_copies_labels_and_partial)
{
    json_t *j = squote_json(job_text);
    static const char *const copy[] = {"team", "absent", NULL};
    workload_t w;
    err_msg_t msg = {{0}};

    json_object_set_new(json_object_get(json_object_get(j, "metadata"), "annotations"),
                        JOB_ANNOTATION_MIN_PARALLELISM, json_string("2"));
    ck_assert_int_eq(jobs_workload_build(job_kind(), j, copy, &w, &msg), ERR_OK);
    ck_assert_str_eq(kv_list_get(&w.meta.labels, "team"), "a");
    ck_assert_ptr_null(kv_list_get(&w.meta.labels, "absent"));
    ck_assert_str_eq(kv_list_get(&w.meta.labels, JOB_LABEL_JOB_UID), "u-1");
    ck_assert(w.pod_sets[0].has_min_count && w.pod_sets[0].min_count == 2);
    workload_fini(&w);
    json_decref(j);
}
END_TEST

START_TEST(build_errors_name_the_field)
{
    json_t *j = squote_json(job_text);
    json_t *c = json_array_get(
        json_object_get(
            json_object_get(json_object_get(json_object_get(j, "spec"), "template"), "spec"),
            "containers"),
        0);
    workload_t w;
    err_msg_t msg = {{0}};

    json_object_set_new(json_object_get(json_object_get(c, "resources"), "requests"), "cpu",
                        json_string("lots"));
    ck_assert_int_eq(jobs_workload_build(job_kind(), j, NULL, &w, &msg), ERR_INVALID);
    ck_assert_msg(strstr(msg.text, "spec.template.spec.containers[0].resources.requests.cpu") !=
                      NULL,
                  "%s", msg.text);
    ck_assert_ptr_null(w.meta.name);
    ck_assert_uint_eq(w.npod_sets, 0);
    json_object_del(json_object_get(j, "spec"), "template");
    ck_assert_int_eq(jobs_workload_build(job_kind(), j, NULL, &w, &msg), ERR_INVALID);
    ck_assert_msg(strstr(msg.text, "spec.template") != NULL, "%s", msg.text);
    json_object_del(json_object_get(j, "metadata"), "name");
    ck_assert_int_eq(jobs_workload_build(job_kind(), j, NULL, &w, &msg), ERR_INVALID);
    json_decref(j);
}
END_TEST

/* ---- start / stop / digest ------------------------------------------------------------------ */

static json_t *tmpl_of(json_t *job)
{
    return json_object_get(json_object_get(job, "spec"), "template");
}

static const char *tmpl_str(json_t *job, const char *where, const char *map, const char *key)
{
    return json_string_value(
        json_object_get(json_object_get(json_object_get(tmpl_of(job), where), map), key));
}

/* The Workload's spec.podSets for `job`: [{name: main, count, template minus the controller's
 * labels}] as Kueue writes it. */
static json_t *pod_sets_of(json_t *job, int count)
{
    json_t *t = json_deep_copy(tmpl_of(job));
    json_t *labels = json_object_get(json_object_get(t, "metadata"), "labels");
    json_t *ps;

    json_object_del(labels, "job-name");
    json_object_del(labels, "controller-uid");
    json_object_del(labels, "batch.kubernetes.io/controller-uid");
    ps = json_pack("[{s:s, s:i, s:o}]", "name", "main", "count", count, "template", t);
    ck_assert_ptr_nonnull(ps);
    return ps;
}

START_TEST(start_stop_round_trip)
{
    json_t *job = squote_json(job_text), *orig = json_deep_copy(job);
    json_t *ps = pod_sets_of(job, 4);
    json_t *nodes = squote_json("{'pool':'gpu-a','zone':'z1'}");
    json_t *tols = squote_json("[{'key':'gpu','operator':'Exists','effect':'NoSchedule'}]");
    jobs_start_info_t info = {"main", "lq", "cq-a", "job-train-x", nodes, tols, false, 0};
    uint64_t restored;
    bool changed = true;
    err_msg_t msg = {{0}};

    ck_assert(job_kind()->suspended(job));
    restored = jobs_digest(job_kind(), job);
    ck_assert_uint_ne(restored, 0);
    /* The Workload's pod sets (controller labels left out) digest the same as the Job's. */
    ck_assert_uint_eq(jobs_podsets_digest(ps), restored);
    ck_assert_int_eq(jobs_stop(job_kind(), job, ps, &changed, &msg), ERR_OK);
    ck_assert(!changed);

    ck_assert_int_eq(jobs_start(job_kind(), job, &info, 1, &msg), ERR_OK);
    ck_assert(!job_kind()->suspended(job));
    ck_assert_str_eq(tmpl_str(job, "spec", "nodeSelector", "pool"), "gpu-a");
    ck_assert_str_eq(tmpl_str(job, "metadata", "labels", JOBS_LABEL_PODSET), "main");
    ck_assert_str_eq(tmpl_str(job, "metadata", "labels", JOBS_LABEL_LOCAL_QUEUE), "lq");
    ck_assert_str_eq(tmpl_str(job, "metadata", "labels", JOBS_LABEL_CLUSTER_QUEUE), "cq-a");
    ck_assert_str_eq(tmpl_str(job, "metadata", "annotations", JOBS_ANNOTATION_WORKLOAD),
                     "job-train-x");
    ck_assert_uint_eq(
        json_array_size(json_object_get(json_object_get(tmpl_of(job), "spec"), "tolerations")), 1);
    ck_assert_uint_ne(jobs_digest(job_kind(), job), restored);
    /* Not partial: parallelism untouched. */
    ck_assert_int_eq(
        json_integer_value(json_object_get(json_object_get(job, "spec"), "parallelism")), 4);

    ck_assert_int_eq(jobs_stop(job_kind(), job, ps, &changed, &msg), ERR_OK);
    ck_assert(changed);
    ck_assert(json_equal(job, orig));
    ck_assert_uint_eq(jobs_digest(job_kind(), job), restored);
    ck_assert_int_eq(jobs_stop(job_kind(), job, ps, &changed, &msg), ERR_OK);
    ck_assert(!changed);
    json_decref(job);
    json_decref(orig);
    json_decref(ps);
    json_decref(nodes);
    json_decref(tols);
}
END_TEST

START_TEST(start_conflicts_leave_object)
{
    json_t *job = squote_json(job_text), *before = json_deep_copy(job);
    json_t *nodes = squote_json("{'zone':'z2'}");
    jobs_start_info_t info = {"main", "lq", "cq-a", "w", nodes, NULL, false, 0};
    err_msg_t msg = {{0}};

    ck_assert_int_eq(jobs_start(job_kind(), job, &info, 1, &msg), ERR_CONFLICT);
    ck_assert_str_eq(msg.text, "invalid nodeSelector: conflict for key=zone, value1=z1, value2=z2");
    ck_assert(json_equal(job, before));
    /* A label the template already has with another value. */
    json_object_set_new(json_object_get(json_object_get(tmpl_of(job), "metadata"), "labels"),
                        JOBS_LABEL_PODSET, json_string("other"));
    json_decref(before);
    before = json_deep_copy(job);
    info.node_selector = NULL;
    ck_assert_int_eq(jobs_start(job_kind(), job, &info, 1, &msg), ERR_CONFLICT);
    ck_assert_msg(strstr(msg.text, "invalid labels: conflict for key=kueue.x-k8s.io/podset") !=
                      NULL,
                  "%s", msg.text);
    ck_assert(json_equal(job, before));
    /* An info naming no pod set of the object. */
    info.name = "worker";
    ck_assert_int_eq(jobs_start(job_kind(), job, &info, 1, &msg), ERR_INVALID);
    ck_assert(json_equal(job, before));
    json_decref(job);
    json_decref(before);
    json_decref(nodes);
}
END_TEST

START_TEST(partial_admission_round_trip)
{
    json_t *job = squote_json(job_text), *orig;
    json_t *ann = json_object_get(json_object_get(job, "metadata"), "annotations");
    jobs_start_info_t info = {"main", "lq", "cq-a", "w", NULL, NULL, true, 2};
    json_t *ps;
    bool changed = false;
    err_msg_t msg = {{0}};

    json_object_set_new(ann, JOB_ANNOTATION_MIN_PARALLELISM, json_string("1"));
    json_object_set_new(ann, "kueue.x-k8s.io/job-completions-equal-parallelism",
                        json_string("true"));
    /* The annotation says completions follow parallelism: a Job written that way. */
    json_object_set_new(json_object_get(job, "spec"), "completions", json_integer(4));
    orig = json_deep_copy(job);
    ps = pod_sets_of(job, 4);
    ck_assert_int_eq(jobs_start(job_kind(), job, &info, 1, &msg), ERR_OK);
    ck_assert_int_eq(
        json_integer_value(json_object_get(json_object_get(job, "spec"), "parallelism")), 2);
    ck_assert_int_eq(
        json_integer_value(json_object_get(json_object_get(job, "spec"), "completions")), 2);
    ck_assert_int_eq(jobs_stop(job_kind(), job, ps, &changed, &msg), ERR_OK);
    ck_assert(changed);
    /* Both back to the pod set's count. */
    ck_assert_int_eq(
        json_integer_value(json_object_get(json_object_get(job, "spec"), "parallelism")), 4);
    ck_assert_int_eq(
        json_integer_value(json_object_get(json_object_get(job, "spec"), "completions")), 4);
    ck_assert(json_equal(job, orig));
    json_decref(job);
    json_decref(orig);
    json_decref(ps);
}
END_TEST

START_TEST(stop_keeps_controller_labels)
{
    json_t *job = squote_json(job_text), *ps = pod_sets_of(job, 4);
    json_t *labels = json_object_get(json_object_get(tmpl_of(job), "metadata"), "labels");
    bool changed = false;

    /* The Job controller rewrote its labels meanwhile; a user-added label goes. */
    json_object_set_new(labels, "controller-uid", json_string("u-2"));
    json_object_set_new(labels, "added", json_string("yes"));
    json_object_set_new(json_object_get(job, "spec"), "suspend", json_false());
    ck_assert_int_eq(jobs_stop(job_kind(), job, ps, &changed, NULL), ERR_OK);
    ck_assert(changed);
    ck_assert(job_kind()->suspended(job));
    ck_assert_str_eq(tmpl_str(job, "metadata", "labels", "controller-uid"), "u-2");
    ck_assert_ptr_null(tmpl_str(job, "metadata", "labels", "added"));
    ck_assert_str_eq(tmpl_str(job, "metadata", "labels", "app"), "x");
    json_decref(job);
    json_decref(ps);
}
END_TEST

/* ---- the Job entry's status readers ------------------------------------------------------- */

START_TEST(job_status)
{
    json_t *job = squote_json(job_text);
    const char *m = NULL;

    ck_assert_int_eq(job_kind()->phase(job, &m), JOBS_RUNNING);
    ck_assert(!job_kind()->active(job));
    ck_assert(!job_kind()->pods_ready(job));
    json_object_set_new(job, "status",
                        squote_json("{'active':4,'ready':3,'succeeded':0,"
                                    "'uncountedTerminatedPods':{'succeeded':['p1']}}"));
    ck_assert(job_kind()->active(job));
    ck_assert(job_kind()->pods_ready(job)); /* 3 ready + 1 uncounted succeeded >= 4 */
    json_object_set_new(json_object_get(job, "status"), "conditions",
                        squote_json("[{'type':'Suspended','status':'False'},"
                                    "{'type':'Failed','status':'True','message':'BackoffLimit'},"
                                    "{'type':'Complete','status':'True','message':'done'}]"));
    ck_assert_int_eq(job_kind()->phase(job, &m), JOBS_FAILED);
    ck_assert_str_eq(m, "BackoffLimit");
    json_array_remove(json_object_get(json_object_get(job, "status"), "conditions"), 1);
    ck_assert_int_eq(job_kind()->phase(job, &m), JOBS_SUCCEEDED);
    ck_assert_str_eq(m, "done");
    json_decref(job);
}
END_TEST

/* Kueue's Job.ReclaimablePods, case by case (its job_controller_test vectors' shapes). */
static int32_t job_reclaim(const char *spec_status)
{
    json_t *obj = json_loads(spec_status, 0, NULL);
    jobs_reclaim_t r[JOBS_PODSETS_MAX];
    size_t n = 99;

    ck_assert_ptr_nonnull(obj);
    job_kind()->reclaimable(obj, r, &n);
    json_decref(obj);
    ck_assert_uint_le(n, 1);
    if (n == 1)
        ck_assert_str_eq(r[0].name, "main");
    return n == 1 ? r[0].count : 0;
}

START_TEST(job_reclaimable_pods)
{
    /* One pod, or nothing done: nothing. */
    ck_assert_int_eq(job_reclaim("{\"spec\":{},\"status\":{\"succeeded\":1}}"), 0);
    ck_assert_int_eq(job_reclaim("{\"spec\":{\"parallelism\":4,\"completions\":10}}"), 0);
    /* Remaining work still fills every slot: 10 - 5 = 5 >= 4. */
    ck_assert_int_eq(
        job_reclaim(
            "{\"spec\":{\"parallelism\":4,\"completions\":10},\"status\":{\"succeeded\":5}}"),
        0);
    /* 10 - 8 = 2 left for 4 slots: 2 reclaimable; all done: all 4. */
    ck_assert_int_eq(
        job_reclaim(
            "{\"spec\":{\"parallelism\":4,\"completions\":10},\"status\":{\"succeeded\":8}}"),
        2);
    ck_assert_int_eq(
        job_reclaim(
            "{\"spec\":{\"parallelism\":4,\"completions\":4},\"status\":{\"succeeded\":4}}"),
        4);
    /* Completions default to parallelism. */
    ck_assert_int_eq(job_reclaim("{\"spec\":{\"parallelism\":3},\"status\":{\"succeeded\":1}}"), 1);
    /* Indexed: completed and failed indexes, their union ({0..3}: 2 left for 4 slots), none at
     * or past completions ({1, 3}), a malformed interval ends its list ({0}). */
    ck_assert_int_eq(
        job_reclaim("{\"spec\":{\"parallelism\":4,\"completions\":6,\"completionMode\":"
                    "\"Indexed\"},\"status\":{\"succeeded\":0,\"completedIndexes\":"
                    "\"0-2\",\"failedIndexes\":\"2,3\"}}"),
        2);
    ck_assert_int_eq(
        job_reclaim("{\"spec\":{\"parallelism\":4,\"completions\":4,\"completionMode\":"
                    "\"Indexed\"},\"status\":{\"completedIndexes\":\"1,3-9\"}}"),
        2);
    ck_assert_int_eq(
        job_reclaim("{\"spec\":{\"parallelism\":4,\"completions\":4,\"completionMode\":"
                    "\"Indexed\"},\"status\":{\"succeeded\":4,\"completedIndexes\":"
                    "\"0,x,2\"}}"),
        1);
}
END_TEST

START_TEST(jobset_reclaimable_pods)
{
    const jobs_kind_t *k = jobs_kind_named("jobset.x-k8s.io/jobset");
    json_t *obj = json_loads(
        "{\"spec\":{\"replicatedJobs\":[{\"name\":\"driver\",\"replicas\":1,\"template\":{"
        "\"spec\":{}}},{\"name\":\"workers\",\"replicas\":3,\"template\":{\"spec\":{"
        "\"parallelism\":2,\"completions\":2}}},{\"name\":\"x\",\"replicas\":1,\"template\":{"
        "\"spec\":{}}}]},\"status\":{\"replicatedJobsStatus\":[{\"name\":\"workers\","
        "\"succeeded\":2},{\"name\":\"driver\",\"succeeded\":0},{\"name\":\"x\",\"succeeded\":"
        "2}]}}",
        0, NULL);
    jobs_reclaim_t r[JOBS_PODSETS_MAX];
    size_t n = 0;

    ck_assert_ptr_nonnull(obj);
    k->reclaimable(obj, r, &n);
    /* workers: 2 Jobs x 2 pods; driver none; x more succeeded than replicas: none (Kueue). */
    ck_assert_uint_eq(n, 1);
    ck_assert_str_eq(r[0].name, "workers");
    ck_assert_int_eq(r[0].count, 4);
    json_decref(obj);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("jobs_framework");
    TCase *t = tcase_create("framework");

    tcase_add_test(t, job_names_identical);
    tcase_add_test(t, job_reclaimable_pods);
    tcase_add_test(t, jobset_reclaimable_pods);
    tcase_add_test(t, other_kind_names);
    tcase_add_test(t, table_lookups);
    tcase_add_test(t, build_job_same_as_job_workload);
    tcase_add_test(t, build_copies_labels_and_partial);
    tcase_add_test(t, build_errors_name_the_field);
    tcase_add_test(t, start_stop_round_trip);
    tcase_add_test(t, start_conflicts_leave_object);
    tcase_add_test(t, partial_admission_round_trip);
    tcase_add_test(t, stop_keeps_controller_labels);
    tcase_add_test(t, job_status);
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
