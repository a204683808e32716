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

/* ---- admission ordering: the tournament
 * ---------------------------------------------------------- */

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
    bool pa = sched__wl_pin_cq(a->w) == a->cq, pb = sched__wl_pin_cq(b->w) == b->cq;
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

/* ---- fair-sharing preemption (Kueue preemption.go fairPreemptions, fairsharing/) ------------- */

/*
 * The preemptor's usage is added to the tree for the whole search, so every share below is the
 * share "with the incoming workload" (Kueue SimulateUsageAddition); fit checks take it out again.
 *
 * Candidates: workloads of the preemptor's ClusterQueue allowed by withinClusterQueue, and
 * workloads of ClusterQueues of the root tree that borrow in a contested flavor-resource,
 * allowed by reclaimWithinCohort; all using a contested flavor-resource, sorted by Kueue's
 * CandidatesOrdering and then grouped per ClusterQueue (queue order kept).
 *
 * Target ordering (TargetClusterQueueOrdering): from the root, descend to the child with the
 * highest share; a ClusterQueue that does not borrow (other than the preemptor's) or has no
 * candidate left is pruned, a cohort that does not borrow and is not an ancestor of the
 * preemptor is pruned, a cohort whose children are all pruned is pruned; the search ends when
 * the root is pruned. Ties: a cohort beats a ClusterQueue; between ClusterQueues the one whose
 * next candidate comes first in CandidatesOrdering; between cohorts the first in name order
 * (Kueue: map order, i.e. unspecified).
 *
 * Per target (runFirstFsStrategy): the preemptor's own ClusterQueue gives its next candidate
 * (InClusterQueue); when the preemptor's ClusterQueue is within nominal in every contested
 * flavor-resource (FairSharingPreemptWithinNominal) the target's next candidate is taken
 * (InCohortReclamation); otherwise candidates are tried in order with the first strategy on the
 * shares of the "almost LCAs" (the children of the least common ancestor on each side), the
 * first that passes is taken (InCohortFairSharing) and the target is picked again; those that
 * fail are kept for the second strategy. Rule S2-b (runSecondFsStrategy) then walks the kept
 * candidates with a fresh ordering, taking at most the first candidate of each ClusterQueue
 * when preemptorNewShare < targetOldShare. After a fit: fill back as in classical preemption.
 */

typedef struct fctx_s {
    sched_t *s;
    cq_t *own;
    wl_t *w;
    const use_t *use;
    size_t nuse;
    const int *frs;
    size_t nfrs;
    wl_t **cand; /* candidates in CandidatesOrdering */
    size_t ncand;
    size_t *next; /* per candidate index: next index of the same ClusterQueue, or SIZE_MAX */
    targets_t t;
    bool oom;
} fctx_t;

/* CandidatesOrdering (sched__cand_cmp) of workload pointers. */
static int cand_sort_cmp(const void *pa, const void *pb, const void *ctx)
{
    return sched__cand_cmp(*(wl_t *const *)pa, *(wl_t *const *)pb, ctx);
}

/* Kueue DRS.IsBorrowing: over its subtree quota in any flavor-resource (roots never borrow). */
static bool node_borrowing(const sched_t *s, const node_t *n)
{
    if (n->parent == NULL)
        return false;
    for (size_t fr = 0; fr < s->nfr && fr < n->nfr; fr++)
        if (n->fr[fr].usage > n->fr[fr].subtree)
            return true;
    return false;
}

static bool is_ancestor(const node_t *anc, const node_t *n)
{
    for (n = n->parent; n != NULL; n = n->parent)
        if (n == anc)
            return true;
    return false;
}

