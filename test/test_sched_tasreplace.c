/* test_sched_tasreplace -- failed-node replacement for topology-aware workloads (Kueue's
 * TASFailedNodeReplacement with FailFast; issue 17). */
/* SPDX-License-Identifier: Apache-2.0 */
#include "sched_fixtures.h"

#include "model/object.h"

#include <check.h>
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NANO      1000000000LL
#define RACK      "cloud.example.com/rack"
#define HOST      "kubernetes.io/hostname"
#define REQ_RACK  "kueue.x-k8s.io/podset-required-topology=" RACK
#define PREF_RACK "kueue.x-k8s.io/podset-preferred-topology=" RACK

static sched_t *s;
static sched_decisions_t out;

static void setup(void)
{
    sched_config_t cfg = {.tas = true};
    s = sched_new(&cfg);
    ck_assert_ptr_nonnull(s);
    sched_decisions_init(&out);
}

static void teardown(void)
{
    sched_decisions_fini(&out);
    sched_free(s);
}

/* Topology dc (rack, hostname), TAS flavor tas-gpu on pool=gpu, ClusterQueue cq with LocalQueue
 * ns/q, and 2 racks x 4 nodes x 8 GPUs (node rX-nY). */
static void cluster(void)
{
    char *levels[2] = {(char *)RACK, (char *)HOST};
    topology_t t = {.levels = levels, .nlevels = 2};
    char k[] = "pool", v[] = "gpu";
    kv_t kv = {k, v};
    flavor_t f;
    err_msg_t m;

    t.meta.name = (char *)"dc";
    ck_assert_msg(sched_topology_upsert(s, &t, &m) == ERR_OK, "%s", m.text);
    memset(&f, 0, sizeof(f));
    f.meta.name = (char *)"tas-gpu";
    f.node_labels.items = &kv;
    f.node_labels.len = 1;
    f.topology_name = (char *)"dc";
    ck_assert_msg(sched_flavor_upsert(s, &f, &m) == ERR_OK, "%s", m.text);
    fx_cq(s, "cq", "cpu,nvidia.com/gpu|tas-gpu:1000,64", NULL);
    fx_lq(s, "ns", "q", "cq", STOP_POLICY_NONE);
    for (int r = 1; r <= 2; r++)
        for (int n = 1; n <= 4; n++) {
            char name[16], labels[128];
            snprintf(name, sizeof(name), "r%d-n%d", r, n);
            snprintf(labels, sizeof(labels), RACK "=rack-%d," HOST "=%s,pool=gpu", r, name);
            fx_node(s, name, labels, NULL, "cpu=64,nvidia.com/gpu=8,pods=110");
        }
}

/* Node `name` of the cluster, Ready or not. */
static void node_ready(const char *name, int rack, bool ready)
{
    char labels[128];
    kv_t kv[3];
    kv_list_t l = {.items = kv, .len = 3};
    resource_t alloc[1];
    resource_list_t a = {.items = alloc, .len = 1};
    err_msg_t m;

    snprintf(labels, sizeof(labels), "rack-%d", rack);
    kv[0] = (kv_t){(char *)RACK, labels};
    kv[1] = (kv_t){(char *)HOST, (char *)name};
    kv[2] = (kv_t){(char *)"pool", (char *)"gpu"};
    alloc[0] = (resource_t){.name = (char *)"nvidia.com/gpu", .value = {.nano = 8 * NANO}};
    sched_node_spec_t spec = {.name = name, .labels = &l, .allocatable = &a, .ready = ready};
    ck_assert_msg(sched_node_upsert(s, &spec, &m) == ERR_OK, "%s", m.text);
}

static int64_t gpus_free(const char *node)
{
    size_t i;
    sched_node_res_t r;
    ck_assert_int_eq(sched_node_find(s, node, &i), ERR_OK);
    sched_node_resource(s, i, "nvidia.com/gpu", &r);
    return (int64_t)(r.free / NANO);
}

