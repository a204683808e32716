/* test_graph -- the queue graph: structure, problems, and its DOT, Mermaid and SVG output. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "graph/graph.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Everything one graph needs, built from a file under $SLUICE_SOURCE_DIR. */
typedef struct fixture_s {
    inv_set_t set;
    inv_view_t view;
    inventory_t inv;
    capacity_t cap;
    graph_t g;
} fixture_t;

static void load(fixture_t *f, const char *const *files, size_t nfiles, bool nodes)
{
    const char *src = getenv("SLUICE_SOURCE_DIR");
    err_msg_t msg;

    memset(f, 0, sizeof(*f));
    inv_set_init(&f->set, stderr);
    for (size_t i = 0; i < nfiles; i++) {
        char path[1024];
        snprintf(path, sizeof(path), "%s/%s", src ? src : ".", files[i]);
        ck_assert_msg(inv_set_read_path(&f->set, path, &msg) == ERR_OK, "%s", msg.text);
    }
    ck_assert_uint_eq(f->set.ninvalid, 0);
    ck_assert_int_eq(inv_set_view(&f->set, &f->view), ERR_OK);
    if (nodes && f->set.nnodes > 0) {
        ck_assert_int_eq(
            inventory_build(f->set.nodes, f->set.nnodes, inventory_default_keys, 3, &f->inv, &msg),
            ERR_OK);
        ck_assert_int_eq(capacity_compare(f->view.flavors, f->view.nflavors, f->view.cqs,
                                          f->view.ncqs, f->view.cohorts, f->view.ncohorts,
                                          f->set.nodes, f->set.nnodes, &f->cap, &msg),
                         ERR_OK);
    }
    ck_assert_int_eq(
        graph_build(&f->view, nodes ? &f->inv : NULL, nodes ? &f->cap : NULL, &f->g, &msg), ERR_OK);
}

static void unload(fixture_t *f)
{
    graph_fini(&f->g);
    capacity_fini(&f->cap);
    inventory_fini(&f->inv);
    inv_view_fini(&f->view);
    inv_set_fini(&f->set);
}

static size_t node_named(const graph_t *g, graph_kind_t kind, const char *name)
{
    for (size_t i = 0; i < g->nnodes; i++)
        if (g->nodes[i].kind == kind && strcmp(g->nodes[i].name, name) == 0)
            return i;
    ck_abort_msg("no node %s", name);
    return GRAPH_NONE;
}

static bool has_edge(const graph_t *g, size_t from, size_t to, const char *label)
{
    for (size_t e = 0; e < g->nedges; e++)
        if (g->edges[e].from == from && g->edges[e].to == to)
            return label == NULL
                       ? g->edges[e].label == NULL
                       : g->edges[e].label != NULL && strcmp(g->edges[e].label, label) == 0;
    return false;
}

static char *render(const graph_t *g, err_t (*write)(const graph_t *, FILE *))
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);

    ck_assert_int_eq(write(g, f), ERR_OK);
    fclose(f);
    return buf;
}

#define ASSERT_HAS(hay, needle) \
    ck_assert_msg(strstr((hay), (needle)) != NULL, "missing \"%s\" in:\n%s", (needle), (hay))

