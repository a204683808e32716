/* sched cycle -- one scheduling cycle: expiry, stop policies, heads, nominate, order, admit. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "sched/sched_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * One call of sched_cycle() runs Kueue's scheduler.schedule() (reference §4.1, §4.6) and, when
 * that cycle decides nothing but left BestEffortFIFO queues with untried workloads behind a
 * parked head, runs it again, so that "a cycle appended nothing" means "quiescent". Kueue does
 * the same by looping forever; a virtual-time driver needs the stop condition.
 *
 * Kueue works on a snapshot per cycle. Here the live tree is the snapshot: nominations are all
 * computed before any entry is processed, admissions are applied at once ("assume"), and the
 * cycle-local simulations (preemptors' usage and reservations added on top of their victims,
 * which keep their quota until they have stopped) are undone when the cycle ends. The tree state is
 * a pure function of the ClusterQueues' usage, so the undo order does not matter.
 */

/* ---- decisions ---------------------------------------------------------------------------------
 */

void sched_decisions_init(sched_decisions_t *d)
{
    memset(d, 0, sizeof(*d));
}

static void decision_fini(sched_decision_t *x)
{
    free(x->workload);
    free(x->cluster_queue);
    sched__admission_fini(&x->admission);
    free(x->preemptor);
    free(x->reason_str);
    free(x->message);
    free(x->node);
    strv_free(x->checks, x->nchecks);
    memset(x, 0, sizeof(*x));
}

void sched_decisions_clear(sched_decisions_t *d)
{
    if (d == NULL)
        return;
    for (size_t i = 0; i < d->len; i++)
        decision_fini(&d->items[i]);
    d->len = 0;
}

void sched_decisions_fini(sched_decisions_t *d)
{
    if (d == NULL)
        return;
    sched_decisions_clear(d);
    free(d->items);
    memset(d, 0, sizeof(*d));
}

const char *sched_preempt_reason_str(sched_preempt_reason_t r)
{
    switch (r) {
    case SCHED_PREEMPT_IN_CLUSTER_QUEUE:
        return "InClusterQueue";
    case SCHED_PREEMPT_IN_COHORT_RECLAMATION:
        return "InCohortReclamation";
    case SCHED_PREEMPT_IN_COHORT_FAIR_SHARING:
        return "InCohortFairSharing";
    case SCHED_PREEMPT_IN_COHORT_RECLAIM_WHILE_BORROWING:
        return "InCohortReclaimWhileBorrowing";
    default:
        return "";
    }
}

/*
 * A decision is built aside (decision_make), room is made for it in `out` (decision_room) before
 * the engine's state changes, and it is appended last (decision_push, which cannot fail). So an
 * out-of-memory failure never leaves half a decision in `out`, and every decision in it matches a
 * change already made to the engine: a caller may apply the decisions of a failed cycle.
 */
static err_t decision_make(sched_decision_t *d, sched_decision_kind_t kind, const wl_t *w,
                           const char *cq, int64_t now)
{
    memset(d, 0, sizeof(*d));
    d->kind = kind;
    d->time = now;
    d->workload = strdup(w->key);
    d->cluster_queue = strdup(cq ? cq : "");
    return d->workload && d->cluster_queue ? ERR_OK : ERR_NOMEM;
}

static err_t decision_room(sched_decisions_t *out)
{
    return util_grow((void **)&out->items, &out->cap, out->len + 1, sizeof(sched_decision_t));
}

static void decision_push(sched_decisions_t *out, sched_decision_t *d)
{
    out->items[out->len++] = *d;
    memset(d, 0, sizeof(*d));
}

/* Give decision `d` its reason and message (owned); false when either ran out of memory. */
static bool decision_text(sched_decision_t *d, char *reason, char *message)
{
    d->reason_str = reason;
    d->message = message;
    return reason != NULL && message != NULL;
}

static const char *path_of(const node_t *n, char *buf, size_t cap)
{
    const node_t *chain[64];
    size_t k = 0;
    for (; n != NULL && k < 64; n = n->parent)
        chain[k++] = n;
    size_t off = 0;
    buf[0] = '\0';
    while (k-- > 0 && off < cap) {
        int r = snprintf(buf + off, cap - off, "/%s", chain[k]->name);
        if (r < 0)
            break;
        off += (size_t)r;
    }
    return buf;
}

/* ---- time-based events and stop policies ------------------------------------------------------
 */

static int64_t deadline_of(const wl_t *w)
{
    return w->exec_since + w->max_exec_ms - w->accumulated_ms;
}

int64_t sched_next_deadline(const sched_t *s, int64_t now)
{
    int64_t best = INT64_MAX;
    for (size_t i = 0; i < s->expiring.len; i++) {
        const wl_t *w = s->expiring.items[i];
        if (w->state != SCHED_WL_ADMITTED || w->awaiting_checks)
            continue;
        int64_t d = deadline_of(w);
        if (d <= now)
            d = now + 1 > now ? now + 1 : now; /* already due: the next cycle handles it */
        if (d < best)
            best = d;
    }
    return best;
}