/* "host=count host=count" of a topology assignment. */
static const char *text_of(const topology_assignment_t *t)
{
    static char buf[512];
    buf[0] = '\0';
    for (size_t d = 0; t != NULL && d < t->ndomains; d++) {
        size_t len = strlen(buf);
        snprintf(buf + len, sizeof(buf) - len, "%s%s=%d", d ? " " : "",
                 t->values[d * t->nlevels + t->nlevels - 1], t->counts[d]);
    }
    return buf;
}

static const char *topo_of_ps(const char *key, size_t ps)
{
    sched_wl_info_t info;
    ck_assert_int_eq(sched_workload_info(s, key, &info, NULL), ERR_OK);
    if (info.admission == NULL || info.admission->nassignments <= ps)
        return "";
    return text_of(info.admission->assignments[ps].topology);
}

static void gpu_job(const char *key, int64_t at, int pods, const char *ann, const char *more)
{
    fx_wl(s, key, "q", 0, at, "cpu=1,nvidia.com/gpu=8",
          &(fx_wl_opts_t){.count = pods, .template_annotations = ann, .podsets = more});
}

static void failed(const char *key, const char *node)
{
    err_msg_t m;
    ck_assert_msg(sched_workload_node_failed(s, key, node, &m) == ERR_OK, "%s", m.text);
}

/* The one decision about `key` of kind `kind` appended since `from`, -1 when none. */
static int find_since(size_t from, sched_decision_kind_t kind, const char *key)
{
    int at = -1;
    for (size_t i = from; i < out.len; i++)
        if (out.items[i].kind == kind && strcmp(out.items[i].workload, key) == 0) {
            ck_assert_int_eq(at, -1);
            at = (int)i;
        }
    return at;
}

/* A required pod set keeps its rack: the lost pod goes to the free node of rack-1, although
 * rack-2's one free node is where a new placement would go (BestFit: the fullest rack). The rest
 * of the assignment stays, the quota too. */
START_TEST(required_stays_in_domain)
{
    cluster();
    gpu_job("ns/j", 1, 3, REQ_RACK, NULL);
    fx_run(s, 0, &out, true);
    ck_assert_str_eq(topo_of_ps("ns/j", 0), "r1-n1=1 r1-n2=1 r1-n3=1");
    for (int n = 1; n <= 3; n++) {
        char pod[16], node[16];
        snprintf(pod, sizeof(pod), "other/p%d", n);
        snprintf(node, sizeof(node), "r2-n%d", n);
        fx_pod(s, pod, node, NULL, "nvidia.com/gpu=8");
    }
    ck_assert_int_eq(gpus_free("r1-n4"), 8);
    ck_assert_int_eq(sched_node_delete(s, "r1-n2", NULL), ERR_OK);
    failed("ns/j", "r1-n2");
    /* a copy (sched_clone) has the failed node too and decides the same */
    sched_t *c = sched_clone(s, 0);
    sched_decisions_t cout;
    ck_assert_ptr_nonnull(c);
    sched_decisions_init(&cout);
    fx_run(c, 10, &cout, true);
    ck_assert_uint_eq(cout.len, 1);
    ck_assert_int_eq(cout.items[0].kind, SCHED_DECISION_REPLACE);
    ck_assert_str_eq(text_of(cout.items[0].admission.assignments[0].topology),
                     "r1-n1=1 r1-n3=1 r1-n4=1");
    sched_decisions_fini(&cout);
    sched_free(c);
    size_t from = out.len;
    fx_run(s, 10, &out, true);
    int d = find_since(from, SCHED_DECISION_REPLACE, "ns/j");
    ck_assert_int_ge(d, 0);
    ck_assert_uint_eq(out.len, from + 1);
    ck_assert_str_eq(out.items[d].reason_str, "NodeReplaced");
    ck_assert_str_eq(out.items[d].message, "Replaced unhealthy node r1-n2");
    ck_assert_str_eq(out.items[d].cluster_queue, "cq");
    ck_assert_str_eq(text_of(out.items[d].admission.assignments[0].topology),
                     "r1-n1=1 r1-n3=1 r1-n4=1");
    ck_assert_str_eq(topo_of_ps("ns/j", 0), "r1-n1=1 r1-n3=1 r1-n4=1");
    ck_assert_int_eq(fx_state(s, "ns/j"), SCHED_WL_ADMITTED);
    ck_assert_int_eq(gpus_free("r1-n4"), 0);
    ck_assert_int_eq(gpus_free("r2-n4"), 8);
    sched_fr_usage_t u;
    ck_assert_int_eq(sched_cq_fr_usage(s, "cq", "tas-gpu", "nvidia.com/gpu", &u, NULL), ERR_OK);
    ck_assert_int_eq(u.usage.nano, 24 * NANO);
    /* nothing more to do: a cycle decides nothing */
    from = out.len;
    fx_run(s, 20, &out, true);
    ck_assert_uint_eq(out.len, from);
}
END_TEST

