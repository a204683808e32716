/* checks -- admission checks in the operator: the Workload's status.admissionChecks as Kueue's
 * workload controller keeps it, and the verdicts that admit, evict or deactivate. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "ctrl/ctrl_int.h"

#include "ctrl/cond.h"
#include "ctrl/wlstatus.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * Two-phase admission (Kueue pkg/workload/admissionchecks.go, pkg/controller/core
 * workload_controller.go):
 *
 *   engine ADMIT with checks -> status.admission, QuotaReserved=True, Admitted=False
 *                               (UnsatisfiedAdmissionChecks), admissionChecks[] Pending
 *   a check's controller writes each state; on every Workload event ctrl__checks_sync():
 *     any Rejected -> DeactivationTarget: spec.active=false, Evicted DeactivatedDueTo
 *                     AdmissionCheck, Warning event AdmissionCheckRejected (quota freed at once)
 *     any Retry    -> Evicted AdmissionCheck "Evicted due to AdmissionCheck(s) in Retry state:
 *                     ..." (the Job reconciler releases the quota, checks reset to Pending,
 *                     requeued with the eviction time as its queue-order timestamp)
 *     all Ready    -> Admitted=True; the Job reconciler starts the job with the checks'
 *                     podSetUpdates merged into its pod templates
 */

const char *ctrl__check_state_name(check_state_t s)
{
    switch (s) {
    case CHECK_STATE_READY:
        return "Ready";
    case CHECK_STATE_RETRY:
        return "Retry";
    case CHECK_STATE_REJECTED:
        return "Rejected";
    case CHECK_STATE_PENDING:
        break;
    }
    return "Pending";
}

static const admission_check_state_t *find_state(const workload_t *wl, const char *name)
{
    for (size_t i = 0; i < wl->ncheck_states; i++)
        if (wl->check_states[i].name != NULL && strcmp(wl->check_states[i].name, name) == 0)
            return &wl->check_states[i];
    return NULL;
}

static json_t *state_json(const char *name, check_state_t st, const char *message, int64_t t_s)
{
    char ts[32];

    return json_pack("{s:s,s:s,s:s,s:s}", "name", name, "state", ctrl__check_state_name(st),
                     "lastTransitionTime", cond_time_str(t_s, ts, sizeof(ts)), "message",
                     message != NULL ? message : "");
}

static json_t *toleration_json(const toleration_t *tl)
{
    json_t *o = json_object();

    if (o == NULL || (tl->key != NULL && json_object_set_new(o, "key", json_string(tl->key))) ||
        json_object_set_new(o, "operator",
                            json_string(tl->op == TOLERATION_OP_EXISTS ? "Exists" : "Equal")) ||
        (tl->value != NULL && json_object_set_new(o, "value", json_string(tl->value))) ||
        (tl->effect != TAINT_EFFECT_ANY &&
         json_object_set_new(o, "effect",
                             json_string(tl->effect == TAINT_EFFECT_NO_SCHEDULE ? "NoSchedule"
                                         : tl->effect == TAINT_EFFECT_PREFER_NO_SCHEDULE
                                             ? "PreferNoSchedule"
                                             : "NoExecute"))) ||
        (tl->has_seconds &&
         json_object_set_new(o, "tolerationSeconds", json_integer(tl->seconds)))) {
        json_decref(o);
        return NULL;
    }
    return o;
}

/* A key/value map as a JSON object; an empty map is left out (false only on out-of-memory). */
static bool kv_put(json_t *dst, const char *field, const kv_list_t *l)
{
    json_t *o;

    if (l->len == 0)
        return true;
    o = json_object();
    for (size_t i = 0; i < l->len && o != NULL; i++)
        if (json_object_set_new(o, l->items[i].key, json_string(l->items[i].value)) != 0) {
            json_decref(o);
            o = NULL;
        }
    return o != NULL && json_object_set_new(dst, field, o) == 0;
}

static json_t *updates_json(const admission_check_state_t *s)
{
    json_t *out = json_array();

    for (size_t u = 0; u < s->nupdates && out != NULL; u++) {
        const pod_set_update_t *up = &s->updates[u];
        json_t *o = json_pack("{s:s}", "name", up->name != NULL ? up->name : "");
        json_t *tols = up->ntolerations > 0 ? json_array() : NULL;
        bool ok = o != NULL && kv_put(o, "labels", &up->labels) &&
                  kv_put(o, "annotations", &up->annotations) &&
                  kv_put(o, "nodeSelector", &up->node_selector) &&
                  (up->ntolerations == 0 || tols != NULL);
        for (size_t t = 0; ok && t < up->ntolerations; t++)
            ok = json_array_append_new(tols, toleration_json(&up->tolerations[t])) == 0;
        if (ok && tols != NULL) {
            ok = json_object_set_new(o, "tolerations", tols) == 0;
            tols = NULL;
        }
        json_decref(tols);
        if (!ok || json_array_append_new(out, o) != 0) {
            if (!ok)
                json_decref(o);
            json_decref(out);
            out = NULL;
        }
    }
    return out;
}