static err_t expire(sched_t *s, int64_t now, sched_decisions_t *out)
{
    for (size_t i = 0; i < s->expiring.len;) {
        wl_t *w = s->expiring.items[i];
        if (w->state != SCHED_WL_ADMITTED || w->awaiting_checks || deadline_of(w) > now) {
            i++;
            continue;
        }
        sched_decision_t d = {0};
        if (decision_room(out) != ERR_OK ||
            decision_make(&d, SCHED_DECISION_DEACTIVATE, w, w->acq->name, now) != ERR_OK ||
            !decision_text(&d, strdup("MaximumExecutionTimeExceeded"),
                           util_asprintf("exceeding the maximum execution time of %lld seconds",
                                         (long long)(w->max_exec_ms / 1000)))) {
            decision_fini(&d);
            return ERR_NOMEM;
        }
        decision_push(out, &d);
        sched__wl_release(s, w, now); /* removes it from s->expiring */
        w->accumulated_ms = 0;        /* Kueue resets accumulatedPast on deactivation */
        w->state = SCHED_WL_DEACTIVATED;
        w->deact_by_engine = true;
        w->seen_inactive = false;
        sched__wl_set_reason(w, SCHED_REASON_DEACTIVATED,
                             "The workload is deactivated: maximum execution time exceeded");
    }
    return ERR_OK;
}

static err_t drain(sched_t *s, int64_t now, sched_decisions_t *out)
{
    bool any_lq = false;
    for (size_t i = 0; i < s->nlqs; i++)
        if (s->lqs[i]->stop_policy == STOP_POLICY_HOLD_AND_DRAIN)
            any_lq = true;
    for (size_t c = 0; c < s->ncqs; c++) {
        cq_t *cq = s->cqs[c];
        bool cq_drain = cq->exists && cq->stop_policy == STOP_POLICY_HOLD_AND_DRAIN;
        if (!cq_drain && !any_lq)
            continue;
        for (size_t i = 0; i < cq->admitted.len; i++) {
            wl_t *w = cq->admitted.items[i];
            if (w->state != SCHED_WL_ADMITTED)
                continue;
            const lq_t *lq = sched__lq_of(s, w);
            bool lq_drain = lq != NULL && lq->stop_policy == STOP_POLICY_HOLD_AND_DRAIN;
            if (!cq_drain && !lq_drain)
                continue;
            sched_decision_t d = {0};
            if (decision_room(out) != ERR_OK ||
                decision_make(&d, SCHED_DECISION_EVICT, w, cq->name, now) != ERR_OK ||
                !decision_text(&d, strdup(cq_drain ? "ClusterQueueStopped" : "LocalQueueStopped"),
                               strdup(cq_drain ? "The ClusterQueue is stopped"
                                               : "The LocalQueue is stopped"))) {
                decision_fini(&d);
                return ERR_NOMEM;
            }
            decision_push(out, &d);
            w->state = SCHED_WL_EVICTING;
        }
    }
    return ERR_OK;
}

/* Kueue's second pass after a node failure (replace.c): every admitted workload with an
 * unhealthy node gets a REPLACE decision (new topology assignment) or an EVICT one
 * (NodeFailures), in the order the failures were reported. */
static err_t replace_pass(sched_t *s, int64_t now, sched_decisions_t *out)
{
    while (s->nrepl > 0) {
        char *key = s->repl[0];
        wl_t *w = util_hmap_get(&s->wl_map, key);
        sched_decision_t d = {0};
        admission_t next;
        size_t base;
        bool ok;
        char *message;
        if (w != NULL && (w->state != SCHED_WL_ADMITTED || w->awaiting_checks))
            sched__wl_unhealthy_clear(w); /* evicted, finished or deactivated meanwhile */
        if (w != NULL && sched__wl_nunhealthy(w) > 0) {
            if (decision_room(out) != ERR_OK ||
                sched__replace_plan(s, w, &ok, &next, &base, &message) != ERR_OK)
                return ERR_NOMEM;
            if (decision_make(&d, ok ? SCHED_DECISION_REPLACE : SCHED_DECISION_EVICT, w,
                              w->acq->name, now) != ERR_OK ||
                !decision_text(
                    &d, strdup(ok ? "NodeReplaced" : "NodeFailures"),
                    ok ? util_asprintf("Replaced unhealthy node %s", w->rare->unhealthy[0])
                       : message) ||
                (ok && (sched__admission_copy(&d.admission, &next) != ERR_OK ||
                        (d.node = strdup(w->rare->unhealthy[0])) == NULL))) {
                if (ok)
                    sched__replace_undo(s, w, &next, base);
                else if (d.message != message)
                    free(message);
                decision_fini(&d);
                return ERR_NOMEM;
            }
            decision_push(out, &d);
            if (ok) {
                sched__replace_commit(s, w, &next);
            } else {
                w->state = SCHED_WL_EVICTING;
                sched__wl_unhealthy_clear(w); /* Kueue resets status.unhealthyNodes on eviction */
            }
        }
        memmove(&s->repl[0], &s->repl[1], (s->nrepl - 1) * sizeof(char *));
        s->nrepl--;
        free(key);
    }
    return ERR_OK;
}

static err_t requeue_tree(node_t *n)
{
    if (n->is_cq)
        return sched__queue_requeue_all(container_of(n, cq_t, node));
    for (size_t i = 0; i < n->nchildren; i++)
        if (requeue_tree(n->children[i]) != ERR_OK)
            return ERR_NOMEM;
    return ERR_OK;
}

static err_t requeue(sched_t *s)
{
    if (s->tree_dirty && sched__tree_rebuild(s) != ERR_OK)
        return ERR_NOMEM;
    if (s->queues_dirty && sched__requeue_pending(s) != ERR_OK)
        return ERR_NOMEM;
    if (s->requeue_all) {
        for (size_t i = 0; i < s->ncqs; i++)
            if (sched__queue_requeue_all(s->cqs[i]) != ERR_OK)
                return ERR_NOMEM;
    } else {
        for (size_t i = 0; i < s->nrequeue; i++)
            if (requeue_tree(s->requeue_roots[i]) != ERR_OK)
                return ERR_NOMEM;
    }
    s->requeue_all = false;
    s->nrequeue = 0;
    return ERR_OK;
}

