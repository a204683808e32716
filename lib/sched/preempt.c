/* sched preempt -- classical preemption: candidates, ordering, remove-then-fill-back. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "sched/sched_int.h"

#include <stdlib.h>
#include <string.h>

/*
 * Reference §4.7 (Kueue preemption/classical/...). Targets are searched by simulation on the live
 * quota tree: candidates' usage is removed one by one until the preemptor fits, then re-added in
 * reverse order (except the last) while it still fits; every simulated removal is undone before
 * returning, so the tree is unchanged.
 */

typedef enum {
    V_NEVER = 0,
    V_WITHIN_CQ,
    V_HIERARCHICAL_RECLAIM,
    V_RECLAIM_WITHOUT_BORROWING,
    V_RECLAIM_WHILE_BORROWING,
} variant_t;

typedef struct cand_s {
    wl_t *w;
    node_t *lca;   /* subtree root the candidate was collected under (NULL: same CQ) */
    uint64_t rank; /* sort_cands: evicting, other ClusterQueue and priority in one key */
    int64_t at;    /* sort_cands: w->admitted_at */
    variant_t v;
} cand_t;

typedef struct cands_s {
    cand_t *items;
    size_t len, cap;
} cands_t;

typedef struct pctx_s {
    sched_t *s;
    cq_t *cq;
    wl_t *w;
    const use_t *use;
    size_t nuse;
    const int *frs;
    size_t nfrs;
    bool oom;
} pctx_t;

static sched_preempt_reason_t variant_reason(variant_t v)
{
    switch (v) {
    case V_WITHIN_CQ:
        return SCHED_PREEMPT_IN_CLUSTER_QUEUE;
    case V_HIERARCHICAL_RECLAIM:
    case V_RECLAIM_WITHOUT_BORROWING:
        return SCHED_PREEMPT_IN_COHORT_RECLAMATION;
    case V_RECLAIM_WHILE_BORROWING:
        return SCHED_PREEMPT_IN_COHORT_RECLAIM_WHILE_BORROWING;
    default:
        return SCHED_PREEMPT_NONE;
    }
}

static variant_t classify(const pctx_t *x, const wl_t *c, bool advantage)
{
    if (!sched__uses_any_fr(c, x->frs, x->nfrs))
        return V_NEVER;
    bool same = c->acq == x->cq;
    preempt_policy_t pol = same ? x->cq->within_cluster_queue : x->cq->reclaim_within_cohort;
    if (!sched__policy_allows(pol, x->w, c))
        return V_NEVER;
    if (same)
        return V_WITHIN_CQ;
    if (advantage)
        return V_HIERARCHICAL_RECLAIM;
    if (x->cq->borrow_within_cohort == PREEMPT_NEVER)
        return V_RECLAIM_WITHOUT_BORROWING;
    if (c->priority >= x->w->priority)
        return V_RECLAIM_WITHOUT_BORROWING;
    if (x->cq->has_max_prio_threshold && c->priority > x->cq->max_prio_threshold)
        return V_RECLAIM_WITHOUT_BORROWING;
    return V_RECLAIM_WHILE_BORROWING;
}

static void cands_add(pctx_t *x, cands_t *l, wl_t *c, node_t *lca, variant_t v)
{
    if (util_grow((void **)&l->items, &l->cap, l->len + 1, sizeof(cand_t)) != ERR_OK) {
        x->oom = true;
        return;
    }
    l->items[l->len++] = (cand_t){.w = c, .lca = lca, .v = v};
}

static bool over_nominal_path(const wl_t *c, const node_t *lca, const int *frs, size_t nfrs);

/* Bit j of the result: cq and every cohort below lca are over nominal in frs[j] (nfrs <= 64). */
static uint64_t over_nominal_mask(const cq_t *cq, const node_t *lca, const int *frs, size_t nfrs)
{
    uint64_t mask = 0;
    for (size_t j = 0; j < nfrs; j++) {
        bool over = true;
        for (const node_t *n = &cq->node; n != NULL && n != lca && over; n = n->parent)
            over = !sched__within_nominal(n, frs[j]);
        if (over)
            mask |= UINT64_C(1) << j;
    }
    return mask;
}

