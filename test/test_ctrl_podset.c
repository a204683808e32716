/* test_ctrl_podset -- Job start (template merge, conflicts) and stop (restore) on JSON. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "ctrl/podset.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

static json_t *load(const char *text)
{
    json_error_t e;
    json_t *j = json_loads(text, 0, &e);
    ck_assert_msg(j != NULL, "%s", e.text);
    return j;
}

static const char *job_text =
    "{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"metadata\":{\"name\":\"train\","
    "\"annotations\":{\"a\":\"b\"}},"
    "\"spec\":{\"suspend\":true,\"parallelism\":4,\"template\":{\"metadata\":{\"labels\":"
    "{\"app\":\"x\",\"batch.kubernetes.io/job-name\":\"train\"}},\"spec\":{\"nodeSelector\":"
    "{\"zone\":\"z1\"},\"containers\":[{\"name\":\"c\",\"image\":\"i\"}]}}}}";

static const char *pod_set_text =
    "{\"name\":\"main\",\"count\":4,\"template\":{\"metadata\":{\"labels\":{\"app\":\"x\"}},"
    "\"spec\":{\"nodeSelector\":{\"zone\":\"z1\"},\"containers\":[{\"name\":\"c\",\"image\":\"i\"}]"
    "}}}";

static json_t *path(json_t *j, const char *a, const char *b, const char *c, const char *d)
{
    j = json_object_get(j, a);
    if (b)
        j = json_object_get(j, b);
    if (c)
        j = json_object_get(j, c);
    if (d)
        j = json_object_get(j, d);
    return j;
}

/* podset_stop() succeeds, and says "changed" exactly when `want`. */
#define STOP_CHANGED(job, ps, want)                                \
    do {                                                           \
        bool changed_ = !(want);                                   \
        ck_assert_int_eq(podset_stop(job, ps, &changed_), ERR_OK); \
        ck_assert(changed_ == (want));                             \
    } while (0)

START_TEST(start_merges_admission)
{
    json_t *job = load(job_text), *tmpl;
    json_t *nodes = load("{\"pool\":\"big\",\"zone\":\"z1\"}");
    json_t *tols = load("[{\"key\":\"gpu\",\"operator\":\"Exists\",\"effect\":\"NoSchedule\"}]");
    podset_info_t info = {"main", "lq", "cq-a", "job-train-abcde", nodes, tols, false, 0};
    err_msg_t msg = {{0}};

    ck_assert_int_eq(podset_start(job, &info, &msg), ERR_OK);
    tmpl = path(job, "spec", "template", NULL, NULL);
    ck_assert(json_is_false(path(job, "spec", "suspend", NULL, NULL)));
    ck_assert_str_eq(json_string_value(path(tmpl, "spec", "nodeSelector", "pool", NULL)), "big");
    ck_assert_str_eq(json_string_value(path(tmpl, "spec", "nodeSelector", "zone", NULL)), "z1");
    ck_assert_uint_eq(json_array_size(path(tmpl, "spec", "tolerations", NULL, NULL)), 1);
    ck_assert_str_eq(json_string_value(path(tmpl, "metadata", "labels", PODSET_LABEL_PODSET, NULL)),
                     "main");
    ck_assert_str_eq(
        json_string_value(path(tmpl, "metadata", "labels", PODSET_LABEL_LOCAL_QUEUE, NULL)), "lq");
    ck_assert_str_eq(
        json_string_value(path(tmpl, "metadata", "labels", PODSET_LABEL_CLUSTER_QUEUE, NULL)),
        "cq-a");
    ck_assert_str_eq(
        json_string_value(path(tmpl, "metadata", "annotations", PODSET_ANNOTATION_WORKLOAD, NULL)),
        "job-train-abcde");
    /* Starting twice does not duplicate tolerations. */
    json_object_set_new(json_object_get(job, "spec"), "suspend", json_true());
    ck_assert_int_eq(podset_start(job, &info, &msg), ERR_OK);
    tmpl = path(job, "spec", "template", NULL, NULL); /* the job's members were replaced */
    ck_assert_uint_eq(json_array_size(path(tmpl, "spec", "tolerations", NULL, NULL)), 1);
    json_decref(job);
    json_decref(nodes);
    json_decref(tols);
}
END_TEST

START_TEST(start_conflict_leaves_job)
{
    json_t *job = load(job_text), *before = json_deep_copy(job);
    json_t *nodes = load("{\"zone\":\"z2\"}");
    podset_info_t info = {"main", "lq", "cq-a", "w", nodes, NULL, false, 0};
    err_msg_t msg = {{0}};

    ck_assert_int_eq(podset_start(job, &info, &msg), ERR_CONFLICT);
    ck_assert_str_eq(msg.text, "invalid nodeSelector: conflict for key=zone, value1=z1, value2=z2");
    ck_assert(json_equal(job, before));
    json_decref(job);
    json_decref(before);
    json_decref(nodes);
}
END_TEST

