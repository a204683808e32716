/* run -- the virtual clock: apply scenario changes, finish workloads, drive lib/sched. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "sim/sim.h"

#include "sched/sched.h"
#include "sim/annot.h"
#include "sim/events.h"
#include "sim/run_int.h"
#include "util/grow.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/*
 * One instant of virtual time, as scenario-format.md orders it:
 *
 *   1. apply the object changes due now, in document order (creations, updates, delete-at);
 *   2. finish the workloads whose runtime ended now (in creation order), then fire the
 *      waitForPodsReady timers due now (ready.c: pods ready or failing, timeouts, requeues);
 *   3. run sched_cycle until a cycle decides nothing (quiescence; none while blockAdmission
 *      waits for pods): admissions start runtimes once the pods are ready,
 *      preempted/evicted workloads go back to their queue at once (sched_evicted), and the
 *      engine deactivates workloads past their maximum execution time;
 *   4. read why the still-pending workloads of the queues touched now are waiting.
 *
 * The next instant is the earliest of: the next object change, the next runtime end, the
 * engine's next deadline, the next waitForPodsReady timer. Nothing else moves the clock, so a run
 * costs O(changes), not O(duration). The run ends when every workload is gone and no change will
 * create another, when no instant is left, or at --until.
 *
 *   change list (sorted once)   finish heap (time, creation order)   sched_next_deadline()
 *              \                         |  waitForPodsReady timers       /
 *               +----------------> min = next instant <------------------+
 */

/* Safety net: a single instant that keeps producing decisions would be an engine bug (e.g. a
 * preemption loop); stop with an error instead of spinning forever. */
#define MAX_CYCLES_PER_INSTANT 1000000

/* ---- the change list ------------------------------------------------------------------------ */

static int change_cmp(const void *a, const void *b)
{
    const sim_change_t *x = a, *y = b;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    if (x->doc != y->doc)
        return x->doc < y->doc ? -1 : 1;
    return (int)x->del - (int)y->del;
}

static err_t build_changes(sim_run_t *r)
{
    const sim_scenario_t *sc = r->sc;
    size_t n = 0;

    r->changes = calloc(sc->ndocs * 2 + 1, sizeof(*r->changes));
    if (r->changes == NULL)
        return ERR_NOMEM;
    for (size_t i = 0; i < sc->ndocs; i++) {
        const sim_doc_t *d = &sc->docs[i];
        if (d->obj.kind == KIND_CONFIGURATION)
            continue; /* applied when the engine is created */
        r->changes[n++] = (sim_change_t){d->at, i, false};
        if (d->has_delete_at)
            r->changes[n++] = (sim_change_t){d->delete_at, i, true};
    }
    qsort(r->changes, n, sizeof(*r->changes), change_cmp);
    r->pc_docs = calloc(sc->ndocs + 1, sizeof(*r->pc_docs));
    if (r->pc_docs == NULL)
        return ERR_NOMEM;
    for (size_t i = 0; i < sc->ndocs; i++) {
        if (sc->docs[i].obj.kind == KIND_PRIORITY_CLASS)
            r->pc_docs[r->npc_docs++] = i;
    }
    r->nchanges = n;
    /* The last change that can bring a new workload: after it, "every workload is gone" ends
     * the run even if quota changes remain. */
    r->last_wl_change = 0;
    for (size_t i = 0; i < n; i++) {
        kind_t k = sc->docs[r->changes[i].doc].obj.kind;
        if (!r->changes[i].del && (k == KIND_JOB || k == KIND_WORKLOAD || k == KIND_INTEGRATION))
            r->last_wl_change = i + 1;
    }
    return ERR_OK;
}

/* ---- the finish heap --------------------------------------------------------------------------
 */

static bool fin_less(const sim_finish_t *a, const sim_finish_t *b)
{
    if (a->t != b->t)
        return a->t < b->t;
    if (a->wl != b->wl)
        return a->wl < b->wl;
    return a->is_verdict && !b->is_verdict;
}

