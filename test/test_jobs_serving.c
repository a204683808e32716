/* test_jobs_serving -- Deployment, StatefulSet and LeaderWorkerSet admitted through their Pods. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "jobs/kind_serving.h"

#include "jobs/podgroup.h"
#include "jobs_fixtures.h"

#include <check.h>
#include <stdio.h>
#include <string.h>

static const jobs_kind_t *const D = &jobs_kind_deployment;
static const jobs_kind_t *const S = &jobs_kind_statefulset;
static const jobs_kind_t *const L = &jobs_kind_leaderworkerset;

/* serving.yaml: 0 Deployment, 1 StatefulSet, 2 LeaderWorkerSet, 3 an LWS worker Pod, 4 an STS
 * Pod. */

START_TEST(webhook_marks_the_templates)
{
    err_msg_t msg = {{0}};
    json_t *d = jf_doc("serving.yaml", 0);
    ck_assert(!D->suspended(d));
    ck_assert_int_eq(jobs_serving_default(D, d, &msg), ERR_OK);
    ck_assert(D->suspended(d));
    json_t *t = jf_at(d, "spec template metadata");
    ck_assert_str_eq(jf_str(t, "annotations kueue.x-k8s.io/pod-suspending-parent"), "deployment");
    ck_assert_str_eq(jf_str(t, "labels kueue.x-k8s.io/managed"), "true");
    ck_assert_str_eq(jf_str(t, "labels kueue.x-k8s.io/queue-name"), "lq-serve");
    ck_assert_str_eq(jf_str(t, "labels kueue.x-k8s.io/priority-class"), "prod");
    ck_assert_str_eq(jf_str(t, "labels app"), "api");
    /* Released pod by pod, never as a whole. */
    ck_assert_int_eq(D->set_suspended(d, false, &msg), ERR_UNSUPPORTED);
    ck_assert(D->suspended(d));
    json_decref(d);

    json_t *s = jf_doc("serving.yaml", 1);
    ck_assert_int_eq(S->set_suspended(s, true, &msg), ERR_OK); /* = the webhook's mark */
    t = jf_at(s, "spec template metadata");
    ck_assert_str_eq(jf_str(t, "annotations kueue.x-k8s.io/pod-suspending-parent"), "statefulset");
    ck_assert_ptr_null(jf_at(t, "labels kueue.x-k8s.io/queue-name")); /* the pod reconciler's */
    ck_assert(S->suspended(s));
    ck_assert(!S->skip(s));
    json_decref(s);

    json_t *l = jf_doc("serving.yaml", 2);
    ck_assert_int_eq(jobs_serving_default(L, l, &msg), ERR_OK);
    ck_assert(L->suspended(l));
    const char *which[] = {"leaderTemplate", "workerTemplate"};
    for (size_t i = 0; i < 2; i++) {
        char path[128];
        snprintf(path, sizeof(path), "spec leaderWorkerTemplate %s metadata", which[i]);
        t = jf_at(l, path);
        ck_assert_str_eq(jf_str(t, "annotations kueue.x-k8s.io/pod-suspending-parent"),
                         "leaderworkerset.x-k8s.io/leaderworkerset");
        ck_assert_str_eq(jf_str(t, "annotations kueue.x-k8s.io/pod-group-serving"), "true");
        ck_assert_str_eq(jf_str(t, "labels kueue.x-k8s.io/queue-name"), "lq-serve");
        ck_assert_str_eq(jf_str(t, "labels kueue.x-k8s.io/priority-class"), "prod");
    }
    ck_assert_int_eq(jobs_serving_default(&jobs_kind_pod, l, &msg), ERR_INVALID);
    json_decref(l);
}
END_TEST

