/* ready -- waitForPodsReady in virtual time: pod readiness, timeouts, requeue backoff, blocking. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "sim/run_int.h"

#include "util/grow.h"

#include <string.h>

/*
 * The operator reads waitForPodsReady's state from Workload conditions and a one-second scan;
 * the simulator keeps it per workload (sim_wlrun_t) and moves it with timers on the virtual
 * clock. Both decide with model/waitready.h: which timeout runs, the requeue limit, the backoff,
 * the queue-order timestamp after a requeue.
 *
 *   ADMIT --(pods-ready-after)--> READY --(pods-unready-after)--> RECOVERING
 *     |   [the runtime starts]      ^------(pods-recover-after)------+
 *     | TIMEOUT (timeout)                                            | TIMEOUT (recoveryTimeout)
 *     +----------------------------+---------------------------------+
 *                                  v
 *     requeues + 1 > backoffLimitCount ? Deactivated RequeuingLimitExceeded
 *                                      : Evicted PodsReadyTimeout, held (sched opts.hold)
 *                                        -- REQUEUE at now + backoff --> Requeued BackoffFinished
 *
 * A Retry admission check with a requeue delay (run.c) holds the workload the same way, with a
 * REQUEUE timer at the eviction + the delay (Kueue's requeueState.requeueAt); its PodsReady
 * requeue count does not move.
 *
 * Timers are (time, kind, workload, generation): the generation is the workload's sim_wlrun_t
 * gen, bumped on every admission and stop, so a timer of an earlier admission is dropped. At one
 * instant they fire after the finishes (a job that completes at its timeout has completed) and
 * in kind order: pods that become ready at their deadline are in time.
 */

typedef enum {
    TIMER_READY = 0, /* the pods are ready (first time, or recovered) */
    TIMER_UNREADY,   /* a pod fails */
    TIMER_TIMEOUT,   /* a deadline of waitready_deadline() */
    TIMER_REQUEUE,   /* the backoff ends */
} timer_kind_t;

static bool timer_less(const sim_timer_t *a, const sim_timer_t *b)
{
    if (a->t != b->t)
        return a->t < b->t;
    if (a->kind != b->kind)
        return a->kind < b->kind;
    return a->wl < b->wl;
}

static err_t timer_push(sim_run_t *r, sim_ms_t t, int kind, size_t w)
{
    if (util_grow((void **)&r->tim, &r->captim, r->ntim + 1, sizeof(*r->tim)) != ERR_OK)
        return ERR_NOMEM;
    size_t i = r->ntim++;
    r->tim[i] = (sim_timer_t){t, w, r->wr[w].gen, kind};
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (!timer_less(&r->tim[i], &r->tim[p]))
            break;
        sim_timer_t tmp = r->tim[p];
        r->tim[p] = r->tim[i];
        r->tim[i] = tmp;
        i = p;
    }
    return ERR_OK;
}

static sim_timer_t timer_pop(sim_run_t *r)
{
    sim_timer_t top = r->tim[0];
    size_t i = 0;

    r->tim[0] = r->tim[--r->ntim];
    for (;;) {
        size_t l = 2 * i + 1, m = i;
        if (l < r->ntim && timer_less(&r->tim[l], &r->tim[m]))
            m = l;
        if (l + 1 < r->ntim && timer_less(&r->tim[l + 1], &r->tim[m]))
            m = l + 1;
        if (m == i)
            break;
        sim_timer_t tmp = r->tim[m];
        r->tim[m] = r->tim[i];
        r->tim[i] = tmp;
        i = m;
    }
    return top;
}

/* Is timer `x` still about the workload's current admission (or backoff)? */
static bool timer_live(const sim_run_t *r, const sim_timer_t *x)
{
    const sim_wlrun_t *wr = &r->wr[x->wl];
    sim_wl_state_t st = r->rec->wls[x->wl].state;

    if (wr->gen != x->gen)
        return false;
    return x->kind == TIMER_REQUEUE ? st == SIM_WL_PENDING && wr->held : st == SIM_WL_RUNNING;
}

static void timers_skip_stale(sim_run_t *r)
{
    while (r->ntim > 0 && !timer_live(r, &r->tim[0]))
        timer_pop(r);
}

sim_ms_t sim__ready_next(sim_run_t *r)
{
    timers_skip_stale(r);
    return r->ntim > 0 ? r->tim[0].t : INT64_MAX;
}

static sim_ms_t after(sim_ms_t t, sim_ms_t d)
{
    return d > SIM_MS_MAX - t ? SIM_MS_MAX : t + d;
}

