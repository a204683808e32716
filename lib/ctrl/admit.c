/* admit -- engine cycles to API writes: admissions, evictions, pending explanations, statuses. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "ctrl/ctrl_int.h"

#include "ctrl/cond.h"
#include "ctrl/podsready.h"
#include "ctrl/queuestatus.h"
#include "ctrl/wlstatus.h"
#include "jobs/job_workload.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/*
 * ADMIT: the engine has already counted the usage ("assume", as Kueue's cache does). The write
 * carries the resourceVersion the decision saw. If the API refuses it (a 4xx that says it was
 * not applied), the engine forgets the admission and re-reads the Workload from the freshest
 * view. If the outcome is unknown (no answer, 5xx, 408, 409), the quota stays held and a GET
 * (c->verify) says what the API holds -- so usage in the engine is never lower than what the
 * API records, and a Workload is admitted in the API at most once per decision.
 *
 * PREEMPT/EVICT: recorded in c->evictions and written (Evicted, Preempted) until the Workload
 * shows them; the Job reconciler then stops the Job and releases the quota.
 */

/* A ClusterQueue's or LocalQueue's status is computed at most this often (and written only
 * when it changed, within the writer's STATUS budget). */
#define QUEUE_STATUS_INTERVAL_MS 10000

/* The engine's admission of `key` was not (and will not be) written: forget it. */
static void revert(ctrl_t *c, const char *key)
{
    if (ctrl__wl(c, key) == NULL) {
        int64_t now = ctrl__now_ms();
        ctrl__metrics_release(c, key, now);
        sched_workload_delete(c->sched, key, now, NULL); /* gone meanwhile */
    } else {
        ctrl__unadmit(c, key);
    }
}

static void verify_key(ctrl_t *c, const char *key, uint64_t wait);

static void admit(ctrl_t *c, const sched_decision_t *d, int64_t now_ms)
{
    const ctrl_wl_t *w = ctrl__wl(c, d->workload);
    json_t *view = NULL, *patch = NULL;
    ctrl_op_t *op;

    if (w == NULL || !w->valid || ctrl__busy(c, CTRL_WORKLOAD, d->workload)) {
        revert(c, d->workload);
        return;
    }
    if (ctrl_wl_reserved(w)) {
        /* Admitted in the API by someone else meanwhile: the engine takes the API's
         * assignment from a fresh read instead of its own decision. */
        if (ctrl__busy_set(c, CTRL_WORKLOAD, d->workload) == ERR_OK)
            verify_key(c, d->workload, 0);
        else
            revert(c, d->workload);
        return;
    }
    view = ctrl_wl_json(w);
    if (d->nchecks > 0) {
        /* Quota reserved; Admitted once every check is Ready (checks.c). */
        json_t *list = ctrl__checks_reserve_list(&w->wl, d->checks, d->nchecks, now_ms / 1000);
        patch =
            view && list ? wlstatus_reserve_patch(view, &d->admission, list, now_ms / 1000) : NULL;
        json_decref(list);
    } else {
        patch = view ? wlstatus_admit_patch(view, &d->admission, now_ms / 1000) : NULL;
    }
    json_decref(view);
    op = patch ? ctrl__op_new(c, CTRL_OP_WL_ADMIT, CTRL_WORKLOAD, d->workload, CTRL_WORKLOAD,
                              d->workload)
               : NULL;
    if (op == NULL) {
        json_decref(patch);
        revert(c, d->workload);
        return;
    }
    op->data = json_pack("{s:s,s:b,s:b}", "clusterQueue", d->cluster_queue, "borrowing",
                         d->borrowing, "checks", d->nchecks > 0);
    if (!ctrl__patch(c, op, "status", patch))
        revert(c, d->workload);
    json_decref(patch);
}

static void record_eviction(ctrl_t *c, const sched_decision_t *d)
{
    const char *reason = d->kind == SCHED_DECISION_PREEMPT ? "Preempted"
                         : d->reason_str != NULL           ? d->reason_str
                                                           : "Evicted";
    json_t *e =
        json_pack("{s:s,s:s,s:s}", "reason", reason, "preempt",
                  d->kind == SCHED_DECISION_PREEMPT ? sched_preempt_reason_str(d->reason) : "",
                  "message", d->message ? d->message : "");

    if (ctrl__eviction_set(c, d->workload, e) != ERR_OK)
        ctrl__log(c, CTRL_LOG_ERROR, "out of memory recording the eviction of %s", d->workload);
    ctrl__log(c, CTRL_LOG_INFO, "workload %s: %s: %s", d->workload, reason,
              d->message ? d->message : "");
}

