/* test_inventory -- v1 Node decoding, node pools, suggested flavors, quota against capacity. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "inventory/capacity.h"
#include "inventory/inventory.h"
#include "inventory/manifests.h"
#include "model/node.h"
#include "model/object.h"
#include "squote.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- helpers ----------------------------------------------------------------------------------
 */

static bool has_diag(const diags_t *d, const char *path, const char *msg)
{
    for (size_t i = 0; i < d->len; i++)
        if (strcmp(d->items[i].path, path) == 0 && strstr(d->items[i].message, msg) != NULL)
            return true;
    for (size_t i = 0; i < d->len; i++)
        fprintf(stderr, "  %s: %s\n", d->items[i].path, d->items[i].message);
    return false;
}

/* A GPU node: product, memory (MiB), MIG strategy, allocatable GPUs ("" = none), driver. */
static json_t *gpu_node(const char *name, const char *product, const char *gpus, const char *drv)
{
    json_t *n = squote_json("{'apiVersion':'v1','kind':'Node','metadata':{'labels':{"
                            "'nvidia.com/gpu.memory':'81920','nvidia.com/mig.strategy':'none',"
                            "'nvidia.com/gpu.count':'8'}},"
                            "'spec':{'taints':[{'key':'nvidia.com/gpu','value':'present',"
                            "'effect':'NoSchedule'}]},"
                            "'status':{'allocatable':{'cpu':'127500m','memory':'1Ti'},"
                            "'conditions':[{'type':'Ready','status':'True'}]}}");
    json_t *md = json_object_get(n, "metadata"), *labels = json_object_get(md, "labels");
    json_t *alloc = json_object_get(json_object_get(n, "status"), "allocatable");

    json_object_set_new(md, "name", json_string(name));
    json_object_set_new(labels, "nvidia.com/gpu.product", json_string(product));
    if (gpus[0] != '\0')
        json_object_set_new(alloc, "nvidia.com/gpu", json_string(gpus));
    if (drv != NULL) {
        char major[16], minor[16], rev[16];
        ck_assert_int_eq(sscanf(drv, "%15[0-9].%15[0-9].%15[0-9]", major, minor, rev), 3);
        json_object_set_new(labels, "nvidia.com/cuda.driver.major", json_string(major));
        json_object_set_new(labels, "nvidia.com/cuda.driver.minor", json_string(minor));
        json_object_set_new(labels, "nvidia.com/cuda.driver.rev", json_string(rev));
    }
    return n;
}

static json_t *cpu_node(const char *name)
{
    json_t *n = squote_json("{'apiVersion':'v1','kind':'Node','metadata':{'labels':{}},"
                            "'status':{'allocatable':{'cpu':'32','memory':'128Gi','pods':'110'}}}");

    json_object_set_new(json_object_get(n, "metadata"), "name", json_string(name));
    return n;
}

/* Decode `n` (consumed) into nodes[*len]. */
static void add_node(node_t *nodes, size_t *len, json_t *n)
{
    diags_t d;

    diags_init(&d);
    ck_assert_int_eq(node_decode(n, &nodes[(*len)++], &d), ERR_OK);
    diags_fini(&d);
    json_decref(n);
}

static void free_nodes(node_t *nodes, size_t n)
{
    for (size_t i = 0; i < n; i++)
        node_fini(&nodes[i]);
}

static char *fmtq(const quantity_t *q)
{
    static char buf[QUANTITY_STR_MAX];

    ck_assert_ptr_nonnull(q);
    return quantity_format(*q, buf);
}

/* ---- node decoding ----------------------------------------------------------------------------
 */

