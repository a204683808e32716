/* test_ctrl_reconcile -- the operator's reconcilers against the in-memory API server: a Job gets
 * a Workload, an admission starts it, an eviction stops, restores and releases it; a refused
 * admission write reverts the engine; one without an answer keeps the quota held until a GET
 * says what the API has. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "ctrl/ctrl.h"
#include "ctrl/ctrl_int.h" /* ctrl__wl(): the record a finished Workload keeps */

#include "ctrl_fixture.h"
#include "fakeapi.h"
#include "jobs/framework.h"
#include "jobs/job_workload.h"
#include "kube/client.h"

#include <check.h>
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Start with `integrations` (a JSON object, NULL: Kueue's default) as the configuration's
 * integrations; `jobsets`: the server serves jobset.x-k8s.io/v1alpha2 jobsets (else its CRD is
 * absent); `rayjobs`: likewise ray.io/v1 rayjobs. */
static void fx_start_kinds(fx_t *fx, int cpu, const char *integrations, bool jobsets, bool rayjobs)
{
    fx_kind_t kinds[2] = {{0}};
    size_t n = 0;

    if (jobsets)
        kinds[n++] = (fx_kind_t){"jobset.x-k8s.io", "v1alpha2", "jobsets", "JobSet"};
    if (rayjobs)
        kinds[n++] = (fx_kind_t){"ray.io", "v1", "rayjobs", "RayJob"};
    fx_serve(fx, kinds, n);
    fx_queues(fx, cpu);
    fx_operate(fx, "integrations", integrations);
}

static void fx_start_with(fx_t *fx, int cpu, const char *integrations, bool jobsets)
{
    fx_start_kinds(fx, cpu, integrations, jobsets, false);
}

static void fx_start(fx_t *fx, int cpu)
{
    fx_start_with(fx, cpu, NULL, false);
}

/* A suspended Job `name` in ns/lq asking for `cpu` cpus. */
static void job(fx_t *fx, const char *name, int cpu)
{
    char j[1024];

    snprintf(j, sizeof(j),
             "{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"metadata\":{\"name\":\"%s\","
             "\"namespace\":\"ns\",\"labels\":{\"kueue.x-k8s.io/queue-name\":\"lq\"}},\"spec\":"
             "{\"suspend\":true,\"parallelism\":1,\"completions\":1,\"template\":{\"spec\":{"
             "\"restartPolicy\":\"Never\",\"containers\":[{\"name\":\"c\",\"image\":\"i\","
             "\"resources\":{\"requests\":{\"cpu\":\"%d\"}}}]}}}}",
             name, cpu);
    fx_put(fx, j);
}

/* The Workload of Job `job_name` from the fake server (borrowed), found by Kueue's name. */
static json_t *workload_for(fx_t *fx, const char *job_name)
{
    json_t *j = fakeapi_get_object(fx->fa, "jobs", "ns", job_name);
    const char *uid = json_string_value(json_object_get(json_object_get(j, "metadata"), "uid"));
    char name[JOB_WORKLOAD_NAME_MAX + 1];

    if (uid == NULL ||
        job_workload_name(job_name, uid, JOB_WORKLOAD_NAME_MAX, name, sizeof(name), NULL) != ERR_OK)
        return NULL;
    return fakeapi_get_object(fx->fa, "workloads", "ns", name);
}

static bool admitted(fx_t *fx, const char *job_name)
{
    json_t *w = workload_for(fx, job_name);
    return w != NULL && json_object_get(json_object_get(w, "status"), "admission") != NULL;
}

static bool suspended(fx_t *fx, const char *job_name)
{
    json_t *j = fakeapi_get_object(fx->fa, "jobs", "ns", job_name);
    return json_is_true(json_object_get(json_object_get(j, "spec"), "suspend"));
}

/* Conditions for fx_run_until() about the Jobs "a" and "b". */
static bool a_has_workload(fx_t *fx)
{
    return workload_for(fx, "a") != NULL;
}

static bool a_running(fx_t *fx)
{
    return admitted(fx, "a") && !suspended(fx, "a");
}

static bool a_admitted(fx_t *fx)
{
    return admitted(fx, "a");
}

static bool a_stopped_restored_released(fx_t *fx)
{
    json_t *j = fakeapi_get_object(fx->fa, "jobs", "ns", "a");
    json_t *tspec =
        json_object_get(json_object_get(json_object_get(j, "spec"), "template"), "spec");
    json_t *w = workload_for(fx, "a");

    return suspended(fx, "a") && json_object_get(tspec, "nodeSelector") == NULL && w != NULL &&
           json_object_get(json_object_get(w, "status"), "admission") == NULL;
}

static bool a_finalizer_gone(fx_t *fx)
{
    json_t *w = workload_for(fx, "a");
    return w != NULL &&
           json_array_size(json_object_get(json_object_get(w, "metadata"), "finalizers")) == 0;
}

static bool verified(fx_t *fx)
{
    return fakeapi_count(fx->fa, "get", "workloads") > 0 && ctrl_inflight(fx->ctrl) == 0;
}

/* Let the loop run for `ms` milliseconds. */
static void run_for(fx_t *fx, uint64_t ms)
{
    uint64_t end = uv_now(&fx->loop) + ms;

    while (uv_now(&fx->loop) < end)
        uv_run(&fx->loop, UV_RUN_ONCE);
}

/* The Workload's condition `type` status ("True", "False") or NULL. */
static const char *wl_cond(fx_t *fx, const char *job_name, const char *type)
{
    json_t *c;
    size_t i;

    json_array_foreach(
        json_object_get(json_object_get(workload_for(fx, job_name), "status"), "conditions"), i, c)
    {
        if (strcmp(json_string_value(json_object_get(c, "type")), type) == 0)
            return json_string_value(json_object_get(c, "status"));
    }
    return NULL;
}

START_TEST(job_admitted_started_evicted_restored_finished)
{
    fx_t fx;
    json_t *j;

    fx_start(&fx, 2);
    job(&fx, "a", 1);
    fx_run_until(&fx, a_has_workload, 10, "a Workload for Job a");
    fx_run_until(&fx, a_running, 10, "Job a admitted and started");
    /* Started with the flavor's node selector and Kueue's labels in its template. */
    j = fakeapi_get_object(fx.fa, "jobs", "ns", "a");
    {
        json_t *tmpl = json_object_get(json_object_get(j, "spec"), "template");
        ck_assert_str_eq(
            json_string_value(json_object_get(
                json_object_get(json_object_get(tmpl, "spec"), "nodeSelector"), "pool")),
            "p1");
        ck_assert_str_eq(json_string_value(json_object_get(
                             json_object_get(json_object_get(tmpl, "metadata"), "labels"),
                             "kueue.x-k8s.io/cluster-queue-name")),
                         "cq");
    }
    ck_assert_str_eq(wl_cond(&fx, "a", "QuotaReserved"), "True");
    ck_assert_str_eq(wl_cond(&fx, "a", "Admitted"), "True");
    ck_assert_uint_eq(fx.ctrl->ready_watched, 0); /* waitForPodsReady off: nothing to watch */
    /* HoldAndDrain evicts: the Job is suspended, its template restored from the Workload's pod
     * set (a GET of the Workload), and only then is the quota released. */
    fx_put(&fx,
           "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"ClusterQueue\",\"metadata\":"
           "{\"name\":\"cq\"},\"spec\":{\"namespaceSelector\":{},\"stopPolicy\":\"HoldAndDrain\","
           "\"resourceGroups\":[{\"coveredResources\":[\"cpu\"],\"flavors\":[{\"name\":"
           "\"default\",\"resources\":[{\"name\":\"cpu\",\"nominalQuota\":\"2\"}]}]}]}}");
    fx_run_until(&fx, a_stopped_restored_released, 10, "Job a stopped, restored and released");
    ck_assert_str_eq(wl_cond(&fx, "a", "Evicted"), "True");
    ck_assert_str_eq(wl_cond(&fx, "a", "QuotaReserved"), "False");
    ck_assert_uint_ge(fakeapi_count(fx.fa, "get", "workloads"), 1);
    /* Back to work: the Job runs again, completes, its Workload finishes and lets go. */
    fx_put(&fx, "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"ClusterQueue\",\"metadata\":"
                "{\"name\":\"cq\"},\"spec\":{\"namespaceSelector\":{},\"resourceGroups\":[{"
                "\"coveredResources\":[\"cpu\"],\"flavors\":[{\"name\":\"default\",\"resources\":[{"
                "\"name\":\"cpu\",\"nominalQuota\":\"2\"}]}]}]}}");
    fx_run_until(&fx, a_running, 10, "Job a readmitted");
    j = json_deep_copy(fakeapi_get_object(fx.fa, "jobs", "ns", "a"));
    json_object_set_new(j, "status",
                        json_pack("{s:i,s:[{s:s,s:s,s:s}]}", "succeeded", 1, "conditions", "type",
                                  "Complete", "status", "True", "message", "done"));
    ck_assert_int_eq(fakeapi_put_object(fx.fa, j, NULL, NULL), ERR_OK);
    json_decref(j);
    fx_run_until(&fx, a_finalizer_gone, 10, "Workload a finished and its finalizer removed");
    ck_assert_str_eq(wl_cond(&fx, "a", "Finished"), "True");
    ck_assert_uint_eq(ctrl_stats(fx.ctrl).created, 1);
    ck_assert_uint_eq(ctrl_stats(fx.ctrl).started, 2);
    fx_stop(&fx);
}
END_TEST

/* ---- JobSet: another kind of the framework table, the same reconciler --------------------- */

/* A JobSet `name` in ns/lq: replicated Jobs "leader" and "workers", each 2 pods x 1 cpu. */
static void jobset(fx_t *fx, const char *name)
{
    char js[2048];

    snprintf(js, sizeof(js),
             "{\"apiVersion\":\"jobset.x-k8s.io/v1alpha2\",\"kind\":\"JobSet\",\"metadata\":{"
             "\"name\":\"%s\",\"namespace\":\"ns\",\"labels\":{\"kueue.x-k8s.io/queue-name\":"
             "\"lq\",\"team\":\"a\",\"app\":\"x\"}},\"spec\":{\"suspend\":true,\"replicatedJobs\":["
             "{\"name\":\"leader\",\"replicas\":1,\"template\":{\"spec\":{\"parallelism\":2,"
             "\"completions\":2,\"template\":{\"spec\":{\"restartPolicy\":\"Never\","
             "\"containers\":[{\"name\":\"c\",\"image\":\"i\",\"resources\":{\"requests\":{"
             "\"cpu\":\"1\"}}}]}}}}},"
             "{\"name\":\"workers\",\"replicas\":1,\"template\":{\"spec\":{\"parallelism\":2,"
             "\"completions\":2,\"template\":{\"spec\":{\"restartPolicy\":\"Never\","
             "\"containers\":[{\"name\":\"c\",\"image\":\"i\",\"resources\":{\"requests\":{"
             "\"cpu\":\"1\"}}}]}}}}}]}}",
             name);
    fx_put(fx, js);
}

/* The Workload of JobSet `name` (borrowed), found by Kueue's name. */
static json_t *js_workload(fx_t *fx, const char *name)
{
    json_t *js = fakeapi_get_object(fx->fa, "jobsets", "ns", name);
    const char *uid = json_string_value(json_object_get(json_object_get(js, "metadata"), "uid"));
    char wname[JOB_WORKLOAD_NAME_MAX + 1];

    if (uid == NULL ||
        jobs_workload_name(jobs_kind_named("jobset.x-k8s.io/jobset"), name, uid,
                           JOB_WORKLOAD_NAME_MAX, wname, sizeof(wname), NULL) != ERR_OK)
        return NULL;
    return fakeapi_get_object(fx->fa, "workloads", "ns", wname);
}

static bool js_admitted(fx_t *fx, const char *name)
{
    json_t *w = js_workload(fx, name);
    return w != NULL && json_object_get(json_object_get(w, "status"), "admission") != NULL;
}

static bool js_suspended(fx_t *fx, const char *name)
{
    json_t *js = fakeapi_get_object(fx->fa, "jobsets", "ns", name);
    return json_is_true(json_object_get(json_object_get(js, "spec"), "suspend"));
}

static bool first_running(fx_t *fx)
{
    return js_admitted(fx, "first") && !js_suspended(fx, "first");
}

static bool second_waits(fx_t *fx)
{
    json_t *w = js_workload(fx, "second"), *c;
    size_t i;

    json_array_foreach(json_object_get(json_object_get(w, "status"), "conditions"), i, c)
    {
        const char *m = json_string_value(json_object_get(c, "message"));
        if (strcmp(json_string_value(json_object_get(c, "type")), "QuotaReserved") == 0 &&
            strcmp(json_string_value(json_object_get(c, "status")), "False") == 0 && m != NULL &&
            strstr(m, "insufficient quota") != NULL)
            return true;
    }
    return false;
}

static bool second_running(fx_t *fx)
{
    return js_admitted(fx, "second") && !js_suspended(fx, "second");
}

static bool one_watched(fx_t *fx)
{
    return fx->ctrl->ready_watched == 1;
}

static bool none_watched(fx_t *fx)
{
    return fx->ctrl->ready_watched == 0;
}

/* The readiness tick walks the Workload cache only while some Workload needs its look (admitted
 * without PodsReady under waitForPodsReady, in a requeue backoff): the count follows the cache. */
START_TEST(pods_ready_tick_counts_the_workloads_it_watches)
{
    fx_t fx;
    json_t *j;

    fx_serve(&fx, NULL, 0);
    fx_queues(&fx, 2);
    fx_operate(&fx, "waitForPodsReady", "{\"enable\":true,\"timeout\":\"5m\"}");
    ck_assert_uint_eq(fx.ctrl->ready_watched, 0);
    job(&fx, "a", 1);
    fx_run_until(&fx, a_running, 10, "Job a admitted and started");
    fx_run_until(&fx, one_watched, 10, "Workload a watched: admitted, its Pods not ready");
    j = json_deep_copy(fakeapi_get_object(fx.fa, "jobs", "ns", "a"));
    json_object_set_new(j, "status", json_pack("{s:i,s:i}", "active", 1, "ready", 1));
    ck_assert_int_eq(fakeapi_put_object(fx.fa, j, NULL, NULL), ERR_OK);
    json_decref(j);
    fx_run_until(&fx, none_watched, 10, "Workload a no longer watched: PodsReady=True");
    ck_assert_str_eq(wl_cond(&fx, "a", "PodsReady"), "True");
    fx_stop(&fx);
}
END_TEST

START_TEST(jobset_one_workload_admitted_started_finished)
{
    fx_t fx;
    json_t *js, *w, *rj;
    size_t i;

    /* 4 cpus: one JobSet of 2 x 2 pods fits, the second waits. */
    fx_start_with(&fx, 4,
                  "{\"frameworks\":[\"batch/job\",\"jobset.x-k8s.io/jobset\"],"
                  "\"labelKeysToCopy\":[\"team\"]}",
                  true);
    jobset(&fx, "first");
    fx_run_until(&fx, first_running, 10, "JobSet first admitted and started");
    w = js_workload(&fx, "first");
    ck_assert_uint_eq(json_array_size(json_object_get(json_object_get(w, "spec"), "podSets")), 2);
    /* integrations.labelKeysToCopy: team is copied, app is not. */
    {
        json_t *labels = json_object_get(json_object_get(w, "metadata"), "labels");
        ck_assert_str_eq(json_string_value(json_object_get(labels, "team")), "a");
        ck_assert_ptr_null(json_object_get(labels, "app"));
    }
    ck_assert_str_eq(
        json_string_value(json_object_get(
            json_array_get(json_object_get(json_object_get(w, "spec"), "podSets"), 1), "name")),
        "workers");
    ck_assert_str_eq(
        json_string_value(json_object_get(
            json_array_get(json_object_get(json_object_get(w, "metadata"), "ownerReferences"), 0),
            "kind")),
        "JobSet");
    /* Every replicated Job's pod template has the flavor's node selector and its pod set. */
    js = fakeapi_get_object(fx.fa, "jobsets", "ns", "first");
    json_array_foreach(json_object_get(json_object_get(js, "spec"), "replicatedJobs"), i, rj)
    {
        json_t *pod =
            json_object_get(json_object_get(json_object_get(rj, "template"), "spec"), "template");
        json_t *tmpl = json_object_get(pod, "spec");
        json_t *labels = json_object_get(json_object_get(pod, "metadata"), "labels");
        ck_assert_str_eq(
            json_string_value(json_object_get(json_object_get(tmpl, "nodeSelector"), "pool")),
            "p1");
        ck_assert_str_eq(json_string_value(json_object_get(labels, "kueue.x-k8s.io/podset")),
                         json_string_value(json_object_get(rj, "name")));
    }
    jobset(&fx, "second");
    fx_run_until(&fx, second_waits, 10, "JobSet second waiting: insufficient quota");
    ck_assert(js_suspended(&fx, "second"));
    /* first completes (the JobSet controller's condition): finished, second admitted. */
    js = json_deep_copy(fakeapi_get_object(fx.fa, "jobsets", "ns", "first"));
    json_object_set_new(js, "status",
                        json_pack("{s:[{s:s,s:s,s:s}]}", "conditions", "type", "Completed",
                                  "status", "True", "message", "jobset completed"));
    ck_assert_int_eq(fakeapi_put_object(fx.fa, js, NULL, NULL), ERR_OK);
    json_decref(js);
    fx_run_until(&fx, second_running, 10, "JobSet second admitted once first finished");
    ck_assert_uint_eq(ctrl_stats(fx.ctrl).created, 2);
    ck_assert_uint_eq(ctrl_stats(fx.ctrl).finished, 1);
    fx_stop(&fx);
}
END_TEST

/* ---- RayJob: a kind with prepare() (KubeRay's default submitter) -------------------------- */

/* The Workload of RayJob `name` (borrowed), found by Kueue's name. */
static json_t *ray_workload(fx_t *fx, const char *name)
{
    json_t *rj = fakeapi_get_object(fx->fa, "rayjobs", "ns", name);
    const char *uid = json_string_value(json_object_get(json_object_get(rj, "metadata"), "uid"));
    char wname[JOB_WORKLOAD_NAME_MAX + 1];

    if (uid == NULL ||
        jobs_workload_name(jobs_kind_named("ray.io/rayjob"), name, uid, JOB_WORKLOAD_NAME_MAX,
                           wname, sizeof(wname), NULL) != ERR_OK)
        return NULL;
    return fakeapi_get_object(fx->fa, "workloads", "ns", wname);
}

static bool ray_running(fx_t *fx)
{
    json_t *w = ray_workload(fx, "train");
    json_t *rj = fakeapi_get_object(fx->fa, "rayjobs", "ns", "train");
    return w != NULL && json_object_get(json_object_get(w, "status"), "admission") != NULL &&
           json_is_false(json_object_get(json_object_get(rj, "spec"), "suspend"));
}

/* A RayJob without submitterPodTemplate whose head asks for a GPU: the Workload's submitter pod
 * set is KubeRay's default submitter (500m cpu, no GPU), not the head's template, so a queue of
 * exactly head + workers GPUs admits it; once started, the RayJob carries that template. */
START_TEST(rayjob_workload_has_the_default_submitter)
{
    fx_t fx;
    json_t *w, *ps, *req, *rj;

    fx_start_kinds(&fx, 4, "{\"frameworks\":[\"batch/job\",\"ray.io/rayjob\"]}", false, true);
    fx_put(&fx, "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"ClusterQueue\",\"metadata\":"
                "{\"name\":\"cq\"},\"spec\":{\"namespaceSelector\":{},\"resourceGroups\":[{"
                "\"coveredResources\":[\"cpu\",\"memory\"],\"flavors\":[{\"name\":\"default\","
                "\"resources\":[{\"name\":\"cpu\",\"nominalQuota\":\"3500m\"},{\"name\":"
                "\"memory\",\"nominalQuota\":\"1Gi\"}]}]}]}}");
    fx_put(&fx, "{\"apiVersion\":\"ray.io/v1\",\"kind\":\"RayJob\",\"metadata\":{\"name\":"
                "\"train\",\"namespace\":\"ns\",\"labels\":{\"kueue.x-k8s.io/queue-name\":\"lq\"}},"
                "\"spec\":{\"suspend\":true,\"entrypoint\":\"python t.py\","
                "\"shutdownAfterJobFinishes\":true,\"rayClusterSpec\":{\"headGroupSpec\":{"
                "\"template\":{\"spec\":{\"containers\":[{\"name\":\"head\",\"image\":\"ray:2\","
                "\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]}}},\"workerGroupSpecs\":[{"
                "\"groupName\":\"w\",\"replicas\":2,\"template\":{\"spec\":{\"containers\":[{"
                "\"name\":\"w\",\"image\":\"ray:2\",\"resources\":{\"requests\":{\"cpu\":"
                "\"1\"}}}]}}}]}}}");
    /* 3500m cpu: head 1 + workers 2 + submitter 500m fit exactly; with the head's template
     * as the submitter's (1 cpu) the RayJob would never fit. */
    fx_run_until(&fx, ray_running, 10, "RayJob train admitted and started");
    w = ray_workload(&fx, "train");
    ps = json_array_get(json_object_get(json_object_get(w, "spec"), "podSets"), 2);
    ck_assert_str_eq(json_string_value(json_object_get(ps, "name")), "submitter");
    req = json_object_get(
        json_object_get(
            json_array_get(json_object_get(json_object_get(json_object_get(ps, "template"), "spec"),
                                           "containers"),
                           0),
            "resources"),
        "requests");
    ck_assert_str_eq(json_string_value(json_object_get(req, "cpu")), "500m");
    ck_assert_str_eq(json_string_value(json_object_get(req, "memory")), "200Mi");
    /* Started: the RayJob now carries the submitter template, with the flavor's selector. */
    rj = fakeapi_get_object(fx.fa, "rayjobs", "ns", "train");
    ck_assert_str_eq(
        json_string_value(json_object_get(
            json_object_get(
                json_object_get(
                    json_object_get(json_object_get(rj, "spec"), "submitterPodTemplate"), "spec"),
                "nodeSelector"),
            "pool")),
        "p1");
    fx_stop(&fx);
}
END_TEST

/* Kueue skips an enabled kind whose CRD is absent, and says so; the rest works. */
START_TEST(absent_kind_skipped_and_said_once)
{
    fx_t fx;
    char why[512];

    fx_start_with(&fx, 2, "{\"frameworks\":[\"batch/job\",\"jobset.x-k8s.io/jobset\"]}", false);
    ck_assert(ctrl_readiness(fx.ctrl, why, sizeof(why)));
    ck_assert(problems_has(ctrl_problems(fx.ctrl), "crd:jobsets.jobset.x-k8s.io"));
    ck_assert_uint_eq(problems_count(ctrl_problems(fx.ctrl)), 1);
    job(&fx, "a", 1);
    fx_run_until(&fx, a_running, 10, "Job a admitted and started without the JobSet CRD");
    fx_stop(&fx);
}
END_TEST

static bool a_admission_answered(fx_t *fx)
{
    return ctrl_stats(fx->ctrl).admitted == 1;
}

/* A refused admission write (`status`): the engine forgets it and decides again. A 409 is
 * checked with a GET first: it may be the echo of an attempt that landed. */
static void refused(int status)
{
    fakeapi_fault_t fault = {.action = FAKEAPI_FAIL, .status = status};
    fx_t fx;

    fx_start(&fx, 2);
    fakeapi_fault_next(fx.fa, "patch", "workloads/status", &fault, 1);
    job(&fx, "a", 1);
    fx_run_until(&fx, a_admission_answered, 10, "Job a admitted at the second attempt");
    ck_assert(admitted(&fx, "a"));
    ck_assert_uint_eq(ctrl_stats(fx.ctrl).admit_conflicts, 1);
    ck_assert_uint_eq(fakeapi_count(fx.fa, "get", "workloads"), status == 409 ? 1 : 0);
    /* the stop line's failed writes, and how many of them were conflicts */
    ck_assert_uint_ge(ctrl_stats(fx.ctrl).write_errors, 1);
    ck_assert_uint_eq(ctrl_stats(fx.ctrl).write_conflicts, status == 409 ? 1 : 0);
    fx_stop(&fx);
}

START_TEST(refused_admission_reverts_the_engine)
{
    refused(422);
    refused(409);
}
END_TEST

/* An admission write without an answer: `action` applies it (DROP) or not (LOSE). The quota
 * stays held -- Job b, which fits only in a's place, is not admitted meanwhile -- until a GET
 * of a's Workload says what the API has. */
static void ambiguous_fault(fakeapi_fault_t fault, bool landed);

static void ambiguous(fakeapi_action_t action)
{
    fakeapi_fault_t fault = {.action = action};

    ambiguous_fault(fault, action == FAKEAPI_DROP);
}

/* The same for any fault; `landed`: the fault applies the write. */
static void ambiguous_fault(fakeapi_fault_t fault, bool landed)
{
    fx_t fx;

    fx_start(&fx, 1);
    fakeapi_fault_next(fx.fa, "patch", "workloads/status", &fault, 1);
    job(&fx, "a", 1);
    fx_run_until(&fx, a_has_workload, 10, "a Workload for Job a");
    job(&fx, "b", 1);
    fx_run_until(&fx, verified, 15, "the verification GET");
    fx_run_until(&fx, a_admitted, 10, "Job a admitted");
    run_for(&fx, 1500);
    ck_assert_msg(!admitted(&fx, "b"), "b admitted into quota a holds");
    ck_assert_uint_eq(ctrl_stats(fx.ctrl).admit_unknown, 1);
    if (landed)
        ck_assert_uint_eq(ctrl_stats(fx.ctrl).admit_conflicts, 0); /* found written */
    else
        ck_assert_uint_eq(ctrl_stats(fx.ctrl).admit_conflicts, 1); /* not written: decided again */
    fx_stop(&fx);
}

START_TEST(lost_answer_keeps_quota_until_the_get_shows_it_landed)
{
    ambiguous(FAKEAPI_DROP);
}
END_TEST

START_TEST(lost_write_keeps_quota_until_the_get_shows_it_did_not_land)
{
    ambiguous(FAKEAPI_LOSE);
}
END_TEST

/* Issue 15: timeouts, resets and 5xx are ambiguous too -- a 500 or 504 may come after the
 * commit, a 503 before it; either way the quota stays held until the GET. */
START_TEST(reset_and_5xx_keep_quota_until_the_get_says)
{
    fakeapi_fault_t reset = {.action = FAKEAPI_DROP, .reset = true};
    fakeapi_fault_t lost_reset = {.action = FAKEAPI_LOSE, .reset = true};
    fakeapi_fault_t after_commit = {.action = FAKEAPI_FAIL_APPLIED, .status = 500};
    fakeapi_fault_t gateway_timeout = {.action = FAKEAPI_FAIL_APPLIED, .status = 504};
    fakeapi_fault_t unavailable = {.action = FAKEAPI_FAIL, .status = 503};

    ambiguous_fault(reset, true);
    ambiguous_fault(lost_reset, false);
    ambiguous_fault(after_commit, true);
    ambiguous_fault(gateway_timeout, true);
    ambiguous_fault(unavailable, false);
}
END_TEST

START_TEST(failing_writes_back_off)
{
    fakeapi_fault_t failing = {.action = FAKEAPI_FAIL, .status = 500};
    fx_t fx;
    size_t posts;

    fx_start(&fx, 2);
    /* Workload creation fails with 500 for a while: it is retried with a growing backoff, not
     * in a loop. */
    fakeapi_fault_next(fx.fa, "create", "workloads", &failing, 1000);
    job(&fx, "a", 1);
    run_for(&fx, 2000);
    posts = fakeapi_count(fx.fa, "create", "workloads");
    ck_assert_msg(posts >= 2 && posts <= 6, "%zu Workload creates in 2 s", posts);
    ck_assert_uint_ge(ctrl_stats(fx.ctrl).write_errors, 2);
    ck_assert_uint_eq(ctrl_stats(fx.ctrl).write_conflicts, 0);
    fx_stop(&fx);
}
END_TEST

/* ---- reclaimable pods ---------------------------------------------------------------------- */

static bool wide_running(fx_t *fx)
{
    return admitted(fx, "wide") && !suspended(fx, "wide");
}

static bool a_waiting(fx_t *fx)
{
    const char *qr = wl_cond(fx, "a", "QuotaReserved");
    return qr != NULL && strcmp(qr, "False") == 0;
}

static bool wide_reclaimable_written(fx_t *fx)
{
    json_t *rp =
        json_object_get(json_object_get(workload_for(fx, "wide"), "status"), "reclaimablePods");
    return json_array_size(rp) == 1;
}

static bool a_admitted_too(fx_t *fx)
{
    return admitted(fx, "a") && !suspended(fx, "a");
}

/* Kueue's ReclaimablePods for a Job: 4 pods in parallel on a ClusterQueue of 4 cpus, another
 * Job of 2 waits; two of the 4 completions succeed, so 2 slots will never be used again: the
 * Workload's status.reclaimablePods says main: 2, the engine releases their 2 cpus, and the
 * waiting Job is admitted while the first still runs. */
START_TEST(job_reclaimable_pods_release_quota)
{
    fx_t fx;
    json_t *w, *j;

    fx_start(&fx, 4);
    fx_put(&fx, "{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"metadata\":{\"name\":\"wide\","
                "\"namespace\":\"ns\",\"labels\":{\"kueue.x-k8s.io/queue-name\":\"lq\"}},\"spec\":"
                "{\"suspend\":true,\"parallelism\":4,\"completions\":4,\"template\":{\"spec\":{"
                "\"restartPolicy\":\"Never\",\"containers\":[{\"name\":\"c\",\"image\":\"i\","
                "\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]}}}}");
    fx_run_until(&fx, wide_running, 10, "Job wide admitted and running");
    job(&fx, "a", 2);
    fx_run_until(&fx, a_waiting, 10, "Job a waiting with QuotaReserved=False");
    ck_assert_ptr_null(
        json_object_get(json_object_get(workload_for(&fx, "wide"), "status"), "reclaimablePods"));
    j = json_deep_copy(fakeapi_get_object(fx.fa, "jobs", "ns", "wide"));
    ck_assert_int_eq(
        json_object_set_new(j, "status", json_pack("{s:i,s:i}", "succeeded", 2, "active", 2)), 0);
    ck_assert_int_eq(fakeapi_put_object(fx.fa, j, NULL, NULL), ERR_OK);
    json_decref(j);
    fx_run_until(&fx, wide_reclaimable_written, 10, "reclaimablePods written");
    w = json_array_get(
        json_object_get(json_object_get(workload_for(&fx, "wide"), "status"), "reclaimablePods"),
        0);
    ck_assert_str_eq(json_string_value(json_object_get(w, "name")), "main");
    ck_assert_int_eq(json_integer_value(json_object_get(w, "count")), 2);
    fx_run_until(&fx, a_admitted_too, 10, "Job a admitted on the reclaimed quota");
    ck_assert(!suspended(&fx, "wide"));
    fx_stop(&fx);
}
END_TEST

/* ---- TrainJob ----------------------------------------------------------------------------------
 */

#define TJ_FRAMEWORKS "{\"frameworks\":[\"batch/job\",\"trainer.kubeflow.org/trainjob\"]}"

/* Serve TrainJobs, and ClusterTrainingRuntimes when `runtimes` (else their CRD is absent). */
static void fx_start_trainjobs(fx_t *fx, bool runtimes)
{
    fx_kind_t kinds[] = {{"trainer.kubeflow.org", "v1alpha1", "trainjobs", "TrainJob"}};

    fx_serve(fx, kinds, 1);
    if (runtimes)
        ck_assert_int_eq(fakeapi_register(fx->fa, "trainer.kubeflow.org", "v1alpha1",
                                          "clustertrainingruntimes", "ClusterTrainingRuntime",
                                          false, true),
                         ERR_OK);
    fx_queues(fx, 2);
    if (runtimes)
        fx_put(fx,
               "{\"apiVersion\":\"trainer.kubeflow.org/v1alpha1\",\"kind\":"
               "\"ClusterTrainingRuntime\",\"metadata\":{\"name\":\"rt\"},\"spec\":{"
               "\"template\":{\"spec\":{\"replicatedJobs\":[{\"name\":\"node\",\"template\":{"
               "\"spec\":{\"template\":{\"metadata\":{\"labels\":{\"trainer.kubeflow.org/"
               "trainjob-ancestor-step\":\"trainer\"}},\"spec\":{\"containers\":[{\"name\":"
               "\"node\",\"image\":\"i\",\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]}}}}}]}}}"
               "}");
    fx_put(fx, "{\"apiVersion\":\"trainer.kubeflow.org/v1alpha1\",\"kind\":\"TrainJob\","
               "\"metadata\":{\"name\":\"t\",\"namespace\":\"ns\",\"labels\":{"
               "\"kueue.x-k8s.io/queue-name\":\"lq\"}},\"spec\":{\"suspend\":true,"
               "\"runtimeRef\":{\"name\":\"rt\"}}}");
    fx_operate(fx, "integrations", TJ_FRAMEWORKS);
}

/* The TrainJob updates the server received, in order: "<suspend> <patched replicated Jobs>". */
typedef struct tj_writes_s {
    char seen[8][64];
    size_t n;
} tj_writes_t;

static void on_tj_request(fakeapi_t *fa, const fakeapi_req_t *req, fakeapi_fault_t *fault,
                          void *data)
{
    tj_writes_t *w = data;
    json_t *body, *p, *entry = NULL;
    size_t i;

    (void)fa;
    (void)fault;
    if (strcmp(req->verb, "update") != 0 || strcmp(req->resource, "trainjobs") != 0 ||
        w->n == sizeof(w->seen) / sizeof(w->seen[0]))
        return;
    body = json_loadb(req->body, req->body_len, 0, NULL);
    json_array_foreach(json_object_get(json_object_get(body, "spec"), "runtimePatches"), i, p)
    {
        if (strcmp(json_string_value(json_object_get(p, "manager")), "kueue.x-k8s.io/manager") == 0)
            entry = p;
    }
    p = json_object_get(
        json_object_get(json_object_get(json_object_get(entry, "trainingRuntimeSpec"), "template"),
                        "spec"),
        "replicatedJobs");
    snprintf(w->seen[w->n++], sizeof(w->seen[0]), "%s %s",
             json_is_true(json_object_get(json_object_get(body, "spec"), "suspend")) ? "held"
                                                                                     : "released",
             json_string_value(json_object_get(json_array_get(p, 0), "name"))
                 ? json_string_value(json_object_get(json_array_get(p, 0), "name"))
                 : "-");
    json_decref(body);
}

static bool t_released(fx_t *fx)
{
    json_t *t = fakeapi_get_object(fx->fa, "trainjobs", "ns", "t");
    return json_is_false(json_object_get(json_object_get(t, "spec"), "suspend"));
}

static bool t_started(fx_t *fx)
{
    return t_released(fx) && ctrl_stats(fx->ctrl).started == 1;
}

/* Kueue starts a TrainJob in two updates: its runtimePatches entry while it is still suspended
 * (Trainer's webhook refuses a change of runtimePatches on a running TrainJob), then the
 * release. */
START_TEST(trainjob_patched_while_held_then_released)
{
    fx_t fx;
    tj_writes_t w;

    memset(&w, 0, sizeof(w));
    fx_start_trainjobs(&fx, true);
    fakeapi_set_fault(fx.fa, on_tj_request, &w);
    fx_run_until(&fx, t_started, 10, "TrainJob t released and its start answered");
    fakeapi_set_fault(fx.fa, NULL, NULL);
    ck_assert_uint_eq(w.n, 2);
    ck_assert_str_eq(w.seen[0], "held node");
    ck_assert_str_eq(w.seen[1], "released node");
    ck_assert_uint_eq(ctrl_stats(fx.ctrl).started, 1);
    fx_stop(&fx);
}
END_TEST

/* Events the operator created, from the server's log. */
static size_t events_created(fx_t *fx)
{
    size_t n = 0;

    for (size_t i = 0; i < fakeapi_log_len(fx->fa); i++) {
        const fakeapi_logent_t *e = fakeapi_log_at(fx->fa, i);
        n += strcmp(e->verb, "create") == 0 && strcmp(e->resource, "events") == 0;
    }
    return n;
}

static bool runtime_crd_said(fx_t *fx)
{
    return problems_has(ctrl_problems(fx->ctrl),
                        "crd:clustertrainingruntimes.trainer.kubeflow.org") &&
           events_created(fx) >= 1;
}

/* The operator tried to list ClusterTrainingRuntimes twice more since the log was cleared
 * (an unserved resource is not routed: read the paths). */
static bool runtimes_listed_again(fx_t *fx)
{
    size_t n = 0;

    for (size_t i = 0; i < fakeapi_log_len(fx->fa); i++)
        n += strstr(fakeapi_log_at(fx->fa, i)->path, "/clustertrainingruntimes") != NULL;
    return n >= 2;
}

/* The training runtimes' CRD is not installed: said once (a problem, /readyz stays ready: the
 * other kinds are managed), and the TrainJob naming one told by one Warning Event that names the
 * CRD, also when it changes and is reconciled again; it gets no Workload. */
START_TEST(trainjob_runtime_crd_absent_said_once)
{
    fx_t fx;
    char why[512];
    json_t *t;

    fx_start_trainjobs(&fx, false);
    fx_run_until(&fx, runtime_crd_said, 10, "the absent runtime CRD said");
    ck_assert(ctrl_readiness(fx.ctrl, why, sizeof(why)));
    /* Reconciled again after a change (and the runtimes listed again): nothing more said. */
    t = json_deep_copy(fakeapi_get_object(fx.fa, "trainjobs", "ns", "t"));
    ck_assert_int_eq(json_object_set_new(json_object_get(json_object_get(t, "metadata"), "labels"),
                                         "team", json_string("nlp")),
                     0);
    fakeapi_log_clear(fx.fa);
    ck_assert_int_eq(fakeapi_put_object(fx.fa, t, NULL, NULL), ERR_OK);
    json_decref(t);
    fx_run_until(&fx, runtimes_listed_again, 30, "the runtimes listed twice again");
    ck_assert_uint_eq(events_created(&fx), 0);
    ck_assert_uint_eq(fakeapi_object_count(fx.fa, "workloads"), 0);
    fx_stop(&fx);
}
END_TEST

/* ---- a finished Workload's record: retired, and every reader still right ------------------- */

/* Job `name` (1 cpu) as it is after a restart: started and complete, and its Workload admitted
 * and Finished in the API with the finalizer still on (the operator died in between). */
static void finished_before_restart(fx_t *fx, const char *name)
{
    char j[1024], wname[JOB_WORKLOAD_NAME_MAX + 1];
    const char *uid;
    json_t *w;

    snprintf(j, sizeof(j),
             "{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"metadata\":{\"name\":\"%s\","
             "\"namespace\":\"ns\",\"labels\":{\"kueue.x-k8s.io/queue-name\":\"lq\"}},\"spec\":"
             "{\"suspend\":false,\"parallelism\":1,\"completions\":1,\"template\":{\"spec\":{"
             "\"restartPolicy\":\"Never\",\"containers\":[{\"name\":\"c\",\"image\":\"i\","
             "\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]}}},\"status\":{\"succeeded\":1,"
             "\"conditions\":[{\"type\":\"Complete\",\"status\":\"True\"}]}}",
             name);
    fx_put(fx, j);
    uid = json_string_value(json_object_get(
        json_object_get(fakeapi_get_object(fx->fa, "jobs", "ns", name), "metadata"), "uid"));
    ck_assert_ptr_nonnull(uid);
    ck_assert_int_eq(
        job_workload_name(name, uid, JOB_WORKLOAD_NAME_MAX, wname, sizeof(wname), NULL), ERR_OK);
    w = json_pack(
        "{s:s,s:s,s:{s:s,s:s,s:[s],s:[{s:s,s:s,s:s,s:s,s:b}]},"
        "s:{s:s,s:[{s:s,s:i,s:{s:{s:[{s:s,s:s,s:{s:{s:s}}}]}}}]},"
        "s:{s:{s:s,s:[{s:s,s:{s:s},s:{s:s},s:i}]},s:[{s:s,s:s,s:s,s:s,s:s},{s:s,s:s,s:s,s:s,s:s},"
        "{s:s,s:s,s:s,s:s,s:s}]}}",
        "apiVersion", "kueue.x-k8s.io/v1beta2", "kind", "Workload", "metadata", "name", wname,
        "namespace", "ns", "finalizers", "kueue.x-k8s.io/resource-in-use", "ownerReferences",
        "apiVersion", "batch/v1", "kind", "Job", "name", name, "uid", uid, "controller", 1, "spec",
        "queueName", "lq", "podSets", "name", "main", "count", 1, "template", "spec", "containers",
        "name", "c", "image", "i", "resources", "requests", "cpu", "1", "status", "admission",
        "clusterQueue", "cq", "podSetAssignments", "name", "main", "flavors", "cpu", "default",
        "resourceUsage", "cpu", "1", "count", 1, "conditions", "type", "QuotaReserved", "status",
        "True", "reason", "QuotaReserved", "message", "Quota reserved in ClusterQueue cq",
        "lastTransitionTime", "2026-01-01T00:00:00Z", "type", "Admitted", "status", "True",
        "reason", "Admitted", "message", "The workload is admitted", "lastTransitionTime",
        "2026-01-01T00:00:00Z", "type", "Finished", "status", "True", "reason", "Succeeded",
        "message", "done", "lastTransitionTime", "2026-01-01T00:01:00Z");
    ck_assert_ptr_nonnull(w);
    ck_assert_int_eq(fakeapi_put_object(fx->fa, w, NULL, NULL), ERR_OK);
    json_decref(w);
}

/* The operator's record of Job `job_name`'s Workload (borrowed), or NULL. */
static const ctrl_wl_t *record_of(fx_t *fx, const char *job_name)
{
    json_t *w = workload_for(fx, job_name);
    char key[CTRL_KEY_MAX];

    if (w == NULL)
        return NULL;
    snprintf(key, sizeof(key), "ns/%s",
             json_string_value(json_object_get(json_object_get(w, "metadata"), "name")));
    return ctrl__wl(fx->ctrl, key);
}

/* The record is retired (ctrl_wl_retire()) and says what the readers of a finished Workload
 * read: Finished, the quota it held (as before), its owner and name; no status is built from it. */
static void assert_retired(fx_t *fx, const char *job_name, bool finalizer)
{
    const ctrl_wl_t *r = record_of(fx, job_name);

    ck_assert_ptr_nonnull(r);
    ck_assert(r->retired && r->stripped && r->valid);
    ck_assert(r->wl.conditions.finished);
    ck_assert(ctrl_wl_is(r, "Finished"));
    ck_assert_ptr_null(ctrl_wl_cond(r, "Admitted"));
    ck_assert_ptr_null(r->wl.admission);
    ck_assert_uint_eq(r->wl.npod_sets, 0);
    ck_assert_uint_eq(r->npodsets, 0);
    ck_assert_uint_eq(r->wl.nstatus_conditions, 1);
    ck_assert(ctrl_wl_reserved(r)); /* admission + QuotaReserved=True when it finished */
    ck_assert(!ctrl_wl_on_hold(r));
    ck_assert_ptr_null(ctrl_wl_json(r));
    ck_assert_str_eq(r->owner.kind, "Job");
    ck_assert_str_eq(r->owner.name, job_name);
    ck_assert_str_eq(r->wl.queue_name, "lq");
    ck_assert(r->finalizer == finalizer);
}

static bool c_let_go_d_running(fx_t *fx)
{
    const ctrl_wl_t *r = record_of(fx, "c");
    json_t *w = workload_for(fx, "c");

    return w != NULL &&
           json_array_size(json_object_get(json_object_get(w, "metadata"), "finalizers")) == 0 &&
           r != NULL && r->retired && !r->finalizer && admitted(fx, "d") && !suspended(fx, "d");
}

static bool c_workload_deleted(fx_t *fx)
{
    return fakeapi_object_count(fx->fa, "workloads") == 1 && record_of(fx, "d") != NULL;
}

static bool d_running(fx_t *fx)
{
    return admitted(fx, "d") && !suspended(fx, "d");
}

static bool d_let_go(fx_t *fx)
{
    const ctrl_wl_t *r = record_of(fx, "d");
    json_t *w = workload_for(fx, "d");

    return w != NULL &&
           json_array_size(json_object_get(json_object_get(w, "metadata"), "finalizers")) == 0 &&
           r != NULL && r->retired && !r->finalizer;
}

/* Restart recovery, the finish path and the delete path with retired records: a Workload found
 * Finished at the start (the LIST) holds no quota -- Job d of the ClusterQueue's whole 2 cpus is
 * admitted -- and its finalizer is removed; once its Job is gone, the orphan is deleted; Job d
 * completes, its Workload is finished by the operator and let go. Each retired record keeps what
 * those paths read. */
START_TEST(finished_workloads_retired_let_go_and_deleted)
{
    fx_t fx;
    json_t *j;

    fx_serve(&fx, NULL, 0);
    fx_queues(&fx, 2);
    finished_before_restart(&fx, "c");
    job(&fx, "d", 2);
    fx_operate(&fx, NULL, NULL);
    fx_run_until(&fx, c_let_go_d_running, 10, "c's finalizer removed, d admitted and started");
    assert_retired(&fx, "c", false);
    /* The delete path: c's Job is gone, its finished Workload is deleted by the operator. */
    ck_assert_int_eq(fakeapi_delete_object(fx.fa, "jobs", "ns", "c", NULL), ERR_OK);
    fx_run_until(&fx, c_workload_deleted, 10, "c's orphaned Workload deleted");
    ck_assert_uint_ge(fakeapi_count(fx.fa, "delete", "workloads"), 1);
    /* The finish path: d completes, is Finished by the operator, then let go. */
    fx_run_until(&fx, d_running, 10, "d running");
    j = json_deep_copy(fakeapi_get_object(fx.fa, "jobs", "ns", "d"));
    json_object_set_new(j, "status",
                        json_pack("{s:i,s:[{s:s,s:s,s:s}]}", "succeeded", 1, "conditions", "type",
                                  "Complete", "status", "True", "message", "done"));
    ck_assert_int_eq(fakeapi_put_object(fx.fa, j, NULL, NULL), ERR_OK);
    json_decref(j);
    fx_run_until(&fx, d_let_go, 10, "d finished and let go");
    assert_retired(&fx, "d", false);
    ck_assert_str_eq(wl_cond(&fx, "d", "Finished"), "True");
    ck_assert_str_eq(wl_cond(&fx, "d", "QuotaReserved"), "True"); /* the API keeps them */
    ck_assert_ptr_nonnull(
        json_object_get(json_object_get(workload_for(&fx, "d"), "status"), "admission"));
    fx_stop(&fx);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("ctrl_reconcile");
    TCase *tc = tcase_create("fakeapi");
    SRunner *sr;
    int failed;

    curl_global_init(CURL_GLOBAL_DEFAULT);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, job_admitted_started_evicted_restored_finished);
    tcase_add_test(tc, pods_ready_tick_counts_the_workloads_it_watches);
    tcase_add_test(tc, refused_admission_reverts_the_engine);
    tcase_add_test(tc, lost_answer_keeps_quota_until_the_get_shows_it_landed);
    tcase_add_test(tc, lost_write_keeps_quota_until_the_get_shows_it_did_not_land);
    tcase_add_test(tc, reset_and_5xx_keep_quota_until_the_get_says);
    tcase_add_test(tc, failing_writes_back_off);
    tcase_add_test(tc, jobset_one_workload_admitted_started_finished);
    tcase_add_test(tc, rayjob_workload_has_the_default_submitter);
    tcase_add_test(tc, absent_kind_skipped_and_said_once);
    tcase_add_test(tc, trainjob_patched_while_held_then_released);
    tcase_add_test(tc, job_reclaimable_pods_release_quota);
    tcase_add_test(tc, trainjob_runtime_crd_absent_said_once);
    tcase_add_test(tc, finished_workloads_retired_let_go_and_deleted);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    curl_global_cleanup();
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