/* The doc's pods-* timing, SIM_NEVER for never. */
static sim_ms_t ready_after(const sim_doc_t *d)
{
    return d->has_pods_ready ? d->pods_ready_after : 0;
}

static sim_ms_t unready_after(const sim_doc_t *d)
{
    return d->has_pods_unready ? d->pods_unready_after : SIM_NEVER;
}

static sim_ms_t recover_after(const sim_doc_t *d)
{
    return d->has_pods_recover ? d->pods_recover_after : SIM_NEVER;
}

/* The timeout of `w` in its current state, if one runs. */
static err_t arm_timeout(sim_run_t *r, size_t w)
{
    const sim_wlrun_t *wr = &r->wr[w];
    int64_t dl = 0;

    if (waitready_deadline(&r->pr, wr->pods, wr->admitted_at, wr->unready_at, &dl) ==
        WAITREADY_NONE)
        return ERR_OK;
    return timer_push(r, dl, TIMER_TIMEOUT, w);
}

/* The pods of `w` are ready at `t`: the first time, its runtime starts. */
static err_t pods_ready(sim_run_t *r, size_t w, sim_ms_t t)
{
    sim_wlrun_t *wr = &r->wr[w];
    const sim_doc_t *doc = &r->sc->docs[wr->doc];
    bool first = wr->pods == WAITREADY_NOT_READY;

    wr->pods = WAITREADY_READY;
    if (!first)
        return ERR_OK; /* Recovered: the runtime kept running */
    if (wr->runtime >= 0 && sim__run_finish_at(r, w, after(t, wr->runtime)) != ERR_OK)
        return ERR_NOMEM;
    if (unready_after(doc) != SIM_NEVER)
        return timer_push(r, after(t, unready_after(doc)), TIMER_UNREADY, w);
    return ERR_OK;
}

err_t sim__ready_admitted(sim_run_t *r, size_t w, sim_ms_t t)
{
    sim_wlrun_t *wr = &r->wr[w];
    sim_ms_t ra = ready_after(&r->sc->docs[wr->doc]);

    wr->pods = WAITREADY_NOT_READY;
    wr->admitted_at = t;
    wr->unready_at = 0;
    if (ra == 0)
        return pods_ready(r, w, t);
    if (ra != SIM_NEVER && timer_push(r, after(t, ra), TIMER_READY, w) != ERR_OK)
        return ERR_NOMEM;
    return arm_timeout(r, w);
}

sim_ms_t sim__ready_queue_ts(const sim_run_t *r, size_t w)
{
    const sim_wlrun_t *wr = &r->wr[w];

    /* Kueue's GetQueueOrderTimestamp reads the Evicted condition, which the last eviction
     * wrote: a Retry admission check's eviction orders by its time */
    if (wr->check_evicted_at >= 0)
        return wr->check_evicted_at;
    return wr->requeues > 0 ? waitready_queue_ts(&r->pr, wr->evicted_at, r->rec->wls[w].submit)
                            : r->rec->wls[w].submit;
}

/* A timeout ran out at `t` for running workload `w` (cause still current). */
static err_t timed_out(sim_run_t *r, size_t w, sim_ms_t t, err_msg_t *msg)
{
    sim_wlrun_t *wr = &r->wr[w];
    sim_wl_rec_t *rw = &r->rec->wls[w];
    const char *cq = rw->cq != SIM_NONE ? r->rec->holders[rw->cq].name : "";
    err_t rc;

    if (sim__run_touch(r, cq) != ERR_OK)
        return ERR_NOMEM;
    if (waitready_limit_exceeded(&r->pr, wr->requeues)) {
        /* Kueue: DeactivationTarget RequeuingLimitExceeded, spec.active=false; the quota is
         * released with the deactivation. */
        rc = sim__run_wl_reupsert(r, w, t, false, false, msg);
        if (rc == ERR_OK)
            rc = verify_release(r->verify, t, rw->name, false, msg);
        if (rc != ERR_OK)
            return err_prefix(msg, rc, "deactivating %s: ", rw->name);
        sim_events_deactivated(&r->ev, t, rw->name, cq, "RequeuingLimitExceeded");
        if (sim_rec_wl_leave(r->rec, w, SIM_WL_DEACTIVATED, t) != ERR_OK)
            return ERR_NOMEM;
        wr->gen++;
        r->done++;
        return ERR_OK;
    }
    rc = sched_workload_evict(r->s, rw->name, msg);
    if (rc == ERR_OK)
        rc = verify_release(r->verify, t, rw->name, false, msg);
    if (rc == ERR_OK)
        rc = sched_evicted(r->s, rw->name, t, msg);
    if (rc != ERR_OK)
        return err_prefix(msg, rc, "evicting %s: ", rw->name);
    sim_events_evicted(&r->ev, t, rw->name, cq, "PodsReadyTimeout");
    if (sim_rec_wl_evict(r->rec, w, "PodsReadyTimeout", t) != ERR_OK)
        return ERR_NOMEM;
    wr->gen++;
    wr->requeues++;
    wr->evicted_at = t;
    wr->check_evicted_at = -1;
    wr->held = true;
    rc = sim__run_wl_reupsert(r, w, sim__ready_queue_ts(r, w), true, true, msg);
    if (rc != ERR_OK)
        return err_prefix(msg, rc, "holding %s: ", rw->name);
    if (timer_push(r, after(t, waitready_backoff_s(&r->pr, wr->requeues) * 1000), TIMER_REQUEUE,
                   w) != ERR_OK)
        return ERR_NOMEM;
    return sim__run_sample_later(r, w);
}