/* A preferred pod set has no required domain (Kueue's requiredReplacementDomain ""): its rack
 * full, the lost pod goes where a new placement of one pod would, the free node of rack-2. */
START_TEST(preferred_goes_anywhere)
{
    cluster();
    gpu_job("ns/j", 1, 4, PREF_RACK, NULL);
    fx_run(s, 0, &out, true);
    ck_assert_str_eq(topo_of_ps("ns/j", 0), "r1-n1=1 r1-n2=1 r1-n3=1 r1-n4=1");
    for (int n = 1; n <= 3; n++) {
        char pod[16], node[16];
        snprintf(pod, sizeof(pod), "other/p%d", n);
        snprintf(node, sizeof(node), "r2-n%d", n);
        fx_pod(s, pod, node, NULL, "nvidia.com/gpu=8");
    }
    /* NotReady (its pods terminated): failed as a deleted node is */
    node_ready("r1-n2", 1, false);
    failed("ns/j", "r1-n2");
    size_t from = out.len;
    fx_run(s, 10, &out, true);
    ck_assert_int_ge(find_since(from, SCHED_DECISION_REPLACE, "ns/j"), 0);
    ck_assert_str_eq(topo_of_ps("ns/j", 0), "r1-n1=1 r1-n3=1 r1-n4=1 r2-n4=1");
    ck_assert_int_eq(gpus_free("r2-n4"), 0);
}
END_TEST

/* No room in the required rack: evicted at once (FailFast) with Kueue's reason and message;
 * once stopped it is pending again and admitted into the other rack. */
START_TEST(no_replacement_evicts)
{
    cluster();
    gpu_job("ns/j", 1, 4, REQ_RACK, NULL);
    fx_run(s, 0, &out, true);
    ck_assert_str_eq(topo_of_ps("ns/j", 0), "r1-n1=1 r1-n2=1 r1-n3=1 r1-n4=1");
    ck_assert_int_eq(sched_node_delete(s, "r1-n3", NULL), ERR_OK);
    failed("ns/j", "r1-n3");
    size_t from = out.len;
    fx_run(s, 10, &out, false);
    int d = find_since(from, SCHED_DECISION_EVICT, "ns/j");
    ck_assert_int_ge(d, 0);
    ck_assert_int_lt(find_since(from, SCHED_DECISION_REPLACE, "ns/j"), 0);
    ck_assert_str_eq(out.items[d].reason_str, "NodeFailures");
    ck_assert_str_eq(out.items[d].message,
                     "Workload was evicted as there was no replacement for unhealthy node(s): "
                     "r1-n3");
    ck_assert_int_eq(fx_state(s, "ns/j"), SCHED_WL_EVICTING);
    /* the plan's placements were taken back: rack-2 is untouched */
    ck_assert_int_eq(gpus_free("r2-n1"), 8);
    ck_assert_int_eq(sched_evicted(s, "ns/j", 20, NULL), ERR_OK);
    fx_run(s, 20, &out, true);
    ck_assert_int_eq(fx_state(s, "ns/j"), SCHED_WL_ADMITTED);
    ck_assert_str_eq(topo_of_ps("ns/j", 0), "r2-n1=1 r2-n2=1 r2-n3=1 r2-n4=1");
    ck_assert_int_eq(gpus_free("r1-n1"), 8);
}
END_TEST