static void collect(fctx_t *x, const node_t *n, wlvec_t *out)
{
    if (!n->is_cq) {
        for (size_t i = 0; i < n->nchildren && !x->oom; i++)
            collect(x, n->children[i], out);
        return;
    }
    const cq_t *cq = container_of(n, cq_t, node);
    preempt_policy_t pol;
    if (cq == x->own)
        pol = x->own->within_cluster_queue;
    else if (n->parent != NULL && !sched__within_nominal_frs(n, x->frs, x->nfrs)) /* borrowing */
        pol = x->own->reclaim_within_cohort;
    else
        return;
    for (size_t i = 0; i < cq->admitted.len; i++) {
        wl_t *c = cq->admitted.items[i];
        if (!sched__uses_any_fr(c, x->frs, x->nfrs) || !sched__policy_allows(pol, x->w, c))
            continue;
        if (sched__wlvec_push(out, c) != ERR_OK) {
            x->oom = true;
            return;
        }
    }
}

/* Reset the ordering scratch of the tree and group `cand` per ClusterQueue (order kept). */
static void reset_marks(node_t *n)
{
    n->fs_pruned = false;
    if (n->is_cq) {
        container_of(n, cq_t, node)->fs_head = SIZE_MAX;
        return;
    }
    for (size_t i = 0; i < n->nchildren; i++)
        reset_marks(n->children[i]);
}

static void ordering_init(fctx_t *x, wl_t **cand, size_t n)
{
    reset_marks(sched__root(&x->own->node));
    for (size_t i = n; i-- > 0;) {
        cq_t *cq = cand[i]->acq;
        x->next[i] = cq->fs_head;
        cq->fs_head = i;
    }
}

static bool has_wl(const cq_t *cq)
{
    return cq->fs_head != SIZE_MAX;
}

static wl_t *pop_wl(fctx_t *x, wl_t **cand, cq_t *cq)
{
    size_t i = cq->fs_head;
    cq->fs_head = x->next[i];
    return cand[i];
}

/* Kueue TargetClusterQueueOrdering.nextTarget; NULL when this call only pruned. */
static cq_t *next_target(fctx_t *x, wl_t **cand, node_t *cohort)
{
    const sched_t *s = x->s;
    cq_t *best_cq = NULL;
    share_t best_cq_sh = {0, 1, false};
    node_t *best_co = NULL;
    share_t best_co_sh = {0, 1, false};
    for (size_t i = 0; i < cohort->nchildren; i++) {
        node_t *ch = cohort->children[i];
        if (ch->fs_pruned)
            continue;
        share_t sh = sched__drs(s, ch, NULL, 0);
        if (ch->is_cq) {
            cq_t *cq = container_of(ch, cq_t, node);
            if ((!node_borrowing(s, ch) && cq != x->own) || !has_wl(cq)) {
                ch->fs_pruned = true;
                continue;
            }
            int c = best_cq ? sched__share_cmp(sh, best_cq_sh) : 1;
            if (c == 0 && sched__cand_cmp(cand[cq->fs_head], cand[best_cq->fs_head], x->own) < 0)
                c = 1;
            if (c > 0) {
                best_cq = cq;
                best_cq_sh = sh;
            }
        } else {
            if (!node_borrowing(s, ch) && !is_ancestor(ch, &x->own->node)) {
                ch->fs_pruned = true;
                continue;
            }
            if (best_co == NULL || sched__share_cmp(sh, best_co_sh) > 0) {
                best_co = ch;
                best_co_sh = sh;
            }
        }
    }
    if (best_co == NULL && best_cq == NULL) {
        cohort->fs_pruned = true;
        return NULL;
    }
    if (best_co != NULL && (best_cq == NULL || sched__share_cmp(best_co_sh, best_cq_sh) >= 0))
        return next_target(x, cand, best_co);
    return best_cq;
}

/* The next target ClusterQueue, or NULL when the ordering is exhausted. */
static cq_t *ordering_next(fctx_t *x, wl_t **cand)
{
    if (x->own->node.parent == NULL)
        return !x->own->node.fs_pruned && has_wl(x->own) ? x->own : NULL;
    node_t *root = sched__root(&x->own->node);
    while (!root->fs_pruned) {
        cq_t *t = next_target(x, cand, root);
        if (t != NULL)
            return t;
    }
    return NULL;
}