START_TEST(pod_sets_of_one_workload)
{
    jobs_podset_t sets[JOBS_PODSETS_MAX];
    json_t *d = jf_doc("serving.yaml", 0), *s = jf_doc("serving.yaml", 1),
           *l = jf_doc("serving.yaml", 2);

    ck_assert_uint_eq(jf_pod_sets(D, d, sets), 1); /* one Pod's Workload */
    ck_assert_str_eq(sets[0].name, "main");
    ck_assert_int_eq(sets[0].count, 1);
    ck_assert_int_eq(jobs_serving_workloads(D, d), 3);

    ck_assert_uint_eq(jf_pod_sets(S, s, sets), 1);
    ck_assert_str_eq(sets[0].name, "main");
    ck_assert_int_eq(sets[0].count, 4);
    ck_assert_ptr_eq(sets[0].tmpl, jf_at(s, "spec template"));
    ck_assert_int_eq(jobs_serving_workloads(S, s), 1);
    json_object_set_new(json_object_get(s, "spec"), "replicas", json_integer(0));
    ck_assert_int_eq(jobs_serving_workloads(S, s), 0); /* scaled to zero: no Workload */

    ck_assert_uint_eq(jf_pod_sets(L, l, sets), 2);
    ck_assert_str_eq(sets[0].name, "leader");
    ck_assert_int_eq(sets[0].count, 1);
    ck_assert_str_eq(sets[1].name, "worker");
    ck_assert_int_eq(sets[1].count, 3);
    ck_assert_str_eq(sets[1].path, "spec.leaderWorkerTemplate.workerTemplate");
    ck_assert_int_eq(jobs_serving_workloads(L, l), 2);

    /* The Workload's copies: LeaderWorkerSet's own keys dropped, but its name label. */
    json_t *copy = json_deep_copy(sets[1].tmpl);
    err_msg_t msg = {{0}};
    ck_assert_int_eq(L->podset_template(l, 1, copy, &msg), ERR_OK);
    ck_assert_str_eq(jf_str(copy, "metadata labels leaderworkerset.sigs.k8s.io/name"), "llm");
    ck_assert_ptr_null(
        jf_at(copy, "metadata labels leaderworkerset.sigs.k8s.io/template-revision-hash"));
    ck_assert_str_eq(jf_str(copy, "metadata labels role"), "worker");
    json_decref(copy);
    copy = json_deep_copy(sets[0].tmpl);
    ck_assert_int_eq(L->podset_template(l, 0, copy, &msg), ERR_OK);
    ck_assert_uint_eq(json_object_size(jf_at(copy, "metadata annotations")), 0);
    json_decref(copy);

    /* Without a leader template: one pod set "main" of size. */
    json_object_del(jf_at(l, "spec leaderWorkerTemplate"), "leaderTemplate");
    ck_assert_uint_eq(jf_pod_sets(L, l, sets), 1);
    ck_assert_str_eq(sets[0].name, "main");
    ck_assert_int_eq(sets[0].count, 4);

    json_decref(d);
    json_decref(s);
    json_decref(l);
}
END_TEST

START_TEST(workloads_as_kueue_names_them)
{
    err_msg_t msg = {{0}};
    workload_t wl = {0};
    json_t *s = jf_doc("serving.yaml", 1), *l = jf_doc("serving.yaml", 2),
           *d = jf_doc("serving.yaml", 0);

    ck_assert_msg(jobs_serving_workload(S, s, 0, NULL, &wl, &msg) == ERR_OK, "%s", msg.text);
    /* sha1("StatefulSet\napps\nweb\n<uid>")[:5] */
    ck_assert_str_eq(wl.meta.name, "statefulset-web-5cb30");
    ck_assert_str_eq(wl.queue_name, "lq-serve");
    ck_assert_str_eq(kv_list_get(&wl.meta.annotations, JOBS_POD_IS_GROUP_WORKLOAD), "true");
    ck_assert_str_eq(kv_list_get(&wl.meta.annotations, "kueue.x-k8s.io/job-owner-gvk"),
                     "apps/v1, Kind=StatefulSet");
    ck_assert_str_eq(kv_list_get(&wl.meta.annotations, "kueue.x-k8s.io/job-owner-name"), "web");
    ck_assert_uint_eq(wl.npod_sets, 1);
    ck_assert_int_eq(wl.pod_sets[0].count, 4);
    workload_fini(&wl);
    ck_assert_int_eq(jobs_serving_workload(S, s, 1, NULL, &wl, &msg), ERR_INVALID);

    ck_assert_msg(jobs_serving_workload(L, l, 1, NULL, &wl, &msg) == ERR_OK, "%s", msg.text);
    /* sha1("LeaderWorkerSet\nleaderworkerset.x-k8s.io\nllm-1\n<uid>")[:5] */
    ck_assert_str_eq(wl.meta.name, "leaderworkerset-llm-1-626f1");
    ck_assert_str_eq(kv_list_get(&wl.meta.annotations, "kueue.x-k8s.io/component-workload-index"),
                     "1");
    ck_assert_uint_eq(wl.npod_sets, 2);
    ck_assert_str_eq(wl.pod_sets[0].name, "leader");
    ck_assert_str_eq(wl.pod_sets[1].name, "worker");
    ck_assert_int_eq(wl.pod_sets[1].count, 3);
    workload_fini(&wl);

    ck_assert_int_eq(jobs_serving_workload(D, d, 0, NULL, &wl, &msg), ERR_INVALID);
    json_decref(s);
    json_decref(l);
    json_decref(d);
}
END_TEST