static err_t fin_push(sim_run_t *r, sim_finish_t f)
{
    if (util_grow((void **)&r->fin, &r->capfin, r->nfin + 1, sizeof(*r->fin)) != ERR_OK)
        return ERR_NOMEM;
    size_t i = r->nfin++;
    r->fin[i] = f;
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (!fin_less(&r->fin[i], &r->fin[p]))
            break;
        sim_finish_t tmp = r->fin[p];
        r->fin[p] = r->fin[i];
        r->fin[i] = tmp;
        i = p;
    }
    return ERR_OK;
}

static sim_finish_t fin_pop(sim_run_t *r)
{
    sim_finish_t top = r->fin[0];
    size_t i = 0;

    r->fin[0] = r->fin[--r->nfin];
    for (;;) {
        size_t l = 2 * i + 1, m = i;
        if (l < r->nfin && fin_less(&r->fin[l], &r->fin[m]))
            m = l;
        if (l + 1 < r->nfin && fin_less(&r->fin[l + 1], &r->fin[m]))
            m = l + 1;
        if (m == i)
            break;
        sim_finish_t tmp = r->fin[m];
        r->fin[m] = r->fin[i];
        r->fin[i] = tmp;
        i = m;
    }
    return top;
}

/* Drop finish entries made stale by a preemption, eviction, deactivation or deletion. */
static void fin_skip_stale(sim_run_t *r)
{
    while (r->nfin > 0) {
        const sim_finish_t *f = &r->fin[0];
        if (r->rec->wls[f->wl].state == SIM_WL_RUNNING && r->wr[f->wl].gen == f->gen)
            return;
        fin_pop(r);
    }
}

/* ---- bookkeeping helpers -------------------------------------------------------------------- */

static err_t touch_cq(sim_run_t *r, const char *cq)
{
    size_t dummy;

    if (cq == NULL || cq[0] == '\0' || util_hmap_get_index(&r->touched_index, cq, &dummy))
        return ERR_OK;
    if (util_hmap_put_index(&r->touched_index, cq, r->ntouched) != ERR_OK)
        return ERR_NOMEM;
    if (util_grow((void **)&r->touched, &r->captouched, r->ntouched + 1, sizeof(*r->touched)) !=
        ERR_OK)
        return ERR_NOMEM;
    r->touched[r->ntouched] = strdup(cq);
    if (r->touched[r->ntouched] == NULL)
        return ERR_NOMEM;
    r->ntouched++;
    return ERR_OK;
}

static void touched_clear(sim_run_t *r)
{
    for (size_t i = 0; i < r->ntouched; i++)
        free(r->touched[i]);
    r->ntouched = 0;
    util_hmap_fini(&r->touched_index);
    util_hmap_init(&r->touched_index, 0);
}

err_t sim__run_touch(sim_run_t *r, const char *cq)
{
    return touch_cq(r, cq);
}

err_t sim__run_finish_at(sim_run_t *r, size_t w, sim_ms_t end)
{
    return fin_push(r, (sim_finish_t){end, w, r->wr[w].gen, false, CHECK_STATE_PENDING, -1});
}

err_t sim__run_holder(sim_run_t *r, const char *cq, size_t *out)
{
    if (cq == NULL || cq[0] == '\0') {
        *out = SIM_NONE;
        return ERR_OK;
    }
    return sim_rec_holder(r->rec, cq, false, out);
}

err_t sim__run_wr_grow(sim_run_t *r)
{
    size_t old = r->capwr;

    if (util_grow((void **)&r->wr, &r->capwr, r->rec->nwls, sizeof(*r->wr)) != ERR_OK)
        return ERR_NOMEM;
    memset(r->wr + old, 0, (r->capwr - old) * sizeof(*r->wr)); /* the new runs start zeroed */
    return ERR_OK;
}

err_t sim__run_sample_later(sim_run_t *r, size_t w)
{
    if (util_grow((void **)&r->sample, &r->capsample, r->nsample + 1, sizeof(*r->sample)) != ERR_OK)
        return ERR_NOMEM;
    r->sample[r->nsample++] = w;
    return ERR_OK;
}

