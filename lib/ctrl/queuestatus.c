/* queuestatus -- ClusterQueue and LocalQueue status objects from the engine (pure builders). */
/* SPDX-License-Identifier: Apache-2.0 */
#include "ctrl/queuestatus.h"

#include "ctrl/cond.h"
#include "model/object.h"
#include "model/quantity.h"

#include <stdio.h>
#include <string.h>

/* A copy of the current conditions array (or a new empty one). */
static json_t *conds_of(const json_t *current)
{
    const json_t *c = json_object_get(current, "conditions");
    return json_is_array(c) ? json_deep_copy(c) : json_array();
}

/* Append {name: flavor, resources: []} to `arr` unless the last item is that flavor; returns
 * its resources array (borrowed). */
static json_t *flavor_entry(json_t *arr, const char *flavor)
{
    json_t *last = json_array_get(arr, json_array_size(arr) - 1), *e;
    const char *n = json_string_value(json_object_get(last, "name"));

    if (last != NULL && n != NULL && strcmp(n, flavor) == 0)
        return json_object_get(last, "resources");
    /* Flavors can repeat non-adjacently only across resource groups; look them up. */
    for (size_t i = 0; i < json_array_size(arr); i++) {
        e = json_array_get(arr, i);
        n = json_string_value(json_object_get(e, "name"));
        if (n != NULL && strcmp(n, flavor) == 0)
            return json_object_get(e, "resources");
    }
    e = json_pack("{s:s,s:[]}", "name", flavor, "resources");
    if (e == NULL || json_array_append_new(arr, e))
        return NULL;
    return json_object_get(e, "resources");
}

json_t *queuestatus_cq(const sched_t *s, const char *name, const json_t *current, bool fair,
                       int64_t now_s)
{
    sched_cq_status_t st;
    sched_usage_list_t usage = {0};
    json_t *out = NULL, *resv = json_array(), *used = json_array(), *conds = conds_of(current);
    char q[QUANTITY_STR_MAX], b[QUANTITY_STR_MAX];

    if (resv == NULL || used == NULL || conds == NULL ||
        sched_cq_status(s, name, &st, NULL) != ERR_OK ||
        sched_cq_usage(s, name, &usage, NULL) != ERR_OK)
        goto fail;
    for (size_t i = 0; i < usage.len; i++) {
        const sched_fr_usage_t *u = &usage.items[i];
        json_t *r1 = flavor_entry(resv, u->flavor), *r2 = flavor_entry(used, u->flavor);
        quantity_format(u->usage, q);
        quantity_format(u->borrowed, b);
        if (r1 == NULL || r2 == NULL ||
            json_array_append_new(
                r1, json_pack("{s:s,s:s,s:s}", "name", u->resource, "total", q, "borrowed", b)) ||
            json_array_append_new(
                r2, json_pack("{s:s,s:s,s:s}", "name", u->resource, "total", q, "borrowed", b)))
            goto fail;
    }
    if (cond_set(conds, "Active", st.active ? "True" : "False", sched_cq_reason_str(st.reason),
                 st.active ? "Can admit new workloads" : st.message, -1, now_s, NULL) != ERR_OK)
        goto fail;
    out = json_pack("{s:I,s:I,s:I,s:O,s:O,s:O}", "pendingWorkloads", (json_int_t)st.pending,
                    "reservingWorkloads", (json_int_t)st.reserving, "admittedWorkloads",
                    (json_int_t)st.admitted, "flavorsReservation", resv, "flavorsUsage", used,
                    "conditions", conds);
    if (out != NULL && fair &&
        json_object_set_new(out, "fairSharing",
                            json_pack("{s:I}", "weightedShare", (json_int_t)st.weighted_share))) {
        json_decref(out);
        out = NULL;
    }
fail:
    sched_usage_list_fini(&usage);
    json_decref(resv);
    json_decref(used);
    json_decref(conds);
    return out;
}

/* ---- LocalQueues --------------------------------------------------------------------------- */

typedef struct collect_s {
    json_t *by_lq;
    bool oom;
} collect_t;

/* usage[flavor][resource] += q (kept as quantity text, summed exactly). */
static bool add_usage(json_t *usage, const char *flavor, const char *res, quantity_t q)
{
    json_t *f = json_object_get(usage, flavor);
    const char *have;
    quantity_t sum = q, old;
    char buf[QUANTITY_STR_MAX];

    if (f == NULL) {
        f = json_object();
        if (f == NULL || json_object_set_new(usage, flavor, f))
            return false;
    }
    have = json_string_value(json_object_get(f, res));
    if (have != NULL && quantity_parse(have, strlen(have), &old, NULL) == ERR_OK &&
        quantity_add(old, q, &sum, NULL) != ERR_OK)
        return false;
    return json_object_set_new(f, res, json_string(quantity_format(sum, buf))) == 0;
}

