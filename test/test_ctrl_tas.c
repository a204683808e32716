/* test_ctrl_tas -- the operator's topology-aware scheduling against the in-memory API server:
 * Topologies watched and fed to the engine, Nodes watched from the first Topology, a Job placed
 * on a rack with its topologyAssignment written and its template pinned; a server without the
 * Topology CRD runs with TAS off, said once, quota alone. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "ctrl/ctrl.h"
#include "ctrl/problems.h"

#include "ctrl_fixture.h"
#include "fakeapi.h"
#include "jobs/job_workload.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define RACK "cloud.example.com/rack"
#define HOST "kubernetes.io/hostname"
#define REQ  "kueue.x-k8s.io/podset-required-topology"

/* A suspended Job `name` in ns/lq of `pods` pods of `cpu` cpus, asking for one rack. */
static void tas_job(fx_t *fx, const char *name, int pods, int cpu)
{
    char j[1024];

    snprintf(j, sizeof(j),
             "{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"metadata\":{\"name\":\"%s\","
             "\"namespace\":\"ns\",\"labels\":{\"kueue.x-k8s.io/queue-name\":\"lq\"}},\"spec\":"
             "{\"suspend\":true,\"parallelism\":%d,\"completions\":%d,\"template\":{\"metadata\":"
             "{\"annotations\":{\"" REQ "\":\"" RACK "\"}},\"spec\":{\"restartPolicy\":\"Never\","
             "\"containers\":[{\"name\":\"c\",\"image\":\"i\",\"resources\":{\"requests\":"
             "{\"cpu\":\"%d\"}}}]}}}}",
             name, pods, pods, cpu);
    fx_put(fx, j);
}

/* Node `name` in `rack` with 4 cpus, selected by flavor "default" (pool p1). */
static void node(fx_t *fx, const char *name, const char *rack)
{
    char n[1024];

    snprintf(n, sizeof(n),
             "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"%s\",\"labels\":"
             "{\"pool\":\"p1\",\"" RACK "\":\"%s\",\"" HOST "\":\"%s\"}},\"status\":{"
             "\"allocatable\":{\"cpu\":\"4\",\"pods\":\"110\"},\"conditions\":[{\"type\":"
             "\"Ready\",\"status\":\"True\"}]}}",
             name, rack, name);
    fx_put(fx, n);
}

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

static json_t *admission_of(fx_t *fx, const char *job_name)
{
    return json_object_get(json_object_get(workload_for(fx, job_name), "status"), "admission");
}

static json_t *template_of(fx_t *fx, const char *job_name)
{
    json_t *j = fakeapi_get_object(fx->fa, "jobs", "ns", job_name);
    return json_object_get(json_object_get(j, "spec"), "template");
}

static bool running(fx_t *fx, const char *job_name)
{
    json_t *j = fakeapi_get_object(fx->fa, "jobs", "ns", job_name);
    return admission_of(fx, job_name) != NULL &&
           json_is_false(json_object_get(json_object_get(j, "spec"), "suspend"));
}

/* The message of the Workload's QuotaReserved condition, or "". */
static const char *reserved_message(fx_t *fx, const char *job_name)
{
    json_t *c, *conds = json_object_get(json_object_get(workload_for(fx, job_name), "status"),
                                        "conditions");
    size_t i;

    json_array_foreach(conds, i, c)
    {
        const char *t = json_string_value(json_object_get(c, "type"));
        if (t != NULL && strcmp(t, "QuotaReserved") == 0)
            return json_string_value(json_object_get(c, "message"));
    }
    return "";
}

static bool wide_explained(fx_t *fx)
{
    return strstr(reserved_message(fx, "wide"), "allows to fit only 1 out of 2 pod(s)") != NULL;
}

static bool one_running(fx_t *fx)
{
    return running(fx, "one");
}

static bool plain_running(fx_t *fx)
{
    return running(fx, "plain");
}

/* Issue 17 in small: racks r1 and r2 of one 4-cpu node each; a 2-pod x 3-cpu Job asking for a
 * rack fits the quota but no rack: it waits with Kueue's message. A 1-pod Job is admitted onto
 * one node: the admission carries the topologyAssignment (v1beta2 slices), the Job starts
 * pinned to that rack and node (one domain: every level) with Kueue's TAS label. */