/* ---- admission checks ----------------------------------------------------------------------- */

/*
 * The verdict of a workload's admission checks for its quota reservation number `k`: each check
 * gives a step (the workload's own sim.sluice.dev/verdicts entry for it, else the
 * AdmissionCheck's sim.sluice.dev/verdict, else Ready at once). If every check is Ready, the
 * workload is Admitted when the last one is; otherwise the first check that fails decides
 * (Rejected before Retry at the same delay, as Kueue deactivates before it evicts). A Retry's
 * requeue delay is the longest one of the checks in Retry at that time (Kueue's
 * GetMaxRetryTime: their lastTransitionTimes are the same), -1 when none gives one.
 */
static void checks_verdict(sim_run_t *r, size_t w, char *const *checks, size_t n, size_t k,
                           check_state_t *verdict, sim_ms_t *delay, int64_t *requeue_s)
{
    const object_meta_t *wm = object_meta_const(&r->sc->docs[r->wr[w].doc].obj);
    const char *list = wm != NULL ? kv_list_get(&wm->annotations, SIM_ANN_VERDICTS) : NULL;
    sim_ms_t ready = 0, fail = SIM_MS_MAX;
    check_state_t failed = CHECK_STATE_READY;
    int64_t requeue = -1;

    for (size_t i = 0; i < n; i++) {
        const char *seq = NULL;
        size_t len = 0, doc;
        if (list != NULL)
            sim_verdicts_find(list, checks[i], &seq, &len, NULL);
        if (seq == NULL && util_hmap_get_index(&r->ac_live, checks[i], &doc) && doc > 0) {
            const object_meta_t *am = object_meta_const(&r->sc->docs[doc - 1].obj);
            seq = kv_list_get(&am->annotations, SIM_ANN_VERDICT);
            len = seq != NULL ? strlen(seq) : 0;
        }
        check_state_t st = CHECK_STATE_READY;
        int64_t dl = 0, rq = -1;
        if (seq != NULL)
            sim_verdict_step(seq, len, k, &st, &dl, &rq, NULL); /* validated at load */
        if (st == CHECK_STATE_READY) {
            if (dl > ready)
                ready = dl;
            continue;
        }
        if (dl < fail) {
            requeue = -1; /* an earlier failure: the later ones never happen */
            fail = dl;
            failed = st;
        } else if (dl == fail && st == CHECK_STATE_REJECTED) {
            failed = st;
        }
        if (dl == fail && st == CHECK_STATE_RETRY && rq > requeue)
            requeue = rq;
    }
    *verdict = failed != CHECK_STATE_READY ? failed : CHECK_STATE_READY;
    *delay = failed != CHECK_STATE_READY ? fail : ready;
    *requeue_s = requeue;
}

