/* sched fairshare -- exact dominant resource shares, tournament ordering, fair preemption. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "sched/sched_int.h"

#include <stdlib.h>
#include <string.h>

/*
 * Reference §4.8. Kueue computes DRS as an integer per-mille ratio and the weighted share as a
 * float64, then breaks ties in map/random order; both produced preemption loops upstream. Here a
 * share is the exact rational
 *
 *     weighted share = max_r ( B_r / L_r ) / weight  =  B_r * 1e9 / (L_r * weight_nano)
 *
 * (B_r: usage above the subtree quota summed over the flavors of resource r, L_r: what the parent
 * could lend of r), compared by cross-reduction (continued fractions) so no product overflows.
 * Ties between nodes are broken by a documented total order (see docs/engine.md): cohorts before
 * ClusterQueues, then name.
 */

static qnano_t sat_mul(qnano_t a, qnano_t b)
{
    qnano_t r;
    if (__builtin_mul_overflow(a, b, &r))
        return QUANTITY_NANO_MAX;
    return r;
}

/* Compare p1/q1 with p2/q2 (all >= 0, q > 0) without overflow: Euclid on the continued
 * fraction expansions. */
static int frac_cmp(qnano_t p1, qnano_t q1, qnano_t p2, qnano_t q2)
{
    int sign = 1;
    for (;;) {
        qnano_t a = p1 / q1, b = p2 / q2;
        if (a != b)
            return sign * (a < b ? -1 : 1);
        qnano_t r1 = p1 % q1, r2 = p2 % q2;
        if (r1 == 0 || r2 == 0) {
            if (r1 == r2)
                return 0;
            return sign * (r1 == 0 ? -1 : 1);
        }
        /* compare q1/r1 with q2/r2, reversed */
        p1 = q1;
        p2 = q2;
        q1 = r1;
        q2 = r2;
        sign = -sign;
    }
}

int sched__share_cmp(share_t a, share_t b)
{
    if (a.inf != b.inf)
        return a.inf ? 1 : -1;
    return frac_cmp(a.num, a.den, b.num, b.den);
}

int64_t sched__share_status(share_t sh)
{
    if (sh.inf)
        return INT64_MAX;
    /* ceil(B * 1000 / (L * w)) with num = B*1e9, den = L*w_nano */
    qnano_t n = sat_mul(sh.num, 1000);
    qnano_t v = (n + sh.den - 1) / sh.den;
    return v > INT64_MAX ? INT64_MAX : (int64_t)v;
}

static qnano_t extra_of(const use_t *extra, size_t n, int fr)
{
    for (size_t i = 0; i < n; i++)
        if (extra[i].fr == fr)
            return extra[i].v;
    return 0;
}

share_t sched__drs(const sched_t *s, const node_t *n, const use_t *extra, size_t nextra)
{
    share_t zero = {0, 1, false};
    if (n->parent == NULL || s->nres == 0)
        return zero;
    const node_t *root = sched__root((node_t *)n);
    share_t best = zero;
    bool any = false;
    for (size_t r = 0; r < s->nres; r++) {
        qnano_t b = 0, lend = 0;
        for (size_t fr = 0; fr < s->nfr; fr++) {
            if (s->frs[fr].res != (int)r)
                continue;
            const qfr_t *q = sched__qfr(n, (int)fr);
            qnano_t over = q->usage + extra_of(extra, nextra, (int)fr) - q->subtree;
            if (over > 0)
                b += over;
            if (sched__qfr(root, (int)fr)->subtree != 0)
                lend += sched__potential_available(n->parent, (int)fr);
        }
        if (b <= 0 || lend <= 0)
            continue;
        share_t sh;
        if (n->weight <= 0) {
            sh = (share_t){b, lend, true};
        } else {
            sh = (share_t){sat_mul(b, 1000000000), sat_mul(lend, n->weight), false};
        }
        if (!any || sched__share_cmp(sh, best) > 0)
            best = sh;
        any = true;
    }
    return best;
}

/* ---- admission ordering: the tournament ---------------------------------------------------------- */

static bool borrowing_on(const node_t *n, const entry_t *e)
{
    for (size_t i = 0; i < e->a.nuse; i++)
        if (sched__borrowing_with(n, e->a.use[i].fr, e->a.use[i].v))
            return true;
    return false;
}

