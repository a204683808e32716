/* test_sched_tasadmit -- topology-aware scheduling in the engine: TAS flavors in flavor
 * assignment, Kueue's messages, TopologyNotFound, placements counted on nodes (issue 17). */
/* SPDX-License-Identifier: Apache-2.0 */
#include "sched_fixtures.h"

#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NANO     1000000000LL
#define RACK     "cloud.example.com/rack"
#define HOST     "kubernetes.io/hostname"
#define REQ_RACK "kueue.x-k8s.io/podset-required-topology=" RACK

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

static void topology(const char *name)
{
    char *levels[2] = {(char *)RACK, (char *)HOST};
    topology_t t = {.levels = levels, .nlevels = 2};
    err_msg_t m;
    t.meta.name = (char *)name;
    ck_assert_msg(sched_topology_upsert(s, &t, &m) == ERR_OK, "%s", m.text);
}

/* A ResourceFlavor selecting pool=gpu; `topo` its topologyName (NULL: not a TAS flavor). */
static void flavor(const char *name, const char *topo)
{
    char k[] = "pool", v[] = "gpu";
    kv_t kv = {k, v};
    flavor_t f;
    err_msg_t m;
    memset(&f, 0, sizeof(f));
    f.meta.name = (char *)name;
    f.node_labels.items = &kv;
    f.node_labels.len = 1;
    f.topology_name = (char *)topo;
    ck_assert_msg(sched_flavor_upsert(s, &f, &m) == ERR_OK, "%s", m.text);
}

/* The cluster: 2 racks x 4 nodes x 8 GPUs, node rX-nY with hostname rX-nY. */
static void racks(void)
{
    for (int r = 1; r <= 2; r++)
        for (int n = 1; n <= 4; n++) {
            char name[16], labels[128];
            snprintf(name, sizeof(name), "r%d-n%d", r, n);
            snprintf(labels, sizeof(labels), RACK "=rack-%d," HOST "=%s,pool=gpu", r, name);
            fx_node(s, name, labels, NULL, "cpu=64,nvidia.com/gpu=8,pods=110");
        }
}

static int64_t gpus_free(const char *node)
{
    size_t i;
    sched_node_res_t r;
    ck_assert_int_eq(sched_node_find(s, node, &i), ERR_OK);
    sched_node_resource(s, i, "nvidia.com/gpu", &r);
    return (int64_t)(r.free / NANO);
}

/* The admission's topology assignment of podset 0: "v/v=count v/v=count", "" when none. */
static const char *topo_of(const char *key)
{
    static char buf[512];
    sched_wl_info_t info;
    buf[0] = '\0';
    ck_assert_int_eq(sched_workload_info(s, key, &info, NULL), ERR_OK);
    if (info.admission == NULL || info.admission->nassignments == 0 ||
        info.admission->assignments[0].topology == NULL)
        return buf;
    const topology_assignment_t *t = info.admission->assignments[0].topology;
    for (size_t d = 0; d < t->ndomains; d++) {
        size_t len = strlen(buf);
        snprintf(buf + len, sizeof(buf) - len, "%s", d ? " " : "");
        for (size_t l = 0; l < t->nlevels; l++) {
            len = strlen(buf);
            snprintf(buf + len, sizeof(buf) - len, "%s%s", l ? "/" : "",
                     t->values[d * t->nlevels + l]);
        }
        len = strlen(buf);
        snprintf(buf + len, sizeof(buf) - len, "=%d", t->counts[d]);
    }
    return buf;
}

static void gpu_job(const char *key, const char *lq, int64_t at, int pods, const char *ann)
{
    fx_wl(s, key, lq, 0, at, "cpu=1,nvidia.com/gpu=8",
          &(fx_wl_opts_t){.count = pods, .template_annotations = ann});
}

/* The example: rack-1 partly used; a 5-pod x 8-GPU job asking for one rack stays
 * pending with Kueue's reason, a 4-pod one is admitted into rack-2 on its 4 nodes. */