START_TEST(start_partial_admission_and_cq_label)
{
    json_t *job = load(job_text);
    podset_info_t info = {"main", NULL, "Not_A_Label", "w", NULL, NULL, true, 2};

    ck_assert_int_eq(podset_start(job, &info, NULL), ERR_OK);
    ck_assert_int_eq(json_integer_value(path(job, "spec", "parallelism", NULL, NULL)), 2);
    /* The ClusterQueue label is only set for DNS-1123 label names. */
    ck_assert_ptr_null(path(job, "spec", "template", "metadata", "labels") == NULL
                           ? NULL
                           : json_object_get(path(job, "spec", "template", "metadata", "labels"),
                                             PODSET_LABEL_CLUSTER_QUEUE));
    json_decref(job);
}
END_TEST

START_TEST(stop_restores_template)
{
    json_t *job = load(job_text), *ps = load(pod_set_text), *orig = json_deep_copy(job), *t;
    json_t *nodes = load("{\"pool\":\"big\"}");
    json_t *tols = load("[{\"key\":\"gpu\",\"operator\":\"Exists\"}]");
    podset_info_t info = {"main", "lq", "cq-a", "w", nodes, tols, false, 0};

    ck_assert(podset_is_restored(job, ps));
    STOP_CHANGED(job, ps, false);
    ck_assert_int_eq(podset_start(job, &info, NULL), ERR_OK);
    ck_assert(!podset_is_restored(job, ps));
    STOP_CHANGED(job, ps, true);
    ck_assert(podset_is_restored(job, ps));
    /* Back to the original, with the job-controller label kept. */
    ck_assert(json_equal(job, orig));
    t = path(job, "spec", "template", "metadata", "labels");
    ck_assert_str_eq(json_string_value(json_object_get(t, "batch.kubernetes.io/job-name")),
                     "train");
    STOP_CHANGED(job, ps, false);
    json_decref(job);
    json_decref(orig);
    json_decref(ps);
    json_decref(nodes);
    json_decref(tols);
}
END_TEST

START_TEST(stop_without_template_metadata)
{
    json_t *job = load("{\"spec\":{\"suspend\":false,\"template\":{\"spec\":{}}}}");
    json_t *ps = load("{\"name\":\"main\",\"count\":1,\"template\":{\"spec\":{}}}");

    STOP_CHANGED(job, ps, true);
    ck_assert_ptr_null(path(job, "spec", "template", "metadata", NULL));
    ck_assert(json_is_true(path(job, "spec", "suspend", NULL, NULL)));
    ck_assert(podset_is_restored(job, ps));
    json_decref(job);
    json_decref(ps);
}
END_TEST

static json_t *flavor(void *ctx, const char *name)
{
    return json_object_get(ctx, name);
}

START_TEST(flavor_info)
{
    json_t *nodes = NULL, *tols = NULL;
    json_t *a = load("{\"flavors\":{\"cpu\":\"f1\",\"nvidia.com/gpu\":\"f2\",\"memory\":\"f1\"}}");
    json_t *bad = load("{\"flavors\":{\"cpu\":\"f1\",\"nvidia.com/gpu\":\"f3\"}}");
    json_t *missing = load("{\"flavors\":{\"cpu\":\"nope\"}}");
    err_msg_t msg = {{0}};
    json_t *flavors_fixture = load(
        "{\"f1\":{\"spec\":{\"nodeLabels\":{\"pool\":\"a\"}}},"
        "\"f2\":{\"spec\":{\"nodeLabels\":{\"gpu\":\"h100\"},\"tolerations\":[{\"key\":\"g\"}]}},"
        "\"f3\":{\"spec\":{\"nodeLabels\":{\"pool\":\"b\"}}}}");

    ck_assert_int_eq(podset_flavor_info(a, flavor, flavors_fixture, &nodes, &tols, &msg), ERR_OK);
    ck_assert_uint_eq(json_object_size(nodes), 2);
    ck_assert_uint_eq(json_array_size(tols), 1);
    json_decref(nodes);
    json_decref(tols);
    nodes = tols = NULL;
    ck_assert_int_eq(podset_flavor_info(bad, flavor, flavors_fixture, &nodes, &tols, &msg),
                     ERR_CONFLICT);
    ck_assert_ptr_null(nodes);
    ck_assert_int_eq(podset_flavor_info(missing, flavor, flavors_fixture, &nodes, &tols, &msg),
                     ERR_NOT_FOUND);
    ck_assert_str_eq(msg.text, "ResourceFlavor nope not found");
    json_decref(a);
    json_decref(bad);
    json_decref(missing);
    json_decref(flavors_fixture);
}
END_TEST

