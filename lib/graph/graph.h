/* graph -- the queue graph: LocalQueues -> ClusterQueues (in their cohort tree) -> ResourceFlavors
 * -> node pools, with quotas and limits, and the problems found while drawing it. */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_GRAPH_H
#define SLUICE_GRAPH_H

#include "inventory/capacity.h"
#include "inventory/inventory.h"
#include "inventory/manifests.h"
#include "util/err.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/*
 * The graph is plain data built once from decoded objects; the writers (DOT, Mermaid, SVG) only
 * read it. Everything is in a fixed order (names sorted, cohort members together), so the same
 * manifests always draw the same picture. Cohorts are not boxes with edges but frames around their
 * ClusterQueues (nested for a cohort tree): that keeps every edge between neighbouring columns.
 */

typedef enum {
    GRAPH_LQ = 0,
    GRAPH_CQ,
    GRAPH_FLAVOR,
    GRAPH_POOL,
} graph_kind_t;

#define GRAPH_NONE ((size_t)-1)

/* One line of quota: a flavor and resource of a ClusterQueue or Cohort. */
typedef struct graph_quota_s {
    char *flavor;   /* owned */
    char *resource; /* owned */
    char *text;     /* owned: "nvidia.com/gpu 24 (borrow <= 8, lend <= 4)" */
} graph_quota_t;

typedef struct graph_node_s {
    graph_kind_t kind;
    char *name;   /* owned: "team-a/default" for a LocalQueue, else the object name */
    char *detail; /* owned: one line under the name (pool: "6 nodes, 40 nvidia.com/gpu"), or NULL */
    bool missing; /* referenced, not defined */
    bool problem; /* named by a problem */
    size_t cohort;         /* ClusterQueue: index into cohorts, or GRAPH_NONE */
    graph_quota_t *quotas; /* owned: ClusterQueue, in resource-group order */
    size_t nquotas;
} graph_node_t;

typedef struct graph_edge_s {
    size_t from, to; /* node indices */
    char *label;     /* owned, may be NULL; lines separated by '\n' */
    size_t quota; /* CQ -> flavor: index of the first quota line of that flavor, else GRAPH_NONE */
} graph_edge_t;

typedef struct graph_cohort_s {
    char *name;    /* owned */
    size_t parent; /* index into cohorts, or GRAPH_NONE */
    bool declared; /* a Cohort object exists (else implicit, as Kueue allows) */
    bool problem;
    graph_quota_t *quotas; /* owned: the Cohort's own resourceGroups */
    size_t nquotas;
} graph_cohort_t;

typedef struct graph_s {
    graph_node_t *nodes; /* owned: LocalQueues, ClusterQueues (cohort order), flavors, pools */
    size_t nnodes;
    graph_edge_t *edges; /* owned */
    size_t nedges;
    graph_cohort_t *cohorts; /* owned: parents before children, siblings by name */
    size_t ncohorts;
    char **problems; /* owned: one sentence each */
    size_t nproblems;
    bool have_nodes; /* Nodes were given: pools drawn, capacity compared */
} graph_t;

/* Build the graph of the objects in `view` (borrowed) and, when `inv` is not NULL, its node pools
 * (only pools some flavor selects, and GPU pools) with `cap` (may be NULL) for quota above
 * capacity. ERR_NOMEM; `out` is zeroed on failure. */
err_t graph_build(const inv_view_t *view, const inventory_t *inv, const capacity_t *cap,
                  graph_t *out, err_msg_t *msg);

/* Release what `g` owns and zero it; NULL-safe. */
void graph_fini(graph_t *g);

/* Graphviz DOT, left to right, cohorts as nested clusters. ERR_IO. */
err_t graph_write_dot(const graph_t *g, FILE *out);

/* A Mermaid flowchart (LR), cohorts as nested subgraphs. ERR_IO. */
err_t graph_write_mermaid(const graph_t *g, FILE *out);

/* A standalone SVG document laid out by sluice: columns for LocalQueues, ClusterQueues (framed by
 * cohort), flavors and pools; the problems listed under the drawing. ERR_NOMEM, ERR_IO. */
err_t graph_write_svg(const graph_t *g, FILE *out);

/* The same drawing as one <svg> element without the XML declaration, to place inside an HTML
 * page (the simulator's report). ERR_NOMEM, ERR_IO. */
err_t graph_write_svg_element(const graph_t *g, FILE *out);

/* The problems as text lines ("problem: ..."), or "no problems found". ERR_IO. */
err_t graph_write_problems(const graph_t *g, FILE *out);

#endif