START_TEST(rack_example)
{
    topology("dc");
    flavor("tas-gpu", "dc");
    fx_cq(s, "cq", "cpu,nvidia.com/gpu|tas-gpu:1000,64", NULL);
    fx_lq(s, "ns", "q", "cq", STOP_POLICY_NONE);
    racks();
    fx_pod(s, "other/p", "r1-n2", NULL, "nvidia.com/gpu=4");
    gpu_job("ns/five", "q", 1, 5, REQ_RACK);
    gpu_job("ns/four", "q", 2, 4, REQ_RACK);
    fx_run(s, 0, &out, true);
    ck_assert_int_eq(fx_state(s, "ns/five"), SCHED_WL_PENDING);
    ck_assert_int_eq(fx_reason(s, "ns/five"), SCHED_REASON_TOPOLOGY_PLACEMENT_FAILED);
    ck_assert_str_eq(sched_reason_str(SCHED_REASON_TOPOLOGY_PLACEMENT_FAILED),
                     "TopologyPlacementFailed");
    ck_assert_msg(strstr(fx_message(s, "ns/five"),
                         "couldn't assign flavors to pod set main: topology \"dc\" allows to fit "
                         "only 4 out of 5 pod(s)") == fx_message(s, "ns/five"),
                  "%s", fx_message(s, "ns/five"));
    ck_assert_int_eq(fx_state(s, "ns/four"), SCHED_WL_ADMITTED);
    /* BestFit: rack-1 has 3 whole nodes free, rack-2 4: only rack-2 holds the job */
    ck_assert_str_eq(topo_of("ns/four"), "r2-n1=1 r2-n2=1 r2-n3=1 r2-n4=1");
    for (int n = 1; n <= 4; n++) {
        char name[16];
        snprintf(name, sizeof(name), "r2-n%d", n);
        ck_assert_int_eq(gpus_free(name), 0);
    }
    ck_assert_int_eq(gpus_free("r1-n1"), 8);
    /* the ADMIT decision carries the placement as Kueue's admission does */
    bool seen = false;
    for (size_t i = 0; i < out.len; i++)
        if (out.items[i].kind == SCHED_DECISION_ADMIT &&
            strcmp(out.items[i].workload, "ns/four") == 0) {
            ck_assert_ptr_nonnull(out.items[i].admission.assignments[0].topology);
            ck_assert_uint_eq(out.items[i].admission.assignments[0].topology->ndomains, 4);
            seen = true;
        }
    ck_assert(seen);

    /* rack-2 freed: the 5-pod job still fits no single rack; a 3-pod one takes rack-1
     * (BestFit: the fullest rack that holds it) */
    ck_assert_int_eq(sched_workload_finish(s, "ns/four", 10, NULL), ERR_OK);
    ck_assert_int_eq(gpus_free("r2-n1"), 8);
    gpu_job("ns/three", "q", 3, 3, REQ_RACK);
    fx_run(s, 20, &out, true);
    ck_assert_int_eq(fx_state(s, "ns/five"), SCHED_WL_PENDING);
    ck_assert_int_eq(fx_state(s, "ns/three"), SCHED_WL_ADMITTED);
    ck_assert_str_eq(topo_of("ns/three"), "r1-n1=1 r1-n3=1 r1-n4=1");
}
END_TEST

/* A workload that waits for node capacity is tried again when a TAS placement frees it, even
 * in another ClusterQueue (no cohort: quota alone would not requeue it). */
