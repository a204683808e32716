/* backoff -- exponential reconnect delays with jitter from a seeded per-object PRNG. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "kube/backoff.h"

uint64_t kube_rand_next(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);

    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

void kube_backoff_init(kube_backoff_t *b, uint64_t base_ms, uint64_t max_ms, uint32_t jitter_pct,
                       uint64_t seed)
{
    b->base_ms = base_ms ? base_ms : 1;
    b->max_ms = max_ms < b->base_ms ? b->base_ms : max_ms;
    b->jitter_pct = jitter_pct > 100 ? 100 : jitter_pct;
    b->steps = 0;
    b->rng = seed;
}

uint64_t kube_backoff_next(kube_backoff_t *b)
{
    uint64_t d = b->base_ms, extra_max;

    for (uint32_t i = 0; i < b->steps && d < b->max_ms; i++) {
        if (d > b->max_ms / 2) {
            d = b->max_ms;
            break;
        }
        d *= 2;
    }
    if (d > b->max_ms)
        d = b->max_ms;
    if (b->steps < UINT32_MAX)
        b->steps++;
    /* Uniform extra in [0, d * jitter_pct / 100]; the modulo bias is irrelevant at these sizes. */
    extra_max = d > UINT64_MAX / 1000 ? d / 100 * b->jitter_pct : d * b->jitter_pct / 100;
    if (extra_max > 0 && extra_max < UINT64_MAX - d)
        d += kube_rand_next(&b->rng) % (extra_max + 1);
    return d;
}

void kube_backoff_reset(kube_backoff_t *b)
{
    b->steps = 0;
}
