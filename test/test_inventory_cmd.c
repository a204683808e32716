/* test_inventory_cmd -- `sluice inventory` end to end: the built binary on the shipped example. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "sluice_exec.h"

#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NODES "examples/nodes.yaml"

#define ASSERT_HAS(hay, needle) \
    ck_assert_msg(strstr((hay), (needle)) != NULL, "missing \"%s\" in:\n%s", (needle), (hay))

START_TEST(table_of_the_example)
{
    sluice_result_t r = sluice_exec(NULL, "inventory", NODES, NULL);

    ck_assert_msg(r.rc == 0, "%s", r.err);
    ck_assert_str_eq(r.err, "");
    ASSERT_HAS(r.out,
               "POOL                GPU.PRODUCT            GPU.MEMORY  MIG.STRATEGY  NODES  ");
    ASSERT_HAS(r.out, "a100-sxm4-80gb      NVIDIA-A100-SXM4-80GB  81920       none          6     "
                      "                   40   -                      768     6Ti     "
                      "535.161.08,550.54.15  nvidia.com/gpu=present:NoSchedule\n");
    ASSERT_HAS(r.out, "a100-sxm4-80gb-mig  NVIDIA-A100-SXM4-80GB  81920       mixed         2     "
                      "                   -    1g.10gb=56 3g.40gb=16  256 ");
    ASSERT_HAS(r.out, "l4                  NVIDIA-L4              23034       none          8 (8 "
                      "ready, 1 cordoned)  32 ");
    ASSERT_HAS(r.out, "(no GPU)            <none>                 <none>      <none>        3     "
                      "                   -    -                      94500m  372Gi ");
    ASSERT_HAS(r.out, "\nproblems:\n  node gpu-a100-6: labelled as a GPU node "
                      "(nvidia.com/gpu.product=NVIDIA-A100-SXM4-80GB) but exposes no "
                      "nvidia.com/gpu or nvidia.com/mig-* resource: is the NVIDIA device plugin "
                      "running?\n");
    ck_assert_ptr_null(strstr(r.out, "quota against capacity"));
    sluice_result_fini(&r);

    /* The same from standard input. */
    r = sluice_exec(NODES, "inventory", "-", NULL);
    ck_assert_int_eq(r.rc, 0);
    ASSERT_HAS(r.out, "a100-sxm4-80gb  ");
    sluice_result_fini(&r);
}
END_TEST

START_TEST(quota_against_capacity)
{
    sluice_result_t r = sluice_exec(NULL, "inventory", NODES, "examples/platform/10-flavors.yaml",
                                    "examples/platform/30-cohort.yaml",
                                    "examples/platform/40-clusterqueues.yaml", NULL);

    ck_assert_msg(r.rc == 0, "%s", r.err);
    ASSERT_HAS(r.out, "\nquota against capacity:\n"
                      "FLAVOR  RESOURCE        NOMINAL  ALLOCATABLE  NODES  STATUS\n"
                      "a100    nvidia.com/gpu  48       40           6      OVER\n");
    ASSERT_HAS(r.out, "h100    nvidia.com/gpu  32       32           4      ok\n");
    ASSERT_HAS(r.out, "warning: flavor a100: nominal quota of nvidia.com/gpu is 48 (research 16, "
                      "training 32), above the 40 allocatable on the 6 nodes flavor a100 "
                      "selects: admitted workloads may not fit\n");
    sluice_result_fini(&r);
}
END_TEST