START_TEST(tas_places_and_pins)
{
    fx_t fx;
    json_t *ta, *tmpl, *sel, *labels;
    const char *host, *rack;

    fx_serve(&fx, NULL, 0);
    ck_assert_int_eq(fakeapi_register(fx.fa, "", "v1", "nodes", "Node", false, true), ERR_OK);
    ck_assert_int_eq(fakeapi_register(fx.fa, "", "v1", "pods", "Pod", true, true), ERR_OK);
    fx_queues(&fx, 16);
    fx_put(&fx, "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"ResourceFlavor\","
                "\"metadata\":{\"name\":\"default\"},\"spec\":{\"nodeLabels\":{\"pool\":\"p1\"},"
                "\"topologyName\":\"dc\"}}");
    node(&fx, "n1", "r1");
    node(&fx, "n2", "r2");
    fx_operate(&fx, NULL, NULL);
    /* The Topology arrives after the start: fed, and the Nodes watched from then on. */
    fx_put(&fx, "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"Topology\",\"metadata\":"
                "{\"name\":\"dc\"},\"spec\":{\"levels\":[{\"nodeLabel\":\"" RACK "\"},"
                "{\"nodeLabel\":\"" HOST "\"}]}}");
    tas_job(&fx, "wide", 2, 3);
    fx_run_until(&fx, wide_explained, 10, "wide pending with Kueue's TAS message");
    ck_assert_ptr_null(admission_of(&fx, "wide"));
    ck_assert_ptr_nonnull(strstr(reserved_message(&fx, "wide"),
                                 "couldn't assign flavors to pod set main: "
                                 "topology \"dc\" allows to fit only 1 out of 2"));

    tas_job(&fx, "one", 1, 3);
    fx_run_until(&fx, one_running, 10, "one admitted and started");
    ta = json_object_get(
        json_array_get(json_object_get(admission_of(&fx, "one"), "podSetAssignments"), 0),
        "topologyAssignment");
    ck_assert_ptr_nonnull(ta);
    ck_assert_str_eq(json_string_value(json_array_get(json_object_get(ta, "levels"), 0)), HOST);
    ck_assert_int_eq(json_integer_value(json_object_get(
                         json_array_get(json_object_get(ta, "slices"), 0), "domainCount")),
                     1);
    tmpl = template_of(&fx, "one");
    sel = json_object_get(json_object_get(tmpl, "spec"), "nodeSelector");
    labels = json_object_get(json_object_get(tmpl, "metadata"), "labels");
    host = json_string_value(json_object_get(sel, HOST));
    rack = json_string_value(json_object_get(sel, RACK));
    ck_assert_ptr_nonnull(host);
    ck_assert_ptr_nonnull(rack);
    ck_assert_str_eq(rack, strcmp(host, "n1") == 0 ? "r1" : "r2");
    ck_assert_str_eq(json_string_value(json_object_get(sel, "pool")), "p1");
    ck_assert_str_eq(json_string_value(json_object_get(labels, "kueue.x-k8s.io/tas")), "true");
    ck_assert_ptr_null(admission_of(&fx, "wide"));
    fx_stop(&fx);
}
END_TEST

/* The host of the first domain of the first pod set's topologyAssignment of Job `job`'s
 * Workload, as v1beta2 slices encode it (universal value or the first of the values), or NULL. */
static const char *first_host(fx_t *fx, const char *job)
{
    json_t *ta = json_object_get(
        json_array_get(json_object_get(admission_of(fx, job), "podSetAssignments"), 0),
        "topologyAssignment");
    json_t *sl = json_array_get(json_object_get(ta, "slices"), 0);
    json_t *vals = json_array_get(json_object_get(sl, "valuesPerLevel"), 0);
    const char *u = json_string_value(json_object_get(vals, "universal"));
    json_t *roots = json_object_get(json_object_get(vals, "individual"), "roots");

    return u != NULL ? u : json_string_value(json_array_get(roots, 0));
}

static bool one_on_a2(fx_t *fx)
{
    const char *h = first_host(fx, "one");
    return h != NULL && strcmp(h, "a2") == 0;
}

static bool one_on_b1(fx_t *fx)
{
    const char *h = first_host(fx, "one");
    return h != NULL && strcmp(h, "b1") == 0;
}

static struct timespec settle_until;

/* A second of the loop's running has passed since settle_until was set (cycles have run). */
static bool settled(fx_t *fx)
{
    struct timespec now;
    (void)fx;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return now.tv_sec > settle_until.tv_sec ||
           (now.tv_sec == settle_until.tv_sec && now.tv_nsec >= settle_until.tv_nsec);
}

static char one_key[256];

/* The engine counts one's pod bound on a2. */
static bool pod_on_a2(fx_t *fx)
{
    size_t bound = 0;
    return sched_workload_on_node(ctrl_engine(fx->ctrl), one_key, "a2", &bound) && bound == 1;
}

