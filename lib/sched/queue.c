/* sched queue -- per-ClusterQueue pending heaps, inadmissible sets and admitted lists. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "sched/sched_int.h"

#include <stdlib.h>
#include <string.h>

/*
 * Queue order (Kueue's baseCompareFunc with PrioritySortingWithinCohort): higher effective
 * priority first, then earlier queue-order timestamp (creation time), then the caller's sequence
 * number (sched_wl_opts_t.seq: document order in the simulator), then the workload key.
 * Kueue breaks the last tie by UID; the key is our stable, documented substitute.
 */
int sched__wl_cmp(const wl_t *a, const wl_t *b)
{
    if (a->priority != b->priority)
        return a->priority > b->priority ? -1 : 1;
    if (a->created != b->created)
        return a->created < b->created ? -1 : 1;
    if (a->seq != b->seq)
        return a->seq < b->seq ? -1 : 1;
    return strcmp(a->key, b->key);
}

/*
 * A ClusterQueue's heap order. With admission fair sharing (afs.c) Kueue's queueOrderingFunc
 * puts the LocalQueue usage first: lower weighted usage / weight first, then the order above.
 * Every workload carries its LocalQueue's score (afs_score), refreshed with a heap rebuild when
 * a score moves, so the heap never sees a score change under it.
 */
int sched__queue_cmp(const cq_t *cq, const wl_t *a, const wl_t *b)
{
    if (cq->afs_active) {
        int c = sched__share_cmp(a->afs_score, b->afs_score);
        if (c != 0)
            return c;
    }
    return sched__wl_cmp(a, b);
}

err_t sched__wlvec_push(wlvec_t *v, wl_t *w)
{
    if (util_grow((void **)&v->items, &v->cap, v->len + 1, sizeof(wl_t *)) != ERR_OK)
        return ERR_NOMEM;
    v->items[v->len++] = w;
    return ERR_OK;
}

void sched__wlvec_fini(wlvec_t *v)
{
    free(v->items);
    memset(v, 0, sizeof(*v));
}

static void heap_set(wlvec_t *h, size_t i, wl_t *w)
{
    h->items[i] = w;
    w->qidx = i;
}

static void sift_up(const cq_t *cq, wlvec_t *h, size_t i)
{
    wl_t *w = h->items[i];
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (sched__queue_cmp(cq, h->items[p], w) <= 0)
            break;
        heap_set(h, i, h->items[p]);
        i = p;
    }
    heap_set(h, i, w);
}

static void sift_down(const cq_t *cq, wlvec_t *h, size_t i)
{
    wl_t *w = h->items[i];
    for (;;) {
        size_t l = 2 * i + 1, best = i;
        wl_t *bw = w;
        if (l < h->len && sched__queue_cmp(cq, h->items[l], bw) < 0) {
            best = l;
            bw = h->items[l];
        }
        if (l + 1 < h->len && sched__queue_cmp(cq, h->items[l + 1], bw) < 0) {
            best = l + 1;
            bw = h->items[l + 1];
        }
        if (best == i)
            break;
        heap_set(h, i, bw);
        i = best;
    }
    heap_set(h, i, w);
}

err_t sched__queue_push(cq_t *cq, wl_t *w)
{
    if (util_grow((void **)&cq->heap.items, &cq->heap.cap, cq->heap.len + 1, sizeof(void *)) !=
        ERR_OK)
        return ERR_NOMEM;
    w->qcq = cq;
    w->where = WQ_HEAP;
    cq->heap.items[cq->heap.len] = w;
    w->qidx = cq->heap.len++;
    sift_up(cq, &cq->heap, w->qidx);
    return ERR_OK;
}

err_t sched__queue_park(cq_t *cq, wl_t *w)
{
    if (sched__wlvec_push(&cq->inadm, w) != ERR_OK)
        return ERR_NOMEM;
    w->qcq = cq;
    w->where = WQ_INADM;
    w->qidx = cq->inadm.len - 1;
    return ERR_OK;
}

void sched__queue_remove(wl_t *w)
{
    cq_t *cq = w->qcq;
    if (cq == NULL || w->where == WQ_NONE)
        return;
    if (w->where == WQ_HEAP) {
        wlvec_t *h = &cq->heap;
        size_t i = w->qidx;
        wl_t *last = h->items[--h->len];
        if (i < h->len) {
            heap_set(h, i, last);
            sift_up(cq, h, i);
            sift_down(cq, h, last->qidx);
        }
    } else {
        wlvec_t *v = &cq->inadm;
        size_t i = w->qidx;
        wl_t *last = v->items[--v->len];
        if (i < v->len) {
            v->items[i] = last;
            last->qidx = i;
        }
    }
    if (cq->sticky == w)
        cq->sticky = NULL;
    w->qcq = NULL;
    w->where = WQ_NONE;
}

wl_t *sched__queue_pop(cq_t *cq)
{
    wl_t *w = NULL;
    if (cq->sticky != NULL && cq->sticky->where == WQ_HEAP && cq->sticky->qcq == cq)
        w = cq->sticky;
    else if (cq->heap.len > 0)
        w = cq->heap.items[0];
    /* admission fair sharing: Kueue's sticky preemptor comes first only among the workloads
     * of the lowest LocalQueue usage (the usage is compared before the sticky rule) */
    if (w == cq->sticky && w != NULL && cq->afs_active && cq->heap.len > 0 &&
        sched__share_cmp(cq->heap.items[0]->afs_score, w->afs_score) < 0)
        w = cq->heap.items[0];
    if (w == NULL)
        return NULL;
    wl_t *sticky = cq->sticky;
    sched__queue_remove(w);
    cq->sticky = sticky == w ? w : sticky;
    return w;
}