/* Is entry a (reaching `node` through child ca) better than b (through child cb)? */
static bool better(const sched_t *s, const entry_t *a, const node_t *ca, const entry_t *b,
                   const node_t *cb)
{
    bool pa = a->cq->sticky == a->w, pb = b->cq->sticky == b->w;
    if (pa != pb)
        return pa; /* preemptors first (see cycle.c entry_cmp) */
    bool ba = borrowing_on(ca, a), bb = borrowing_on(cb, b);
    if (ba != bb)
        return !ba;
    int c = sched__share_cmp(sched__drs(s, ca, a->a.use, a->a.nuse),
                             sched__drs(s, cb, b->a.use, b->a.nuse));
    if (c != 0)
        return c < 0;
    return sched__wl_cmp(a->w, b->w) < 0;
}

static entry_t *find_entry(entry_t *e, size_t n, const node_t *cq)
{
    for (size_t i = 0; i < n; i++)
        if (!e[i].done && &e[i].cq->node == cq)
            return &e[i];
    return NULL;
}

static entry_t *winner(const sched_t *s, const node_t *node, entry_t *e, size_t n)
{
    entry_t *best = NULL;
    const node_t *best_child = NULL;
    for (size_t i = 0; i < node->nchildren; i++) {
        const node_t *ch = node->children[i];
        entry_t *cand = ch->is_cq ? find_entry(e, n, ch) : winner(s, ch, e, n);
        if (cand == NULL)
            continue;
        if (best == NULL || better(s, cand, ch, best, best_child)) {
            best = cand;
            best_child = ch;
        }
    }
    return best;
}

size_t sched__fair_next(sched_t *s, entry_t *e, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!e[i].done && e[i].cq->node.parent == NULL)
            return i;
    for (size_t r = 0; r < s->nroots; r++) {
        entry_t *w = winner(s, s->roots[r], e, n);
        if (w != NULL)
            return (size_t)(w - e);
    }
    for (size_t i = 0; i < n; i++)
        if (!e[i].done)
            return i;
    return 0;
}

/* ---- fair-sharing preemption ---------------------------------------------------------------------- */

typedef struct fcand_s {
    wl_t *w;
    bool taken;
} fcand_t;

static bool uses_any(const wl_t *c, const int *frs, size_t nfrs)
{
    for (size_t i = 0; i < c->nuse; i++)
        for (size_t j = 0; j < nfrs; j++)
            if (c->use[i].fr == frs[j])
                return true;
    return false;
}

static bool allows(preempt_policy_t p, const wl_t *w, const wl_t *c)
{
    switch (p) {
    case PREEMPT_LOWER_PRIORITY:
        return c->priority < w->priority;
    case PREEMPT_LOWER_OR_NEWER_EQUAL_PRIORITY:
        return c->priority < w->priority ||
               (c->priority == w->priority && w->created < c->created);
    case PREEMPT_ANY:
        return true;
    default:
        return false;
    }
}

static int fcand_cmp(const void *pa, const void *pb, const void *ctx)
{
    const fcand_t *a = pa, *b = pb;
    const cq_t *cq = ctx;
    bool ea = a->w->state == SCHED_WL_EVICTING, eb = b->w->state == SCHED_WL_EVICTING;
    if (ea != eb)
        return ea ? -1 : 1;
    bool oa = a->w->acq != cq, ob = b->w->acq != cq;
    if (oa != ob)
        return oa ? -1 : 1;
    if (a->w->priority != b->w->priority)
        return a->w->priority < b->w->priority ? -1 : 1;
    if (a->w->admitted_at != b->w->admitted_at)
        return a->w->admitted_at > b->w->admitted_at ? -1 : 1;
    return strcmp(a->w->key, b->w->key);
}

static void collect(const node_t *n, const cq_t *own, const wl_t *w, const int *frs, size_t nfrs,
                    fcand_t **out, size_t *len, size_t *cap, bool *oom)
{
    if (!n->is_cq) {
        for (size_t i = 0; i < n->nchildren; i++)
            collect(n->children[i], own, w, frs, nfrs, out, len, cap, oom);
        return;
    }
    const cq_t *cq = container_of(n, cq_t, node);
    preempt_policy_t pol = cq == own ? own->within_cluster_queue : own->reclaim_within_cohort;
    for (size_t i = 0; i < cq->admitted.len; i++) {
        wl_t *c = cq->admitted.items[i];
        if (!uses_any(c, frs, nfrs) || !allows(pol, w, c))
            continue;
        if (sched__grow((void **)out, cap, *len + 1, sizeof(fcand_t)) != ERR_OK) {
            *oom = true;
            return;
        }
        (*out)[(*len)++] = (fcand_t){c, false};
    }
}

