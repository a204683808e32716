/* podset -- start and stop a Job's pod template as Kueue does: merge the admission in, restore. */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_CTRL_PODSET_H
#define SLUICE_CTRL_PODSET_H

#include "jobs/framework.h"
#include "model/types.h"
#include "util/err.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#define PODSET_LABEL_PODSET        JOBS_LABEL_PODSET
#define PODSET_LABEL_LOCAL_QUEUE   JOBS_LABEL_LOCAL_QUEUE
#define PODSET_LABEL_CLUSTER_QUEUE JOBS_LABEL_CLUSTER_QUEUE
#define PODSET_ANNOTATION_WORKLOAD JOBS_ANNOTATION_WORKLOAD
#define PODSET_ANNOTATION_STOPPING "kueue.x-k8s.io/stopping"
/* Kueue's TASLabel: on the pod template of a pod set admitted with a topologyAssignment. */
#define PODSET_LABEL_TAS "kueue.x-k8s.io/tas"
/* The node label a Topology's lowest level may be (one node per domain). */
#define PODSET_LABEL_HOSTNAME "kubernetes.io/hostname"

/* What an admission adds to the pod template of a podset: the framework's, for the Job kind. */
typedef jobs_start_info_t podset_info_t;

/*
 * Fill `nodes`/`tols` (new references, caller decrefs) with the node labels and tolerations of
 * every distinct flavor named in `assignment` (a status.admission.podSetAssignments[] item):
 * `flavor(ctx, name)` returns a borrowed ResourceFlavor object or NULL. Two flavors that disagree
 * on a node label are ERR_CONFLICT; a missing flavor is ERR_NOT_FOUND (named in `msg`).
 */
err_t podset_flavor_info(const json_t *assignment, json_t *(*flavor)(void *ctx, const char *name),
                         void *ctx, json_t **nodes, json_t **tols, err_msg_t *msg);

/* A Node's label (`node` a hostname, `key` a label key) as the caller knows it, or NULL. */
typedef const char *(*podset_node_label_fn)(void *ctx, const char *node, const char *key);

/*
 * The node selector a topology assignment `a` (a pod set's admission) can give a whole pod
 * template, merged into `nodes` (an object: the flavors' node labels): every level of the
 * Topology (`levels`, `nlevels`, highest first), down to the first where the assignment's domains
 * differ, on which all of them have the same value. A level the assignment does not carry (Kueue
 * keeps only the hostname level when the lowest level is kubernetes.io/hostname) is read from
 * the assigned Nodes' labels through `label` (may be NULL: then it ends the selector). One domain:
 * every level (a hostname level pins the node). Kueue gates each pod and ungates it with its own
 * domain's selector; a template cannot say "this pod on that node", so sluice constrains the pods
 * to what the domains share (the required domain and above) and leaves the rest to
 * kube-scheduler (docs/operator.md, "Topology-aware scheduling"). *pinned (may be NULL) receives
 * how many levels were added. A flavor label with another value is ERR_CONFLICT; ERR_NOMEM.
 */
err_t podset_topology_selector(const topology_assignment_t *a, char *const *levels, size_t nlevels,
                               podset_node_label_fn label, void *ctx, json_t *nodes, size_t *pinned,
                               err_msg_t *msg);

/*
 * Start `job` (a Job object, modified in place): spec.suspend=false, the pod template gets the
 * node selector, tolerations (deduplicated), labels podset/local-queue/cluster-queue and the
 * workload annotation of `info`; parallelism = count under partial admission. An existing
 * nodeSelector key, label or annotation with another value is ERR_CONFLICT ("invalid
 * nodeSelector: conflict for key=K, value1=A, value2=B") and leaves `job` unchanged. On success
 * the members of `job` are replaced: pointers borrowed from it before the call are invalid.
 */
err_t podset_start(json_t *job, const podset_info_t *info, err_msg_t *msg);

/*
 * Stop `job` (modified in place): spec.suspend=true and the pod template's labels, annotations,
 * nodeSelector and tolerations restored from `pod_set` (the Workload's spec.podSets[i]), keeping
 * the labels the job controller owns (job-name, controller-uid, batch.kubernetes.io/...);
 * parallelism restored to the podset count when a partial admission changed it. *changed says
 * whether the job changed (its members replaced, as with podset_start()); ERR_INVALID when
 * `job` has no pod template object (it is then unchanged), ERR_NOMEM on out-of-memory (the job
 * may then be half-replaced: discard it). jobs_stop() for the Job kind.
 */
err_t podset_stop(json_t *job, const json_t *pod_set, bool *changed);

/* Does `job`'s pod template carry exactly what podset_stop() would restore (and is suspended)? */
bool podset_is_restored(const json_t *job, const json_t *pod_set);

/* A digest of what podset_stop() restores in the pod template `tmpl` (a Job's spec.template or
 * a Workload's spec.podSets[i].template): its labels but the job controller's, annotations,
 * nodeSelector and tolerations, empty ones as absent. Equal digests of a suspended Job's
 * template and its Workload's pod set mean the Job is restored (parallelism aside), without
 * keeping either template. */
uint64_t podset_digest(const json_t *tmpl);

#endif
