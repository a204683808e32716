/* sched afs -- admission fair sharing: LocalQueue usage decayed with a half-life, queue order. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "sched/sched_int.h"

#include <stdlib.h>
#include <string.h>

/*
 * Kueue's admission fair sharing (KEP-4136; pkg/util/admissionfairsharing,
 * pkg/controller/core/localqueue_controller.go, pkg/cache/queue/cluster_queue.go), in virtual
 * time and without floating point.
 *
 * Per LocalQueue Kueue keeps `consumed` (per resource) and `lastUpdate`:
 *
 *   sample, every usageSamplingInterval after the last update (the LocalQueue reconciler):
 *       consumed = consumed * (1 - a) + admittedUsage * a,   a = 1 - 0.5^(elapsed / halfLife)
 *       (halfLife 0: consumed = 0)
 *   quota reservation in a UsageBasedAdmissionFairSharing ClusterQueue: the entry penalty
 *       requests * aS, aS = 1 - 0.5^(sampling / halfLife) (0 when halfLife is 0), is pushed as
 *       pending (one record per workload, replacing an earlier one of it);
 *   the Admitted transition (at once without admission checks, when they are all Ready with):
 *       consumed = consumed * (1 - a) + admittedUsage * a + its pending penalty,  lastUpdate = now
 *       (admittedUsage: the LocalQueue's Admitted workloads, this one included; a workload whose
 *       quota is reserved but whose checks are not Ready does not count, as in Kueue's cache);
 *   the record is dropped unsettled when the workload is deleted, finished, deactivated or
 *   moved to another LocalQueue; an evicted one keeps it until its next reservation replaces it;
 *   order: usage = sum over resources of resourceWeight * (consumed + pending penalties),
 *       divided by the LocalQueue's weight (weight 0: +Inf); lower first, then the usual order.
 *
 * Kueue multiplies by a float64 factor and rounds each product DOWN to nano units
 * (util/resource MulByFloat, scale 9); it compares float64 usages. Here quantities are the same
 * nano-unit integers and the factor 0.5^(e/h) is a Q62 fixed-point number computed with
 * integers only: 0.5^n for the whole part n = e / h is a shift, and 0.5^f for the fraction
 * f = (e mod h) / h is the product of 2^-(2^-k) over the bits k of f (from the table below),
 * each product rounded down. Its error is below 2^-55 relative; Kueue's float64 factor has about
 * 2^-53. So a decayed amount may differ from Kueue's by one nano-unit per sample, and two
 * LocalQueues are ordered differently only when their usages are within a few nano-units of each
 * other (Kueue's own float64 sum of float64 products cannot order those reliably either). Usage
 * is compared as an exact rational (sched__share_cmp): no rounding in the comparison.
 *
 * Samples are computed lazily: before a LocalQueue's admitted usage changes (an admission or a
 * release) and before a cycle, every sample due at or before `now` is replayed at its own time
 * (lastUpdate + k * interval) with the usage that held then, which is the usage now since it has
 * not changed in between. A LocalQueue at a fixed point (a sample leaves it unchanged) skips the
 * remaining samples at once.
 */

