/* test_jobs_pod -- a plain Pod as Kueue's pod integration admits it: gate, role hash, stop. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "jobs/podgroup.h"
#include "util/alloc.h"

#include "jobs_fixtures.h"
#include "oom_wrap.h"

#include <check.h>
#include <string.h>

static const jobs_kind_t *const P = &jobs_kind_pod;

static void role_of(const json_t *pod, char *out)
{
    err_msg_t msg = {{0}};
    ck_assert_msg(jobs_pod_role_hash(pod, out, &msg) == ERR_OK, "%s", msg.text);
}

static bool has_gate(const json_t *pod, const char *name)
{
    size_t i;
    json_t *g;
    json_array_foreach(jf_at(pod, "spec schedulingGates"), i, g)
    {
        if (strcmp(json_string_value(json_object_get(g, "name")), name) == 0)
            return true;
    }
    return false;
}

/* Kueue's own test vectors (pod_webhook_test.go, pod_controller_test.go): a Pod of one container
 * with empty requests hashes to a9f06f3a, one requesting cpu "1" to dc85db45. */
START_TEST(role_hash_is_kueues)
{
    char role[JOBS_POD_ROLE_MAX + 1];
    json_t *pod = jf_doc("pods.yaml", 0);
    role_of(pod, role);
    ck_assert_str_eq(role, "a9f06f3a");
    json_decref(pod);

    pod = jf_doc("pods.yaml", 1); /* "1000m" is canonically "1" */
    role_of(pod, role);
    ck_assert_str_eq(role, "dc85db45");

    /* The annotation, when set, is the role. */
    json_object_set_new(jf_at(pod, "metadata"), "annotations",
                        json_pack("{s:s}", JOBS_POD_ROLE_HASH, "leader"));
    role_of(pod, role);
    ck_assert_str_eq(role, "leader");
    json_decref(pod);
}
END_TEST

/* A shape with every kind of value, hashed by Go's encoding/json with the same field types
 * (structs for tolerations and ports, maps for the rest): map keys sorted, quantities canonical,
 * <, >, &, U+2028 and control characters escaped as Go escapes them. */
START_TEST(role_hash_writes_json_as_go)
{
    const char *pod_json =
        "{\"metadata\": {\"name\": \"p\"}, \"spec\": {"
        "\"nodeSelector\": {\"zone\": \"a<b>&c\\u2028\\\"\\\\\\n\\u0001\", \"pool\": \"x\"},"
        "\"priority\": 0,"
        "\"tolerations\": [{\"key\": \"gpu\", \"operator\": \"Exists\", \"effect\": "
        "\"NoSchedule\"}],"
        "\"containers\": [{\"name\": \"c\", \"image\": \"i\","
        "  \"ports\": [{\"containerPort\": 80, \"protocol\": \"TCP\"}],"
        "  \"resources\": {\"requests\": {\"memory\": \"1024Mi\", \"cpu\": \"1\"}}}]}}";
    json_t *pod = json_loads(pod_json, 0, NULL);
    ck_assert_ptr_nonnull(pod);
    char role[JOBS_POD_ROLE_MAX + 1];
    role_of(pod, role);
    ck_assert_str_eq(role, "617c49d6");
    json_decref(pod);
}
END_TEST