START_TEST(owner_marks_its_pods)
{
    err_msg_t msg = {{0}};
    bool changed = false;
    json_t *s = jf_doc("serving.yaml", 1), *pod = jf_doc("serving.yaml", 4);
    ck_assert_int_eq(jobs_serving_pod_default(S, s, pod, false, &changed, &msg), ERR_OK);
    ck_assert(changed);
    json_t *m = jf_at(pod, "metadata");
    ck_assert_str_eq(jf_str(m, "labels kueue.x-k8s.io/managed"), "true");
    ck_assert_str_eq(jf_str(m, "labels kueue.x-k8s.io/queue-name"), "lq-serve");
    ck_assert_str_eq(jf_str(m, "labels kueue.x-k8s.io/pod-group-name"), "statefulset-web-5cb30");
    ck_assert_str_eq(jf_str(m, "labels kueue.x-k8s.io/prebuilt-workload-name"),
                     "statefulset-web-5cb30");
    ck_assert_str_eq(jf_str(m, "annotations kueue.x-k8s.io/pod-group-total-count"), "4");
    ck_assert_str_eq(jf_str(m, "annotations kueue.x-k8s.io/pod-group-fast-admission"), "true");
    ck_assert_str_eq(jf_str(m, "annotations kueue.x-k8s.io/pod-group-serving"), "true");
    ck_assert_str_eq(jf_str(m, "annotations kueue.x-k8s.io/role-hash"), "main");
    ck_assert_str_eq(jf_str(m, "annotations kueue.x-k8s.io/pod-group-pod-index-label"),
                     "apps.kubernetes.io/pod-index");
    /* Marked: the next pass changes nothing. */
    ck_assert_int_eq(jobs_serving_pod_default(S, s, pod, false, &changed, &msg), ERR_OK);
    ck_assert(!changed);

    /* The marked Pod reads as a complete fast-admission group of the StatefulSet's Workload. */
    jobs_pod_group_t g;
    ck_assert_int_eq(jobs_pod_group_read(&pod, 1, &g, &msg), ERR_OK);
    ck_assert(g.complete && g.serving && g.fast_admission);
    ck_assert_uint_eq(g.nsets, 1);
    ck_assert_str_eq(g.sets[0].name, "main");
    ck_assert_int_eq(g.sets[0].count, 4);
    jobs_pod_group_fini(&g);
    json_decref(pod);
    json_decref(s);

    json_t *l = jf_doc("serving.yaml", 2);
    pod = jf_doc("serving.yaml", 3);
    ck_assert_int_eq(jobs_serving_pod_default(L, l, pod, false, &changed, &msg), ERR_OK);
    ck_assert(changed);
    m = jf_at(pod, "metadata");
    ck_assert_str_eq(jf_str(m, "labels kueue.x-k8s.io/pod-group-name"),
                     "leaderworkerset-llm-1-626f1");
    ck_assert_str_eq(jf_str(m, "annotations kueue.x-k8s.io/pod-group-total-count"), "4");
    ck_assert_str_eq(jf_str(m, "annotations kueue.x-k8s.io/role-hash"), "worker");
    ck_assert_ptr_null(jf_at(m, "annotations kueue.x-k8s.io/pod-group-fast-admission"));
    json_decref(pod);

    /* The leader (no leader-name annotation); and a Pod not yet in a group is left alone. */
    pod = jf_doc("serving.yaml", 3);
    json_object_del(jf_at(pod, "metadata annotations"), JOBS_LWS_LEADER_NAME);
    ck_assert_int_eq(jobs_serving_pod_default(L, l, pod, false, &changed, &msg), ERR_OK);
    ck_assert_str_eq(jf_str(pod, "metadata annotations kueue.x-k8s.io/role-hash"), "leader");
    json_decref(pod);
    pod = jf_doc("serving.yaml", 3);
    json_object_del(jf_at(pod, "metadata labels"), JOBS_LWS_GROUP_INDEX);
    ck_assert_int_eq(jobs_serving_pod_default(L, l, pod, false, &changed, &msg), ERR_OK);
    ck_assert(!changed);
    json_decref(pod);
    json_decref(l);

    /* A Deployment's Pods are single Pods: nothing to add. */
    json_t *d = jf_doc("serving.yaml", 0);
    pod = jf_doc("serving.yaml", 4);
    ck_assert_int_eq(jobs_serving_pod_default(D, d, pod, false, &changed, &msg), ERR_OK);
    ck_assert(!changed);
    json_decref(pod);
    json_decref(d);
}
END_TEST

