/* workqueue -- keys to reconcile, each queued at most once; a key whose reconcile failed comes
 * back after a per-key exponential backoff, as controller-runtime's rate-limited queue. */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_CTRL_WORKQUEUE_H
#define SLUICE_CTRL_WORKQUEUE_H

#include "util/err.h"

#include <jansson.h>
#include <stdint.h>

/*
 *   add(key)            -> ready now (a delayed key moves up; the failure count stays)
 *   fail(key, now)      -> ready at now + min(base * 2^failures, max); failures++
 *   forget(key)         -> failures = 0 (the reconcile succeeded)
 *   take(now)           -> every ready key and every delayed key that is due, once each
 *
 * A reconciler is level-based, so running a key once for several adds is right. A failing key
 * never spins: its next attempt waits, and a success resets the wait. Pure: the caller passes
 * `now` and arms its own timer from ctrl_wq_next().
 */

typedef struct ctrl_wq_s {
    json_t *ready;    /* owned: key -> true */
    json_t *delayed;  /* owned: key -> due time (ms) */
    json_t *failures; /* owned: key -> consecutive failures */
    uint64_t base_ms;
    uint64_t max_ms;
} ctrl_wq_t;

/* An empty queue with backoff `base_ms` (0: 200) doubling up to `max_ms` (0: 60000). */
err_t ctrl_wq_init(ctrl_wq_t *q, uint64_t base_ms, uint64_t max_ms);

/* Release what the queue holds. */
void ctrl_wq_fini(ctrl_wq_t *q);

/* Queue `key` now. */
err_t ctrl_wq_add(ctrl_wq_t *q, const char *key);

/* The reconcile of `key` failed at `now_ms`: queue it after its backoff. */
err_t ctrl_wq_fail(ctrl_wq_t *q, const char *key, uint64_t now_ms);

/* The reconcile of `key` succeeded: its backoff starts over. */
void ctrl_wq_forget(ctrl_wq_t *q, const char *key);

/* Consecutive failures of `key`. */
uint32_t ctrl_wq_failures(const ctrl_wq_t *q, const char *key);

/* Move the keys due at `now_ms` out of the queue: a new JSON object key -> true (the caller
 * decrefs), or NULL on out-of-memory (nothing is lost: the keys stay queued). */
json_t *ctrl_wq_take(ctrl_wq_t *q, uint64_t now_ms);

/* Milliseconds from `now_ms` until the next delayed key is due; 0 when a key is ready now,
 * UINT64_MAX when nothing is queued. */
uint64_t ctrl_wq_next(const ctrl_wq_t *q, uint64_t now_ms);

#endif