START_TEST(node_decodes_exactly)
{
    json_t *j = squote_json(
        "{'apiVersion':'v1','kind':'Node','metadata':{'name':'gpu-1','uid':'u',"
        "'labels':{'nvidia.com/gpu.product':'NVIDIA-H100-80GB-HBM3','nvidia.com/gpu.count':8},"
        "'managedFields':[]},"
        "'spec':{'podCIDR':'10.0.0.0/24','unschedulable':true,'taints':[{'key':'nvidia.com/gpu',"
        "'effect':'NoSchedule','timeAdded':'2024-05-01T10:00:00Z'}]},"
        "'status':{'capacity':{'cpu':'192','memory':'2080Gi','nvidia.com/gpu':'8'},"
        "'allocatable':{'cpu':'191500m','memory':'2113929216Ki','nvidia.com/gpu':8},"
        "'conditions':[{'type':'MemoryPressure','status':'False'},{'type':'Ready',"
        "'status':'False'}],'nodeInfo':{'kubeletVersion':'v1.30.4','osImage':'Ubuntu'},"
        "'images':[{'names':['x'],'sizeBytes':1}],'addresses':[]}}");
    node_t n;
    diags_t d;

    diags_init(&d);
    ck_assert_int_eq(node_decode(j, &n, &d), ERR_OK);
    ck_assert_uint_eq(d.nerrors, 0);
    ck_assert_str_eq(n.meta.name, "gpu-1");
    ck_assert_str_eq(kv_list_get(&n.meta.labels, "nvidia.com/gpu.count"), "8");
    ck_assert(n.unschedulable);
    ck_assert_uint_eq(n.ntaints, 1);
    ck_assert_str_eq(n.taints[0].key, "nvidia.com/gpu");
    ck_assert_ptr_null(n.taints[0].value);
    ck_assert_int_eq(n.taints[0].effect, TAINT_EFFECT_NO_SCHEDULE);
    ck_assert_str_eq(fmtq(resource_list_get(&n.allocatable, "cpu")), "191500m");
    ck_assert_str_eq(fmtq(resource_list_get(&n.allocatable, "memory")), "2016Gi");
    ck_assert_str_eq(fmtq(resource_list_get(&n.allocatable, "nvidia.com/gpu")), "8");
    ck_assert_str_eq(fmtq(resource_list_get(&n.capacity, "memory")), "2080Gi");
    ck_assert(n.has_ready);
    ck_assert(!n.ready);
    ck_assert_str_eq(n.kubelet_version, "v1.30.4");
    node_fini(&n);
    diags_fini(&d);
    json_decref(j);
}
END_TEST

START_TEST(node_errors_name_the_field)
{
    json_t *j = squote_json(
        "{'apiVersion':'v1','kind':'Node','metadata':{'labels':{'a':['x']}},'extra':1,"
        "'spec':{'taints':[{'key':'k','effect':'Sometimes'}],'unschedulable':'yes'},"
        "'status':{'allocatable':{'cpu':'12x'},'conditions':[{'type':'Ready','status':true}],"
        "'nodeInfo':{'kubeletVersion':3}}}");
    node_t n;
    diags_t d;

    diags_init(&d);
    ck_assert_int_eq(node_decode(j, &n, &d), ERR_INVALID);
    ck_assert(has_diag(&d, "metadata.name", "Required value"));
    ck_assert(has_diag(&d, "extra", "unknown field"));
    ck_assert(has_diag(&d, "spec.unschedulable", "must be of type boolean"));
    ck_assert(has_diag(&d, "spec.taints", "supported taint effect values"));
    ck_assert(has_diag(&d, "status.allocatable.cpu", "invalid quantity \"12x\""));
    ck_assert(has_diag(&d, "status.conditions[0].status", "must be of type string"));
    ck_assert(has_diag(&d, "status.nodeInfo.kubeletVersion", "must be of type string"));
    ck_assert_ptr_null(n.meta.name); /* zeroed on failure */
    diags_fini(&d);
    json_decref(j);

    diags_init(&d);
    j = squote_json("{'apiVersion':'v1','kind':'Pod','metadata':{'name':'p'}}");
    ck_assert(!node_is(j));
    ck_assert_int_eq(node_decode(j, &n, &d), ERR_INVALID);
    ck_assert(has_diag(&d, "kind", "not a v1 Node"));
    diags_fini(&d);
    json_decref(j);

    diags_init(&d);
    j = json_string("Node");
    ck_assert_int_eq(node_decode(j, &n, &d), ERR_INVALID);
    diags_fini(&d);
    json_decref(j);
}
END_TEST

/* ---- pools ------------------------------------------------------------------------------------
 */

