/* visibility -- Kueue's visibility API (visibility.kueue.x-k8s.io): pending workloads per
 * ClusterQueue and LocalQueue, in the engine's queue order. */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_CTRL_VISIBILITY_H
#define SLUICE_CTRL_VISIBILITY_H

#include "ctrl/ctrl.h"
#include "hook/server.h"

#include <stdbool.h>
#include <stdint.h>

/*
 * The API server forwards requests for the group (an APIService, API aggregation) to sluice's
 * visibility server, which answers them here from the engine, as Kueue's visibility server
 * answers from its queue manager:
 *
 *   GET /apis/visibility.kueue.x-k8s.io/<v>/clusterqueues/<cq>/pendingworkloads
 *   GET /apis/visibility.kueue.x-k8s.io/<v>/namespaces/<ns>/localqueues/<lq>/pendingworkloads
 *       ?limit=<n, default 1000>&offset=<n, default 0>
 *   GET /apis, /apis/visibility.kueue.x-k8s.io, /apis/visibility.kueue.x-k8s.io/<v> (discovery)
 *
 * for <v> v1beta1 and v1beta2 (the same shape). The answer is a PendingWorkloadsSummary: the
 * pending workloads (queued and inadmissible) in the engine's order (priority, then queue
 * timestamp), each with its positionInClusterQueue and positionInLocalQueue (from 0), priority,
 * localQueueName and metadata (name, namespace, creationTimestamp, the controlling
 * ownerReference). Errors are metav1.Status objects (400 for a bad limit/offset, 404 for an
 * unknown queue or path, 405 for a method other than GET, 503 before the caches have synced).
 */

typedef struct visibility_route_s {
    bool discovery;        /* /apis, /apis/<group>, /apis/<group>/<version> */
    bool local_queue;      /* a LocalQueue's pendingworkloads, else a ClusterQueue's */
    char version[16];      /* v1beta1 or v1beta2 */
    char ns[64];           /* LocalQueue: its namespace */
    char name[256];        /* the queue's name */
    int64_t limit, offset; /* the query's, defaults applied */
} visibility_route_t;

/* The i-th version served (from 0: "v1beta1", "v1beta2"), NULL past the last. */
const char *visibility_version(size_t i);

/* Parse a request's path and query into `out`. ERR_NOT_FOUND for a path the API does not serve,
 * ERR_INVALID (with the reason) for a bad limit or offset. Pure: no engine, no I/O. */
err_t visibility_route(const char *path, const char *query, visibility_route_t *out,
                       err_msg_t *msg);

/* Answer one request (`req`: method, path, query) into `resp` (an owned JSON body). */
void ctrl_visibility_serve(ctrl_t *c, const hook_request_t *req, hook_response_t *resp);

#endif
