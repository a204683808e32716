/* test_ctrl_race -- the operator's quota accounting when the API's answers and its watch events
 * arrive in an unlucky order: a Workload chosen as a preemption victim while the write that
 * admits it is still in flight, and an older watch event about it arriving meanwhile. */
/* SPDX-License-Identifier: Apache-2.0 */
#define _GNU_SOURCE /* memmem */
#include "ctrl/ctrl.h"

#include "ctrl_fixture.h"
#include "fakeapi.h"
#include "jobs/job_workload.h"

#include <check.h>
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A ClusterQueue "cq" of `cpu` cpus preempting lower priorities, LocalQueue ns/lq,
 * WorkloadPriority- Classes "low" (1) and "high" (1000). */
static void fx_start_cpu(fx_t *fx, int cpu)
{
    char cq[1024];

    fx_serve(fx, NULL, 0);
    fx_put(fx, "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"ns\"}}");
    fx_put(fx,
           "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"ResourceFlavor\",\"metadata\":"
           "{\"name\":\"default\"}}");
    snprintf(cq, sizeof(cq),
             "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"ClusterQueue\",\"metadata\":"
             "{\"name\":\"cq\"},\"spec\":{\"namespaceSelector\":{},\"preemption\":{"
             "\"withinClusterQueue\":\"LowerPriority\"},\"resourceGroups\":[{"
             "\"coveredResources\":[\"cpu\"],\"flavors\":[{\"name\":\"default\",\"resources\":[{"
             "\"name\":\"cpu\",\"nominalQuota\":\"%d\"}]}]}]}}",
             cpu);
    fx_put(fx, cq);
    fx_put(fx, "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"LocalQueue\",\"metadata\":"
               "{\"name\":\"lq\",\"namespace\":\"ns\"},\"spec\":{\"clusterQueue\":\"cq\"}}");
    fx_put(fx, "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"WorkloadPriorityClass\","
               "\"metadata\":{\"name\":\"low\"},\"value\":1}");
    fx_put(fx, "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"WorkloadPriorityClass\","
               "\"metadata\":{\"name\":\"high\"},\"value\":1000}");
    fx_operate(fx, NULL, NULL);
}

static void fx_start(fx_t *fx)
{
    fx_start_cpu(fx, 2);
}

/* A suspended Job `name` in ns/lq asking for `cpu` cpus at WorkloadPriorityClass `pc`. */
static void job(fx_t *fx, const char *name, int cpu, const char *pc)
{
    char j[1024];

    snprintf(j, sizeof(j),
             "{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"metadata\":{\"name\":\"%s\","
             "\"namespace\":\"ns\",\"labels\":{\"kueue.x-k8s.io/queue-name\":\"lq\","
             "\"kueue.x-k8s.io/priority-class\":\"%s\"}},\"spec\":{\"suspend\":true,"
             "\"parallelism\":1,\"completions\":1,\"template\":{\"spec\":{\"restartPolicy\":"
             "\"Never\",\"containers\":[{\"name\":\"c\",\"image\":\"i\",\"resources\":{"
             "\"requests\":{\"cpu\":\"%d\"}}}]}}}}",
             name, pc, cpu);
    fx_put(fx, j);
}

/* The name of Job `job_name`'s Workload into `out`. */
static void workload_name(fx_t *fx, const char *job_name, char *out, size_t n)
{
    json_t *j = fakeapi_get_object(fx->fa, "jobs", "ns", job_name);
    const char *uid = json_string_value(json_object_get(json_object_get(j, "metadata"), "uid"));

    ck_assert_ptr_nonnull(uid);
    ck_assert_int_eq(job_workload_name(job_name, uid, JOB_WORKLOAD_NAME_MAX, out, n, NULL), ERR_OK);
}

static bool reserved(fx_t *fx, const char *wl_name)
{
    json_t *w = fakeapi_get_object(fx->fa, "workloads", "ns", wl_name);
    return w != NULL && json_object_get(json_object_get(w, "status"), "admission") != NULL;
}

typedef struct race_s {
    char victim[JOB_WORKLOAD_NAME_MAX + 1], preemptor[JOB_WORKLOAD_NAME_MAX + 1];
    bool held;       /* the fault hook acted: the victim's watch events held back (first
                        test), or the victim released by someone else (second test) */
    bool delayed;    /* the victim's admission write has arrived (and is being delayed) */
    bool overcommit; /* victim and preemptor held more than the queue at once */
} race_t;