START_TEST(pools_group_sum_and_flag)
{
    node_t nodes[8];
    size_t n = 0;
    inventory_t inv;
    err_msg_t msg;
    const inv_pool_t *a100, *h100, *cpu;

    add_node(nodes, &n, gpu_node("a100-2", "NVIDIA-A100-SXM4-80GB", "8", "550.54.15"));
    add_node(nodes, &n, cpu_node("cpu-1"));
    add_node(nodes, &n, gpu_node("a100-1", "NVIDIA-A100-SXM4-80GB", "8", "535.161.08"));
    add_node(nodes, &n, gpu_node("a100-3", "NVIDIA-A100-SXM4-80GB", "", "550.54.15"));
    add_node(nodes, &n, gpu_node("h100-1", "NVIDIA-H100-80GB-HBM3", "7", NULL));
    ck_assert_int_eq(inventory_build(nodes, n, inventory_default_keys, 3, &inv, &msg), ERR_OK);

    ck_assert_uint_eq(inv.npools, 3);
    a100 = &inv.pools[0];
    h100 = &inv.pools[1];
    cpu = &inv.pools[2];
    ck_assert_str_eq(a100->values[0], "NVIDIA-A100-SXM4-80GB");
    ck_assert_str_eq(a100->values[1], "81920");
    ck_assert_str_eq(a100->values[2], "none");
    ck_assert_uint_eq(a100->nnodes, 3);
    /* Nodes in name order, sums exact. */
    ck_assert_str_eq(nodes[a100->nodes[0]].meta.name, "a100-1");
    ck_assert_str_eq(nodes[a100->nodes[2]].meta.name, "a100-3");
    ck_assert_str_eq(fmtq(resource_list_get(&a100->allocatable, "nvidia.com/gpu")), "16");
    ck_assert_str_eq(fmtq(resource_list_get(&a100->allocatable, "cpu")), "382500m");
    ck_assert_str_eq(fmtq(resource_list_get(&a100->allocatable, "memory")), "3Ti");
    ck_assert_uint_eq(a100->ndrivers, 2);
    ck_assert_str_eq(a100->drivers[0], "535.161.08");
    ck_assert_str_eq(a100->drivers[1], "550.54.15");
    ck_assert_uint_eq(a100->ntaints, 1);
    ck_assert_str_eq(a100->taints[0].value, "present");
    ck_assert_uint_eq(a100->nready, 3);
    ck_assert(a100->gpu);
    ck_assert_str_eq(a100->flavor, "a100-sxm4-80gb");
    ck_assert_str_eq(h100->flavor, "h100-80gb-hbm3");
    ck_assert_ptr_null(h100->drivers);
    /* The node without GPU labels forms the last pool, with no flavor. */
    ck_assert_ptr_null(cpu->values[0]);
    ck_assert(!cpu->gpu);
    ck_assert_ptr_null(cpu->flavor);
    ck_assert_uint_eq(cpu->ntaints, 0);

    /* a100-3: no GPU resource; h100-1: one GPU fewer than its gpu.count label. */
    ck_assert_uint_eq(inv.nproblems, 2);
    ck_assert_str_eq(nodes[inv.problems[0].node].meta.name, "a100-3");
    ck_assert_str_eq(inv.problems[0].text,
                     "labelled as a GPU node (nvidia.com/gpu.product=NVIDIA-A100-SXM4-80GB) but "
                     "exposes no nvidia.com/gpu or nvidia.com/mig-* resource: is the NVIDIA "
                     "device plugin running?");
    ck_assert_str_eq(nodes[inv.problems[1].node].meta.name, "h100-1");
    ck_assert_str_eq(inv.problems[1].text,
                     "nvidia.com/gpu.count=8 but allocatable nvidia.com/gpu is 7: a GPU is "
                     "unhealthy or withheld by the device plugin");
    inventory_fini(&inv);
    inventory_fini(&inv); /* idempotent */
    free_nodes(nodes, n);
}
END_TEST