/* over_nominal_path(c, lca, frs, nfrs) for c admitted in the ClusterQueue `mask` was made for. */
static bool uses_over_fr(const wl_t *c, const int *frs, size_t nfrs, uint64_t mask)
{
    for (size_t u = 0; u < c->nuse; u++)
        for (size_t j = 0; j < nfrs; j++)
            if (c->use[u].fr == frs[j] && (mask >> j & 1))
                return true;
    return false;
}

static void from_cq(pctx_t *x, cq_t *cq, node_t *lca, bool advantage, cands_t *out)
{
    /* the path from cq up to lca is the same for all its workloads: walk it once */
    bool masked = lca != NULL && x->nfrs <= 64;
    uint64_t mask = masked ? over_nominal_mask(cq, lca, x->frs, x->nfrs) : 0;
    if (masked && mask == 0)
        return;
    for (size_t i = 0; i < cq->admitted.len; i++) {
        wl_t *c = cq->admitted.items[i];
        if (masked ? !uses_over_fr(c, x->frs, x->nfrs, mask)
                   : lca != NULL && !over_nominal_path(c, lca, x->frs, x->nfrs))
            continue;
        variant_t v = classify(x, c, advantage);
        if (v != V_NEVER)
            cands_add(x, out, c, lca, v);
    }
}

static void in_subtree(pctx_t *x, node_t *cur, node_t *root, node_t *skip, bool advantage,
                       cands_t *out)
{
    for (size_t i = 0; i < cur->nchildren; i++) {
        node_t *ch = cur->children[i];
        if (ch->is_cq || ch == skip)
            continue;
        if (sched__within_nominal_frs(ch, x->frs, x->nfrs))
            continue;
        in_subtree(x, ch, root, skip, advantage, out);
    }
    for (size_t i = 0; i < cur->nchildren; i++) {
        node_t *ch = cur->children[i];
        if (!ch->is_cq || ch == &x->cq->node)
            continue;
        if (!sched__within_nominal_frs(ch, x->frs, x->nfrs))
            from_cq(x, container_of(ch, cq_t, node), root, advantage, out);
    }
}

/* Kueue QuantitiesFitInQuota: does `req` fit in n's subtree quota; rem = what spills up. */
static bool fit_in_quota(const node_t *n, const use_t *req, qnano_t *rem, size_t nreq)
{
    bool fits = true;
    for (size_t i = 0; i < nreq; i++) {
        const qfr_t *q = sched__qfr(n, req[i].fr);
        qnano_t v = rem[i];
        if (q->usage + v > q->subtree)
            fits = false;
        qnano_t la = sched__local_quota(n, req[i].fr) - q->usage;
        if (la < 0)
            la = 0;
        rem[i] = v - la > 0 ? v - la : 0;
    }
    return fits;
}

/* CandidatesOrdering (sched__cand_cmp) of the candidates' workloads. */
static int cand_cmp(const void *pa, const void *pb, const void *ctx)
{
    return sched__cand_cmp(((const cand_t *)pa)->w, ((const cand_t *)pb)->w, ctx);
}

/* sched__cand_cmp on the keys sort_cands computed, for lists where its admission-fair-sharing
 * rule cannot apply: evicting first, other ClusterQueues first, lower priority first (all three
 * in `rank`), most recently admitted first, then key. */
static inline int cand_order(const void *pa, const void *pb, const void *ctx)
{
    const cand_t *a = pa, *b = pb;

    (void)ctx;
    if (a->rank != b->rank)
        return a->rank < b->rank ? -1 : 1;
    if (a->at != b->at)
        return a->at > b->at ? -1 : 1;
    return strcmp(a->w->key, b->w->key);
}