/* 2^-(2^-k) in Q62 for k = 1..62, rounded to nearest (Python's decimal, 80 digits). */
static const uint64_t half_pow_frac[62] = {
    0x2d413cccfe779921u, /* 2^-(2^-1) */
    0x35d13f32b5a75abdu, /* 2^-(2^-2) */
    0x3ab031b9f7490e4cu, /* 2^-(2^-3) */
    0x3d495f454921b30bu, /* 2^-(2^-4) */
    0x3ea0ecb6dc8a80cfu, /* 2^-(2^-5) */
    0x3f4f83033d21b05du, /* 2^-(2^-6) */
    0x3fa784571ee3e213u, /* 2^-(2^-7) */
    0x3fd3b2d65447b229u, /* 2^-(2^-8) */
    0x3fe9d59487236bb4u, /* 2^-(2^-9) */
    0x3ff4e9d4703df843u, /* 2^-(2^-10) */
    0x3ffa74acbdf6c9d5u, /* 2^-(2^-11) */
    0x3ffd3a46ffc6e30fu, /* 2^-(2^-12) */
    0x3ffe9d1fa8010199u, /* 2^-(2^-13) */
    0x3fff4e8ede053ad5u, /* 2^-(2^-14) */
    0x3fffa747318376acu, /* 2^-(2^-15) */
    0x3fffd3a38961e6ffu, /* 2^-(2^-16) */
    0x3fffe9d1c0d8fd14u, /* 2^-(2^-17) */
    0x3ffff4e8df7680c5u, /* 2^-(2^-18) */
    0x3ffffa746f7dc0ecu, /* 2^-(2^-19) */
    0x3ffffd3a37af8098u, /* 2^-(2^-20) */
    0x3ffffe9d1bd3e854u, /* 2^-(2^-21) */
    0x3fffff4e8de8fe2cu, /* 2^-(2^-22) */
    0x3fffffa746f44197u, /* 2^-(2^-23) */
    0x3fffffd3a37a116bu, /* 2^-(2^-24) */
    0x3fffffe9d1bd04deu, /* 2^-(2^-25) */
    0x3ffffff4e8de8179u, /* 2^-(2^-26) */
    0x3ffffffa746f407fu, /* 2^-(2^-27) */
    0x3ffffffd3a37a030u, /* 2^-(2^-28) */
    0x3ffffffe9d1bd014u, /* 2^-(2^-29) */
    0x3fffffff4e8de809u, /* 2^-(2^-30) */
    0x3fffffffa746f404u, /* 2^-(2^-31) */
    0x3fffffffd3a37a02u, /* 2^-(2^-32) */
    0x3fffffffe9d1bd01u, /* 2^-(2^-33) */
    0x3ffffffff4e8de81u, /* 2^-(2^-34) */
    0x3ffffffffa746f40u, /* 2^-(2^-35) */
    0x3ffffffffd3a37a0u, /* 2^-(2^-36) */
    0x3ffffffffe9d1bd0u, /* 2^-(2^-37) */
    0x3fffffffff4e8de8u, /* 2^-(2^-38) */
    0x3fffffffffa746f4u, /* 2^-(2^-39) */
    0x3fffffffffd3a37au, /* 2^-(2^-40) */
    0x3fffffffffe9d1bdu, /* 2^-(2^-41) */
    0x3ffffffffff4e8dfu, /* 2^-(2^-42) */
    0x3ffffffffffa746fu, /* 2^-(2^-43) */
    0x3ffffffffffd3a38u, /* 2^-(2^-44) */
    0x3ffffffffffe9d1cu, /* 2^-(2^-45) */
    0x3fffffffffff4e8eu, /* 2^-(2^-46) */
    0x3fffffffffffa747u, /* 2^-(2^-47) */
    0x3fffffffffffd3a3u, /* 2^-(2^-48) */
    0x3fffffffffffe9d2u, /* 2^-(2^-49) */
    0x3ffffffffffff4e9u, /* 2^-(2^-50) */
    0x3ffffffffffffa74u, /* 2^-(2^-51) */
    0x3ffffffffffffd3au, /* 2^-(2^-52) */
    0x3ffffffffffffe9du, /* 2^-(2^-53) */
    0x3fffffffffffff4fu, /* 2^-(2^-54) */
    0x3fffffffffffffa7u, /* 2^-(2^-55) */
    0x3fffffffffffffd4u, /* 2^-(2^-56) */
    0x3fffffffffffffeau, /* 2^-(2^-57) */
    0x3ffffffffffffff5u, /* 2^-(2^-58) */
    0x3ffffffffffffffau, /* 2^-(2^-59) */
    0x3ffffffffffffffdu, /* 2^-(2^-60) */
    0x3fffffffffffffffu, /* 2^-(2^-61) */
    0x3fffffffffffffffu, /* 2^-(2^-62) */
};

#define Q62_ONE ((uint64_t)1 << 62)