START_TEST(pools_by_given_keys_and_taints_in_common)
{
    node_t nodes[4];
    size_t n = 0;
    inventory_t inv;
    err_msg_t msg;
    const char *keys[] = {"pool"};
    json_t *a = gpu_node("x-1", "NVIDIA-L4", "4", NULL),
           *b = gpu_node("x-2", "NVIDIA-L4", "4", NULL);
    json_t *c = cpu_node("y-1");

    json_object_set_new(json_object_get(json_object_get(a, "metadata"), "labels"), "pool",
                        json_string("x"));
    json_object_set_new(json_object_get(json_object_get(b, "metadata"), "labels"), "pool",
                        json_string("x"));
    /* x-2 carries one more taint: it is not the pool's. */
    json_array_append_new(json_object_get(json_object_get(b, "spec"), "taints"),
                          squote_json("{'key':'maintenance','effect':'NoExecute'}"));
    add_node(nodes, &n, a);
    add_node(nodes, &n, b);
    add_node(nodes, &n, c);
    ck_assert_int_eq(inventory_build(nodes, n, keys, 1, &inv, &msg), ERR_OK);
    ck_assert_uint_eq(inv.npools, 2);
    ck_assert_str_eq(inv.pools[0].values[0], "x");
    ck_assert_uint_eq(inv.pools[0].ntaints, 1);
    ck_assert_str_eq(inv.pools[0].taints[0].key, "nvidia.com/gpu");
    ck_assert_str_eq(inv.pools[0].flavor, "x");
    ck_assert_ptr_null(inv.pools[1].values[0]);
    ck_assert_ptr_null(inv.pools[1].flavor);
    inventory_fini(&inv);

    /* Too many or no keys. */
    ck_assert_int_eq(inventory_build(nodes, n, keys, 0, &inv, &msg), ERR_INVALID);
    ck_assert_int_eq(inventory_build(nodes, n, keys, INV_MAX_KEYS + 1, &inv, &msg), ERR_INVALID);
    free_nodes(nodes, n);
}
END_TEST

START_TEST(flavor_names_unique_and_manifest)
{
    node_t nodes[4];
    size_t n = 0;
    inventory_t inv;
    err_msg_t msg;
    json_t *a = gpu_node("a", "NVIDIA-A100-SXM4-80GB", "8", NULL);
    json_t *b = gpu_node("b", "NVIDIA-A100-SXM4-80GB", "8", NULL);
    json_t *f, *want;
    char *got;

    /* b: other GPU memory (another pool, the same product name) and a valueless taint. */
    json_object_set_new(json_object_get(json_object_get(b, "metadata"), "labels"),
                        "nvidia.com/gpu.memory", json_string("40960"));
    json_array_append_new(json_object_get(json_object_get(b, "spec"), "taints"),
                          squote_json("{'key':'dedicated','effect':'NoExecute'}"));
    json_array_append_new(json_object_get(json_object_get(b, "spec"), "taints"),
                          squote_json("{'key':'soft','value':'x','effect':'PreferNoSchedule'}"));
    add_node(nodes, &n, a);
    add_node(nodes, &n, b);
    ck_assert_int_eq(inventory_build(nodes, n, inventory_default_keys, 3, &inv, &msg), ERR_OK);
    ck_assert_uint_eq(inv.npools, 2);
    ck_assert_str_eq(inv.pools[0].flavor, "a100-sxm4-80gb");   /* memory 40960 sorts first */
    ck_assert_str_eq(inv.pools[1].flavor, "a100-sxm4-80gb-2"); /* made unique */
    f = inventory_flavor_json(&inv, &inv.pools[0]);
    want = squote_json(
        "{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'ResourceFlavor','metadata':{'name':"
        "'a100-sxm4-80gb'},'spec':{'nodeLabels':{'nvidia.com/gpu.product':'NVIDIA-A100-SXM4-"
        "80GB','nvidia.com/gpu.memory':'40960','nvidia.com/mig.strategy':'none'},'tolerations':"
        "[{'key':'nvidia.com/gpu','operator':'Equal','value':'present','effect':'NoSchedule'},"
        "{'key':'dedicated','operator':'Exists','effect':'NoExecute'}]}}");
    got = json_dumps(f, JSON_SORT_KEYS);
    ck_assert_msg(json_equal(f, want), "got %s", got);
    free(got);
    json_decref(f);
    json_decref(want);
    /* The decoded flavor is a valid ResourceFlavor. */
    {
        object_t o;
        diags_t d;
        diags_init(&d);
        f = inventory_flavor_json(&inv, &inv.pools[1]);
        ck_assert_int_eq(object_decode(f, &o, &d), ERR_OK);
        ck_assert_str_eq(kv_list_get(&o.u.flavor.node_labels, "nvidia.com/gpu.memory"), "81920");
        object_fini(&o);
        diags_fini(&d);
        json_decref(f);
    }
    f = inventory_json(&inv);
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(json_array_size(json_object_get(f, "pools")), 2);
    ck_assert_uint_eq(json_array_size(json_object_get(f, "flavors")), 2);
    ck_assert_str_eq(
        json_string_value(json_object_get(
            json_object_get(json_array_get(json_object_get(f, "pools"), 1), "allocatable"),
            "nvidia.com/gpu")),
        "8");
    json_decref(f);
    inventory_fini(&inv);
    free_nodes(nodes, n);
}
END_TEST