START_TEST(example_structure)
{
    static const char *const files[] = {
        "examples/platform/10-flavors.yaml", "examples/platform/30-cohort.yaml",
        "examples/platform/40-clusterqueues.yaml", "examples/platform/50-localqueues.yaml",
        "examples/nodes.yaml"};
    fixture_t f;
    const graph_t *g = &f.g;
    size_t inference, training, h100, a100, pool;

    load(&f, files, 5, true);
    /* LocalQueues by namespace/name, then the cohort's ClusterQueues by name. */
    ck_assert_str_eq(g->nodes[0].name, "team-inference/default");
    ck_assert_int_eq(g->nodes[0].kind, GRAPH_LQ);
    ck_assert_int_eq(g->nodes[4].kind, GRAPH_CQ);
    ck_assert_str_eq(g->nodes[4].name, "inference");
    ck_assert_str_eq(g->nodes[6].name, "training");
    ck_assert_uint_eq(g->ncohorts, 1);
    ck_assert_str_eq(g->cohorts[0].name, "gpu-platform");
    ck_assert(g->cohorts[0].declared);
    ck_assert_uint_eq(g->nodes[4].cohort, 0);
    inference = node_named(g, GRAPH_CQ, "inference");
    training = node_named(g, GRAPH_CQ, "training");
    h100 = node_named(g, GRAPH_FLAVOR, "h100");
    a100 = node_named(g, GRAPH_FLAVOR, "a100");
    ck_assert(has_edge(g, 2, training, NULL));
    ck_assert(has_edge(g, 3, training, NULL));
    /* Quota lines: GPUs first, limits as written. */
    ck_assert_str_eq(g->nodes[training].quotas[0].text, "nvidia.com/gpu 24 (borrow ≤8)");
    ck_assert(has_edge(g, training, h100,
                       "nvidia.com/gpu 24 (borrow ≤8)\ncpu 576 (borrow ≤192)\nmemory 6Ti "
                       "(borrow ≤2Ti)"));
    ck_assert(has_edge(g, inference, h100,
                       "nvidia.com/gpu 8 (lend ≤4)\ncpu 192 (lend ≤96)\nmemory 2Ti (lend ≤1Ti)"));
    ck_assert(has_edge(g, training, a100, "nvidia.com/gpu 32\ncpu 512\nmemory 4Ti"));
    /* Pools: the flavor selects all 6 nodes of its pool; the MIG pool is drawn unconnected. */
    pool = node_named(g, GRAPH_POOL, "NVIDIA-A100-SXM4-80GB, 81920, none");
    ck_assert(has_edge(g, a100, pool, NULL));
    ck_assert_str_eq(g->nodes[pool].detail, "6 nodes, 40 nvidia.com/gpu, 768 cpu, 6Ti memory");
    node_named(g, GRAPH_POOL, "NVIDIA-A100-SXM4-80GB, 81920, mixed");
    /* The one problem: the missing A100 node's GPUs. */
    ck_assert_uint_eq(g->nproblems, 1);
    ck_assert_str_eq(g->problems[0],
                     "flavor a100: nominal quota of nvidia.com/gpu is 48 (research 16, training "
                     "32), above the 40 allocatable on the 6 nodes flavor a100 selects: admitted "
                     "workloads may not fit");
    ck_assert(g->nodes[a100].problem);
    ck_assert(!g->nodes[h100].problem);
    unload(&f);

    /* Without the nodes: no pools, no capacity problem. */
    load(&f, files, 4, false);
    ck_assert_uint_eq(f.g.nproblems, 0);
    for (size_t i = 0; i < f.g.nnodes; i++)
        ck_assert_int_ne(f.g.nodes[i].kind, GRAPH_POOL);
    unload(&f);
}
END_TEST