/* Check state `s` as a whole status.admissionChecks entry: Kueue keeps an entry as its controller
 * wrote it (podSetUpdates, requeueAfterSeconds, retryCount) until an eviction resets it. */
static json_t *entry_json(const admission_check_state_t *s, int64_t default_t_s)
{
    json_t *o = state_json(s->name, s->state, s->message,
                           s->transition_time > 0 ? s->transition_time : default_t_s);

    if (o != NULL && s->nupdates > 0 &&
        json_object_set_new(o, "podSetUpdates", updates_json(s)) != 0) {
        json_decref(o);
        return NULL;
    }
    if (o != NULL &&
        ((s->has_requeue_after &&
          json_object_set_new(o, "requeueAfterSeconds", json_integer(s->requeue_after_s))) ||
         (s->has_retry_count &&
          json_object_set_new(o, "retryCount", json_integer(s->retry_count))))) {
        json_decref(o);
        return NULL;
    }
    return o;
}

json_t *ctrl__checks_entry(const admission_check_state_t *s, int64_t default_t_s)
{
    return entry_json(s, default_t_s);
}

json_t *ctrl__checks_reserve_list(const workload_t *wl, char *const *names, size_t n, int64_t now_s)
{
    json_t *out = json_array();

    /* Kueue's syncAdmissionCheckConditions: the checks that apply, sorted by name (the engine
     * gives them so), a known one kept whole, a new one Pending. */
    for (size_t i = 0; i < n && out != NULL; i++) {
        const admission_check_state_t *cur = find_state(wl, names[i]);
        json_t *item = cur != NULL ? entry_json(cur, now_s)
                                   : state_json(names[i], CHECK_STATE_PENDING, "", now_s);
        if (json_array_append_new(out, item) != 0) {
            json_decref(out);
            out = NULL;
        }
    }
    return out;
}

json_t *ctrl__checks_reset_list(const workload_t *wl, int64_t now_s)
{
    json_t *out;
    bool changed = false;
    char msg[128];

    for (size_t i = 0; i < wl->ncheck_states; i++)
        changed = changed || wl->check_states[i].state != CHECK_STATE_PENDING;
    if (!changed)
        return NULL;
    out = json_array();
    /* Kueue's resetChecksOnEviction: a Pending check is kept whole; every other one goes back to
     * Pending saying what it was, its podSetUpdates dropped, its requeueAfterSeconds kept, and
     * its retryCount one higher when it was Retry (gone otherwise). */
    for (size_t i = 0; i < wl->ncheck_states && out != NULL; i++) {
        const admission_check_state_t *s = &wl->check_states[i];
        json_t *item;
        if (s->state == CHECK_STATE_PENDING) {
            item = entry_json(s, now_s);
        } else {
            admission_check_state_t r = {0};
            snprintf(msg, sizeof(msg), "Reset to Pending after eviction. Previously: %s",
                     ctrl__check_state_name(s->state));
            r.name = s->name;
            r.state = CHECK_STATE_PENDING;
            r.message = msg;
            r.transition_time = now_s;
            r.has_requeue_after = s->has_requeue_after;
            r.requeue_after_s = s->requeue_after_s;
            if (s->state == CHECK_STATE_RETRY) {
                r.has_retry_count = true;
                r.retry_count = s->has_retry_count && s->retry_count < INT32_MAX
                                    ? s->retry_count + 1
                                : s->has_retry_count ? INT32_MAX
                                                     : 1;
            }
            item = entry_json(&r, now_s);
        }
        if (json_array_append_new(out, item) != 0) {
            json_decref(out);
            out = NULL;
        }
    }
    return out;
}

int64_t ctrl__checks_retry_at(const workload_t *wl)
{
    int64_t max = 0;

    /* Kueue's GetMaxRetryTime: the latest lastTransitionTime + requeueAfterSeconds of the checks
     * in Retry that set a delay; 0 when none. */
    for (size_t i = 0; i < wl->ncheck_states; i++) {
        const admission_check_state_t *s = &wl->check_states[i];
        if (s->state != CHECK_STATE_RETRY || !s->has_requeue_after || s->transition_time <= 0)
            continue;
        if (s->transition_time + s->requeue_after_s > max)
            max = s->transition_time + s->requeue_after_s;
    }
    return max;
}