/* ---- quota against capacity -------------------------------------------------------------------
 */

static object_t decode_obj(const char *text)
{
    json_t *j = squote_json(text);
    object_t o;
    diags_t d;

    diags_init(&d);
    ck_assert_int_eq(object_decode(j, &o, &d), ERR_OK);
    diags_fini(&d);
    json_decref(j);
    return o;
}

START_TEST(capacity_rows_and_warning)
{
    node_t nodes[4];
    size_t n = 0;
    object_t f1 = decode_obj("{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'ResourceFlavor',"
                             "'metadata':{'name':'a100'},'spec':{'nodeLabels':{"
                             "'nvidia.com/gpu.product':'NVIDIA-A100-SXM4-80GB'}}}");
    object_t f2 = decode_obj("{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'ResourceFlavor',"
                             "'metadata':{'name':'h200'},'spec':{'nodeLabels':{"
                             "'nvidia.com/gpu.product':'NVIDIA-H200'}}}");
    object_t f3 = decode_obj("{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'ResourceFlavor',"
                             "'metadata':{'name':'any'}}");
    object_t cq1 = decode_obj(
        "{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'ClusterQueue','metadata':{'name':'train'},"
        "'spec':{'cohortName':'org','resourceGroups':[{'coveredResources':['cpu','nvidia.com/gpu'],"
        "'flavors':[{'name':'a100','resources':[{'name':'cpu','nominalQuota':100},{'name':"
        "'nvidia.com/gpu','nominalQuota':10}]},{'name':'h200','resources':[{'name':'cpu',"
        "'nominalQuota':1},{'name':'nvidia.com/gpu','nominalQuota':8}]},{'name':'missing',"
        "'resources':[{'name':'cpu','nominalQuota':1},{'name':'nvidia.com/gpu','nominalQuota':"
        "1}]}]}]}}");
    object_t cq2 = decode_obj(
        "{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'ClusterQueue','metadata':{'name':'infer'},"
        "'spec':{'resourceGroups':[{'coveredResources':['nvidia.com/gpu','pods'],"
        "'flavors':[{'name':'a100','resources':[{'name':'nvidia.com/gpu','nominalQuota':4},"
        "{'name':'pods','nominalQuota':10}]},{'name':'any','resources':[{'name':'nvidia.com/gpu',"
        "'nominalQuota':0},{'name':'pods','nominalQuota':400}]}]}]}}");
    object_t co = decode_obj(
        "{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'Cohort','metadata':{'name':'org'},"
        "'spec':{'resourceGroups':[{'coveredResources':['nvidia.com/gpu'],"
        "'flavors':[{'name':'a100','resources':[{'name':'nvidia.com/gpu','nominalQuota':2}]}]}]}}");
    const flavor_t *flavors[] = {&f1.u.flavor, &f2.u.flavor, &f3.u.flavor};
    const cluster_queue_t *cqs[] = {&cq1.u.cq, &cq2.u.cq};
    const cohort_t *cohorts[] = {&co.u.cohort};
    capacity_t cap;
    err_msg_t msg;
    char buf[1024];

    add_node(nodes, &n, gpu_node("a-1", "NVIDIA-A100-SXM4-80GB", "8", NULL));
    add_node(nodes, &n, gpu_node("a-2", "NVIDIA-A100-SXM4-80GB", "", NULL));
    add_node(nodes, &n, cpu_node("c-1"));
    ck_assert_int_eq(capacity_compare(flavors, 3, cqs, 2, cohorts, 1, nodes, n, &cap, &msg),
                     ERR_OK);
    /* a100: gpu, cpu, pods; h200: gpu, cpu; any: gpu, pods. The missing flavor is skipped. */
    ck_assert_uint_eq(cap.nrows, 7);
    ck_assert_str_eq(cap.rows[0].flavor->meta.name, "a100");
    ck_assert_str_eq(cap.rows[0].resource, "nvidia.com/gpu");
    ck_assert_str_eq(fmtq(&cap.rows[0].nominal), "16");
    ck_assert_str_eq(fmtq(&cap.rows[0].capacity), "8");
    ck_assert_uint_eq(cap.rows[0].nnodes, 2);
    ck_assert(capacity_over(&cap.rows[0]));
    ck_assert_str_eq(capacity_message(&cap.rows[0], buf, sizeof(buf)),
                     "nominal quota of nvidia.com/gpu is 16 (infer 4, train 10, cohort org 2), "
                     "above the 8 allocatable on the 2 nodes flavor a100 selects: admitted "
                     "workloads may not fit");
    ck_assert_str_eq(cap.rows[1].resource, "cpu");
    ck_assert_str_eq(fmtq(&cap.rows[1].capacity), "255");
    ck_assert(!capacity_over(&cap.rows[1]));
    ck_assert_str_eq(cap.rows[2].resource, "pods");
    ck_assert(capacity_over(&cap.rows[2])); /* 10 pods, none allocatable in the fixture */
    /* Flavors by name: a100, any, h200. A flavor without nodeLabels selects every node: 110
     * pods on c-1. */
    ck_assert_str_eq(cap.rows[3].flavor->meta.name, "any");
    ck_assert_uint_eq(cap.rows[3].nnodes, 3);
    ck_assert(!capacity_over(&cap.rows[3])); /* 0 GPUs of quota */
    ck_assert_str_eq(cap.rows[4].resource, "pods");
    ck_assert_str_eq(fmtq(&cap.rows[4].capacity), "110");
    ck_assert(capacity_over(&cap.rows[4]));
    ck_assert_str_eq(cap.rows[5].flavor->meta.name, "h200");
    ck_assert_uint_eq(cap.rows[5].nnodes, 0);
    ck_assert_str_eq(capacity_message(&cap.rows[5], buf, sizeof(buf)),
                     "nominal quota of nvidia.com/gpu is 8 (train 8), but flavor h200 selects "
                     "no node: its nodeLabels match no node given");
    ck_assert_str_eq(cap.rows[6].resource, "cpu");
    {
        json_t *j = capacity_json(&cap);
        ck_assert_uint_eq(json_array_size(j), 7);
        ck_assert(json_is_true(json_object_get(json_array_get(j, 0), "over")));
        ck_assert_str_eq(json_string_value(json_object_get(
                             json_object_get(json_array_get(j, 0), "quotas"), "cohort/org")),
                         "2");
        json_decref(j);
    }
    capacity_fini(&cap);
    /* As sluice check --nodes reports it: warnings on the flavors' documents. */
    {
        const object_t *objs[] = {&f1, &cq1, NULL, &f2, &co};
        diags_t d[5];
        for (size_t i = 0; i < 5; i++)
            diags_init(&d[i]);
        ck_assert_int_eq(capacity_warn_objects(objs, 5, nodes, n, d, &msg), ERR_OK);
        ck_assert_uint_eq(d[0].len, 1); /* a100: GPUs (cq2 is not among the objects) */
        ck_assert(d[0].items[0].warning);
        ck_assert_str_eq(d[0].items[0].path, "spec.nodeLabels");
        ck_assert_str_eq(d[0].items[0].message,
                         "nominal quota of nvidia.com/gpu is 12 (train 10, cohort org 2), above "
                         "the 8 allocatable on the 2 nodes flavor a100 selects: admitted "
                         "workloads may not fit");
        ck_assert_uint_eq(d[0].nerrors, 0);
        ck_assert_uint_eq(d[1].len, 0);
        ck_assert_uint_eq(d[3].len, 2); /* h200 selects no node: cpu and GPUs */
        for (size_t i = 0; i < 5; i++)
            diags_fini(&d[i]);
    }
    object_fini(&f1);
    object_fini(&f2);
    object_fini(&f3);
    object_fini(&cq1);
    object_fini(&cq2);
    object_fini(&co);
    free_nodes(nodes, n);
}
END_TEST