START_TEST(every_problem)
{
    static const char *const files[] = {"test/data/graph/problems.yaml"};
    fixture_t f;
    const graph_t *g = &f.g;
    static const char *const want[] = {
        "LocalQueue speech/typo points to ClusterQueue speeech, which does not exist",
        "ResourceFlavor spare: no ClusterQueue or Cohort has quota on it",
        "ClusterQueue speech has quota on ResourceFlavor h200, which does not exist",
        "ResourceFlavor cpu-only selects no node: no node has all its nodeLabels",
        "flavor a100: nominal quota of nvidia.com/gpu is 16 (speech 8, vision 8), above the 8 "
        "allocatable on the 1 node flavor a100 selects: admitted workloads may not fit",
        "cohort research: its 2 ClusterQueues lend nothing (every lendingLimit or quota is 0): "
        "none of them can borrow",
        "ClusterQueue batch: no LocalQueue points to it, so nothing can be submitted to it",
    };

    load(&f, files, 1, true);
    ck_assert_uint_eq(g->nproblems, sizeof(want) / sizeof(want[0]));
    for (size_t i = 0; i < g->nproblems; i++)
        ck_assert_str_eq(g->problems[i], want[i]);
    /* Cohort tree: org before research; ClusterQueues in their cohort's order, then by name. */
    ck_assert_str_eq(g->cohorts[0].name, "org");
    ck_assert_str_eq(g->cohorts[1].name, "research");
    ck_assert_uint_eq(g->cohorts[1].parent, 0);
    ck_assert(g->cohorts[1].problem);
    ck_assert_str_eq(g->nodes[3].name, "batch");
    ck_assert_str_eq(g->nodes[4].name, "speech");
    ck_assert_str_eq(g->nodes[5].name, "vision");
    ck_assert(g->nodes[node_named(g, GRAPH_CQ, "speeech")].missing);
    ck_assert(g->nodes[node_named(g, GRAPH_FLAVOR, "h200")].missing);
    ck_assert_str_eq(g->nodes[5].quotas[0].text, "nvidia.com/gpu 8 (borrow ≤4, lend ≤0)");
    unload(&f);
}
END_TEST

START_TEST(cohort_cycle_is_cut)
{
    static const char text[] = "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Cohort\n"
                               "metadata: {name: a}\nspec: {parentName: b}\n---\n"
                               "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Cohort\n"
                               "metadata: {name: b}\nspec: {parentName: a}\n---\n"
                               "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\n"
                               "metadata: {name: q}\nspec: {cohortName: a}\n";
    FILE *in = fmemopen((void *)text, sizeof(text) - 1, "r");
    inv_set_t s;
    inv_view_t v;
    graph_t g;
    err_msg_t msg;
    char *svg;

    inv_set_init(&s, stderr);
    ck_assert_int_eq(inv_set_read(&s, in, "cycle", &msg), ERR_OK);
    fclose(in);
    ck_assert_int_eq(inv_set_view(&s, &v), ERR_OK);
    ck_assert_int_eq(graph_build(&v, NULL, NULL, &g, &msg), ERR_OK);
    ck_assert_uint_eq(g.ncohorts, 2);
    ck_assert_str_eq(g.problems[0], "cohort a is in a cohort cycle: Kueue admits nothing there");
    svg = render(&g, graph_write_svg);
    /* Cut at a: a is a root; b, below it, has no ClusterQueue and no frame. */
    ASSERT_HAS(svg, "cohort <tspan font-weight=\"bold\">a</tspan>");
    ck_assert_uint_eq(g.cohorts[1].parent, 0);
    free(svg);
    graph_fini(&g);
    inv_view_fini(&v);
    inv_set_fini(&s);
}
END_TEST

/* Read from an API server (or saved with kubectl get -o yaml), queues carry their status: the
 * graph shows usage per quota line and pending/admitted counts. */