/* The children of the least common ancestor on the preemptor's and the target's side. */
static void almost_lcas(const cq_t *own, const cq_t *target, const node_t **pa, const node_t **ta)
{
    const node_t *lca = NULL;
    for (const node_t *n = target->node.parent; n != NULL && lca == NULL; n = n->parent)
        if (is_ancestor(n, &own->node))
            lca = n;
    *pa = &own->node;
    while ((*pa)->parent != lca)
        *pa = (*pa)->parent;
    *ta = &target->node;
    while ((*ta)->parent != lca)
        *ta = (*ta)->parent;
}

static bool fits_fs(fctx_t *x)
{
    for (size_t i = 0; i < x->nuse; i++)
        sched__usage_remove(&x->own->node, x->use[i].fr, x->use[i].v);
    bool fits = false;
    if (sched__fits_after(x->s, x->own, x->use, x->nuse, &x->t, true, &fits) != ERR_OK)
        x->oom = true; /* reads as "does not fit"; the search ends on x->oom */
    for (size_t i = 0; i < x->nuse; i++)
        sched__usage_add(&x->own->node, x->use[i].fr, x->use[i].v);
    return fits;
}

/* Remove c from the tree and record it as a target. */
static void take(fctx_t *x, wl_t *c, sched_preempt_reason_t reason)
{
    if (sched__targets_add(&x->t, c, reason) != ERR_OK) {
        x->oom = true;
        return;
    }
    sched__wl_usage_apply(c, -1);
}

static bool strategy_passes(fair_strategy_t st, share_t pnew, share_t told, share_t tnew)
{
    if (st == FS_STRATEGY_LESS_THAN_INITIAL_SHARE)
        return sched__share_cmp(pnew, told) < 0;
    return sched__share_cmp(pnew, tnew) <= 0;
}

static bool first_strategy(fctx_t *x, fair_strategy_t st, wlvec_t *retry)
{
    bool within = true;
    for (size_t i = 0; i < x->nfrs; i++)
        within = within && sched__within_nominal(&x->own->node, x->frs[i]);
    ordering_init(x, x->cand, x->ncand);
    for (cq_t *t = ordering_next(x, x->cand); t != NULL && !x->oom; t = ordering_next(x, x->cand)) {
        if (t == x->own || within) {
            take(x, pop_wl(x, x->cand, t),
                 t == x->own ? SCHED_PREEMPT_IN_CLUSTER_QUEUE
                             : SCHED_PREEMPT_IN_COHORT_RECLAMATION);
            if (!x->oom && fits_fs(x))
                return true;
            continue;
        }
        const node_t *pa, *ta;
        almost_lcas(x->own, t, &pa, &ta);
        share_t pnew = sched__drs(x->s, pa, NULL, 0), told = sched__drs(x->s, ta, NULL, 0);
        bool hopeless = pnew.inf && !told.inf; /* Kueue fsStrategyUnsatisfiable */
        while (has_wl(t) && !x->oom) {
            wl_t *c = pop_wl(x, x->cand, t);
            bool passed = false;
            if (!hopeless) {
                sched__wl_usage_apply(c, -1);
                share_t tnew = sched__drs(x->s, ta, NULL, 0);
                sched__wl_usage_apply(c, +1);
                passed = strategy_passes(st, pnew, told, tnew);
            }
            if (!passed) {
                if (sched__wlvec_push(retry, c) != ERR_OK)
                    x->oom = true;
                continue;
            }
            take(x, c, SCHED_PREEMPT_IN_COHORT_FAIR_SHARING);
            if (!x->oom && fits_fs(x))
                return true;
            break; /* shares changed: pick the target again */
        }
    }
    return false;
}

