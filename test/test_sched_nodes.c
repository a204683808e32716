/* test_sched_nodes -- the engine's Nodes: capacity in use, placement, fragmentation-aware
 * admission. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "sched_fixtures.h"

#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NANO 1000000000LL

static sched_t *s;
static sched_decisions_t out;

static void setup_with(bool node_fit)
{
    sched_config_t cfg = {.node_fit = node_fit};
    s = sched_new(&cfg);
    ck_assert_ptr_nonnull(s);
    sched_decisions_init(&out);
}

static void setup(void)
{
    setup_with(false);
}

static void setup_fit(void)
{
    setup_with(true);
}

static void teardown(void)
{
    sched_decisions_fini(&out);
    sched_free(s);
}

static int64_t node_free(const char *node, const char *res)
{
    size_t i;
    sched_node_res_t r;
    ck_assert_int_eq(sched_node_find(s, node, &i), ERR_OK);
    sched_node_resource(s, i, res, &r);
    return (int64_t)(r.free / NANO);
}

static int64_t node_used_milli(const char *node, const char *res)
{
    size_t i;
    sched_node_res_t r;
    ck_assert_int_eq(sched_node_find(s, node, &i), ERR_OK);
    sched_node_resource(s, i, res, &r);
    return (int64_t)(r.used / 1000000);
}

/* "node:count,node:count" of workload key's placement */
static void place_cb(void *ud, const char *podset, const char *node, int32_t count)
{
    char *buf = ud;
    (void)podset;
    snprintf(buf + strlen(buf), 256 - strlen(buf), "%s%s:%d", buf[0] ? "," : "", node, count);
}

static const char *placement(const char *key)
{
    static char buf[256];
    buf[0] = '\0';
    sched_workload_placement(s, key, place_cb, buf);
    return buf;
}

/* ---- the node model ----------------------------------------------------------------------------
 */

START_TEST(nodes_in_name_order_with_capacity)
{
    ck_assert_uint_eq(sched_node_count(s), 0);
    fx_node(s, "n2", "pool=a", NULL, "cpu=8,nvidia.com/gpu=4,pods=110");
    fx_node(s, "n1", "pool=a", "gpu=yes:NoSchedule", "cpu=16,nvidia.com/gpu=8");
    fx_node(s, "n3", "pool=b", NULL, "cpu=4");
    ck_assert_uint_eq(sched_node_count(s), 3);
    sched_node_info_t info;
    ck_assert_int_eq(sched_node_at(s, 0, &info), ERR_OK);
    ck_assert_str_eq(info.name, "n1");
    ck_assert_uint_eq(info.ntaints, 1);
    ck_assert_str_eq(kv_list_get(info.labels, "pool"), "a");
    ck_assert_int_eq(sched_node_at(s, 2, &info), ERR_OK);
    ck_assert_str_eq(info.name, "n3");
    ck_assert_int_eq(sched_node_at(s, 3, &info), ERR_NOT_FOUND);
    ck_assert_int_eq(node_free("n1", "nvidia.com/gpu"), 8);
    ck_assert_int_eq(node_free("n3", "nvidia.com/gpu"), 0);

    /* bound pods use capacity; an update replaces, an unbind frees */
    fx_pod(s, "ns/p1", "n2", NULL, "cpu=1500m,nvidia.com/gpu=1");
    fx_pod(s, "ns/p2", "n2", NULL, "cpu=1,nvidia.com/gpu=2");
    ck_assert_int_eq(node_free("n2", "nvidia.com/gpu"), 1);
    ck_assert_int_eq(node_used_milli("n2", "cpu"), 2500);
    ck_assert_int_eq(node_used_milli("n2", "pods"), 2000);
    fx_pod(s, "ns/p2", "n2", NULL, "cpu=1,nvidia.com/gpu=3");
    ck_assert_int_eq(node_free("n2", "nvidia.com/gpu"), 0);
    ck_assert_int_eq(sched_pod_unbound(s, "ns/p2", NULL), ERR_OK);
    ck_assert_int_eq(sched_pod_unbound(s, "ns/p2", NULL), ERR_NOT_FOUND);
    ck_assert_int_eq(node_free("n2", "nvidia.com/gpu"), 3);
    ck_assert_int_eq(node_used_milli("n2", "cpu"), 1500);

    /* a pod on a node not known yet is counted when the node arrives */
    fx_pod(s, "ns/early", "n4", NULL, "cpu=2");
    ck_assert_int_eq(sched_node_find(s, "n4", &(size_t){0}), ERR_NOT_FOUND);
    fx_node(s, "n4", NULL, NULL, "cpu=3");
    ck_assert_int_eq(node_free("n4", "cpu"), 1);

    /* a deleted node is gone from the list; revived by an upsert with its pods */
    ck_assert_int_eq(sched_node_delete(s, "n4", NULL), ERR_OK);
    ck_assert_int_eq(sched_node_delete(s, "n4", NULL), ERR_NOT_FOUND);
    ck_assert_uint_eq(sched_node_count(s), 3);
    fx_node(s, "n4", NULL, NULL, "cpu=3");
    ck_assert_int_eq(node_free("n4", "cpu"), 1);
}
END_TEST

