/* bucket -- client-side request rate limit: a token bucket in exact integer arithmetic. */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_KUBE_BUCKET_H
#define SLUICE_KUBE_BUCKET_H

#include <stdint.h>

/* One token = KUBE_BUCKET_UNIT units; refill adds qps_milli units per millisecond, which is
 * exactly qps_milli/1000 tokens per second, so fractional QPS needs no floating point. */
#define KUBE_BUCKET_UNIT 1000000u

/* A token bucket like client-go's flowcontrol limiter: `burst` tokens at most, `qps` per second.
 * The clock is the caller's (milliseconds, monotonic), so tests inject it. */
typedef struct kube_bucket_s {
    uint64_t qps_milli; /* refill rate in thousandths of a token per second; 0 = unlimited */
    uint64_t cap;       /* burst * KUBE_BUCKET_UNIT */
    uint64_t level;     /* current fill in units */
    uint64_t last_ms;   /* time of the last refill */
} kube_bucket_t;

/* Start full at time `now_ms`. `burst` 0 is taken as 1. */
void kube_bucket_init(kube_bucket_t *b, uint64_t qps_milli, uint32_t burst, uint64_t now_ms);

/* The milliseconds until a token is available at `now_ms` (0: one is), taking nothing. */
uint64_t kube_bucket_peek(kube_bucket_t *b, uint64_t now_ms);

/* Take one token at `now_ms`: returns 0 when taken, otherwise the milliseconds to wait until one
 * is available (nothing is taken then; call again after waiting). */
uint64_t kube_bucket_take(kube_bucket_t *b, uint64_t now_ms);

#endif
