/* bucket -- client-side request rate limit: a token bucket in exact integer arithmetic. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "kube/bucket.h"

void kube_bucket_init(kube_bucket_t *b, uint64_t qps_milli, uint32_t burst, uint64_t now_ms)
{
    b->qps_milli = qps_milli;
    b->cap = (uint64_t)(burst ? burst : 1) * KUBE_BUCKET_UNIT;
    b->level = b->cap;
    b->last_ms = now_ms;
}

static void refill(kube_bucket_t *b, uint64_t now_ms)
{
    uint64_t elapsed, room;

    if (now_ms <= b->last_ms)
        return; /* a clock that stands still (or steps back) adds nothing */
    elapsed = now_ms - b->last_ms;
    b->last_ms = now_ms;
    room = b->cap - b->level;
    /* Compare before multiplying so a long idle period cannot overflow. */
    if (elapsed >= room / b->qps_milli + 1)
        b->level = b->cap;
    else
        b->level += elapsed * b->qps_milli;
    if (b->level > b->cap)
        b->level = b->cap;
}

uint64_t kube_bucket_peek(kube_bucket_t *b, uint64_t now_ms)
{
    uint64_t missing;

    if (b->qps_milli == 0)
        return 0;
    refill(b, now_ms);
    if (b->level >= KUBE_BUCKET_UNIT)
        return 0;
    missing = KUBE_BUCKET_UNIT - b->level;
    return (missing + b->qps_milli - 1) / b->qps_milli; /* round up: never wake too early */
}

uint64_t kube_bucket_take(kube_bucket_t *b, uint64_t now_ms)
{
    uint64_t wait = kube_bucket_peek(b, now_ms);

    if (wait == 0 && b->qps_milli != 0)
        b->level -= KUBE_BUCKET_UNIT;
    return wait;
}
