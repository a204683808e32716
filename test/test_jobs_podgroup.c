/* test_jobs_podgroup -- the Pods of one pod group as one Workload, as Kueue's pod integration. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "jobs/podgroup.h"
#include "util/alloc.h"

#include "jobs_fixtures.h"
#include "oom_wrap.h"

#include <check.h>
#include <string.h>

/* test/data/jobs/podgroup.yaml: driver, worker-0, worker-1 (failed), worker-1b, worker-2. */
enum { DRIVER, WORKER0, FAILED, WORKER1B, EXTRA, NPODS };

static json_t *docs;
static json_t *pods[NPODS];

static void setup(void)
{
    docs = jf_file("podgroup.yaml");
    ck_assert_uint_eq(json_array_size(docs), NPODS);
    for (size_t i = 0; i < NPODS; i++)
        pods[i] = json_array_get(docs, i);
}

static void teardown(void)
{
    json_decref(docs);
}

static void role(const json_t *pod, char *out)
{
    err_msg_t msg = {{0}};
    ck_assert_int_eq(jobs_pod_role_hash(pod, out, &msg), ERR_OK);
}

static void read_ok(jobs_pod_group_t *g, size_t n)
{
    err_msg_t msg = {{0}};
    ck_assert_msg(jobs_pod_group_read(pods, n, g, &msg) == ERR_OK, "%s", msg.text);
}

START_TEST(verdicts_and_pod_sets)
{
    jobs_pod_group_t g;
    read_ok(&g, NPODS);
    ck_assert_str_eq(g.name, "train");
    ck_assert_str_eq(g.namespace, "team-a");
    ck_assert_int_eq(g.total_count, 3);
    ck_assert(!g.fast_admission && !g.serving && !g.unretriable);
    ck_assert_uint_eq(g.nrunnable, 4);
    ck_assert(g.complete);
    ck_assert_int_eq(g.verdict[DRIVER], JOBS_POD_KEEP);
    ck_assert_int_eq(g.verdict[WORKER0], JOBS_POD_KEEP);
    ck_assert_int_eq(g.verdict[FAILED], JOBS_POD_INACTIVE);
    ck_assert_int_eq(g.verdict[WORKER1B], JOBS_POD_KEEP);
    /* Older than all, but without Kueue's finalizer: the one to go. */
    ck_assert_int_eq(g.verdict[EXTRA], JOBS_POD_EXCESS);

    /* One pod set per role, sorted; worker-1b's requests are written in another order. */
    char driver[JOBS_POD_ROLE_MAX + 1], worker[JOBS_POD_ROLE_MAX + 1];
    role(pods[DRIVER], driver);
    role(pods[WORKER0], worker);
    char w1b[JOBS_POD_ROLE_MAX + 1];
    role(pods[WORKER1B], w1b);
    ck_assert_str_eq(worker, w1b);
    ck_assert_str_ne(driver, worker);
    ck_assert_uint_eq(g.nsets, 2);
    bool driver_first = strcmp(driver, worker) < 0;
    const jobs_podset_t *d = &g.sets[driver_first ? 0 : 1], *w = &g.sets[driver_first ? 1 : 0];
    ck_assert_str_eq(d->name, driver);
    ck_assert_int_eq(d->count, 1);
    ck_assert_ptr_eq(d->tmpl, pods[DRIVER]);
    ck_assert_str_eq(w->name, worker);
    ck_assert_int_eq(w->count, 2);
    ck_assert_ptr_eq(w->tmpl, pods[WORKER0]);
    jobs_pod_group_fini(&g);
}
END_TEST

START_TEST(complete_when_enough_runnable)
{
    jobs_pod_group_t g;
    read_ok(&g, 3); /* driver, worker-0, the failed one */
    ck_assert_uint_eq(g.nrunnable, 2);
    ck_assert(!g.complete);
    ck_assert_str_eq(g.why, "'train' group has fewer runnable pods than expected");
    workload_t wl = {0};
    err_msg_t msg = {{0}};
    ck_assert_int_eq(jobs_pod_group_workload(&g, NULL, &wl, &msg), ERR_INVALID);
    ck_assert_str_eq(msg.text, g.why);
    jobs_pod_group_fini(&g);

    /* A pod deleted before it was scheduled does not count either. */
    json_object_set_new(json_object_get(pods[WORKER1B], "metadata"), "deletionTimestamp",
                        json_string("2026-12-01T11:00:00Z"));
    json_t *some[] = {pods[DRIVER], pods[WORKER0], pods[WORKER1B]};
    err_msg_t m2 = {{0}};
    ck_assert_int_eq(jobs_pod_group_read(some, 3, &g, &m2), ERR_OK);
    ck_assert_int_eq(g.verdict[2], JOBS_POD_INACTIVE);
    ck_assert(!g.complete);
    jobs_pod_group_fini(&g);
    /* ... unless it was (it is running, and will be counted until gone). */
    json_object_set_new(json_object_get(pods[WORKER1B], "spec"), "nodeName", json_string("n1"));
    ck_assert_int_eq(jobs_pod_group_read(some, 3, &g, &m2), ERR_OK);
    ck_assert(g.complete);
    jobs_pod_group_fini(&g);
}
END_TEST