void ctrl__deactivate(ctrl_t *c, const char *key, const char *reason, const char *message,
                      json_t *requeue_state)
{
    json_t *patch = json_pack("{s:{s:b}}", "spec", "active", 0);
    json_t *e = json_pack("{s:s,s:s,s:s}", "reason", reason, "preempt", "", "message", message);
    ctrl_op_t *op;

    if (e != NULL && requeue_state != NULL &&
        json_object_set(e, "requeueState", requeue_state) != 0) {
        json_decref(e);
        e = NULL;
    }
    if (ctrl__eviction_set(c, key, e) != ERR_OK)
        ctrl__log(c, CTRL_LOG_ERROR, "out of memory recording the deactivation of %s", key);
    op = patch ? ctrl__op_new(c, CTRL_OP_WL_DEACTIVATE, CTRL_WORKLOAD, key, 0, NULL) : NULL;
    if (op != NULL)
        ctrl__patch(c, op, NULL, patch);
    json_decref(patch);
}

static void deactivate(ctrl_t *c, const sched_decision_t *d)
{
    const ctrl_wl_t *w = ctrl__wl(c, d->workload);

    if (w != NULL)
        ctrl__event(c, CTRL_WORKLOAD, &w->wl.meta, "Warning", "MaximumExecutionTimeExceeded",
                    "The maximum execution time (%s) exceeded",
                    d->message ? d->message : "spec.maximumExecutionTimeSeconds");
    ctrl__log(c, CTRL_LOG_INFO, "workload %s: DeactivatedDueToMaximumExecutionTimeExceeded: %s",
              d->workload, d->message ? d->message : "exceeded the maximum execution time");
    ctrl__deactivate(c, d->workload, "DeactivatedDueToMaximumExecutionTimeExceeded",
                     d->message ? d->message : "exceeded the maximum execution time", NULL);
}

/*
 * One call of ctrl__cycle() runs the engine until it decides nothing more, and a later pass of
 * that loop may pick as a victim a workload an earlier pass admitted (a ClusterQueue borrows what
 * is free in its cohort, then another one's head reclaims it). Its admission is not written yet,
 * and now never will be: the engine's quota is released at once (nothing in the API holds it),
 * with neither the admission nor the eviction written. Written one after the other, as before,
 * they cost three writes and an eviction in the API, and raced the Workload's own updates (the
 * benchmark's runner finishing it: 409s). Both decisions are marked done (workload NULL).
 * A victim whose admission write is already on the wire keeps its quota until the eviction is
 * written and released (ctrl__engine_wl(), ctrl__evictions()).
 */
static void undone_in_batch(ctrl_t *c, sched_decisions_t *ds)
{
    util_hmap_t admitted;
    size_t at;

    util_hmap_init(&admitted, 0);
    for (size_t i = 0; i < ds->len; i++) {
        sched_decision_t *d = &ds->items[i];
        if (d->kind == SCHED_DECISION_ADMIT) {
            if (util_hmap_put_index(&admitted, d->workload, i) != ERR_OK)
                break; /* out of memory: the rest is written as decided */
            continue;
        }
        if ((d->kind != SCHED_DECISION_PREEMPT && d->kind != SCHED_DECISION_EVICT) ||
            !util_hmap_get_index(&admitted, d->workload, &at) || ds->items[at].workload == NULL)
            continue;
        c->stats.undone++;
        ctrl__log(c, CTRL_LOG_INFO,
                  "workload %s: %s in the cycle that admitted it: neither written, requeued",
                  d->workload, d->kind == SCHED_DECISION_PREEMPT ? "preempted" : "evicted");
        ctrl__unadmit(c, d->workload); /* EVICTING -> released and queued again */
        util_hmap_del(&admitted, d->workload);
        free(ds->items[at].workload);
        ds->items[at].workload = NULL;
        free(d->workload);
        d->workload = NULL;
    }
    util_hmap_fini(&admitted);
}

