/* lease -- leader election on a coordination.k8s.io/v1 Lease, as client-go's leaderelection. */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_KUBE_LEASE_H
#define SLUICE_KUBE_LEASE_H

#include "kube/client.h"

typedef struct kube_lease_s kube_lease_t;

typedef struct kube_lease_opts_s {
    const char *ns;       /* namespace of the Lease (copied); NULL: the client's */
    const char *name;     /* Lease name (copied), e.g. "sluice-leader" */
    const char *identity; /* this candidate (copied), unique per process, e.g. pod name + uid */
    uint32_t lease_ms;    /* leaseDurationSeconds * 1000; 0: 15000 */
    uint32_t deadline_ms; /* a leader that could not renew for this long stops; 0: 10000 */
    uint32_t retry_ms;    /* interval between attempts (acquire and renew); 0: 2000 */
} kube_lease_opts_t;

/* Leadership changes. on_started fires when this candidate acquired the Lease; on_stopped when
 * it lost it (another holder, or no successful renewal within deadline_ms) or released it. Stop
 * admitting before returning from on_stopped: the next leader may start right after. */
typedef struct kube_lease_handlers_s {
    void (*on_started)(kube_lease_t *l, void *data);
    void (*on_stopped)(kube_lease_t *l, void *data);
    /* A read or write of the Lease failed (`verb` "get", "create" or "update"; `res` borrowed,
     * see kube/problem.h), or, with `res` NULL, the first one that succeeded after failures.
     * Losing a race to another candidate (409) is not a failure. May be NULL. */
    void (*on_error)(kube_lease_t *l, const kube_result_t *res, const char *verb, void *data);
} kube_lease_handlers_t;

/* Create a candidate on client `c` (borrowed, must outlive it). NULL on out-of-memory or when
 * name/identity are missing. */
kube_lease_t *kube_lease_new(kube_client_t *c, const kube_lease_opts_t *opts,
                             const kube_lease_handlers_t *handlers, void *data);

/* Start competing: try at once, then every retry_ms. */
err_t kube_lease_start(kube_lease_t *l, err_msg_t *msg);

/* Stop competing. A leader fires on_stopped at once, then releases the Lease (holderIdentity ""
 * and leaseDurationSeconds 1, conditional on its resourceVersion) so a standby can take over
 * without waiting for expiry. The lease is freed after that; `on_closed` (may be NULL) fires
 * last. NULL-safe. */
void kube_lease_close(kube_lease_t *l, void (*on_closed)(void *data), void *data);

/* True between on_started and on_stopped. */
bool kube_lease_is_leader(const kube_lease_t *l);

/* The holder last observed on the Lease (borrowed), "" when none. */
const char *kube_lease_holder(const kube_lease_t *l);

#endif