START_TEST(role_hash_reads_only_the_shape)
{
    char a[JOBS_POD_ROLE_MAX + 1], b[JOBS_POD_ROLE_MAX + 1];
    const char *base = "metadata: {name: p}\nspec:\n  nodeSelector: {zone: a, pool: gpu}\n"
                       "  containers: [{name: c, image: x, resources: {requests: {cpu: '1', "
                       "memory: 1Gi}}, ports: [{containerPort: 80, protocol: TCP}]}]\n";
    json_t *p1 = jf_yaml(base);
    role_of(p1, a);

    /* Names, images, labels, volumes, map order: not the role. */
    json_t *p2 = jf_yaml("metadata: {name: q, labels: {x: y}}\nspec:\n  volumes: [{name: v}]\n"
                         "  nodeSelector: {pool: gpu, zone: a}\n"
                         "  containers: [{name: d, image: y, resources: {requests: {memory: "
                         "1024Mi, cpu: 1000m}, limits: {cpu: '4'}}, ports: [{containerPort: 80, "
                         "protocol: TCP}]}]\n");
    role_of(p2, b);
    ck_assert_str_eq(a, b);
    json_decref(p2);

    /* Each field of the shape changes it. */
    const char *changes[] = {
        "{\"nodeSelector\": {\"zone\": \"b\"}}",
        "{\"tolerations\": [{\"key\": \"gpu\", \"operator\": \"Exists\"}]}",
        "{\"priority\": 100}",
        "{\"runtimeClassName\": \"nvidia\"}",
        "{\"overhead\": {\"cpu\": \"100m\"}}",
        "{\"affinity\": {}}",
        "{\"topologySpreadConstraints\": []}",
        "{\"resourceClaims\": [{\"name\": \"gpu\"}]}",
        "{\"resources\": {\"requests\": {\"cpu\": \"2\"}}}",
        "{\"initContainers\": [{\"name\": \"i\"}]}",
    };
    for (size_t i = 0; i < sizeof(changes) / sizeof(changes[0]); i++) {
        json_t *p = json_deep_copy(p1);
        json_t *patch = json_loads(changes[i], 0, NULL);
        json_object_update(json_object_get(p, "spec"), patch);
        role_of(p, b);
        ck_assert_msg(strcmp(a, b) != 0, "%s did not change the role", changes[i]);
        json_decref(patch);
        json_decref(p);
    }
    json_decref(p1);
}
END_TEST

START_TEST(pod_is_its_own_template)
{
    json_t *pod = jf_doc("pods.yaml", 1);
    jobs_podset_t sets[JOBS_PODSETS_MAX];
    size_t n = 0;
    err_msg_t msg = {{0}};
    ck_assert_int_eq(P->pod_sets(pod, sets, &n, &msg), ERR_OK);
    ck_assert_uint_eq(n, 1);
    ck_assert_str_eq(sets[0].name, "main");
    ck_assert_int_eq(sets[0].count, 1);
    ck_assert_ptr_eq(sets[0].tmpl, pod);

    /* The Workload's copy: the spec alone, as Kueue's pod set. */
    json_t *copy = json_deep_copy(pod);
    ck_assert_int_eq(P->podset_template(pod, 0, copy, &msg), ERR_OK);
    ck_assert_uint_eq(json_object_size(copy), 1);
    ck_assert(json_equal(json_object_get(copy, "spec"), json_object_get(pod, "spec")));
    json_decref(copy);
    json_decref(pod);

    json_t *bad = jf_yaml("kind: Pod\nmetadata: {name: x}");
    ck_assert_int_eq(P->pod_sets(bad, sets, &n, &msg), ERR_INVALID);
    json_decref(bad);
}
END_TEST

START_TEST(gate_holds_and_releases)
{
    err_msg_t msg = {{0}};
    json_t *pod = jf_doc("pods.yaml", 1);
    ck_assert(jobs_pod_gated(pod));
    ck_assert(P->suspended(pod));
    ck_assert_int_eq(P->set_suspended(pod, true, &msg), ERR_OK); /* already gated */

    /* Release: Kueue's gate and the topology gate go, others stay. */
    ck_assert_int_eq(P->set_suspended(pod, false, &msg), ERR_OK);
    ck_assert(!jobs_pod_gated(pod));
    ck_assert(!P->suspended(pod));
    ck_assert(!has_gate(pod, JOBS_POD_TOPOLOGY_GATE));
    ck_assert(has_gate(pod, "example.com/other"));

    /* An existing Pod cannot be gated again: it is stopped by deletion. */
    ck_assert_int_eq(P->set_suspended(pod, true, &msg), ERR_UNSUPPORTED);
    ck_assert_ptr_nonnull(strstr(msg.text, "stopped by deletion"));
    ck_assert(!jobs_pod_gated(pod));
    ck_assert_int_eq(P->admit, JOBS_ADMIT_POD);

    /* The last gate removed: no empty list left behind. */
    json_t *p2 = jf_yaml("metadata: {name: x, uid: u}\n"
                         "spec: {schedulingGates: [{name: kueue.x-k8s.io/admission}]}");
    ck_assert_int_eq(P->set_suspended(p2, false, &msg), ERR_OK);
    ck_assert_ptr_null(jf_at(p2, "spec schedulingGates"));
    json_decref(p2);

    /* A Pod being created (no uid) can be gated. */
    json_t *fresh = jf_doc("pods.yaml", 0);
    ck_assert(!P->suspended(fresh));
    ck_assert_int_eq(P->set_suspended(fresh, true, &msg), ERR_OK);
    ck_assert(jobs_pod_gated(fresh));
    json_decref(fresh);
    json_decref(pod);
}
END_TEST