/* A second failed node before the replacement: evicted (Kueue's node controller message). */
START_TEST(two_failed_nodes_evict)
{
    cluster();
    gpu_job("ns/j", 1, 3, REQ_RACK, NULL);
    fx_run(s, 0, &out, true);
    failed("ns/j", "r1-n3");
    failed("ns/j", "r1-n1");
    failed("ns/j", "r1-n3"); /* again: nothing new */
    size_t from = out.len;
    fx_run(s, 10, &out, false);
    int d = find_since(from, SCHED_DECISION_EVICT, "ns/j");
    ck_assert_int_ge(d, 0);
    ck_assert_str_eq(out.items[d].reason_str, "NodeFailures");
    ck_assert_str_eq(out.items[d].message, "Workload eviction triggered due to multiple TAS "
                                           "assigned node failures, including: r1-n3, r1-n1");
    ck_assert_uint_eq(out.len, from + 1);
}
END_TEST

/* What the driver may report, and what it may not. */
START_TEST(node_failed_errors)
{
    err_msg_t m;
    cluster();
    gpu_job("ns/j", 1, 3, REQ_RACK, NULL);
    gpu_job("ns/big", 2, 9, REQ_RACK, NULL);
    ck_assert_int_eq(sched_workload_node_failed(s, "ns/none", "r1-n1", &m), ERR_NOT_FOUND);
    ck_assert_str_eq(m.text, "Workload ns/none not found");
    fx_run(s, 0, &out, true);
    ck_assert_int_eq(sched_workload_node_failed(s, "ns/big", "r1-n1", &m), ERR_INVALID);
    ck_assert_str_eq(m.text, "Workload ns/big is not admitted");
    ck_assert_int_eq(sched_workload_node_failed(s, "ns/j", "r2-n1", &m), ERR_NOT_FOUND);
    ck_assert_str_eq(m.text, "Workload ns/j: node r2-n1 is not in its topology assignment");
    ck_assert_int_eq(sched_workload_node_failed(s, "ns/j", "", &m), ERR_INVALID);
    /* reported, then the workload finishes before a cycle: nothing to replace */
    failed("ns/j", "r1-n1");
    ck_assert_int_eq(sched_workload_finish(s, "ns/j", 5, NULL), ERR_OK);
    size_t from = out.len;
    fx_run(s, 10, &out, true);
    ck_assert_int_lt(find_since(from, SCHED_DECISION_REPLACE, "ns/j"), 0);
    ck_assert_int_lt(find_since(from, SCHED_DECISION_EVICT, "ns/j"), 0);
}
END_TEST

static void collect(void *ud, const char *key)
{
    char *buf = ud;
    size_t len = strlen(buf);

    snprintf(buf + len, 128 - len, "%s%s", len ? " " : "", key);
}

/* A driver that records a failure before it reports it asks who is on the node without marking
 * anyone (sched_node_workloads): with pods_gone, a workload with a pod still bound there is left
 * out; nothing is decided until it reports the failure itself. */
START_TEST(node_workloads_marks_nothing)
{
    char keys[128] = "";
    err_msg_t m;

    cluster();
    gpu_job("ns/j", 1, 2, REQ_RACK, NULL);
    fx_run(s, 0, &out, true);
    gpu_job("ns/k", 2, 2, REQ_RACK, NULL);
    fx_run(s, 1, &out, true);
    ck_assert_str_eq(topo_of_ps("ns/j", 0), "r1-n1=1 r1-n2=1");
    ck_assert_str_eq(topo_of_ps("ns/k", 0), "r1-n3=1 r1-n4=1");
    ck_assert_int_eq(sched_node_workloads(s, "r1-n2", false, collect, keys, &m), ERR_OK);
    ck_assert_str_eq(keys, "ns/j");
    keys[0] = '\0';
    fx_pod(s, "ns/k-0", "r1-n4", "ns/k", "nvidia.com/gpu=8");
    ck_assert_int_eq(sched_node_workloads(s, "r1-n4", true, collect, keys, &m), ERR_OK);
    ck_assert_str_eq(keys, ""); /* k's pod still runs there */
    ck_assert_int_eq(sched_node_workloads(s, NULL, false, collect, keys, &m), ERR_INVALID);
    size_t from = out.len;
    fx_run(s, 10, &out, true);
    ck_assert_uint_eq(out.len, from); /* nothing marked, nothing decided */
    failed("ns/j", "r1-n2");
    fx_run(s, 11, &out, false);
    ck_assert_int_ge(find_since(from, SCHED_DECISION_REPLACE, "ns/j"), 0);
}
END_TEST