void ctrl__cycle(ctrl_t *c)
{
    sched_decisions_t ds;
    err_msg_t msg = {{0}};
    int64_t now = ctrl__now_ms();

    sched_decisions_init(&ds);
    for (int i = 0; i < 256; i++) {
        size_t n = ds.len;
        struct timespec t0, t1;
        err_t rc;
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
        if (i == 0)
            ctrl__metrics_release_due(c, now);
        rc = sched_cycle(c->sched, now, &ds, &msg);
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t1);
        c->stats.cycles++;
        c->stats.engine_ns +=
            (uint64_t)((t1.tv_sec - t0.tv_sec) * 1000000000LL + (t1.tv_nsec - t0.tv_nsec));
        ctrl__metrics_cycle(
            c, &ds, n,
            (uint64_t)((t1.tv_sec - t0.tv_sec) * 1000000000LL + (t1.tv_nsec - t0.tv_nsec)), i == 0);
        if (rc != ERR_OK) {
            /* The decisions made before the failure are whole and already in the engine's
             * state (sched_cycle's contract): they are carried out below. */
            ctrl__log(c, CTRL_LOG_ERROR, "engine: cycle: %s", msg.text);
            break;
        }
        if (ds.len == n)
            break;
    }
    c->stats.decisions += ds.len;
    undone_in_batch(c, &ds);
    for (size_t i = 0; i < ds.len; i++) {
        const sched_decision_t *d = &ds.items[i];
        if (d->workload == NULL)
            continue; /* undone in this batch */
        ctrl__metrics_decision(c, d);
        switch (d->kind) {
        case SCHED_DECISION_ADMIT:
            admit(c, d, now);
            break;
        case SCHED_DECISION_PREEMPT:
        case SCHED_DECISION_EVICT:
            record_eviction(c, d);
            break;
        case SCHED_DECISION_DEACTIVATE:
            deactivate(c, d);
            break;
        case SCHED_DECISION_REPLACE:
            ctrl__log(c, CTRL_LOG_INFO, "workload %s: %s", d->workload,
                      d->message ? d->message : "");
            ctrl__wl_status(c, CTRL_OP_WL_REPLACE, d->workload,
                            wlstatus_replace_patch(&d->admission));
            break;
        }
        c->queue_dirty = true;
    }
    sched_decisions_fini(&ds);
}

void ctrl__evictions(ctrl_t *c)
{
    const char *key;
    void *v;

    /* Deleting the current entry is allowed while iterating; nothing below puts into the map
     * (ctrl__patch only queues or sends, its answer comes from the loop). */
    for (size_t pos = 0; util_hmap_next(&c->evictions, &pos, &key, &v);) {
        json_t *e = v;
        const ctrl_wl_t *w = ctrl__wl(c, key);
        if (w != NULL && ctrl__busy(c, CTRL_WORKLOAD, key))
            continue; /* a write in flight, maybe the admission this eviction undoes */
        if (w == NULL || !ctrl_wl_reserved(w) || w->wl.conditions.finished) {
            ctrl__eviction_drop(c, key); /* gone, released or done */
            continue;
        }
        if (w->wl.conditions.evicted) {
            ctrl__mark_wl(c, key); /* written: the Job side takes over */
            ctrl__eviction_drop(c, key);
            continue;
        }
        {
            json_t *view = ctrl_wl_json(w);
            json_t *patch =
                view ? wlstatus_evict_patch(view, json_string_value(json_object_get(e, "reason")),
                                            json_string_value(json_object_get(e, "preempt")),
                                            json_string_value(json_object_get(e, "message")),
                                            ctrl__now_ms() / 1000)
                     : NULL;
            json_t *rs = json_object_get(e, "requeueState");
            json_t *reset = ctrl__checks_reset_list(&w->wl, ctrl__now_ms() / 1000);
            ctrl_op_t *op;
            json_decref(view);
            /* Every eviction sets the admission checks back to Pending, as Kueue's. */
            if (patch != NULL && reset != NULL &&
                json_object_set(json_object_get(patch, "status"), "admissionChecks", reset) != 0) {
                json_decref(patch);
                patch = NULL;
            }
            json_decref(reset);
            /* PodsReady timeout: the requeue count and time go with the eviction, as Kueue. */
            if (patch != NULL && rs != NULL &&
                json_object_set(json_object_get(patch, "status"), "requeueState", rs) != 0) {
                json_decref(patch);
                patch = NULL;
            }
            op = patch ? ctrl__op_new(c, CTRL_OP_WL_EVICT, CTRL_WORKLOAD, key, CTRL_WORKLOAD, key)
                       : NULL;
            if (op != NULL) {
                op->data = json_incref(e);
                ctrl__patch(c, op, "status", patch);
            }
            json_decref(patch);
        }
    }
}

