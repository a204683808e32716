/* live -- list Nodes and Kueue's queue objects from an API server into a manifest set. */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_INV_LIVE_H
#define SLUICE_INV_LIVE_H

#include "inventory/manifests.h"
#include "kube/client.h"

#include <stdbool.h>

/* One resource type to list; a `optional` one the server does not serve (404: Kueue's CRDs are
 * not installed) is skipped silently. */
typedef struct inv_live_res_s {
    kube_resource_t res;
    bool optional;
} inv_live_res_t;

/* The core group's Nodes, and Kueue v1beta2's ResourceFlavors, ClusterQueues, Cohorts and
 * LocalQueues (optional). */
extern const inv_live_res_t inv_live_nodes;
extern const inv_live_res_t inv_live_queues[4];

/* List every object of the `nres` resource types (paged, 500 a page) from the server of `cfg`
 * (borrowed) on a loop of its own, adding them to `set` (origin "<server>/<resource>"). Returns
 * the first failure (the request and the server's message in `msg`): ERR_NOT_FOUND, ERR_HTTP,
 * ERR_TLS, ERR_TIMEOUT, ...; ERR_NOMEM. */
err_t inv_live_list(kube_config_t *cfg, const inv_live_res_t *res, size_t nres, inv_set_t *set,
                    err_msg_t *msg);

#endif
