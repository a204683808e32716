/* workqueue -- keys to reconcile, each queued at most once; a key whose reconcile failed comes
 * back after a per-key exponential backoff, as controller-runtime's rate-limited queue. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "ctrl/workqueue.h"

#include <string.h>

err_t ctrl_wq_init(ctrl_wq_t *q, uint64_t base_ms, uint64_t max_ms)
{
    memset(q, 0, sizeof(*q));
    q->base_ms = base_ms ? base_ms : 200;
    q->max_ms = max_ms ? max_ms : 60000;
    q->ready = json_object();
    q->delayed = json_object();
    q->failures = json_object();
    if (q->ready == NULL || q->delayed == NULL || q->failures == NULL) {
        ctrl_wq_fini(q);
        return ERR_NOMEM;
    }
    return ERR_OK;
}

void ctrl_wq_fini(ctrl_wq_t *q)
{
    json_decref(q->ready);
    json_decref(q->delayed);
    json_decref(q->failures);
    q->ready = q->delayed = q->failures = NULL;
}

err_t ctrl_wq_add(ctrl_wq_t *q, const char *key)
{
    if (json_object_set_new(q->ready, key, json_true()) != 0)
        return ERR_NOMEM;
    json_object_del(q->delayed, key);
    return ERR_OK;
}

uint32_t ctrl_wq_failures(const ctrl_wq_t *q, const char *key)
{
    return (uint32_t)json_integer_value(json_object_get(q->failures, key));
}

err_t ctrl_wq_fail(ctrl_wq_t *q, const char *key, uint64_t now_ms)
{
    uint32_t n = ctrl_wq_failures(q, key);
    uint64_t wait = q->base_ms;

    for (uint32_t i = 0; i < n && wait < q->max_ms; i++)
        wait *= 2;
    if (wait > q->max_ms)
        wait = q->max_ms;
    if (json_object_set_new(q->failures, key, json_integer((json_int_t)n + 1)) != 0 ||
        json_object_set_new(q->delayed, key, json_integer((json_int_t)(now_ms + wait))) != 0)
        return ERR_NOMEM;
    /* A key already queued to run now waits for its backoff instead: it just failed. */
    json_object_del(q->ready, key);
    return ERR_OK;
}

void ctrl_wq_forget(ctrl_wq_t *q, const char *key)
{
    json_object_del(q->failures, key);
}

json_t *ctrl_wq_take(ctrl_wq_t *q, uint64_t now_ms)
{
    json_t *out = q->ready, *fresh = json_object(), *v;
    const char *key;
    void *tmp;

    if (fresh == NULL)
        return NULL;
    q->ready = fresh;
    json_object_foreach_safe(q->delayed, tmp, key, v)
    {
        if ((uint64_t)json_integer_value(v) > now_ms)
            continue;
        if (json_object_set_new(out, key, json_true()) != 0)
            continue; /* stays delayed: taken next time */
        json_object_del(q->delayed, key);
    }
    return out;
}

uint64_t ctrl_wq_next(const ctrl_wq_t *q, uint64_t now_ms)
{
    uint64_t next = UINT64_MAX;
    const char *key;
    json_t *v;

    if (json_object_size(q->ready) > 0)
        return 0;
    json_object_foreach(q->delayed, key, v)
    {
        uint64_t due = (uint64_t)json_integer_value(v);
        uint64_t wait = due > now_ms ? due - now_ms : 0;
        if (wait < next)
            next = wait;
    }
    return next;
}