START_TEST(phase_ready_skip)
{
    json_t *pod = jf_doc("pods.yaml", 1);
    const char *message = NULL;
    ck_assert_int_eq(P->phase(pod, &message), JOBS_RUNNING);
    ck_assert(!P->skip(pod)); /* managed=true */
    ck_assert(!P->pods_ready(pod));
    ck_assert(!P->active(pod)); /* a single Pod never holds its quota once stopped */

    json_t *status = json_object_get(pod, "status");
    json_object_set_new(status, "phase", json_string("Running"));
    json_object_set_new(status, "conditions",
                        json_pack("[{s:s,s:s},{s:s,s:s}]", "type", "Initialized", "status", "True",
                                  "type", "Ready", "status", "True"));
    ck_assert(P->pods_ready(pod));
    json_object_set_new(status, "phase", json_string("Succeeded"));
    ck_assert_int_eq(P->phase(pod, &message), JOBS_SUCCEEDED);
    ck_assert(P->suspended(pod)); /* terminated: runs no more */
    json_object_set_new(status, "phase", json_string("Failed"));
    json_object_set_new(status, "message", json_string("OOMKilled"));
    ck_assert_int_eq(P->phase(pod, &message), JOBS_FAILED);
    ck_assert_str_eq(message, "OOMKilled");

    json_object_set_new(jf_at(pod, "metadata labels"), JOBS_POD_MANAGED, json_string("false"));
    ck_assert(P->skip(pod));
    json_object_del(jf_at(pod, "metadata labels"), JOBS_POD_MANAGED);
    ck_assert(P->skip(pod));
    json_decref(pod);
}
END_TEST

START_TEST(webhook_default)
{
    err_msg_t msg = {{0}};
    json_t *pod = jf_doc("pods.yaml", 0);
    ck_assert_int_eq(jobs_pod_default(pod, &msg), ERR_OK);
    ck_assert_str_eq(jf_str(pod, "metadata labels kueue.x-k8s.io/managed"), "true");
    ck_assert_str_eq(jf_str(pod, "metadata finalizers 0"), JOBS_POD_MANAGED);
    ck_assert(jobs_pod_gated(pod));
    ck_assert_str_eq(jf_str(pod, "metadata annotations kueue.x-k8s.io/role-hash"), "a9f06f3a");
    /* Twice is once. */
    ck_assert_int_eq(jobs_pod_default(pod, &msg), ERR_OK);
    ck_assert_uint_eq(json_array_size(jf_at(pod, "metadata finalizers")), 1);
    ck_assert_uint_eq(json_array_size(jf_at(pod, "spec schedulingGates")), 1);
    json_decref(pod);

    /* A Pod its parent suspends (a Deployment's): gated, no label, no finalizer. */
    pod = jf_doc("pods.yaml", 0);
    json_object_set_new(jf_at(pod, "metadata"), "annotations",
                        json_pack("{s:s}", JOBS_POD_SUSPENDING_PARENT, "deployment"));
    ck_assert_int_eq(jobs_pod_default(pod, &msg), ERR_OK);
    ck_assert(jobs_pod_gated(pod));
    ck_assert_ptr_null(jf_at(pod, "metadata labels kueue.x-k8s.io/managed"));
    ck_assert_ptr_null(jf_at(pod, "metadata finalizers"));
    ck_assert_str_eq(jf_str(pod, "metadata annotations kueue.x-k8s.io/role-hash"), "a9f06f3a");
    json_decref(pod);
}
END_TEST

