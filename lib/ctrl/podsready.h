/* podsready -- Kueue's waitForPodsReady as pure functions: condition, timeouts, requeue backoff. */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_CTRL_PODSREADY_H
#define SLUICE_CTRL_PODSREADY_H

#include "ctrl/config.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

/*
 * The lifecycle (reference sections 3.5 step 8 and 4.9), all of it recorded in the Workload's
 * status so that a restarted operator picks it up where it was:
 *
 *   admitted --(pods ready)--> PodsReady=True Started
 *      |                            |(a pod lost)
 *      |                     PodsReady=False WaitForRecovery --(ready again)--> True Recovered
 *      | PodsReady=False WaitForStart   |
 *      +--(timeout since Admitted)------+--(recoveryTimeout since WaitForRecovery)
 *                                       v
 *   Evicted=True PodsReadyTimeout, requeueState {count+1, requeueAt = now + backoff}
 *      -> job stopped, quota released, Requeued=False PodsReadyTimeout (held: not admitted)
 *      -> at requeueAt: Requeued=True BackoffFinished, requeueAt cleared -> queued again
 *   count+1 > backoffLimitCount instead: spec.active=false, Evicted
 *      DeactivatedDueToRequeuingLimitExceeded, requeueState cleared.
 *
 * Times come from condition lastTransitionTimes (whole seconds) and requeueState.requeueAt.
 */

/* Why a timeout runs. */
typedef enum {
    PODSREADY_NONE = 0,          /* no timeout runs */
    PODSREADY_WAIT_FOR_START,    /* since Admitted: `timeout` */
    PODSREADY_WAIT_FOR_RECOVERY, /* since PodsReady went False WaitForRecovery: recoveryTimeout */
} podsready_cause_t;

/* The PodsReady condition to write: static strings. */
typedef struct podsready_cond_s {
    const char *status;
    const char *reason;
    const char *message;
} podsready_cond_t;

/* Are the Job's pods ready: status.ready + status.succeeded + uncountedTerminatedPods.succeeded
 * reach min(spec.parallelism, spec.completions)? `job` is the Job object as JSON. */
bool podsready_job_ready(const json_t *job);

/* The PodsReady condition Kueue's job reconciler wants for Workload object `wl` whose pods are
 * `ready` (or not): not admitted -> False WaitForStart; ready -> True Started (Recovered after a
 * WaitForRecovery); was True -> False WaitForRecovery; else False WaitForStart. */
podsready_cond_t podsready_condition(const json_t *wl, bool ready);

/* Is the Workload admitted (Admitted=True with status.admission)? */
bool podsready_admitted(const json_t *wl);

/* When the PodsReady timeout of `wl` expires, in Unix milliseconds (*deadline_ms), and why;
 * PODSREADY_NONE when none runs (not admitted, PodsReady=True, evicted, inactive, finished, or
 * waiting for recovery with recoveryTimeout 0). */
podsready_cause_t podsready_deadline(const ctrl_pods_ready_t *cfg, const json_t *wl,
                                     int64_t *deadline_ms);

/* Backoff before requeue number `count` (>= 1), in seconds: backoffBaseSeconds * 2^(count-1),
 * at most backoffMaxSeconds. Kueue adds a jitter of 0.01 %; sluice does not (deterministic). */
int64_t podsready_backoff_s(const ctrl_pods_ready_t *cfg, int32_t count);

/* status.requeueState.count of `wl` (0 when absent). */
int32_t podsready_requeue_count(const json_t *wl);

/* Would one more requeue exceed backoffLimitCount (count+1 > limit)? */
bool podsready_limit_exceeded(const ctrl_pods_ready_t *cfg, const json_t *wl);

/* status.requeueState after one more PodsReady eviction at `now_s`: {count: n+1, requeueAt:
 * now + backoff(n+1)}. A new reference, NULL on out-of-memory. */
json_t *podsready_next_requeue_state(const ctrl_pods_ready_t *cfg, const json_t *wl, int64_t now_s);

/* Is `wl` waiting out its requeue backoff (Requeued=False, reason PodsReadyTimeout, or
 * AdmissionCheck: a Retry check's requeueAfterSeconds, checks.c)? */
bool podsready_held(const json_t *wl);

/* status.requeueState.requeueAt of `wl` in Unix seconds, or -1 when absent or malformed. */
int64_t podsready_requeue_at(const json_t *wl);

/* The end of the backoff: Requeued=True BackoffFinished "The workload backoff was finished" and
 * requeueState.requeueAt removed (count kept), at the resourceVersion of `wl`. NULL on OOM. */
json_t *podsready_backoff_done_patch(const json_t *wl, int64_t now_s);

/* The queue-order timestamp of pending `wl` in ms (Kueue's GetQueueOrderTimestamp): the
 * lastTransitionTime of Evicted=True reason AdmissionCheck (a Retry check); with
 * waitForPodsReady on and the Eviction strategy, that of Evicted=True reason PodsReadyTimeout;
 * else `created_ms`. */
int64_t podsready_queue_ts(const ctrl_pods_ready_t *cfg, const json_t *wl, int64_t created_ms);

#endif