static race_t race;

/* The victim's first status write (its pending explanation) starts holding its watch events;
 * its admission write is applied 1.5 s after it arrives. */
static void race_fault(fakeapi_t *fa, const fakeapi_req_t *req, fakeapi_fault_t *fault, void *data)
{
    race_t *r = data;

    if (strcmp(req->verb, "patch") != 0 || strcmp(req->resource, "workloads") != 0 ||
        strcmp(req->subresource, "status") != 0 || strcmp(req->name, r->victim) != 0)
        return;
    if (memmem(req->body, req->body_len, "\"admission\":{", 13) != NULL) {
        if (!r->delayed) {
            r->delayed = true;
            fault->delay_ms = 1500;
        }
    } else if (!r->held) {
        r->held = true;
        fakeapi_hold_object(fa, "workloads", "ns", r->victim);
    }
}

static bool overcommit_seen(fx_t *fx)
{
    if (race.preemptor[0] && reserved(fx, race.victim) && reserved(fx, race.preemptor))
        race.overcommit = true;
    return race.overcommit;
}

static bool victim_held(fx_t *fx)
{
    (void)fx;
    return race.held;
}

static bool victim_admission_sent(fx_t *fx)
{
    (void)fx;
    return race.delayed;
}

static bool preemptor_has_workload(fx_t *fx)
{
    return fakeapi_get_object(fx->fa, "workloads", "ns", race.preemptor) != NULL;
}

static bool x_reserved(fx_t *fx)
{
    char x[JOB_WORKLOAD_NAME_MAX + 1];

    workload_name(fx, "x", x, sizeof(x));
    return reserved(fx, x);
}

static bool victim_reserved(fx_t *fx)
{
    return reserved(fx, race.victim);
}

static bool preemptor_admitted(fx_t *fx)
{
    return overcommit_seen(fx) || reserved(fx, race.preemptor);
}

/* Run the loop for `ms` milliseconds, watching for the overcommit. */
static void run_for(fx_t *fx, uint64_t ms)
{
    uint64_t end = uv_now(&fx->loop) + ms;

    while (uv_now(&fx->loop) < end) {
        uv_run(&fx->loop, UV_RUN_ONCE);
        overcommit_seen(fx);
    }
}

/*
 * Job w (low, 1 cpu) waits behind x (low, 2 cpu). x goes; the engine admits w and the write is
 * slow. Meanwhile p (high, 2 cpu) arrives and the engine picks w, admitted in its books, as the
 * victim. Then the watch delivers w's pending explanation, older than the admission in flight.
 * That event must not release w's quota in the engine (p would be admitted next to w, 3 cpu in a
 * 2-cpu queue, once w's admission lands), and the eviction must not be forgotten because the API
 * did not show w admitted yet: w is admitted, then evicted, then p runs.
 */
START_TEST(victim_of_an_admission_in_flight_keeps_its_quota_until_evicted)
{
    fx_t fx;

    memset(&race, 0, sizeof(race));
    fx_start(&fx);
    job(&fx, "x", 2, "low");
    fx_run_until(&fx, x_reserved, 10, "Job x admitted");
    job(&fx, "w", 1, "low");
    workload_name(&fx, "w", race.victim, sizeof(race.victim));
    fakeapi_set_fault(fx.fa, race_fault, &race);
    fx_run_until(&fx, victim_held, 10, "w's pending explanation written");
    run_for(&fx, 300);
    ck_assert(!reserved(&fx, race.victim));

    ck_assert_int_eq(fakeapi_delete_object(fx.fa, "jobs", "ns", "x", NULL), ERR_OK);
    fx_run_until(&fx, victim_admission_sent, 10, "w's admission write");
    job(&fx, "p", 2, "high");
    workload_name(&fx, "p", race.preemptor, sizeof(race.preemptor));
    fx_run_until(&fx, preemptor_has_workload, 10, "p's Workload");
    run_for(&fx, 400); /* the engine decides to preempt w */
    ck_assert_uint_ge(fakeapi_release_object(fx.fa), 1);
    fx_run_until(&fx, preemptor_admitted, 15, "p admitted");
    run_for(&fx, 2000); /* past the landing of w's admission */
    ck_assert_msg(!race.overcommit, "w and p admitted together: 3 cpu in a 2-cpu ClusterQueue");
    ck_assert(reserved(&fx, race.preemptor));
    ck_assert(!reserved(&fx, race.victim));
    fx_stop(&fx);
}
END_TEST