/* 0.5^(e/h) in Q62, e >= 0, h > 0. */
static uint64_t half_pow(int64_t e, int64_t h)
{
    if (e <= 0)
        return Q62_ONE;
    uint64_t n = (uint64_t)(e / h), r = (uint64_t)(e % h), v = Q62_ONE;
    if (n >= 63)
        return 0;
    for (int k = 0; k < 62 && r != 0; k++) {
        r <<= 1;
        if (r >= (uint64_t)h) {
            r -= (uint64_t)h;
            v = (uint64_t)(((unsigned __int128)v * half_pow_frac[k]) >> 62);
        }
    }
    return v >> n;
}

/* floor(x * f / 2^62) for x >= 0 without overflowing 128 bits. */
static qnano_t mul_q62(qnano_t x, uint64_t f)
{
    if (x <= 0)
        return 0;
    unsigned __int128 u = (unsigned __int128)x;
    unsigned __int128 hi = u >> 62, lo = u & (Q62_ONE - 1);
    return (qnano_t)(hi * f + ((lo * f) >> 62));
}

static qnano_t sat_add(qnano_t a, qnano_t b)
{
    return a > QUANTITY_NANO_MAX - b ? QUANTITY_NANO_MAX : a + b;
}

bool sched__afs_on(const sched_t *s, const cq_t *cq)
{
    return s->cfg.afs && cq->afs_mode;
}

static int64_t sampling(const sched_t *s)
{
    return s->cfg.afs_sampling_ms > 0 ? s->cfg.afs_sampling_ms : 5 * 60 * 1000;
}

static err_t reserve(lq_afs_t *a, size_t n)
{
    if (a->n >= n)
        return ERR_OK;
    qnano_t *p = realloc(a->consumed, n * sizeof(*p));
    if (p == NULL)
        return ERR_NOMEM;
    memset(p + a->n, 0, (n - a->n) * sizeof(*p));
    a->consumed = p;
    a->n = n;
    return ERR_OK;
}

/* The LocalQueue's admitted usage per resource id (Kueue: its cache LocalQueue's admittedUsage,
 * flavors flattened) into u[0..s->nres). */
static void admitted_usage(const sched_t *s, const lq_t *lq, qnano_t *u)
{
    memset(u, 0, s->nres * sizeof(*u));
    cq_t *cq = util_hmap_get(&s->cq_map, lq->cq);
    if (cq == NULL)
        return;
    for (size_t i = 0; i < cq->admitted.len; i++) {
        const wl_t *w = cq->admitted.items[i];
        if (w->awaiting_checks || w->lq_key == NULL || strcmp(w->lq_key, lq->key) != 0)
            continue;
        for (size_t k = 0; k < w->nuse; k++) {
            int r = s->frs[w->use[k].fr].res;
            u[r] = sat_add(u[r], w->use[k].v);
        }
    }
}

/* consumed = consumed * 0.5^(e/h) + u * (1 - 0.5^(e/h)); true when something changed. */
static bool decay(const sched_t *s, lq_afs_t *a, const qnano_t *u, int64_t elapsed)
{
    bool changed = false;
    if (s->cfg.afs_half_life_ms <= 0)
        return false;
    uint64_t d = half_pow(elapsed, s->cfg.afs_half_life_ms);
    for (size_t r = 0; r < a->n; r++) {
        qnano_t v = sat_add(mul_q62(a->consumed[r], d), mul_q62(u[r], Q62_ONE - d));
        changed = changed || v != a->consumed[r];
        a->consumed[r] = v;
    }
    return changed;
}

/* Weighted usage / LocalQueue weight, as an exact rational (nano x nano / nano). */
static share_t score_of(const sched_t *s, const lq_t *lq)
{
    share_t sh = {0, 1, false};
    if (lq->weight <= 0) {
        sh.inf = true; /* Kueue: a non-positive weight sorts last (+Inf) */
        return sh;
    }
    qnano_t sum = 0;
    size_t n = lq->afs.n > lq->afs.npen ? lq->afs.n : lq->afs.npen;
    for (size_t r = 0; r < n; r++) {
        qnano_t c =
            sat_add(r < lq->afs.n ? lq->afs.consumed[r] : 0, r < lq->afs.npen ? lq->afs.pen[r] : 0);
        if (c <= 0)
            continue;
        qnano_t w = r < s->afs_wlen ? s->afs_w[r] : 1000000000;
        if (w <= 0)
            continue;
        /* saturate: usages near the 10^36 bound compare equal (docs/engine.md) */
        qnano_t p = c > QUANTITY_NANO_MAX / w ? QUANTITY_NANO_MAX : c * w;
        sum = sat_add(sum, p);
    }
    sh.num = sum;
    sh.den = lq->weight;
    return sh;
}

