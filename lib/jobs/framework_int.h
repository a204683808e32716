/* framework_int -- what the kinds of lib/jobs share: JSON walking and the Workload's metadata. */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_JOBS_FRAMEWORK_INT_H
#define SLUICE_JOBS_FRAMEWORK_INT_H

#include "jobs/framework.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

/* The kinds of this module's files (kinds.c lists them in the table). */
extern const jobs_kind_t jobs__kind_job;      /* kind_job.c */
extern const jobs_kind_t jobs__kind_jobset;   /* kind_jobset.c */
extern const jobs_kind_t jobs__kind_trainjob; /* kind_trainjob.c */
/* kind_kubeflow.c */
extern const jobs_kind_t jobs__kind_pytorchjob, jobs__kind_tfjob, jobs__kind_xgboostjob,
    jobs__kind_paddlejob, jobs__kind_jaxjob, jobs__kind_mpijob;

/* The pod sets of the replicated Jobs in array `rjobs` (a JobSet's spec.replicatedJobs), as
 * Kueue's JobSet integration reads them: one per replicated Job, named by it, of replicas x
 * min(parallelism, completions) pods. `prefix` is the field path of the spec holding `rjobs` in
 * errors and pod-set paths ("spec"). */
/* The reclaimable pods of replicated Jobs `rjobs` given their statuses `statuses` (a JobSet's
 * status.replicatedJobsStatus, a TrainJob's status.jobsStatus): per replicated Job, its
 * succeeded Jobs (when no more than its replicas) times its pods per Job (Kueue's). */
void jobs__jobset_reclaimable(const json_t *rjobs, const json_t *statuses, jobs_reclaim_t *out,
                              size_t *n);

err_t jobs__jobset_pod_sets(json_t *rjobs, const char *prefix, jobs_podset_t *out, size_t *n,
                            err_msg_t *msg);

/* Kueue's cleanLabels: the labels the Job controller rewrites on a Job's template (job-name,
 * controller-uid, batch.kubernetes.io/controller-uid; batch.kubernetes.io/job-name stays), left
 * out of its Workload's pod set so that the Workload does not change when they do. */
bool jobs__job_dropped_label(const char *key);

/* The member at `keys` (NULL-terminated) below `obj`, borrowed; NULL when a step is missing or
 * not an object. */
json_t *jobs__at(const json_t *obj, const char *const *keys);

/* Does some entry of the status array `statuses` (per child Job: JobSet's replicatedJobsStatus,
 * TrainJob's jobsStatus) count active pods? */
bool jobs__any_active(const json_t *statuses);

/* Replace the contents of `dst` with those of `src` (consumed); ERR_NOMEM. */
err_t jobs__swap_in(json_t *dst, json_t *src, err_msg_t *msg);

/* The end of a stop: `copy` (consumed), built with result `rc`, replaces `obj` when `rc` is
 * ERR_OK and the two differ; *changed says whether it did. Returns `rc` or the swap's error. */
err_t jobs__commit(json_t *obj, json_t *copy, err_t rc, bool *changed, err_msg_t *msg);
#define JOBS_AT(obj, ...) jobs__at((obj), (const char *const[]){__VA_ARGS__, NULL})

/* `v` as an int32 (an integer, or a real with an integral value, as encoding/json reads them);
 * `def` when absent, null, of another type or out of range. */
int32_t jobs__int32(const json_t *v, int32_t def);

/* Object member `key` of `o`, created empty when missing or null (borrowed); NULL on OOM or when
 * something else than an object is there. */
json_t *jobs__member(json_t *o, const char *key);

/* jobs__member() telling its failures apart: ERR_INVALID ("<key>: must be of type object") when
 * something else than an object is at `key` or `o` is no object, ERR_NOMEM when creating it
 * failed. *out is borrowed. */
err_t jobs__object_member(json_t *o, const char *key, json_t **out, err_msg_t *msg);

/* Set `obj` at `keys` (objects created on the way) to boolean `v`. */
err_t jobs__set_bool(json_t *obj, const char *const *keys, bool v, err_msg_t *msg);
#define JOBS_SET_BOOL(obj, v, msg, ...) \
    jobs__set_bool((obj), (const char *const[]){__VA_ARGS__, NULL}, (v), (msg))

/* Is there a condition of `type` with status "True" in array `conds`? Its message (borrowed, ""
 * when none) goes to *message when non-NULL. */
bool jobs__condition(const json_t *conds, const char *type, const char **message);

/* The first condition in array `conds` of type `succeeded` or `failed` with status "True" decides
 * (Kueue's Finished of Job and the Kubeflow jobs); its message (borrowed, "" when none) goes to
 * *message when non-NULL. JOBS_RUNNING when there is none. */
jobs_phase_t jobs__phase_first(const json_t *conds, const char *succeeded, const char *failed,
                               const char **message);

/* Copy `name` into ps->name, lower-cased as Kueue's NewPodSetReference does; ERR_INVALID when it
 * is empty or longer than a pod-set name may be (`path` names the field). */
err_t jobs__podset_name(jobs_podset_t *ps, const char *name, const char *path, err_msg_t *msg);

/* strconv.ParseInt(s, 10, 32) with Kueue's "> 0" rule; false when unusable. */
bool jobs__positive_int32(const char *s, int32_t *out);

/*
 * The Workload's metadata and the spec fields that come from the object's metadata, the same for
 * every kind (reference section 3.3): name, namespace, finalizer, job-uid label, the labels of
 * `copy_labels` (NULL-terminated, may be NULL), provreq annotations, queueName, max-exec-time and
 * the priority-class reference. Fills zeroed `wl` (pod sets untouched); on error the caller
 * finalises it. Shared with job_workload_build().
 */
err_t jobs__workload_meta(const jobs_kind_t *k, const object_meta_t *m,
                          const char *const *copy_labels, workload_t *wl, err_msg_t *msg);

#endif