/* Two workloads lose a node each in one rack with room for one: they are replaced in the order
 * the failures were reported, the first one's new pods counted before the second looks. */
START_TEST(replacements_in_report_order)
{
    cluster();
    gpu_job("ns/j", 1, 2, REQ_RACK, NULL);
    fx_run(s, 0, &out, true);
    ck_assert_str_eq(topo_of_ps("ns/j", 0), "r1-n1=1 r1-n2=1");
    gpu_job("ns/k", 2, 2, REQ_RACK, NULL);
    fx_run(s, 1, &out, true);
    ck_assert_str_eq(topo_of_ps("ns/k", 0), "r1-n3=1 r1-n4=1");
    /* rack-2 has one free node left */
    for (int n = 1; n <= 3; n++) {
        char pod[16], node[16];
        snprintf(pod, sizeof(pod), "other/p%d", n);
        snprintf(node, sizeof(node), "r2-n%d", n);
        fx_pod(s, pod, node, NULL, "nvidia.com/gpu=8");
    }
    ck_assert_int_eq(sched_node_delete(s, "r1-n3", NULL), ERR_OK);
    ck_assert_int_eq(sched_node_delete(s, "r1-n1", NULL), ERR_OK);
    fx_node(s, "r1-n5", RACK "=rack-1," HOST "=r1-n5,pool=gpu", NULL, "cpu=8,nvidia.com/gpu=8");
    failed("ns/k", "r1-n3");
    failed("ns/j", "r1-n1");
    size_t from = out.len;
    fx_run(s, 10, &out, false);
    /* k first (reported first): the new rack-1 node; j then has no room left in rack-1 */
    ck_assert_int_ge(find_since(from, SCHED_DECISION_REPLACE, "ns/k"), 0);
    ck_assert_str_eq(topo_of_ps("ns/k", 0), "r1-n4=1 r1-n5=1");
    ck_assert_int_ge(find_since(from, SCHED_DECISION_EVICT, "ns/j"), 0);
    ck_assert_int_eq(gpus_free("r2-n4"), 8);
}
END_TEST

/* Slices of 2 pods, each in one rack: the lost pod of a slice is replaced in the rack of the rest
 * of its slice (Kueue's findIncompleteSliceDomain), although a preferred pod set may go
 * anywhere and the other rack is where one pod would go now (BestFit: the fuller rack). */
START_TEST(incomplete_slice_stays_in_its_rack)
{
    cluster();
    gpu_job("ns/j", 1, 6,
            PREF_RACK ",kueue.x-k8s.io/podset-slice-required-topology=" RACK
                      ",kueue.x-k8s.io/podset-slice-size=2",
            NULL);
    fx_run(s, 0, &out, true);
    ck_assert_str_eq(topo_of_ps("ns/j", 0), "r1-n1=1 r1-n2=1 r1-n3=1 r1-n4=1 r2-n1=1 r2-n2=1");
    /* rack-1 gets one free node, rack-2 has two */
    fx_node(s, "r1-n5", RACK "=rack-1," HOST "=r1-n5,pool=gpu", NULL, "cpu=8,nvidia.com/gpu=8");
    ck_assert_int_eq(sched_node_delete(s, "r2-n2", NULL), ERR_OK);
    failed("ns/j", "r2-n2");
    size_t from = out.len;
    fx_run(s, 10, &out, true);
    ck_assert_int_ge(find_since(from, SCHED_DECISION_REPLACE, "ns/j"), 0);
    ck_assert_str_eq(topo_of_ps("ns/j", 0), "r1-n1=1 r1-n2=1 r1-n3=1 r1-n4=1 r2-n1=1 r2-n3=1");
    ck_assert_int_eq(gpus_free("r1-n5"), 8);
}
END_TEST

