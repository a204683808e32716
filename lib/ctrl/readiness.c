/* readiness -- waitForPodsReady in the operator: timeouts, requeue backoff, blockAdmission. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "ctrl/ctrl_int.h"

#include "ctrl/cond.h"
#include "ctrl/podsready.h"
#include "ctrl/wlstatus.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * Kueue's workload controller runs these per Workload with a requeue-after; here one scan a
 * second over the Workload cache does (timeouts are whole seconds in the API anyway, from
 * condition lastTransitionTimes). The PodsReady condition itself is written by the Job
 * reconciler (reconcile.c), from the Job's ready pods. Every decision reads only the Workload
 * object, so a restarted leader continues where the last one stopped. The scan reads the typed
 * records and builds the JSON view podsready.h works on only for the few candidates (admitted
 * and not ready, or in backoff):
 *
 *   admitted, PodsReady != True, deadline passed (podsready_deadline)
 *     -> limit not reached: record an eviction (Evicted PodsReadyTimeout + requeueState) and
 *        tell the engine (sched_workload_evict); the Job side stops the Job and releases
 *     -> limit reached: spec.active=false + Evicted DeactivatedDueToRequeuingLimitExceeded
 *   Requeued=False PodsReadyTimeout (the engine holds it), requeueAt passed
 *     -> Requeued=True BackoffFinished; the watch event feeds it back to the engine unheld
 */

/* Is the typed record `w` a candidate for a timeout or the end of a backoff? */
static bool candidate(const ctrl_wl_t *w, bool enabled)
{
    const condition_t *rq;

    if (!w->valid || w->wl.conditions.finished)
        return false;
    rq = ctrl_wl_cond(w, "Requeued");
    if (rq != NULL && strcmp(rq->status, "False") == 0)
        return true;
    if (w->requeue_at > 0 && !ctrl_wl_reserved(w))
        return true; /* a requeueAt a Retry check moved (checks.c): cleared when it passes */
    return enabled && w->wl.admission != NULL && ctrl_wl_is(w, "Admitted") &&
           !ctrl_wl_is(w, "PodsReady");
}

static void on_workload(ctrl_t *c, const char *key, json_t *wl, int64_t now_ms)
{
    const ctrl_pods_ready_t *cfg = &c->cfg->pods_ready;
    int64_t deadline = 0, at;
    podsready_cause_t cause;
    err_msg_t msg = {{0}};

    if ((podsready_held(wl) || podsready_requeue_at(wl) >= 0) && !wlstatus_reserved(wl)) {
        at = podsready_requeue_at(wl);
        if (at < 0 || at * 1000 <= now_ms) {
            json_t *patch = podsready_backoff_done_patch(wl, now_ms / 1000);
            ctrl_op_t *op =
                patch ? ctrl__op_new(c, CTRL_OP_WL_BACKOFF, CTRL_WORKLOAD, key, CTRL_WORKLOAD, key)
                      : NULL;
            if (op != NULL)
                ctrl__patch(c, op, "status", patch);
            json_decref(patch);
        }
        return;
    }
    if (!cfg->enabled)
        return;
    cause = podsready_deadline(cfg, wl, &deadline);
    if (cause == PODSREADY_NONE || now_ms < deadline || ctrl__eviction(c, key) != NULL)
        return;
    if (podsready_limit_exceeded(cfg, wl)) {
        ctrl__log(c, CTRL_LOG_INFO,
                  "workload %s: DeactivatedDueToRequeuingLimitExceeded: PodsReady timeout (%s) "
                  "after %d requeues",
                  key, cause == PODSREADY_WAIT_FOR_START ? "WaitForStart" : "WaitForRecovery",
                  (int)podsready_requeue_count(wl));
        ctrl__deactivate(c, key, "DeactivatedDueToRequeuingLimitExceeded",
                         "The workload is deactivated due to exceeding the maximum number of "
                         "re-queuing retries",
                         json_null());
        return;
    }
    {
        char text[CTRL_KEY_MAX + 64];
        json_t *rs = podsready_next_requeue_state(cfg, wl, now_ms / 1000);
        json_t *e;
        snprintf(text, sizeof(text), "Exceeded the PodsReady timeout %s", key);
        e = rs ? json_pack("{s:s,s:s,s:s,s:o}", "reason", "PodsReadyTimeout", "preempt", "",
                           "message", text, "requeueState", rs)
               : NULL;
        if (ctrl__eviction_set(c, key, e) != ERR_OK) {
            ctrl__log(c, CTRL_LOG_ERROR, "out of memory recording the eviction of %s", key);
            return;
        }
        if (sched_workload_evict(c->sched, key, &msg) != ERR_OK)
            ctrl__log(c, CTRL_LOG_DEBUG, "engine: evict %s: %s", key, msg.text);
        c->queue_dirty = true;
        ctrl__log(c, CTRL_LOG_INFO, "workload %s: PodsReadyTimeout: %s (%s), requeue #%d", key,
                  text, cause == PODSREADY_WAIT_FOR_START ? "WaitForStart" : "WaitForRecovery",
                  (int)podsready_requeue_count(wl) + 1);
    }
}