START_TEST(live_status_shown)
{
    static const char text[] =
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: q}\n"
        "spec:\n  resourceGroups:\n  - coveredResources: [nvidia.com/gpu]\n    flavors:\n"
        "    - name: a100\n      resources: [{name: nvidia.com/gpu, nominalQuota: 8}]\n"
        "status:\n  pendingWorkloads: 3\n  admittedWorkloads: 2\n  flavorsUsage:\n"
        "  - name: a100\n    resources: [{name: nvidia.com/gpu, total: '6'}]\n"
        "  - name: bogus\n    resources: [{name: nvidia.com/gpu, total: [1]}]\n"
        "---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\n"
        "metadata: {name: l, namespace: ns}\nspec: {clusterQueue: q}\n"
        "status: {pendingWorkloads: 3, admittedWorkloads: 'two'}\n";
    FILE *in = fmemopen((void *)text, sizeof(text) - 1, "r");
    inv_set_t s;
    inv_view_t v;
    graph_t g;
    err_msg_t msg;

    inv_set_init(&s, stderr);
    ck_assert_int_eq(inv_set_read(&s, in, "live", &msg), ERR_OK);
    fclose(in);
    ck_assert_uint_eq(s.ninvalid, 0);
    ck_assert_int_eq(inv_set_view(&s, &v), ERR_OK);
    ck_assert_int_eq(graph_build(&v, NULL, NULL, &g, &msg), ERR_OK);
    ck_assert_str_eq(g.nodes[0].name, "ns/l");
    ck_assert_str_eq(g.nodes[0].detail, "pending 3"); /* 'two' is not a count */
    ck_assert_str_eq(g.nodes[1].detail, "pending 3, admitted 2");
    ck_assert_str_eq(g.nodes[1].quotas[0].text, "nvidia.com/gpu 8, used 6");
    graph_fini(&g);
    inv_view_fini(&v);
    inv_set_fini(&s);
}
END_TEST

START_TEST(writers)
{
    static const char *const files[] = {"test/data/graph/problems.yaml"};
    fixture_t f;
    char *dot, *mmd, *svg, *probs;

    load(&f, files, 1, true);
    dot = render(&f.g, graph_write_dot);
    ASSERT_HAS(dot, "digraph queues {\n  rankdir=LR;\n");
    ASSERT_HAS(dot, "  subgraph cluster_c0 {\n    label=\"cohort org\";");
    ASSERT_HAS(dot, "    subgraph cluster_c1 {\n      label=\"cohort research\"; "
                    "style=\"rounded,dashed\"; color=\"#d93025\";");
    ASSERT_HAS(dot, "[label=\"speeech\\n(missing)\", fillcolor=\"#e6f4ea\", color=\"#d93025\", "
                    "style=\"rounded,dashed\", penwidth=2];");
    ASSERT_HAS(dot, "n5 -> n");
    ASSERT_HAS(dot, " [label=\"nvidia.com/gpu 8 (borrow ≤4, lend ≤0)\\ncpu 64 (lend ≤0)\"];");
    ck_assert_str_eq(dot + strlen(dot) - 2, "}\n");
    mmd = render(&f.g, graph_write_mermaid);
    ASSERT_HAS(mmd, "flowchart LR\n");
    ASSERT_HAS(mmd, "  subgraph c0[\"cohort org\"]\n    subgraph c1[\"cohort research\"]\n");
    ASSERT_HAS(mmd, "-->|\"nvidia.com/gpu 8 (borrow ≤4, lend ≤0)<br/>cpu 64 (lend ≤0)\"| n");
    ASSERT_HAS(mmd, "  classDef problem stroke:#d93025,stroke-width:2px\n");
    svg = render(&f.g, graph_write_svg);
    ck_assert_msg(strncmp(svg, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg ", 44) == 0, "%s",
                  svg);
    ck_assert_str_eq(svg + strlen(svg) - 7, "</svg>\n");
    ASSERT_HAS(svg, ">Problems</text>");
    ASSERT_HAS(svg, "- LocalQueue speech/typo points to ClusterQueue speeech, which does not");
    ASSERT_HAS(svg, "stroke-dasharray=\"5 3\"");
    ck_assert_ptr_null(strstr(svg, "height=\"-"));
    probs = render(&f.g, graph_write_problems);
    ASSERT_HAS(probs, "problem: ResourceFlavor spare: no ClusterQueue or Cohort has quota on it\n");
    free(dot);
    free(mmd);
    free(svg);
    free(probs);
    unload(&f);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("graph");
    TCase *tc = tcase_create("core");

    tcase_add_test(tc, example_structure);
    tcase_add_test(tc, every_problem);
    tcase_add_test(tc, cohort_cycle_is_cut);
    tcase_add_test(tc, live_status_shown);
    tcase_add_test(tc, writers);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(suite());
    int failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