START_TEST(fast_admission)
{
    for (size_t i = 0; i < NPODS; i++)
        json_object_set_new(jf_at(pods[i], "metadata annotations"), JOBS_POD_GROUP_FAST,
                            json_string("true"));
    jobs_pod_group_t g;
    read_ok(&g, 1); /* the driver alone */
    ck_assert(g.fast_admission);
    ck_assert(g.complete);
    ck_assert_uint_eq(g.nsets, 1); /* one pod set of the whole group, from the first pod */
    ck_assert_int_eq(g.sets[0].count, 3);
    char driver[JOBS_POD_ROLE_MAX + 1];
    role(pods[DRIVER], driver);
    ck_assert_str_eq(g.sets[0].name, driver);
    jobs_pod_group_fini(&g);
}
END_TEST

START_TEST(metadata_must_agree)
{
    jobs_pod_group_t g;
    err_msg_t msg = {{0}};
    json_object_set_new(jf_at(pods[WORKER0], "metadata annotations"), JOBS_POD_GROUP_TOTAL_COUNT,
                        json_string("4"));
    ck_assert_int_eq(jobs_pod_group_read(pods, NPODS, &g, &msg), ERR_INVALID);
    ck_assert_str_eq(msg.text, "pods 'train-driver' and 'train-worker-0' has different "
                               "'kueue.x-k8s.io/pod-group-total-count' values: 3!=4");
    jobs_pod_group_fini(&g);
    json_object_set_new(jf_at(pods[WORKER0], "metadata annotations"), JOBS_POD_GROUP_TOTAL_COUNT,
                        json_string("3"));

    json_t *labels = json_deep_copy(jf_at(pods[WORKER1B], "metadata labels"));
    json_object_set_new(labels, "kueue.x-k8s.io/queue-name", json_string("other"));
    json_object_set_new(json_object_get(pods[WORKER1B], "metadata"), "labels", labels);
    ck_assert_int_eq(jobs_pod_group_read(pods, NPODS, &g, &msg), ERR_INVALID);
    ck_assert_str_eq(msg.text, "pods 'train-driver' and 'train-worker-1b' has different queue "
                               "names: lq-gpu!=other");
    jobs_pod_group_fini(&g);

    json_t *solo = jf_yaml("metadata: {name: a, labels: {kueue.x-k8s.io/pod-group-name: g}, "
                           "annotations: {kueue.x-k8s.io/pod-group-total-count: '0'}}");
    ck_assert_int_eq(jobs_pod_group_read(&solo, 1, &g, &msg), ERR_INVALID);
    ck_assert_str_eq(msg.text, "incorrect annotation value 'kueue.x-k8s.io/pod-group-total-count=0'"
                               ": group total count should be greater than zero");
    jobs_pod_group_fini(&g);
    json_object_set_new(jf_at(solo, "metadata annotations"), JOBS_POD_GROUP_TOTAL_COUNT,
                        json_string("two"));
    int32_t tc = 7;
    ck_assert_int_eq(jobs_pod_group_total_count(solo, &tc, &msg), ERR_INVALID);
    ck_assert_int_eq(tc, 7);
    json_object_clear(jf_at(solo, "metadata annotations"));
    ck_assert_int_eq(jobs_pod_group_total_count(solo, &tc, &msg), ERR_INVALID);
    ck_assert_str_eq(msg.text, "failed to extract 'kueue.x-k8s.io/pod-group-total-count' "
                               "annotation");
    ck_assert_str_eq(jobs_pod_group_name(pods[DRIVER]), "train");
    ck_assert_ptr_null(jobs_pod_group_name(jf_at(docs, "0 spec")));
    json_decref(solo);
}
END_TEST