/* The engine sees node a2 NotReady. */
static bool a2_not_ready(fx_t *fx)
{
    sched_node_info_t info;
    size_t i;
    return sched_node_find(ctrl_engine(fx->ctrl), "a2", &i) == ERR_OK &&
           sched_node_at(ctrl_engine(fx->ctrl), i, &info) == ERR_OK && !info.ready;
}

/* ---- status.unhealthyNodes: what the Workload status patches carry ------------------------ */

/* The status patches of Workloads seen by the server, in order (parsed bodies), and whether a
 * replacement's (a patch of status.admission) is refused with a 500, not applied. */
static json_t *status_patches;
static bool fail_replace;
static int replace_refused;

static void on_request(fakeapi_t *fa, const fakeapi_req_t *req, fakeapi_fault_t *fault, void *data)
{
    json_t *body, *st;

    (void)fa;
    (void)data;
    if (strcmp(req->verb, "patch") != 0 || strcmp(req->resource, "workloads") != 0 ||
        strcmp(req->subresource, "status") != 0)
        return;
    body = json_loadb(req->body, req->body_len, 0, NULL);
    st = json_object_get(body, "status");
    if (fail_replace && json_object_get(st, "admission") != NULL &&
        json_object_get(st, "conditions") == NULL) {
        fault->action = FAKEAPI_FAIL;
        fault->status = 500;
        replace_refused++;
    }
    if (body != NULL)
        json_array_append_new(status_patches, body);
}

/* The index of the first recorded status patch at or after `from` whose status.unhealthyNodes is
 * [{name: node}] (node NULL: removed, JSON null) and which carries status.admission or not as
 * `admission` says; -1 when none. */
static int patch_index(int from, const char *node, bool admission)
{
    for (size_t i = (size_t)from; i < json_array_size(status_patches); i++) {
        json_t *st = json_object_get(json_array_get(status_patches, i), "status");
        json_t *u = json_object_get(st, "unhealthyNodes");
        if ((json_object_get(st, "admission") != NULL) != admission || u == NULL)
            continue;
        const char *name = json_string_value(json_object_get(json_array_get(u, 0), "name"));
        if (node == NULL ? json_is_null(u)
                         : json_array_size(u) == 1 && name != NULL && strcmp(name, node) == 0)
            return (int)i;
    }
    return -1;
}

/* The Workload of Job "one" in the server lists status.unhealthyNodes. */
static bool one_unhealthy(fx_t *fx)
{
    return json_object_get(json_object_get(workload_for(fx, "one"), "status"), "unhealthyNodes") !=
           NULL;
}

/* The replacement tests' start: racks r1 (nodes a1, a2) and r2 (b1, b2) in Topology dc, status
 * patches recorded, and a 1-pod Job "one" asking for a rack admitted and running. */
static void two_racks_one_running(fx_t *fx)
{
    fx_serve(fx, NULL, 0);
    status_patches = json_array();
    fakeapi_set_fault(fx->fa, on_request, NULL);
    ck_assert_int_eq(fakeapi_register(fx->fa, "", "v1", "nodes", "Node", false, true), ERR_OK);
    ck_assert_int_eq(fakeapi_register(fx->fa, "", "v1", "pods", "Pod", true, true), ERR_OK);
    fx_queues(fx, 16);
    fx_put(fx, "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"ResourceFlavor\","
               "\"metadata\":{\"name\":\"default\"},\"spec\":{\"nodeLabels\":{\"pool\":\"p1\"},"
               "\"topologyName\":\"dc\"}}");
    fx_put(fx, "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"Topology\",\"metadata\":"
               "{\"name\":\"dc\"},\"spec\":{\"levels\":[{\"nodeLabel\":\"" RACK "\"},"
               "{\"nodeLabel\":\"" HOST "\"}]}}");
    node(fx, "a1", "r1");
    node(fx, "a2", "r1");
    node(fx, "b1", "r2");
    node(fx, "b2", "r2");
    fx_operate(fx, NULL, NULL);
    tas_job(fx, "one", 1, 3);
    fx_run_until(fx, one_running, 10, "one admitted and started");
}

/* Failed-node replacement: racks r1 (nodes a1, a2) and r2 (b1, b2); a 1-pod Job asking for a
 * rack runs on a1. a1 is deleted: the Workload's topologyAssignment is rewritten to a2 (BestFit:
 * the fuller rack) and the Job runs on, not evicted. Then a2 turns NotReady with the Job's pod
 * on it: failed only once the pod is gone, replaced on b1. */