/* Recompute lq's score; mark its ClusterQueue for re-ordering when it moved. */
static void rescore(sched_t *s, lq_t *lq)
{
    share_t sc = score_of(s, lq);
    if (sched__share_cmp(sc, lq->afs.score) == 0 && sc.inf == lq->afs.score.inf)
        return;
    lq->afs.score = sc;
    cq_t *cq = util_hmap_get(&s->cq_map, lq->cq);
    if (cq != NULL)
        cq->afs_dirty = true;
}

/* Replay into `a` (lq's state or a copy of it) the samples due at or before `now`. */
static err_t replay(const sched_t *s, const lq_t *lq, lq_afs_t *a, int64_t now)
{
    if (!a->started) {
        a->started = true;
        a->last = now;
        return ERR_OK;
    }
    int64_t iv = sampling(s);
    if (now < a->last || now - a->last < iv)
        return ERR_OK;
    if (reserve(a, s->nres) != ERR_OK)
        return ERR_NOMEM;
    qnano_t *u = calloc(s->nres ? s->nres : 1, sizeof(*u));
    if (u == NULL)
        return ERR_NOMEM;
    admitted_usage(s, lq, u);
    while (now - a->last >= iv) {
        bool changed;
        if (s->cfg.afs_half_life_ms <= 0) {
            changed = false;
            for (size_t r = 0; r < a->n; r++) {
                changed = changed || a->consumed[r] != 0;
                a->consumed[r] = 0;
            }
        } else {
            changed = decay(s, a, u, iv);
        }
        a->last += iv;
        a->history = true;
        if (!changed) /* a fixed point: every further sample leaves it as it is */
            a->last += (now - a->last) / iv * iv;
    }
    free(u);
    return ERR_OK;
}

static err_t advance(sched_t *s, lq_t *lq, int64_t now)
{
    if (!s->cfg.afs)
        return ERR_OK;
    err_t rc = replay(s, lq, &lq->afs, now);
    rescore(s, lq);
    return rc;
}

static lq_t *lq_of_key(const sched_t *s, const wl_t *w)
{
    return w->lq_key != NULL ? util_hmap_get(&s->lq_map, w->lq_key) : NULL;
}

void sched__afs_before(sched_t *s, const wl_t *w, int64_t now)
{
    lq_t *lq;
    /* a LocalQueue whose clock has not started has no sample due; its clock starts at the next
     * cycle, not here: an operator restoring admitted workloads has passed no time yet */
    if (!s->cfg.afs || (lq = lq_of_key(s, w)) == NULL || !lq->afs.started)
        return;
    /* out of memory: this LocalQueue misses the samples due; they are replayed later with the
     * usage of then */
    (void)advance(s, lq, now);
}

/* The ledger record `p` was pushed to, when that LocalQueue still exists. */
static lq_t *pen_lq(const sched_t *s, const afs_pen_t *p)
{
    lq_t *lq = util_hmap_get(&s->lq_map, p->lq);
    return lq != NULL && lq->afs.id == p->id ? lq : NULL;
}

void sched__afs_pen_free(afs_pen_t *p)
{
    if (p == NULL)
        return;
    sched__str_unref(p->lq);
    free(p);
}

afs_pen_t *sched__afs_pen_copy(const afs_pen_t *p, bool *oom)
{
    if (p == NULL)
        return NULL;
    afs_pen_t *c = malloc(sizeof(*c) + p->n * sizeof(qnano_t));
    if (c == NULL) {
        *oom = true;
        return NULL;
    }
    memcpy(c, p, sizeof(*c) + p->n * sizeof(qnano_t));
    c->lq = sched__str_ref(p->lq);
    return c;
}