START_TEST(freed_nodes_requeue_other_queues)
{
    topology("dc");
    flavor("tas-gpu", "dc");
    fx_cq(s, "a", "cpu,nvidia.com/gpu|tas-gpu:1000,64", NULL);
    fx_cq(s, "b", "cpu,nvidia.com/gpu|tas-gpu:1000,64", NULL);
    fx_lq(s, "ns", "qa", "a", STOP_POLICY_NONE);
    fx_lq(s, "ns", "qb", "b", STOP_POLICY_NONE);
    racks();
    gpu_job("ns/a1", "qa", 1, 4, REQ_RACK);
    gpu_job("ns/a2", "qa", 2, 4, REQ_RACK);
    fx_run(s, 0, &out, true);
    ck_assert_int_eq(fx_state(s, "ns/a1"), SCHED_WL_ADMITTED);
    ck_assert_int_eq(fx_state(s, "ns/a2"), SCHED_WL_ADMITTED);
    /* both queues' heads are nominated in one cycle; only one rack is left after the first */
    ck_assert_int_eq(sched_workload_finish(s, "ns/a2", 5, NULL), ERR_OK);
    gpu_job("ns/b1", "qb", 6, 4, REQ_RACK);
    gpu_job("ns/a3", "qa", 6, 4, REQ_RACK);
    fx_run(s, 10, &out, true);
    int admitted =
        (fx_state(s, "ns/b1") == SCHED_WL_ADMITTED) + (fx_state(s, "ns/a3") == SCHED_WL_ADMITTED);
    ck_assert_int_eq(admitted, 1);
    const char *waiting = fx_state(s, "ns/b1") == SCHED_WL_ADMITTED ? "ns/a3" : "ns/b1";
    ck_assert_int_eq(fx_reason(s, waiting), SCHED_REASON_TOPOLOGY_PLACEMENT_FAILED);
    ck_assert_msg(strstr(fx_message(s, waiting), "doesn't allow to fit any of 4 pod(s)") != NULL,
                  "%s", fx_message(s, waiting));
    /* a1 finishes in queue a: the waiting one is admitted whichever queue it is in */
    ck_assert_int_eq(sched_workload_finish(s, "ns/a1", 20, NULL), ERR_OK);
    fx_run(s, 30, &out, true);
    ck_assert_int_eq(fx_state(s, waiting), SCHED_WL_ADMITTED);
}
END_TEST

/* Kueue's ClusterQueue Active=False TopologyNotFound for a TAS flavor without its Topology. */
START_TEST(topology_not_found)
{
    flavor("tas-gpu", "dc");
    fx_cq(s, "cq", "nvidia.com/gpu|tas-gpu:64", NULL);
    sched_cq_status_t st;
    ck_assert_int_eq(sched_cq_status(s, "cq", &st, NULL), ERR_OK);
    ck_assert(!st.active);
    ck_assert_int_eq(st.reason, SCHED_CQ_TOPOLOGY_NOT_FOUND);
    ck_assert_str_eq(sched_cq_reason_str(st.reason), "TopologyNotFound");
    ck_assert_str_eq(st.message, "Can't admit new workloads: there is no Topology \"dc\" for TAS "
                                 "flavor \"tas-gpu\".");
    topology("dc");
    ck_assert_int_eq(sched_cq_status(s, "cq", &st, NULL), ERR_OK);
    ck_assert(st.active);
    ck_assert_int_eq(sched_topology_delete(s, "dc", NULL), ERR_OK);
    ck_assert_int_eq(sched_topology_delete(s, "dc", NULL), ERR_NOT_FOUND);
    ck_assert_int_eq(sched_cq_status(s, "cq", &st, NULL), ERR_OK);
    ck_assert_int_eq(st.reason, SCHED_CQ_TOPOLOGY_NOT_FOUND);
}
END_TEST

