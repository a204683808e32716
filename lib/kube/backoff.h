/* backoff -- exponential reconnect delays with jitter from a seeded per-object PRNG. */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_KUBE_BACKOFF_H
#define SLUICE_KUBE_BACKOFF_H

#include <stdint.h>

/* Delay n (from 0) is min(base * 2^n, max), then scaled by a factor drawn uniformly from
 * [1, 1 + jitter_pct/100] with jitter_pct at most 100 (client-go's wait.Jitter shape). The PRNG
 * state lives here, so two objects with the same seed produce the same sequence and nothing
 * global is touched. */
typedef struct kube_backoff_s {
    uint64_t base_ms;
    uint64_t max_ms;
    uint32_t jitter_pct;
    uint32_t steps; /* delays handed out since the last reset */
    uint64_t rng;   /* splitmix64 state */
} kube_backoff_t;

/* Configure; `seed` picks the jitter sequence (e.g. from uv_hrtime() and the object address). */
void kube_backoff_init(kube_backoff_t *b, uint64_t base_ms, uint64_t max_ms, uint32_t jitter_pct,
                       uint64_t seed);

/* The next delay in milliseconds; advances the sequence. */
uint64_t kube_backoff_next(kube_backoff_t *b);

/* Start over from base_ms (after a success). The PRNG keeps running. */
void kube_backoff_reset(kube_backoff_t *b);

/* Next pseudo-random 64-bit value from `state` (splitmix64). */
uint64_t kube_rand_next(uint64_t *state);

#endif