START_TEST(pods_fit_and_flavor_selection)
{
    fx_flavor(s, "a100", "pool=a", NULL);
    fx_flavor(s, "l4", "pool=l4", NULL);
    fx_node(s, "a1", "pool=a", "nvidia.com/gpu=present:NoSchedule",
            "cpu=32,nvidia.com/gpu=8,pods=3");
    fx_node(s, "a2", "pool=a", NULL, "cpu=32,nvidia.com/gpu=8");
    size_t a1, a2;
    ck_assert_int_eq(sched_node_find(s, "a1", &a1), ERR_OK);
    ck_assert_int_eq(sched_node_find(s, "a2", &a2), ERR_OK);
    char cpu[] = "cpu", gpu[] = "nvidia.com/gpu";
    resource_t items[2] = {{cpu, quantity_from_int(4, QUANTITY_DECIMAL_SI)},
                           {gpu, quantity_from_int(2, QUANTITY_DECIMAL_SI)}};
    resource_list_t per_pod = {items, 2};
    /* gpu allows 4, cpu 8, but a1 takes 3 pods at most */
    ck_assert_int_eq(sched_node_pods_fit(s, a1, &per_pod), 3);
    ck_assert_int_eq(sched_node_pods_fit(s, a2, &per_pod), 4);
    fx_pod(s, "ns/x", "a2", NULL, "nvidia.com/gpu=5");
    ck_assert_int_eq(sched_node_pods_fit(s, a2, &per_pod), 1);
    ck_assert_int_eq(sched_node_pods_fit(s, 99, &per_pod), 0);

    /* a1's taint needs a toleration; l4 selects neither */
    ck_assert(!sched_node_selected(s, a1, "a100", NULL, 0));
    char key[] = "nvidia.com/gpu";
    toleration_t tol = {.key = key, .op = TOLERATION_OP_EXISTS};
    ck_assert(sched_node_selected(s, a1, "a100", &tol, 1));
    ck_assert(sched_node_selected(s, a2, "a100", NULL, 0));
    ck_assert(!sched_node_selected(s, a2, "l4", NULL, 0));
    ck_assert(!sched_node_selected(s, a2, "missing", NULL, 0));

    sched_flavor_nodes_t fn;
    ck_assert_int_eq(sched_flavor_nodes(s, "a100", "nvidia.com/gpu", &fn), ERR_OK);
    ck_assert_uint_eq(fn.nodes, 2);
    ck_assert_uint_eq(fn.schedulable, 2);
    ck_assert_int_eq(fn.allocatable / NANO, 16);
    ck_assert_int_eq(fn.free / NANO, 11);
    ck_assert_int_eq(fn.largest_free / NANO, 8);
    /* a cordoned node is not free capacity */
    sched_node_spec_t n = {.name = "a1", .labels = NULL, .unschedulable = true, .ready = true};
    ck_assert_int_eq(sched_node_upsert(s, &n, NULL), ERR_OK);
    ck_assert_int_eq(sched_flavor_nodes(s, "a100", "nvidia.com/gpu", &fn), ERR_OK);
    ck_assert_uint_eq(fn.nodes, 1); /* the update dropped its labels */
    ck_assert_int_eq(fn.largest_free / NANO, 3);
    ck_assert_int_eq(sched_flavor_nodes(s, "nope", "nvidia.com/gpu", &fn), ERR_NOT_FOUND);
}
END_TEST