err_t sim__ready_check_backoff(sim_run_t *r, size_t w, sim_ms_t t, sim_ms_t requeue_ms,
                               err_msg_t *msg)
{
    sim_wlrun_t *wr = &r->wr[w];
    err_t rc;

    wr->held = true;
    rc = sim__run_wl_reupsert(r, w, sim__ready_queue_ts(r, w), true, true, msg);
    if (rc != ERR_OK)
        return err_prefix(msg, rc, "holding %s: ", r->rec->wls[w].name);
    return timer_push(r, after(t, requeue_ms), TIMER_REQUEUE, w);
}

/* The backoff of held workload `w` ended at `t`: queued again (Requeued=True BackoffFinished). */
static err_t requeue(sim_run_t *r, size_t w, sim_ms_t t, err_msg_t *msg)
{
    sim_wl_rec_t *rw = &r->rec->wls[w];
    const char *cq = rw->cq != SIM_NONE ? r->rec->holders[rw->cq].name : "";
    err_t rc;

    r->wr[w].held = false;
    rc = sim__run_wl_reupsert(r, w, sim__ready_queue_ts(r, w), false, true, msg);
    if (rc != ERR_OK)
        return err_prefix(msg, rc, "requeueing %s: ", rw->name);
    sim_events_requeued(&r->ev, t, rw->name, cq, "BackoffFinished");
    if (sim__run_touch(r, cq) != ERR_OK)
        return ERR_NOMEM;
    return sim__run_sample_later(r, w);
}

err_t sim__ready_due(sim_run_t *r, sim_ms_t t, err_msg_t *msg)
{
    for (;;) {
        timers_skip_stale(r);
        if (r->ntim == 0 || r->tim[0].t != t)
            return ERR_OK;
        sim_timer_t x = timer_pop(r);
        sim_wlrun_t *wr = &r->wr[x.wl];
        const sim_doc_t *doc = &r->sc->docs[wr->doc];
        int64_t dl = 0;
        err_t rc = ERR_OK;

        switch ((timer_kind_t)x.kind) {
        case TIMER_READY:
            if (wr->pods != WAITREADY_READY)
                rc = pods_ready(r, x.wl, t);
            break;
        case TIMER_UNREADY:
            if (wr->pods != WAITREADY_READY)
                break;
            wr->pods = WAITREADY_RECOVERING;
            wr->unready_at = t;
            if (recover_after(doc) != SIM_NEVER &&
                timer_push(r, after(t, recover_after(doc)), TIMER_READY, x.wl) != ERR_OK)
                return ERR_NOMEM;
            rc = arm_timeout(r, x.wl);
            break;
        case TIMER_TIMEOUT:
            /* Only the deadline of the state the pods are in now counts. */
            if (waitready_deadline(&r->pr, wr->pods, wr->admitted_at, wr->unready_at, &dl) !=
                    WAITREADY_NONE &&
                dl == t)
                rc = timed_out(r, x.wl, t, msg);
            break;
        case TIMER_REQUEUE:
            rc = requeue(r, x.wl, t, msg);
            break;
        }
        if (rc != ERR_OK)
            return rc;
    }
}

bool sim__ready_blocked(const sim_run_t *r)
{
    /* Kueue's PodsReadyForAllAdmittedWorkloads, as the operator checks it
     * (lib/ctrl/readiness.c): every admitted workload has PodsReady=True; a workload whose
     * quota is reserved but whose admission checks are not Ready yet is not admitted. */
    if (!r->pr.enabled || !r->pr.block_admission)
        return false;
    for (size_t i = 0; i < r->rec->nwls; i++)
        if (r->rec->wls[i].state == SIM_WL_RUNNING && !r->wr[i].awaiting_checks &&
            r->wr[i].pods != WAITREADY_READY)
            return true;
    return false;
}
