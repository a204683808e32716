/* tas -- topology-aware placement of one pod set on a flavor's nodes (Kueue's TAS algorithm). */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_TAS_H
#define SLUICE_TAS_H

#include "model/quantity.h"
#include "model/types.h"
#include "util/err.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * A pure function: a Topology's levels, the nodes of one flavor with what is free on each, and a
 * pod set's count, per-pod request and topology constraint in; the placement out, in the shape of
 * Kueue's v1beta1 topologyAssignment (levels + domains of values and pod counts), or the reason it
 * does not fit. No I/O, no clock, no hash-order iteration: the same input gives the same answer.
 *
 * It follows Kueue's placement (pkg/cache/scheduler/tas_flavor_snapshot.go
 * findTopologyAssignment, default feature gates: TASProfileMixed on, TASBalancedPlacement and
 * TASRespectNodeAffinityPreferred off) and its documented semantics
 * (site concepts/topology_aware_scheduling):
 *
 *   1. Every node that has all the levels' labels is a leaf of the topology tree; nodes with the
 *      same values on every level are one leaf (their free capacity summed, as Kueue does). A
 *      leaf's capacity is how many pods fit in it: the minimum over requested resources of
 *      free / request. Parents sum their children; the slice count of a domain at the slice
 *      level is its pod count / slice size, and above it the sum of its children's.
 *   2. At the requested level, domains are ordered by slice count (most first; ascending for an
 *      unconstrained request, Kueue's LeastFreeCapacity), then pod count (fewest first), then
 *      label values. BestFit: among the domains that can hold the whole request, the one with the
 *      fewest free slices (the most-filled one) wins. required: if no single domain holds it, it
 *      does not fit. preferred: go one level up and try again; at the top level, take domains in
 *      order (the last one chosen by BestFit) until the request is covered. unconstrained: the
 *      first domain (least free) that holds it, else domains greedily at the lowest level.
 *   3. Down the levels: the chosen domains' children, ordered the same way, take the pods
 *      (again BestFit for the last one), per parent once below the slice level, so that every
 *      slice stays inside one domain of the slice level.
 *   4. The assignment lists the lowest level's domains with their pod counts, sorted by values;
 *      when the lowest level is kubernetes.io/hostname only that level is listed (Kueue's
 *      isLowestLevelNode), otherwise every level.
 *
 *   5. Slice layers (Kueue's TASMultiLayerTopology, podset-slice-required-topology-constraints,
 *      beta and on since Kueue 0.19): the outermost layer is the slice level and size above;
 *      each inner layer (finer level, a size that divides the one above it) asks that every
 *      `size` pods also stay in one domain of its level. Counting up the tree, a domain at or
 *      below an inner layer's level, down to the previous layer's, contributes to its parent
 *      only whole multiples of that layer's size (Kueue's fillInCountsHelper). Going down,
 *      below the slice level each parent's pods go to its children in whole inner slices (their
 *      slice counts recomputed for that size, BestFit by slices), down to the innermost layer's
 *      level; below it pod by pod as before. When such a request does not fit, the message
 *      counts, in the best domain of the level searched, the slices of every layer that fit
 *      (Kueue's multiLayerNotFitMessage).
 *
 *   6. A pod-set group (podset-group-name; tas_place_group()): the workers' request with the
 *      leader's (one pod) beside it. Each leaf also records whether the leader fits and how
 *      many workers fit once it is there; a parent's count with the leader is its children's
 *      total less the smallest loss among its leader-capable children (Kueue's
 *      podCountWithLeader / sliceCountWithLeader / leaderCount). The level's domains are
 *      ordered leader-capable first and chosen by their counts with the leader; down the tree
 *      the child to hold the leader goes first when its loss leaves room for every worker
 *      (prioritizeLeaderDomain). Without a leader those counts equal the plain ones, and the
 *      placement is the one-pod-set placement above, unchanged.
 *
 * Not modelled here (the caller filters nodes, or it is absent): taints, node selectors and
 * affinity (the caller passes only the nodes a pod of the set may run on), balanced placement,
 * replacement of failed nodes (lib/sched/replace.c builds its own request).
 */

#define TAS_HOSTNAME_LABEL "kubernetes.io/hostname"
#define TAS_MAX_LEVELS     16

typedef enum {
    TAS_MODE_REQUIRED = 0, /* podset-required-topology: all pods in one domain of the level */
    TAS_MODE_PREFERRED,    /* podset-preferred-topology: one domain if possible, else fewest */
    TAS_MODE_UNCONSTRAINED /* podset-unconstrained-topology (or only a slice constraint) */
} tas_mode_t;

/* One node of the flavor. */
typedef struct tas_node_s {
    const char *const *values; /* borrowed: its label value for each level; NULL = lacks it */
    const qnano_t *free;       /* borrowed: per resource, allocatable minus what runs there */
} tas_node_t;

/* Inner slice layers a request may carry (Kueue allows 3 layers: the slice level and 2). */
#define TAS_MAX_INNER 2

/* One inner slice layer: every `size` pods in one domain of `level`. */
typedef struct tas_layer_s {
    const char *level; /* borrowed: the level's node label */
    int32_t size;
} tas_layer_t;

/* What to place. */
typedef struct tas_request_s {
    tas_mode_t mode;
    const char *level;       /* required / preferred level's label; NULL for unconstrained */
    int32_t count;           /* pods */
    const qnano_t *per_pod;  /* borrowed: per resource, one pod's request */
    const char *slice_level; /* podset-slice-required-topology label; NULL = no slices */
    int32_t slice_size;      /* podset-slice-size (with slice_level) */
    /* inner slice layers below slice_level, outermost first (with slice_level) */
    tas_layer_t inner[TAS_MAX_INNER];
    size_t ninner;
} tas_request_t;

/* The flavor's topology and nodes. */
typedef struct tas_input_s {
    const char *topology;         /* borrowed: the Topology's name, for messages */
    const char *const *levels;    /* borrowed: node labels, highest level first */
    size_t nlevels;               /* 1..TAS_MAX_LEVELS */
    const char *const *resources; /* borrowed: resource names, for messages */
    size_t nres;
    const tas_node_t *nodes; /* borrowed */
    size_t nnodes;
} tas_input_t;

/* The placement, Kueue's v1beta1 topologyAssignment (counts each > 0, summing to the request's
 * count). */
typedef topology_assignment_t tas_assignment_t;

/* Place `req` on `in`'s nodes into `out` (finalise it with tas_assignment_fini()). ERR_OK: placed.
 * ERR_CONFLICT: it does not fit now; ERR_INVALID: it can never be placed as asked (the level is
 * not in the topology, the slice level is above the requested one, no slice size, an inner
 * layer not below the one before it or whose size does not divide that layer's); `msg` says
 * why, in Kueue's words ("topology \"dc\" allows to fit only 4 out of 5 pod(s)"). ERR_NOMEM on
 * allocation failure. `out` is untouched unless ERR_OK. */
err_t tas_place(const tas_input_t *in, const tas_request_t *req, tas_assignment_t *out,
                err_msg_t *msg);

/* tas_place() for a pod-set group (Kueue's podset-group-name): req is the workers' pod set (its
 * count, per-pod request and topology constraint) and `leader` the leader's per-pod request, per
 * resource of `in` (the leader pod set has one pod; Kueue's grouping requires it);
 * both are placed in one run, every level's domain counted with the leader inside, the leader in
 * one of the lowest level's domains the workers' domain holds. The workers' assignment into
 * `out`, the leader's (one domain, count 1) into `leader_out`; neither is touched unless ERR_OK.
 * Without a leader (NULL) it is tas_place() and leader_out is unused. */
err_t tas_place_group(const tas_input_t *in, const tas_request_t *req, const qnano_t *leader,
                      tas_assignment_t *out, tas_assignment_t *leader_out, err_msg_t *msg);

/* Release what `a` owns and zero it; NULL-safe (topology_assignment_fini()). */
#define tas_assignment_fini topology_assignment_fini

#endif