/* ---- nomination
 * ---------------------------------------------------------------------------------- */

static err_t save_progress(wl_t *w, const cq_t *cq, const assignment_t *a)
{
    size_t n = w->nps * cq->ngroups;
    if (w->nlast_tried != n) {
        int *p = realloc(w->last_tried, (n ? n : 1) * sizeof(int));
        if (p == NULL)
            return ERR_NOMEM;
        w->last_tried = p;
        w->nlast_tried = n;
    }
    for (size_t i = 0; i < w->nps; i++)
        for (size_t g = 0; g < cq->ngroups; g++)
            w->last_tried[i * cq->ngroups + g] = i < a->nps ? a->ps[i].tried[g] : SCHED__NONE;
    w->last_gen = cq->alloc_gen + 1;
    return ERR_OK;
}

static err_t frs_needing(const assignment_t *a, int **out, size_t *n)
{
    int *frs = NULL;
    size_t len = 0, cap = 0;
    for (size_t i = 0; i < a->nps; i++) {
        const ps_assign_t *p = &a->ps[i];
        for (size_t k = 0; k < p->nreqs; k++) {
            if (p->fr[k] == SCHED__NONE || p->mode[k] == PM_FIT)
                continue;
            bool dup = false;
            for (size_t j = 0; j < len; j++)
                dup = dup || frs[j] == p->fr[k];
            if (dup)
                continue;
            if (util_grow((void **)&frs, &cap, len + 1, sizeof(int)) != ERR_OK) {
                free(frs);
                return ERR_NOMEM;
            }
            frs[len++] = p->fr[k];
        }
    }
    *out = frs;
    *n = len;
    return ERR_OK;
}

static err_t targets_for(sched_t *s, cq_t *cq, wl_t *w, const assignment_t *a, targets_t *t)
{
    int *frs = NULL;
    size_t n = 0;
    memset(t, 0, sizeof(*t));
    if (a->mode != AM_PREEMPT)
        return ERR_OK;
    if (frs_needing(a, &frs, &n) != ERR_OK)
        return ERR_NOMEM;
    if (a->tas) {
        /* topology-aware: every fit check of the search also places the TAS pod sets (the
         * oracle's memo answered for the quota alone) */
        tas_pre_t tp = {.cq = cq, .w = w, .a = a};
        sched__memo_drop(s);
        s->tas_pre = &tp;
        err_t rc = sched__get_targets(s, cq, w, a->use, a->nuse, frs, n, t);
        s->tas_pre = NULL;
        sched__tas_pre_fini(&tp);
        free(frs);
        return rc;
    }
    if (sched__memo_take(s, cq, w, a->use, a->nuse, frs, n, t)) {
        free(frs);
        return ERR_OK;
    }
    err_t rc = sched__get_targets(s, cq, w, a->use, a->nuse, frs, n, t);
    free(frs);
    return rc;
}

static bool admissible(const assignment_t *a, const targets_t *t)
{
    return a->mode == AM_FIT || (a->mode == AM_PREEMPT && t->len > 0);
}

/* Partial admission (reference §3.8, Kueue podset_reducer): the smallest k in [0, totalDelta]
 * whose counts full_i - floor(delta_i * k / totalDelta) fit or preempt with targets. */
static err_t partial(sched_t *s, entry_t *e)
{
    wl_t *w = e->w;
    int64_t total = 0;
    for (size_t i = 0; i < w->nps; i++)
        if (w->ps[i].has_min && w->ps[i].min_count < w->ps[i].count)
            total += w->ps[i].count - w->ps[i].min_count;
    if (total == 0)
        return ERR_OK;
    int32_t *counts = calloc(w->nps, sizeof(int32_t));
    if (counts == NULL)
        return ERR_NOMEM;
    int64_t lo = 0, hi = total + 1; /* search smallest k with fits(k); hi = none */
    assignment_t best_a;
    targets_t best_t;
    memset(&best_a, 0, sizeof(best_a));
    memset(&best_t, 0, sizeof(best_t));
    bool found = false;
    err_t rc = ERR_OK;
    while (lo < hi && rc == ERR_OK) {
        int64_t k = lo + (hi - lo) / 2;
        for (size_t i = 0; i < w->nps; i++) {
            int64_t delta = w->ps[i].has_min ? w->ps[i].count - w->ps[i].min_count : 0;
            if (delta < 0)
                delta = 0;
            counts[i] = (int32_t)(w->ps[i].count - (delta * k) / total);
        }
        assignment_t a;
        targets_t t;
        rc = sched__assign(s, e->cq, w, counts, NULL, &a);
        if (rc != ERR_OK)
            break;
        rc = targets_for(s, e->cq, w, &a, &t);
        if (rc != ERR_OK) {
            sched__assignment_fini(&a);
            break;
        }
        if (admissible(&a, &t)) {
            sched__assignment_fini(&best_a);
            sched__targets_fini(&best_t);
            best_a = a;
            best_t = t;
            found = true;
            hi = k;
        } else {
            sched__assignment_fini(&a);
            sched__targets_fini(&t);
            lo = k + 1;
        }
    }
    free(counts);
    if (rc == ERR_OK && found) {
        sched__assignment_fini(&e->a);
        sched__targets_fini(&e->t);
        e->a = best_a;
        e->t = best_t;
    } else {
        sched__assignment_fini(&best_a);
        sched__targets_fini(&best_t);
    }
    return rc;
}

