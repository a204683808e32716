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

/* Slice layers: Kueue's TASMultiLayerTopology (beta, on by default since Kueue 0.19) allows 3. */
#define TASREQ_MAX_LAYERS 3
/* The longest label key (a 253-byte DNS prefix, "/", a 63-byte name). */
#define TASREQ_LEVEL_MAX 317

/* One slice layer: every `size` pods of the pod set stay inside one domain of `level`. */
typedef struct tasreq_layer_s {
    char level[TASREQ_LEVEL_MAX + 1]; /* the level's node label */
    int32_t size;                     /* pods per slice (validation wants >= 1) */
} tasreq_layer_t;

typedef struct tasreq_s {
    tasreq_mode_t mode;
    const char *level; /* borrowed from the annotations: required / preferred level */
    /* slice layers, outermost first, each size a multiple of the next one's (validation's rule;
     * the engine refuses the others): podset-slice-required-topology with podset-slice-size
     * (one layer), or podset-slice-required-topology-constraints (1 to 3); 0 = no slices */
    size_t nlayers;
    tasreq_layer_t layers[TASREQ_MAX_LAYERS];
    const char *group; /* borrowed: podset-group-name (only with required / preferred) */
} tasreq_t;

/* Kueue's PodSetTopologyRequest builder (jobframework NewPodSetTopologyRequest) over a pod
 * template's annotations `ann`: required, else preferred, else unconstrained (a boolean; "false"
 * is no request), else a slice constraint alone (unconstrained from the top level). Slices come
 * from the constraints annotation when it is there (a JSON array of 1 to 3 {topology, size}),
 * else from the slice level and the size together; the group name counts only with required or
 * preferred. Malformed values (which validation reports) read as absent; a constraints
 * annotation that does not parse means no slices at all (Kueue builds no request from it).
 * ERR_NOMEM when parsing that annotation ran out of memory (*out then has no slices). */
err_t tasreq_from_annotations(const kv_list_t *ann, tasreq_t *out);

/* Kueue's ValidateTASPodSetRequest over `ann`, the annotations at `path`
 * ("spec.template.metadata.annotations"): one topology annotation at most, label names, the slice
 * annotations together, slice size an int32 >= 1 (and at most `count` when count >= 0), the group
 * name not a number and only with required or preferred, and the constraints annotation's rules
 * (tasreq_validate_layers()). Appended to `d`. */
void tasreq_validate(const kv_list_t *ann, const char *path, int64_t count, diags_t *d);

/* Kueue's rules for the podset-slice-required-topology-constraints annotation of `ann` (at
 * `path`, as above; nothing when it is absent): not with the single-layer slice annotations nor
 * podset-group-name, a JSON array of 1 to 3 objects, each topology a label name and each size
 * >= 1, no level twice, each size dividing the one before, the first at most `count` (when
 * count >= 0). As errors, or with `warn` (a pod template Kueue's webhook does not check: a
 * Workload's, another kind's) as warnings, those about an annotation the engine cannot read
 * (tasreq_from_annotations()) ending "; the annotation has no effect". Appended to `d`. */
void tasreq_validate_layers(const kv_list_t *ann, const char *path, int64_t count, bool warn,
                            diags_t *d);

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