/* Kueue's checkPodSetAndFlavorMatchForTAS: who may take a TAS flavor. */
START_TEST(flavor_matching)
{
    topology("dc");
    flavor("plain", NULL);
    flavor("tas-gpu", "dc");
    fx_cq(s, "mixed", "cpu,nvidia.com/gpu|plain:0,0|tas-gpu:1000,64", NULL);
    fx_cq(s, "tasonly", "cpu,nvidia.com/gpu|tas-gpu:1000,64", NULL);
    fx_cq(s, "plainonly", "cpu,nvidia.com/gpu|plain:1000,64", NULL);
    fx_lq(s, "ns", "mixed", "mixed", STOP_POLICY_NONE);
    fx_lq(s, "ns", "tasonly", "tasonly", STOP_POLICY_NONE);
    fx_lq(s, "ns", "plainonly", "plainonly", STOP_POLICY_NONE);
    racks();
    /* no annotation in a mixed queue: the TAS flavor is not for it */
    gpu_job("ns/untas", "mixed", 1, 1, NULL);
    /* no annotation in a TAS-only queue: TAS implied (unconstrained) */
    gpu_job("ns/implied", "tasonly", 2, 2, NULL);
    /* asking for a rack in a queue without a TAS flavor */
    gpu_job("ns/nowhere", "plainonly", 3, 1, REQ_RACK);
    /* asking for a level the Topology does not have */
    gpu_job("ns/nolevel", "tasonly", 4, 1, "kueue.x-k8s.io/podset-required-topology=zone");
    fx_run(s, 0, &out, true);
    ck_assert_int_eq(fx_state(s, "ns/untas"), SCHED_WL_PENDING);
    ck_assert_msg(strstr(fx_message(s, "ns/untas"),
                         "Flavor \"tas-gpu\" supports only TopologyAwareScheduling") != NULL,
                  "%s", fx_message(s, "ns/untas"));
    ck_assert_int_eq(fx_state(s, "ns/implied"), SCHED_WL_ADMITTED);
    ck_assert_str_ne(topo_of("ns/implied"), "");
    ck_assert_int_eq(fx_state(s, "ns/nowhere"), SCHED_WL_PENDING);
    ck_assert_int_eq(fx_reason(s, "ns/nowhere"), SCHED_REASON_NO_MATCHING_FLAVOR);
    ck_assert_msg(strstr(fx_message(s, "ns/nowhere"),
                         "Flavor \"plain\" does not support TopologyAwareScheduling") != NULL,
                  "%s", fx_message(s, "ns/nowhere"));
    ck_assert_int_eq(fx_state(s, "ns/nolevel"), SCHED_WL_PENDING);
    ck_assert_msg(strstr(fx_message(s, "ns/nolevel"),
                         "Flavor \"tas-gpu\" does not contain the requested level") != NULL,
                  "%s", fx_message(s, "ns/nolevel"));
}
END_TEST

/* An operator restart: a Workload read back admitted with a topologyAssignment counts its pods
 * on the nodes it names, even when those Nodes arrive after it. */
START_TEST(admitted_read_back)
{
    topology("dc");
    flavor("tas-gpu", "dc");
    fx_cq(s, "cq", "cpu,nvidia.com/gpu|tas-gpu:1000,64", NULL);
    fx_lq(s, "ns", "q", "cq", STOP_POLICY_NONE);

    char n1[] = "main", res_gpu[] = "nvidia.com/gpu", fl[] = "tas-gpu", cq[] = "cq";
    char *levels[2] = {(char *)RACK, (char *)HOST};
    char rk[] = "rack-2", h1[] = "r2-n1", h2[] = "r2-n2", h3[] = "r2-n3", h4[] = "r2-n4";
    char *values[8] = {rk, h1, rk, h2, rk, h3, rk, h4};
    int32_t counts[4] = {1, 1, 1, 1};
    topology_assignment_t ta = {levels, 2, values, counts, 4};
    kv_t fkv = {res_gpu, fl};
    resource_t usage = {res_gpu, quantity_from_int(32, QUANTITY_DECIMAL_SI)};
    pod_set_assignment_t psa = {.name = n1,
                                .flavors = {&fkv, 1},
                                .usage = {&usage, 1},
                                .has_count = true,
                                .count = 4,
                                .topology = &ta};
    admission_t adm = {.cluster_queue = cq, .assignments = &psa, .nassignments = 1};
    resource_t req = {res_gpu, quantity_from_int(8, QUANTITY_DECIMAL_SI)};
    pod_set_t ps = {.name = n1, .count = 4, .pod_requests = {&req, 1}};
    char ann_k[] = "kueue.x-k8s.io/podset-required-topology", ann_v[] = RACK;
    kv_t ann = {ann_k, ann_v};
    ps.template_annotations.items = &ann;
    ps.template_annotations.len = 1;
    workload_t w;
    memset(&w, 0, sizeof(w));
    w.meta.namespace = (char *)"ns";
    w.meta.name = (char *)"running";
    w.queue_name = (char *)"q";
    w.active = true;
    w.pod_sets = &ps;
    w.npod_sets = 1;
    w.admission = &adm;
    w.conditions.quota_reserved = true;
    w.conditions.admitted = true;
    err_msg_t m;
    ck_assert_msg(sched_workload_upsert(s, &w, NULL, &m) == ERR_OK, "%s", m.text);
    racks(); /* the Nodes come after the Workload */
    ck_assert_int_eq(gpus_free("r2-n1"), 0);
    ck_assert_int_eq(gpus_free("r2-n4"), 0);
    ck_assert_int_eq(gpus_free("r1-n1"), 8);
    /* so a second 4-node job takes rack-1 and a third one waits */
    gpu_job("ns/second", "q", 1, 4, REQ_RACK);
    gpu_job("ns/third", "q", 2, 4, REQ_RACK);
    fx_run(s, 0, &out, true);
    ck_assert_str_eq(topo_of("ns/second"), "r1-n1=1 r1-n2=1 r1-n3=1 r1-n4=1");
    ck_assert_int_eq(fx_state(s, "ns/third"), SCHED_WL_PENDING);
    /* the read-back workload finishing frees its nodes */
    ck_assert_int_eq(sched_workload_finish(s, "ns/running", 10, NULL), ERR_OK);
    ck_assert_int_eq(gpus_free("r2-n1"), 8);
    fx_run(s, 20, &out, true);
    ck_assert_int_eq(fx_state(s, "ns/third"), SCHED_WL_ADMITTED);
}
END_TEST