static err_t nominate(sched_t *s, entry_t *e)
{
    sched__memo_drop(s);
    wl_t *w = e->w;
    cq_t *cq = e->cq;
    const ns_rec_t *ns = util_hmap_get(&s->ns_map, w->ns);
    static const kv_list_t no_labels;
    if (!sched__label_selector_matches(&cq->ns_selector, ns ? &ns->labels : &no_labels)) {
        sched__wl_set_reason(w, SCHED_REASON_MISCONFIGURED,
                             "workload namespace doesn't match ClusterQueue selector");
        e->ns_mismatch = true;
        return ERR_OK;
    }
    if (sched__wl_pin_cq(w) == cq) {
        /* A preemptor whose preemptions were issued takes the assignment it preempted for
         * (same counts, same flavors) while that assignment fits or still preempts: admitting
         * it with more pods or a borrowing flavor once its victims are gone would put its
         * ClusterQueue over nominal, where its own victims may reclaim from it (a loop). */
        if (sched__assign(s, cq, w, w->rare->pin_counts, w->rare->pin_flavors, &e->a) != ERR_OK)
            return ERR_NOMEM;
        if (targets_for(s, cq, w, &e->a, &e->t) != ERR_OK)
            return ERR_NOMEM;
        if (admissible(&e->a, &e->t)) {
            e->nominated = true;
            return ERR_OK;
        }
        sched__assignment_fini(&e->a);
        sched__targets_fini(&e->t);
        sched__wl_pin_clear(w);
    }
    if (sched__assign(s, cq, w, NULL, NULL, &e->a) != ERR_OK)
        return ERR_NOMEM;
    if (save_progress(w, cq, &e->a) != ERR_OK)
        return ERR_NOMEM;
    if (targets_for(s, cq, w, &e->a, &e->t) != ERR_OK)
        return ERR_NOMEM;
    if (!admissible(&e->a, &e->t) && partial(s, e) != ERR_OK)
        return ERR_NOMEM;
    e->nominated = true;
    return ERR_OK;
}

/* ---- ordering
 * ------------------------------------------------------------------------------------ */

/* Classical order (§4.5): preemptors whose victims are gone first (Kueue's alpha feature gate
 * PrioritizePreemptorWorkloads, on in sluice: without it a victim released at once can retake the
 * freed quota before its preemptor and the pair preempts forever), then lower borrowing level,
 * higher priority, earlier timestamp, key. */
static int entry_cmp(const void *pa, const void *pb, const void *ctx)
{
    const entry_t *a = *(entry_t *const *)pa, *b = *(entry_t *const *)pb;
    (void)ctx;
    bool pa_ = sched__wl_pin_cq(a->w) == a->cq, pb_ = sched__wl_pin_cq(b->w) == b->cq;
    if (pa_ != pb_)
        return pa_ ? -1 : 1;
    int ba = a->nominated ? a->a.borrow : 0, bb = b->nominated ? b->a.borrow : 0;
    if (ba != bb)
        return ba < bb ? -1 : 1;
    return sched__wl_cmp(a->w, b->w);
}

/* ---- processing
 * ---------------------------------------------------------------------------------- */

typedef struct cyc_s {
    sched_t *s;
    int64_t now;
    sched_decisions_t *out;
    wlvec_t victims; /* targets of this cycle's preemptions: marked; they keep their quota */
    struct {
        cq_t *cq;
        use_t *use;
        size_t nuse;
    } * added; /* preemptor usage / reservations added for the rest of the cycle */
    size_t nadded, cadded;
    bool progress;
} cyc_t;

static err_t add_cycle_usage(cyc_t *c, cq_t *cq, const use_t *use, size_t nuse)
{
    if (util_grow((void **)&c->added, &c->cadded, c->nadded + 1, sizeof(*c->added)) != ERR_OK)
        return ERR_NOMEM;
    use_t *copy = malloc((nuse ? nuse : 1) * sizeof(use_t));
    if (copy == NULL)
        return ERR_NOMEM;
    if (nuse)
        memcpy(copy, use, nuse * sizeof(use_t));
    for (size_t i = 0; i < nuse; i++)
        sched__usage_add(&cq->node, use[i].fr, use[i].v);
    c->added[c->nadded].cq = cq;
    c->added[c->nadded].use = copy;
    c->added[c->nadded].nuse = nuse;
    c->nadded++;
    return ERR_OK;
}

static void cycle_undo(cyc_t *c)
{
    for (size_t i = 0; i < c->victims.len; i++)
        c->victims.items[i]->mark = 0;
    sched__wlvec_fini(&c->victims);
    for (size_t i = 0; i < c->nadded; i++) {
        for (size_t k = 0; k < c->added[i].nuse; k++)
            sched__usage_remove(&c->added[i].cq->node, c->added[i].use[k].fr, c->added[i].use[k].v);
        free(c->added[i].use);
    }
    free(c->added);
    c->added = NULL;
    c->nadded = c->cadded = 0;
}