/* The verdict of finish entry `f` is due: admit, evict for a retry, or deactivate. */
static err_t apply_verdict(sim_run_t *r, const sim_finish_t *f, sim_ms_t t, err_msg_t *msg)
{
    sim_wl_rec_t *w = &r->rec->wls[f->wl];
    const char *cq = w->cq != SIM_NONE ? r->rec->holders[w->cq].name : "";
    sched_wl_info_t info;
    err_t rc = sched_workload_checks(r->s, w->name, f->verdict, t, msg);

    if (rc == ERR_OK)
        rc = sched_workload_info(r->s, w->name, &info, msg);
    if (rc != ERR_OK)
        return err_prefix(msg, rc, "admission checks of %s: ", w->name);
    if (touch_cq(r, cq) != ERR_OK)
        return ERR_NOMEM;
    switch (f->verdict) {
    case CHECK_STATE_READY:
        sim_events_admitted(&r->ev, t, w->name, cq, info.admission, info.borrowing);
        /* Admitted now: the pods-ready timers (and so the runtime) start here, not at the
         * quota reservation (Kueue's PodsReady timeout counts from the Admitted condition). */
        r->wr[f->wl].awaiting_checks = false;
        return sim__ready_admitted(r, f->wl, t) == ERR_OK ? ERR_OK : ERR_NOMEM;
    case CHECK_STATE_RETRY:
        rc = verify_release(r->verify, t, w->name, false, msg);
        if (rc != ERR_OK)
            return rc == ERR_INVALID ? err_prefix(msg, rc, "invariant violated: ") : rc;
        sim_events_evicted(&r->ev, t, w->name, cq, "AdmissionCheck");
        if (sim_rec_wl_evict(r->rec, f->wl, "AdmissionCheck", t) != ERR_OK)
            return ERR_NOMEM;
        r->wr[f->wl].gen++;
        r->wr[f->wl].check_evicted_at = t; /* queued by this eviction's time (Kueue's) */
        rc = sched_evicted(r->s, w->name, t, msg);
        if (rc != ERR_OK)
            return err_prefix(msg, rc, "evicting %s: ", w->name);
        /* A requeueAfterSeconds: held until requeueAt (Requeued=False AdmissionCheck). */
        if (f->requeue_s > 0 &&
            (rc = sim__ready_check_backoff(r, f->wl, t, f->requeue_s * 1000, msg)) != ERR_OK)
            return rc;
        return sim__run_sample_later(r, f->wl);
    default: /* Rejected */
        rc = verify_release(r->verify, t, w->name, false, msg);
        if (rc != ERR_OK)
            return rc == ERR_INVALID ? err_prefix(msg, rc, "invariant violated: ") : rc;
        sim_events_deactivated(&r->ev, t, w->name, cq, "AdmissionCheck");
        if (sim_rec_wl_leave(r->rec, f->wl, SIM_WL_DEACTIVATED, t) != ERR_OK)
            return ERR_NOMEM;
        r->wr[f->wl].gen++;
        r->done++;
        return ERR_OK;
    }
}

/* ---- steps of an instant ------------------------------------------------------------------ */

static err_t finish_due(sim_run_t *r, sim_ms_t t, err_msg_t *msg)
{
    for (;;) {
        fin_skip_stale(r);
        if (r->nfin == 0 || r->fin[0].t != t)
            return ERR_OK;
        sim_finish_t f = fin_pop(r);
        if (f.is_verdict) {
            err_t vrc = apply_verdict(r, &f, t, msg);
            if (vrc != ERR_OK)
                return vrc;
            continue;
        }
        sim_wl_rec_t *w = &r->rec->wls[f.wl];
        const char *cq = w->cq != SIM_NONE ? r->rec->holders[w->cq].name : "";
        err_t rc = sched_workload_finish(r->s, w->name, t, msg);
        if (rc == ERR_OK)
            rc = verify_release(r->verify, t, w->name, true, msg);
        if (rc != ERR_OK)
            return err_prefix(msg, rc, "finishing %s: ", w->name);
        sim_events_finished(&r->ev, t, w->name, cq);
        if (touch_cq(r, cq) != ERR_OK ||
            sim_rec_wl_leave(r->rec, f.wl, SIM_WL_FINISHED, t) != ERR_OK)
            return ERR_NOMEM;
        r->wr[f.wl].gen++;
        r->done++;
    }
}

