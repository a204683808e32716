/* jobparent -- is a Job the child of an object Kueue admits as a whole (JobSet, MPIJob, ...)? */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_CTRL_JOBPARENT_H
#define SLUICE_CTRL_JOBPARENT_H

#include <jansson.h>
#include <stdbool.h>

/*
 * Kueue gives a Job no Workload of its own when its controller ownerReference is a kind of one
 * of its job integrations (reference section 6, integrations.frameworks): the parent's Workload
 * covers its pods. The kinds are jobset.x-k8s.io JobSet; kubeflow.org MPIJob, PaddleJob,
 * PyTorchJob, TFJob, XGBoostJob, JAXJob; ray.io RayJob, RayCluster, RayService;
 * trainer.kubeflow.org TrainJob; workload.codeflare.dev AppWrapper; sparkoperator.k8s.io
 * SparkApplication; leaderworkerset.x-k8s.io LeaderWorkerSet; batch Job. A CronJob is not one
 * of them: the Jobs it creates are ordinary Jobs.
 */

/* Does the Job object `job` have a controller ownerReference of such a kind? On true, *kind and
 * *name (may be NULL) point into `job` (borrowed). */
bool jobparent_managed(const json_t *job, const char **kind, const char **name);

/* Is an owner of apiVersion `api_version` and `kind` (either may be NULL: no) one of those
 * parents? */
bool jobparent_kind(const char *api_version, const char *kind);

#endif