static bool same_shape(const wl_t *a, const wl_t *b)
{
    if (a->shape != b->shape || a->priority != b->priority || a->nps != b->nps)
        return false;
    for (size_t i = 0; i < a->nps; i++) {
        const wps_t *x = &a->ps[i], *y = &b->ps[i];
        if (x->count != y->count || x->nreqs != y->nreqs || x->has_min != y->has_min ||
            (x->has_min && x->min_count != y->min_count))
            return false;
        for (size_t r = 0; r < x->nreqs; r++)
            if (x->reqs[r].res != y->reqs[r].res || x->reqs[r].per_pod != y->reqs[r].per_pod)
                return false;
    }
    return true;
}

/* Failed attempt. `immediate`: Kueue's FailedAfterNomination / PendingPreemption reasons. */
static err_t requeue_entry(cyc_t *c, entry_t *e, bool immediate, bool equivalence)
{
    wl_t *w = e->w;
    cq_t *cq = e->cq;
    bool park;
    if (e->ns_mismatch)
        park = true;
    else if (immediate || cq->queueing == QUEUEING_STRICT_FIFO)
        park = false;
    else
        park = !(e->nominated && e->a.pending_flavors);
    if (!park) {
        if (!immediate && cq->queueing == QUEUEING_BEST_EFFORT_FIFO)
            c->progress = true; /* untried flavors remain */
        return sched__queue_push(cq, w);
    }
    if (sched__queue_park(cq, w) != ERR_OK)
        return ERR_NOMEM;
    if (equivalence && cq->queueing == QUEUEING_BEST_EFFORT_FIFO) {
        /* SchedulingEquivalenceHashing: identical workloads would fail the same way. One pass
         * parks them all and the heap is rebuilt once (removing them one by one and rescanning
         * from the top was quadratic in the heap); the heap's order is total, so which head
         * comes next does not depend on its layout. */
        if (util_grow((void **)&cq->inadm.items, &cq->inadm.cap, cq->inadm.len + cq->heap.len,
                      sizeof(wl_t *)) != ERR_OK)
            return ERR_NOMEM;
        size_t kept = 0;
        for (size_t i = 0; i < cq->heap.len; i++) {
            wl_t *o = cq->heap.items[i];
            if (o != cq->sticky && same_shape(o, w)) {
                o->where = WQ_INADM;
                o->qidx = cq->inadm.len;
                cq->inadm.items[cq->inadm.len++] = o;
                sched__wl_share_reason(o, w->reason, w->message);
            } else {
                cq->heap.items[kept++] = o;
            }
        }
        if (kept < cq->heap.len) {
            cq->heap.len = kept;
            sched__queue_rebuild_heap(cq);
        }
    }
    if (cq->heap.len > 0)
        c->progress = true;
    return ERR_OK;
}

static bool overlaps(const targets_t *t)
{
    for (size_t i = 0; i < t->len; i++)
        if (t->items[i].w->mark)
            return true;
    return false;
}

static err_t admit(cyc_t *c, entry_t *e)
{
    sched_t *s = c->s;
    wl_t *w = e->w;
    cq_t *cq = e->cq;
    admission_t adm;
    sched_decision_t dec = {0};
    use_t *use = NULL;
    char **checks = NULL;
    size_t nchecks = 0;
    memset(&adm, 0, sizeof(adm));
    adm.cluster_queue = strdup(cq->name);
    adm.assignments = calloc(e->a.nps ? e->a.nps : 1, sizeof(pod_set_assignment_t));
    if (adm.cluster_queue == NULL || adm.assignments == NULL)
        goto nomem;
    adm.nassignments = e->a.nps;
    for (size_t i = 0; i < e->a.nps; i++) {
        const ps_assign_t *p = &e->a.ps[i];
        pod_set_assignment_t *d = &adm.assignments[i];
        d->name = strdup(w->ps[i].name);
        d->has_count = true;
        d->count = p->count;
        d->flavors.items = calloc(p->nreqs ? p->nreqs : 1, sizeof(kv_t));
        d->usage.items = calloc(p->nreqs ? p->nreqs : 1, sizeof(resource_t));
        if (d->name == NULL || d->flavors.items == NULL || d->usage.items == NULL)
            goto nomem;
        for (size_t k = 0; k < p->nreqs; k++) {
            const char *res = s->res_names[p->res[k]];
            resource_t *u = &d->usage.items[d->usage.len];
            u->name = strdup(res);
            if (u->name == NULL)
                goto nomem;
            u->value.nano = p->total[k];
            u->value.format = QUANTITY_DECIMAL_SI;
            d->usage.len++;
            if (p->flavor[k] == SCHED__NONE)
                continue;
            kv_t *kv = &d->flavors.items[d->flavors.len];
            kv->key = strdup(res);
            kv->value = strdup(s->flavors[p->flavor[k]]->name);
            d->flavors.len++;
            if (kv->key == NULL || kv->value == NULL)
                goto nomem;
        }
        if (p->topo != NULL && topology_assignment_dup(p->topo, &d->topology) != ERR_OK)
            goto nomem;
    }
    if (decision_room(c->out) != ERR_OK ||
        decision_make(&dec, SCHED_DECISION_ADMIT, w, cq->name, c->now) != ERR_OK ||
        sched__admission_copy(&dec.admission, &adm) != ERR_OK ||
        !decision_text(&dec, strdup("QuotaReserved"),
                       util_asprintf("Quota reserved in ClusterQueue %s", cq->name)))
        goto nomem;
    dec.borrowing = e->a.borrow > 0;
    if (sched__checks_for(s, cq, &adm, &checks, &nchecks) != ERR_OK ||
        (nchecks > 0 && (dec.checks = calloc(nchecks, sizeof(char *))) == NULL))
        goto nomem;
    for (size_t i = 0; i < nchecks; i++)
        if (util_strdup(checks[i], &dec.checks[dec.nchecks++]) != ERR_OK)
            goto nomem;
    use = malloc((e->a.nuse ? e->a.nuse : 1) * sizeof(use_t));
    if (use == NULL)
        goto nomem;
    if (e->a.nuse)
        memcpy(use, e->a.use, e->a.nuse * sizeof(use_t));
    if (sched__wl_apply_admission(s, w, cq, use, e->a.nuse) != ERR_OK)
        goto nomem;
    decision_push(c->out, &dec); /* room was made above: cannot fail */
    w->admitted_at = c->now;
    w->exec_since = c->now;
    strv_free(w->checks, w->nchecks);
    w->checks = checks;
    w->nchecks = nchecks;
    w->awaiting_checks = nchecks > 0;
    sched__admission_fini(&w->adm);
    w->adm = adm;
    w->borrowing = e->a.borrow > 0;
    w->state = SCHED_WL_ADMITTED;
    w->reason = SCHED_REASON_NONE;
    sched__str_unref(w->message);
    w->message = NULL;
    if (cq->sticky == w)
        cq->sticky = NULL;
    sched__wl_pin_clear(w);
    /* admission fair sharing: the LocalQueue's usage and entry penalty (out of memory: the
     * penalty is lost, the admission stands) */
    (void)sched__afs_admitted(s, w, cq, c->now);
    return ERR_OK;
nomem:
    free(use);
    strv_free(checks, nchecks);
    decision_fini(&dec);
    sched__admission_fini(&adm);
    return ERR_NOMEM;
}