START_TEST(tas_failed_node_replaced)
{
    fx_t fx;
    int rec;

    two_racks_one_running(&fx);
    const char *h = first_host(&fx, "one");
    ck_assert_ptr_nonnull(h);
    char was[16];
    snprintf(was, sizeof(was), "%s", h);
    ck_assert_msg(strcmp(was, "a1") == 0, "placed on %s", was);
    ck_assert_int_eq(fakeapi_delete_object(fx.fa, "nodes", NULL, "a1", NULL), ERR_OK);
    fx_run_until(&fx, one_on_a2, 10, "one's topologyAssignment moved to a2");
    ck_assert(running(&fx, "one"));
    /* As Kueue's node controller: the failure recorded in status.unhealthyNodes first; the
     * replacement's admission removes it. */
    rec = patch_index(0, "a1", false);
    ck_assert_int_ge(rec, 0);
    ck_assert_int_gt(patch_index(rec, NULL, true), rec);
    ck_assert(!one_unhealthy(&fx));

    /* Its pod runs on a2; a2 turns NotReady: not failed while the pod is there (Kueue's
     * TASReplaceNodeOnPodTermination). The pod goes: failed, replaced in rack r2. */
    char pod[1024];
    const char *wname = json_string_value(
        json_object_get(json_object_get(workload_for(&fx, "one"), "metadata"), "name"));
    ck_assert_ptr_nonnull(wname);
    snprintf(pod, sizeof(pod),
             "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"one-0\","
             "\"namespace\":\"ns\",\"annotations\":{\"kueue.x-k8s.io/workload\":\"%s\"}},"
             "\"spec\":{\"nodeName\":\"a2\",\"containers\":[{\"name\":\"c\",\"image\":\"i\","
             "\"resources\":{\"requests\":{\"cpu\":\"3\"}}}]},\"status\":{\"phase\":\"Running\"}}",
             wname);
    fx_put(&fx, pod);
    snprintf(one_key, sizeof(one_key), "ns/%s", wname);
    fx_run_until(&fx, pod_on_a2, 10, "one's pod bound on a2");
    fx_put(&fx, "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"a2\","
                "\"labels\":{\"pool\":\"p1\",\"" RACK "\":\"r1\",\"" HOST "\":\"a2\"}},"
                "\"status\":{\"allocatable\":{\"cpu\":\"4\",\"pods\":\"110\"},\"conditions\":"
                "[{\"type\":\"Ready\",\"status\":\"False\"}]}}");
    fx_run_until(&fx, a2_not_ready, 10, "a2 NotReady seen");
    clock_gettime(CLOCK_MONOTONIC, &settle_until);
    settle_until.tv_sec++;
    fx_run_until(&fx, settled, 10, "a second of cycles");
    ck_assert(one_on_a2(&fx));
    ck_assert_int_eq(fakeapi_delete_object(fx.fa, "pods", "ns", "one-0", NULL), ERR_OK);
    fx_run_until(&fx, one_on_b1, 10, "one's topologyAssignment moved to b1");
    ck_assert(running(&fx, "one"));
    rec = patch_index(rec, "a2", false);
    ck_assert_int_ge(rec, 0);
    ck_assert_int_gt(patch_index(rec, NULL, true), rec);
    ck_assert(!one_unhealthy(&fx));
    fx_stop(&fx);
    json_decref(status_patches);
}
END_TEST

static void on_part_closed(void *data)
{
    ((fx_t *)data)->closed++;
}

static bool both_closed(fx_t *fx)
{
    return fx->closed == 2;
}

/* Stop the controller and its client, the server and the loop running on. */
static void stop_controller(fx_t *fx)
{
    ctrl_close(fx->ctrl, on_part_closed, fx);
    kube_client_close(fx->client, on_part_closed, fx);
    fx_run_until(fx, both_closed, 10, "the controller closed");
    fx->closed = 0;
    fx->ctrl = NULL;
    fx->client = NULL;
    ctrl_config_fini(&fx->cfg);
    kube_config_fini(&fx->kcfg);
}

static bool replace_was_refused(fx_t *fx)
{
    return replace_refused > 0 && one_unhealthy(fx);
}

static bool one_replaced_on_a2(fx_t *fx)
{
    return one_on_a2(fx) && !one_unhealthy(fx);
}

static bool one_healthy(fx_t *fx)
{
    return !one_unhealthy(fx);
}

/* Nothing forgotten across a restart: a1 is deleted, the failure is recorded in
 * status.unhealthyNodes, and the replacement's write is refused; the operator restarts (a1 still
 * gone, no watch event will say so again): the recorded failure is acted on, one is replaced on
 * a2 and the record removed. Then a2 is deleted the same way, the operator stops, and a2 comes
 * back Ready before it starts again: a2 is healthy again, the record is removed (Kueue's node
 * controller) and one stays on a2. */