int64_t ctrl__checks_requeue_at_update(const workload_t *wl, int64_t requeue_at_s, int64_t now_ms)
{
    int64_t max = ctrl__checks_retry_at(wl);

    /* Kueue's NeedsRequeueAtUpdate: only a later time, and only one still to come */
    if (max <= 0 || max * 1000 <= now_ms || max <= requeue_at_s)
        return 0;
    return max;
}

void ctrl__checks_requeue_at(ctrl_t *c, const char *key, const ctrl_wl_t *w)
{
    int64_t at = ctrl__checks_requeue_at_update(&w->wl, w->requeue_at, ctrl__now_ms());
    const char *rv = w->wl.meta.resource_version;
    char ts[32];
    json_t *p;

    if (at == 0)
        return;
    /* A merge patch: the count stays; at the version read, so a newer one is seen first. */
    p = json_pack("{s:{s:s*},s:{s:{s:s}}}", "metadata", "resourceVersion", rv, "status",
                  "requeueState", "requeueAt", cond_time_str(at, ts, sizeof(ts)));
    ctrl__log(c, CTRL_LOG_INFO,
              "workload %s: an admission check in Retry moves requeueState.requeueAt to %s", key,
              ts);
    ctrl__wl_status(c, CTRL_OP_WL_CHECKS, key, p);
}

/* Kueue's buildAdmissionChecksMessage: `AdmissionCheck(s) in <State> state: "a" (msg); "b"`,
 * the checks in `names` (name order) that are in state `st`. */
static void verdict_message(const workload_t *wl, char *const *names, size_t n, check_state_t st,
                            char *buf, size_t cap)
{
    size_t count = 0, off;

    for (size_t i = 0; i < n; i++) {
        const admission_check_state_t *s = find_state(wl, names[i]);
        count += s != NULL && s->state == st;
    }
    off = (size_t)snprintf(buf, cap,
                           "%s in %s state: ", count > 1 ? "AdmissionChecks" : "AdmissionCheck",
                           ctrl__check_state_name(st));
    for (size_t i = 0, k = 0; i < n && off < cap; i++) {
        const admission_check_state_t *s = find_state(wl, names[i]);
        int w;
        if (s == NULL || s->state != st)
            continue;
        if (s->message != NULL && s->message[0] != '\0')
            w = snprintf(buf + off, cap - off, "%s\"%s\" (%s)", k > 0 ? "; " : "", names[i],
                         s->message);
        else
            w = snprintf(buf + off, cap - off, "%s\"%s\"", k > 0 ? "; " : "", names[i]);
        if (w < 0)
            break;
        off += (size_t)w;
        k++;
    }
}

