/* waitready -- Kueue's waitForPodsReady once for every driver: the configuration and its rules. */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_MODEL_WAITREADY_H
#define SLUICE_MODEL_WAITREADY_H

#include "model/types.h"
#include "util/err.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

/*
 * The decisions of waitForPodsReady (kueue-reference.md sections 3.5 step 8 and 4.9) as pure
 * functions of times and counts, so that the operator (lib/ctrl/podsready.c, which reads them
 * from a Workload's conditions and requeueState) and the simulator (lib/sim/ready.c, which
 * reads them from its virtual clock) decide alike:
 *
 *   admitted (t0) --pods ready--> Started --a pod lost (t1)--> WaitForRecovery --ready--> Recovered
 *      | not ready by t0 + timeout                     | not ready by t1 + recoveryTimeout
 *      +-----------------------+-----------------------+   (recoveryTimeout 0: no limit)
 *                              v
 *   count + 1 > backoffLimitCount ? deactivated (RequeuingLimitExceeded)
 *                                 : evicted (PodsReadyTimeout), count + 1, held until
 *                                   now + waitready_backoff_s(count + 1), then requeued, ordered
 *                                   by its eviction time (timestamp Eviction) or creation time.
 */

/* Kueue's defaults: v1beta2 enabled (timeout 30m, recoveryTimeout = timeout, Eviction, no
 * backoffLimitCount, base 60 s, max 3600 s); v1beta1 disabled. */
void waitready_defaults(pods_ready_config_t *c, bool v1beta1);

/*
 * waitForPodsReady of Configuration `root` (a JSON object, borrowed) into *out: what the section
 * leaves out takes Kueue's default for the apiVersion of `root`. Stops at the first problem:
 * ERR_INVALID (or ERR_PARSE for a duration) with "waitForPodsReady.FIELD: message" in `msg`;
 * `out` is untouched then. An unknown field is an error naming its path.
 */
err_t waitready_decode(const json_t *root, pods_ready_config_t *out, err_msg_t *msg);

/* The pods of an admitted workload, as waitForPodsReady sees them. */
typedef enum {
    WAITREADY_NOT_READY = 0, /* not ready since admission (PodsReady False WaitForStart) */
    WAITREADY_READY,         /* PodsReady True (Started or Recovered) */
    WAITREADY_RECOVERING,    /* were ready, a pod failed (PodsReady False WaitForRecovery) */
} waitready_pods_t;

/* Which timeout runs. */
typedef enum {
    WAITREADY_NONE = 0,          /* none: disabled, ready, or recovering with recoveryTimeout 0 */
    WAITREADY_WAIT_FOR_START,    /* `timeout` since admission */
    WAITREADY_WAIT_FOR_RECOVERY, /* `recoveryTimeout` since the pods stopped being ready */
} waitready_cause_t;

/* The timeout of an admitted workload whose pods are in state `pods`, admitted at `admitted_ms`
 * and unready since `unready_ms` (read only while RECOVERING), into *deadline_ms. */
waitready_cause_t waitready_deadline(const pods_ready_config_t *c, waitready_pods_t pods,
                                     int64_t admitted_ms, int64_t unready_ms, int64_t *deadline_ms);

/* Does one more requeue, after `count` of them, exceed backoffLimitCount (count + 1 > limit)?
 * Then the workload is deactivated instead of evicted. */
bool waitready_limit_exceeded(const pods_ready_config_t *c, int32_t count);

/* The backoff before requeue number `count` (>= 1), in seconds: backoffBaseSeconds * 2^(count-1),
 * at most backoffMaxSeconds. Kueue adds a jitter of 0.01 %; sluice does not (deterministic). */
int64_t waitready_backoff_s(const pods_ready_config_t *c, int32_t count);

/* The queue-order timestamp of a workload requeued after a PodsReady timeout at `evicted_ms`
 * (Kueue's GetQueueOrderTimestamp): the eviction time with timestamp Eviction, else
 * `created_ms`. */
int64_t waitready_queue_ts(const pods_ready_config_t *c, int64_t evicted_ms, int64_t created_ms);

#endif