void sched__afs_drop(sched_t *s, wl_t *w)
{
    afs_pen_t *p = sched__wl_afs_pen(w);
    if (p == NULL)
        return;
    lq_t *lq = pen_lq(s, p);
    if (lq != NULL) {
        for (size_t r = 0; r < p->n && r < lq->afs.npen; r++)
            lq->afs.pen[r] = lq->afs.pen[r] > p->v[r] ? lq->afs.pen[r] - p->v[r] : 0;
        rescore(s, lq);
    }
    sched__afs_pen_free(p);
    w->rare->afs_pen = NULL;
    sched__wl_rare_trim(w);
}

/* Push w's entry penalty requests x (1 - 0.5^(sampling / halfLife)) as pending in lq (Kueue's
 * PushPenalty at assume time), replacing a record w still has. */
static err_t pen_push(sched_t *s, wl_t *w, lq_t *lq)
{
    sched__afs_drop(s, w);
    if (s->cfg.afs_half_life_ms <= 0)
        return ERR_OK; /* no penalty: nothing pending */
    size_t n = s->nres;
    wl_rare_t *rare = sched__wl_rare(w);
    afs_pen_t *p = calloc(1, sizeof(*p) + (n ? n : 1) * sizeof(qnano_t));
    if (p == NULL || rare == NULL) {
        free(p);
        sched__wl_rare_trim(w);
        return ERR_NOMEM;
    }
    if (lq->afs.npen < n) {
        qnano_t *q = realloc(lq->afs.pen, n * sizeof(*q));
        if (q == NULL) {
            free(p);
            sched__wl_rare_trim(w);
            return ERR_NOMEM;
        }
        memset(q + lq->afs.npen, 0, (n - lq->afs.npen) * sizeof(*q));
        lq->afs.pen = q;
        lq->afs.npen = n;
    }
    if (lq->afs.id == 0)
        lq->afs.id = ++s->afs_ids;
    p->lq = sched__str_ref(w->lq_key);
    p->id = lq->afs.id;
    p->n = n;
    uint64_t alpha = Q62_ONE - half_pow(sampling(s), s->cfg.afs_half_life_ms);
    for (size_t k = 0; k < w->nuse; k++) {
        int r = s->frs[w->use[k].fr].res;
        p->v[r] = sat_add(p->v[r], mul_q62(w->use[k].v, alpha));
    }
    for (size_t r = 0; r < n; r++)
        lq->afs.pen[r] = sat_add(lq->afs.pen[r], p->v[r]);
    rare->afs_pen = p;
    return ERR_OK;
}

/* Settle into lq at `now`: decay up to now with the admitted usage (w counted), then fold w's
 * pending penalty (Kueue's updateAfsConsumedUsage at the Admitted transition). */
static err_t settle(sched_t *s, wl_t *w, lq_t *lq, int64_t now)
{
    lq_afs_t *a = &lq->afs;
    if (!a->started) {
        a->started = true;
        a->last = now;
    }
    if (reserve(a, s->nres) != ERR_OK)
        return ERR_NOMEM;
    if (s->cfg.afs_half_life_ms > 0) {
        qnano_t *u = calloc(s->nres ? s->nres : 1, sizeof(*u));
        if (u == NULL)
            return ERR_NOMEM;
        admitted_usage(s, lq, u); /* with w: Kueue settles after the cache counts it */
        decay(s, a, u, now > a->last ? now - a->last : 0);
        free(u);
    }
    afs_pen_t *p = sched__wl_afs_pen(w);
    if (p != NULL && pen_lq(s, p) == lq) {
        for (size_t r = 0; r < p->n && r < a->n; r++)
            a->consumed[r] = sat_add(a->consumed[r], p->v[r]);
        for (size_t r = 0; r < p->n && r < a->npen; r++)
            a->pen[r] = a->pen[r] > p->v[r] ? a->pen[r] - p->v[r] : 0;
        sched__afs_pen_free(p);
        w->rare->afs_pen = NULL;
        sched__wl_rare_trim(w);
    }
    if (now > a->last)
        a->last = now;
    a->history = true;
    rescore(s, lq);
    return ERR_OK;
}