START_TEST(tas_unhealthy_survives_restart)
{
    fx_t fx;

    two_racks_one_running(&fx);
    ck_assert_str_eq(first_host(&fx, "one"), "a1");

    fail_replace = true;
    ck_assert_int_eq(fakeapi_delete_object(fx.fa, "nodes", NULL, "a1", NULL), ERR_OK);
    fx_run_until(&fx, replace_was_refused, 10, "a1 recorded, its replacement refused");
    ck_assert_str_eq(first_host(&fx, "one"), "a1");
    stop_controller(&fx);
    fail_replace = false;
    fx_operate(&fx, NULL, NULL);
    fx_run_until(&fx, one_replaced_on_a2, 10, "one replaced on a2 after the restart");
    ck_assert(running(&fx, "one"));
    /* the replacement's answer back (a failure while a write on the Workload is in flight is
     * told to the engine at once, unrecorded) */
    clock_gettime(CLOCK_MONOTONIC, &settle_until);
    settle_until.tv_sec++;
    fx_run_until(&fx, settled, 10, "a second of cycles");
    ck_assert(one_replaced_on_a2(&fx));

    fail_replace = true;
    replace_refused = 0;
    ck_assert_int_eq(fakeapi_delete_object(fx.fa, "nodes", NULL, "a2", NULL), ERR_OK);
    fx_run_until(&fx, replace_was_refused, 10, "a2 recorded, its replacement refused");
    stop_controller(&fx);
    fail_replace = false;
    node(&fx, "a2", "r1");
    fx_operate(&fx, NULL, NULL);
    fx_run_until(&fx, one_healthy, 10, "a2 healthy again: the record removed");
    clock_gettime(CLOCK_MONOTONIC, &settle_until);
    settle_until.tv_sec++;
    fx_run_until(&fx, settled, 10, "a second of cycles");
    ck_assert_str_eq(first_host(&fx, "one"), "a2");
    ck_assert(running(&fx, "one"));
    fx_stop(&fx);
    json_decref(status_patches);
}
END_TEST

/* No Topology CRD on the server: reported once as a problem, the rest syncs, and TAS is off --
 * a flavor naming a Topology is quota alone (with TAS on, its missing Topology would make the
 * ClusterQueue inactive and nothing would be admitted). */
START_TEST(tas_off_without_the_crd)
{
    fx_t fx;
    char text[2048];

    fx_serve(&fx, NULL, 0);
    ck_assert_int_eq(fakeapi_unregister(fx.fa, "kueue.x-k8s.io", "topologies"), ERR_OK);
    fx_queues(&fx, 16);
    fx_put(&fx, "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"ResourceFlavor\","
                "\"metadata\":{\"name\":\"default\"},\"spec\":{\"nodeLabels\":{\"pool\":\"p1\"},"
                "\"topologyName\":\"dc\"}}");
    fx_operate(&fx, NULL, NULL);
    ck_assert_uint_eq(problems_describe(ctrl_problems(fx.ctrl), "", text, sizeof(text)), 1);
    ck_assert_msg(strstr(text, "topology-aware scheduling off: the API server does not serve "
                               "kueue.x-k8s.io/v1beta2 topologies") != NULL,
                  "%s", text);
    fx_put(&fx, "{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"metadata\":{\"name\":\"plain\","
                "\"namespace\":\"ns\",\"labels\":{\"kueue.x-k8s.io/queue-name\":\"lq\"}},\"spec\":"
                "{\"suspend\":true,\"parallelism\":1,\"completions\":1,\"template\":{\"spec\":{"
                "\"restartPolicy\":\"Never\",\"containers\":[{\"name\":\"c\",\"image\":\"i\","
                "\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]}}}}");
    fx_run_until(&fx, plain_running, 10, "plain admitted by quota alone");
    ck_assert_ptr_null(json_object_get(
        json_array_get(json_object_get(admission_of(&fx, "plain"), "podSetAssignments"), 0),
        "topologyAssignment"));
    ck_assert_uint_eq(problems_count(ctrl_problems(fx.ctrl)), 1);
    fx_stop(&fx);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("ctrl_tas");
    TCase *tc = tcase_create("core");
    SRunner *sr;
    int failed;

    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, tas_places_and_pins);
    tcase_add_test(tc, tas_failed_node_replaced);
    tcase_add_test(tc, tas_unhealthy_survives_restart);
    tcase_add_test(tc, tas_off_without_the_crd);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