/* Did the API refuse the admission write without applying it? A 4xx answer says so -- but not
 * a 408 (the server gave up waiting, maybe after applying), and not a 409: the write carries
 * the resourceVersion the decision saw, and a transport that re-sent it after a lost answer
 * (libcurl re-sends a request whose reused connection died) meets its own first attempt. No
 * answer, a reset or a 5xx say nothing either: the write may have landed. */
static bool refused(const kube_result_t *res)
{
    return res->status >= 400 && res->status < 500 && res->status != 408 && res->status != 409;
}

/* The admission write (or verification) `op` ended without telling whether the admission
 * landed. The engine keeps the quota -- admitting another workload into it could overcommit the
 * queue if the write did land -- until a GET of the Workload says what the API holds. The busy
 * key stays held in between (so nothing else writes the Workload and ctrl__engine_wl() does not
 * revert it), and the GETs back off like a failing reconcile. */
static void verify_key(ctrl_t *c, const char *key, uint64_t wait)
{
    if (util_hmap_put_index(&c->verify, key, (size_t)(uv_now(c->loop) + wait)) != ERR_OK)
        revert(c, key); /* out of memory: the watch corrects the engine later */
}

static void verify_later(ctrl_t *c, ctrl_op_t *op)
{
    uint64_t wait = 0;

    if (op->op == CTRL_OP_WL_VERIFY) {
        wait = 200;
        for (uint32_t i = 0; i < ctrl_wq_failures(&c->wls_q, op->key) && wait < 30000; i++)
            wait *= 2;
    }
    verify_key(c, op->key, wait);
    free(op->busy); /* the busy entry itself stays set until the verification is done */
    op->busy = NULL;
}

static bool send_get(ctrl_op_t *op)
{
    char ns[256];
    const char *slash = strchr(op->key, '/');

    if (slash == NULL)
        return false;
    snprintf(ns, sizeof(ns), "%.*s", (int)(slash - op->key), op->key);
    return kube_get(op->c->client, &op->c->res[CTRL_WORKLOAD], ns, slash + 1, NULL, ctrl__on_done,
                    op, NULL, NULL) == ERR_OK;
}

void ctrl__verifications(ctrl_t *c)
{
    uint64_t now = uv_now(c->loop);
    const char *key;
    size_t due;

    for (size_t pos = 0; util_hmap_next(&c->verify, &pos, &key, NULL);) {
        char k[CTRL_KEY_MAX];
        ctrl_op_t *op;
        if (!util_hmap_get_index(&c->verify, key, &due) || (uint64_t)due > now)
            continue;
        op = ctrl__op_new(c, CTRL_OP_WL_VERIFY, CTRL_WORKLOAD, key, CTRL_WORKLOAD, key);
        if (op == NULL)
            return; /* out of memory: the next pass tries again */
        op->verb = "get";
        op->send = send_get;
        snprintf(k, sizeof(k), "%s", key);
        util_hmap_del(&c->verify, key); /* deleting the current entry is allowed */
        if (!ctrl__submit(c, op)) {
            /* Not sent (and the op's release freed the busy key): hold the Workload again and
             * ask later. Putting ends the walk; the next pass goes on. */
            if (ctrl__busy_set(c, CTRL_WORKLOAD, k) == ERR_OK)
                verify_key(c, k, 1000);
            else
                revert(c, k);
            return;
        }
    }
}