/* A driver that does not feed Topologies (cfg.tas off): topologyName is ignored, quota alone
 * decides, and the ClusterQueue stays active. */
START_TEST(tas_off_ignores_topology_name)
{
    sched_free(s);
    s = sched_new(NULL);
    ck_assert_ptr_nonnull(s);
    flavor("tas-gpu", "dc");
    fx_cq(s, "cq", "cpu,nvidia.com/gpu|tas-gpu:1000,64", NULL);
    fx_lq(s, "ns", "q", "cq", STOP_POLICY_NONE);
    sched_cq_status_t st;
    ck_assert_int_eq(sched_cq_status(s, "cq", &st, NULL), ERR_OK);
    ck_assert(st.active);
    gpu_job("ns/w", "q", 1, 5, REQ_RACK);
    fx_run(s, 0, &out, true);
    ck_assert_int_eq(fx_state(s, "ns/w"), SCHED_WL_ADMITTED);
    ck_assert_str_eq(topo_of("ns/w"), "");
}
END_TEST

/* A copy of the engine (sched_clone) decides the same way: Topologies and TAS flavors copied. */
START_TEST(clone_keeps_topology)
{
    topology("dc");
    flavor("tas-gpu", "dc");
    fx_cq(s, "cq", "cpu,nvidia.com/gpu|tas-gpu:1000,64", NULL);
    fx_lq(s, "ns", "q", "cq", STOP_POLICY_NONE);
    racks();
    gpu_job("ns/four", "q", 1, 4, REQ_RACK);
    sched_t *c = sched_clone(s, 0);
    ck_assert_ptr_nonnull(c);
    sched_t *orig = s;
    s = c;
    fx_run(s, 0, &out, true);
    ck_assert_str_eq(topo_of("ns/four"), "r1-n1=1 r1-n2=1 r1-n3=1 r1-n4=1");
    s = orig;
    sched_free(c);
}
END_TEST

static Suite *suite(void)
{
    Suite *su = suite_create("sched_tasadmit");
    TCase *tc = tcase_create("tas");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, rack_example);
    tcase_add_test(tc, freed_nodes_requeue_other_queues);
    tcase_add_test(tc, topology_not_found);
    tcase_add_test(tc, flavor_matching);
    tcase_add_test(tc, admitted_read_back);
    tcase_add_test(tc, clone_keeps_topology);
    tcase_add_test(tc, tas_off_ignores_topology_name);
    suite_add_tcase(su, tc);
    return su;
}

int main(void)
{
    SRunner *sr = srunner_create(suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
