/* job_workload -- the Workload Kueue builds for a batch/v1 Job, and its priority. */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_JOB_WORKLOAD_H
#define SLUICE_JOB_WORKLOAD_H

#include "model/types.h"
#include "util/err.h"

#include <stddef.h>

#define JOB_LABEL_QUEUE_NAME           "kueue.x-k8s.io/queue-name"
#define JOB_LABEL_PRIORITY_CLASS       "kueue.x-k8s.io/priority-class"
#define JOB_LABEL_MAX_EXEC_TIME        "kueue.x-k8s.io/max-exec-time-seconds"
#define JOB_LABEL_JOB_UID              "kueue.x-k8s.io/job-uid"
#define JOB_ANNOTATION_MIN_PARALLELISM "kueue.x-k8s.io/job-min-parallelism"
#define JOB_FINALIZER_RESOURCE_IN_USE  "kueue.x-k8s.io/resource-in-use"

/* Longest Workload name (DNS-1123 subdomain); 63 with Kueue's ShortWorkloadNames gate. */
#define JOB_WORKLOAD_NAME_MAX       253
#define JOB_WORKLOAD_NAME_MAX_SHORT 63

/* Kueue's Workload name for Job `job_name` with `uid` (NULL = ""): lower(kind) + "-" + name cut
 * to `max` - 6 bytes, then "-" + the first 5 hex digits of sha1("Job\nbatch\n<name>\n<uid>").
 * `max` is JOB_WORKLOAD_NAME_MAX or _SHORT; `buf` holds at least max + 1 bytes. ERR_INVALID for
 * a bad max or buffer, ERR_NOMEM/ERR_UNSUPPORTED if OpenSSL cannot hash. */
err_t job_workload_name(const char *job_name, const char *uid, size_t max, char *buf, size_t size,
                        err_msg_t *msg);

/* Build into zeroed `out` the Workload Kueue creates for `job` (reference §3.3): name, namespace,
 * label job-uid (when the uid is a valid label value), finalizer resource-in-use, queueName from
 * the queue-name label, maximumExecutionTimeSeconds from its label (when an int > 0), one podset
 * "main" with the job's template (minus job-name/controller-uid labels), count = min(parallelism,
 * completions), minCount from the min-parallelism annotation, pod_requests computed. The
 * priority-class label is copied as a WorkloadPriorityClass reference without a value: call
 * job_workload_priority() to resolve it. creation_time is left 0 for the caller to stamp.
 * On error `out` stays zeroed; ERR_OVERFLOW when requests overflow. */
err_t job_workload_build(const job_t *job, workload_t *out, err_msg_t *msg);

/* Lookups into the caller's objects; each returns a borrowed pointer or NULL. */
typedef struct job_priority_lookup_s {
    void *ctx;
    /* WorkloadPriorityClass by name. */
    const workload_priority_class_t *(*wpc)(void *ctx, const char *name);
    /* PriorityClass by name. */
    const priority_class_t *(*pc)(void *ctx, const char *name);
    /* The i-th PriorityClass (any order), NULL past the end: used to find globalDefault ones. */
    const priority_class_t *(*pc_at)(void *ctx, size_t i);
} job_priority_lookup_t;

/* Set wl's priority source, class name and value as Kueue's ExtractPriority does: (1) the
 * priority-class label names a WorkloadPriorityClass; (2) else the pod template's
 * priorityClassName names a PriorityClass; (3) else the globalDefault PriorityClass with the
 * lowest value; (4) else no class and priority 0. A named class that does not exist is
 * ERR_NOT_FOUND (Kueue then creates no Workload) and leaves `wl` untouched. Missing callbacks
 * count as "not found". */
err_t job_workload_priority(const job_t *job, const job_priority_lookup_t *lookup, workload_t *wl,
                            err_msg_t *msg);

#endif
