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

/* The admission's topology assignment of podset `ps`: "v/v=count v/v=count", "" when none. */
static const char *topo_of_ps(const char *key, size_t ps)
{
    static char buf[512];
    sched_wl_info_t info;
    buf[0] = '\0';
    ck_assert_int_eq(sched_workload_info(s, key, &info, NULL), ERR_OK);
    if (info.admission == NULL || info.admission->nassignments <= ps ||
        info.admission->assignments[ps].topology == NULL)
        return buf;
    const topology_assignment_t *t = info.admission->assignments[ps].topology;
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

static const char *topo_of(const char *key)
{
    return topo_of_ps(key, 0);
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
    /* it would fit on empty nodes, so it needs preemption, and no policy allows any: Kueue's
     * WaitingForQuota with the topology's reason ("workload with equal priority awaits for
     * other workloads to complete", scheduler_tas_test.go) */
    ck_assert_int_eq(fx_reason(s, waiting), SCHED_REASON_WAITING_FOR_QUOTA);
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

/* ---- topology-aware preemption (Kueue: preemption.go workloadFits with the TAS requests) ---- */

/* `nracks` racks of `per` 8-GPU nodes: rX-nY. */
static void cluster(int nracks, int per)
{
    for (int r = 1; r <= nracks; r++)
        for (int n = 1; n <= per; n++) {
            char name[16], labels[128];
            snprintf(name, sizeof(name), "r%d-n%d", r, n);
            snprintf(labels, sizeof(labels), RACK "=rack-%d," HOST "=%s,pool=gpu", r, name);
            fx_node(s, name, labels, NULL, "cpu=64,nvidia.com/gpu=8,pods=110");
        }
}

/* A TAS-only ClusterQueue `name` (cpu 1000, GPUs `gpus`) with LocalQueue ns/`name`. */
static void tas_queue(const char *name, int gpus, const fx_cq_opts_t *o)
{
    char q[64];
    snprintf(q, sizeof(q), "cpu,nvidia.com/gpu|tas-gpu:1000,%d", gpus);
    fx_cq(s, name, q, o);
    fx_lq(s, "ns", name, name, STOP_POLICY_NONE);
}

/* A 1-pod x 8-GPU job of priority `prio` in queue `lq`, pinned to `node` by its nodeSelector,
 * admitted at `t`. */
static void running_on(const char *key, const char *lq, int prio, const char *node, int64_t t)
{
    char sel[64];
    snprintf(sel, sizeof(sel), HOST "=%s", node);
    fx_wl(s, key, lq, prio, t, "cpu=1,nvidia.com/gpu=8",
          &(fx_wl_opts_t){.count = 1, .node_selector = sel});
    fx_run(s, t, &out, true);
    ck_assert_int_eq(fx_state(s, key), SCHED_WL_ADMITTED);
}

/* A `pods` x 8-GPU job asking for one rack, priority `prio`, created at `t`. */
static void rack_job(const char *key, const char *lq, int prio, int pods, int64_t t)
{
    fx_wl(s, key, lq, prio, t, "cpu=1,nvidia.com/gpu=8",
          &(fx_wl_opts_t){.count = pods, .template_annotations = REQ_RACK});
}

/* The PREEMPT decisions in out from index `from`: "victim<preemptor:reason victim<...". */
static const char *preemptions(size_t from)
{
    static char buf[512];
    buf[0] = '\0';
    for (size_t i = from; i < out.len; i++) {
        const sched_decision_t *d = &out.items[i];
        size_t len = strlen(buf);
        if (d->kind != SCHED_DECISION_PREEMPT)
            continue;
        snprintf(buf + len, sizeof(buf) - len, "%s%s<%s:%s", len ? " " : "", d->workload,
                 d->preemptor, sched_preempt_reason_str(d->reason));
    }
    return buf;
}

static void expect_message(const char *key, const char *part)
{
    ck_assert_msg(strstr(fx_message(s, key), part) != NULL, "%s: %s", key, fx_message(s, key));
}

/* The pod sets of one workload are placed one after another, each after the earlier ones'
 * pods are counted on their domains (Kueue's assumedUsage): a leader and its workers never get
 * the same node capacity twice. One rack of two 8-GPU nodes: a leader (1 x 8 GPUs, one rack)
 * plus one worker fits, one node each; a leader plus two workers does not, although each pod
 * set alone fits the rack. */
START_TEST(pod_sets_count_earlier_ones)
{
    topology("dc");
    flavor("tas-gpu", "dc");
    tas_queue("q", 64, NULL);
    cluster(1, 2);
    fx_wl(s, "ns/pair", "q", 0, 1, "cpu=1,nvidia.com/gpu=8",
          &(fx_wl_opts_t){.count = 1,
                          .template_annotations = REQ_RACK,
                          .podsets = "workers:1:cpu=1,nvidia.com/gpu=8"});
    fx_wl(s, "ns/trio", "q", 0, 2, "cpu=1,nvidia.com/gpu=8",
          &(fx_wl_opts_t){.count = 1,
                          .template_annotations = REQ_RACK,
                          .podsets = "workers:2:cpu=1,nvidia.com/gpu=8"});
    fx_run(s, 2, &out, true);
    ck_assert_int_eq(fx_state(s, "ns/pair"), SCHED_WL_ADMITTED);
    char leader[64];
    snprintf(leader, sizeof(leader), "%s", topo_of_ps("ns/pair", 0));
    ck_assert_str_ne(leader, topo_of_ps("ns/pair", 1));
    ck_assert_int_eq(gpus_free("r1-n1"), 0);
    ck_assert_int_eq(gpus_free("r1-n2"), 0);
    /* the trio fits the quota and each of its pod sets fits the empty rack alone */
    ck_assert_int_eq(fx_state(s, "ns/trio"), SCHED_WL_PENDING);
    ck_assert_int_eq(sched_workload_finish(s, "ns/pair", 10, NULL), ERR_OK);
    fx_run(s, 20, &out, true);
    ck_assert_int_eq(fx_state(s, "ns/trio"), SCHED_WL_PENDING);
    ck_assert_int_eq(fx_reason(s, "ns/trio"), SCHED_REASON_TOPOLOGY_PLACEMENT_FAILED);
    expect_message("ns/trio", "couldn't assign flavors to pod set workers: topology \"dc\" "
                              "allows to fit only 1 out of 2 pod(s)");
    ck_assert_int_eq(gpus_free("r1-n1"), 8);
    ck_assert_int_eq(gpus_free("r1-n2"), 8);
}
END_TEST

/* Kueue's podset groups (podset-group-name, as its LeaderWorkerSet integration sets it): the
 * leader (one pod) and its workers in one rack. rack-1 has a 4-GPU node and an 8-GPU one, rack-2
 * three 8-GPU nodes. Placed one after the other, the 4-GPU leader would take rack-1's small node
 * (BestFit) and the two 8-GPU workers rack-2; as a group both go to rack-2, the leader on a
 * node of its own, since rack-1 holds only one worker besides it. */
#define GROUP_G "kueue.x-k8s.io/podset-group-name=g," REQ_RACK /* keys sorted */
START_TEST(podset_group_one_rack)
{
    topology("dc");
    flavor("tas-gpu", "dc");
    tas_queue("q", 64, NULL);
    fx_node(s, "r1-n1", RACK "=rack-1," HOST "=r1-n1,pool=gpu", NULL,
            "cpu=64,nvidia.com/gpu=4,pods=110");
    fx_node(s, "r1-n2", RACK "=rack-1," HOST "=r1-n2,pool=gpu", NULL,
            "cpu=64,nvidia.com/gpu=8,pods=110");
    for (int n = 1; n <= 3; n++) {
        char name[16], labels[128];
        snprintf(name, sizeof(name), "r2-n%d", n);
        snprintf(labels, sizeof(labels), RACK "=rack-2," HOST "=%s,pool=gpu", name);
        fx_node(s, name, labels, NULL, "cpu=64,nvidia.com/gpu=8,pods=110");
    }
    fx_wl(s, "ns/lws", "q", 0, 1, "cpu=1,nvidia.com/gpu=4",
          &(fx_wl_opts_t){.count = 1,
                          .template_annotations = GROUP_G,
                          .podsets = "workers:2:cpu=1,nvidia.com/gpu=8",
                          .extra_annotations = GROUP_G});
    fx_run(s, 1, &out, true);
    ck_assert_int_eq(fx_state(s, "ns/lws"), SCHED_WL_ADMITTED);
    ck_assert_str_eq(topo_of_ps("ns/lws", 0), "r2-n1=1");
    ck_assert_str_eq(topo_of_ps("ns/lws", 1), "r2-n2=1 r2-n3=1");
    ck_assert_int_eq(gpus_free("r1-n1"), 4);
    ck_assert_int_eq(gpus_free("r2-n1"), 4);
    ck_assert_int_eq(gpus_free("r2-n3"), 0);
    /* the same group again: no rack holds a leader and two workers now; the reason is the
     * group's, on its first pod set (Kueue gives it to both) */
    fx_wl(s, "ns/lws2", "q", 0, 2, "cpu=1,nvidia.com/gpu=4",
          &(fx_wl_opts_t){.count = 1,
                          .template_annotations = GROUP_G,
                          .podsets = "workers:2:cpu=1,nvidia.com/gpu=8",
                          .extra_annotations = GROUP_G});
    fx_run(s, 3, &out, true);
    ck_assert_int_eq(fx_state(s, "ns/lws2"), SCHED_WL_PENDING);
    expect_message("ns/lws2", "couldn't assign flavors to pod set main: topology \"dc\" allows "
                              "to fit only 1 out of 2 pod(s)");
}
END_TEST

/* It fits the quota but not the nodes; on empty nodes it would: the minimal set of victims in
 * Kueue's order is preempted (candidates lowest priority first, removed until the job is
 * placed, then put back in reverse while it still is), and the job is admitted on the nodes
 * they free once they are gone. */
START_TEST(tas_preempts_minimal_victims)
{
    topology("dc");
    flavor("tas-gpu", "dc");
    tas_queue("q", 64, &(fx_cq_opts_t){.within = PREEMPT_LOWER_PRIORITY});
    cluster(2, 2);
    running_on("ns/a", "q", 1, "r1-n1", 1);
    running_on("ns/b", "q", 2, "r2-n1", 2);
    running_on("ns/c", "q", 0, "r2-n2", 3);
    rack_job("ns/high", "q", 10, 2, 10);
    size_t from = out.len;
    fx_run(s, 10, &out, false);
    /* c (lowest) first frees half of rack-2, then a frees rack-1: placed; c goes back */
    ck_assert_str_eq(preemptions(from), "ns/a<ns/high:InClusterQueue");
    ck_assert_int_eq(fx_state(s, "ns/high"), SCHED_WL_PENDING);
    ck_assert_int_eq(fx_reason(s, "ns/high"), SCHED_REASON_WAITING_FOR_PREEMPTED);
    ck_assert_msg(strstr(fx_message(s, "ns/high"),
                         "couldn't assign flavors to pod set main: topology \"dc\" allows to fit "
                         "only 1 out of 2 pod(s)") == fx_message(s, "ns/high"),
                  "%s", fx_message(s, "ns/high"));
    expect_message("ns/high", ". Pending the preemption of 1 workload(s)");
    /* the victim stops: the preemptor takes rack-1 */
    err_msg_t m;
    ck_assert_msg(sched_evicted(s, "ns/a", 11, &m) == ERR_OK, "%s", m.text);
    fx_run(s, 11, &out, true);
    ck_assert_int_eq(fx_state(s, "ns/high"), SCHED_WL_ADMITTED);
    ck_assert_str_eq(topo_of("ns/high"), "r1-n1=1 r1-n2=1");
    ck_assert_int_eq(gpus_free("r1-n1"), 0);
    ck_assert_int_eq(fx_state(s, "ns/b"), SCHED_WL_ADMITTED);
    ck_assert_int_eq(fx_state(s, "ns/c"), SCHED_WL_ADMITTED);
    /* a waits for its node: nothing it may preempt frees r1-n1 */
    ck_assert_int_eq(fx_state(s, "ns/a"), SCHED_WL_PENDING);
    ck_assert_str_eq(preemptions(from + 1), "");
}
END_TEST

/* withinClusterQueue Never: nothing is preempted; the job waits with Kueue's WaitingForQuota
 * and the topology's reason. */
START_TEST(tas_preempt_policy_never)
{
    topology("dc");
    flavor("tas-gpu", "dc");
    tas_queue("q", 64, NULL);
    cluster(1, 2);
    running_on("ns/low", "q", 0, "r1-n1", 1);
    rack_job("ns/high", "q", 10, 2, 10);
    size_t from = out.len;
    fx_run(s, 10, &out, true);
    ck_assert_str_eq(preemptions(from), "");
    ck_assert_int_eq(fx_state(s, "ns/low"), SCHED_WL_ADMITTED);
    ck_assert_int_eq(fx_state(s, "ns/high"), SCHED_WL_PENDING);
    ck_assert_int_eq(fx_reason(s, "ns/high"), SCHED_REASON_WAITING_FOR_QUOTA);
    expect_message("ns/high", "topology \"dc\" allows to fit only 1 out of 2 pod(s)");
}
END_TEST

/* Simulate-empty keeps what is not topology-aware: a workload admitted through a plain flavor
 * on the same nodes is placed first fit, and its pods count as Kueue's non-TAS usage; the TAS
 * workloads' placements and bound pods do not. */
START_TEST(simulate_empty_keeps_non_tas_usage)
{
    topology("dc");
    flavor("tas-gpu", "dc");
    flavor("plain-gpu", NULL);
    tas_queue("q", 64, &(fx_cq_opts_t){.within = PREEMPT_LOWER_PRIORITY});
    fx_cq(s, "plain", "cpu,nvidia.com/gpu|plain-gpu:1000,64", NULL);
    fx_lq(s, "ns", "plain", "plain", STOP_POLICY_NONE);
    cluster(1, 3);
    fx_wl(s, "ns/plain", "plain", 0, 1, "cpu=1,nvidia.com/gpu=8", NULL);
    fx_run(s, 1, &out, true);
    ck_assert_int_eq(fx_state(s, "ns/plain"), SCHED_WL_ADMITTED);
    ck_assert_int_eq(gpus_free("r1-n1"), 0); /* first fit */
    running_on("ns/low", "q", 0, "r1-n2", 2);
    running_on("ns/low2", "q", 0, "r1-n3", 3);
    fx_pod(s, "ns/low2-0", "r1-n3", "ns/low2", "cpu=1,nvidia.com/gpu=8");
    /* two nodes can be freed (one placed, one with a bound pod): two pods fit, three never */
    rack_job("ns/two", "q", 10, 2, 10);
    rack_job("ns/three", "q", 10, 3, 10);
    size_t from = out.len;
    fx_run(s, 10, &out, false);
    ck_assert_int_eq(fx_reason(s, "ns/three"), SCHED_REASON_TOPOLOGY_PLACEMENT_FAILED);
    ck_assert_str_eq(preemptions(from),
                     "ns/low2<ns/two:InClusterQueue ns/low<ns/two:InClusterQueue");
    ck_assert_int_eq(fx_state(s, "ns/plain"), SCHED_WL_ADMITTED);
}
END_TEST

/* A node is taken by a pod of no workload (Kueue's non-TAS usage, which its simulate-empty pass
 * keeps): the job does not fit even with every TAS workload gone, so it is NoFit with Kueue's
 * TopologyPlacementFailed and nothing is preempted. The same for a job that does not fit even on
 * empty nodes. */
START_TEST(tas_preempt_useless_is_not_done)
{
    topology("dc");
    flavor("tas-gpu", "dc");
    tas_queue("q", 64, &(fx_cq_opts_t){.within = PREEMPT_LOWER_PRIORITY});
    tas_queue("q2", 64, &(fx_cq_opts_t){.within = PREEMPT_LOWER_PRIORITY});
    cluster(1, 2);
    fx_pod(s, "other/p", "r1-n2", NULL, "nvidia.com/gpu=8");
    running_on("ns/low", "q", 0, "r1-n1", 1);
    rack_job("ns/high", "q", 10, 2, 10);
    rack_job("ns/wide", "q2", 10, 3, 10);
    size_t from = out.len;
    fx_run(s, 10, &out, true);
    ck_assert_str_eq(preemptions(from), "");
    ck_assert_int_eq(fx_state(s, "ns/low"), SCHED_WL_ADMITTED);
    ck_assert_int_eq(fx_reason(s, "ns/high"), SCHED_REASON_TOPOLOGY_PLACEMENT_FAILED);
    expect_message("ns/high", "topology \"dc\" doesn't allow to fit any of 2 pod(s)");
    /* 3 pods on a 2-node rack: NoFit, as before topology-aware preemption */
    ck_assert_int_eq(fx_reason(s, "ns/wide"), SCHED_REASON_TOPOLOGY_PLACEMENT_FAILED);
    expect_message("ns/wide", "doesn't allow to fit any of 3 pod(s)");
}
END_TEST

/* A workload of higher priority than the preemptor is never a victim, even when it alone stands
 * between the preemptor and its rack. */
START_TEST(tas_preempt_spares_higher_priority)
{
    topology("dc");
    flavor("tas-gpu", "dc");
    tas_queue("q", 64, &(fx_cq_opts_t){.within = PREEMPT_LOWER_PRIORITY});
    cluster(1, 2);
    running_on("ns/low", "q", 0, "r1-n1", 1);
    running_on("ns/vip", "q", 20, "r1-n2", 2);
    rack_job("ns/high", "q", 10, 2, 10);
    size_t from = out.len;
    fx_run(s, 10, &out, true);
    ck_assert_str_eq(preemptions(from), "");
    ck_assert_int_eq(fx_state(s, "ns/low"), SCHED_WL_ADMITTED);
    ck_assert_int_eq(fx_state(s, "ns/vip"), SCHED_WL_ADMITTED);
    ck_assert_int_eq(fx_state(s, "ns/high"), SCHED_WL_PENDING);
    ck_assert_int_eq(fx_reason(s, "ns/high"), SCHED_REASON_WAITING_FOR_QUOTA);
}
END_TEST

/* Quota and nodes together: the quota alone would take the two lowest (a, b), which leave no
 * rack free; the search goes on to x, and b goes back. */
START_TEST(tas_preempt_quota_and_nodes)
{
    topology("dc");
    flavor("tas-gpu", "dc");
    tas_queue("q", 32, &(fx_cq_opts_t){.within = PREEMPT_LOWER_PRIORITY});
    cluster(2, 2);
    running_on("ns/a", "q", 0, "r1-n1", 1);
    running_on("ns/b", "q", 1, "r2-n1", 2);
    running_on("ns/y", "q", 5, "r2-n2", 3);
    running_on("ns/x", "q", 5, "r1-n2", 4); /* admitted last: before y among equals */
    rack_job("ns/high", "q", 10, 2, 10);
    size_t from = out.len;
    fx_run(s, 10, &out, true);
    ck_assert_str_eq(preemptions(from), "ns/a<ns/high:InClusterQueue ns/x<ns/high:InClusterQueue");
    ck_assert_int_eq(fx_state(s, "ns/high"), SCHED_WL_ADMITTED);
    ck_assert_str_eq(topo_of("ns/high"), "r1-n1=1 r1-n2=1");
    ck_assert_int_eq(fx_state(s, "ns/b"), SCHED_WL_ADMITTED);
    ck_assert_int_eq(fx_state(s, "ns/y"), SCHED_WL_ADMITTED);
    ck_assert_int_eq(fx_usage(s, "q", "tas-gpu", "nvidia.com/gpu"), 32);
}
END_TEST

/* reclaimWithinCohort: a workload of another ClusterQueue is a victim only while that queue
 * borrows (the same rule as quota reclaim); `b_gpus` is b's nominal quota, a's is 32: a's job
 * fits the quota either way, not the nodes. Returns the preemptions. */
static const char *reclaim_case(int b_gpus)
{
    static char got[512];
    topology("dc");
    flavor("tas-gpu", "dc");
    tas_queue("a", 32, &(fx_cq_opts_t){.cohort = "co", .reclaim = PREEMPT_LOWER_PRIORITY});
    tas_queue("b", b_gpus, &(fx_cq_opts_t){.cohort = "co"});
    cluster(1, 2);
    running_on("ns/lender", "b", 0, "r1-n1", 1);
    rack_job("ns/high", "a", 10, 2, 10);
    size_t from = out.len;
    fx_run(s, 10, &out, true);
    snprintf(got, sizeof(got), "%s", preemptions(from));
    return got;
}

START_TEST(tas_preempt_reclaims_borrowed)
{
    ck_assert_str_eq(reclaim_case(0), "ns/lender<ns/high:InCohortReclamation");
    ck_assert_int_eq(fx_state(s, "ns/high"), SCHED_WL_ADMITTED);
    ck_assert_str_eq(topo_of("ns/high"), "r1-n1=1 r1-n2=1");
}
END_TEST

START_TEST(tas_preempt_keeps_nominal)
{
    /* b runs within its nominal quota of 8: not a candidate */
    ck_assert_str_eq(reclaim_case(8), "");
    ck_assert_int_eq(fx_state(s, "ns/lender"), SCHED_WL_ADMITTED);
    ck_assert_int_eq(fx_state(s, "ns/high"), SCHED_WL_PENDING);
    ck_assert_int_eq(fx_reason(s, "ns/high"), SCHED_REASON_WAITING_FOR_QUOTA);
}
END_TEST

/* Nominated in one cycle: x (higher priority, another queue) fits on r1-n2, y needs r1-n1's
 * victim and r1-n2. x is admitted first; y's victims would no longer make room, so y preempts
 * nothing (checked again at its turn, as a fit with the cycle's admissions). */
START_TEST(tas_preempt_rechecked_in_cycle)
{
    topology("dc");
    flavor("tas-gpu", "dc");
    tas_queue("a", 64, NULL);
    tas_queue("b", 64, &(fx_cq_opts_t){.within = PREEMPT_LOWER_PRIORITY});
    cluster(1, 2);
    running_on("ns/low", "b", 0, "r1-n1", 1);
    fx_wl(s, "ns/x", "a", 20, 10, "cpu=1,nvidia.com/gpu=8",
          &(fx_wl_opts_t){.count = 1, .node_selector = HOST "=r1-n2"});
    rack_job("ns/y", "b", 10, 2, 10);
    size_t from = out.len;
    fx_run(s, 10, &out, true);
    ck_assert_int_eq(fx_state(s, "ns/x"), SCHED_WL_ADMITTED);
    ck_assert_str_eq(preemptions(from), "");
    ck_assert_int_eq(fx_state(s, "ns/low"), SCHED_WL_ADMITTED);
    ck_assert_int_eq(fx_state(s, "ns/y"), SCHED_WL_PENDING);
}
END_TEST

/* Fair sharing looks for victims the same way (the fit check is shared). */
START_TEST(tas_preempt_fair_sharing)
{
    sched_free(s);
    sched_config_t cfg = {.tas = true, .fair_sharing = true};
    s = sched_new(&cfg);
    ck_assert_ptr_nonnull(s);
    topology("dc");
    flavor("tas-gpu", "dc");
    tas_queue("q", 64, &(fx_cq_opts_t){.within = PREEMPT_LOWER_PRIORITY});
    cluster(1, 2);
    running_on("ns/low", "q", 0, "r1-n1", 1);
    rack_job("ns/high", "q", 10, 2, 10);
    size_t from = out.len;
    fx_run(s, 10, &out, true);
    ck_assert_str_eq(preemptions(from), "ns/low<ns/high:InClusterQueue");
    ck_assert_int_eq(fx_state(s, "ns/high"), SCHED_WL_ADMITTED);
}
END_TEST

/* The victim's pods were reported bound (the operator): their node usage is its bound Pods, not
 * the engine's placement, and those are what the search takes off the nodes. */
START_TEST(tas_preempt_bound_pods)
{
    topology("dc");
    flavor("tas-gpu", "dc");
    tas_queue("q", 64, &(fx_cq_opts_t){.within = PREEMPT_LOWER_PRIORITY});
    cluster(1, 2);
    running_on("ns/low", "q", 0, "r1-n1", 1);
    fx_pod(s, "ns/low-0", "r1-n1", "ns/low", "cpu=1,nvidia.com/gpu=8");
    ck_assert_int_eq(gpus_free("r1-n1"), 0);
    rack_job("ns/high", "q", 10, 2, 10);
    size_t from = out.len;
    fx_run(s, 10, &out, false);
    ck_assert_str_eq(preemptions(from), "ns/low<ns/high:InClusterQueue");
    ck_assert_int_eq(gpus_free("r1-n1"), 0); /* the search put the pod back */
    err_msg_t m;
    ck_assert_msg(sched_evicted(s, "ns/low", 11, &m) == ERR_OK, "%s", m.text);
    fx_run(s, 11, &out, true);
    /* its pod still runs: the preemptor waits for it */
    ck_assert_int_eq(fx_state(s, "ns/high"), SCHED_WL_PENDING);
    ck_assert_int_eq(sched_pod_unbound(s, "ns/low-0", &m), ERR_OK);
    fx_run(s, 12, &out, true);
    ck_assert_int_eq(fx_state(s, "ns/high"), SCHED_WL_ADMITTED);
    ck_assert_str_eq(preemptions(from + 1), "");
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
    tcase_add_test(tc, tas_preempts_minimal_victims);
    tcase_add_test(tc, tas_preempt_policy_never);
    tcase_add_test(tc, tas_preempt_useless_is_not_done);
    tcase_add_test(tc, tas_preempt_spares_higher_priority);
    tcase_add_test(tc, tas_preempt_quota_and_nodes);
    tcase_add_test(tc, tas_preempt_reclaims_borrowed);
    tcase_add_test(tc, tas_preempt_keeps_nominal);
    tcase_add_test(tc, tas_preempt_rechecked_in_cycle);
    tcase_add_test(tc, tas_preempt_fair_sharing);
    tcase_add_test(tc, tas_preempt_bound_pods);
    tcase_add_test(tc, pod_sets_count_earlier_ones);
    tcase_add_test(tc, podset_group_one_rack);
    tcase_add_test(tc, simulate_empty_keeps_non_tas_usage);
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
