/* podsready -- Kueue's waitForPodsReady as pure functions: condition, timeouts, requeue backoff. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "ctrl/podsready.h"

#include "ctrl/cond.h"
#include "ctrl/wlstatus.h"
#include "model/jsonx.h"
#include "model/waitready.h"

#include <string.h>

/* Kueue's messages (jobframework reconciler.go, workload_controller.go). */
#define MSG_NOT_READY "Not all pods are ready or succeeded"
#define MSG_RECOVERY  "At least one pod has failed, waiting for recovery"
#define MSG_READY     "All pods reached readiness and the workload is running"

static const json_t *conds_of(const json_t *wl)
{
    return json_object_get(json_object_get(wl, "status"), "conditions");
}

static const char *cond_field(const json_t *wl, const char *type, const char *field)
{
    return json_string_value(json_object_get(cond_find(conds_of(wl), type), field));
}

static bool cond_is(const json_t *wl, const char *type, const char *status, const char *reason)
{
    const char *s = cond_field(wl, type, "status"), *r = cond_field(wl, type, "reason");
    return s != NULL && strcmp(s, status) == 0 &&
           (reason == NULL || (r != NULL && strcmp(r, reason) == 0));
}

/* lastTransitionTime of condition `type` in Unix seconds, or -1. */
static int64_t cond_time(const json_t *wl, const char *type)
{
    const char *t = cond_field(wl, type, "lastTransitionTime");
    int64_t s;

    return t != NULL && jsonx_parse_time(t, &s) ? s : -1;
}

static int64_t int_or(const json_t *o, const char *key, int64_t dflt)
{
    const json_t *v = json_object_get(o, key);
    return json_is_integer(v) ? json_integer_value(v) : dflt;
}

bool podsready_job_ready(const json_t *job)
{
    const json_t *spec = json_object_get(job, "spec"), *status = json_object_get(job, "status");
    int64_t count = int_or(spec, "parallelism", 1), done;
    const json_t *completions = json_object_get(spec, "completions");

    /* Kueue's podsCount: parallelism, capped by completions (the running Job's parallelism is
     * the admitted count under partial admission, set when it was started). */
    if (json_is_integer(completions) && json_integer_value(completions) < count)
        count = json_integer_value(completions);
    done = int_or(status, "ready", 0) + int_or(status, "succeeded", 0) +
           (int64_t)json_array_size(
               json_object_get(json_object_get(status, "uncountedTerminatedPods"), "succeeded"));
    return done >= count;
}

bool podsready_admitted(const json_t *wl)
{
    return cond_is(wl, "Admitted", "True", NULL) &&
           json_is_object(json_object_get(json_object_get(wl, "status"), "admission"));
}

podsready_cond_t podsready_condition(const json_t *wl, bool ready)
{
    podsready_cond_t c = {"False", "WaitForStart", MSG_NOT_READY};
    const char *reason = cond_field(wl, "PodsReady", "reason");

    if (!podsready_admitted(wl))
        return c; /* not admitted yet, or evicted and released */
    if (ready) {
        c.status = "True";
        c.reason = reason != NULL && (strcmp(reason, "WaitForRecovery") == 0 ||
                                      strcmp(reason, "Recovered") == 0)
                       ? "Recovered"
                       : "Started";
        c.message = MSG_READY;
        return c;
    }
    if (cond_is(wl, "PodsReady", "True", NULL) ||
        cond_is(wl, "PodsReady", "False", "WaitForRecovery")) {
        c.reason = "WaitForRecovery";
        c.message = MSG_RECOVERY;
    }
    return c;
}