void ctrl__pods_ready_count(ctrl_t *c, ctrl_wl_t *rec, const ctrl_wl_t *old)
{
    if (old != NULL && old->ready_watched && c->ready_watched > 0)
        c->ready_watched--;
    if (rec != NULL) {
        rec->ready_watched = candidate(rec, c->cfg->pods_ready.enabled);
        c->ready_watched += rec->ready_watched;
    }
}

void ctrl__pods_ready_tick(ctrl_t *c)
{
    int64_t now = ctrl__now_ms();
    const char *key;
    ctrl_wl_t *rec;

    /* Also without waitForPodsReady: the end of a Retry admission check's delay. Nothing to
     * check on in the cache, nothing to walk: at 50,000 Workloads the walk was 10 % of the
     * operator's CPU (docs/performance.md, stop 31). A candidate only our own write has made
     * so far (an overlay record) waits for its watch event, a moment. */
    if (!c->fed || !c->leader || c->writes_stopped || c->closing || c->ready_watched == 0)
        return;
    CTRL_FOREACH(c, CTRL_WORKLOAD, key, rec)
    {
        const ctrl_wl_t *w = ctrl__wl(c, key);
        json_t *view;
        if (w == NULL || !candidate(w, c->cfg->pods_ready.enabled) ||
            ctrl__busy(c, CTRL_WORKLOAD, key))
            continue;
        view = ctrl_wl_json(w);
        if (view != NULL)
            on_workload(c, key, view, now);
        json_decref(view);
    }
}

bool ctrl__admission_blocked(ctrl_t *c)
{
    const char *key;
    ctrl_wl_t *rec;

    if (!c->cfg->pods_ready.enabled || !c->cfg->pods_ready.block_admission)
        return false;
    /* Kueue's PodsReadyForAllAdmittedWorkloads: every admitted Workload has PodsReady=True. */
    CTRL_FOREACH(c, CTRL_WORKLOAD, key, rec)
    {
        const ctrl_wl_t *w = ctrl__wl(c, key);
        if (w != NULL && w->valid && w->wl.admission != NULL && ctrl_wl_is(w, "Admitted") &&
            !w->wl.conditions.finished && !ctrl_wl_is(w, "PodsReady"))
            return true;
    }
    return false;
}

typedef struct heads_ctx_s {
    ctrl_t *c;
    json_t *heads;
} heads_ctx_t;

static bool on_cq_workload(const sched_wl_info_t *info, void *ud)
{
    heads_ctx_t *h = ud;
    const ctrl_wl_t *w;
    const condition_t *rq;

    if (info->state != SCHED_WL_PENDING)
        return true;
    w = ctrl__wl(h->c, info->key);
    rq = w != NULL ? ctrl_wl_cond(w, "Requeued") : NULL;
    if (w == NULL || (rq != NULL && strcmp(rq->status, "False") == 0 && rq->reason != NULL &&
                      strcmp(rq->reason, "PodsReadyTimeout") == 0))
        return true; /* in backoff: never the head */
    json_object_set_new(h->heads, info->key, json_true());
    return false; /* the first pending one in queue order is the head */
}

void ctrl__blocked_heads(ctrl_t *c, json_t *heads)
{
    size_t n = sched_cq_names(c->sched, NULL, 0);
    const char **names = malloc((n ? n : 1) * sizeof(*names));
    heads_ctx_t h = {c, heads};

    if (names == NULL)
        return; /* out of memory: the explanations follow a second later */
    n = sched_cq_names(c->sched, names, n);
    for (size_t i = 0; i < n; i++)
        sched_cq_workloads(c->sched, names[i], on_cq_workload, &h, NULL);
    free(names);
}