static bool on_wl(const sched_wl_info_t *info, void *ud)
{
    collect_t *col = ud;
    char key[512];
    const char *slash = strchr(info->key, '/');
    json_t *e;

    if (info->local_queue == NULL || slash == NULL)
        return true;
    snprintf(key, sizeof(key), "%.*s/%s", (int)(slash - info->key), info->key, info->local_queue);
    e = json_object_get(col->by_lq, key);
    if (e == NULL) {
        e = json_pack("{s:i,s:i,s:i,s:{}}", "pending", 0, "reserving", 0, "admitted", 0, "usage");
        if (e == NULL || json_object_set_new(col->by_lq, key, e)) {
            col->oom = true;
            return false;
        }
    }
#define BUMP(field) \
    json_object_set_new(e, field, json_integer(json_integer_value(json_object_get(e, field)) + 1))
    if (info->state == SCHED_WL_PENDING) {
        BUMP("pending");
    } else if (info->state == SCHED_WL_ADMITTED || info->state == SCHED_WL_EVICTING) {
        BUMP("reserving");
        BUMP("admitted");
        for (size_t i = 0; info->admission && i < info->admission->nassignments; i++) {
            const pod_set_assignment_t *a = &info->admission->assignments[i];
            for (size_t r = 0; r < a->usage.len; r++) {
                const char *fl = kv_list_get(&a->flavors, a->usage.items[r].name);
                if (fl != NULL && !add_usage(json_object_get(e, "usage"), fl,
                                             a->usage.items[r].name, a->usage.items[r].value)) {
                    col->oom = true;
                    return false;
                }
            }
        }
    }
#undef BUMP
    return true;
}

err_t queuestatus_lq_collect(const sched_t *s, queuestatus_lqs_t *out)
{
    collect_t col = {json_object(), false};

    if (col.by_lq == NULL)
        return ERR_NOMEM;
    sched_workloads(s, on_wl, &col);
    if (col.oom) {
        json_decref(col.by_lq);
        return ERR_NOMEM;
    }
    out->by_lq = col.by_lq;
    return ERR_OK;
}

void queuestatus_lqs_fini(queuestatus_lqs_t *l)
{
    if (l == NULL)
        return;
    json_decref(l->by_lq);
    l->by_lq = NULL;
}

json_t *queuestatus_lq(const sched_t *s, const queuestatus_lqs_t *lqs, const char *key,
                       const char *cq, const json_t *current, int64_t now_s)
{
    json_t *e = json_object_get(lqs->by_lq, key), *conds = conds_of(current);
    json_t *flv = json_array(), *out = NULL, *res;
    const char *fname, *rname;
    sched_cq_status_t st;
    bool have = cq != NULL && sched_cq_status(s, cq, &st, NULL) == ERR_OK;

    if (conds == NULL || flv == NULL)
        goto out;
    json_object_foreach(json_object_get(e, "usage"), fname, res)
    {
        json_t *list = json_array(), *q;
        if (list == NULL ||
            json_array_append_new(flv, json_pack("{s:s,s:o}", "name", fname, "resources", list)))
            goto out;
        json_object_foreach(res, rname, q)
        {
            if (json_array_append_new(list, json_pack("{s:s,s:O}", "name", rname, "total", q)))
                goto out;
        }
    }
    if (cond_set(conds, "Active", have && st.active ? "True" : "False",
                 !have       ? "ClusterQueueDoesNotExist"
                 : st.active ? "Ready"
                             : "ClusterQueueIsInactive",
                 have && st.active ? "Can submit new workloads to localQueue"
                                   : "Can't submit new workloads to clusterQueue",
                 -1, now_s, NULL) != ERR_OK)
        goto out;
    out = json_pack("{s:I,s:I,s:I,s:O,s:O,s:O}", "pendingWorkloads",
                    json_integer_value(json_object_get(e, "pending")), "reservingWorkloads",
                    json_integer_value(json_object_get(e, "reserving")), "admittedWorkloads",
                    json_integer_value(json_object_get(e, "admitted")), "flavorsReservation", flv,
                    "flavorsUsage", flv, "conditions", conds);
out:
    json_decref(conds);
    json_decref(flv);
    return out;
}