err_t sched__afs_admitted(sched_t *s, wl_t *w, const cq_t *cq, int64_t now)
{
    lq_t *lq;
    if (!sched__afs_on(s, cq) || (lq = lq_of_key(s, w)) == NULL)
        return ERR_OK;
    lq_afs_t *a = &lq->afs;
    if (!a->started) {
        a->started = true; /* Kueue: a new ledger entry is stamped with the push's time */
        a->last = now;
    }
    a->history = true;
    err_t rc = pen_push(s, w, lq);
    rescore(s, lq);
    if (rc != ERR_OK || w->awaiting_checks)
        return rc;                /* pending until its checks are Ready (sched__afs_settle) */
    return settle(s, w, lq, now); /* no checks: Admitted at once */
}

void sched__afs_settle(sched_t *s, wl_t *w, int64_t now)
{
    lq_t *lq;
    /* Kueue settles only for a ClusterQueue that uses admission fair sharing; a record left
     * otherwise goes when the workload finishes or is deleted */
    if (w->acq == NULL || !sched__afs_on(s, w->acq) || (lq = lq_of_key(s, w)) == NULL)
        return;
    /* out of memory: the decay is replayed at the next sample; the penalty stays pending */
    (void)settle(s, w, lq, now);
}

/* The pending (and admitted: preemption candidates) workloads of cq take their LocalQueue's
 * score; the heap is re-ordered. */
static void refresh_cq(sched_t *s, cq_t *cq)
{
    const wlvec_t *vs[3] = {&cq->heap, &cq->inadm, &cq->admitted};
    share_t zero = {0, 1, false};
    for (size_t v = 0; v < 3; v++) {
        for (size_t i = 0; i < vs[v]->len; i++) {
            wl_t *w = vs[v]->items[i];
            lq_t *lq = lq_of_key(s, w);
            w->afs_score = lq != NULL ? lq->afs.score : zero;
        }
    }
    sched__queue_rebuild_heap(cq);
    cq->afs_dirty = false;
}

err_t sched__afs_prepare(sched_t *s, int64_t now)
{
    err_t rc = ERR_OK;
    for (size_t i = 0; i < s->ncqs; i++) {
        cq_t *cq = s->cqs[i];
        bool on = sched__afs_on(s, cq);
        if (on != cq->afs_active) {
            cq->afs_active = on;
            cq->afs_dirty = true;
        }
    }
    if (s->cfg.afs) {
        if (s->afs_wlen < s->nres) {
            qnano_t *p = realloc(s->afs_w, s->nres * sizeof(*p));
            if (p == NULL)
                return ERR_NOMEM;
            s->afs_w = p;
            for (size_t r = s->afs_wlen; r < s->nres; r++) {
                const resource_t *x = NULL;
                for (size_t k = 0; k < s->afs_weights.len && x == NULL; k++)
                    if (strcmp(s->afs_weights.items[k].name, s->res_names[r]) == 0)
                        x = &s->afs_weights.items[k];
                s->afs_w[r] = x != NULL ? x->value.nano : 1000000000;
            }
            s->afs_wlen = s->nres;
        }
        for (size_t i = 0; i < s->nlqs && rc == ERR_OK; i++) {
            rc = advance(s, s->lqs[i], now);
            if (rc == ERR_OK && s->lqs[i]->weight != s->lqs[i]->afs.weight_seen) {
                s->lqs[i]->afs.weight_seen = s->lqs[i]->weight;
                rescore(s, s->lqs[i]);
            }
        }
    }
    for (size_t i = 0; i < s->ncqs; i++)
        if (s->cqs[i]->afs_dirty)
            refresh_cq(s, s->cqs[i]);
    return rc;
}

void sched__afs_fini(lq_afs_t *a)
{
    free(a->consumed);
    free(a->pen);
    memset(a, 0, sizeof(*a));
}

