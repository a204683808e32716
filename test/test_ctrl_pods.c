/* test_ctrl_pods -- plain Pods and pod groups under quota against the in-memory API server: a
 * gated Pod gets a Workload, its admission ungates it with the flavor's node selector, a Pod
 * beyond the quota stays gated with QuotaReserved=False and the engine's message, an eviction
 * marks the Pod TerminationTarget and deletes it and releases the quota; a pod group of N Pods
 * is one Workload admitted together; a child Job of a managed JobSet stays suspended while the
 * JobSet's Workload is not admitted. Kubernetes 1.20 (the integration API server) has no
 * scheduling gates, so this is where the gate logic is tested (docs/testing.md). */
/* SPDX-License-Identifier: Apache-2.0 */
#include "ctrl/ctrl.h"
#include "ctrl/ctrl_int.h" /* ext_owners: the owners read, swept once stale */

#include "ctrl_fixture.h"
#include "fakeapi.h"
#include "jobs/framework.h"
#include "jobs/job_workload.h"
#include "jobs/kind_serving.h"
#include "jobs/podgroup.h"
#include "kube/client.h"

#include <check.h>
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Start with `integrations` (a JSON object, NULL: Kueue's default) as the configuration's
 * integrations; the server serves Pods and StatefulSets, and JobSets when `jobsets`. */
static void fx_start_with(fx_t *fx, int cpu, const char *integrations, bool jobsets)
{
    fx_kind_t kinds[] = {{"", "v1", "pods", "Pod"},
                         {"apps", "v1", "statefulsets", "StatefulSet"},
                         {"jobset.x-k8s.io", "v1alpha2", "jobsets", "JobSet"}};

    fx_serve(fx, kinds, jobsets ? 3 : 2);
    fx_queues(fx, cpu);
    fx_operate(fx, "integrations", integrations);
}

/* Pods enabled (integrations.frameworks: batch/job and pod, as a platform would). */
static void fx_start(fx_t *fx, int cpu)
{
    fx_start_with(fx, cpu, "{\"frameworks\":[\"batch/job\",\"pod\"]}", false);
}

/* A Pod `name` as the pod webhook leaves it: managed label and finalizer, gated, in ns/lq,
 * asking for `cpu` cpus; in pod group `group` of `total` Pods when `group` is not NULL.
 * `extra_fin` (may be NULL) adds a finalizer of another controller (keeps a deleted Pod
 * visible). */
static void pod(fx_t *fx, const char *name, int cpu, const char *group, int total,
                const char *extra_fin)
{
    char p[2048], grp[256] = "", ann[256] = "", fin[128] = "";

    if (group != NULL) {
        snprintf(grp, sizeof(grp), ",\"kueue.x-k8s.io/pod-group-name\":\"%s\"", group);
        snprintf(ann, sizeof(ann),
                 ",\"annotations\":{\"kueue.x-k8s.io/pod-group-total-count\":\"%d\"}", total);
    }
    if (extra_fin != NULL)
        snprintf(fin, sizeof(fin), ",\"%s\"", extra_fin);
    snprintf(p, sizeof(p),
             "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\","
             "\"namespace\":\"ns\",\"labels\":{\"kueue.x-k8s.io/queue-name\":\"lq\","
             "\"kueue.x-k8s.io/managed\":\"true\"%s}%s,\"finalizers\":["
             "\"kueue.x-k8s.io/managed\"%s]},\"spec\":{\"schedulingGates\":[{\"name\":"
             "\"kueue.x-k8s.io/admission\"}],\"restartPolicy\":\"Never\",\"containers\":[{"
             "\"name\":\"c\",\"image\":\"i\",\"resources\":{\"requests\":{\"cpu\":\"%d\"}}}]},"
             "\"status\":{\"phase\":\"Pending\"}}",
             name, grp, ann, fin, cpu);
    fx_put(fx, p);
}

static json_t *get_pod(fx_t *fx, const char *name)
{
    return fakeapi_get_object(fx->fa, "pods", "ns", name);
}

/* The Workload of single Pod `name` (borrowed), found by Kueue's name for a Pod. */
static json_t *pod_workload(fx_t *fx, const char *name)
{
    json_t *p = get_pod(fx, name);
    const char *uid = json_string_value(json_object_get(json_object_get(p, "metadata"), "uid"));
    char wname[JOB_WORKLOAD_NAME_MAX + 1];

    if (uid == NULL || jobs_workload_name(&jobs_kind_pod, name, uid, JOB_WORKLOAD_NAME_MAX, wname,
                                          sizeof(wname), NULL) != ERR_OK)
        return NULL;
    return fakeapi_get_object(fx->fa, "workloads", "ns", wname);
}

static bool gated(fx_t *fx, const char *name)
{
    return jobs_pod_gated(get_pod(fx, name));
}

static bool wl_reserved(json_t *w)
{
    return w != NULL && json_object_get(json_object_get(w, "status"), "admission") != NULL;
}

/* Condition `type` of Workload `w` (borrowed), or NULL. */
static json_t *cond(json_t *w, const char *type)
{
    json_t *c;
    size_t i;

    json_array_foreach(json_object_get(json_object_get(w, "status"), "conditions"), i, c)
    {
        if (strcmp(json_string_value(json_object_get(c, "type")), type) == 0)
            return c;
    }
    return NULL;
}

static bool cond_is(json_t *w, const char *type, const char *status)
{
    json_t *c = cond(w, type);
    return c != NULL && strcmp(json_string_value(json_object_get(c, "status")), status) == 0;
}

static bool waits_for_quota(json_t *w)
{
    json_t *c = cond(w, "QuotaReserved");
    const char *m = json_string_value(json_object_get(c, "message"));
    return cond_is(w, "QuotaReserved", "False") && m != NULL &&
           strstr(m, "insufficient quota") != NULL;
}

/* Set Pod `name`'s status.phase (the kubelet's part). */
static void set_phase(fx_t *fx, const char *name, const char *phase)
{
    json_t *p = json_deep_copy(get_pod(fx, name));

    json_object_set_new(json_object_get(p, "status"), "phase", json_string(phase));
    ck_assert_int_eq(fakeapi_put_object(fx->fa, p, NULL, NULL), ERR_OK);
    json_decref(p);
}

static const char *node_selector(fx_t *fx, const char *name, const char *key)
{
    return json_string_value(json_object_get(
        json_object_get(json_object_get(get_pod(fx, name), "spec"), "nodeSelector"), key));
}

static const char *label(json_t *obj, const char *key)
{
    return json_string_value(
        json_object_get(json_object_get(json_object_get(obj, "metadata"), "labels"), key));
}

static bool has_condition_true(json_t *podobj, const char *type)
{
    json_t *c;
    size_t i;

    json_array_foreach(json_object_get(json_object_get(podobj, "status"), "conditions"), i, c)
    {
        if (strcmp(json_string_value(json_object_get(c, "type")), type) == 0 &&
            strcmp(json_string_value(json_object_get(c, "status")), "True") == 0)
            return true;
    }
    return false;
}

static bool pod_has_managed_finalizer(json_t *p)
{
    json_t *f;
    size_t i;

    json_array_foreach(json_object_get(json_object_get(p, "metadata"), "finalizers"), i, f)
    {
        if (strcmp(json_string_value(f), "kueue.x-k8s.io/managed") == 0)
            return true;
    }
    return false;
}

static bool no_workloads(fx_t *fx)
{
    return fakeapi_object_count(fx->fa, "workloads") == 0;
}

/* Let the loop run for `ms` milliseconds. */
static void run_for(fx_t *fx, uint64_t ms)
{
    uint64_t end = uv_now(&fx->loop) + ms;

    while (uv_now(&fx->loop) < end)
        uv_run(&fx->loop, UV_RUN_ONCE);
}

/* ---- single Pods --------------------------------------------------------------------------- */

static bool a_running(fx_t *fx)
{
    return wl_reserved(pod_workload(fx, "a")) && !gated(fx, "a");
}

static bool b_waits(fx_t *fx)
{
    return waits_for_quota(pod_workload(fx, "b"));
}

static bool a_finished_let_go(fx_t *fx)
{
    json_t *w = pod_workload(fx, "a");
    return cond_is(w, "Finished", "True") && !pod_has_managed_finalizer(get_pod(fx, "a")) &&
           json_array_size(json_object_get(json_object_get(w, "metadata"), "finalizers")) == 0;
}

static bool b_running(fx_t *fx)
{
    return wl_reserved(pod_workload(fx, "b")) && !gated(fx, "b");
}

static bool b_stopped_released(fx_t *fx)
{
    json_t *p = get_pod(fx, "b");
    json_t *w = pod_workload(fx, "b");
    return json_object_get(json_object_get(p, "metadata"), "deletionTimestamp") != NULL &&
           !wl_reserved(w) && cond_is(w, "Evicted", "True");
}

START_TEST(pod_gated_admitted_ungated_finished_evicted_deleted)
{
    fx_t fx;
    json_t *p, *w;

    fx_start(&fx, 1);
    pod(&fx, "a", 1, NULL, 0, NULL);
    fx_run_until(&fx, a_running, 10, "Pod a admitted and ungated");
    /* Ungated with the flavor's node selector and Kueue's labels; one pod set "main" of 1. */
    p = get_pod(&fx, "a");
    ck_assert_str_eq(node_selector(&fx, "a", "pool"), "p1");
    ck_assert_str_eq(label(p, "kueue.x-k8s.io/podset"), "main");
    ck_assert_str_eq(label(p, "kueue.x-k8s.io/cluster-queue-name"), "cq");
    w = pod_workload(&fx, "a");
    ck_assert_str_eq(json_string_value(json_object_get(json_object_get(w, "spec"), "queueName")),
                     "lq");
    ck_assert_uint_eq(json_array_size(json_object_get(json_object_get(w, "spec"), "podSets")), 1);
    ck_assert_str_eq(
        json_string_value(json_object_get(
            json_array_get(json_object_get(json_object_get(w, "metadata"), "ownerReferences"), 0),
            "kind")),
        "Pod");
    ck_assert(cond_is(w, "Admitted", "True"));
    /* b does not fit: its Workload says why, the Pod stays gated. */
    pod(&fx, "b", 1, NULL, 0, "test/keep");
    fx_run_until(&fx, b_waits, 10, "Pod b waiting: insufficient quota");
    ck_assert(gated(&fx, "b"));
    /* a succeeds (the kubelet's phase): its Workload finishes, both let go, b runs. */
    set_phase(&fx, "a", "Succeeded");
    fx_run_until(&fx, a_finished_let_go, 10, "Workload of a finished and finalizers removed");
    fx_run_until(&fx, b_running, 10, "Pod b admitted once a finished");
    ck_assert_str_eq(node_selector(&fx, "b", "pool"), "p1");
    set_phase(&fx, "b", "Running");
    /* HoldAndDrain evicts b: a released Pod cannot be gated again, so it is marked
     * TerminationTarget and deleted, and the quota is released. */
    fx_put(&fx,
           "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"ClusterQueue\",\"metadata\":"
           "{\"name\":\"cq\"},\"spec\":{\"namespaceSelector\":{},\"stopPolicy\":\"HoldAndDrain\","
           "\"resourceGroups\":[{\"coveredResources\":[\"cpu\"],\"flavors\":[{\"name\":"
           "\"default\",\"resources\":[{\"name\":\"cpu\",\"nominalQuota\":\"1\"}]}]}]}}");
    fx_run_until(&fx, b_stopped_released, 10, "Pod b deleted and its quota released");
    p = get_pod(&fx, "b");
    ck_assert(has_condition_true(p, "TerminationTarget"));
    ck_assert_uint_ge(fakeapi_count(fx.fa, "delete", "pods"), 1);
    ck_assert_uint_eq(ctrl_stats(fx.ctrl).created, 2);
    fx_stop(&fx);
}
END_TEST

/* ---- pod groups ---------------------------------------------------------------------------- */

static json_t *group_workload(fx_t *fx, const char *group)
{
    return fakeapi_get_object(fx->fa, "workloads", "ns", group);
}

static bool g_running(fx_t *fx)
{
    return wl_reserved(group_workload(fx, "g")) && !gated(fx, "g-0") && !gated(fx, "g-1") &&
           !gated(fx, "g-2");
}

static bool h_waits(fx_t *fx)
{
    return waits_for_quota(group_workload(fx, "h"));
}

static bool h_running(fx_t *fx)
{
    return wl_reserved(group_workload(fx, "h")) && !gated(fx, "h-0") && !gated(fx, "h-1");
}

START_TEST(pod_group_one_workload_admitted_together)
{
    fx_t fx;
    json_t *w, *ps;
    const char *names[] = {"g-0", "g-1", "g-2"};

    fx_start(&fx, 4);
    /* Two of three Pods: the group is not complete, no Workload yet. */
    pod(&fx, "g-0", 1, "g", 3, NULL);
    pod(&fx, "g-1", 1, "g", 3, NULL);
    run_for(&fx, 300);
    ck_assert_ptr_null(group_workload(&fx, "g"));
    pod(&fx, "g-2", 1, "g", 3, NULL);
    fx_run_until(&fx, g_running, 10, "pod group g admitted and all three Pods ungated");
    w = group_workload(&fx, "g");
    ps = json_object_get(json_object_get(w, "spec"), "podSets");
    ck_assert_uint_eq(json_array_size(ps), 1);
    ck_assert_int_eq(json_integer_value(json_object_get(json_array_get(ps, 0), "count")), 3);
    ck_assert_str_eq(json_string_value(json_object_get(
                         json_object_get(json_object_get(w, "metadata"), "annotations"),
                         "kueue.x-k8s.io/is-group-workload")),
                     "true");
    ck_assert_uint_eq(
        json_array_size(json_object_get(json_object_get(w, "metadata"), "ownerReferences")), 3);
    for (size_t i = 0; i < 3; i++)
        ck_assert_str_eq(node_selector(&fx, names[i], "pool"), "p1");
    /* h (2 x 1 cpu) does not fit beside g (3 of 4 cpus): one Workload, waiting, all gated. */
    pod(&fx, "h-0", 1, "h", 2, NULL);
    pod(&fx, "h-1", 1, "h", 2, NULL);
    fx_run_until(&fx, h_waits, 10, "pod group h waiting: insufficient quota");
    ck_assert(gated(&fx, "h-0") && gated(&fx, "h-1"));
    /* g's Pods all succeed: g finishes, h is admitted as a whole. */
    for (size_t i = 0; i < 3; i++)
        set_phase(&fx, names[i], "Succeeded");
    fx_run_until(&fx, h_running, 10, "pod group h admitted once g finished");
    ck_assert(cond_is(group_workload(&fx, "g"), "Finished", "True"));
    ck_assert_uint_eq(ctrl_stats(fx.ctrl).created, 2);
    fx_stop(&fx);
}
END_TEST

static bool g_reclaims_one(fx_t *fx)
{
    json_t *rp =
        json_object_get(json_object_get(group_workload(fx, "g"), "status"), "reclaimablePods");
    return json_array_size(rp) == 1 &&
           json_integer_value(json_object_get(json_array_get(rp, 0), "count")) == 1;
}

/* pod() with the role-hash annotation the pod webhook writes (Kueue's pod sets of a group are
 * its roles; without the annotation the role is the hash of the spec, which the flavor's node
 * selector changes at the start). */
static void role_pod(fx_t *fx, const char *name, const char *group, int total)
{
    json_t *p;

    pod(fx, name, 1, group, total, NULL);
    p = json_deep_copy(get_pod(fx, name));
    json_object_set_new(json_object_get(json_object_get(p, "metadata"), "annotations"),
                        "kueue.x-k8s.io/role-hash", json_string("main"));
    ck_assert_int_eq(fakeapi_put_object(fx->fa, p, NULL, NULL), ERR_OK);
    json_decref(p);
}

/* Kueue's ReclaimablePods for a pod group: a Pod of the group that succeeded while the rest
 * runs is written into status.reclaimablePods, and its quota goes to another group. */
START_TEST(pod_group_reclaimable_pods_release_quota)
{
    fx_t fx;
    json_t *w, *ps;

    fx_start(&fx, 4);
    role_pod(&fx, "g-0", "g", 3);
    role_pod(&fx, "g-1", "g", 3);
    role_pod(&fx, "g-2", "g", 3);
    fx_run_until(&fx, g_running, 10, "pod group g admitted");
    for (int i = 0; i < 3; i++) {
        char n[8];
        snprintf(n, sizeof(n), "g-%d", i);
        set_phase(&fx, n, "Running");
    }
    pod(&fx, "h-0", 1, "h", 2, NULL);
    pod(&fx, "h-1", 1, "h", 2, NULL);
    fx_run_until(&fx, h_waits, 10, "pod group h waiting: insufficient quota");
    /* One of g's Pods succeeds: it is reclaimable, g holds 2 cpus, h (2) fits. */
    set_phase(&fx, "g-0", "Succeeded");
    fx_run_until(&fx, g_reclaims_one, 10, "g's succeeded Pod in status.reclaimablePods");
    w = group_workload(&fx, "g");
    ps = json_object_get(json_object_get(w, "spec"), "podSets");
    ck_assert_str_eq(
        json_string_value(json_object_get(
            json_array_get(json_object_get(json_object_get(w, "status"), "reclaimablePods"), 0),
            "name")),
        json_string_value(json_object_get(json_array_get(ps, 0), "name")));
    fx_run_until(&fx, h_running, 10, "pod group h admitted in g's reclaimed quota");
    ck_assert(!cond_is(group_workload(&fx, "g"), "Finished", "True"));
    fx_stop(&fx);
}
END_TEST

/* Disabled unless configured (Kueue's default frameworks: batch/job): a gated Pod is left
 * alone. */
START_TEST(pods_left_alone_unless_enabled)
{
    fx_t fx;

    fx_start_with(&fx, 1, NULL, false);
    pod(&fx, "a", 1, NULL, 0, NULL);
    run_for(&fx, 300);
    ck_assert_uint_eq(fakeapi_object_count(fx.fa, "workloads"), 0);
    ck_assert(gated(&fx, "a"));
    fx_stop(&fx);
}
END_TEST

/* ---- child jobs ------------------------------------------------------------------------------ */

static bool child_suspended(fx_t *fx)
{
    json_t *j = fakeapi_get_object(fx->fa, "jobs", "ns", "child");
    return json_is_true(json_object_get(json_object_get(j, "spec"), "suspend"));
}

/* A Job whose controller is a managed JobSet: no Workload of its own, and kept suspended while
 * the JobSet's Workload is not admitted (Kueue's shouldSuspendChildJob). */
START_TEST(child_job_suspended_while_parent_not_admitted)
{
    fx_t fx;
    json_t *js;
    const char *uid;
    char j[2048];

    /* 0 cpu: the JobSet's Workload can never be admitted. */
    fx_start_with(&fx, 0, "{\"frameworks\":[\"batch/job\",\"jobset.x-k8s.io/jobset\"]}", true);
    fx_put(&fx, "{\"apiVersion\":\"jobset.x-k8s.io/v1alpha2\",\"kind\":\"JobSet\",\"metadata\":{"
                "\"name\":\"js\",\"namespace\":\"ns\",\"labels\":{\"kueue.x-k8s.io/queue-name\":"
                "\"lq\"}},\"spec\":{\"suspend\":true,\"replicatedJobs\":[{\"name\":\"w\","
                "\"replicas\":1,\"template\":{\"spec\":{\"parallelism\":1,\"completions\":1,"
                "\"template\":{\"spec\":{\"restartPolicy\":\"Never\",\"containers\":[{\"name\":"
                "\"c\",\"image\":\"i\",\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]}}}}}]}}");
    js = fakeapi_get_object(fx.fa, "jobsets", "ns", "js");
    uid = json_string_value(json_object_get(json_object_get(js, "metadata"), "uid"));
    snprintf(j, sizeof(j),
             "{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"metadata\":{\"name\":\"child\","
             "\"namespace\":\"ns\",\"labels\":{\"kueue.x-k8s.io/queue-name\":\"lq\"},"
             "\"ownerReferences\":[{\"apiVersion\":\"jobset.x-k8s.io/v1alpha2\",\"kind\":"
             "\"JobSet\",\"name\":\"js\",\"uid\":\"%s\",\"controller\":true}]},\"spec\":{"
             "\"suspend\":false,\"parallelism\":1,\"completions\":1,\"template\":{\"spec\":{"
             "\"restartPolicy\":\"Never\",\"containers\":[{\"name\":\"c\",\"image\":\"i\"}]}}}}",
             uid);
    fx_put(&fx, j);
    fx_run_until(&fx, child_suspended, 10, "the child Job suspended");
    run_for(&fx, 200);
    /* One Workload: the JobSet's; none for the child, and no stopping mark on it (a child's
     * suspension restores nothing). */
    ck_assert_uint_eq(fakeapi_object_count(fx.fa, "workloads"), 1);
    ck_assert_ptr_null(json_object_get(
        json_object_get(
            json_object_get(fakeapi_get_object(fx.fa, "jobs", "ns", "child"), "metadata"),
            "annotations"),
        "kueue.x-k8s.io/stopping"));
    fx_stop(&fx);
}
END_TEST

/* ---- the stopping annotation ---------------------------------------------------------------- */

static const char *job_annotation(fx_t *fx, const char *name, const char *key)
{
    json_t *j = fakeapi_get_object(fx->fa, "jobs", "ns", name);
    return json_string_value(
        json_object_get(json_object_get(json_object_get(j, "metadata"), "annotations"), key));
}

static bool job_suspended(fx_t *fx, const char *name)
{
    json_t *j = fakeapi_get_object(fx->fa, "jobs", "ns", name);
    return json_is_true(json_object_get(json_object_get(j, "spec"), "suspend"));
}

static bool a_job_running(fx_t *fx)
{
    return !job_suspended(fx, "a") && job_annotation(fx, "a", "kueue.x-k8s.io/stopping") == NULL &&
           fakeapi_count(fx->fa, "update", "jobs") > 0;
}

static bool a_job_stopping(fx_t *fx)
{
    const char *v = job_annotation(fx, "a", "kueue.x-k8s.io/stopping");
    return job_suspended(fx, "a") && v != NULL && strcmp(v, "true") == 0;
}

static bool a_job_restored(fx_t *fx)
{
    json_t *j = fakeapi_get_object(fx->fa, "jobs", "ns", "a");
    json_t *tspec =
        json_object_get(json_object_get(json_object_get(j, "spec"), "template"), "spec");
    return job_suspended(fx, "a") && job_annotation(fx, "a", "kueue.x-k8s.io/stopping") == NULL &&
           json_object_get(tspec, "nodeSelector") == NULL;
}

/* A stopped batch/v1 Job carries kueue.x-k8s.io/stopping=true from its suspension until its
 * template is restored (Kueue's Job.Stop()); here the restore waits (its GET of the Workload
 * fails twice), so the annotation is seen, then goes with the restore. */
START_TEST(job_stop_marks_stopping_until_restored)
{
    fakeapi_fault_t failing = {.action = FAKEAPI_FAIL, .status = 500};
    fx_t fx;

    fx_start(&fx, 1);
    fx_put(&fx, "{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"metadata\":{\"name\":\"a\","
                "\"namespace\":\"ns\",\"labels\":{\"kueue.x-k8s.io/queue-name\":\"lq\"}},\"spec\":"
                "{\"suspend\":true,\"parallelism\":1,\"completions\":1,\"template\":{\"spec\":{"
                "\"restartPolicy\":\"Never\",\"containers\":[{\"name\":\"c\",\"image\":\"i\","
                "\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]}}}}");
    fx_run_until(&fx, a_job_running, 10, "Job a started");
    fakeapi_fault_next(fx.fa, "get", "workloads", &failing, 2);
    fx_put(&fx,
           "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"ClusterQueue\",\"metadata\":"
           "{\"name\":\"cq\"},\"spec\":{\"namespaceSelector\":{},\"stopPolicy\":\"HoldAndDrain\","
           "\"resourceGroups\":[{\"coveredResources\":[\"cpu\"],\"flavors\":[{\"name\":"
           "\"default\",\"resources\":[{\"name\":\"cpu\",\"nominalQuota\":\"1\"}]}]}]}}");
    fx_run_until(&fx, a_job_stopping, 10, "Job a suspended and marked stopping");
    fx_run_until(&fx, a_job_restored, 20, "Job a restored and no longer stopping");
    fx_stop(&fx);
}
END_TEST

/* ---- children of integrations.externalFrameworks owners ------------------------------------ */

static const char *uid_of(fx_t *fx, const char *resource, const char *name)
{
    return json_string_value(json_object_get(
        json_object_get(fakeapi_get_object(fx->fa, resource, "ns", name), "metadata"), "uid"));
}

/* Job `name` owned by AppWrapper `owner` (its controller), running unless `suspend`, in LocalQueue
 * lq when `queued`. */
static void aw_child(fx_t *fx, const char *name, const char *owner, bool suspend, bool queued)
{
    char j[2048];

    snprintf(j, sizeof(j),
             "{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"metadata\":{\"name\":\"%s\","
             "\"namespace\":\"ns\",\"labels\":{%s},\"ownerReferences\":[{\"apiVersion\":"
             "\"workload.codeflare.dev/v1beta2\",\"kind\":\"AppWrapper\",\"name\":\"%s\","
             "\"uid\":\"%s\",\"controller\":true}]},\"spec\":{\"suspend\":%s,\"parallelism\":1,"
             "\"completions\":1,\"template\":{\"spec\":{\"restartPolicy\":\"Never\","
             "\"containers\":[{\"name\":\"c\",\"image\":\"i\",\"resources\":{\"requests\":{"
             "\"cpu\":\"1\"}}}]}}}}",
             name, queued ? "\"kueue.x-k8s.io/queue-name\":\"lq\"" : "", owner,
             uid_of(fx, "appwrappers", owner), suspend ? "true" : "false");
    fx_put(fx, j);
}

static bool c1_suspended(fx_t *fx)
{
    return job_suspended(fx, "c1");
}

static bool aw_wl_admitted(fx_t *fx)
{
    return wl_reserved(fakeapi_get_object(fx->fa, "workloads", "ns", "appwrapper-aw"));
}

static bool c2_has_workload(fx_t *fx)
{
    char wname[JOB_WORKLOAD_NAME_MAX + 1];
    const char *uid = uid_of(fx, "jobs", "c2");

    return uid != NULL &&
           jobs_workload_name(jobs_kind_named("batch/job"), "c2", uid, JOB_WORKLOAD_NAME_MAX, wname,
                              sizeof(wname), NULL) == ERR_OK &&
           fakeapi_get_object(fx->fa, "workloads", "ns", wname) != NULL;
}

/* integrations.externalFrameworks: an AppWrapper (another controller's kind, read with a GET as
 * Kueue reads it) with a queue name covers its child Job: no Workload for the child, suspended
 * while the AppWrapper's own Workload (its controller's, found by owner) is not admitted, left
 * running once it is. An AppWrapper without a queue name covers nothing: its queued child is a
 * Job of its own and gets its Workload. */
/* Only the owner read last is kept (the sweep dropped the stale ones). */
static bool one_owner_kept(fx_t *fx)
{
    return util_hmap_len(&fx->ctrl->ext_owners) == 1;
}

START_TEST(external_framework_children)
{
    fx_kind_t kinds[] = {{"workload.codeflare.dev", "v1beta2", "appwrappers", "AppWrapper"}};
    fx_t fx;
    char w[2048];

    fx_serve(&fx, kinds, 1);
    fx_queues(&fx, 4);
    fx_operate(&fx, "integrations",
               "{\"frameworks\":[\"batch/job\"],"
               "\"externalFrameworks\":[\"AppWrapper.v1beta2.workload.codeflare.dev\"]}");
    fx_put(&fx, "{\"apiVersion\":\"workload.codeflare.dev/v1beta2\",\"kind\":\"AppWrapper\","
                "\"metadata\":{\"name\":\"aw\",\"namespace\":\"ns\",\"labels\":{"
                "\"kueue.x-k8s.io/queue-name\":\"lq\"}},\"spec\":{}}");
    aw_child(&fx, "c1", "aw", false, false);
    fx_run_until(&fx, c1_suspended, 10, "the AppWrapper's running child suspended");
    ck_assert_uint_eq(fakeapi_object_count(fx.fa, "workloads"), 0);
    ck_assert_uint_gt(fakeapi_count(fx.fa, "get", "appwrappers"), 0); /* read as Kueue reads it */

    /* The AppWrapper's controller makes its Workload; once admitted, the child runs. */
    snprintf(w, sizeof(w),
             "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"Workload\",\"metadata\":{"
             "\"name\":\"appwrapper-aw\",\"namespace\":\"ns\",\"ownerReferences\":[{"
             "\"apiVersion\":\"workload.codeflare.dev/v1beta2\",\"kind\":\"AppWrapper\","
             "\"name\":\"aw\",\"uid\":\"%s\",\"controller\":true}]},\"spec\":{\"queueName\":"
             "\"lq\",\"podSets\":[{\"name\":\"main\",\"count\":1,\"template\":{\"spec\":{"
             "\"containers\":[{\"name\":\"c\",\"image\":\"i\",\"resources\":{\"requests\":{"
             "\"cpu\":\"1\"}}}]}}}]}}",
             uid_of(&fx, "appwrappers", "aw"));
    fx_put(&fx, w);
    fx_run_until(&fx, aw_wl_admitted, 10, "the AppWrapper's Workload admitted");
    aw_child(&fx, "c1", "aw", false, false);
    run_for(&fx, 1500);
    ck_assert_msg(!job_suspended(&fx, "c1"), "the child of an admitted AppWrapper was suspended");
    ck_assert_uint_eq(fakeapi_object_count(fx.fa, "workloads"), 1);

    /* No queue name on the AppWrapper: its queued child is a top-level Job. */
    fx_put(&fx, "{\"apiVersion\":\"workload.codeflare.dev/v1beta2\",\"kind\":\"AppWrapper\","
                "\"metadata\":{\"name\":\"plain\",\"namespace\":\"ns\"},\"spec\":{}}");
    aw_child(&fx, "c2", "plain", true, true);
    fx_run_until(&fx, c2_has_workload, 10, "the queued child of an unqueued AppWrapper queued");

    /* The owners read stay only while fresh (10 s): the next read sweeps the stale ones. */
    ck_assert_uint_eq(util_hmap_len(&fx.ctrl->ext_owners), 2);
    run_for(&fx, 10500);
    fx_put(&fx, "{\"apiVersion\":\"workload.codeflare.dev/v1beta2\",\"kind\":\"AppWrapper\","
                "\"metadata\":{\"name\":\"third\",\"namespace\":\"ns\"},\"spec\":{}}");
    aw_child(&fx, "c3", "third", true, true);
    fx_run_until(&fx, one_owner_kept, 10, "the stale owners swept at the next read");
    fx_stop(&fx);
}
END_TEST

/* Job `name` owned by the `kind` (of marine.example.com/v1, stored as `plural`) `owner`,
 * running. */
static void sea_child(fx_t *fx, const char *name, const char *kind, const char *plural,
                      const char *owner, const char *uid)
{
    char j[2048];

    snprintf(j, sizeof(j),
             "{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"metadata\":{\"name\":\"%s\","
             "\"namespace\":\"ns\",\"labels\":{\"kueue.x-k8s.io/queue-name\":\"lq\"},"
             "\"ownerReferences\":[{\"apiVersion\":\"marine.example.com/v1\",\"kind\":\"%s\","
             "\"name\":\"%s\",\"uid\":\"%s\",\"controller\":true}]},\"spec\":{\"suspend\":false,"
             "\"parallelism\":1,\"completions\":1,\"template\":{\"spec\":{\"restartPolicy\":"
             "\"Never\",\"containers\":[{\"name\":\"c\",\"image\":\"i\",\"resources\":{"
             "\"requests\":{\"cpu\":\"1\"}}}]}}}}",
             name, kind, owner, uid ? uid : (plural ? uid_of(fx, plural, owner) : "u-1"));
    fx_put(fx, j);
}

static bool o1_suspended(fx_t *fx)
{
    return job_suspended(fx, "o1");
}

static bool o2_suspended(fx_t *fx)
{
    return job_suspended(fx, "o2");
}

static bool a1_suspended(fx_t *fx)
{
    return job_suspended(fx, "a1");
}

/* A request in the log whose path is `path`. */
static size_t log_paths(fx_t *fx, const char *path)
{
    size_t n = 0;

    for (size_t i = 0; i < fakeapi_log_len(fx->fa); i++)
        n += strcmp(fakeapi_log_at(fx->fa, i)->path, path) == 0;
    return n;
}

/* integrations.externalFrameworks owners are read at the resource API discovery names, as
 * Kueue's RESTMapper finds it: an Octopus is served as "octopodes" (not the guessed
 * "octopuses"), discovered once per group/version for every owner of it; a kind the
 * group/version does not list is not found (its child left alone) and discovery is not asked
 * again within its refresh bound; when discovery fails the plural is guessed. */
START_TEST(external_framework_discovery)
{
    fx_kind_t kinds[] = {{"marine.example.com", "v1", "octopodes", "Octopus"},
                         {"workload.codeflare.dev", "v1beta2", "appwrappers", "AppWrapper"}};
    fakeapi_fault_t fail = {.action = FAKEAPI_FAIL, .status = 500};
    fx_t fx;

    fx_serve(&fx, kinds, 2);
    fx_queues(&fx, 4);
    fx_operate(&fx, "integrations",
               "{\"frameworks\":[\"batch/job\"],\"externalFrameworks\":["
               "\"Octopus.v1.marine.example.com\",\"Squid.v1.marine.example.com\","
               "\"AppWrapper.v1beta2.workload.codeflare.dev\"]}");
    fx_put(&fx, "{\"apiVersion\":\"marine.example.com/v1\",\"kind\":\"Octopus\",\"metadata\":{"
                "\"name\":\"oc\",\"namespace\":\"ns\",\"labels\":{"
                "\"kueue.x-k8s.io/queue-name\":\"lq\"}},\"spec\":{}}");
    fx_put(&fx, "{\"apiVersion\":\"marine.example.com/v1\",\"kind\":\"Octopus\",\"metadata\":{"
                "\"name\":\"oc2\",\"namespace\":\"ns\",\"labels\":{"
                "\"kueue.x-k8s.io/queue-name\":\"lq\"}},\"spec\":{}}");
    sea_child(&fx, "o1", "Octopus", "octopodes", "oc", NULL);
    fx_run_until(&fx, o1_suspended, 10, "the Octopus's child suspended (its owner read)");
    ck_assert_uint_eq(log_paths(&fx, "/apis/marine.example.com/v1"), 1);
    ck_assert_uint_gt(fakeapi_count(fx.fa, "get", "octopodes"), 0);
    ck_assert_uint_eq(log_paths(&fx, "/apis/marine.example.com/v1/namespaces/ns/octopuses/oc"), 0);
    ck_assert_uint_eq(fakeapi_object_count(fx.fa, "workloads"), 0);

    /* Another owner of the group/version: discovery is not asked again. */
    sea_child(&fx, "o2", "Octopus", "octopodes", "oc2", NULL);
    fx_run_until(&fx, o2_suspended, 10, "the second Octopus's child suspended");
    ck_assert_uint_eq(log_paths(&fx, "/apis/marine.example.com/v1"), 1);

    /* A kind the group/version does not serve: not found, the child left alone (running, no
     * Workload), discovery not asked again within its refresh bound. */
    sea_child(&fx, "s1", "Squid", NULL, "sq", "u-squid");
    run_for(&fx, 2000);
    ck_assert_msg(!job_suspended(&fx, "s1"), "the child of an unserved kind was suspended");
    ck_assert_uint_eq(fakeapi_object_count(fx.fa, "workloads"), 0);
    ck_assert_uint_eq(log_paths(&fx, "/apis/marine.example.com/v1"), 1);
    ck_assert_uint_eq(log_paths(&fx, "/apis/marine.example.com/v1/namespaces/ns/squids/sq"), 0);

    /* Discovery fails (HTTP 500): the plural is guessed, "appwrappers", and the owner found. */
    fakeapi_fault_next(fx.fa, "discover", NULL, &fail, 1);
    fx_put(&fx, "{\"apiVersion\":\"workload.codeflare.dev/v1beta2\",\"kind\":\"AppWrapper\","
                "\"metadata\":{\"name\":\"aw\",\"namespace\":\"ns\",\"labels\":{"
                "\"kueue.x-k8s.io/queue-name\":\"lq\"}},\"spec\":{}}");
    aw_child(&fx, "a1", "aw", false, false);
    fx_run_until(&fx, a1_suspended, 10, "the AppWrapper's child suspended (plural guessed)");
    ck_assert_uint_eq(log_paths(&fx, "/apis/workload.codeflare.dev/v1beta2"), 1);
    ck_assert_uint_gt(fakeapi_count(fx.fa, "get", "appwrappers"), 0);
    fx_stop(&fx);
}
END_TEST

/* ---- StatefulSet: its Pods form one group ------------------------------------------------- */

/* A StatefulSet's Pod `name` as the pod webhook leaves it: gated, role hash, marked by its
 * parent (no managed label yet: the operator adds it with the group), owned by the set. */
static void sts_pod(fx_t *fx, const char *name, const char *uid)
{
    char p[2048];

    snprintf(p, sizeof(p),
             "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\","
             "\"namespace\":\"ns\",\"labels\":{\"app\":\"web\"},\"annotations\":{"
             "\"kueue.x-k8s.io/pod-suspending-parent\":\"statefulset\"},\"ownerReferences\":[{"
             "\"apiVersion\":\"apps/v1\",\"kind\":\"StatefulSet\",\"name\":\"web\",\"uid\":\"%s\","
             "\"controller\":true}]},\"spec\":{\"schedulingGates\":[{\"name\":"
             "\"kueue.x-k8s.io/admission\"}],\"containers\":[{\"name\":\"c\",\"image\":\"i\","
             "\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]},\"status\":{\"phase\":\"Pending\"}}",
             name, uid);
    fx_put(fx, p);
}

static bool web_running(fx_t *fx)
{
    const char *g = label(get_pod(fx, "web-0"), "kueue.x-k8s.io/pod-group-name");
    return g != NULL && wl_reserved(group_workload(fx, g)) && !gated(fx, "web-0") &&
           !gated(fx, "web-1");
}

/* The StatefulSet "web" of 2 replicas x 1 cpu, queued, as its webhook leaves it; one %s for its
 * status. */
#define STS_WEB                                                                              \
    "{\"apiVersion\":\"apps/v1\",\"kind\":\"StatefulSet\",\"metadata\":{\"name\":\"web\","   \
    "\"namespace\":\"ns\",\"labels\":{\"kueue.x-k8s.io/queue-name\":\"lq\"}},\"spec\":{"     \
    "\"replicas\":2,\"selector\":{\"matchLabels\":{\"app\":\"web\"}},\"template\":{"         \
    "\"metadata\":{\"labels\":{\"app\":\"web\"},\"annotations\":{"                           \
    "\"kueue.x-k8s.io/pod-suspending-parent\":\"statefulset\"}},\"spec\":{\"containers\":[{" \
    "\"name\":\"c\",\"image\":\"i\",\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]}}}%s}"

static char web_group[256];

static bool web_on_hold(fx_t *fx)
{
    json_t *w = group_workload(fx, web_group), *c = cond(w, "QuotaReserved");
    const char *r = json_string_value(json_object_get(c, "reason"));
    return !wl_reserved(w) && cond_is(w, "QuotaReserved", "False") && r != NULL &&
           strcmp(r, "OnHold") == 0;
}

static bool web_waits(fx_t *fx)
{
    return waits_for_quota(group_workload(fx, web_group));
}

static bool h3_running(fx_t *fx)
{
    return wl_reserved(group_workload(fx, "h")) && !gated(fx, "h-0") && !gated(fx, "h-1") &&
           !gated(fx, "h-2");
}

/* StatefulSet "web" at spec.replicas `replicas`, status.replicas `status`. */
static void sts_scale(fx_t *fx, int replicas, int status)
{
    char obj[2048], st[64];
    json_t *o;

    snprintf(st, sizeof(st), ",\"status\":{\"replicas\":%d}", status);
    snprintf(obj, sizeof(obj), STS_WEB, st);
    o = json_loads(obj, 0, NULL);
    ck_assert_ptr_nonnull(o);
    json_object_set_new(json_object_get(o, "spec"), "replicas", json_integer(replicas));
    ck_assert_int_eq(fakeapi_put_object(fx->fa, o, NULL, NULL), ERR_OK);
    json_decref(o);
}

/* The operator with the statefulset integration and StatefulSet "web" (no status yet): its uid. */
static const char *sts_web_start(fx_t *fx)
{
    char obj[2048];

    fx_start_with(fx, 4, "{\"frameworks\":[\"batch/job\",\"pod\",\"statefulset\"]}", false);
    snprintf(obj, sizeof(obj), STS_WEB, "");
    fx_put(fx, obj);
    return json_string_value(json_object_get(
        json_object_get(fakeapi_get_object(fx->fa, "statefulsets", "ns", "web"), "metadata"),
        "uid"));
}

START_TEST(statefulset_pods_form_one_group)
{
    char obj[2048];
    fx_t fx;
    json_t *w, *ps;
    const char *uid, *g;

    uid = sts_web_start(&fx);
    /* The StatefulSet controller's part: its Pods (gated by the webhook), then its status. */
    sts_pod(&fx, "web-0", uid);
    sts_pod(&fx, "web-1", uid);
    snprintf(obj, sizeof(obj), STS_WEB, ",\"status\":{\"replicas\":2}");
    fx_put(&fx, obj);
    fx_run_until(&fx, web_running, 10, "the StatefulSet's Pods admitted together and ungated");
    g = label(get_pod(&fx, "web-0"), "kueue.x-k8s.io/pod-group-name");
    ck_assert_str_eq(g, label(get_pod(&fx, "web-1"), "kueue.x-k8s.io/pod-group-name"));
    ck_assert_msg(strncmp(g, "statefulset-web-", 16) == 0, "group %s", g);
    w = group_workload(&fx, g);
    ps = json_object_get(json_object_get(w, "spec"), "podSets");
    ck_assert_uint_eq(json_array_size(ps), 1);
    ck_assert_int_eq(json_integer_value(json_object_get(json_array_get(ps, 0), "count")), 2);
    ck_assert_str_eq(node_selector(&fx, "web-1", "pool"), "p1");
    ck_assert_uint_eq(fakeapi_object_count(fx.fa, "workloads"), 1);
    /* Made from the StatefulSet, as Kueue's StatefulSet reconciler makes it. */
    ck_assert_str_eq(
        json_string_value(json_object_get(
            json_array_get(json_object_get(json_object_get(w, "metadata"), "ownerReferences"), 0),
            "kind")),
        "StatefulSet");
    ck_assert_str_eq(json_string_value(json_object_get(
                         json_object_get(json_object_get(w, "metadata"), "annotations"),
                         "kueue.x-k8s.io/job-owner-gvk")),
                     "apps/v1, Kind=StatefulSet");
    /* Scaled to zero (the StatefulSet controller deletes its Pods): its Workload is kept, on
     * hold (Kueue's StatefulSet reconciler), its quota released. */
    snprintf(web_group, sizeof(web_group), "%s", g);
    sts_scale(&fx, 0, 2);
    ck_assert_int_eq(fakeapi_delete_object(fx.fa, "pods", "ns", "web-0", NULL), ERR_OK);
    ck_assert_int_eq(fakeapi_delete_object(fx.fa, "pods", "ns", "web-1", NULL), ERR_OK);
    fx_run_until(&fx, web_on_hold, 10, "the StatefulSet's Workload on hold at zero replicas");
    w = group_workload(&fx, web_group);
    ck_assert_ptr_null(json_object_get(json_object_get(w, "status"), "admission"));
    ck_assert(cond_is(w, "Admitted", "False"));
    ck_assert_str_eq(json_string_value(json_object_get(cond(w, "QuotaReserved"), "message")),
                     "StatefulSet scaled to zero; workload on hold");
    /* Its quota is free: a group of 3 of the 4 cpus is admitted beside it. */
    pod(&fx, "h-0", 1, "h", 3, NULL);
    pod(&fx, "h-1", 1, "h", 3, NULL);
    pod(&fx, "h-2", 1, "h", 3, NULL);
    fx_run_until(&fx, h3_running, 10, "pod group h admitted in the quota given back");
    run_for(&fx, 500);
    ck_assert(web_on_hold(&fx)); /* not queued: still on hold, not pending */
    ck_assert_uint_eq(fakeapi_object_count(fx.fa, "workloads"), 2);
    /* Scaled up again: the same Workload leaves the hold and waits for h's quota. */
    sts_scale(&fx, 2, 0);
    sts_pod(&fx, "web-0", uid);
    sts_pod(&fx, "web-1", uid);
    sts_scale(&fx, 2, 2);
    fx_run_until(&fx, web_waits, 10, "the StatefulSet's Workload out of hold, waiting for quota");
    ck_assert(gated(&fx, "web-0") && gated(&fx, "web-1"));
    for (size_t i = 0; i < 3; i++) {
        char n[8];
        snprintf(n, sizeof(n), "h-%zu", i);
        set_phase(&fx, n, "Succeeded");
    }
    fx_run_until(&fx, web_running, 10, "the StatefulSet readmitted once h finished");
    ck_assert_uint_eq(fakeapi_object_count(fx.fa, "workloads"), 2);
    fx_stop(&fx);
}
END_TEST

/* A Pod's mark into its owner's group fails (a 500 from the server): until it is marked the Pod
 * is not in the operator's cache, so only its owner brings it back, and no event of the owner
 * comes again (its status is final). The owner looks again after a backoff and the Pod joins
 * (a CI run of integration_ctrl_serving waited 30 s for web-0). */
START_TEST(statefulset_pod_mark_failed_owner_looks_again)
{
    char obj[2048];
    fx_t fx;
    const char *uid;
    fakeapi_fault_t fail = {.action = FAKEAPI_FAIL, .status = 500};

    uid = sts_web_start(&fx);
    run_for(&fx, 300); /* the owner looked: its Workload made, no Pod listed yet */
    fakeapi_fault_next(fx.fa, "update", "pods", &fail, 2);
    sts_pod(&fx, "web-0", uid);
    sts_pod(&fx, "web-1", uid);
    snprintf(obj, sizeof(obj), STS_WEB, ",\"status\":{\"replicas\":2}");
    fx_put(&fx, obj); /* its last event */
    fx_run_until(&fx, web_running, 10,
                 "both Pods marked after the failed marks, admitted, ungated");
    ck_assert_uint_ge(fakeapi_count(fx.fa, "update", "pods"), 4);
    ck_assert_str_eq(label(get_pod(&fx, "web-0"), "kueue.x-k8s.io/pod-group-name"),
                     label(get_pod(&fx, "web-1"), "kueue.x-k8s.io/pod-group-name"));
    fx_stop(&fx);
}
END_TEST

/* ---- manageJobsWithoutQueueName: an unqueued StatefulSet is managed too -------------------- */

static bool unq_marked(fx_t *fx)
{
    const char *g = label(get_pod(fx, "web-0"), "kueue.x-k8s.io/pod-group-name");
    return g != NULL && group_workload(fx, g) != NULL;
}

/* Kueue's StatefulSet reconcilers under manageJobsWithoutQueueName: the StatefulSet without a
 * queue name gets its Workload (without spec.queueName: it waits in no queue) and its Pods are
 * marked into its group, without a queue-name label. */
START_TEST(statefulset_without_queue_name_managed)
{
    char obj[2048];
    fx_t fx;
    json_t *o, *w;
    const char *uid, *g;

    fx_start_with(&fx, 4,
                  "{\"frameworks\":[\"batch/job\",\"pod\",\"statefulset\"]},"
                  "\"manageJobsWithoutQueueName\":true",
                  false);
    snprintf(obj, sizeof(obj), STS_WEB, ",\"status\":{\"replicas\":1}");
    o = json_loads(obj, 0, NULL);
    ck_assert_ptr_nonnull(o);
    json_object_del(json_object_get(json_object_get(o, "metadata"), "labels"),
                    "kueue.x-k8s.io/queue-name");
    json_object_set_new(json_object_get(o, "spec"), "replicas", json_integer(1));
    ck_assert_int_eq(fakeapi_put_object(fx.fa, o, NULL, NULL), ERR_OK);
    json_decref(o);
    uid = json_string_value(json_object_get(
        json_object_get(fakeapi_get_object(fx.fa, "statefulsets", "ns", "web"), "metadata"),
        "uid"));
    sts_pod(&fx, "web-0", uid);
    fx_run_until(&fx, unq_marked, 10, "the unqueued StatefulSet's Pod marked into its group");
    g = label(get_pod(&fx, "web-0"), "kueue.x-k8s.io/pod-group-name");
    ck_assert_msg(strncmp(g, "statefulset-web-", 16) == 0, "group %s", g);
    ck_assert_ptr_null(label(get_pod(&fx, "web-0"), "kueue.x-k8s.io/queue-name"));
    ck_assert_str_eq(label(get_pod(&fx, "web-0"), "kueue.x-k8s.io/managed"), "true");
    w = group_workload(&fx, g);
    ck_assert_ptr_null(json_object_get(json_object_get(w, "spec"), "queueName"));
    ck_assert(!wl_reserved(w));
    fx_stop(&fx);
}
END_TEST

/* ---- LeaderWorkerSet: a Workload per replica, added and removed with the replicas ------------ */

/* The LeaderWorkerSet "lws" of `replicas` replicas of 2 Pods (a leader and a worker, 1 cpu each)
 * in LocalQueue `queue` as its webhook leaves it (both templates marked), with `status` (may be
 * ""). */
static void lws_put(fx_t *fx, int replicas, const char *status, const char *queue)
{
    static const char tmpl[] =
        "{\"metadata\":{\"labels\":{\"kueue.x-k8s.io/queue-name\":\"lq\"},\"annotations\":{"
        "\"kueue.x-k8s.io/pod-suspending-parent\":\"leaderworkerset.x-k8s.io/leaderworkerset\","
        "\"kueue.x-k8s.io/pod-group-serving\":\"true\"}},\"spec\":{\"containers\":[{\"name\":"
        "\"c\",\"image\":\"i\",\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]}}";
    char obj[4096];

    snprintf(obj, sizeof(obj),
             "{\"apiVersion\":\"leaderworkerset.x-k8s.io/v1\",\"kind\":\"LeaderWorkerSet\","
             "\"metadata\":{\"name\":\"lws\",\"namespace\":\"ns\",\"labels\":{"
             "\"kueue.x-k8s.io/queue-name\":\"%s\"}},\"spec\":{\"replicas\":%d,"
             "\"leaderWorkerTemplate\":{\"size\":2,\"leaderTemplate\":%s,\"workerTemplate\":%s}}"
             "%s}",
             queue, replicas, tmpl, tmpl, status);
    fx_put(fx, obj);
}

/* LeaderWorkerSet's part for replica `i`: its leader Pod "lws-<i>" (of the leader StatefulSet)
 * and its worker "lws-<i>-1" (of StatefulSet lws-<i>), created from the marked templates (the
 * pod webhook gated them; no managed label: their parent suspends them), with LeaderWorkerSet's
 * labels; the worker names its leader. */
static void lws_pods(fx_t *fx, int i)
{
    char p[2048];

    for (int worker = 0; worker < 2; worker++) {
        char name[64], sts[64], leader[160] = "";
        snprintf(name, sizeof(name), worker ? "lws-%d-1" : "lws-%d", i);
        snprintf(sts, sizeof(sts), worker ? "lws-%d" : "lws", i);
        if (worker)
            snprintf(leader, sizeof(leader),
                     ",\"leaderworkerset.sigs.k8s.io/leader-name\":\"lws-%d\"", i);
        snprintf(p, sizeof(p),
                 "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\","
                 "\"namespace\":\"ns\",\"labels\":{\"kueue.x-k8s.io/queue-name\":\"lq\","
                 "\"leaderworkerset.sigs.k8s.io/name\":\"lws\","
                 "\"leaderworkerset.sigs.k8s.io/group-index\":\"%d\","
                 "\"leaderworkerset.sigs.k8s.io/worker-index\":\"%d\"},\"annotations\":{"
                 "\"kueue.x-k8s.io/pod-suspending-parent\":"
                 "\"leaderworkerset.x-k8s.io/leaderworkerset\","
                 "\"kueue.x-k8s.io/pod-group-serving\":\"true\"%s},\"ownerReferences\":[{"
                 "\"apiVersion\":\"apps/v1\",\"kind\":\"StatefulSet\",\"name\":\"%s\",\"uid\":"
                 "\"sts-%s\",\"controller\":true}]},\"spec\":{\"schedulingGates\":[{\"name\":"
                 "\"kueue.x-k8s.io/admission\"}],\"containers\":[{\"name\":\"c\",\"image\":\"i\","
                 "\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]},\"status\":{\"phase\":"
                 "\"Pending\"}}",
                 name, i, worker, leader, sts, sts);
        fx_put(fx, p);
    }
}

/* Kueue's Workload name for replica `i` of "lws" (LeaderWorkerSet's uid in the server). */
static const char *lws_wl_name(fx_t *fx, int i, char *buf, size_t n)
{
    json_t *lws = fakeapi_get_object(fx->fa, "leaderworkersets", "ns", "lws");
    const char *uid = json_string_value(json_object_get(json_object_get(lws, "metadata"), "uid"));
    char owner[32];

    snprintf(owner, sizeof(owner), "lws-%d", i);
    ck_assert_int_eq(jobs_workload_name(&jobs_kind_leaderworkerset, owner, uid,
                                        JOB_WORKLOAD_NAME_MAX, buf, n, NULL),
                     ERR_OK);
    return buf;
}

static json_t *lws_workload(fx_t *fx, int i)
{
    char name[JOB_WORKLOAD_NAME_MAX + 1];
    return group_workload(fx, lws_wl_name(fx, i, name, sizeof(name)));
}

/* Replica i's Workload has pod sets leader x 1 and worker x 1 (Kueue's LeaderWorkerSet shape)
 * and is its group's. */
static void lws_assert_shape(fx_t *fx, int i)
{
    json_t *w = lws_workload(fx, i);
    json_t *ps = json_object_get(json_object_get(w, "spec"), "podSets");
    char name[JOB_WORKLOAD_NAME_MAX + 1], worker[32];

    ck_assert_ptr_nonnull(w);
    ck_assert_msg(strncmp(lws_wl_name(fx, i, name, sizeof(name)), "leaderworkerset-lws-", 20) == 0,
                  "name %s", name);
    ck_assert_uint_eq(json_array_size(ps), 2);
    ck_assert_str_eq(json_string_value(json_object_get(json_array_get(ps, 0), "name")), "leader");
    ck_assert_str_eq(json_string_value(json_object_get(json_array_get(ps, 1), "name")), "worker");
    ck_assert_int_eq(json_integer_value(json_object_get(json_array_get(ps, 0), "count")), 1);
    ck_assert_int_eq(json_integer_value(json_object_get(json_array_get(ps, 1), "count")), 1);
    snprintf(worker, sizeof(worker), "lws-%d-1", i);
    ck_assert_str_eq(label(get_pod(fx, worker), "kueue.x-k8s.io/pod-group-name"), name);
}

static bool lws_two_admitted(fx_t *fx)
{
    return wl_reserved(lws_workload(fx, 0)) && wl_reserved(lws_workload(fx, 1));
}

static bool lws_pods_running(fx_t *fx)
{
    return !gated(fx, "lws-0") && !gated(fx, "lws-0-1") && !gated(fx, "lws-1") &&
           !gated(fx, "lws-1-1");
}

static bool lws2_waits(fx_t *fx)
{
    return waits_for_quota(lws_workload(fx, 2));
}

static bool lws2_in_lq2(fx_t *fx)
{
    json_t *w = lws_workload(fx, 2);
    const char *q = json_string_value(json_object_get(json_object_get(w, "spec"), "queueName"));
    return q != NULL && strcmp(q, "lq2") == 0;
}

static bool lws2_gone(fx_t *fx)
{
    return lws_workload(fx, 2) == NULL && fakeapi_object_count(fx->fa, "workloads") == 2;
}

/* As Kueue's LeaderWorkerSet reconciler: a LeaderWorkerSet of 2 replicas x 2 Pods (1 cpu each)
 * in 4 cpus gets one Workload per replica at once, before any Pod (leaderworkerset-lws-<i>-<hash>,
 * leader x 1 + worker x 1, owned by the LeaderWorkerSet), both admitted; LeaderWorkerSet's Pods
 * are then marked into their replica's group and ungated with the flavor. Scaled up to 3, the new
 * replica's Workload waits (insufficient quota), its Pods gated; a queue-name change moves it (a
 * held Workload) but not the admitted ones; scaled down to 2, its Workload is deleted. */
START_TEST(leaderworkerset_workload_per_replica)
{
    fx_kind_t kinds[] = {{"", "v1", "pods", "Pod"},
                         {"leaderworkerset.x-k8s.io", "v1", "leaderworkersets", "LeaderWorkerSet"}};
    fakeapi_fault_t failing = {.action = FAKEAPI_FAIL, .status = 500};
    fx_t fx;
    json_t *w, *ref;

    fx_serve(&fx, kinds, 2);
    fx_queues(&fx, 4);
    fx_put(&fx, "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"LocalQueue\",\"metadata\":"
                "{\"name\":\"lq2\",\"namespace\":\"ns\"},\"spec\":{\"clusterQueue\":\"cq\"}}");
    fx_operate(&fx, "integrations",
               "{\"frameworks\":[\"batch/job\",\"pod\","
               "\"leaderworkerset.x-k8s.io/leaderworkerset\"]}");
    /* The first six creates fail (500): each replica's create is retried after its backoff
     * (200 ms, doubling), not at once in a loop. */
    fakeapi_fault_next(fx.fa, "create", "workloads", &failing, 6);
    lws_put(&fx, 2, "", "lq");
    run_for(&fx, 150);
    ck_assert_uint_le(fakeapi_count(fx.fa, "create", "workloads"), 2);
    fx_run_until(&fx, lws_two_admitted, 10, "a Workload per replica, both admitted, no Pod yet");
    ck_assert_uint_eq(fakeapi_object_count(fx.fa, "pods"), 0);
    ck_assert_uint_eq(fakeapi_count(fx.fa, "create", "workloads"), 8);
    w = lws_workload(&fx, 1);
    ref = json_array_get(json_object_get(json_object_get(w, "metadata"), "ownerReferences"), 0);
    ck_assert_str_eq(json_string_value(json_object_get(ref, "kind")), "LeaderWorkerSet");
    ck_assert(json_is_true(json_object_get(ref, "controller")));
    ck_assert_str_eq(json_string_value(json_object_get(
                         json_object_get(json_object_get(w, "metadata"), "annotations"),
                         "kueue.x-k8s.io/component-workload-index")),
                     "1");
    lws_pods(&fx, 0);
    lws_pods(&fx, 1);
    lws_put(&fx, 2, ",\"status\":{\"replicas\":2}", "lq"); /* an event of the owner */
    fx_run_until(&fx, lws_pods_running, 10, "the replicas' Pods marked and ungated");
    lws_assert_shape(&fx, 0);
    lws_assert_shape(&fx, 1);
    ck_assert_str_eq(node_selector(&fx, "lws-1", "pool"), "p1");
    ck_assert_str_eq(node_selector(&fx, "lws-1-1", "pool"), "p1");

    /* Scale up to 3: the third replica waits, its Pods gated. */
    lws_put(&fx, 3, ",\"status\":{\"replicas\":2}", "lq");
    fx_run_until(&fx, lws2_waits, 10, "replica 2 waiting: insufficient quota");
    lws_pods(&fx, 2);
    lws_put(&fx, 3, ",\"status\":{\"replicas\":3}", "lq");
    run_for(&fx, 300);
    ck_assert(gated(&fx, "lws-2") && gated(&fx, "lws-2-1"));
    lws_assert_shape(&fx, 2);

    /* A queue-name change: the held Workload follows, the admitted ones keep theirs. */
    lws_put(&fx, 3, ",\"status\":{\"replicas\":3}", "lq2");
    fx_run_until(&fx, lws2_in_lq2, 10, "replica 2's Workload moved to lq2");
    ck_assert_str_eq(json_string_value(json_object_get(
                         json_object_get(lws_workload(&fx, 0), "spec"), "queueName")),
                     "lq");

    /* A rolling update with maxSurge 1 at 2 replicas: LeaderWorkerSet runs replica 2 as a surge
     * replica (status.replicas 3, 1 updated), which keeps its Workload (Kueue's
     * isRollingUpdateWithSurge). */
    {
        json_t *o = json_deep_copy(fakeapi_get_object(fx.fa, "leaderworkersets", "ns", "lws"));
        json_object_set_new(json_object_get(o, "spec"), "replicas", json_integer(2));
        json_object_set_new(json_object_get(o, "spec"), "rolloutStrategy",
                            json_pack("{s:{s:i}}", "rollingUpdateConfiguration", "maxSurge", 1));
        json_object_set_new(o, "status",
                            json_pack("{s:i,s:i}", "replicas", 3, "updatedReplicas", 1));
        ck_assert_int_eq(fakeapi_put_object(fx.fa, o, NULL, NULL), ERR_OK);
        json_decref(o);
    }
    run_for(&fx, 1000);
    ck_assert_ptr_nonnull(lws_workload(&fx, 2));

    /* Scale down to 2: replica 2's Workload is deleted (LeaderWorkerSet deletes its Pods). */
    lws_put(&fx, 2, ",\"status\":{\"replicas\":3}", "lq2");
    ck_assert_int_eq(fakeapi_delete_object(fx.fa, "pods", "ns", "lws-2", NULL), ERR_OK);
    ck_assert_int_eq(fakeapi_delete_object(fx.fa, "pods", "ns", "lws-2-1", NULL), ERR_OK);
    fx_run_until(&fx, lws2_gone, 10, "replica 2's Workload removed");
    ck_assert(wl_reserved(lws_workload(&fx, 0)) && wl_reserved(lws_workload(&fx, 1)));
    fx_stop(&fx);
}
END_TEST

static size_t pod_lists_before;

static bool pods_listing(fx_t *fx)
{
    return fakeapi_count(fx->fa, "list", "pods") > pod_lists_before;
}

/* A scale-down that comes while the operator is still looking at the LeaderWorkerSet (its GET
 * answered with 3 replicas, the LIST of its Pods slow) is not lost: the look, once done, sees
 * the owner changed since it was read and looks again (the event itself was skipped while the
 * look held the owner busy; a CI run of integration_ctrl_lws waited 30 s for the deletion). */
START_TEST(leaderworkerset_scale_down_during_a_look)
{
    fx_kind_t kinds[] = {{"", "v1", "pods", "Pod"},
                         {"leaderworkerset.x-k8s.io", "v1", "leaderworkersets", "LeaderWorkerSet"}};
    fakeapi_fault_t slow = {.action = FAKEAPI_SERVE, .delay_ms = 400};
    fx_t fx;

    fx_serve(&fx, kinds, 2);
    fx_queues(&fx, 4);
    fx_operate(&fx, "integrations",
               "{\"frameworks\":[\"batch/job\",\"pod\","
               "\"leaderworkerset.x-k8s.io/leaderworkerset\"]}");
    lws_put(&fx, 3, "", "lq");
    fx_run_until(&fx, lws2_waits, 10, "replica 2 waiting: insufficient quota");
    run_for(&fx, 300); /* settled: no look under way */
    fakeapi_fault_next(fx.fa, "list", "pods", &slow, 1);
    pod_lists_before = fakeapi_count(fx.fa, "list", "pods");
    lws_put(&fx, 3, ",\"status\":{\"replicas\":3}", "lq"); /* an event: a look starts */
    fx_run_until(&fx, pods_listing, 10, "the look's GET answered, its LIST of Pods sent");
    lws_put(&fx, 2, ",\"status\":{\"replicas\":3}", "lq"); /* scaled down during the look */
    fx_run_until(&fx, lws2_gone, 10, "replica 2's Workload removed after the look");
    fx_stop(&fx);
}
END_TEST

/* The first status write on replica 2's Workload (its pending explanation) is held 1.5 s; its
 * name is kept for the test. */
typedef struct {
    char name[JOB_WORKLOAD_NAME_MAX + 1];
    bool seen;
} slow_status_t;

static void slow_replica2_status(fakeapi_t *fa, const fakeapi_req_t *r, fakeapi_fault_t *f,
                                 void *data)
{
    slow_status_t *st = data;

    (void)fa;
    if (st->seen || strcmp(r->verb, "patch") != 0 || strcmp(r->subresource, "status") != 0 ||
        strncmp(r->name, "leaderworkerset-lws-2-", 22) != 0)
        return;
    snprintf(st->name, sizeof(st->name), "%s", r->name);
    st->seen = true;
    f->delay_ms = 1500;
}

static slow_status_t slow_status;

static bool replica2_status_sent(fx_t *fx)
{
    (void)fx;
    return slow_status.seen;
}

/* A scale-down that comes while a write holds the surplus replica's Workload busy (here the
 * pending explanation of its waiting Workload, slow) is not lost: the look passes over the busy
 * Workload, and when the write ends the owner is looked at again. The Workload's watch events
 * are held back meanwhile: its event may come before the write's answer (and so be passed over
 * too), and no event of the owner comes again (a CI run of integration_ctrl_lws waited 30 s for
 * the deletion). */
START_TEST(leaderworkerset_scale_down_during_a_write)
{
    fx_kind_t kinds[] = {{"", "v1", "pods", "Pod"},
                         {"leaderworkerset.x-k8s.io", "v1", "leaderworkersets", "LeaderWorkerSet"}};
    fx_t fx;

    memset(&slow_status, 0, sizeof(slow_status));
    fx_serve(&fx, kinds, 2);
    fx_queues(&fx, 4);
    fx_operate(&fx, "integrations",
               "{\"frameworks\":[\"batch/job\",\"pod\","
               "\"leaderworkerset.x-k8s.io/leaderworkerset\"]}");
    fakeapi_set_fault(fx.fa, slow_replica2_status, &slow_status);
    lws_put(&fx, 3, "", "lq");
    fx_run_until(&fx, replica2_status_sent, 10, "replica 2's pending explanation sent");
    fakeapi_hold_object(fx.fa, "workloads", "ns", slow_status.name);
    lws_put(&fx, 2, "", "lq"); /* scaled down while that write is under way */
    fx_run_until(&fx, lws2_gone, 10, "replica 2's Workload removed after the write");
    fakeapi_release_object(fx.fa);
    fx_stop(&fx);
}
END_TEST

/* ---- a held unit's queue-name change ------------------------------------------------------- */

static bool q_waits(fx_t *fx)
{
    return waits_for_quota(group_workload(fx, "q"));
}

static bool q_in_lq2(fx_t *fx)
{
    json_t *w = group_workload(fx, "q");
    const char *qn = json_string_value(json_object_get(json_object_get(w, "spec"), "queueName"));
    return qn != NULL && strcmp(qn, "lq2") == 0;
}

/* Pod `name`'s queue-name label set to `queue` (a StatefulSet's reconcile writes its new queue
 * name into its Pods so). */
static void set_queue(fx_t *fx, const char *name, const char *queue)
{
    json_t *p = json_deep_copy(get_pod(fx, name));

    json_object_set_new(json_object_get(json_object_get(p, "metadata"), "labels"),
                        "kueue.x-k8s.io/queue-name", json_string(queue));
    ck_assert_int_eq(fakeapi_put_object(fx->fa, p, NULL, NULL), ERR_OK);
    json_decref(p);
}

/* A held group whose Pods move to another LocalQueue: its Workload's spec.queueName follows (as
 * a held Job's does); an admitted one would keep its queue. */
START_TEST(held_group_follows_its_queue_name)
{
    fx_t fx;

    fx_start(&fx, 1);
    fx_put(&fx, "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"LocalQueue\",\"metadata\":"
                "{\"name\":\"lq2\",\"namespace\":\"ns\"},\"spec\":{\"clusterQueue\":\"cq\"}}");
    pod(&fx, "q-0", 1, "q", 2, NULL);
    pod(&fx, "q-1", 1, "q", 2, NULL);
    fx_run_until(&fx, q_waits, 10, "pod group q (2 cpus in 1) waiting");
    set_queue(&fx, "q-0", "lq2");
    set_queue(&fx, "q-1", "lq2");
    fx_run_until(&fx, q_in_lq2, 10, "q's Workload moved to lq2");
    ck_assert(gated(&fx, "q-0") && gated(&fx, "q-1"));
    /* Its Pods deleted: the group's Workload, owned by them, is deleted as the garbage
     * collector would. */
    ck_assert_int_eq(fakeapi_delete_object(fx.fa, "pods", "ns", "q-0", NULL), ERR_OK);
    ck_assert_int_eq(fakeapi_delete_object(fx.fa, "pods", "ns", "q-1", NULL), ERR_OK);
    fx_run_until(&fx, no_workloads, 10, "the group's Workload removed with its Pods");
    fx_stop(&fx);
}
END_TEST

/* A running group (its Pods scheduled: nodeName) is evicted: every Pod is marked TerminationTarget
 * and deleted, and the quota is held until they have stopped running (Kueue's IsActive), then
 * released. */
static void run_on_node(fx_t *fx, const char *name)
{
    json_t *p = json_deep_copy(get_pod(fx, name));

    json_object_set_new(json_object_get(p, "spec"), "nodeName", json_string("n1"));
    json_object_set_new(json_object_get(p, "status"), "phase", json_string("Running"));
    ck_assert_int_eq(fakeapi_put_object(fx->fa, p, NULL, NULL), ERR_OK);
    json_decref(p);
}

static bool deleting_pod(fx_t *fx, const char *name)
{
    json_t *p = get_pod(fx, name);
    return json_object_get(json_object_get(p, "metadata"), "deletionTimestamp") != NULL &&
           has_condition_true(p, "TerminationTarget");
}

static bool g_pods_stopping(fx_t *fx)
{
    return deleting_pod(fx, "g-0") && deleting_pod(fx, "g-1");
}

static bool g_released(fx_t *fx)
{
    json_t *w = group_workload(fx, "g");
    return !wl_reserved(w) && cond_is(w, "Evicted", "True");
}

static bool g_admitted(fx_t *fx)
{
    return wl_reserved(group_workload(fx, "g")) && !gated(fx, "g-0") && !gated(fx, "g-1");
}

START_TEST(pod_group_evicted_deleted_released_once_stopped)
{
    fx_t fx;

    fx_start(&fx, 2);
    pod(&fx, "g-0", 1, "g", 2, "test/keep");
    pod(&fx, "g-1", 1, "g", 2, "test/keep");
    fx_run_until(&fx, g_admitted, 10, "pod group g admitted");
    run_on_node(&fx, "g-0");
    run_on_node(&fx, "g-1");
    fx_put(&fx,
           "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"ClusterQueue\",\"metadata\":"
           "{\"name\":\"cq\"},\"spec\":{\"namespaceSelector\":{},\"stopPolicy\":\"HoldAndDrain\","
           "\"resourceGroups\":[{\"coveredResources\":[\"cpu\"],\"flavors\":[{\"name\":"
           "\"default\",\"resources\":[{\"name\":\"cpu\",\"nominalQuota\":\"2\"}]}]}]}}");
    fx_run_until(&fx, g_pods_stopping, 10, "both Pods marked TerminationTarget and deleted");
    /* Still running (the kubelet has not stopped them): the quota stays held. */
    run_for(&fx, 300);
    ck_assert(wl_reserved(group_workload(&fx, "g")));
    set_phase(&fx, "g-0", "Failed");
    set_phase(&fx, "g-1", "Failed");
    fx_run_until(&fx, g_released, 10, "the group's quota released once its Pods stopped");
    fx_stop(&fx);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("ctrl_pods");
    TCase *tc = tcase_create("fakeapi");
    SRunner *sr;
    int failed;

    curl_global_init(CURL_GLOBAL_DEFAULT);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, pod_gated_admitted_ungated_finished_evicted_deleted);
    tcase_add_test(tc, pod_group_one_workload_admitted_together);
    tcase_add_test(tc, pods_left_alone_unless_enabled);
    tcase_add_test(tc, child_job_suspended_while_parent_not_admitted);
    tcase_add_test(tc, job_stop_marks_stopping_until_restored);
    tcase_add_test(tc, statefulset_pods_form_one_group);
    tcase_add_test(tc, statefulset_pod_mark_failed_owner_looks_again);
    tcase_add_test(tc, pod_group_reclaimable_pods_release_quota);
    tcase_add_test(tc, statefulset_without_queue_name_managed);
    tcase_add_test(tc, pod_group_evicted_deleted_released_once_stopped);
    tcase_add_test(tc, leaderworkerset_workload_per_replica);
    tcase_add_test(tc, leaderworkerset_scale_down_during_a_look);
    tcase_add_test(tc, leaderworkerset_scale_down_during_a_write);
    tcase_add_test(tc, held_group_follows_its_queue_name);
    tcase_add_test(tc, external_framework_children);
    tcase_add_test(tc, external_framework_discovery);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    curl_global_cleanup();
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