/* A Deployment's Pod end to end: the template the webhook marked, the Pod the ReplicaSet creates
 * from it, the pod webhook's gate, and the Pod's own Workload. */
START_TEST(deployment_pod_is_a_single_pod)
{
    err_msg_t msg = {{0}};
    json_t *d = jf_doc("serving.yaml", 0);
    ck_assert_int_eq(jobs_serving_default(D, d, &msg), ERR_OK);
    json_t *pod = json_deep_copy(jf_at(d, "spec template"));
    json_t *meta = json_object_get(pod, "metadata");
    json_object_set_new(meta, "name", json_string("api-7d9f-x2x"));
    json_object_set_new(meta, "namespace", json_string("team-a"));
    ck_assert_int_eq(jobs_pod_default(pod, &msg), ERR_OK);
    ck_assert(jobs_pod_gated(pod));
    ck_assert_ptr_null(jf_at(pod, "metadata finalizers")); /* suspended by its parent */
    ck_assert(!jobs_kind_pod.skip(pod));                   /* managed: the template says so */

    workload_t wl = {0};
    ck_assert_msg(jobs_workload_build(&jobs_kind_pod, pod, NULL, &wl, &msg) == ERR_OK, "%s",
                  msg.text);
    ck_assert_ptr_nonnull(strstr(wl.meta.name, "pod-api-7d9f-x2x-"));
    ck_assert_str_eq(wl.queue_name, "lq-serve");
    ck_assert_str_eq(wl.priority_class, "prod");
    ck_assert_uint_eq(wl.npod_sets, 1);
    ck_assert_int_eq(wl.pod_sets[0].count, 1);
    workload_fini(&wl);
    json_decref(pod);
    json_decref(d);
}
END_TEST

START_TEST(status_and_skip)
{
    json_t *s = jf_doc("serving.yaml", 1);
    const char *message = NULL;
    ck_assert_int_eq(S->phase(s, &message), JOBS_RUNNING);
    ck_assert(!S->active(s));
    json_object_set_new(s, "status", json_pack("{s:i}", "readyReplicas", 2));
    ck_assert(S->active(s));
    ck_assert(!S->pods_ready(s));
    json_object_set_new(s, "status", json_pack("{s:i}", "readyReplicas", 4));
    ck_assert(S->pods_ready(s));
    /* A StatefulSet another integration marked (LeaderWorkerSet's) is not this one's. */
    json_t *t = jf_at(s, "spec template metadata");
    json_object_set_new(
        t, "annotations",
        json_pack("{s:s}", JOBS_POD_SUSPENDING_PARENT, "leaderworkerset.x-k8s.io/leaderworkerset"));
    ck_assert(S->skip(s));
    json_decref(s);

    ck_assert_int_eq(D->admit, JOBS_ADMIT_PODS);
    ck_assert_int_eq(S->admit, JOBS_ADMIT_PODS);
    ck_assert_int_eq(L->admit, JOBS_ADMIT_PODS);
    ck_assert_str_eq(L->framework, "leaderworkerset.x-k8s.io/leaderworkerset");
    ck_assert_str_eq(D->framework, "deployment");
    ck_assert_str_eq(S->framework, "statefulset");
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("jobs_serving");
    TCase *tc = tcase_create("serving");
    tcase_add_test(tc, webhook_marks_the_templates);
    tcase_add_test(tc, pod_sets_of_one_workload);
    tcase_add_test(tc, workloads_as_kueue_names_them);
    tcase_add_test(tc, owner_marks_its_pods);
    tcase_add_test(tc, deployment_pod_is_a_single_pod);
    tcase_add_test(tc, status_and_skip);
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