START_TEST(json_and_yaml)
{
    sluice_result_t r =
        sluice_exec(NULL, "inventory", "-o", "json", NODES, "examples/platform/10-flavors.yaml",
                    "examples/platform/40-clusterqueues.yaml", NULL);
    json_error_t je;
    json_t *j, *pool, *cap;

    ck_assert_msg(r.rc == 0, "%s", r.err);
    j = json_loads(r.out, 0, &je);
    ck_assert_msg(j != NULL, "not JSON: %s\n%s", je.text, r.out);
    ck_assert_uint_eq(json_array_size(json_object_get(j, "groupBy")), 3);
    pool = json_array_get(json_object_get(j, "pools"), 1);
    ck_assert_str_eq(json_string_value(json_object_get(pool, "flavor")), "a100-sxm4-80gb");
    ck_assert_uint_eq(json_array_size(json_object_get(pool, "nodes")), 6);
    ck_assert_str_eq(
        json_string_value(json_object_get(json_object_get(pool, "allocatable"), "nvidia.com/gpu")),
        "40");
    ck_assert_str_eq(json_string_value(json_array_get(json_object_get(pool, "drivers"), 0)),
                     "535.161.08");
    ck_assert_str_eq(json_string_value(json_object_get(
                         json_array_get(json_object_get(j, "problems"), 0), "node")),
                     "gpu-a100-6");
    cap = json_object_get(j, "capacity");
    ck_assert_uint_eq(json_array_size(cap), 9);
    ck_assert(json_is_true(json_object_get(json_array_get(cap, 0), "over")));
    ck_assert(json_is_false(json_object_get(json_array_get(cap, 3), "over")));
    json_decref(j);
    sluice_result_fini(&r);

    r = sluice_exec(NULL, "inventory", "--output=yaml", NODES, NULL);
    ck_assert_int_eq(r.rc, 0);
    ASSERT_HAS(r.out, "groupBy:\n- nvidia.com/gpu.product\n");
    ASSERT_HAS(r.out, "  flavor: a100-sxm4-80gb-mig\n");
    sluice_result_fini(&r);
}
END_TEST

START_TEST(suggested_flavors_pass_check)
{
    sluice_result_t r = sluice_exec(NULL, "inventory", "--flavors", NODES, NULL);
    char path[] = "/tmp/sluice-flavors-XXXXXX";
    int fd = mkstemp(path);
    FILE *f;

    ck_assert_int_eq(r.rc, 0);
    ASSERT_HAS(r.out, "kind: ResourceFlavor\nmetadata:\n  name: a100-sxm4-80gb-mig\n");
    ASSERT_HAS(r.out, "  tolerations:\n  - key: nvidia.com/gpu\n    operator: Equal\n"
                      "    value: present\n    effect: NoSchedule\n");
    ck_assert_ptr_null(strstr(r.out, "(no GPU)"));
    ck_assert_int_ge(fd, 0);
    f = fdopen(fd, "w");
    fputs(r.out, f);
    fclose(f);
    sluice_result_fini(&r);
    r = sluice_exec(NULL, "check", path, NULL);
    ck_assert_msg(r.rc == 0, "%s%s", r.out, r.err);
    ASSERT_HAS(r.err, "4 objects in 1 file: ok");
    sluice_result_fini(&r);
    unlink(path);

    r = sluice_exec(NULL, "inventory", "--flavors", "-o", "json", NODES, NULL);
    ck_assert_int_eq(r.rc, 0);
    ASSERT_HAS(r.out, "\"kind\": \"List\"");
    sluice_result_fini(&r);
}
END_TEST

START_TEST(group_by_keys)
{
    sluice_result_t r = sluice_exec(NULL, "inventory", "--group-by", "node-pool", NODES, NULL);

    ck_assert_int_eq(r.rc, 0);
    ASSERT_HAS(r.out, "POOL          NODE-POOL     NODES  ");
    ASSERT_HAS(r.out, "gpu-h100      gpu-h100      4  ");
    ASSERT_HAS(r.out, "(no GPU)      system        3  ");
    sluice_result_fini(&r);
}
END_TEST