/* ---- manifest sets ----------------------------------------------------------------------------
 */

START_TEST(manifest_set_reads_lists_and_skips)
{
    static const char text[] =
        "apiVersion: v1\nkind: List\nitems:\n"
        "- {apiVersion: v1, kind: Node, metadata: {name: n1}}\n"
        "- {apiVersion: v1, kind: Node, metadata: {name: n2}, status: {allocatable: {cpu: 1x}}}\n"
        "---\n"
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n"
        "---\n"
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\n"
        "metadata: {name: q, namespace: ns}\nspec: {clusterQueue: cq}\n";
    FILE *in = fmemopen((void *)text, sizeof(text) - 1, "r");
    char *errs = NULL;
    size_t errlen = 0;
    FILE *err = open_memstream(&errs, &errlen);
    inv_set_t s;
    inv_view_t v;
    err_msg_t msg;

    inv_set_init(&s, err);
    ck_assert_int_eq(inv_set_read(&s, in, "f.yaml", &msg), ERR_OK);
    fclose(err);
    fclose(in);
    ck_assert_uint_eq(s.nnodes, 1);
    ck_assert_uint_eq(s.ninvalid, 1);
    ck_assert_uint_eq(s.nskipped, 1);
    ck_assert_str_eq(errs, "f.yaml:1: doc 1 (Node n2): status.allocatable.cpu: invalid quantity "
                           "\"1x\"\n");
    ck_assert_int_eq(inv_set_view(&s, &v), ERR_OK);
    ck_assert_uint_eq(v.nlqs, 1);
    ck_assert_str_eq(v.lqs[0]->cluster_queue, "cq");
    inv_view_fini(&v);
    inv_set_fini(&s);
    free(errs);

    /* An API server's NodeList: the items carry no apiVersion and kind. */
    inv_set_init(&s, stderr);
    {
        json_t *list = squote_json("{'apiVersion':'v1','kind':'NodeList','metadata':{},'items':"
                                   "[{'metadata':{'name':'n1'}},{'metadata':{'name':'n2'}}]}");
        ck_assert_int_eq(inv_set_add(&s, list, "server/nodes", 1, 0), ERR_OK);
        ck_assert_uint_eq(s.nnodes, 2);
        ck_assert_str_eq(s.nodes[1].meta.name, "n2");
        ck_assert_ptr_null(json_object_get(json_array_get(json_object_get(list, "items"), 0),
                                           "kind")); /* the caller's list is untouched */
        json_decref(list);
    }
    inv_set_fini(&s);

    inv_set_init(&s, NULL);
    ck_assert_int_eq(inv_set_read_path(&s, "/nonexistent/nodes.yaml", &msg), ERR_IO);
    ck_assert_str_eq(msg.text, "/nonexistent/nodes.yaml: No such file or directory");
    inv_set_fini(&s);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("inventory");
    TCase *tc = tcase_create("core");

    tcase_add_test(tc, node_decodes_exactly);
    tcase_add_test(tc, node_errors_name_the_field);
    tcase_add_test(tc, pools_group_sum_and_flag);
    tcase_add_test(tc, pools_by_given_keys_and_taints_in_common);
    tcase_add_test(tc, flavor_names_unique_and_manifest);
    tcase_add_test(tc, capacity_rows_and_warning);
    tcase_add_test(tc, manifest_set_reads_lists_and_skips);
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