START_TEST(group_workload)
{
    jobs_pod_group_t g;
    read_ok(&g, NPODS);
    workload_t wl = {0};
    err_msg_t msg = {{0}};
    const char *copy[] = {"team", NULL};
    ck_assert_msg(jobs_pod_group_workload(&g, copy, &wl, &msg) == ERR_OK, "%s", msg.text);
    ck_assert_str_eq(wl.meta.name, "train"); /* the group's name, not hashed */
    ck_assert_str_eq(wl.meta.namespace, "team-a");
    ck_assert_str_eq(wl.queue_name, "lq-gpu");
    ck_assert_str_eq(kv_list_get(&wl.meta.annotations, JOBS_POD_IS_GROUP_WORKLOAD), "true");
    ck_assert_ptr_null(kv_list_get(&wl.meta.labels, "kueue.x-k8s.io/job-uid"));
    ck_assert_str_eq(kv_list_get(&wl.meta.labels, "team"), "vision");
    ck_assert_uint_eq(wl.npod_sets, 2);
    for (size_t i = 0; i < 2; i++) {
        ck_assert_str_eq(wl.pod_sets[i].name, g.sets[i].name);
        ck_assert_int_eq(wl.pod_sets[i].count, g.sets[i].count);
    }
    workload_fini(&wl);

    /* A label to copy must agree across the group. */
    json_t *labels = json_deep_copy(jf_at(pods[WORKER0], "metadata labels"));
    json_object_set_new(labels, "team", json_string("speech"));
    json_object_set_new(json_object_get(pods[WORKER0], "metadata"), "labels", labels);
    ck_assert_int_eq(jobs_pod_group_workload(&g, copy, &wl, &msg), ERR_INVALID);
    jobs_pod_group_fini(&g);
}
END_TEST

START_TEST(start_pods_by_role)
{
    jobs_pod_group_t g;
    read_ok(&g, NPODS);
    json_t *ns_d = json_pack("{s:s}", "pool", "cpu"), *ns_w = json_pack("{s:s}", "pool", "a100");
    jobs_start_info_t info[2];
    for (size_t i = 0; i < 2; i++) {
        bool is_driver = g.sets[i].tmpl == pods[DRIVER];
        info[i] = (jobs_start_info_t){.name = g.sets[i].name,
                                      .local_queue = "lq-gpu",
                                      .cluster_queue = "cq-gpu",
                                      .workload = "train",
                                      .node_selector = is_driver ? ns_d : ns_w};
    }
    err_msg_t msg = {{0}};
    bool changed = false;
    const size_t kept[] = {DRIVER, WORKER0, WORKER1B};
    for (size_t k = 0; k < 3; k++) {
        json_t *p = pods[kept[k]];
        ck_assert_msg(jobs_pod_group_start_pod(p, info, 2, &changed, &msg) == ERR_OK, "%s",
                      msg.text);
        ck_assert(changed);
        ck_assert(!jobs_pod_gated(p));
        ck_assert_str_eq(jf_str(p, "spec nodeSelector pool"), kept[k] == DRIVER ? "cpu" : "a100");
        ck_assert_str_eq(jf_str(p, "metadata labels kueue.x-k8s.io/podset"), "main");
    }
    /* Released already: left alone. */
    ck_assert_int_eq(jobs_pod_group_start_pod(pods[DRIVER], info, 2, &changed, &msg), ERR_OK);
    ck_assert(!changed);
    /* A worker, with an admission that names only the driver's role. */
    const jobs_start_info_t *driver_only = g.sets[0].tmpl == pods[DRIVER] ? &info[0] : &info[1];
    ck_assert_int_eq(jobs_pod_group_start_pod(pods[EXTRA], driver_only, 1, &changed, &msg),
                     ERR_INVALID);
    ck_assert_ptr_nonnull(strstr(msg.text, "podSetInfo with the name"));
    ck_assert(jobs_pod_gated(pods[EXTRA]));
    json_decref(ns_d);
    json_decref(ns_w);
    jobs_pod_group_fini(&g);
}
END_TEST

static void set_phase(json_t *pod, const char *phase, bool ready)
{
    json_t *st = json_pack("{s:s,s:[{s:s,s:s}]}", "phase", phase, "conditions", "type", "Ready",
                           "status", ready ? "True" : "False");
    json_object_set_new(pod, "status", st);
}