START_TEST(stop_deletes)
{
    json_t *pod = jf_doc("pods.yaml", 1);
    ck_assert(!jobs_pod_stop_needed(pod, false)); /* still gated: nothing runs */
    ck_assert(jobs_pod_stop_needed(pod, true));   /* the Workload is gone: delete anyway */
    err_msg_t msg = {{0}};
    ck_assert_int_eq(P->set_suspended(pod, false, &msg), ERR_OK);
    ck_assert(jobs_pod_stop_needed(pod, false)); /* released: stop = delete */
    json_object_set_new(jf_at(pod, "metadata"), "deletionTimestamp",
                        json_string("2026-12-01T10:00:00Z"));
    ck_assert(!jobs_pod_stop_needed(pod, true)); /* already going */
    json_decref(pod);

    json_t *patch = jobs_pod_termination_condition("WorkloadEvicted", "Preempted to accommodate",
                                                   "2026-12-01T10:00:00Z");
    ck_assert_ptr_nonnull(patch);
    ck_assert_str_eq(jf_str(patch, "status conditions 0 type"), "TerminationTarget");
    ck_assert_str_eq(jf_str(patch, "status conditions 0 status"), "True");
    ck_assert_str_eq(jf_str(patch, "status conditions 0 reason"), "WorkloadEvicted");
    ck_assert_str_eq(jf_str(patch, "status conditions 0 message"), "Preempted to accommodate");
    ck_assert_str_eq(jf_str(patch, "status conditions 0 lastTransitionTime"),
                     "2026-12-01T10:00:00Z");
    json_decref(patch);
}
END_TEST

/* Through the framework: the Workload of a Pod, and its start. */
START_TEST(workload_and_start)
{
    err_msg_t msg = {{0}};
    json_t *pod = jf_doc("pods.yaml", 1);
    workload_t wl = {0};
    ck_assert_msg(jobs_workload_build(P, pod, NULL, &wl, &msg) == ERR_OK, "%s", msg.text);
    ck_assert_ptr_nonnull(strstr(wl.meta.name, "pod-notebook-"));
    ck_assert_str_eq(wl.queue_name, "lq-gpu");
    ck_assert_uint_eq(wl.npod_sets, 1);
    ck_assert_str_eq(wl.pod_sets[0].name, "main");
    ck_assert_int_eq(wl.pod_sets[0].count, 1);
    workload_fini(&wl);

    json_t *ns = json_pack("{s:s}", "pool", "a100");
    jobs_start_info_t info = {.name = "main",
                              .local_queue = "lq-gpu",
                              .cluster_queue = "cq-gpu",
                              .workload = "pod-notebook-12345",
                              .node_selector = ns};
    ck_assert_msg(jobs_start(P, pod, &info, 1, &msg) == ERR_OK, "%s", msg.text);
    ck_assert(!jobs_pod_gated(pod));
    ck_assert_str_eq(jf_str(pod, "spec nodeSelector pool"), "a100");
    ck_assert_str_eq(jf_str(pod, "metadata labels kueue.x-k8s.io/podset"), "main");
    ck_assert_str_eq(jf_str(pod, "metadata annotations kueue.x-k8s.io/workload"),
                     "pod-notebook-12345");
    json_decref(ns);
    json_decref(pod);
}
END_TEST

/* Every allocation of the webhook's defaulting (role hash included) fails in turn. */
START_TEST(out_of_memory)
{
    json_t *orig = jf_doc("pods.yaml", 0);
    util_alloc_install();
    for (long n = 1;; n++) {
        json_t *pod = json_deep_copy(orig);
        err_msg_t msg = {{0}};
        oom_fail_at(n);
        err_t rc = jobs_pod_default(pod, &msg);
        long made = oom_count();
        oom_fail_at(0);
        bool gated = jobs_pod_gated(pod);
        json_decref(pod);
        if (made < n) {
            ck_assert_msg(rc == ERR_OK, "%s", msg.text);
            ck_assert(gated);
            break;
        }
        ck_assert_msg(rc == ERR_NOMEM, "allocation %ld: %d %s", n, rc, msg.text);
    }
    util_alloc_install();
    json_decref(orig);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("jobs_pod");
    TCase *tc = tcase_create("pod");
    tcase_add_test(tc, role_hash_is_kueues);
    tcase_add_test(tc, role_hash_writes_json_as_go);
    tcase_add_test(tc, role_hash_reads_only_the_shape);
    tcase_add_test(tc, pod_is_its_own_template);
    tcase_add_test(tc, gate_holds_and_releases);
    tcase_add_test(tc, phase_ready_skip);
    tcase_add_test(tc, webhook_default);
    tcase_add_test(tc, stop_deletes);
    tcase_add_test(tc, workload_and_start);
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
