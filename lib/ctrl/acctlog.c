/* acctlog -- the operator's accounting log: one record per admission that ends. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "ctrl/ctrl_int.h"

#include "acct/acct.h"

#include <string.h>

/*
 * Level-based, from the Workload informer: an admission ends when a Workload that held quota --
 * status.admission with QuotaReserved=True, not finished -- no longer does:
 *
 *   held -> Finished=True         finished   (reason: the Finished condition's)
 *   held -> admission cleared     preempted  (Evicted reason Preempted; reason: Preempted's)
 *                                 evicted    (any other eviction; reason: Evicted's)
 *   held -> gone                  deleted
 *
 * These are the moments sluice's engine gives the quota back (ctrl__engine_wl), seen the same
 * way whoever wrote the change (this replica, a previous leader, a user). Only the leader writes,
 * so that two replicas do not both record one admission. What happens while no leader runs is
 * not seen (docs/accounting.md). A failed write is logged and counted, never retried: the
 * record would otherwise block nothing but could be written twice.
 */

static bool held(const ctrl_wl_t *w)
{
    return w != NULL && ctrl_wl_reserved(w) && !w->wl.conditions.finished;
}

/* The condition's lastTransitionTime in Unix ms, or `dflt` when it has none. */
static int64_t cond_ms(const condition_t *c, int64_t dflt)
{
    return c != NULL && c->has_transition_time ? c->transition_time * 1000 : dflt;
}

/* When `w` last entered its queue before being admitted at `admitted`: its creation, or a later
 * eviction or requeue (Evicted / Requeued lastTransitionTime) before the admission. */
static int64_t queued_at(const ctrl_wl_t *w, int64_t admitted)
{
    int64_t q = w->wl.meta.creation_time * 1000;
    static const char *const types[] = {"Evicted", "Requeued"};

    for (size_t i = 0; i < 2; i++) {
        int64_t t = cond_ms(ctrl_wl_cond(w, types[i]), -1);
        if (t > q && t <= admitted)
            q = t;
    }
    return q < admitted ? q : admitted;
}

void ctrl__acct_changed(ctrl_t *c, const ctrl_wl_t *old, const ctrl_wl_t *rec)
{
    const condition_t *qr, *fin, *ev;
    err_msg_t msg = {{0}};
    acct_end_t e;
    int64_t now = ctrl__now_ms();

    if (c->acct == NULL || !c->leader || !held(old) || held(rec))
        return;
    memset(&e, 0, sizeof(e));
    if (rec == NULL) {
        e.outcome = ACCT_DELETED;
        e.ended_ms = now;
    } else if (rec->wl.conditions.finished) {
        fin = ctrl_wl_cond(rec, "Finished");
        e.outcome = ACCT_FINISHED;
        e.reason = fin != NULL ? fin->reason : NULL;
        e.ended_ms = cond_ms(fin, now);
    } else {
        ev = ctrl_wl_cond(rec, "Evicted");
        e.outcome = ACCT_EVICTED;
        e.reason = ev != NULL && strcmp(ev->status, "True") == 0 ? ev->reason : NULL;
        if (e.reason != NULL && strcmp(e.reason, "Preempted") == 0) {
            const condition_t *pr = ctrl_wl_cond(rec, "Preempted");
            e.outcome = ACCT_PREEMPTED;
            e.reason = pr != NULL && pr->reason != NULL ? pr->reason : e.reason;
        }
        e.ended_ms = now; /* the quota was held until the release, which is now */
    }
    qr = ctrl_wl_cond(old, "QuotaReserved");
    e.source = "operator";
    e.workload = old->wl.meta.name;
    e.ns = old->wl.meta.namespace;
    e.uid = old->wl.meta.uid;
    e.local_queue = old->wl.queue_name;
    e.adm = old->wl.admission;
    e.priority_class = old->wl.priority_class;
    e.priority = old->wl.has_priority ? old->wl.priority : 0;
    e.admitted_ms = cond_ms(qr, old->wl.conditions.admitted_time * 1000);
    if (e.admitted_ms > e.ended_ms)
        e.admitted_ms = e.ended_ms; /* whole-second condition times against our ms clock */
    e.queued_ms = queued_at(old, e.admitted_ms);
    if (acct_log_write(c->acct, &e, &msg) != ERR_OK) {
        c->stats.acct_failed++;
        ctrl__log(c, CTRL_LOG_ERROR, "accounting: workload %s/%s: %s", e.ns, e.workload, msg.text);
        return;
    }
    c->stats.acct_written++;
    ctrl__log(c, CTRL_LOG_DEBUG, "accounting: workload %s/%s: %s", e.ns, e.workload,
              acct_outcome_str(e.outcome));
}

err_t ctrl__acct_open(ctrl_t *c, err_msg_t *msg)
{
    if (c->cfg->acct_log == NULL)
        return ERR_OK;
    return acct_log_open(c->cfg->acct_log, false, c->cfg->acct_max_bytes, 5, &c->acct, msg);
}

void ctrl__acct_close(ctrl_t *c)
{
    err_msg_t msg = {{0}};

    if (c->acct != NULL && acct_log_close(c->acct, &msg) != ERR_OK)
        ctrl__log(c, CTRL_LOG_ERROR, "accounting: %s", msg.text);
    c->acct = NULL;
}