START_TEST(finished_active_ready)
{
    jobs_pod_group_t g;
    json_t *three[] = {pods[DRIVER], pods[WORKER0], pods[WORKER1B]};
    char message[64] = "";
    err_msg_t msg = {{0}};

    ck_assert_int_eq(jobs_pod_group_read(three, 3, &g, &msg), ERR_OK);
    ck_assert(!jobs_pod_group_active(&g));
    ck_assert(!jobs_pod_group_pods_ready(&g));
    ck_assert_int_eq(jobs_pod_group_phase(&g, message, sizeof(message)), JOBS_RUNNING);
    jobs_pod_group_fini(&g);

    for (size_t i = 0; i < 3; i++)
        set_phase(three[i], "Running", true);
    ck_assert_int_eq(jobs_pod_group_read(three, 3, &g, &msg), ERR_OK);
    ck_assert(jobs_pod_group_active(&g));
    ck_assert(jobs_pod_group_pods_ready(&g));
    jobs_pod_group_fini(&g);

    for (size_t i = 0; i < 3; i++)
        set_phase(three[i], "Succeeded", false);
    ck_assert_int_eq(jobs_pod_group_read(three, 3, &g, &msg), ERR_OK);
    ck_assert(!jobs_pod_group_active(&g));
    ck_assert_int_eq(jobs_pod_group_phase(&g, message, sizeof(message)), JOBS_SUCCEEDED);
    ck_assert_str_eq(message, "Pods succeeded: 3/3.");
    jobs_pod_group_fini(&g);

    /* Succeeded pods give their quota back, per role. */
    jobs_reclaimable_t rec[JOBS_PODSETS_MAX];
    size_t nrec = 99;
    ck_assert_int_eq(jobs_pod_group_read(three, 3, &g, &msg), ERR_OK);
    ck_assert_int_eq(jobs_pod_group_reclaimable(&g, rec, &nrec, &msg), ERR_OK);
    ck_assert_uint_eq(nrec, 2);
    char worker[JOBS_POD_ROLE_MAX + 1];
    role(three[1], worker);
    ck_assert_str_eq(rec[1].name, worker);
    ck_assert_int_eq(rec[0].count, 1);
    ck_assert_int_eq(rec[1].count, 2);
    jobs_pod_group_fini(&g);

    /* One failed: not finished while it may be replaced... */
    set_phase(three[2], "Failed", false);
    ck_assert_int_eq(jobs_pod_group_read(three, 3, &g, &msg), ERR_OK);
    ck_assert_int_eq(jobs_pod_group_phase(&g, message, sizeof(message)), JOBS_RUNNING);
    jobs_pod_group_fini(&g);
    /* ... but finished (Kueue says success) once a pod says it is not retriable. */
    json_object_set_new(jf_at(three[0], "metadata annotations"), JOBS_POD_RETRIABLE_IN_GROUP,
                        json_string("false"));
    ck_assert_int_eq(jobs_pod_group_read(three, 3, &g, &msg), ERR_OK);
    ck_assert(g.unretriable);
    ck_assert_int_eq(jobs_pod_group_phase(&g, message, sizeof(message)), JOBS_SUCCEEDED);
    ck_assert_str_eq(message, "Pods succeeded: 2/3.");
    jobs_pod_group_fini(&g);

    /* A serving group never finishes. */
    json_object_set_new(jf_at(three[0], "metadata annotations"), JOBS_POD_GROUP_SERVING,
                        json_string("true"));
    ck_assert_int_eq(jobs_pod_group_read(three, 3, &g, &msg), ERR_OK);
    ck_assert(g.serving);
    ck_assert_int_eq(jobs_pod_group_phase(&g, NULL, 0), JOBS_RUNNING);
    ck_assert_int_eq(jobs_pod_group_reclaimable(&g, rec, &nrec, &msg), ERR_OK);
    ck_assert_uint_eq(nrec, 0); /* a serving group keeps its quota */
    jobs_pod_group_fini(&g);
}
END_TEST

/* Every allocation of reading a group and building its Workload fails in turn: ERR_NOMEM each
 * time, nothing leaked (ASan), and success once none fails. */
START_TEST(out_of_memory)
{
    util_alloc_install();
    for (long n = 1;; n++) {
        jobs_pod_group_t g;
        workload_t wl = {0};
        err_msg_t msg = {{0}};
        oom_fail_at(n);
        err_t rc = jobs_pod_group_read(pods, NPODS, &g, &msg);
        if (rc == ERR_OK)
            rc = jobs_pod_group_workload(&g, NULL, &wl, &msg);
        long made = oom_count();
        oom_fail_at(0);
        size_t nsets = wl.npod_sets;
        jobs_pod_group_fini(&g);
        workload_fini(&wl);
        if (made < n) {
            ck_assert_msg(rc == ERR_OK, "%s", msg.text);
            ck_assert_uint_eq(nsets, 2);
            break;
        }
        ck_assert_msg(rc == ERR_NOMEM, "allocation %ld: %d %s", n, rc, msg.text);
    }
    util_alloc_install();
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("jobs_podgroup");
    TCase *tc = tcase_create("podgroup");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, verdicts_and_pod_sets);
    tcase_add_test(tc, complete_when_enough_runnable);
    tcase_add_test(tc, fast_admission);
    tcase_add_test(tc, metadata_must_agree);
    tcase_add_test(tc, group_workload);
    tcase_add_test(tc, start_pods_by_role);
    tcase_add_test(tc, finished_active_ready);
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
