/* capacity -- nominal quota against allocatable capacity, per ResourceFlavor and resource. */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_CAPACITY_H
#define SLUICE_CAPACITY_H

#include "model/diag.h"
#include "model/node.h"
#include "model/object.h"
#include "model/types.h"
#include "util/err.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/*
 * Kueue admits against quota alone: when the nominal quotas of the ClusterQueues (and Cohorts)
 * on a flavor add up to more than the nodes the flavor selects can hold, admitted workloads sit
 * Pending (kubernetes-sigs/kueue #2665). This compares, for each flavor and resource, the sum of
 * every nominalQuota on that flavor with the sum of status.allocatable of the nodes whose labels
 * match the flavor's nodeLabels (a flavor without nodeLabels selects every node). It is advice,
 * not a rule: callers report it as a warning.
 */

/* One queue's share of a row's nominal quota. */
typedef struct cap_owner_s {
    const char *name; /* borrowed: the ClusterQueue's or Cohort's name */
    bool cohort;      /* a Cohort's own quota */
    quantity_t nominal;
} cap_owner_t;

/* One flavor and resource. */
typedef struct cap_row_s {
    const flavor_t *flavor; /* borrowed */
    const char *resource;   /* borrowed from the first quota naming it */
    quantity_t nominal;     /* sum over owners */
    quantity_t capacity;    /* sum of allocatable over the selected nodes */
    size_t nnodes;          /* nodes the flavor selects */
    cap_owner_t *owners;    /* owned: ClusterQueues by name, then Cohorts by name */
    size_t nowners;
} cap_row_t;

typedef struct capacity_s {
    cap_row_t *rows; /* owned: by flavor name, GPU resources first in each */
    size_t nrows;
} capacity_t;

/* Does `flavor` select `node` (every nodeLabel present with the same value)? */
bool capacity_selects(const flavor_t *flavor, const node_t *node);

/* Compare quotas with capacity (all arrays borrowed; they must outlive `out`). Quotas on flavors
 * missing from `flavors` are skipped (sluice check reports the missing flavor). ERR_OVERFLOW
 * names the flavor and resource in `msg`; ERR_NOMEM. `out` is zeroed on failure. */
err_t capacity_compare(const flavor_t *const *flavors, size_t nflavors,
                       const cluster_queue_t *const *cqs, size_t ncqs,
                       const cohort_t *const *cohorts, size_t ncohorts, const node_t *nodes,
                       size_t nnodes, capacity_t *out, err_msg_t *msg);

/* Release what `c` owns and zero it; NULL-safe. */
void capacity_fini(capacity_t *c);

/* Is the row's nominal quota above its capacity? */
bool capacity_over(const cap_row_t *row);

/* The warning for an over-committed row into buf: "nominal quota of nvidia.com/gpu is 48
 * (research 16, training 32), above the 40 allocatable on the 6 nodes flavor a100 selects";
 * for a flavor that selects no node, says so. Returns buf. */
const char *capacity_message(const cap_row_t *row, char *buf, size_t size);

/* The rows as data: [{flavor, resource, nominal, allocatable, nodes, over, quotas: {name: q}}].
 * A new reference, NULL on OOM. */
json_t *capacity_json(const capacity_t *c);

/* The rows as a table, then one warning line per over-committed row. ERR_NOMEM, ERR_IO. */
err_t capacity_write_table(const capacity_t *c, FILE *out);

/* For `sluice check --nodes`: compare the quotas of the decoded objects `objs` (n of them, NULL
 * entries skipped; ResourceFlavors, ClusterQueues and Cohorts are read, the rest ignored) with the
 * capacity of `nodes`, and append to diags[i] of each over-committed ResourceFlavor objs[i] one
 * warning at "spec.nodeLabels" per resource (capacity_message()). ERR_NOMEM, ERR_OVERFLOW. */
err_t capacity_warn_objects(const object_t *const *objs, size_t n, const node_t *nodes,
                            size_t nnodes, diags_t *diags, err_msg_t *msg);

#endif