static err_t apply_decision(sim_run_t *r, const sched_decision_t *d, sim_ms_t t, err_msg_t *msg)
{
    size_t w = sim_rec_wl_find(r->rec, d->workload), h;
    err_t rc;

    if (w == SIM_NONE)
        return err_set(msg, ERR_INVALID, "engine decided about unknown workload %s", d->workload);
    if (touch_cq(r, d->cluster_queue) != ERR_OK)
        return ERR_NOMEM;
    if (d->kind == SCHED_DECISION_REPLACE) {
        /* the same quota, the job runs on: only the event (docs/simulator.md, "Nodes") */
        sim_events_node_replaced(&r->ev, t, d->workload, d->cluster_queue,
                                 d->node != NULL ? d->node : "", &d->admission);
        return ERR_OK;
    }
    /* The invariant checker sees every decision first: a violation ends the run. */
    rc = d->kind == SCHED_DECISION_ADMIT
             ? verify_admit(r->verify, t, d->workload, &d->admission, msg)
             : verify_release(r->verify, t, d->workload, false, msg);
    if (rc != ERR_OK)
        return rc == ERR_INVALID ? err_prefix(msg, rc, "invariant violated: ") : rc;
    switch (d->kind) {
    case SCHED_DECISION_ADMIT:
        if (sim__run_holder(r, d->cluster_queue, &h) != ERR_OK || h == SIM_NONE ||
            sim_rec_wl_admit(r->rec, w, h, &d->admission, t) != ERR_OK)
            return ERR_NOMEM;
        r->wr[w].gen++;
        r->wr[w].awaiting_checks = d->nchecks > 0;
        if (d->nchecks > 0) {
            /* Quota reserved: Admitted (and running) only once its checks are Ready. */
            check_state_t verdict;
            sim_ms_t delay;
            int64_t requeue_s;
            checks_verdict(r, w, d->checks, d->nchecks, r->wr[w].reservations++, &verdict, &delay,
                           &requeue_s);
            sim_events_quota_reserved(&r->ev, t, d->workload, d->cluster_queue, &d->admission,
                                      d->borrowing, d->checks, d->nchecks);
            sim_ms_t at = delay > SIM_MS_MAX - t ? SIM_MS_MAX : t + delay;
            return fin_push(r, (sim_finish_t){at, w, r->wr[w].gen, true, verdict, requeue_s});
        }
        sim_events_admitted(&r->ev, t, d->workload, d->cluster_queue, &d->admission, d->borrowing);
        /* The runtime starts when the pods are ready: at once unless the workload says
         * otherwise (sim.sluice.dev/pods-ready-after, ready.c). */
        return sim__ready_admitted(r, w, t) == ERR_OK ? ERR_OK : ERR_NOMEM;
    case SCHED_DECISION_PREEMPT: {
        const char *reason = sched_preempt_reason_str(d->reason);
        sim_events_preempted(&r->ev, t, d->workload, d->cluster_queue,
                             d->preemptor != NULL ? d->preemptor : "", reason);
        rc = sim_rec_wl_preempt(
            r->rec, w, d->preemptor != NULL ? sim_rec_wl_find(r->rec, d->preemptor) : SIM_NONE,
            reason, t);
        if (rc == ERR_NOMEM)
            return rc;
        break;
    }
    case SCHED_DECISION_EVICT:
        /* A stopPolicy HoldAndDrain eviction (docs/simulator.md, "Evicted"). */
        sim_events_evicted(&r->ev, t, d->workload, d->cluster_queue,
                           d->reason_str != NULL ? d->reason_str : "");
        if (sim_rec_wl_evict(r->rec, w, d->reason_str, t) != ERR_OK)
            return ERR_NOMEM;
        break;
    case SCHED_DECISION_DEACTIVATE:
        sim_events_deactivated(&r->ev, t, d->workload, d->cluster_queue,
                               d->reason_str != NULL ? d->reason_str
                                                     : "MaximumExecutionTimeExceeded");
        if (sim_rec_wl_leave(r->rec, w, SIM_WL_DEACTIVATED, t) != ERR_OK)
            return ERR_NOMEM;
        r->wr[w].gen++;
        r->done++;
        return ERR_OK;
    case SCHED_DECISION_REPLACE:
        return ERR_OK;
    }
    /* PREEMPT and EVICT: the job stops at once and the workload goes back to its queue. */
    r->wr[w].gen++;
    rc = sched_evicted(r->s, d->workload, t, msg);
    if (rc != ERR_OK)
        return err_prefix(msg, rc, "evicting %s: ", d->workload);
    return sim__run_sample_later(r, w);
}

