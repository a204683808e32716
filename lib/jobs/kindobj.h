/* kindobj -- an object of a job integration kind (JobSet, PyTorchJob, RayJob, ...) as a typed
 * object: its envelope decoded, the Workload Kueue builds for it, and Kueue's webhook rules for
 * its kind. */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_JOBS_KINDOBJ_H
#define SLUICE_JOBS_KINDOBJ_H

#include "jobs/framework.h"
#include "model/diag.h"
#include "model/object.h"

#include <jansson.h>

/*
 * `sluice check` and `sluice sim` read these kinds from YAML next to Kueue's own objects; lib/model
 * knows none of them, so they enter its world here as KIND_INTEGRATION objects
 * (integration_t): the metadata typed, `suspended` as the kind reads it, and the Workload built
 * by the framework (jobs_workload_build(), the same code the operator runs). batch/v1 Job is not
 * one of them: it keeps its own typed decoder (KIND_JOB).
 */

/* The kind of `root` (its apiVersion and kind) in lib/jobs' table, other than batch/v1 Job; NULL
 * when it is none (including a Job). */
const jobs_kind_t *kindobj_kind(const json_t *root);

/*
 * Decode `root` (borrowed; read only) of kind `k` into `out` as KIND_INTEGRATION and check it
 * with Kueue's create-time webhook rules for the kind, appending every problem to `diags` with
 * its field path:
 *   - the envelope and metadata (object_decode_integration());
 *   - pod sets that cannot be read or built (one error naming the field, from the framework);
 *   - the kind's own rules (Kueue's webhook for it, applied, as Kueue applies them, when the
 *     object carries the queue-name label): RayJob -- rayClusterSpec required unless it uses an
 *     existing cluster (clusterSelector, which it must not combine with rayClusterSpec),
 *     shutdownAfterJobFinishes; RayJob and RayCluster -- no in-tree autoscaling unless elastic,
 *     at most JOBS_PODSETS_MAX pod sets (head + worker groups), no worker group named "head";
 *     LeaderWorkerSet -- spec.replicas within [0, 1000000] (checked whatever its labels).
 * A serving owner (Deployment, StatefulSet, LeaderWorkerSet) is marked `serving`, and
 * `suspended` when none of its replicas is ready, as Kueue's webhooks read it.
 * The jobframework label rules (queue-name, priority-class, max-exec-time, prebuilt workload,
 * elastic-job, admission-gated-by) are validate_object()'s and validate_update()'s, which
 * handle KIND_INTEGRATION. An object the kind says Kueue leaves alone (its skip(), e.g. a RayJob
 * on an existing cluster) gets no Workload and no error. Returns ERR_OK when `out` was filled
 * (rule violations are in `diags`; out->u.integ.built says whether the Workload was built: false
 * after an error or for a skipped object), ERR_INVALID when the envelope could not be decoded
 * (`out` zeroed), ERR_NOMEM.
 */
err_t kindobj_decode(const jobs_kind_t *k, json_t *root, object_t *out, diags_t *diags);

/*
 * kindobj_decode() for every kind, with what a kind whose pod sets live in another object (its
 * resolve(): a TrainJob and the training runtime it names) needs: that object is looked up with
 * find(data, ref) among what the caller read (kindobj_deps_find() over a kindobj_deps_t) and
 * the Workload built from the resolved view. When it is not there the Workload is not built
 * (built false) and `diags` gets, at spec.runtimeRef, Kueue's "runtime '<name>' not found":
 * an error when `required` (the simulator cannot run it), else a warning (`sluice check`: the
 * runtime may be installed in the cluster). With `find` NULL nothing is looked up and nothing
 * said (the webhook's update rules need no Workload). Other kinds: as kindobj_decode().
 */
err_t kindobj_decode_with(const jobs_kind_t *k, json_t *root, jobs_find_fn find, void *data,
                          bool required, object_t *out, diags_t *diags);

/* The kind of `root` among the objects some kind of the table reads besides its own (a
 * ClusterTrainingRuntime, a TrainingRuntime), or NULL. */
const jobs_dep_kind_t *kindobj_dep_kind(const json_t *root);

/* Such objects as `sluice check` and `sluice sim` read them, to resolve references to them. */
typedef struct kindobj_deps_s {
    json_t *objs; /* owned: array of the documents, NULL until the first */
} kindobj_deps_t;

/* Keep document `root` (a new reference is taken). ERR_NOMEM only. */
err_t kindobj_deps_add(kindobj_deps_t *d, json_t *root);

/* A jobs_find_fn over `data`, a kindobj_deps_t: the last document of the kind, name and
 * namespace `ref` names (a namespaced document without a namespace is in "default"), borrowed;
 * NULL when none. */
const json_t *kindobj_deps_find(void *data, const jobs_ref_t *ref);

/* Drop the documents; `d` is empty after. */
void kindobj_deps_fini(kindobj_deps_t *d);

#endif