err_t sched__afs_copy(lq_afs_t *dst, const lq_afs_t *src)
{
    *dst = *src;
    dst->consumed = NULL;
    dst->n = 0;
    dst->pen = NULL;
    dst->npen = 0;
    if (reserve(dst, src->n) != ERR_OK)
        return ERR_NOMEM;
    if (src->n > 0)
        memcpy(dst->consumed, src->consumed, src->n * sizeof(qnano_t));
    if (src->npen > 0) {
        dst->pen = malloc(src->npen * sizeof(qnano_t));
        if (dst->pen == NULL) {
            free(dst->consumed);
            dst->consumed = NULL;
            dst->n = 0;
            return ERR_NOMEM;
        }
        memcpy(dst->pen, src->pen, src->npen * sizeof(qnano_t));
        dst->npen = src->npen;
    }
    return ERR_OK;
}

/* ---- API -------------------------------------------------------------------------------- */

err_t sched_lq_afs_seed(sched_t *s, const char *key, const resource_list_t *consumed,
                        err_msg_t *msg)
{
    lq_t *lq = util_hmap_get(&s->lq_map, key);
    if (lq == NULL)
        return err_set(msg, ERR_NOT_FOUND, "LocalQueue %s not found", key);
    if (lq->afs.history)
        return ERR_OK;
    for (size_t i = 0; i < consumed->len; i++) {
        int r;
        if (consumed->items[i].value.nano <= 0)
            continue;
        if (sched__intern_res(s, consumed->items[i].name, &r) != ERR_OK ||
            reserve(&lq->afs, (size_t)r + 1) != ERR_OK)
            return err_set(msg, ERR_NOMEM, "LocalQueue %s: out of memory", key);
        lq->afs.consumed[r] = consumed->items[i].value.nano;
    }
    lq->afs.history = true;
    lq->afs.weight_seen = -1; /* rescored at the next cycle */
    return ERR_OK;
}

err_t sched_lq_afs_status(const sched_t *s, const char *key, int64_t now, resource_list_t *consumed,
                          int64_t *last_update, err_msg_t *msg)
{
    const lq_t *lq = util_hmap_get(&s->lq_map, key);
    err_t rc = ERR_OK;
    if (lq == NULL)
        return err_set(msg, ERR_NOT_FOUND, "LocalQueue %s not found", key);
    if (!s->cfg.afs || !lq->afs.started)
        return err_set(msg, ERR_INVALID, "LocalQueue %s: no admission fair sharing state", key);
    /* replay the samples due on a copy: a query changes nothing */
    lq_t tmp = *lq;
    if (sched__afs_copy(&tmp.afs, &lq->afs) != ERR_OK)
        return err_set(msg, ERR_NOMEM, "LocalQueue %s: out of memory", key);
    rc = replay(s, lq, &tmp.afs, now);
    size_t n = 0;
    for (size_t r = 0; r < tmp.afs.n; r++)
        n += tmp.afs.consumed[r] > 0;
    memset(consumed, 0, sizeof(*consumed));
    if (rc == ERR_OK && n > 0 && (consumed->items = calloc(n, sizeof(resource_t))) == NULL)
        rc = ERR_NOMEM;
    for (size_t r = 0; r < tmp.afs.n && rc == ERR_OK; r++) {
        if (tmp.afs.consumed[r] <= 0)
            continue;
        resource_t *x = &consumed->items[consumed->len];
        if (util_strdup(s->res_names[r], &x->name) != ERR_OK) {
            rc = ERR_NOMEM;
            break;
        }
        x->value.nano = tmp.afs.consumed[r];
        consumed->len++;
    }
    if (rc == ERR_OK)
        *last_update = tmp.afs.last;
    sched__afs_fini(&tmp.afs);
    if (rc != ERR_OK) {
        resource_list_fini(consumed);
        return err_set(msg, rc, "LocalQueue %s: out of memory", key);
    }
    /* sorted by name, as a ResourceList */
    for (size_t i = 1; i < consumed->len; i++)
        for (size_t j = i;
             j > 0 && strcmp(consumed->items[j - 1].name, consumed->items[j].name) > 0; j--) {
            resource_t t = consumed->items[j];
            consumed->items[j] = consumed->items[j - 1];
            consumed->items[j - 1] = t;
        }
    return ERR_OK;
}