static bool cq_borrowing(const node_t *n, const int *frs, size_t nfrs)
{
    for (size_t i = 0; i < nfrs; i++)
        if (!sched__within_nominal(n, frs[i]))
            return true;
    return false;
}

static bool on_path(const node_t *anc, const node_t *n)
{
    for (; n != NULL; n = n->parent)
        if (n == anc)
            return true;
    return false;
}

typedef struct fctx_s {
    const sched_t *s;
    cq_t *own;
    wl_t *w;
    const use_t *use;
    size_t nuse;
    const int *frs;
    size_t nfrs;
    fcand_t *c;
    size_t len;
    bool *excluded; /* per CQ index in s->cqs: no candidate passes the strategies */
} fctx_t;

static bool cq_eligible(const fctx_t *x, const cq_t *cq)
{
    if (x->excluded[cq->sorted_idx])
        return false;
    if (cq != x->own && !cq_borrowing(&cq->node, x->frs, x->nfrs))
        return false;
    for (size_t i = 0; i < x->len; i++)
        if (!x->c[i].taken && x->c[i].w->acq == cq)
            return true;
    return false;
}

static bool subtree_eligible(const fctx_t *x, const node_t *n)
{
    if (n->is_cq)
        return cq_eligible(x, container_of(n, cq_t, node));
    if (!on_path(n, &x->own->node) && !cq_borrowing(n, x->frs, x->nfrs))
        return false;
    for (size_t i = 0; i < n->nchildren; i++)
        if (subtree_eligible(x, n->children[i]))
            return true;
    return false;
}

static share_t node_share(const fctx_t *x, const node_t *n)
{
    if (on_path(n, &x->own->node))
        return sched__drs(x->s, n, x->use, x->nuse);
    return sched__drs(x->s, n, NULL, 0);
}

/* Descend from the root to the ClusterQueue with the highest share that still has candidates. */
static cq_t *pick_target(const fctx_t *x)
{
    const node_t *n = sched__root(&x->own->node);
    while (!n->is_cq) {
        const node_t *best = NULL;
        share_t bs = {0, 1, false};
        for (size_t i = 0; i < n->nchildren; i++) {
            const node_t *ch = n->children[i];
            if (!subtree_eligible(x, ch))
                continue;
            share_t sh = node_share(x, ch);
            if (best == NULL || sched__share_cmp(sh, bs) > 0) {
                best = ch;
                bs = sh;
            }
        }
        if (best == NULL)
            return NULL;
        n = best;
    }
    return container_of(n, cq_t, node);
}

static bool preemptor_within_nominal(const fctx_t *x)
{
    for (size_t i = 0; i < x->nuse; i++)
        for (size_t j = 0; j < x->nfrs; j++)
            if (x->use[i].fr == x->frs[j] &&
                sched__borrowing_with(&x->own->node, x->use[i].fr, x->use[i].v))
                return false;
    return true;
}

/* The children of the least common ancestor on each side ("almost LCA"). */
static void almost_lca(const node_t *a, const node_t *b, const node_t **pa, const node_t **pb)
{
    for (const node_t *x = a; x != NULL; x = x->parent) {
        for (const node_t *y = b; y != NULL; y = y->parent) {
            if (x->parent != NULL && x->parent == y->parent) {
                *pa = x;
                *pb = y;
                return;
            }
        }
    }
    *pa = a;
    *pb = b;
}

static bool strategy_ok(const fctx_t *x, fair_strategy_t st, const node_t *pa, const node_t *ta,
                        share_t target_old)
{
    share_t pnew = sched__drs(x->s, pa, x->use, x->nuse);
    if (st == FS_STRATEGY_LESS_THAN_INITIAL_SHARE)
        return sched__share_cmp(pnew, target_old) < 0;
    share_t tnew = sched__drs(x->s, ta, NULL, 0); /* candidate already removed */
    return sched__share_cmp(pnew, tnew) <= 0;
}