void ctrl__admit_done(ctrl_t *c, ctrl_op_t *op, const kube_result_t *res)
{
    ctrl_wl_t *w = util_hmap_get(&c->overlay[CTRL_WORKLOAD], op->key); /* the answer */

    if (res->canceled)
        return;
    switch (op->op) {
    case CTRL_OP_WL_ADMIT:
        if (res->err != ERR_OK && !refused(res)) {
            c->stats.admit_unknown++;
            ctrl__log(c, CTRL_LOG_INFO,
                      "workload %s: admission write outcome unknown (%s): quota held until a GET "
                      "says what the API has",
                      op->key, res->msg.text);
            verify_later(c, op);
            return;
        }
        if (res->err != ERR_OK) {
            c->stats.admit_conflicts++;
            ctrl__log(c, CTRL_LOG_INFO, "workload %s: admission not written (%s): re-evaluating",
                      op->key, err_str(res->err));
            revert(c, op->key);
            break;
        }
        c->stats.admitted++;
        ctrl__metrics_admitted(c, op->key,
                               json_string_value(json_object_get(op->data, "clusterQueue")));
        ctrl__log(c, CTRL_LOG_INFO, "workload %s: admitted to %s%s", op->key,
                  json_string_value(json_object_get(op->data, "clusterQueue")),
                  json_is_true(json_object_get(op->data, "borrowing")) ? " (borrowing)" : "");
        if (w != NULL) {
            ctrl__event(c, CTRL_WORKLOAD, &w->wl.meta, "Normal", "QuotaReserved",
                        "Quota reserved in ClusterQueue %s",
                        json_string_value(json_object_get(op->data, "clusterQueue")));
            if (!json_is_true(json_object_get(op->data, "checks")))
                ctrl__event(c, CTRL_WORKLOAD, &w->wl.meta, "Normal", "Admitted",
                            "Admitted by ClusterQueue %s",
                            json_string_value(json_object_get(op->data, "clusterQueue")));
        }
        break;
    case CTRL_OP_WL_EVICT:
        if (res->err == ERR_OK) {
            const char *reason = json_string_value(json_object_get(op->data, "reason"));
            c->stats.evicted++;
            ctrl__metrics_evicted(c, op->key, reason);
            if (w != NULL && strcmp(reason, "Preempted") == 0)
                ctrl__event(c, CTRL_WORKLOAD, &w->wl.meta, "Normal", "Preempted", "%s",
                            json_string_value(json_object_get(op->data, "message")));
            if (w != NULL) {
                char ev[128];
                snprintf(ev, sizeof(ev), "EvictedDueTo%s", reason); /* Kueue's event reason */
                ctrl__event(c, CTRL_WORKLOAD, &w->wl.meta, "Normal", ev, "%s",
                            json_string_value(json_object_get(op->data, "message")));
            }
        }
        break;
    case CTRL_OP_WL_VERIFY:
        if (res->err == ERR_NOT_FOUND) {
            revert(c, op->key); /* deleted meanwhile: the engine forgets it */
        } else if (res->err != ERR_OK) {
            verify_later(c, op); /* still unknown: ask again after a backoff */
            return;
        } else if (w != NULL && ctrl_wl_reserved(w)) {
            /* It landed (the answer was lost, not the write), or someone else admitted it: the
             * engine takes the API's assignment, which may differ from its own decision. */
            c->stats.admitted++;
            ctrl__metrics_admitted(c, op->key,
                                   w->wl.admission ? w->wl.admission->cluster_queue : NULL);
            ctrl__log(c, CTRL_LOG_INFO, "workload %s: admission found written", op->key);
            free(op->busy); /* released before feeding, so the engine follows the API */
            ctrl__busy_clear(c, CTRL_WORKLOAD, op->key);
            op->busy = NULL;
            ctrl__metrics_release(c, op->key, ctrl__now_ms()); /* re-added from the API's view */
            sched_workload_delete(c->sched, op->key, ctrl__now_ms(), NULL);
            ctrl__engine_wl(c, op->key, w);
        } else {
            c->stats.admit_conflicts++;
            ctrl__log(c, CTRL_LOG_INFO, "workload %s: admission not written: re-evaluating",
                      op->key);
            revert(c, op->key);
        }
        break;
    default:
        break;
    }
    ctrl__mark_wl_and_job(c, op->key);
}

/* ---- statuses ---------------------------------------------------------------------------- */

typedef struct pending_ctx_s {
    ctrl_t *c;
    int64_t now_s;
    json_t *blocked_heads; /* blockAdmission: heads that would be admitted, or NULL */
} pending_ctx_t;

