/* queuestatus -- ClusterQueue and LocalQueue status objects from the engine (pure builders). */
/* SPDX-License-Identifier: Apache-2.0 */
#include "ctrl/queuestatus.h"

#include "ctrl/cond.h"
#include "model/object.h"
#include "model/quantity.h"
#include "util/grow.h"

#include <stdio.h>
#include <stdlib.h>
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

json_t *queuestatus_cohort(const sched_t *s, const char *name, const json_t *current, bool fair)
{
    int64_t share;
    json_t *out;

    if (sched_cohort_weighted_share(s, name, &share, NULL) != ERR_OK)
        return NULL;
    out = json_is_object(current) ? json_deep_copy(current) : json_object();
    if (out == NULL)
        return NULL;
    if (!fair) {
        json_object_del(out, "fairSharing");
        return out;
    }
    if (json_object_set_new(out, "fairSharing",
                            json_pack("{s:I}", "weightedShare", (json_int_t)share)) != 0) {
        json_decref(out);
        return NULL;
    }
    return out;
}

/* ---- LocalQueues --------------------------------------------------------------------------- */

/* What one LocalQueue's workloads hold: counts, and usage per (flavor, resource) in the order
 * first seen. The names are the engine's (borrowed until it next changes). */
typedef struct lq_use_s {
    const char *flavor, *resource;
    quantity_t total;
} lq_use_t;

struct queuestatus_tally_s {
    int64_t pending, reserving, admitted;
    lq_use_t *use;
    size_t nuse, cap;
};

static bool tally_use(queuestatus_tally_t *t, const char *flavor, const char *res, quantity_t q)
{
    for (size_t i = 0; i < t->nuse; i++)
        if (strcmp(t->use[i].flavor, flavor) == 0 && strcmp(t->use[i].resource, res) == 0)
            return quantity_add(t->use[i].total, q, &t->use[i].total, NULL) == ERR_OK;
    if (util_grow((void **)&t->use, &t->cap, t->nuse + 1, sizeof(lq_use_t)) != ERR_OK)
        return false;
    t->use[t->nuse++] = (lq_use_t){flavor, res, q};
    return true;
}

typedef struct collect_s {
    util_hmap_t *by_lq;
    bool oom;
} collect_t;

static bool on_wl(const sched_wl_info_t *info, void *ud)
{
    collect_t *col = ud;
    queuestatus_tally_t *t;

    if (info->local_queue_key == NULL)
        return true;
    t = util_hmap_get(col->by_lq, info->local_queue_key);
    if (t == NULL) {
        t = calloc(1, sizeof(*t));
        if (t == NULL || util_hmap_put(col->by_lq, info->local_queue_key, t, NULL) != ERR_OK) {
            free(t);
            col->oom = true;
            return false;
        }
    }
    if (info->state == SCHED_WL_PENDING) {
        t->pending++;
    } else if (info->state == SCHED_WL_ADMITTED || info->state == SCHED_WL_EVICTING) {
        t->reserving++;
        t->admitted++;
        for (size_t i = 0; info->admission && i < info->admission->nassignments; i++) {
            const pod_set_assignment_t *a = &info->admission->assignments[i];
            for (size_t r = 0; r < a->usage.len; r++) {
                const char *fl = kv_list_get(&a->flavors, a->usage.items[r].name);
                if (fl != NULL &&
                    !tally_use(t, fl, a->usage.items[r].name, a->usage.items[r].value)) {
                    col->oom = true;
                    return false;
                }
            }
        }
    }
    return true;
}

err_t queuestatus_lq_collect(const sched_t *s, queuestatus_lqs_t *out)
{
    collect_t col = {&out->by_lq, false};

    util_hmap_init(&out->by_lq, 0);
    sched_workloads_unordered(s, on_wl, &col);
    if (col.oom) {
        queuestatus_lqs_fini(out);
        return ERR_NOMEM;
    }
    return ERR_OK;
}

void queuestatus_lqs_fini(queuestatus_lqs_t *l)
{
    const char *key;
    void *v;

    if (l == NULL)
        return;
    for (size_t pos = 0; util_hmap_next(&l->by_lq, &pos, &key, &v);) {
        queuestatus_tally_t *t = v;
        free(t->use);
        free(t);
    }
    util_hmap_fini(&l->by_lq);
}

/* flavorsUsage of a tally: [{name: flavor, resources: [{name, total}]}], flavors and their
 * resources in the order first seen. */
static json_t *tally_flavors(const queuestatus_tally_t *t)
{
    json_t *flv = json_array();
    char buf[QUANTITY_STR_MAX];

    for (size_t i = 0; flv != NULL && t != NULL && i < t->nuse; i++) {
        json_t *list = flavor_entry(flv, t->use[i].flavor);
        if (list == NULL ||
            json_array_append_new(list, json_pack("{s:s,s:s}", "name", t->use[i].resource, "total",
                                                  quantity_format(t->use[i].total, buf)))) {
            json_decref(flv);
            return NULL;
        }
    }
    return flv;
}