/* Remember the assignment the preemptions are issued for (see nominate). */
static err_t pin_save(entry_t *e)
{
    wl_t *w = e->w;
    cq_t *cq = e->cq;
    size_t ng = cq->ngroups;
    int32_t *counts = calloc(w->nps ? w->nps : 1, sizeof(int32_t));
    size_t nf = w->nps * ng;
    int *flavors = malloc((nf > 0 ? nf : 1) * sizeof(int));
    wl_rare_t *r;
    if (counts == NULL || flavors == NULL) {
        free(counts);
        free(flavors);
        return ERR_NOMEM;
    }
    for (size_t i = 0; i < w->nps * ng; i++)
        flavors[i] = SCHED__NONE;
    for (size_t i = 0; i < w->nps && i < e->a.nps; i++) {
        const ps_assign_t *p = &e->a.ps[i];
        counts[i] = p->count;
        for (size_t k = 0; k < p->nreqs; k++) {
            int res = p->res[k];
            if (p->flavor[k] == SCHED__NONE || res < 0 || (size_t)res >= cq->nrg_by_res ||
                cq->rg_by_res[res] == SCHED__NONE)
                continue;
            flavors[i * ng + (size_t)cq->rg_by_res[res]] = p->flavor[k];
        }
    }
    sched__wl_pin_clear(w);
    r = sched__wl_rare(w);
    if (r == NULL) {
        free(counts);
        free(flavors);
        return ERR_NOMEM;
    }
    r->pin_cq = cq;
    r->pin_counts = counts;
    r->pin_flavors = flavors;
    return ERR_OK;
}

static err_t issue_preemptions(cyc_t *c, entry_t *e)
{
    char p1[512], p2[512];
    for (size_t i = 0; i < e->t.len; i++) {
        wl_t *v = e->t.items[i].w;
        if (v->state == SCHED_WL_EVICTING)
            continue; /* already on its way out (Kueue's expectations) */
        sched_decision_t d = {0};
        sched_preempt_reason_t r = e->t.items[i].reason;
        const char *human =
            r == SCHED_PREEMPT_IN_CLUSTER_QUEUE        ? "prioritization in the ClusterQueue"
            : r == SCHED_PREEMPT_IN_COHORT_RECLAMATION ? "reclamation within the cohort"
            : r == SCHED_PREEMPT_IN_COHORT_FAIR_SHARING
                ? "Fair Sharing within the cohort"
                : "reclamation within the cohort while borrowing";
        if (decision_room(c->out) != ERR_OK ||
            decision_make(&d, SCHED_DECISION_PREEMPT, v, v->acq->name, c->now) != ERR_OK ||
            (d.preemptor = strdup(e->w->key)) == NULL ||
            !decision_text(&d, strdup(sched_preempt_reason_str(r)),
                           util_asprintf("Preempted to accommodate a workload (key: %s) due to %s; "
                                         "preemptor path: %s; preemptee path: %s",
                                         e->w->key, human, path_of(&e->cq->node, p1, sizeof(p1)),
                                         path_of(&v->acq->node, p2, sizeof(p2))))) {
            decision_fini(&d);
            return ERR_NOMEM;
        }
        d.reason = r;
        decision_push(c->out, &d);
        v->state = SCHED_WL_EVICTING;
        if (sched__wl_rare(v) != NULL) { /* out of memory: no preemptor to report, as before */
            free(v->rare->preemptor);
            v->rare->preemptor = strdup(e->w->key);
            sched__wl_rare_trim(v);
        }
    }
    return ERR_OK;
}