static err_t schedule(sim_run_t *r, sim_ms_t t, err_msg_t *msg)
{
    for (size_t cycles = 0;; cycles++) {
        err_t rc;

        if (cycles >= MAX_CYCLES_PER_INSTANT)
            return err_set(msg, ERR_INVALID,
                           "the engine did not settle at time %llds after %d cycles",
                           (long long)(t / 1000), MAX_CYCLES_PER_INSTANT);
        /* blockAdmission: no cycle while an admitted workload's pods are not ready, as the
         * operator skips its cycles (docs/operator.md: maximum execution time waits too). */
        if (sim__ready_blocked(r))
            return ERR_OK;
        sched_decisions_clear(&r->dec);
        rc = sched_cycle(r->s, t, &r->dec, msg);
        if (rc != ERR_OK)
            return rc;
        if (r->dec.len == 0)
            return ERR_OK;
        for (size_t i = 0; i < r->dec.len; i++) {
            rc = apply_decision(r, &r->dec.items[i], t, msg);
            if (rc != ERR_OK)
                return rc;
        }
    }
}

typedef struct sample_ctx_s {
    sim_run_t *r;
    sim_ms_t t;
    err_t rc;
} sample_ctx_t;

static bool on_sample(const sched_wl_info_t *info, void *ud)
{
    sample_ctx_t *c = ud;
    size_t w;

    if (info->state != SCHED_WL_PENDING)
        return true;
    w = sim_rec_wl_find(c->r->rec, info->key);
    if (w != SIM_NONE && sim_rec_wl_reason(c->r->rec, w, info->message, c->t) != ERR_OK) {
        c->rc = ERR_NOMEM;
        return false;
    }
    return true;
}

/* Step 4: why do the workloads of the queues touched now wait? Reading every pending workload at
 * every instant would cost O(pending x instants); the queues where something happened are the
 * ones whose explanations can have changed (docs/simulator.md says how this approximates). */
static err_t sample_reasons(sim_run_t *r, sim_ms_t t)
{
    sample_ctx_t c = {r, t, ERR_OK};

    for (size_t i = 0; i < r->ntouched && c.rc == ERR_OK; i++)
        sched_cq_workloads(r->s, r->touched[i], on_sample, &c, NULL);
    for (size_t i = 0; i < r->nsample && c.rc == ERR_OK; i++) {
        sched_wl_info_t info;
        const sim_wl_rec_t *w = &r->rec->wls[r->sample[i]];
        if (w->state == SIM_WL_PENDING && sched_workload_info(r->s, w->name, &info, NULL) == ERR_OK)
            on_sample(&info, &c);
    }
    r->nsample = 0;
    touched_clear(r);
    return c.rc;
}

/* After queue objects changed, a pending workload may lead to another ClusterQueue. */
static err_t retarget_pending(sim_run_t *r, sim_ms_t t)
{
    for (size_t i = 0; i < r->rec->nwls; i++) {
        sched_wl_info_t info;
        const sim_wl_rec_t *w = &r->rec->wls[i];
        if (w->state != SIM_WL_PENDING || sched_workload_info(r->s, w->name, &info, NULL) != ERR_OK)
            continue;
        size_t h;
        if (sim__run_holder(r, info.cluster_queue, &h) != ERR_OK ||
            sim_rec_wl_retarget(r->rec, i, h, t) != ERR_OK)
            return ERR_NOMEM;
    }
    return ERR_OK;
}

/* ---- the loop ------------------------------------------------------------------------------- */

static void run_fini(sim_run_t *r)
{
    verify_free(r->verify);
    free(r->changes);
    free(r->fin);
    free(r->tim);
    free(r->wr);
    free(r->sample);
    touched_clear(r);
    free(r->touched);
    util_hmap_fini(&r->touched_index);
    util_hmap_fini(&r->lq_live);
    util_hmap_fini(&r->wpc_live);
    util_hmap_fini(&r->pc_live);
    util_hmap_fini(&r->ns_live);
    util_hmap_fini(&r->ac_live);
    free(r->pc_docs);
    sched_decisions_fini(&r->dec);
    sched_free(r->s);
}