START_TEST(usage_and_input_errors)
{
    sluice_result_t r = sluice_exec(NULL, "inventory", NULL);

    ck_assert_int_eq(r.rc, 2);
    ASSERT_HAS(r.err, "no FILE given");
    sluice_result_fini(&r);

    r = sluice_exec(NULL, "inventory", "-o", "xml", NODES, NULL);
    ck_assert_int_eq(r.rc, 2);
    ASSERT_HAS(r.err, "xml");
    sluice_result_fini(&r);

    r = sluice_exec(NULL, "inventory", "--group-by", "a,,b", NODES, NULL);
    ck_assert_int_eq(r.rc, 2);
    ASSERT_HAS(r.err, "--group-by");
    sluice_result_fini(&r);

    r = sluice_exec(NULL, "inventory", "--bogus", NODES, NULL);
    ck_assert_int_eq(r.rc, 2);
    ASSERT_HAS(r.err, "--bogus");
    sluice_result_fini(&r);

    r = sluice_exec(NULL, "inventory", "test/data/inventory/missing.yaml", NULL);
    ck_assert_int_eq(r.rc, 2);
    ASSERT_HAS(r.err, "test/data/inventory/missing.yaml: No such file or directory");
    sluice_result_fini(&r);

    /* A Node that does not decode is named, left out, and the exit status says so. */
    r = sluice_exec(NULL, "inventory", "test/data/inventory/bad-node.yaml", NODES, NULL);
    ck_assert_int_eq(r.rc, 1);
    ck_assert_str_eq(r.err, "test/data/inventory/bad-node.yaml:2: doc 1 (Node broken): "
                            "status.allocatable.nvidia.com/gpu: invalid quantity \"eight\"\n");
    ASSERT_HAS(r.out, "a100-sxm4-80gb  ");
    sluice_result_fini(&r);

    /* Queues but no Node. */
    r = sluice_exec(NULL, "inventory", "examples/platform/40-clusterqueues.yaml", NULL);
    ck_assert_int_eq(r.rc, 2);
    ASSERT_HAS(r.err, "no Node among the objects read");
    sluice_result_fini(&r);

    r = sluice_exec(NULL, "inventory", "--help", NULL);
    ck_assert_int_eq(r.rc, 0);
    ASSERT_HAS(r.out, "usage: sluice inventory");
    sluice_result_fini(&r);
}
END_TEST

/* ---- sluice check --nodes ---------------------------------------------------------------------
 */

START_TEST(check_nodes_warns_on_the_flavor)
{
    sluice_result_t r = sluice_exec(NULL, "check", "--nodes", NODES, "examples/platform", NULL);

    ck_assert_msg(r.rc == 0, "%s%s", r.out, r.err); /* a warning, not an error */
    ck_assert_str_eq(r.out, "examples/platform/10-flavors.yaml:26:3: doc 2 (ResourceFlavor a100): "
                            "warning: spec.nodeLabels: nominal quota of nvidia.com/gpu is 48 "
                            "(research 16, training 32), above the 40 allocatable on the 6 nodes "
                            "flavor a100 selects: admitted workloads may not fit\n");
    ASSERT_HAS(r.err, "20 objects in 7 files: ok, 1 warning");
    sluice_result_fini(&r);

    /* The Nodes from standard input. */
    r = sluice_exec(NODES, "check", "--nodes=-", "examples/platform", NULL);
    ck_assert_int_eq(r.rc, 0);
    ASSERT_HAS(r.out, "(ResourceFlavor a100): warning: spec.nodeLabels: ");
    sluice_result_fini(&r);

    /* Nodes that cannot be read are a file that could not be read. */
    r = sluice_exec(NULL, "check", "--nodes", "test/data/inventory/bad-node.yaml",
                    "examples/platform", NULL);
    ck_assert_int_eq(r.rc, 2);
    ASSERT_HAS(r.err, "sluice check: --nodes holds an invalid Node\n");
    sluice_result_fini(&r);
    r = sluice_exec(NULL, "check", "--nodes", "test/data/inventory/missing.yaml",
                    "examples/platform", NULL);
    ck_assert_int_eq(r.rc, 2);
    ASSERT_HAS(r.err, "sluice check: --nodes test/data/inventory/missing.yaml: No such file or "
                      "directory\n");
    sluice_result_fini(&r);
}
END_TEST

/* ---- sluice graph ---------------------------------------------------------------------------- */

#define PLATFORM                                                             \
    "examples/platform/10-flavors.yaml", "examples/platform/30-cohort.yaml", \
        "examples/platform/40-clusterqueues.yaml", "examples/platform/50-localqueues.yaml"