podsready_cause_t podsready_deadline(const ctrl_pods_ready_t *cfg, const json_t *wl,
                                     int64_t *deadline_ms)
{
    const json_t *active = json_object_get(json_object_get(wl, "spec"), "active");
    waitready_pods_t pods = WAITREADY_NOT_READY;
    int64_t since, admitted = -1;

    if (!cfg->enabled || !podsready_admitted(wl) || json_is_false(active) ||
        cond_is(wl, "Evicted", "True", NULL) || cond_is(wl, "Finished", "True", NULL) ||
        cond_is(wl, "PodsReady", "True", NULL))
        return PODSREADY_NONE;
    /* The times come from the conditions (whole seconds); the rule is model/waitready.h's. No
     * PodsReady yet, WaitForStart, or Kueue's old reason "PodsReady": since admission. */
    if (cond_is(wl, "PodsReady", "False", "WaitForRecovery")) {
        pods = WAITREADY_RECOVERING;
        since = cond_time(wl, "PodsReady");
    } else {
        since = admitted = cond_time(wl, "Admitted");
    }
    if (since < 0)
        return PODSREADY_NONE;
    switch (waitready_deadline(cfg, pods, admitted * 1000, since * 1000, deadline_ms)) {
    case WAITREADY_WAIT_FOR_START:
        return PODSREADY_WAIT_FOR_START;
    case WAITREADY_WAIT_FOR_RECOVERY:
        return PODSREADY_WAIT_FOR_RECOVERY;
    default:
        return PODSREADY_NONE;
    }
}

int64_t podsready_backoff_s(const ctrl_pods_ready_t *cfg, int32_t count)
{
    return waitready_backoff_s(cfg, count);
}

int32_t podsready_requeue_count(const json_t *wl)
{
    const json_t *c =
        json_object_get(json_object_get(json_object_get(wl, "status"), "requeueState"), "count");
    int64_t n = json_is_integer(c) ? json_integer_value(c) : 0;

    return n < 0 ? 0 : n > INT32_MAX - 1 ? INT32_MAX - 1 : (int32_t)n;
}

bool podsready_limit_exceeded(const ctrl_pods_ready_t *cfg, const json_t *wl)
{
    return waitready_limit_exceeded(cfg, podsready_requeue_count(wl));
}

json_t *podsready_next_requeue_state(const ctrl_pods_ready_t *cfg, const json_t *wl, int64_t now_s)
{
    int32_t n = podsready_requeue_count(wl) + 1;
    char at[32];

    cond_time_str(now_s + podsready_backoff_s(cfg, n), at, sizeof(at));
    return json_pack("{s:i,s:s}", "count", (json_int_t)n, "requeueAt", at);
}

bool podsready_held(const json_t *wl)
{
    return cond_is(wl, "Requeued", "False", "PodsReadyTimeout") ||
           cond_is(wl, "Requeued", "False", "AdmissionCheck");
}

int64_t podsready_requeue_at(const json_t *wl)
{
    const char *t = json_string_value(json_object_get(
        json_object_get(json_object_get(wl, "status"), "requeueState"), "requeueAt"));
    int64_t s;

    return t != NULL && jsonx_parse_time(t, &s) ? s : -1;
}

json_t *podsready_backoff_done_patch(const json_t *wl, int64_t now_s)
{
    bool changed = false;
    json_t *p = wlstatus_cond_patch(wl, "Requeued", "True", "BackoffFinished",
                                    "The workload backoff was finished", now_s, &changed);

    if (p == NULL && !changed) /* already True: only requeueAt goes (a Retry check's, checks.c) */
        p = json_pack(
            "{s:{s:s*},s:{}}", "metadata", "resourceVersion",
            json_string_value(json_object_get(json_object_get(wl, "metadata"), "resourceVersion")),
            "status");
    if (p == NULL)
        return NULL;
    /* A merge patch: null removes requeueAt and keeps count. */
    if (json_object_set_new(json_object_get(p, "status"), "requeueState",
                            json_pack("{s:n}", "requeueAt"))) {
        json_decref(p);
        return NULL;
    }
    return p;
}

int64_t podsready_queue_ts(const ctrl_pods_ready_t *cfg, const json_t *wl, int64_t created_ms)
{
    int64_t t = cond_time(wl, "Evicted");

    if (t < 0)
        return created_ms;
    /* Kueue orders a Workload evicted by a Retry admission check by that eviction, whatever
     * the requeuing strategy (Ordering.GetQueueOrderTimestamp) */
    if (cond_is(wl, "Evicted", "True", "AdmissionCheck"))
        return t * 1000;
    if (!cfg->enabled || !cond_is(wl, "Evicted", "True", "PodsReadyTimeout"))
        return created_ms;
    return waitready_queue_ts(cfg, t * 1000, created_ms);
}