/* ---- placement without the switch: Kueue's decisions, capacity tracked -------------------------
 */

START_TEST(admitted_pods_placed_first_fit)
{
    fx_flavor(s, "gpu", "pool=gpu", NULL);
    fx_cq(s, "cq", "nvidia.com/gpu|gpu:64", NULL);
    fx_lq(s, "ns", "q", "cq", STOP_POLICY_NONE);
    fx_node(s, "g1", "pool=gpu", NULL, "nvidia.com/gpu=8");
    fx_node(s, "g2", "pool=gpu", NULL, "nvidia.com/gpu=8");
    fx_node(s, "other", "pool=cpu", NULL, "nvidia.com/gpu=8");
    fx_wl(s, "ns/a", "q", 0, 1, "nvidia.com/gpu=3", &(fx_wl_opts_t){.count = 3});
    fx_wl(s, "ns/b", "q", 0, 2, "nvidia.com/gpu=6", NULL);
    fx_run(s, 0, &out, true);
    ck_assert_int_eq(fx_state(s, "ns/a"), SCHED_WL_ADMITTED);
    ck_assert_str_eq(placement("ns/a"), "g1:2,g2:1");
    /* b fits no node (2 and 5 free) yet is admitted: quota alone decides, as in Kueue */
    ck_assert_int_eq(fx_state(s, "ns/b"), SCHED_WL_ADMITTED);
    ck_assert_str_eq(placement("ns/b"), "");
    ck_assert_int_eq(node_free("g1", "nvidia.com/gpu"), 2);
    ck_assert_int_eq(node_free("g2", "nvidia.com/gpu"), 5);
    ck_assert_int_eq(node_free("other", "nvidia.com/gpu"), 8);
    ck_assert_int_eq(sched_workload_finish(s, "ns/a", 10, NULL), ERR_OK);
    ck_assert_int_eq(node_free("g1", "nvidia.com/gpu"), 8);
    ck_assert_str_eq(placement("ns/a"), "");

    /* the pods binding for real replace the engine's assumption */
    fx_wl(s, "ns/c", "q", 0, 3, "nvidia.com/gpu=4", NULL);
    fx_run(s, 20, &out, true);
    ck_assert_str_eq(placement("ns/c"), "g1:1");
    fx_pod(s, "ns/c-pod", "g2", "ns/c", "nvidia.com/gpu=4");
    ck_assert_str_eq(placement("ns/c"), "");
    ck_assert_int_eq(node_free("g1", "nvidia.com/gpu"), 8);
    ck_assert_int_eq(node_free("g2", "nvidia.com/gpu"), 4);
}
END_TEST

/* ---- fragmentation-aware admission --------------------------------------------------------------
 */

