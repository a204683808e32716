/* inventory -- node pools: nodes grouped by label values, with their GPUs, CPU, memory, taints,
 * drivers, the GPU nodes that expose no GPU, and the ResourceFlavor each pool suggests. */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_INVENTORY_H
#define SLUICE_INVENTORY_H

#include "model/node.h"
#include "util/err.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* GPU Feature Discovery's labels (NVIDIA k8s-device-plugin's gpu-feature-discovery). */
#define INV_LABEL_PRODUCT      "nvidia.com/gpu.product"
#define INV_LABEL_MEMORY       "nvidia.com/gpu.memory" /* MiB per GPU */
#define INV_LABEL_MIG_STRATEGY "nvidia.com/mig.strategy"
#define INV_LABEL_GPU_COUNT    "nvidia.com/gpu.count"
#define INV_LABEL_GPU_PRESENT  "nvidia.com/gpu.present"
#define INV_LABEL_DRIVER_MAJOR "nvidia.com/cuda.driver.major"
#define INV_LABEL_DRIVER_MINOR "nvidia.com/cuda.driver.minor"
#define INV_LABEL_DRIVER_REV   "nvidia.com/cuda.driver.rev"
#define INV_LABEL_NFD_PCI_10DE "feature.node.kubernetes.io/pci-10de.present" /* NVIDIA's PCI id */

/* The device plugin's resources: whole GPUs, and MIG slices under the mixed strategy. */
#define INV_RESOURCE_GPU        "nvidia.com/gpu"
#define INV_RESOURCE_MIG_PREFIX "nvidia.com/mig-"

/* Most label keys a pool may be grouped by (a ResourceFlavor holds at most 8 nodeLabels). */
#define INV_MAX_KEYS 8

/* One pool: the nodes whose grouping labels have the same values. */
typedef struct inv_pool_s {
    char **values; /* owned: one per key, NULL where the nodes lack the label */
    size_t *nodes; /* owned: indices into the inventory's nodes, in name order */
    size_t nnodes;
    size_t nready;               /* nodes whose Ready condition is True */
    size_t ncordoned;            /* nodes with spec.unschedulable */
    resource_list_t allocatable; /* sum of the nodes' status.allocatable (every resource) */
    taint_t *taints;             /* owned: the taints every node of the pool carries */
    size_t ntaints;
    char **drivers; /* owned: distinct driver versions (major.minor.rev), sorted */
    size_t ndrivers;
    bool gpu;     /* a GPU pool: some node is GPU-labelled or exposes a GPU resource */
    char *flavor; /* owned: suggested ResourceFlavor name (GPU pools), NULL otherwise */
} inv_pool_t;

/* Something wrong with one node, found while taking stock. */
typedef struct inv_problem_s {
    size_t node; /* index into the inventory's nodes */
    char *text;  /* owned: "labelled as a GPU node (nvidia.com/gpu.product=...) but exposes no
                    GPU resource: is the device plugin running?" */
} inv_problem_t;

typedef struct inventory_s {
    const node_t *nodes; /* borrowed: the nodes given to inventory_build() */
    size_t nnodes;
    char **keys; /* owned: the grouping label keys */
    size_t nkeys;
    inv_pool_t *pools; /* owned: GPU pools first, then in order of their label values */
    size_t npools;
    inv_problem_t *problems; /* owned, in node order */
    size_t nproblems;
} inventory_t;

/* The default grouping: product, memory and MIG strategy. */
extern const char *const inventory_default_keys[3];

/* Group `nodes` (borrowed; they must outlive `out`) by the label `keys` (copied; 1 to
 * INV_MAX_KEYS of them) into `out`, sum each pool, collect taints and drivers, flag GPU-labelled
 * nodes exposing no GPU resource, and name a suggested flavor for each GPU pool. ERR_OVERFLOW
 * (a sum beyond the quantity range) names the pool in `msg`; ERR_NOMEM. `out` is zeroed on
 * failure. */
err_t inventory_build(const node_t *nodes, size_t nnodes, const char *const *keys, size_t nkeys,
                      inventory_t *out, err_msg_t *msg);

/* Release what `inv` owns and zero it; NULL-safe. */
void inventory_fini(inventory_t *inv);

/* Is `node` labelled as a GPU node (a grouping label, gpu.present=true, gpu.count or the NVIDIA
 * PCI feature label)? Sets *why (borrowed, may be NULL) to the label that says so. */
bool inventory_gpu_labelled(const node_t *node, const char **why);

/* Does `node` expose a GPU resource (allocatable nvidia.com/gpu or nvidia.com/mig-* above 0)? */
bool inventory_gpu_exposed(const node_t *node);

/* The driver version of `node` from its cuda.driver.* labels into buf ("535.104.05"); NULL when
 * the major label is absent. */
const char *inventory_driver(const node_t *node, char *buf, size_t size);

/* A pool's suggested ResourceFlavor (kueue.x-k8s.io/v1beta2): nodeLabels = the pool's present
 * grouping labels, tolerations = one per NoSchedule/NoExecute taint all its nodes carry. A new
 * reference, NULL for a pool without a flavor or on OOM. */
json_t *inventory_flavor_json(const inventory_t *inv, const inv_pool_t *pool);

/* The whole inventory as data (-o json/yaml): groupBy, pools, problems, suggested flavors. A new
 * reference, NULL on OOM. */
json_t *inventory_json(const inventory_t *inv);

/* The pools as a table, then the problems, on `out`. ERR_IO when writing fails. */
err_t inventory_write_table(const inventory_t *inv, FILE *out);

#endif