static void sort_cands(pctx_t *x, cands_t *l)
{
    if (l->len < 2)
        return;
    bool afs = false;
    for (size_t i = 0; i < l->len; i++) {
        cand_t *c = &l->items[i];
        const wl_t *w = c->w;
        afs = afs || (w->acq != NULL && w->acq->afs_active);
        c->rank = (uint64_t)(w->state != SCHED_WL_EVICTING) << 33 |
                  (uint64_t)(w->acq == x->cq) << 32 |
                  (uint64_t)((uint32_t)w->priority ^ UINT32_C(0x80000000));
        c->at = w->admitted_at;
    }
    if (afs) {
        /* LocalQueue usage may order candidates of one ClusterQueue: the full comparison */
        if (sched__sort(l->items, l->len, sizeof(cand_t), cand_cmp, x->cq) != ERR_OK)
            x->oom = true;
        return;
    }
    sched_t *s = x->s;
    if (util_grow((void **)&s->pscr.sort_tmp, &s->pscr.csort_tmp, l->len, sizeof(cand_t)) !=
        ERR_OK) {
        x->oom = true;
        return;
    }
    /* the same stable merges as sched__sort, the comparison inlined, no allocation */
    sched__merge_sort((char *)l->items, l->len, sizeof(cand_t), (char *)s->pscr.sort_tmp,
                      cand_order, NULL);
}

bool sched__quota_fits(const cq_t *cq, const use_t *use, size_t nuse, bool allow_borrowing)
{
    for (size_t i = 0; i < nuse; i++) {
        if (!allow_borrowing && sched__borrowing_with(&cq->node, use[i].fr, use[i].v))
            return false;
        if (use[i].v > sched__available(&cq->node, use[i].fr))
            return false;
    }
    return true;
}

/*
 * Is candidate c's quota reclaimable, per flavor-resource? Kueue (candidate_generator.go
 * candidateIsValid, IsWithinNominalInResources) asks whether the candidate's ClusterQueue and the
 * cohorts up to the LCA are within nominal in ALL contested flavor-resources together, so a
 * ClusterQueue over nominal in flavor A loses workloads that only use flavor B, where it is
 * within nominal. The victim's queue then reclaims B back and the two preempt each other forever.
 * Here a candidate is valid only if it uses some contested fr in which its ClusterQueue and every
 * cohort below the LCA are over nominal: only borrowed quota is ever reclaimed.
 */
static bool over_nominal_path(const wl_t *c, const node_t *lca, const int *frs, size_t nfrs)
{
    for (size_t u = 0; u < c->nuse; u++) {
        int fr = c->use[u].fr;
        bool contested = false;
        for (size_t j = 0; j < nfrs && !contested; j++)
            contested = frs[j] == fr;
        if (!contested)
            continue;
        bool over = true;
        for (const node_t *n = &c->acq->node; n != NULL && n != lca && over; n = n->parent)
            over = !sched__within_nominal(n, fr);
        if (over)
            return true;
    }
    return false;
}

static bool cand_valid(const pctx_t *x, const cand_t *c, bool allow_borrowing)
{
    if (c->w->acq == x->cq)
        return true;
    if (allow_borrowing && c->v == V_RECLAIM_WITHOUT_BORROWING)
        return false;
    return over_nominal_path(c->w, c->lca, x->frs, x->nfrs);
}

void sched__targets_fini(targets_t *t)
{
    free(t->items);
    memset(t, 0, sizeof(*t));
}

/*
 * Fit check after the removal of `tmp` (already applied to the tree).
 *
 * Removing a victim may drop its ClusterQueue Y below nominal, and Kueue lets a preemptor that
 * borrows take Y's freed nominal quota too. Y then reclaims it: in classical preemption when Y's
 * reclaimWithinCohort is Any (any workload of Y, even one of lower priority than the preemptor,
 * may reclaim; with LowerPriority the chain of priorities strictly decreases and ends), in fair
 * sharing whenever Y may reclaim at all (FairSharingPreemptWithinNominal preempts without looking
 * at shares once Y is within nominal). The preemptor then preempts again, and so on forever. So
 * for such victims (ReclaimWhileBorrowing / InCohortFairSharing) Y's freed nominal quota is held
 * back during the check (phantom usage up to its nominal): the preemptor only ever takes what
 * its victims' ClusterQueues had borrowed, and Y's own queue keeps the rest.
 */