void ctrl__checks_sync(ctrl_t *c, const char *key, const ctrl_wl_t *w)
{
    sched_wl_info_t info;
    bool rejected = false, retry = false, ready = true;
    char msg[1024];
    int64_t now = ctrl__now_ms();

    if (sched_workload_info(c->sched, key, &info, NULL) != ERR_OK ||
        info.state != SCHED_WL_ADMITTED || info.nchecks == 0 || ctrl__busy(c, CTRL_WORKLOAD, key) ||
        util_hmap_get(&c->evictions, key) != NULL || w->wl.conditions.evicted)
        return;
    for (size_t i = 0; i < info.nchecks; i++) {
        const admission_check_state_t *s = find_state(&w->wl, info.checks[i]);
        check_state_t st = s != NULL ? s->state : CHECK_STATE_PENDING;
        rejected = rejected || st == CHECK_STATE_REJECTED;
        retry = retry || st == CHECK_STATE_RETRY;
        ready = ready && st == CHECK_STATE_READY;
    }
    if (rejected) {
        verdict_message(&w->wl, info.checks, info.nchecks, CHECK_STATE_REJECTED, msg, sizeof(msg));
        if (info.awaiting_checks &&
            sched_workload_checks(c->sched, key, CHECK_STATE_REJECTED, now, NULL) == ERR_OK)
            ctrl__metrics_release(c, key, now); /* the engine freed the quota now */
        ctrl__event(c, CTRL_WORKLOAD, &w->wl.meta, "Warning", "AdmissionCheckRejected",
                    "Deactivated due to %s", msg);
        ctrl__log(c, CTRL_LOG_INFO, "workload %s: DeactivatedDueToAdmissionCheck: %s", key, msg);
        ctrl__deactivate(c, key, "DeactivatedDueToAdmissionCheck", msg, NULL);
        c->queue_dirty = true;
        return;
    }
    if (retry) {
        char full[1100];
        json_t *e;
        int64_t retry_at;
        verdict_message(&w->wl, info.checks, info.nchecks, CHECK_STATE_RETRY, msg, sizeof(msg));
        snprintf(full, sizeof(full), "Evicted due to %s", msg);
        if (info.awaiting_checks)
            sched_workload_checks(c->sched, key, CHECK_STATE_RETRY, now, NULL);
        else
            sched_workload_evict(c->sched, key, NULL); /* Kueue evicts an admitted one too */
        e = json_pack("{s:s,s:s,s:s}", "reason", "AdmissionCheck", "preempt", "", "message", full);
        /* Kueue's NeedsRequeueAtUpdate: a delay a Retry check asks for (requeueAfterSeconds from
         * its lastTransitionTime) becomes status.requeueState.requeueAt when it is later than
         * now and than the one set; the count is not touched. Written with the eviction, and
         * the release then leaves the Workload Requeued=False until that time. */
        retry_at = ctrl__checks_retry_at(&w->wl);
        if (e != NULL && retry_at * 1000 > now && retry_at > w->requeue_at) {
            char ts[32];
            if (json_object_set_new(e, "requeueState",
                                    json_pack("{s:s}", "requeueAt",
                                              cond_time_str(retry_at, ts, sizeof(ts)))) != 0) {
                json_decref(e);
                e = NULL;
            }
        }
        if (ctrl__eviction_set(c, key, e) != ERR_OK)
            ctrl__log(c, CTRL_LOG_ERROR, "out of memory recording the eviction of %s", key);
        ctrl__log(c, CTRL_LOG_INFO, "workload %s: AdmissionCheck: %s", key, full);
        c->queue_dirty = true;
        return;
    }
    if (!ready || w->wl.conditions.admitted)
        return;
    if (info.awaiting_checks)
        sched_workload_checks(c->sched, key, CHECK_STATE_READY, now, NULL);
    {
        bool changed = false;
        json_t *view = ctrl_wl_json(w);
        json_t *patch = view ? wlstatus_cond_patch(view, "Admitted", "True", "Admitted",
                                                   "The workload is admitted", now / 1000, &changed)
                             : NULL;
        json_decref(view);
        if (patch != NULL) {
            ctrl__wl_status(c, CTRL_OP_WL_CHECKS, key, patch);
            ctrl__event(c, CTRL_WORKLOAD, &w->wl.meta, "Normal", "Admitted",
                        "Admitted by ClusterQueue %s",
                        w->wl.admission != NULL ? w->wl.admission->cluster_queue : "");
            ctrl__log(c, CTRL_LOG_INFO, "workload %s: admission checks ready: admitted", key);
        }
    }
}

err_t ctrl__checks_podset_updates(const workload_t *wl, const char *podset, json_t *nodes,
                                  json_t *tols, json_t *labels, json_t *annotations, err_msg_t *msg)
{
    /* Kueue merges every check's podSetUpdates for the pod set into its template on start; a
     * key set twice to different values cannot be satisfied. */
    for (size_t i = 0; i < wl->ncheck_states; i++) {
        const admission_check_state_t *s = &wl->check_states[i];
        for (size_t u = 0; u < s->nupdates; u++) {
            const pod_set_update_t *up = &s->updates[u];
            const kv_list_t *maps[3] = {&up->node_selector, &up->labels, &up->annotations};
            json_t *dst[3] = {nodes, labels, annotations};
            if (up->name == NULL || strcmp(up->name, podset) != 0)
                continue;
            for (int m = 0; m < 3; m++) {
                for (size_t k = 0; k < maps[m]->len; k++) {
                    const kv_t *kv = &maps[m]->items[k];
                    const char *have = json_string_value(json_object_get(dst[m], kv->key));
                    if (have != NULL && strcmp(have, kv->value) != 0)
                        return err_set(msg, ERR_CONFLICT,
                                       "invalid %s: conflict for key=%s, value1=%s, value2=%s",
                                       m == 0   ? "nodeSelector"
                                       : m == 1 ? "labels"
                                                : "annotations",
                                       kv->key, have, kv->value);
                    if (json_object_set_new(dst[m], kv->key, json_string(kv->value)) != 0)
                        return err_set(msg, ERR_NOMEM, "out of memory");
                }
            }
            for (size_t t = 0; t < up->ntolerations; t++) {
                json_t *o = toleration_json(&up->tolerations[t]);
                if (o == NULL)
                    return err_set(msg, ERR_NOMEM, "out of memory");
                bool dup = false;
                size_t x;
                json_t *h;
                json_array_foreach(tols, x, h) dup = dup || json_equal(h, o);
                if (dup)
                    json_decref(o);
                else if (json_array_append_new(tols, o) != 0)
                    return err_set(msg, ERR_NOMEM, "out of memory");
            }
        }
    }
    return ERR_OK;
}
