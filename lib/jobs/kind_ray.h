/* kind_ray -- RayJob and RayCluster (ray.io/v1) as Kueue's ray integrations admit them. */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_JOBS_KIND_RAY_H
#define SLUICE_JOBS_KIND_RAY_H

#include "jobs/framework.h"

/* Pod-set names of the Ray kinds: the head group, and a RayJob's submitter Job (K8sJobMode). */
#define JOBS_RAY_HEAD      "head"
#define JOBS_RAY_SUBMITTER "submitter"

/* framework "ray.io/rayjob": pod sets head, one per worker group, then "submitter" when
 * spec.submissionMode is K8sJobMode (the CRD default); suspend spec.suspend. */
extern const jobs_kind_t jobs_kind_rayjob;

/* framework "ray.io/raycluster": pod sets head and one per worker group; suspend spec.suspend;
 * never finished (a RayCluster has no end). */
extern const jobs_kind_t jobs_kind_raycluster;

#endif