static bool holds_back(const target_t *t)
{
    preempt_policy_t y = t->w->acq->reclaim_within_cohort;
    if (t->reason == SCHED_PREEMPT_IN_COHORT_RECLAIM_WHILE_BORROWING)
        return y == PREEMPT_ANY;
    if (t->reason == SCHED_PREEMPT_IN_COHORT_FAIR_SHARING)
        return y != PREEMPT_NEVER;
    return false;
}

err_t sched__targets_add(targets_t *t, wl_t *w, sched_preempt_reason_t r)
{
    if (util_grow((void **)&t->items, &t->cap, t->len + 1, sizeof(target_t)) != ERR_OK)
        return ERR_NOMEM;
    t->items[t->len++] = (target_t){w, r};
    t->nhold += holds_back(&t->items[t->len - 1]);
    return ERR_OK;
}

target_t sched__targets_remove_at(targets_t *t, size_t i)
{
    target_t x = t->items[i];
    memmove(&t->items[i], &t->items[i + 1], (t->len - i - 1) * sizeof(target_t));
    t->len--;
    t->nhold -= holds_back(&x);
    return x;
}

void sched__targets_insert_at(targets_t *t, size_t i, target_t x)
{
    memmove(&t->items[i + 1], &t->items[i], (t->len - i) * sizeof(target_t));
    t->items[i] = x;
    t->len++;
    t->nhold += holds_back(&x);
}

/*
 * Loop guard own-queue-borrowing (opt-in; off, the engine chooses Kueue's victims).
 * Kueue lets a preemptor evict lower-priority workloads of its own ClusterQueue and take, on top
 * of what they free, more quota borrowed from the cohort. That can loop (docs/engine.md, "Loops",
 * cause 4): a small workload reclaims a large one of another queue, a bigger workload of its own
 * queue replaces it and borrows the rest, the other queue reclaims that, and so on. Here a
 * preemption with victims in the preemptor's own ClusterQueue may not leave that queue borrowing
 * more than before in a flavor-resource the preemptor requests: borrowing grows only by
 * admission into free capacity. `tmp`'s usage is already out of the tree, the preemptor's is not
 * in it.
 */
static bool own_borrowing_grows(const cq_t *cq, const use_t *use, size_t nuse, const targets_t *tmp)
{
    bool own = false;
    for (size_t i = 0; i < tmp->len && !own; i++)
        own = tmp->items[i].w->acq == cq;
    if (!own || cq->node.parent == NULL)
        return false;
    for (size_t u = 0; u < nuse; u++) {
        const qfr_t *q = sched__qfr(&cq->node, use[u].fr);
        qnano_t freed = 0;
        for (size_t i = 0; i < tmp->len; i++) {
            const wl_t *v = tmp->items[i].w;
            if (v->acq != cq)
                continue;
            for (size_t k = 0; k < v->nuse; k++)
                if (v->use[k].fr == use[u].fr)
                    freed += v->use[k].v;
        }
        qnano_t after = q->usage + use[u].v;
        if (after > q->nominal && after > q->usage + freed)
            return true;
    }
    return false;
}

/* Topology-aware preemption (s->tas_pre for cq): once the quota fits, the nodes must too. Out of
 * line: the quota-only search never comes here. */
static err_t nodes_fit_after(sched_t *s, const cq_t *cq, const targets_t *tmp, bool *fits_out)
{
    if (s->tas_pre->cq != cq) {
        *fits_out = true;
        return ERR_OK;
    }
    return sched__tas_fits_after(s, s->tas_pre, tmp, fits_out);
}

