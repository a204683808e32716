/* node -- core/v1 Node objects: labels, taints and allocatable resources, decoded exactly. */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_NODE_H
#define SLUICE_NODE_H

#include "model/diag.h"
#include "model/types.h"

#include <jansson.h>
#include <stdbool.h>

/*
 * The parts of a Node that capacity planning reads. A Node comes from `kubectl get nodes -o yaml`
 * or from the API server, so every byte is hostile: types are checked, lists are bounded, and
 * quantities are exact (model/quantity.h). Fields sluice does not read (addresses, images,
 * daemonEndpoints, ...) are skipped without a word: they change with every Kubernetes release
 * and say nothing about quota.
 */
typedef struct node_s {
    object_meta_t meta; /* name, labels (GPU Feature Discovery labels among them) */
    taint_t *taints;    /* owned: spec.taints */
    size_t ntaints;
    bool unschedulable;          /* spec.unschedulable (cordoned) */
    resource_list_t capacity;    /* status.capacity */
    resource_list_t allocatable; /* status.allocatable: what pods may request */
    bool has_ready;              /* status.conditions has a Ready condition */
    bool ready;                  /* ... whose status is "True" */
    char *kubelet_version;       /* owned: status.nodeInfo.kubeletVersion, NULL when absent */
} node_t;

/* Release what `n` owns and zero it; NULL-safe. */
void node_fini(node_t *n);

/* Is `root` (borrowed) a Node by its apiVersion ("v1") and kind ("Node")? */
bool node_is(const json_t *root);

/* Decode `root` (borrowed), a v1 Node, into `out`. Problems are appended to `diags` with their
 * field paths. Returns ERR_OK when no error was added, ERR_INVALID otherwise (out finalised and
 * zeroed), ERR_NOMEM on allocation failure (likewise). */
err_t node_decode(json_t *root, node_t *out, diags_t *diags);

#endif