static err_t reserve_for(cyc_t *c, entry_t *e)
{
    cq_t *cq = e->cq;
    if (cq->reclaim_within_cohort == PREEMPT_ANY)
        return ERR_OK;
    use_t *res = malloc((e->a.nuse ? e->a.nuse : 1) * sizeof(use_t));
    if (res == NULL)
        return ERR_NOMEM;
    size_t n = 0;
    for (size_t i = 0; i < e->a.nuse; i++) {
        const qfr_t *q = sched__qfr(&cq->node, e->a.use[i].fr);
        qnano_t v = e->a.use[i].v, cap;
        if (e->a.borrow > 0)
            cap = q->has_borrowing_limit ? q->nominal + q->borrowing_limit - q->usage : v;
        else
            cap = q->nominal - q->usage;
        if (cap > v)
            cap = v;
        if (cap > 0)
            res[n++] = (use_t){e->a.use[i].fr, cap};
    }
    err_t rc = n ? add_cycle_usage(c, cq, res, n) : ERR_OK;
    free(res);
    return rc;
}

/* A TAS placement was found at nomination; workloads admitted earlier in this cycle may have
 * taken its nodes since (Kueue checks the cycle's TAS usage the same way and requeues: "Workload
 * no longer fits after processing another workload"). Places e's TAS pod sets again on the
 * nodes as they are now and keeps the new assignments; ERR_CONFLICT (e's reason set) when one
 * does not fit any more; ERR_NOMEM. Nothing to do for a workload without TAS pod sets. */
static err_t recheck_topology(cyc_t *c, entry_t *e)
{
    size_t failed;
    char *why = NULL;
    bool any = false;
    err_t rc;

    for (size_t i = 0; i < e->a.nps && !any; i++)
        any = e->a.ps[i].topo != NULL;
    if (!any)
        return ERR_OK;
    rc = sched__tas_place_all(c->s, e->cq, e->w, &e->a, false, &e->a, &failed, &why);
    if (rc != ERR_OK && rc != ERR_NOMEM) {
        sched__wl_set_reason(e->w, SCHED_REASON_TOPOLOGY_PLACEMENT_FAILED,
                             "couldn't assign flavors to pod set %s: %s", e->w->ps[failed].name,
                             why ? why : "");
        rc = ERR_CONFLICT;
    }
    free(why);
    return rc;
}

static err_t process(cyc_t *c, entry_t *e)
{
    wl_t *w = e->w;
    if (!e->nominated)
        return requeue_entry(c, e, false, false);
    if (e->a.mode == AM_NOFIT) {
        sched__wl_set_reason_str(w, e->a.reason, e->a.message);
        return requeue_entry(c, e, false, true);
    }
    if (e->a.mode == AM_PREEMPT && e->t.len == 0) {
        sched__wl_set_reason_str(w, SCHED_REASON_WAITING_FOR_QUOTA, e->a.message);
        if (reserve_for(c, e) != ERR_OK)
            return ERR_NOMEM;
        return requeue_entry(c, e, false, true);
    }
    if (overlaps(&e->t)) {
        sched__wl_set_reason(w, SCHED_REASON_WAITING_FOR_QUOTA,
                             "Workload has overlapping preemption targets with another workload");
        return requeue_entry(c, e, true, false);
    }
    /* fits re-check with this entry's targets gone (topology-aware: on the nodes too, which
     * the cycle's earlier admissions may have taken) */
    for (size_t i = 0; i < e->t.len; i++)
        sched__wl_usage_apply(e->t.items[i].w, -1);
    bool fits = sched__quota_fits(e->cq, e->a.use, e->a.nuse, true);
    if (fits && e->a.tas && e->t.len > 0) {
        tas_pre_t tp = {.cq = e->cq, .w = w, .a = &e->a};
        err_t rc = sched__tas_fits_after(c->s, &tp, &e->t, &fits);
        sched__tas_pre_fini(&tp);
        if (rc != ERR_OK) {
            for (size_t i = 0; i < e->t.len; i++)
                sched__wl_usage_apply(e->t.items[i].w, +1);
            return ERR_NOMEM;
        }
    }
    if (!fits) {
        for (size_t i = 0; i < e->t.len; i++)
            sched__wl_usage_apply(e->t.items[i].w, +1);
        sched__wl_set_reason(w, SCHED_REASON_WAITING_FOR_QUOTA,
                             "Workload no longer fits after processing another workload");
        return requeue_entry(c, e, true, false);
    }
    /* The victims run until the driver reports them evicted: they keep their quota for the rest
     * of the cycle, and the preemptor's usage is reserved on top, so that no later entry is
     * admitted into capacity that is still in use (Kueue lets later entries use it at once,
     * which overcommits quota until the victims have stopped). */
    for (size_t i = 0; i < e->t.len; i++)
        sched__wl_usage_apply(e->t.items[i].w, +1);
    for (size_t i = 0; i < e->t.len; i++) {
        if (sched__wlvec_push(&c->victims, e->t.items[i].w) != ERR_OK)
            return ERR_NOMEM;
        e->t.items[i].w->mark = 1;
    }
    if (e->a.mode == AM_PREEMPT) {
        if (add_cycle_usage(c, e->cq, e->a.use, e->a.nuse) != ERR_OK ||
            issue_preemptions(c, e) != ERR_OK || pin_save(e) != ERR_OK)
            return ERR_NOMEM;
        sched__wl_set_reason(w, SCHED_REASON_WAITING_FOR_PREEMPTED,
                             "%s. Pending the preemption of %zu workload(s)",
                             e->a.message ? e->a.message : "", e->t.len);
        /* The preemptor stays its queue's head until admitted under BestEffortFIFO, as in
         * Kueue (sticky workloads: BestEffortFIFO only). Under StrictFIFO only with the loop
         * guard strict-fifo-sticky: without it a higher-priority workload requeued into the
         * queue, e.g. a victim of a reclamation, may take the capacity these preemptions free,
         * and the preemptor preempts again (docs/engine.md, "Loops", cause 5). */
        if (e->cq->queueing == QUEUEING_BEST_EFFORT_FIFO ||
            (c->s->cfg.loop_guards & SCHED_GUARD_STRICT_FIFO_STICKY)) {
            e->cq->sticky = w;
            w->was_sticky = true; /* sched_workload_delete / _finish look for it */
        }
        return requeue_entry(c, e, true, false);
    }
    switch (recheck_topology(c, e)) {
    case ERR_OK:
        break;
    case ERR_CONFLICT:
        return requeue_entry(c, e, true, false);
    default:
        return ERR_NOMEM;
    }
    if (sched__nodes_known(c->s)) {
        /* Where its pods go: with fragmentation-aware admission all must fit free node capacity
         * of its flavors or it waits; without, those that fit are placed (the rest would sit
         * Pending), so that the capacity in use stays known. */
        bool placed;
        char *why = NULL;
        if (sched__nodes_place(c->s, w, &e->a, c->s->cfg.node_fit, &placed, &why) != ERR_OK)
            return ERR_NOMEM;
        if (!placed) {
            sched__wl_set_reason(w, SCHED_REASON_NO_FITTING_NODE, "%s",
                                 why ? why : "couldn't place its pods on nodes");
            free(why);
            return requeue_entry(c, e, false, true);
        }
    }
    if (admit(c, e) != ERR_OK) {
        sched__nodes_unplace(c->s, w);
        return ERR_NOMEM;
    }
    return ERR_OK;
}