err_t sched__fits_after(sched_t *s, const cq_t *cq, const use_t *use, size_t nuse,
                        const targets_t *tmp, bool allow_borrowing, bool *fits_out)
{
    if ((s->cfg.loop_guards & SCHED_GUARD_OWN_QUEUE_BORROWING) &&
        own_borrowing_grows(cq, use, nuse, tmp)) {
        *fits_out = false;
        return ERR_OK;
    }
    size_t nhold = tmp->nhold;
    if (nhold == 0 || nuse == 0) {
        bool fits = sched__quota_fits(cq, use, nuse, allow_borrowing);
        if (fits && s->tas_pre != NULL)
            return nodes_fit_after(s, cq, tmp, fits_out);
        *fits_out = fits;
        return ERR_OK;
    }
    struct held_s {
        cq_t *cq;
        use_t u;
    } *held = malloc(nhold * nuse * sizeof(*held));
    if (held == NULL)
        return ERR_NOMEM;
    size_t nheld = 0;
    for (size_t i = 0; i < tmp->len; i++) {
        if (!holds_back(&tmp->items[i]))
            continue;
        cq_t *y = tmp->items[i].w->acq;
        bool seen = false;
        for (size_t k = 0; k < i && !seen; k++)
            seen = holds_back(&tmp->items[k]) && tmp->items[k].w->acq == y;
        for (size_t u = 0; u < nuse && !seen; u++) {
            const qfr_t *q = sched__qfr(&y->node, use[u].fr);
            if (q->usage >= q->nominal)
                continue;
            held[nheld].cq = y;
            held[nheld].u = (use_t){use[u].fr, q->nominal - q->usage};
            sched__usage_add(&y->node, held[nheld].u.fr, held[nheld].u.v);
            nheld++;
        }
    }
    bool fits = sched__quota_fits(cq, use, nuse, allow_borrowing);
    for (size_t i = nheld; i-- > 0;)
        sched__usage_remove(&held[i].cq->node, held[i].u.fr, held[i].u.v);
    free(held);
    if (fits && s->tas_pre != NULL)
        return nodes_fit_after(s, cq, tmp, fits_out);
    *fits_out = fits;
    return ERR_OK;
}

/* sched__fits_after() for the search; OOM reads as "does not fit" and ends the search. */
static bool attempt_fits(pctx_t *x, const targets_t *tmp, bool allow_borrowing)
{
    bool fits = false;

    if (sched__fits_after(x->s, x->cq, x->use, x->nuse, tmp, allow_borrowing, &fits) != ERR_OK)
        x->oom = true;
    return fits;
}

static const cand_t *cand_of(const cands_t *all, const wl_t *w)
{
    for (size_t i = 0; i < all->len; i++)
        if (all->items[i].w == w)
            return &all->items[i];
    return NULL;
}

/* Each victim from another ClusterQueue still holds borrowed quota once all the other victims
 * are gone. The removal loop checks it in removal order only: a victim taken first, while a
 * later victim made their cohort borrow, would be preempted from within its quota and reclaim
 * it back (docs/engine.md, "Loops", cause 6). */
static bool still_borrowed(const pctx_t *x, const cands_t *all, const targets_t *t)
{
    for (size_t i = 0; i < t->len; i++) {
        const cand_t *c = cand_of(all, t->items[i].w);
        if (c == NULL || c->w->acq == x->cq)
            continue;
        sched__wl_usage_apply(c->w, +1);
        bool over = over_nominal_path(c->w, c->lca, x->frs, x->nfrs);
        sched__wl_usage_apply(c->w, -1);
        if (!over)
            return false;
    }
    return true;
}