err_t sched__fair_targets(sched_t *s, cq_t *cq, wl_t *w, const use_t *use, size_t nuse,
                          const int *frs_need, size_t nfrs_need, targets_t *out)
{
    fcand_t *c = NULL;
    size_t len = 0, cap = 0;
    bool oom = false;
    collect(sched__root(&cq->node), cq, w, frs_need, nfrs_need, &c, &len, &cap, &oom);
    bool *excluded = calloc(s->ncqs ? s->ncqs : 1, sizeof(bool));
    for (size_t i = 0; i < s->ncqs; i++)
        s->cqs[i]->sorted_idx = i;
    if (oom || excluded == NULL ||
        sched__sort(c, len, sizeof(fcand_t), fcand_cmp, cq) != ERR_OK) {
        free(c);
        free(excluded);
        return ERR_NOMEM;
    }
    fctx_t x = {s, cq, w, use, nuse, frs_need, nfrs_need, c, len, excluded};
    fair_strategy_t strategies[2] = {FS_STRATEGY_LESS_THAN_OR_EQUAL_TO_FINAL_SHARE,
                                     FS_STRATEGY_LESS_THAN_INITIAL_SHARE};
    size_t nst = 2;
    if (s->cfg.nstrategies > 0) {
        nst = s->cfg.nstrategies;
        memcpy(strategies, s->cfg.strategies, nst * sizeof(fair_strategy_t));
    }
    targets_t tmp = {0};
    bool fits = sched__quota_fits(cq, use, nuse, true);
    while (!fits && !oom) {
        cq_t *target = pick_target(&x);
        if (target == NULL)
            break;
        /* the target's first remaining candidate in order */
        size_t k = 0;
        bool accepted = false;
        for (k = 0; k < len; k++) {
            if (c[k].taken || c[k].w->acq != target)
                continue;
            sched_preempt_reason_t reason;
            if (target == cq) {
                reason = SCHED_PREEMPT_IN_CLUSTER_QUEUE;
                sched__wl_usage_apply(c[k].w, -1);
                accepted = true;
            } else if (preemptor_within_nominal(&x)) {
                reason = SCHED_PREEMPT_IN_COHORT_RECLAMATION;
                sched__wl_usage_apply(c[k].w, -1);
                accepted = true;
            } else {
                reason = SCHED_PREEMPT_IN_COHORT_FAIR_SHARING;
                const node_t *pa, *ta;
                almost_lca(&cq->node, &target->node, &pa, &ta);
                share_t told = sched__drs(s, ta, NULL, 0);
                sched__wl_usage_apply(c[k].w, -1);
                for (size_t si = 0; si < nst && !accepted; si++)
                    accepted = strategy_ok(&x, strategies[si], pa, ta, told);
                if (!accepted)
                    sched__wl_usage_apply(c[k].w, +1);
            }
            if (accepted) {
                c[k].taken = true;
                if (sched__grow((void **)&tmp.items, &tmp.cap, tmp.len + 1, sizeof(target_t)) !=
                    ERR_OK) {
                    sched__wl_usage_apply(c[k].w, +1);
                    oom = true;
                    break;
                }
                tmp.items[tmp.len++] = (target_t){c[k].w, reason};
            }
            break; /* one candidate per pick: the target is re-picked after each */
        }
        if (!accepted && !oom)
            excluded[target->sorted_idx] = true;
        fits = sched__quota_fits(cq, use, nuse, true);
    }
    if (fits && !oom && tmp.len >= 2) {
        for (size_t i = tmp.len - 1; i-- > 0;) {
            sched__wl_usage_apply(tmp.items[i].w, +1);
            if (sched__quota_fits(cq, use, nuse, true)) {
                memmove(&tmp.items[i], &tmp.items[i + 1], (tmp.len - i - 1) * sizeof(target_t));
                tmp.len--;
            } else {
                sched__wl_usage_apply(tmp.items[i].w, -1);
            }
        }
    }
    for (size_t i = 0; i < tmp.len; i++)
        sched__wl_usage_apply(tmp.items[i].w, +1);
    free(c);
    free(excluded);
    if (oom) {
        sched__targets_fini(&tmp);
        return ERR_NOMEM;
    }
    if (!fits)
        sched__targets_fini(&tmp);
    *out = tmp;
    return ERR_OK;
}
