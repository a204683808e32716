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

#endif
