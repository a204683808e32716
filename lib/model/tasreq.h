/* tasreq -- a pod set's topology request, from Kueue's pod-template annotations. */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_TASREQ_H
#define SLUICE_TASREQ_H

#include "model/diag.h"
#include "model/types.h"

#include <stdbool.h>
#include <stdint.h>

/* Kueue's topology-aware scheduling annotations of a pod template (apis/kueue/v1beta2
 * topology_types.go). */
#define TASREQ_REQUIRED      "kueue.x-k8s.io/podset-required-topology"
#define TASREQ_PREFERRED     "kueue.x-k8s.io/podset-preferred-topology"
#define TASREQ_UNCONSTRAINED "kueue.x-k8s.io/podset-unconstrained-topology"
#define TASREQ_SLICE_LEVEL   "kueue.x-k8s.io/podset-slice-required-topology"
#define TASREQ_SLICE_SIZE    "kueue.x-k8s.io/podset-slice-size"
#define TASREQ_CONSTRAINTS   "kueue.x-k8s.io/podset-slice-required-topology-constraints"
#define TASREQ_GROUP_NAME    "kueue.x-k8s.io/podset-group-name"

typedef enum {
    TASREQ_MODE_NONE = 0,      /* no topology request */
    TASREQ_MODE_REQUIRED,      /* level: every pod in one domain of it */
    TASREQ_MODE_PREFERRED,     /* level: one domain if possible */
    TASREQ_MODE_UNCONSTRAINED, /* anywhere; with slices only: from the top level */
} tasreq_mode_t;

typedef struct tasreq_s {
    tasreq_mode_t mode;
    const char *level;       /* borrowed from the annotations: required / preferred level */
    const char *slice_level; /* borrowed: podset-slice-required-topology, NULL = no slices */
    int32_t slice_size;      /* podset-slice-size (with slice_level) */
    const char *group;       /* borrowed: podset-group-name (only with required / preferred) */
} tasreq_t;

/* Kueue's PodSetTopologyRequest builder (jobframework NewPodSetTopologyRequest) over a pod
 * template's annotations `ann`: required, else preferred, else unconstrained (a boolean; "false"
 * is no request), else a slice constraint alone (unconstrained from the top level). Slices need
 * both the slice level and the size; the group name counts only with required or preferred.
 * Malformed values (which validation reports) read as absent. */
void tasreq_from_annotations(const kv_list_t *ann, tasreq_t *out);

/* Kueue's ValidateTASPodSetRequest over `ann`, the annotations at `path`
 * ("spec.template.metadata.annotations"): one topology annotation at most, label names, the slice
 * annotations together, slice size an int32 >= 1 (and at most `count` when count >= 0), the group
 * name not a number and only with required or preferred. Appended to `d`. */
void tasreq_validate(const kv_list_t *ann, const char *path, int64_t count, diags_t *d);

/* One pod set of an object, for tasreq_validate_groups(). */
typedef struct tasreq_podset_s {
    const char *name;     /* the pod set's name, for messages */
    const kv_list_t *ann; /* its pod template's annotations */
    int64_t count;        /* its pods */
    const char *path;     /* its annotations' path; NULL: reported at "spec", naming the pod set */
} tasreq_podset_t;

/* Kueue's ValidatePodSetGroupingTopology over an object's pod sets: the pod sets with the same
 * podset-group-name (counted only with a required or preferred topology, as the engine reads it)
 * form a group, in order of first appearance; a group has exactly 2 pod sets, one of them with 1
 * pod (the leader), and both ask for the same required or the same preferred level. Each broken
 * rule is reported, in Kueue's words, at every pod set it concerns: as an error, or with `warn`
 * (a Workload, which Kueue's webhook does not check) as a warning that says what the engine does
 * (a group of another size or with no 1-pod pod set is placed pod set by pod set; a group whose
 * topologies differ is placed by its workers' request). Appended to `d`. */
void tasreq_validate_groups(const tasreq_podset_t *ps, size_t n, bool warn, diags_t *d);

#endif