/* ---- the cycle ---------------------------------------------------------------------------------
 */

static err_t one_cycle(sched_t *s, int64_t now, sched_decisions_t *out, bool *progress)
{
    entry_t *es = NULL;
    size_t n = 0, out_before = out->len;
    err_t rc = ERR_OK;
    s->cycle_no++;
    /* admission fair sharing: samples due, LocalQueue scores, heaps re-ordered (afs.c) */
    if (sched__afs_prepare(s, now) != ERR_OK)
        return ERR_NOMEM;
    if (util_grow((void **)&s->cyc_es, &s->ccyc_es, s->ncqs ? s->ncqs : 1, sizeof(entry_t)) !=
        ERR_OK)
        return ERR_NOMEM;
    es = s->cyc_es;
    for (size_t i = 0; i < s->ncqs; i++) {
        cq_t *cq = s->cqs[i];
        if (!cq->exists || !cq->active)
            continue;
        wl_t *w = sched__queue_pop(cq);
        if (w == NULL)
            continue;
        es[n++] = (entry_t){.w = w, .cq = cq};
    }
    for (size_t i = 0; i < n && rc == ERR_OK; i++)
        rc = nominate(s, &es[i]);
    cyc_t c = {.s = s, .now = now, .out = out};
    if (rc == ERR_OK) {
        if (s->cfg.fair_sharing) {
            for (size_t k = 0; k < n && rc == ERR_OK; k++) {
                size_t i = sched__fair_next(s, es, n);
                es[i].done = true;
                rc = process(&c, &es[i]);
            }
        } else {
            /* sort pointers: entries are large */
            entry_t **order = malloc((n ? n : 1) * sizeof(entry_t *));
            if (order == NULL)
                rc = ERR_NOMEM;
            for (size_t i = 0; i < n && rc == ERR_OK; i++)
                order[i] = &es[i];
            if (rc == ERR_OK)
                rc = sched__sort(order, n, sizeof(entry_t *), entry_cmp, NULL);
            for (size_t i = 0; i < n && rc == ERR_OK; i++) {
                order[i]->done = true;
                rc = process(&c, order[i]);
            }
            free(order);
        }
    }
    /* On OOM, put back every head still pending and out of its queue: those not processed and
     * the one whose processing failed mid-way (a head left out would never be looked at again). */
    for (size_t i = 0; i < n; i++) {
        if (rc != ERR_OK && es[i].w->where == WQ_NONE && es[i].w->state == SCHED_WL_PENDING)
            sched__queue_push(es[i].cq, es[i].w);
        sched__assignment_fini(&es[i].a);
        sched__targets_fini(&es[i].t);
    }
    cycle_undo(&c);
    *progress = c.progress;
    if (n > 0) {
        bool admitted = false;
        for (size_t i = out_before; i < out->len && !admitted; i++)
            admitted = out->items[i].kind == SCHED_DECISION_ADMIT;
        s->attempts.tried++;
        s->attempts.admitted += admitted;
    }
    return rc;
}

void sched_attempts(const sched_t *s, sched_attempts_t *out)
{
    *out = s->attempts;
}

err_t sched_cycle(sched_t *s, int64_t now, sched_decisions_t *out, err_msg_t *msg)
{
    s->now = now;
    size_t before = out->len;
    if (requeue(s) != ERR_OK || expire(s, now, out) != ERR_OK || drain(s, now, out) != ERR_OK ||
        replace_pass(s, now, out) != ERR_OK)
        return err_set(msg, ERR_NOMEM, "scheduling cycle: out of memory");
    if (requeue(s) != ERR_OK) /* deactivations free quota */
        return err_set(msg, ERR_NOMEM, "scheduling cycle: out of memory");
    for (;;) {
        bool progress = false;
        if (one_cycle(s, now, out, &progress) != ERR_OK)
            return err_set(msg, ERR_NOMEM, "scheduling cycle: out of memory");
        if (out->len > before || !progress)
            break;
    }
    return ERR_OK;
}