static bool on_pending(const sched_wl_info_t *info, void *ud)
{
    pending_ctx_t *p = ud;
    ctrl_t *c = p->c;
    const ctrl_wl_t *w;
    const condition_t *qr, *rq;
    json_t *view, *patch;
    const char *reason = sched_reason_str(info->reason), *message = info->message;
    bool changed = false;
    ctrl_op_t *op;

    if (info->state != SCHED_WL_PENDING || info->reason == SCHED_REASON_NONE)
        return true;
    if (!ctrl__can_write(c, CTRL_WRITE_EXPLAIN))
        return false; /* the budget is spent: the rest in a later pass */
    w = ctrl__wl(c, info->key);
    if (w == NULL || !w->valid || ctrl__busy(c, CTRL_WORKLOAD, info->key) || ctrl_wl_reserved(w) ||
        w->wl.conditions.finished)
        return true;
    rq = ctrl_wl_cond(w, "Requeued");
    if (c->cfg->pods_ready.enabled && rq != NULL && strcmp(rq->status, "False") == 0 &&
        rq->reason != NULL && strcmp(rq->reason, "PodsReadyTimeout") == 0)
        return true; /* in requeue backoff: the eviction's explanation stands, as in Kueue */
    if (json_object_get(p->blocked_heads, info->key) != NULL) {
        reason = "WaitingForPodsReady";
        message = "waiting for all admitted workloads to be in PodsReady condition";
    }
    /* Only news is written: another reason, or a message that says something else than the
     * one written -- not the same words with other numbers (usage moves all the time). */
    qr = ctrl_wl_cond(w, "QuotaReserved");
    if (qr != NULL && qr->reason != NULL && qr->message != NULL &&
        strcmp(qr->reason, reason) == 0 && cond_same_but_numbers(qr->message, message))
        return true;
    view = ctrl_wl_json(w);
    patch = view ? wlstatus_pending_patch(view, reason, message, p->now_s, &changed) : NULL;
    json_decref(view);
    if (patch == NULL)
        return true; /* already says so (or OOM: next time) */
    op = ctrl__op_new(c, CTRL_OP_WL_PENDING, CTRL_WORKLOAD, info->key, CTRL_WORKLOAD, info->key);
    if (op != NULL) {
        op->cls = CTRL_WRITE_EXPLAIN;
        ctrl__patch(c, op, "status", patch);
    }
    json_decref(patch);
    return true;
}

/* Remove our finalizer from the cluster-scoped `kind` object `name` with metadata `m`. */
static void queue_finalizer(ctrl_t *c, ctrl_kind_t kind, const char *name, const object_meta_t *m)
{
    json_t *patch = ctrl__finalizer_patch(m);
    ctrl_op_t *op;

    op = patch ? ctrl__op_new(c, CTRL_OP_QUEUE_FINALIZER, kind, name, kind, name) : NULL;
    if (op != NULL)
        ctrl__patch(c, op, NULL, patch);
    json_decref(patch);
}

/* Is ResourceFlavor `name` named by any ClusterQueue? */
static bool flavor_in_use(ctrl_t *c, const char *name)
{
    const char *key;
    const ctrl_qobj_t *q;

    CTRL_FOREACH(c, CTRL_CQ, key, q)
    {
        if (!q->valid)
            continue;
        for (size_t i = 0; i < q->obj.u.cq.ngroups; i++)
            for (size_t j = 0; j < q->obj.u.cq.groups[i].nflavors; j++)
                if (strcmp(q->obj.u.cq.groups[i].flavors[j].name, name) == 0)
                    return true;
    }
    return false;
}

/* Is it time to look at the status of queue `key` of `kind` again, and may one be written? Each
 * queue is looked at once per QUEUE_STATUS_INTERVAL_MS at most; checking marks the time. */
static bool status_due(ctrl_t *c, ctrl_kind_t kind, const char *key)
{
    char k[CTRL_KEY_MAX + 8];
    uint64_t now = uv_now(c->loop);
    size_t t;

    ctrl__kind_key(kind, key, k, sizeof(k));
    if (util_hmap_get_index(&c->status_checked, k, &t) && now - t < QUEUE_STATUS_INTERVAL_MS)
        return false;
    if (ctrl__busy(c, kind, key) || !ctrl__can_write(c, CTRL_WRITE_STATUS))
        return false;
    return util_hmap_put_index(&c->status_checked, k, (size_t)now) == ERR_OK;
}

/* Write status `st` (consumed) of queue `key` when it differs from `cur`. */
static void write_status(ctrl_t *c, ctrl_kind_t kind, const char *key, json_t *st, json_t *cur)
{
    json_t *patch;
    ctrl_op_t *op;

    if (st == NULL || json_equal(st, cur)) {
        json_decref(st);
        return;
    }
    patch = json_pack("{s:o}", "status", st);
    op = patch ? ctrl__op_new(c, CTRL_OP_QUEUE_STATUS, kind, key, kind, key) : NULL;
    if (op != NULL) {
        op->cls = CTRL_WRITE_STATUS;
        ctrl__patch(c, op, "status", patch);
    }
    json_decref(patch);
}