/* Two racks of four nodes r<rack>-n<i>; only the hostname is in the assignment (Kueue's shape
 * when the lowest level is kubernetes.io/hostname), the rack comes from the Nodes' labels. */
static const char *rack_label(void *ctx, const char *node, const char *key)
{
    (void)ctx;
    if (strcmp(key, "cloud.example.com/rack") != 0 || strlen(node) < 2)
        return NULL;
    return node[1] == '1' ? "rack-1" : node[1] == '2' ? "rack-2" : NULL;
}

START_TEST(topology_selector)
{
    char rack[] = "cloud.example.com/rack", host[] = "kubernetes.io/hostname";
    char n1[] = "r2-n1", n2[] = "r2-n2", n3[] = "r2-n3", n4[] = "r2-n4", o4[] = "r1-n4";
    char *levels[] = {rack, host}, *hl[] = {host};
    char *four[] = {n1, n2, n3, n4}, *split[] = {o4, n1};
    int32_t ones[] = {1, 1, 1, 1};
    topology_assignment_t a = {hl, 1, four, ones, 4};
    json_t *n = load("{\"pool\":\"gpu\"}");
    err_msg_t msg = {{0}};
    size_t pinned = 9;

    /* four nodes of rack-2: the rack is pinned, the node is left to kube-scheduler */
    ck_assert_int_eq(podset_topology_selector(&a, levels, 2, rack_label, NULL, n, &pinned, &msg),
                     ERR_OK);
    ck_assert_uint_eq(pinned, 1);
    ck_assert_uint_eq(json_object_size(n), 2);
    ck_assert_str_eq(json_string_value(json_object_get(n, rack)), "rack-2");
    /* one domain: every level, the node too */
    a.ndomains = 1;
    ck_assert_int_eq(podset_topology_selector(&a, levels, 2, rack_label, NULL, n, &pinned, &msg),
                     ERR_OK);
    ck_assert_uint_eq(pinned, 2);
    ck_assert_str_eq(json_string_value(json_object_get(n, host)), "r2-n1");
    json_decref(n);
    /* domains in two racks: nothing in common, nothing added */
    n = json_object();
    a.values = split;
    a.ndomains = 2;
    ck_assert_int_eq(podset_topology_selector(&a, levels, 2, rack_label, NULL, n, &pinned, &msg),
                     ERR_OK);
    ck_assert_uint_eq(pinned, 0);
    ck_assert_uint_eq(json_object_size(n), 0);
    /* no Node labels known: the upper level cannot be told, the selector stops there */
    a.values = four;
    a.ndomains = 4;
    ck_assert_int_eq(podset_topology_selector(&a, levels, 2, NULL, NULL, n, &pinned, &msg), ERR_OK);
    ck_assert_uint_eq(pinned, 0);
    /* the Topology unknown: the assignment's own levels (one domain) */
    a.ndomains = 1;
    ck_assert_int_eq(podset_topology_selector(&a, NULL, 0, NULL, NULL, n, &pinned, &msg), ERR_OK);
    ck_assert_uint_eq(pinned, 1);
    ck_assert_str_eq(json_string_value(json_object_get(n, host)), "r2-n1");
    json_decref(n);
    /* a flavor label that contradicts the assigned rack: Kueue's conflict message */
    n = load("{\"cloud.example.com/rack\":\"rack-1\"}");
    a.ndomains = 4;
    ck_assert_int_eq(podset_topology_selector(&a, levels, 2, rack_label, NULL, n, NULL, &msg),
                     ERR_CONFLICT);
    ck_assert_str_eq(msg.text, "invalid nodeSelector: conflict for key=cloud.example.com/rack, "
                               "value1=rack-1, value2=rack-2");
    json_decref(n);
    /* no assignment: nothing */
    ck_assert_int_eq(podset_topology_selector(NULL, levels, 2, NULL, NULL, NULL, &pinned, &msg),
                     ERR_OK);
    ck_assert_uint_eq(pinned, 0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("ctrl_podset");
    TCase *tc = tcase_create("core");
    SRunner *sr;
    int failed;

    tcase_add_test(tc, start_merges_admission);
    tcase_add_test(tc, start_conflict_leaves_job);
    tcase_add_test(tc, start_partial_admission_and_cq_label);
    tcase_add_test(tc, stop_restores_template);
    tcase_add_test(tc, stop_without_template_metadata);
    tcase_add_test(tc, flavor_info);
    tcase_add_test(tc, topology_selector);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