/* One attempt: remove candidates until fit, then fill back. Leaves the tree unchanged. */
static bool minimal(pctx_t *x, const cands_t *all, bool allow_borrowing, targets_t *out)
{
    targets_t tmp = {0};
    bool fits = false;
    for (size_t i = 0; i < all->len; i++) {
        const cand_t *c = &all->items[i];
        if (!cand_valid(x, c, allow_borrowing))
            continue;
        sched__wl_usage_apply(c->w, -1);
        if (sched__targets_add(&tmp, c->w, variant_reason(c->v)) != ERR_OK) {
            sched__wl_usage_apply(c->w, +1);
            x->oom = true;
            break;
        }
        if (attempt_fits(x, &tmp, allow_borrowing)) {
            fits = true;
            break;
        }
    }
    if (fits && tmp.len >= 2) {
        /* fill back in reverse removal order (except the last): keep whoever still fits */
        for (size_t i = tmp.len - 1; i-- > 0 && !x->oom;) {
            sched__wl_usage_apply(tmp.items[i].w, +1);
            target_t back = sched__targets_remove_at(&tmp, i);
            if (attempt_fits(x, &tmp, allow_borrowing))
                continue;
            sched__targets_insert_at(&tmp, i, back);
            sched__wl_usage_apply(back.w, -1);
        }
    }
    if (fits && tmp.len >= 2)
        fits = still_borrowed(x, all, &tmp);
    for (size_t i = 0; i < tmp.len; i++)
        sched__wl_usage_apply(tmp.items[i].w, +1);
    if (fits) {
        sched__targets_fini(out);
        *out = tmp;
        return true;
    }
    sched__targets_fini(&tmp);
    return false;
}

static bool under_nominal_frs(const cq_t *cq, const int *frs, size_t nfrs)
{
    for (size_t i = 0; i < nfrs; i++) {
        const qfr_t *q = sched__qfr(&cq->node, frs[i]);
        if (q->usage >= q->nominal)
            return false;
    }
    return true;
}

err_t sched__get_targets(sched_t *s, cq_t *cq, wl_t *w, const use_t *use, size_t nuse,
                         const int *frs_need, size_t nfrs_need, targets_t *out)
{
    memset(out, 0, sizeof(*out));
    if (nfrs_need == 0)
        return ERR_OK;
    if (s->cfg.fair_sharing)
        return sched__fair_targets(s, cq, w, use, nuse, frs_need, nfrs_need, out);
    pctx_t x = {s, cq, w, use, nuse, frs_need, nfrs_need, false};
    /* the lists' arrays are the engine's, kept from one search to the next */
    cands_t same = {s->pscr.lists[0], 0, s->pscr.clists[0]};
    cands_t hier = {s->pscr.lists[1], 0, s->pscr.clists[1]};
    cands_t prio = {s->pscr.lists[2], 0, s->pscr.clists[2]};
    cands_t all = {s->pscr.lists[3], 0, s->pscr.clists[3]};
    if (cq->within_cluster_queue != PREEMPT_NEVER)
        from_cq(&x, cq, NULL, false, &same);
    if (cq->node.parent != NULL && cq->reclaim_within_cohort != PREEMPT_NEVER) {
        qnano_t rem_small[8];
        qnano_t *rem = nuse <= 8 ? rem_small : calloc(nuse, sizeof(qnano_t));
        if (rem == NULL) {
            x.oom = true;
        } else {
            for (size_t i = 0; i < nuse; i++)
                rem[i] = use[i].v;
            bool adv = fit_in_quota(&cq->node, use, rem, nuse);
            /* Priority candidates without borrowWithinCohort are all ReclaimWithoutBorrowing,
             * useless when the preemptor's queue is not under nominal (its only attempt then
             * allows borrowing, which excludes them): don't collect and sort them. */
            bool want_prio = !(cq->borrow_within_cohort == PREEMPT_NEVER &&
                               !under_nominal_frs(cq, frs_need, nfrs_need));
            node_t *prev = NULL;
            for (node_t *n = cq->node.parent; n != NULL; n = n->parent) {
                if (adv || want_prio)
                    in_subtree(&x, n, n, prev, adv, adv ? &hier : &prio);
                adv = fit_in_quota(n, use, rem, nuse) || adv;
                prev = n;
            }
            if (rem != rem_small)
                free(rem);
        }
    }
    sort_cands(&x, &same);
    sort_cands(&x, &hier);
    sort_cands(&x, &prio);
    cands_t *lists[3] = {&hier, &prio, &same};
    for (int pass = 0; pass < 2 && !x.oom; pass++) {
        for (int l = 0; l < 3; l++) {
            for (size_t i = 0; i < lists[l]->len; i++) {
                cand_t *c = &lists[l]->items[i];
                bool ev = c->w->state == SCHED_WL_EVICTING;
                if ((pass == 0) == ev)
                    cands_add(&x, &all, c->w, c->lca, c->v);
            }
        }
    }
    bool forbidden = cq->borrow_within_cohort == PREEMPT_NEVER;
    bool attempts[2];
    size_t nattempts;
    if ((hier.len == 0 && prio.len == 0) ||
        (forbidden && !under_nominal_frs(cq, frs_need, nfrs_need))) {
        attempts[0] = true;
        nattempts = 1;
    } else if (forbidden && hier.len == 0) {
        attempts[0] = false;
        attempts[1] = true;
        nattempts = 2;
    } else {
        attempts[0] = true;
        attempts[1] = false;
        nattempts = 2;
    }
    for (size_t a = 0; a < nattempts && !x.oom; a++)
        if (minimal(&x, &all, attempts[a], out))
            break;
    cands_t *keep[4] = {&same, &hier, &prio, &all};
    for (int i = 0; i < 4; i++) {
        s->pscr.lists[i] = keep[i]->items;
        s->pscr.clists[i] = keep[i]->cap;
    }
    if (x.oom) {
        sched__targets_fini(out);
        return ERR_NOMEM;
    }
    return ERR_OK;
}