START_TEST(waits_when_no_node_fits)
{
    fx_flavor(s, "gpu", "pool=gpu", NULL);
    fx_cq(s, "cq", "cpu,nvidia.com/gpu|gpu:100,64", NULL);
    fx_lq(s, "ns", "q", "cq", STOP_POLICY_NONE);
    fx_node(s, "g1", "pool=gpu", NULL, "cpu=32,nvidia.com/gpu=4");
    fx_node(s, "g2", "pool=gpu", NULL, "cpu=32,nvidia.com/gpu=4");
    fx_node(s, "big", "pool=other", NULL, "cpu=32,nvidia.com/gpu=8");
    /* 8 GPUs are free in the flavor, but no one node of it has 8 */
    fx_wl(s, "ns/big", "q", 0, 1, "cpu=1,nvidia.com/gpu=8", NULL);
    fx_wl(s, "ns/small", "q", 0, 2, "cpu=1,nvidia.com/gpu=4", &(fx_wl_opts_t){.count = 2});
    fx_run(s, 0, &out, true);
    ck_assert_int_eq(fx_state(s, "ns/big"), SCHED_WL_PENDING);
    ck_assert_int_eq(fx_reason(s, "ns/big"), SCHED_REASON_NO_FITTING_NODE);
    ck_assert_str_eq(sched_reason_str(SCHED_REASON_NO_FITTING_NODE), "NoFittingNode");
    ck_assert_msg(strstr(fx_message(s, "ns/big"), "fits no free node of flavor gpu") != NULL, "%s",
                  fx_message(s, "ns/big"));
    ck_assert_msg(strstr(fx_message(s, "ns/big"), "nvidia.com/gpu 8") != NULL, "%s",
                  fx_message(s, "ns/big"));
    ck_assert_int_eq(fx_usage(s, "cq", "gpu", "nvidia.com/gpu"), 8); /* small only */
    ck_assert_int_eq(fx_state(s, "ns/small"), SCHED_WL_ADMITTED);
    ck_assert_str_eq(placement("ns/small"), "g1:1,g2:1");

    /* a podset whose pods fit only in part says how many */
    fx_wl(s, "ns/three", "q", 0, 3, "nvidia.com/gpu=2", &(fx_wl_opts_t){.count = 3});
    fx_node(s, "g3", "pool=gpu", NULL, "nvidia.com/gpu=4");
    ck_assert_int_eq(sched_workload_finish(s, "ns/small", 5, NULL), ERR_OK);
    fx_run(s, 10, &out, true);
    ck_assert_int_eq(fx_state(s, "ns/three"), SCHED_WL_ADMITTED);

    /* a ninth GPU node: the big one fits there */
    fx_node(s, "g4", "pool=gpu", NULL, "cpu=32,nvidia.com/gpu=8");
    fx_run(s, 20, &out, true);
    ck_assert_int_eq(fx_state(s, "ns/big"), SCHED_WL_ADMITTED);
    ck_assert_str_eq(placement("ns/big"), "g4:1");
}
END_TEST

START_TEST(partial_fit_message)
{
    fx_flavor(s, "gpu", NULL, NULL);
    fx_cq(s, "cq", "nvidia.com/gpu|gpu:64", NULL);
    fx_lq(s, "ns", "q", "cq", STOP_POLICY_NONE);
    fx_node(s, "g1", NULL, NULL, "nvidia.com/gpu=4");
    fx_node(s, "g2", NULL, NULL, "nvidia.com/gpu=3");
    fx_wl(s, "ns/w", "q", 0, 1, "nvidia.com/gpu=2", &(fx_wl_opts_t){.count = 4});
    fx_run(s, 0, &out, true);
    ck_assert_int_eq(fx_reason(s, "ns/w"), SCHED_REASON_NO_FITTING_NODE);
    ck_assert_msg(strstr(fx_message(s, "ns/w"), "only 3 of its 4 pods") != NULL, "%s",
                  fx_message(s, "ns/w"));
    /* nothing placed, nothing reserved */
    ck_assert_int_eq(node_free("g1", "nvidia.com/gpu"), 4);
    ck_assert_int_eq(fx_usage(s, "cq", "gpu", "nvidia.com/gpu"), 0);
    /* a pod leaving g2 frees the room */
    fx_pod(s, "kube-system/x", "g2", NULL, "cpu=1");
    ck_assert_int_eq(sched_pod_unbound(s, "kube-system/x", NULL), ERR_OK);
    fx_node(s, "g2", NULL, NULL, "nvidia.com/gpu=4");
    fx_run(s, 1, &out, true);
    ck_assert_int_eq(fx_state(s, "ns/w"), SCHED_WL_ADMITTED);
    ck_assert_str_eq(placement("ns/w"), "g1:2,g2:2");
}
END_TEST