json_t *queuestatus_lq(const sched_t *s, const queuestatus_lqs_t *lqs, const char *key,
                       const char *cq, bool stopped, const json_t *current, int64_t now_s)
{
    const queuestatus_tally_t *t = util_hmap_get(&lqs->by_lq, key);
    json_t *conds = conds_of(current), *flv = tally_flavors(t), *out = NULL;
    sched_cq_status_t st;
    bool have = cq != NULL && sched_cq_status(s, cq, &st, NULL) == ERR_OK;
    bool ready = !stopped && have && st.active;

    if (conds == NULL || flv == NULL)
        goto out;
    /* Kueue's LocalQueue controller: a stop policy first, then the ClusterQueue. */
    if (cond_set(conds, "Active", ready ? "True" : "False",
                 stopped     ? "Stopped"
                 : !have     ? "ClusterQueueDoesNotExist"
                 : st.active ? "Ready"
                             : "ClusterQueueIsInactive",
                 stopped ? "LocalQueue is stopped"
                 : ready ? "Can submit new workloads to localQueue"
                         : "Can't submit new workloads to clusterQueue",
                 -1, now_s, NULL) != ERR_OK)
        goto out;
    out =
        json_pack("{s:I,s:I,s:I,s:O,s:O,s:O}", "pendingWorkloads", (json_int_t)(t ? t->pending : 0),
                  "reservingWorkloads", (json_int_t)(t ? t->reserving : 0), "admittedWorkloads",
                  (json_int_t)(t ? t->admitted : 0), "flavorsReservation", flv, "flavorsUsage", flv,
                  "conditions", conds);
out:
    json_decref(conds);
    json_decref(flv);
    return out;
}

/* ---- admission fair sharing ------------------------------------------------------------------ */

err_t queuestatus_lq_afs(const sched_t *s, const char *key, int64_t now_ms, json_t *status)
{
    resource_list_t consumed = {0};
    int64_t last = 0;
    char buf[QUANTITY_STR_MAX], ts[32];
    json_t *cr = NULL, *fs;

    if (sched_lq_afs_status(s, key, now_ms, &consumed, &last, NULL) != ERR_OK)
        return ERR_OK; /* off, unknown or no time yet: nothing to say (OOM: said next pass) */
    cr = json_object();
    for (size_t i = 0; cr != NULL && i < consumed.len; i++)
        if (json_object_set_new(cr, consumed.items[i].name,
                                json_string(quantity_format(consumed.items[i].value, buf)))) {
            json_decref(cr);
            cr = NULL;
        }
    resource_list_fini(&consumed);
    if (cr == NULL)
        return ERR_NOMEM;
    /* lastUpdate: metav1.Time, whole seconds */
    fs = json_pack("{s:I,s:{s:o,s:s}}", "weightedShare", (json_int_t)0,
                   "admissionFairSharingStatus", "consumedResources", cr, "lastUpdate",
                   cond_time_str(last / 1000, ts, sizeof(ts)));
    if (fs == NULL || json_object_set_new(status, "fairSharing", fs) != 0)
        return ERR_NOMEM;
    return ERR_OK;
}

err_t queuestatus_lq_afs_seed(sched_t *s, const char *key, const json_t *status)
{
    const json_t *cr = json_object_get(
        json_object_get(json_object_get(status, "fairSharing"), "admissionFairSharingStatus"),
        "consumedResources");
    resource_list_t seed = {0};
    const char *name;
    const json_t *v;
    err_t rc = ERR_OK;

    if (!json_is_object(cr) || json_object_size(cr) == 0)
        return ERR_OK;
    seed.items = calloc(json_object_size(cr), sizeof(resource_t));
    if (seed.items == NULL)
        return ERR_NOMEM;
    json_object_foreach((json_t *)cr, name, v)
    {
        quantity_t q;
        const char *text = json_string_value(v);
        if (text == NULL || quantity_parse(text, strlen(text), &q, NULL) != ERR_OK)
            continue; /* not ours to refuse: Kueue's CRD checked it */
        seed.items[seed.len].name = strdup(name);
        if (seed.items[seed.len].name == NULL) {
            rc = ERR_NOMEM;
            break;
        }
        seed.items[seed.len++].value = q;
    }
    if (rc == ERR_OK) {
        rc = sched_lq_afs_seed(s, key, &seed, NULL);
        if (rc == ERR_NOT_FOUND)
            rc = ERR_OK;
    }
    resource_list_fini(&seed);
    return rc;
}