START_TEST(graph_of_the_example)
{
    sluice_result_t r = sluice_exec(NULL, "graph", PLATFORM, NODES, NULL);
    char *svg;

    ck_assert_msg(r.rc == 0, "%s", r.err);
    ASSERT_HAS(r.out, "digraph queues {\n");
    ASSERT_HAS(r.out, "  n2 -> n6;\n");
    ASSERT_HAS(r.out, "// problem: flavor a100: nominal quota of nvidia.com/gpu is 48");
    ck_assert_str_eq(r.err, "problem: flavor a100: nominal quota of nvidia.com/gpu is 48 "
                            "(research 16, training 32), above the 40 allocatable on the 6 nodes "
                            "flavor a100 selects: admitted workloads may not fit\n");
    sluice_result_fini(&r);

    /* The README's picture is what sluice draws today. */
    r = sluice_exec(NULL, "graph", "-o", "svg", PLATFORM, NODES, NULL);
    ck_assert_int_eq(r.rc, 0);
    {
        char path[1024];
        snprintf(path, sizeof(path), "%s/docs/graph-example.svg",
                 getenv("SLUICE_SOURCE_DIR") ? getenv("SLUICE_SOURCE_DIR") : ".");
        svg = sluice_read_file(path);
    }
    ck_assert_msg(strcmp(r.out, svg) == 0,
                  "docs/graph-example.svg is stale: regenerate it with sluice graph -o svg "
                  "examples/platform/{10-flavors,30-cohort,40-clusterqueues,50-localqueues}.yaml "
                  "examples/nodes.yaml");
    free(svg);

    /* A directory is its manifest files in name order (other kinds skipped). */
    {
        sluice_result_t d =
            sluice_exec(NULL, "graph", "-o", "svg", "examples/platform", NODES, NULL);
        ck_assert_int_eq(d.rc, 0);
        ck_assert_str_eq(d.out, r.out);
        sluice_result_fini(&d);
    }
    sluice_result_fini(&r);

    r = sluice_exec(NULL, "graph", "--output=mermaid", PLATFORM, NULL);
    ck_assert_int_eq(r.rc, 0);
    ASSERT_HAS(r.out, "flowchart LR\n");
    ASSERT_HAS(r.out, "  subgraph c0[\"cohort gpu-platform\"]\n");
    ck_assert_str_eq(r.err, "");
    sluice_result_fini(&r);
}
END_TEST

START_TEST(graph_usage_errors)
{
    sluice_result_t r = sluice_exec(NULL, "graph", NULL);

    ck_assert_int_eq(r.rc, 2);
    ASSERT_HAS(r.err, "no FILE given");
    sluice_result_fini(&r);

    r = sluice_exec(NULL, "graph", "-o", "png", PLATFORM, NULL);
    ck_assert_int_eq(r.rc, 2);
    ASSERT_HAS(r.err, "dot, mermaid or svg");
    sluice_result_fini(&r);

    r = sluice_exec(NULL, "graph", "test/data/graph/problems.yaml",
                    "test/data/inventory/bad-node.yaml", NULL);
    ck_assert_int_eq(r.rc, 1);
    ASSERT_HAS(r.err, "problem: LocalQueue speech/typo points to ClusterQueue speeech");
    ASSERT_HAS(r.err, "bad-node.yaml:2: doc 1 (Node broken): ");
    sluice_result_fini(&r);

    r = sluice_exec(NULL, "graph", "--help", NULL);
    ck_assert_int_eq(r.rc, 0);
    ASSERT_HAS(r.out, "usage: sluice graph");
    sluice_result_fini(&r);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("inventory_cmd");
    TCase *tc = tcase_create("cmd");

    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, table_of_the_example);
    tcase_add_test(tc, quota_against_capacity);
    tcase_add_test(tc, json_and_yaml);
    tcase_add_test(tc, suggested_flavors_pass_check);
    tcase_add_test(tc, group_by_keys);
    tcase_add_test(tc, usage_and_input_errors);
    tcase_add_test(tc, check_nodes_warns_on_the_flavor);
    tcase_add_test(tc, graph_of_the_example);
    tcase_add_test(tc, graph_usage_errors);
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