static void queue_statuses(ctrl_t *c, int64_t now_s)
{
    queuestatus_lqs_t lqs;
    bool collected = false;
    const char *key;
    const ctrl_qobj_t *q;
    ctrl_capacity_t cap;
    int have_cap = 0; /* 0: not computed yet, 1: computed, -1: none (not watched, OOM) */

    CTRL_FOREACH(c, CTRL_CQ, key, q)
    {
        const object_meta_t *m = q->valid ? &q->obj.u.cq.meta : NULL;
        sched_cq_status_t cs;
        if (m == NULL || ctrl__busy(c, CTRL_CQ, key))
            continue;
        if (m->deleting && ctrl_meta_has_finalizer(m) &&
            (sched_cq_status(c->sched, key, &cs, NULL) != ERR_OK || cs.reserving == 0)) {
            queue_finalizer(c, CTRL_CQ, key, m);
            continue;
        }
        if (status_due(c, CTRL_CQ, key)) {
            json_t *st = queuestatus_cq(c->sched, key, q->keep, c->cfg->kueue.fair_sharing, now_s);
            /* Quota against the capacity of the nodes its flavors select (nodewatch.c): computed
             * once per pass, when a ClusterQueue is due. */
            if (have_cap == 0)
                have_cap = ctrl__capacity(c, &cap) == ERR_OK ? 1 : -1;
            if (st != NULL && have_cap == 1 &&
                ctrl__nodes_cq_condition(&cap, key, st, now_s) != ERR_OK) {
                json_decref(st);
                st = NULL;
            }
            write_status(c, CTRL_CQ, key, st, q->keep);
        }
    }
    if (have_cap == 1)
        ctrl__capacity_fini(&cap);
    /* Cohort objects: status.fairSharing (Kueue writes it while fair sharing is on). */
    CTRL_FOREACH(c, CTRL_COHORT, key, q)
    {
        if (q->valid && q->keep != NULL && status_due(c, CTRL_COHORT, key))
            write_status(c, CTRL_COHORT, key,
                         queuestatus_cohort(c->sched, key, q->keep, c->cfg->kueue.fair_sharing),
                         q->keep);
    }
    CTRL_FOREACH(c, CTRL_FLAVOR, key, q)
    {
        const object_meta_t *m = q->valid ? &q->obj.u.flavor.meta : NULL;
        if (m != NULL && m->deleting && ctrl_meta_has_finalizer(m) &&
            !ctrl__busy(c, CTRL_FLAVOR, key) && !flavor_in_use(c, key))
            queue_finalizer(c, CTRL_FLAVOR, key, m);
    }
    /* The LocalQueues' counters take a walk over every workload: only when one is due (they
     * fall due together, QUEUE_STATUS_INTERVAL_MS after the pass that wrote them). */
    CTRL_FOREACH(c, CTRL_LQ, key, q)
    {
        if (!q->valid || !status_due(c, CTRL_LQ, key))
            continue;
        if (!collected && queuestatus_lq_collect(c->sched, &lqs) != ERR_OK)
            return;
        collected = true;
        json_t *st = queuestatus_lq(c->sched, &lqs, key, q->obj.u.lq.cluster_queue,
                                    q->obj.u.lq.stop_policy != STOP_POLICY_NONE, q->keep, now_s);
        /* admission fair sharing: in the same write (Kueue's LocalQueue controller writes it
         * every sampling interval; it changes only then) */
        if (st != NULL && c->cfg->kueue.afs &&
            queuestatus_lq_afs(c->sched, key, ctrl__now_ms(), st) != ERR_OK) {
            json_decref(st);
            st = NULL;
        }
        write_status(c, CTRL_LQ, key, st, q->keep);
    }
    if (collected)
        queuestatus_lqs_fini(&lqs);
}

void ctrl__statuses(ctrl_t *c)
{
    pending_ctx_t p = {c, ctrl__now_ms() / 1000, NULL};

    if (c->blocked) {
        p.blocked_heads = json_object();
        if (p.blocked_heads != NULL)
            ctrl__blocked_heads(c, p.blocked_heads);
    }
    /* Any order: the explanation budget ends the walk, and the next pass starts it again. */
    sched_workloads_unordered(c->sched, on_pending, &p);
    json_decref(p.blocked_heads);
    queue_statuses(c, p.now_s);
    c->queue_dirty = false;
}