/* The victim's own release write: before it is applied, someone else releases the victim (the
 * Workload's admission removed, QuotaReserved=False), so ours meets a 409. */
static void release_fault(fakeapi_t *fa, const fakeapi_req_t *req, fakeapi_fault_t *fault,
                          void *data)
{
    race_t *r = data;
    json_t *w, *copy, *st, *c;
    err_msg_t m;
    size_t i;

    (void)fault;
    if (r->held || strcmp(req->verb, "patch") != 0 || strcmp(req->resource, "workloads") != 0 ||
        strcmp(req->subresource, "status") != 0 || strcmp(req->name, r->victim) != 0 ||
        memmem(req->body, req->body_len, "\"admission\":null", 16) == NULL)
        return;
    r->held = true; /* here: the release by someone else happened */
    w = fakeapi_get_object(fa, "workloads", "ns", r->victim);
    ck_assert_ptr_nonnull(w);
    copy = json_deep_copy(w);
    st = json_object_get(copy, "status");
    json_object_del(st, "admission");
    json_array_foreach(json_object_get(st, "conditions"), i, c)
    {
        const char *type = json_string_value(json_object_get(c, "type"));
        if (strcmp(type, "QuotaReserved") == 0 || strcmp(type, "Admitted") == 0) {
            json_object_set_new(c, "status", json_string("False"));
            json_object_set_new(c, "reason", json_string("Pending"));
        }
    }
    ck_assert_int_eq(fakeapi_put_object(fa, copy, NULL, &m), ERR_OK);
    json_decref(copy);
}

static bool released_by_someone_else(fx_t *fx)
{
    (void)fx;
    return race.held;
}

/*
 * w (low, 1 cpu) runs in a 1-cpu ClusterQueue; p (high, 1 cpu) preempts it. When the operator
 * writes w's release, someone else has just released it: our write fails (409) and the watch
 * shows w released while our write was in flight. That view must still release w's quota in the
 * engine (no admission of ours is in flight), or w stays EVICTING for good and p never runs.
 */
START_TEST(victim_released_by_someone_else_during_our_release_is_released)
{
    fx_t fx;

    memset(&race, 0, sizeof(race));
    fx_start_cpu(&fx, 1);
    job(&fx, "w", 1, "low");
    workload_name(&fx, "w", race.victim, sizeof(race.victim));
    fx_run_until(&fx, victim_reserved, 10, "Job w admitted");
    fakeapi_set_fault(fx.fa, release_fault, &race);
    job(&fx, "p", 1, "high");
    workload_name(&fx, "p", race.preemptor, sizeof(race.preemptor));
    fx_run_until(&fx, released_by_someone_else, 10, "w's release, raced by someone else's");
    fx_run_until(&fx, preemptor_admitted, 10, "p admitted after w was released");
    ck_assert(!race.overcommit);
    ck_assert(!reserved(&fx, race.victim));
    fx_stop(&fx);
}
END_TEST

/* ClusterQueue `name` of `cpu` cpus in cohort "co" (borrowing and reclaiming), its LocalQueue
 * ns/`name`. */
static void cohort_cq(fx_t *fx, const char *name, int cpu)
{
    char b[1024];

    snprintf(b, sizeof(b),
             "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"ClusterQueue\",\"metadata\":"
             "{\"name\":\"%s\"},\"spec\":{\"cohortName\":\"co\",\"namespaceSelector\":{},"
             "\"queueingStrategy\":\"BestEffortFIFO\",\"preemption\":{\"reclaimWithinCohort\":"
             "\"Any\",\"withinClusterQueue\":\"LowerPriority\"},\"resourceGroups\":[{"
             "\"coveredResources\":[\"cpu\"],\"flavors\":[{\"name\":\"default\",\"resources\":[{"
             "\"name\":\"cpu\",\"nominalQuota\":\"%d\"}]}]}]}}",
             name, cpu);
    fx_put(fx, b);
    snprintf(b, sizeof(b),
             "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"LocalQueue\",\"metadata\":"
             "{\"name\":\"%s\",\"namespace\":\"ns\"},\"spec\":{\"clusterQueue\":\"%s\"}}",
             name, name);
    fx_put(fx, b);
}