/* Parked workloads go back to the heap (Kueue's QueueInadmissibleWorkloads), except those in
 * requeue backoff: Kueue moves only workloads whose backoff has expired, and here the driver
 * says when by upserting them with hold=false. The parked vector's order does not matter: the
 * heap orders them. */
err_t sched__queue_requeue_all(cq_t *cq)
{
    size_t kept = 0;

    if (cq->inadm.len == 0)
        return ERR_OK;
    if (util_grow((void **)&cq->heap.items, &cq->heap.cap, cq->heap.len + cq->inadm.len,
                  sizeof(void *)) != ERR_OK)
        return ERR_NOMEM;
    for (size_t i = 0; i < cq->inadm.len; i++) {
        wl_t *w = cq->inadm.items[i];
        if (w->held || w->failed_checks) {
            w->qidx = kept;
            cq->inadm.items[kept++] = w;
            continue;
        }
        w->where = WQ_HEAP;
        heap_set(&cq->heap, cq->heap.len++, w);
    }
    cq->inadm.len = kept;
    sched__queue_rebuild_heap(cq);
    return ERR_OK;
}

void sched__queue_rebuild_heap(cq_t *cq)
{
    wlvec_t *h = &cq->heap;
    for (size_t i = 0; i < h->len; i++)
        h->items[i]->qidx = i;
    for (size_t i = h->len / 2; i-- > 0;)
        sift_down(cq, h, i);
}

err_t sched__admitted_add(cq_t *cq, wl_t *w)
{
    if (sched__wlvec_push(&cq->admitted, w) != ERR_OK)
        return ERR_NOMEM;
    w->acq = cq;
    w->aidx = cq->admitted.len - 1;
    return ERR_OK;
}

void sched__admitted_remove(wl_t *w)
{
    cq_t *cq = w->acq;
    if (cq == NULL)
        return;
    /* order-preserving removal: the admitted list is in admission order, which candidate
     * ordering and the query API rely on for determinism */
    wlvec_t *v = &cq->admitted;
    memmove(&v->items[w->aidx], &v->items[w->aidx + 1], (v->len - w->aidx - 1) * sizeof(wl_t *));
    v->len--;
    for (size_t i = w->aidx; i < v->len; i++)
        v->items[i]->aidx = i;
    w->acq = NULL;
}

/* Where does a pending workload wait? In the heap of its LocalQueue's ClusterQueue, when both
 * exist and the LocalQueue is not stopped; otherwise nowhere, with the reason recorded. */
err_t sched__wl_enqueue(sched_t *s, wl_t *w)
{
    sched__queue_remove(w);
    if (w->state != SCHED_WL_PENDING)
        return ERR_OK;
    lq_t *lq = sched__lq_of(s, w);
    if (lq == NULL) {
        sched__wl_set_reason(w, SCHED_REASON_MISCONFIGURED, "LocalQueue %s doesn't exist",
                             w->lq_key != NULL ? sched__wl_lq_name(w) : "");
        return ERR_OK;
    }
    if (lq->stop_policy != STOP_POLICY_NONE) {
        sched__wl_set_reason(w, SCHED_REASON_ON_HOLD, "LocalQueue %s is stopped",
                             sched__wl_lq_name(w));
        return ERR_OK;
    }
    cq_t *cq = util_hmap_get(&s->cq_map, lq->cq);
    if (cq == NULL || !cq->exists) {
        sched__wl_set_reason(w, SCHED_REASON_MISCONFIGURED, "ClusterQueue %s doesn't exist",
                             lq->cq);
        return ERR_OK;
    }
    if (w->failed_checks) {
        /* Kueue's nominate tests this before the ClusterQueue's activity. */
        sched__wl_set_reason(w, SCHED_REASON_PENDING_EVALUATION,
                             "The workload has failed admission checks");
        w->afs_score = lq->afs.score;
        return sched__queue_park(cq, w);
    }
    if (!cq->active)
        sched__wl_set_reason(w, SCHED_REASON_SUSPENDED, "ClusterQueue %s is inactive", cq->name);
    else if (w->reason == SCHED_REASON_NONE || w->reason == SCHED_REASON_MISCONFIGURED ||
             w->reason == SCHED_REASON_ON_HOLD || w->reason == SCHED_REASON_SUSPENDED ||
             w->reason == SCHED_REASON_PENDING_EVALUATION) /* e.g. after failed checks */
        sched__wl_set_pending_evaluation(w);
    w->afs_score = lq->afs.score;
    if (w->held)
        return sched__queue_park(cq, w); /* requeue backoff: pending, never a head */
    return sched__queue_push(cq, w);
}

/* Recompute every pending workload's queue (after LocalQueue/ClusterQueue/namespace changes).
 * All of them land in heaps: an object change is a reason to try again, as in Kueue. */
err_t sched__requeue_pending(sched_t *s)
{
    for (size_t i = 0; i < s->nwls; i++) {
        wl_t *w = s->wls[i];
        if (w->state == SCHED_WL_PENDING && sched__wl_enqueue(s, w) != ERR_OK)
            return ERR_NOMEM;
    }
    s->queues_dirty = false;
    return ERR_OK;
}