void sched__memo_drop(sched_t *s)
{
    s->memo.valid = false;
    s->memo.len = 0;
}

bool sched__memo_take(sched_t *s, const cq_t *cq, const wl_t *w, const use_t *use, size_t nuse,
                      const int *frs, size_t nfrs, targets_t *out)
{
    bool hit = s->memo.valid && s->memo.cq == cq && s->memo.w == w && nuse == 1 && nfrs == 1 &&
               use[0].fr == s->memo.use.fr && use[0].v == s->memo.use.v && frs[0] == use[0].fr;
    if (hit) {
        out->len = 0;
        if (s->memo.len > 0) {
            out->items = malloc(s->memo.len * sizeof(target_t));
            if (out->items == NULL) {
                hit = false;
            } else {
                memcpy(out->items, s->memo.items, s->memo.len * sizeof(target_t));
                out->len = out->cap = s->memo.len;
                out->nhold = 0;
                for (size_t i = 0; i < out->len; i++)
                    out->nhold += holds_back(&out->items[i]);
            }
        }
    }
    sched__memo_drop(s);
    return hit;
}

/* Kueue's preemption oracle, used by the flavor assigner for one (flavor, resource). */
pmode_t sched__simulate_preemption(sched_t *s, cq_t *cq, wl_t *w, int fr, qnano_t val,
                                   int *borrow_after)
{
    use_t one = {fr, val};
    int frs[1] = {fr};
    targets_t t;
    *borrow_after = 0;
    sched__memo_drop(s);
    if (sched__get_targets(s, cq, w, &one, 1, frs, 1, &t) != ERR_OK) {
        sched__targets_fini(&t);
        return PM_NO_CANDIDATES;
    }
    /* remember the answer for the targets search of this nomination */
    if (util_grow((void **)&s->memo.items, &s->memo.cap, t.len ? t.len : 1, sizeof(target_t)) ==
        ERR_OK) {
        if (t.len)
            memcpy(s->memo.items, t.items, t.len * sizeof(target_t));
        s->memo.len = t.len;
        s->memo.valid = true;
        s->memo.cq = cq;
        s->memo.w = w;
        s->memo.use = one;
    }
    if (t.len == 0) {
        sched__targets_fini(&t);
        return PM_NO_CANDIDATES;
    }
    bool all_other = true;
    for (size_t i = 0; i < t.len; i++) {
        if (t.items[i].w->acq == cq)
            all_other = false;
        sched__wl_usage_apply(t.items[i].w, -1);
    }
    bool mr;
    *borrow_after = sched__lowest_fit_height(&cq->node, fr, val, &mr);
    for (size_t i = 0; i < t.len; i++)
        sched__wl_usage_apply(t.items[i].w, +1);
    sched__targets_fini(&t);
    return all_other ? PM_RECLAIM : PM_PREEMPT;
}