/* A Workload created directly (no Job), 1 cpu, in LocalQueue ns/`lq`. */
static void direct_workload(fx_t *fx, const char *name, const char *lq)
{
    char b[1024];

    snprintf(b, sizeof(b),
             "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"Workload\",\"metadata\":{"
             "\"name\":\"%s\",\"namespace\":\"ns\"},\"spec\":{\"queueName\":\"%s\",\"podSets\":[{"
             "\"name\":\"main\",\"count\":1,\"template\":{\"spec\":{\"restartPolicy\":\"Never\","
             "\"containers\":[{\"name\":\"c\",\"image\":\"i\",\"resources\":{\"requests\":{"
             "\"cpu\":\"1\"}}}]}}}]}}",
             name, lq);
    fx_put(fx, b);
}

typedef struct batch_s {
    unsigned b_admissions; /* admission writes of b1 and b2 */
    unsigned b_evictions;  /* eviction writes of b1 and b2 */
} batch_t;

static batch_t batch;

static void batch_fault(fakeapi_t *fa, const fakeapi_req_t *req, fakeapi_fault_t *fault, void *data)
{
    batch_t *b = data;

    (void)fa;
    (void)fault;
    if (strcmp(req->verb, "patch") != 0 || strcmp(req->resource, "workloads") != 0 ||
        strcmp(req->subresource, "status") != 0 || req->name[0] != 'b')
        return;
    if (memmem(req->body, req->body_len, "\"admission\":{", 13) != NULL)
        b->b_admissions++;
    if (memmem(req->body, req->body_len, "\"Evicted\"", 9) != NULL)
        b->b_evictions++;
}

static bool four_admitted(fx_t *fx)
{
    int n = 0;
    const char *names[] = {"a1", "a2", "a3", "b1", "b2"};

    for (size_t i = 0; i < 5; i++)
        n += reserved(fx, names[i]);
    return n == 4;
}

/*
 * One call of the engine's loop admits a ClusterQueue's workload by borrowing and, a few passes
 * later, reclaims it for another queue's head: a (3 cpu) and b (1 cpu) in one cohort, a1-a3 and
 * b1-b2 of 1 cpu each, all pending when the operator starts. Pass 1 admits a1 and b1, pass 2 a2
 * and b2 (borrowing a's last cpu), pass 3 finds a3 under a's nominal quota and preempts b2. b2's
 * admission was never written: nothing of it may reach the API (no admission, no eviction: three
 * writes and an eviction the benchmark's baseline counted by hundreds), and its quota is free at
 * once, so a3 is admitted and the cohort never holds more than 4 cpu.
 */
START_TEST(victim_admitted_in_the_same_cycle_is_never_written)
{
    fx_t fx;

    memset(&batch, 0, sizeof(batch));
    fx_serve(&fx, NULL, 0);
    fx_put(&fx, "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"ns\"}}");
    fx_put(&fx,
           "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"ResourceFlavor\",\"metadata\":"
           "{\"name\":\"default\"}}");
    cohort_cq(&fx, "a", 3);
    cohort_cq(&fx, "b", 1);
    direct_workload(&fx, "a1", "a");
    direct_workload(&fx, "a2", "a");
    direct_workload(&fx, "a3", "a");
    direct_workload(&fx, "b1", "b");
    direct_workload(&fx, "b2", "b");
    fakeapi_set_fault(fx.fa, batch_fault, &batch);
    fx_operate(&fx, NULL, NULL);
    fx_run_until(&fx, four_admitted, 10, "a1, a2, a3 and one of b1, b2 admitted");
    run_for(&fx, 500);
    ck_assert(reserved(&fx, "a1") && reserved(&fx, "a2") && reserved(&fx, "a3"));
    ck_assert_int_eq(reserved(&fx, "b1") + reserved(&fx, "b2"), 1);
    ck_assert_uint_eq(batch.b_admissions, 1); /* the one in b's nominal quota */
    ck_assert_uint_eq(batch.b_evictions, 0);
    ck_assert_uint_eq(ctrl_stats(fx.ctrl).undone, 1);
    fx_stop(&fx);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("ctrl_race");
    TCase *tc = tcase_create("fakeapi");
    SRunner *sr;
    int failed;

    curl_global_init(CURL_GLOBAL_DEFAULT);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, victim_of_an_admission_in_flight_keeps_its_quota_until_evicted);
    tcase_add_test(tc, victim_released_by_someone_else_during_our_release_is_released);
    tcase_add_test(tc, victim_admitted_in_the_same_cycle_is_never_written);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    curl_global_cleanup();
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