err_t sim_run(const sim_scenario_t *sc, const sim_options_t *opts, sim_rec_t *rec, err_msg_t *msg)
{
    sim_run_t r;
    sched_config_t cfg;
    sim_ms_t now = 0;
    bool started = false;
    err_t rc;

    memset(&r, 0, sizeof(r));
    r.sc = sc;
    r.rec = rec;
    sim_events_init(&r.ev, opts->events);
    util_hmap_init(&r.touched_index, 0);
    util_hmap_init(&r.lq_live, 0);
    util_hmap_init(&r.wpc_live, 0);
    util_hmap_init(&r.pc_live, 0);
    util_hmap_init(&r.ns_live, 0);
    util_hmap_init(&r.ac_live, 0);
    sched_decisions_init(&r.dec);
    sched_config_from(&cfg, sc->config);
    cfg.tas = true; /* the simulator applies Topology objects (apply.c) */
    if (sc->config != NULL)
        r.pr = sc->config->pods_ready;
    else
        waitready_defaults(&r.pr, false); /* Kueue's v1beta2 defaults: on, 30m */
    r.s = sched_new(&cfg);
    r.verify = verify_new();
    if (r.s == NULL || r.verify == NULL || build_changes(&r) != ERR_OK) {
        rc = err_set(msg, ERR_NOMEM, "out of memory starting the run");
        goto out;
    }
    r.acct = sim__acct_new(opts->accounting, r.s, rec, opts->accounting_epoch_ms);
    free(rec->graph_svg);
    rec->graph_svg = NULL;
    rc = sim__graph_svg(sc, &rec->graph_svg, msg);
    if (rc != ERR_OK)
        goto out;

    for (;;) {
        sim_ms_t next = INT64_MAX;

        fin_skip_stale(&r);
        if (r.next_change < r.nchanges)
            next = r.changes[r.next_change].t;
        if (r.nfin > 0 && r.fin[0].t < next)
            next = r.fin[0].t;
        if (sim__ready_next(&r) < next)
            next = sim__ready_next(&r);
        if (started) {
            int64_t dl = sched_next_deadline(r.s, now);
            if (dl < next)
                next = dl;
            /* Every workload gone and none to come: done, whatever quota changes remain. */
            if (r.done == rec->nwls && r.next_change >= r.last_wl_change)
                break;
        }
        if (next == INT64_MAX)
            break;
        if (opts->has_until && next > opts->until) {
            now = opts->until;
            rec->until_reached = true;
            break;
        }
        now = next;
        started = true;

        bool queues_changed = false;
        while (r.next_change < r.nchanges && r.changes[r.next_change].t == now) {
            const sim_change_t *c = &r.changes[r.next_change++];
            rc = sim__run_apply(&r, c, now, &queues_changed, msg);
            if (rc != ERR_OK)
                goto out;
        }
        if (queues_changed && retarget_pending(&r, now) != ERR_OK) {
            rc = err_set(msg, ERR_NOMEM, "out of memory");
            goto out;
        }
        rc = finish_due(&r, now, msg);
        if (rc == ERR_OK)
            rc = sim__ready_due(&r, now, msg);
        if (rc == ERR_OK)
            rc = finish_due(&r, now, msg); /* pods ready now with a runtime of 0 */
        if (rc != ERR_OK)
            goto out;
        rc = schedule(&r, now, msg);
        if (rc != ERR_OK)
            goto out;
        if (sample_reasons(&r, now) != ERR_OK) {
            rc = err_set(msg, ERR_NOMEM, "out of memory");
            goto out;
        }
        if (opts->on_progress != NULL)
            opts->on_progress(opts->progress_ud, now, r.done, rec->nwls);
        if (opts->on_instant != NULL)
            opts->on_instant(opts->instant_ud, now, r.s);
    }
    sim_rec_end(rec, now);
    rec->events = r.ev.count;
    rc = sim_events_finish(&r.ev, msg);
out:
    sim__acct_free(r.acct, rec);
    run_fini(&r);
    return rc;
}