/* Workload ns/<name> in LocalQueue q: `pods` pods of 4 GPUs, topologyRequest `tr` (JSON). */
static void tr_workload(const char *name, int pods, const char *tr)
{
    char text[1024];
    json_error_t e;
    json_t *doc;
    object_t obj;
    diags_t d;
    err_msg_t m;
    sched_wl_opts_t wo = {.created = 1};

    snprintf(text, sizeof(text),
             "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"Workload\",\"metadata\":"
             "{\"name\":\"%s\",\"namespace\":\"ns\"},\"spec\":{\"queueName\":\"q\","
             "\"podSets\":[{\"name\":\"main\",\"count\":%d,\"topologyRequest\":%s,"
             "\"template\":{\"spec\":{\"containers\":[{\"name\":\"c\",\"resources\":"
             "{\"requests\":{\"cpu\":\"1\",\"nvidia.com/gpu\":\"4\"}}}]}}}]}}",
             name, pods, tr);
    doc = json_loads(text, 0, &e);
    ck_assert_msg(doc != NULL, "%s", e.text);
    diags_init(&d);
    ck_assert_int_eq(object_decode(doc, &obj, &d), ERR_OK);
    ck_assert_uint_eq(d.nerrors, 0);
    ck_assert_msg(sched_workload_upsert(s, &obj.u.wl, &wo, &m) == ERR_OK, "%s", m.text);
    object_fini(&obj);
    diags_fini(&d);
    json_decref(doc);
}

/* Slice layers (racks of 4 pods made of hosts of 2), asked by a Workload's topologyRequest: the
 * 2 pods lost with a host break a rack slice, so they must go back to that rack (Kueue: the
 * innermost broken layer's domain) and keep the host layer (the innermost whose size divides
 * them). rack-1's free hosts hold one pod each: no host slice, so no replacement and the
 * workload is evicted (as Kueue, FailFast), where pod by pod would split the host slice over
 * r1-n3 and r1-n4. */
START_TEST(layers_kept_by_the_replacement)
{
    cluster();
    fx_node(s, "r1-n3", RACK "=rack-1," HOST "=r1-n3,pool=gpu", NULL,
            "cpu=64,nvidia.com/gpu=4,pods=110");
    fx_node(s, "r1-n4", RACK "=rack-1," HOST "=r1-n4,pool=gpu", NULL,
            "cpu=64,nvidia.com/gpu=4,pods=110");
    tr_workload("j", 4,
                "{\"required\":\"" RACK "\",\"podsetSliceRequiredTopologyConstraints\":"
                "[{\"topology\":\"" RACK "\",\"size\":4},{\"topology\":\"" HOST "\",\"size\":2}]}");
    fx_run(s, 0, &out, true);
    ck_assert_str_eq(topo_of_ps("ns/j", 0), "r1-n1=2 r1-n2=2");
    ck_assert_int_eq(sched_node_delete(s, "r1-n2", NULL), ERR_OK);
    failed("ns/j", "r1-n2");
    size_t from = out.len;
    fx_run(s, 10, &out, false);
    ck_assert_int_eq(find_since(from, SCHED_DECISION_REPLACE, "ns/j"), -1);
    int ev = find_since(from, SCHED_DECISION_EVICT, "ns/j");
    ck_assert_int_ge(ev, 0);
    ck_assert_str_eq(out.items[ev].reason_str, "NodeFailures");
}
END_TEST

static Suite *suite(void)
{
    Suite *su = suite_create("sched_tasreplace");
    TCase *tc = tcase_create("replace");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, required_stays_in_domain);
    tcase_add_test(tc, preferred_goes_anywhere);
    tcase_add_test(tc, no_replacement_evicts);
    tcase_add_test(tc, two_failed_nodes_evict);
    tcase_add_test(tc, node_failed_errors);
    tcase_add_test(tc, node_workloads_marks_nothing);
    tcase_add_test(tc, replacements_in_report_order);
    tcase_add_test(tc, incomplete_slice_stays_in_its_rack);
    tcase_add_test(tc, layers_kept_by_the_replacement);
    suite_add_tcase(su, tc);
    return su;
}

int main(void)
{
    SRunner *sr = srunner_create(suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed_n = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed_n == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