static bool second_strategy(fctx_t *x, wlvec_t *retry)
{
    ordering_init(x, retry->items, retry->len);
    for (cq_t *t = ordering_next(x, retry->items); t != NULL && !x->oom;
         t = ordering_next(x, retry->items)) {
        const node_t *pa, *ta;
        almost_lcas(x->own, t, &pa, &ta);
        share_t pnew = sched__drs(x->s, pa, NULL, 0), told = sched__drs(x->s, ta, NULL, 0);
        wl_t *c = pop_wl(x, retry->items, t);
        if (sched__share_cmp(pnew, told) < 0) {
            take(x, c, SCHED_PREEMPT_IN_COHORT_FAIR_SHARING);
            if (!x->oom && fits_fs(x))
                return true;
        }
        t->node.fs_pruned = true; /* S2-b applies at most once per ClusterQueue */
    }
    return false;
}

err_t sched__fair_targets(sched_t *s, cq_t *cq, wl_t *w, const use_t *use, size_t nuse,
                          const int *frs_need, size_t nfrs_need, targets_t *out)
{
    fctx_t x = {
        .s = s, .own = cq, .w = w, .use = use, .nuse = nuse, .frs = frs_need, .nfrs = nfrs_need};
    wlvec_t cands = {0}, retry = {0};
    collect(&x, sched__root(&cq->node), &cands);
    if (!x.oom && cands.len > 0 &&
        sched__sort(cands.items, cands.len, sizeof(wl_t *), cand_sort_cmp, cq) != ERR_OK)
        x.oom = true;
    x.cand = cands.items;
    x.ncand = cands.len;
    x.next = malloc((cands.len ? cands.len : 1) * sizeof(size_t));
    if (x.next == NULL)
        x.oom = true;
    bool fits = false;
    if (!x.oom && cands.len > 0) {
        fair_strategy_t strategies[2] = {FS_STRATEGY_LESS_THAN_OR_EQUAL_TO_FINAL_SHARE,
                                         FS_STRATEGY_LESS_THAN_INITIAL_SHARE};
        size_t nst = 2;
        if (s->cfg.nstrategies > 0) {
            nst = s->cfg.nstrategies;
            memcpy(strategies, s->cfg.strategies, nst * sizeof(fair_strategy_t));
        }
        for (size_t i = 0; i < nuse; i++)
            sched__usage_add(&cq->node, use[i].fr, use[i].v);
        fits = first_strategy(&x, strategies[0], &retry);
        if (!fits && !x.oom && nst > 1 && retry.len > 0) {
            size_t *next = realloc(x.next, retry.len * sizeof(size_t));
            if (next == NULL)
                x.oom = true;
            else
                x.next = next;
            if (!x.oom)
                fits = second_strategy(&x, &retry);
        }
        for (size_t i = 0; i < nuse; i++)
            sched__usage_remove(&cq->node, use[i].fr, use[i].v);
    }
    if (fits && !x.oom && x.t.len >= 2) {
        /* fill back (Kueue fillBackWorkloads, borrowing allowed) */
        for (size_t i = x.t.len - 1; i-- > 0 && !x.oom;) {
            sched__wl_usage_apply(x.t.items[i].w, +1);
            target_t back = sched__targets_remove_at(&x.t, i);
            bool still_fits = false;
            if (sched__fits_after(s, cq, use, nuse, &x.t, true, &still_fits) != ERR_OK)
                x.oom = true;
            if (still_fits)
                continue;
            sched__targets_insert_at(&x.t, i, back);
            sched__wl_usage_apply(back.w, -1);
        }
    }
    for (size_t i = 0; i < x.t.len; i++)
        sched__wl_usage_apply(x.t.items[i].w, +1);
    sched__wlvec_fini(&cands);
    sched__wlvec_fini(&retry);
    free(x.next);
    if (x.oom || !fits)
        sched__targets_fini(&x.t);
    *out = x.t;
    return x.oom ? ERR_NOMEM : ERR_OK;
}
