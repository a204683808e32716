/* kind_serving -- Deployment, StatefulSet and LeaderWorkerSet, admitted through their Pods. */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_JOBS_KIND_SERVING_H
#define SLUICE_JOBS_KIND_SERVING_H

#include "jobs/framework.h"

/* LeaderWorkerSet's own pod metadata (leaderworkerset.x-k8s.io API). */
#define JOBS_LWS_NAME        "leaderworkerset.sigs.k8s.io/name"        /* pod label */
#define JOBS_LWS_GROUP_INDEX "leaderworkerset.sigs.k8s.io/group-index" /* pod label */
/* worker pods' annotation */
#define JOBS_LWS_LEADER_NAME "leaderworkerset.sigs.k8s.io/leader-name"

/* framework "deployment" (apps/v1): each Pod is a Workload of its own (pod set "main" of 1,
 * named as a Pod's); pod_sets() gives that one. */
extern const jobs_kind_t jobs_kind_deployment;

/* framework "statefulset" (apps/v1): one Workload for the StatefulSet, pod set "main" of
 * spec.replicas (default 1), its Pods one serving pod group with fast admission. */
extern const jobs_kind_t jobs_kind_statefulset;

/* framework "leaderworkerset.x-k8s.io/leaderworkerset" (leaderworkerset.x-k8s.io/v1): one
 * Workload per replica (spec.replicas, default 1), each one serving pod group of
 * leaderWorkerTemplate.size (default 1) Pods: pod sets "leader" (1) and "worker" (size - 1)
 * with a leaderTemplate, else "main" (size); pod_sets() gives those of any one replica. */
extern const jobs_kind_t jobs_kind_leaderworkerset;

/* Kueue's webhook on a serving object sluice is to manage (it has a queue name, or
 * manageJobsWithoutQueueName holds): what it writes into the pod template(s) so that the
 * pod webhook gates every Pod they create (jobs_pod_default()):
 *   Deployment:      annotation pod-suspending-parent=deployment; labels managed=true and the
 *                    object's queue-name and priority-class labels;
 *   StatefulSet:     annotation pod-suspending-parent=statefulset;
 *   LeaderWorkerSet: on the leader and worker templates, annotations
 *                    pod-suspending-parent=leaderworkerset.x-k8s.io/leaderworkerset and
 *                    pod-group-serving=true; labels queue-name and priority-class.
 * Modifies `obj` in place; ERR_INVALID for another kind, ERR_NOMEM. The same mutation is the
 * kinds' set_suspended(true); set_suspended(false) is ERR_UNSUPPORTED (their Pods are released one
 * by one). */
err_t jobs_serving_default(const jobs_kind_t *k, json_t *obj, err_msg_t *msg);

/* How many Workloads `obj` of serving kind `k` has at its spec: a Deployment one per replica (per
 * Pod), a StatefulSet one, a LeaderWorkerSet one per replica. */
int32_t jobs_serving_workloads(const jobs_kind_t *k, const json_t *obj);

/* Room for a serving Workload's name (jobs_serving_workload_name()), with its NUL. */
#define JOBS_SERVING_NAME_BUF 254

/* Kueue's name of Workload `index` of `obj` of serving kind `k` (a StatefulSet: lower(kind) + "-"
 * + name; a LeaderWorkerSet: name + "-" + index) hashed with the object's uid, into `buf`
 * (`size` >= JOBS_SERVING_NAME_BUF). ERR_INVALID without metadata.name. The index is not checked
 * against the object's replicas (a scale-down's Workloads are named too). */
err_t jobs_serving_workload_name(const jobs_kind_t *k, const json_t *obj, int32_t index, char *buf,
                                 size_t size, err_msg_t *msg);

/* Build into zeroed `out` Workload `index` (0 <= index < jobs_serving_workloads()) of `obj` as
 * Kueue's StatefulSet and LeaderWorkerSet reconcilers do: jobs_workload_build(), named
 * lower(kind) + "-" + name (a LeaderWorkerSet: name + "-" + index) hashed with the object's uid,
 * annotations is-group-workload=true, job-owner-gvk ("apps/v1, Kind=StatefulSet"),
 * job-owner-name, and for a LeaderWorkerSet component-workload-index. A Deployment's Workloads
 * are its Pods' (jobs_kind_pod over each Pod): ERR_INVALID. */
err_t jobs_serving_workload(const jobs_kind_t *k, json_t *obj, int32_t index,
                            const char *const *copy_labels, workload_t *out, err_msg_t *msg);

/* What the owner's reconciler writes into one of its Pods once created (gated), so that the Pod
 * joins its pod group (Kueue's StatefulSet pod reconciler and LeaderWorkerSet reconciler):
 * labels managed=true, queue-name, priority-class (StatefulSet), prebuilt-workload-name and
 * pod-group-name = the Workload's name; annotations pod-group-total-count (replicas, or the
 * LeaderWorkerSet's size), role-hash ("main", or "leader" / "worker"), and for a StatefulSet
 * pod-group-fast-admission=true, pod-group-serving=true and the pod-index label. A
 * LeaderWorkerSet Pod without its group-index label yet, a Pod already marked, or a StatefulSet
 * without a queue name unless `unqueued` (manageJobsWithoutQueueName holds for it: its Pods are
 * marked without a queue-name label, as Kueue's StatefulSet pod reconciler marks them) is left
 * alone; a Deployment's Pods need nothing (the pod webhook gates them as single Pods). *changed
 * says whether `pod` changed. */
err_t jobs_serving_pod_default(const jobs_kind_t *k, const json_t *owner, json_t *pod,
                               bool unqueued, bool *changed, err_msg_t *msg);

#endif