START_TEST(taints_cordons_and_selectors)
{
    fx_flavor(s, "gpu", "pool=gpu", NULL);
    fx_cq(s, "cq", "nvidia.com/gpu|gpu:64", NULL);
    fx_lq(s, "ns", "q", "cq", STOP_POLICY_NONE);
    fx_node(s, "tainted", "pool=gpu", "dedicated=ml:NoSchedule", "nvidia.com/gpu=8");
    fx_node(s, "zone-b", "pool=gpu,zone=b", NULL, "nvidia.com/gpu=8");
    sched_node_spec_t cordoned = {.name = "cordoned", .ready = true, .unschedulable = true};
    ck_assert_int_eq(sched_node_upsert(s, &cordoned, NULL), ERR_OK);
    /* nodeSelector zone=a: no node of the flavor has it */
    fx_wl(s, "ns/zone-a", "q", 0, 1, "nvidia.com/gpu=1",
          &(fx_wl_opts_t){.node_selector = "zone=a"});
    /* tolerates the taint: takes the tainted node first (name order) */
    fx_wl(s, "ns/tol", "q", 0, 2, "nvidia.com/gpu=8",
          &(fx_wl_opts_t){.tolerations = "dedicated=ml:NoSchedule"});
    /* no toleration: zone-b only */
    fx_wl(s, "ns/plain", "q", 0, 3, "nvidia.com/gpu=8", NULL);
    fx_wl(s, "ns/plain2", "q", 0, 4, "nvidia.com/gpu=1", NULL);
    fx_run(s, 0, &out, true);
    ck_assert_int_eq(fx_reason(s, "ns/zone-a"), SCHED_REASON_NO_FITTING_NODE);
    ck_assert_msg(strstr(fx_message(s, "ns/zone-a"), "fits no selected node") != NULL, "%s",
                  fx_message(s, "ns/zone-a"));
    ck_assert_str_eq(placement("ns/tol"), "tainted:1");
    ck_assert_str_eq(placement("ns/plain"), "zone-b:1");
    ck_assert_int_eq(fx_reason(s, "ns/plain2"), SCHED_REASON_NO_FITTING_NODE);
}
END_TEST

START_TEST(freed_nodes_requeue_other_cohorts)
{
    /* two ClusterQueues without a cohort share the nodes of one flavor */
    fx_flavor(s, "gpu", NULL, NULL);
    fx_cq(s, "a", "nvidia.com/gpu|gpu:8", NULL);
    fx_cq(s, "b", "nvidia.com/gpu|gpu:8", NULL);
    fx_lq(s, "ns", "qa", "a", STOP_POLICY_NONE);
    fx_lq(s, "ns", "qb", "b", STOP_POLICY_NONE);
    fx_node(s, "g1", NULL, NULL, "nvidia.com/gpu=8");
    fx_wl(s, "ns/a1", "qa", 0, 1, "nvidia.com/gpu=8", NULL);
    fx_run(s, 0, &out, true);
    fx_wl(s, "ns/b1", "qb", 0, 2, "nvidia.com/gpu=8", NULL);
    fx_run(s, 1, &out, true);
    ck_assert_int_eq(fx_reason(s, "ns/b1"), SCHED_REASON_NO_FITTING_NODE);
    /* parked: another cycle changes nothing */
    size_t n = out.len;
    fx_run(s, 2, &out, true);
    ck_assert_uint_eq(out.len, n);
    ck_assert_int_eq(sched_workload_finish(s, "ns/a1", 3, NULL), ERR_OK);
    fx_run(s, 3, &out, true);
    ck_assert_int_eq(fx_state(s, "ns/b1"), SCHED_WL_ADMITTED);
}
END_TEST

