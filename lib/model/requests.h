/* requests -- effective resource requests of pods, podsets and Jobs (Kubernetes rules). */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_REQUESTS_H
#define SLUICE_REQUESTS_H

#include "model/types.h"
#include "util/err.h"

#include <stdbool.h>
#include <stdint.h>

/*
 * Kubernetes (k8s.io/component-helpers resource.PodRequests) with Kueue's adjustment that a
 * missing request defaults to the limit of the same resource:
 *
 *   containers  = sum over containers of request(c)
 *               + sum over restartable init containers (sidecars) of request(s)
 *   init        = max over init containers i of:
 *                   request(i) + sum of the sidecars declared before i   (i not a sidecar)
 *                   sum of the sidecars up to and including i            (i a sidecar)
 *   pod         = max(containers, init) per resource, then pod-level spec.resources replace
 *                 cpu, memory and hugepages-* when set, then + overhead.
 *
 * All math is exact (quantity_t); overflow is ERR_OVERFLOW with the resource named in `msg`.
 * Output lists are sorted by name; on failure the output is untouched.
 */

/* Effective requests of one container: its requests, plus its limits for resources that have no
 * request. Replaces *out. */
err_t requests_container(const container_t *c, resource_list_t *out, err_msg_t *msg);

/* Effective requests of one pod of `spec`. Replaces *out. */
err_t requests_pod(const pod_spec_t *spec, resource_list_t *out, err_msg_t *msg);

/* per_pod × count (count >= 0). Replaces *out. */
err_t requests_total(const resource_list_t *per_pod, int64_t count, resource_list_t *out,
                     err_msg_t *msg);

/* acc[r] += b[r] for every resource of b (added when absent). */
err_t requests_add(resource_list_t *acc, const resource_list_t *b, err_msg_t *msg);

/* acc[r] = max(acc[r], b[r]) for every resource of b (added when absent). */
err_t requests_max(resource_list_t *acc, const resource_list_t *b, err_msg_t *msg);

/* Pods a Job runs at once as Kueue counts them: min(parallelism, completions). */
int32_t requests_job_count(const job_t *job);

/* Per-pod (`per_pod`, may be NULL) and total (`total`, may be NULL) requests of a Job. */
err_t requests_job(const job_t *job, resource_list_t *per_pod, resource_list_t *total,
                   err_msg_t *msg);

/*
 * The quota requests Kueue derives from one pod's effective requests `in` under a Configuration's
 * `resources` (`rules`; NULL = none): resources whose name starts with one of
 * excludeResourcePrefixes are dropped, then each remaining resource that is a transformation's
 * input adds request * amount of each output (times the request of multiplyBy, when the pod
 * requests it), keeping the input under Retain and dropping it under Replace. Outputs of several
 * inputs add up; a negative total is 0. Exact (quantity_mul_quantity). Replaces *out (sorted by
 * name); ERR_OVERFLOW names the resource, ERR_NOMEM; *out untouched on failure.
 */
err_t requests_effective(const resource_rules_t *rules, const resource_list_t *in,
                         resource_list_t *out, err_msg_t *msg);

/* Is resource `name` a GPU, counted in GPU-hours: a name with "gpu" in it, in any case
 * (nvidia.com/gpu, amd.com/gpu, gpu.intel.com/i915, nvidia.com/gpu.shared), except one counting
 * GPU memory ("mem" in it too: example.com/gpu-memory holds bytes, not devices). */
bool requests_resource_is_gpu(const char *name);

#endif