START_TEST(clone_keeps_nodes_and_placements)
{
    fx_flavor(s, "gpu", NULL, NULL);
    fx_cq(s, "cq", "nvidia.com/gpu|gpu:64", NULL);
    fx_lq(s, "ns", "q", "cq", STOP_POLICY_NONE);
    fx_node(s, "g1", NULL, NULL, "nvidia.com/gpu=8");
    fx_node(s, "g2", NULL, NULL, "nvidia.com/gpu=8");
    fx_pod(s, "other/p", "g2", NULL, "nvidia.com/gpu=2");
    fx_wl(s, "ns/a", "q", 0, 1, "nvidia.com/gpu=6", NULL);
    fx_run(s, 0, &out, true);
    fx_wl(s, "ns/b", "q", 0, 2, "nvidia.com/gpu=7", NULL);
    sched_t *c = sched_clone(s, 0);
    ck_assert_ptr_nonnull(c);
    sched_t *orig = s;
    /* the copy decides as the original: b fits nowhere (2 and 6 free) */
    s = c;
    ck_assert_int_eq(node_free("g2", "nvidia.com/gpu"), 6);
    ck_assert_str_eq(placement("ns/a"), "g1:1");
    fx_run(s, 1, &out, true);
    ck_assert_int_eq(fx_reason(s, "ns/b"), SCHED_REASON_NO_FITTING_NODE);
    ck_assert_int_eq(sched_workload_finish(s, "ns/a", 2, NULL), ERR_OK);
    fx_run(s, 2, &out, true);
    ck_assert_int_eq(fx_state(s, "ns/b"), SCHED_WL_ADMITTED);
    ck_assert_str_eq(placement("ns/b"), "g1:1");
    s = orig;
    sched_free(c);
    /* nothing reached the original */
    ck_assert_int_eq(node_free("g1", "nvidia.com/gpu"), 2);
    ck_assert_int_eq(fx_state(s, "ns/a"), SCHED_WL_ADMITTED);
}
END_TEST

START_TEST(switch_parse)
{
    bool on = false;
    ck_assert_int_eq(sched_node_fit_parse("true", &on, NULL), ERR_OK);
    ck_assert(on);
    ck_assert_int_eq(sched_node_fit_parse("false", &on, NULL), ERR_OK);
    ck_assert(!on);
    err_msg_t m;
    ck_assert_int_eq(sched_node_fit_parse("yes", &on, &m), ERR_INVALID);
    ck_assert_ptr_nonnull(strstr(m.text, "\"true\" or \"false\""));

    configuration_t conf;
    memset(&conf, 0, sizeof(conf));
    char k[] = SCHED_NODE_FIT_ANNOTATION, v[] = "true";
    kv_t ann = {k, v};
    conf.meta.annotations = (kv_list_t){&ann, 1};
    sched_config_t cfg;
    sched_config_from(&cfg, &conf);
    ck_assert(cfg.node_fit);
    sched_config_from(&cfg, NULL);
    ck_assert(!cfg.node_fit);
}
END_TEST

static Suite *suite(void)
{
    Suite *su = suite_create("sched_nodes");
    TCase *tc = tcase_create("model");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, nodes_in_name_order_with_capacity);
    tcase_add_test(tc, pods_fit_and_flavor_selection);
    tcase_add_test(tc, admitted_pods_placed_first_fit);
    tcase_add_test(tc, switch_parse);
    suite_add_tcase(su, tc);
    tc = tcase_create("fit");
    tcase_add_checked_fixture(tc, setup_fit, teardown);
    tcase_add_test(tc, waits_when_no_node_fits);
    tcase_add_test(tc, partial_fit_message);
    tcase_add_test(tc, taints_cordons_and_selectors);
    tcase_add_test(tc, freed_nodes_requeue_other_cohorts);
    tcase_add_test(tc, clone_keeps_nodes_and_placements);
    suite_add_tcase(su, tc);
    return su;
}

int main(void)
{
    SRunner *sr = srunner_create(suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
