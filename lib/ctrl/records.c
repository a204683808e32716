/* records -- what the operator keeps of each watched object: typed, compact, decoded once. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "ctrl/records.h"

#include "ctrl/cond.h"
#include "ctrl/podset.h"
#include "ctrl/wlstatus.h"
#include "jobs/job_workload.h"
#include "jobs/podgroup.h"
#include "model/diag.h"
#include "model/jsonx.h"
#include "model/validate.h"
#include "util/intern.h"
#include "util/jcopy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- decoding with lib/model ------------------------------------------------------------- */

/* The decode warnings about settings that have no effect, "path: message" joined by "; ", into
 * *out (NULL when none). ERR_NOMEM. */
static err_t no_effect_text(const diags_t *diags, char **out)
{
    size_t len = 0;
    char *s;

    *out = NULL;
    for (size_t i = 0; i < diags->len; i++)
        if (diags->items[i].warning && strstr(diags->items[i].message, "has no effect") != NULL)
            len += strlen(diags->items[i].path) + strlen(diags->items[i].message) + 4;
    if (len == 0)
        return ERR_OK;
    size_t cap = len + 1;
    s = malloc(cap);
    if (s == NULL)
        return ERR_NOMEM;
    len = 0;
    for (size_t i = 0; i < diags->len; i++)
        if (diags->items[i].warning && strstr(diags->items[i].message, "has no effect") != NULL)
            len += (size_t)snprintf(s + len, cap - len, "%s%s: %s", len ? "; " : "",
                                    diags->items[i].path, diags->items[i].message);
    *out = s;
    return ERR_OK;
}

/*
 * Decode `obj` as `rk` into `out`. The API server stores what its (newer) schema knows: fields
 * sluice does not know are not ours to refuse here, so they are dropped and the object decoded
 * again. On ERR_INVALID `why` (size n) names the first problem. ERR_NOMEM otherwise. When
 * `no_effect` is not NULL it receives no_effect_text() of a decoded object.
 */
static err_t decode(const ctrl_record_kind_t *rk, json_t *obj, object_t *out, char *why, size_t n,
                    char **no_effect)
{
    json_t *copy = util_json_copy(obj); /* shallow: only apiVersion/kind differ */
    diags_t diags;
    err_t rc;

    why[0] = '\0';
    if (copy == NULL || json_object_set_new(copy, "apiVersion", json_string(rk->api_version)) ||
        json_object_set_new(copy, "kind", json_string(rk->kind))) {
        json_decref(copy);
        return ERR_NOMEM;
    }
    diags_init(&diags);
    rc = object_decode_stored(copy, out, &diags);
    if (rc == ERR_INVALID) {
        for (size_t i = 0; i < diags.len; i++) {
            if (!diags.items[i].warning) {
                snprintf(why, n, "%s: %s", diags.items[i].path, diags.items[i].message);
                break;
            }
        }
    }
    if (diags.oom)
        rc = ERR_NOMEM;
    /* A stored object is not validated again; its warnings about settings that have no effect
     * are wanted all the same: settings that have no effect never pass silently. */
    if (rc == ERR_OK && no_effect != NULL &&
        (validate_no_effect(out, &diags) != ERR_OK ||
         no_effect_text(&diags, no_effect) != ERR_OK)) {
        object_fini(out);
        rc = ERR_NOMEM;
    }
    diags_fini(&diags);
    json_decref(copy);
    return rc;
}

static char *dup_str(const json_t *v, bool *oom)
{
    const char *s = json_string_value(v);
    char *d;

    if (s == NULL)
        return NULL;
    d = strdup(s);
    if (d == NULL)
        *oom = true;
    return d;
}

/* The minimal metadata of an object that failed to decode: name, namespace, uid, version. */
static void min_meta(json_t *obj, object_meta_t *m, bool *oom)
{
    json_t *meta = json_object_get(obj, "metadata");

    m->name = dup_str(json_object_get(meta, "name"), oom);
    m->namespace = dup_str(json_object_get(meta, "namespace"), oom);
    m->uid = dup_str(json_object_get(meta, "uid"), oom);
    m->resource_version = dup_str(json_object_get(meta, "resourceVersion"), oom);
    m->deleting = json_object_get(meta, "deletionTimestamp") != NULL;
}

static void owner_of(json_t *obj, ctrl_owner_t *o, bool *oom)
{
    json_t *ref;
    size_t i;

    json_array_foreach(json_object_get(json_object_get(obj, "metadata"), "ownerReferences"), i, ref)
    {
        if (!json_is_true(json_object_get(ref, "controller")))
            continue;
        o->api_version = dup_str(json_object_get(ref, "apiVersion"), oom);
        o->kind = dup_str(json_object_get(ref, "kind"), oom);
        o->name = dup_str(json_object_get(ref, "name"), oom);
        o->uid = dup_str(json_object_get(ref, "uid"), oom);
        return;
    }
}

/* Are the object's owners Pods only (at least one, none the controller)? */
static bool pods_only(json_t *obj)
{
    json_t *refs = json_object_get(json_object_get(obj, "metadata"), "ownerReferences"), *ref;
    size_t i;

    json_array_foreach(refs, i, ref)
    {
        const char *av = json_string_value(json_object_get(ref, "apiVersion"));
        const char *k = json_string_value(json_object_get(ref, "kind"));
        if (json_is_true(json_object_get(ref, "controller")) || av == NULL || k == NULL ||
            strcmp(av, "v1") != 0 || strcmp(k, "Pod") != 0)
            return false;
    }
    return json_array_size(refs) > 0;
}

void ctrl_owner_fini(ctrl_owner_t *o)
{
    free(o->api_version);
    free(o->kind);
    free(o->name);
    free(o->uid);
    memset(o, 0, sizeof(*o));
}

bool ctrl_meta_has_finalizer(const object_meta_t *m)
{
    for (size_t i = 0; i < m->nfinalizers; i++)
        if (strcmp(m->finalizers[i], JOB_FINALIZER_RESOURCE_IN_USE) == 0)
            return true;
    return false;
}

/* ---- queue-side objects ------------------------------------------------------------------ */

static ctrl_qobj_t *qobj_decode(const ctrl_record_kind_t *rk, json_t *obj)
{
    ctrl_qobj_t *q = calloc(1, sizeof(*q));
    char why[512];
    bool oom = false;
    err_t rc;

    if (q == NULL)
        return NULL;
    rc = decode(rk, obj, &q->obj, why, sizeof(why), &q->no_effect);
    if (rc == ERR_NOMEM)
        goto oom;
    q->valid = rc == ERR_OK;
    if (!q->valid) {
        q->invalid = strdup(why[0] ? why : err_str(rc));
        if (q->invalid == NULL)
            goto oom;
        return q;
    }
    if (q->obj.kind == KIND_NAMESPACE &&
        kv_list_get(&q->obj.u.ns.meta.labels, "kubernetes.io/metadata.name") == NULL &&
        kv_list_set(&q->obj.u.ns.meta.labels, "kubernetes.io/metadata.name",
                    q->obj.u.ns.meta.name) != ERR_OK)
        goto oom; /* servers before 1.21 lack the label namespaceSelectors rely on */
    if (q->obj.kind == KIND_CLUSTER_QUEUE || q->obj.kind == KIND_LOCAL_QUEUE ||
        q->obj.kind == KIND_COHORT) {
        json_t *st = json_object_get(obj, "status");
        q->keep = st != NULL ? json_deep_copy(st) : json_object();
    } else if (q->obj.kind == KIND_RESOURCE_FLAVOR) {
        json_t *spec = json_object_get(obj, "spec");
        q->keep = json_pack("{s:O?,s:O?}", "nodeLabels", json_object_get(spec, "nodeLabels"),
                            "tolerations", json_object_get(spec, "tolerations"));
    }
    if ((q->obj.kind == KIND_CLUSTER_QUEUE || q->obj.kind == KIND_LOCAL_QUEUE ||
         q->obj.kind == KIND_COHORT || q->obj.kind == KIND_RESOURCE_FLAVOR) &&
        q->keep == NULL)
        goto oom;
    (void)oom;
    return q;
oom:
    if (q->valid)
        object_fini(&q->obj);
    free(q->invalid);
    free(q->no_effect);
    json_decref(q->keep);
    free(q);
    return NULL;
}

static void qobj_free(ctrl_qobj_t *q)
{
    if (q->valid)
        object_fini(&q->obj);
    free(q->invalid);
    free(q->no_effect);
    json_decref(q->keep);
    free(q);
}

/* ---- Workloads --------------------------------------------------------------------------- */

static void wl_intern(util_intern_t *t, ctrl_wl_t *w);

/* w->podsets from w->wl.pod_sets; false on out-of-memory. */
static bool podsets_of(ctrl_wl_t *w)
{
    size_t n = w->wl.npod_sets < UINT16_MAX ? w->wl.npod_sets : UINT16_MAX;

    if (n == 0)
        return true;
    w->podsets = calloc(n, sizeof(*w->podsets));
    if (w->podsets == NULL)
        return false;
    w->npodsets = (uint16_t)n;
    for (size_t i = 0; i < w->npodsets; i++) {
        const pod_set_t *p = &w->wl.pod_sets[i];
        w->podsets[i].count = p->count;
        w->podsets[i].has_min_count = p->has_min_count;
        if (p->name != NULL && (w->podsets[i].name = strdup(p->name)) == NULL)
            return false;
    }
    return true;
}

static ctrl_wl_t *wl_decode(const ctrl_record_kind_t *rk, json_t *obj)
{
    ctrl_wl_t *w = calloc(1, sizeof(*w));
    json_t *status = json_object_get(obj, "status");
    json_t *rs = json_object_get(status, "requeueState");
    object_t o;
    char why[512];
    bool oom = false;
    err_t rc;

    if (w == NULL)
        return NULL;
    rc = decode(rk, obj, &o, why, sizeof(why), &w->no_effect);
    if (rc == ERR_NOMEM) {
        free(w);
        return NULL;
    }
    w->valid = rc == ERR_OK;
    if (w->valid) {
        w->wl = o.u.wl;
        free(o.api_version);
        w->finalizer = ctrl_meta_has_finalizer(&w->wl.meta);
        oom = !podsets_of(w);
    } else {
        min_meta(obj, &w->wl.meta, &oom);
        w->invalid = strdup(why[0] ? why : err_str(rc));
        oom = oom || w->invalid == NULL;
        w->stripped = true;
    }
    owner_of(obj, &w->owner, &oom);
    w->pod_owned = pods_only(obj);
    if (json_is_object(rs)) {
        const char *at = json_string_value(json_object_get(rs, "requeueAt"));
        w->has_requeue = true;
        w->requeue_count = (int32_t)json_integer_value(json_object_get(rs, "count"));
        if (at != NULL && !jsonx_parse_time(at, &w->requeue_at))
            w->requeue_at = 0;
    }
    w->podset_digest =
        jobs_podsets_digest(json_object_get(json_object_get(obj, "spec"), "podSets"));
    if (oom) {
        ctrl_record_free(rk, w);
        return NULL;
    }
    if (w->valid && rk->strings != NULL)
        wl_intern(rk->strings, w);
    return w;
}

/*
 * The strings of a Workload record that many Workloads repeat -- namespace, finalizers, queue,
 * priority class, pod-set names, the admission's ClusterQueue, pod-set and flavor names, the
 * conditions' type, status, reason and message (Kueue's messages name the ClusterQueue, not the
 * Workload), the owner's apiVersion and kind -- into `out` (room for `cap`): their count, which
 * may exceed `cap` (then only the first `cap` are stored).
 */
static size_t wl_shared(ctrl_wl_t *w, char ***out, size_t cap)
{
    workload_t *wl = &w->wl;
    size_t n = 0;

#define SHARED(field)              \
    do {                           \
        if ((field) != NULL) {     \
            if (n < cap)           \
                out[n] = &(field); \
            n++;                   \
        }                          \
    } while (0)
    SHARED(wl->meta.namespace);
    for (size_t i = 0; i < wl->meta.nfinalizers; i++)
        SHARED(wl->meta.finalizers[i]);
    SHARED(wl->queue_name);
    SHARED(wl->priority_class);
    for (size_t i = 0; i < wl->npod_sets; i++)
        SHARED(wl->pod_sets[i].name);
    for (size_t i = 0; i < w->npodsets; i++)
        SHARED(w->podsets[i].name);
    if (wl->admission != NULL) {
        SHARED(wl->admission->cluster_queue);
        for (size_t i = 0; i < wl->admission->nassignments; i++) {
            pod_set_assignment_t *a = &wl->admission->assignments[i];
            SHARED(a->name);
            for (size_t k = 0; k < a->flavors.len; k++) {
                SHARED(a->flavors.items[k].key);
                SHARED(a->flavors.items[k].value);
            }
            for (size_t k = 0; k < a->usage.len; k++)
                SHARED(a->usage.items[k].name);
        }
    }
    for (size_t i = 0; i < wl->nstatus_conditions; i++) {
        condition_t *c = &wl->status_conditions[i];
        SHARED(c->type);
        SHARED(c->status);
        SHARED(c->reason);
        SHARED(c->message);
    }
    SHARED(w->owner.api_version);
    SHARED(w->owner.kind);
#undef SHARED
    return n;
}

/* Replace the repeated strings of `w` (wl_shared()) by shared copies (util/intern.h). All or
 * nothing: out of memory leaves `w` with its own copies, which is only less compact. */
static void wl_intern(util_intern_t *t, ctrl_wl_t *w)
{
    char **small[64], ***fields = small;
    const char *copies[64], **shared = copies;
    size_t n = wl_shared(w, small, 64), got = 0;

    if (n == 0)
        return;
    if (n > 64) {
        fields = malloc(n * sizeof(*fields));
        shared = malloc(n * sizeof(*shared));
        if (fields == NULL || shared == NULL)
            goto out;
        wl_shared(w, fields, n);
    }
    for (; got < n; got++)
        if ((shared[got] = util_intern(t, *fields[got])) == NULL)
            goto out;
    for (size_t i = 0; i < n; i++) {
        free(*fields[i]);
        *fields[i] = (char *)shared[i];
    }
    w->interned = true;
    got = 0;
out:
    for (size_t i = 0; i < got; i++)
        util_intern_drop(t, shared[i]);
    if (fields != small) {
        free(fields);
        free(shared);
    }
}

/* Give back the shared strings of `w` (wl_intern()), leaving those fields NULL. */
static void wl_unintern(util_intern_t *t, ctrl_wl_t *w)
{
    char **fields[64];
    size_t n;

    if (!w->interned)
        return;
    /* 64 at a time: each round drops what it lists, so the count shrinks to 0. */
    while ((n = wl_shared(w, fields, 64)) > 0) {
        for (size_t i = 0; i < n && i < 64; i++) {
            util_intern_drop(t, *fields[i]);
            *fields[i] = NULL;
        }
    }
    w->interned = false;
}

/* Give back the shared copy `*s` (an interned record's, util/intern.h) and clear the field;
 * the caller frees what is not shared. */
static void unshare(util_intern_t *t, bool interned, char **s)
{
    if (interned && *s != NULL) {
        util_intern_drop(t, *s);
        *s = NULL;
    }
}

void ctrl_wl_strip(const ctrl_record_kind_t *rk, ctrl_wl_t *w)
{
    if (w->stripped)
        return;
    for (size_t i = 0; i < w->wl.npod_sets; i++) {
        unshare(rk->strings, w->interned, &w->wl.pod_sets[i].name);
        pod_set_fini(&w->wl.pod_sets[i]);
    }
    free(w->wl.pod_sets);
    w->wl.pod_sets = NULL;
    w->wl.npod_sets = 0;
    kv_list_fini(&w->wl.meta.labels);
    kv_list_fini(&w->wl.meta.annotations);
    w->stripped = true;
}

/* Free w->podsets (their shared names given back). */
static void podsets_free(util_intern_t *t, ctrl_wl_t *w)
{
    for (size_t i = 0; i < w->npodsets; i++) {
        unshare(t, w->interned, &w->podsets[i].name);
        free(w->podsets[i].name);
    }
    free(w->podsets);
    w->podsets = NULL;
    w->npodsets = 0;
}

/* Keep condition Finished only, the others given back; false on out-of-memory (all kept). */
static bool retire_conditions(util_intern_t *t, ctrl_wl_t *w)
{
    workload_t *wl = &w->wl;
    condition_t *keep = NULL;

    for (size_t i = 0; i < wl->nstatus_conditions; i++) {
        if (strcmp(wl->status_conditions[i].type, "Finished") != 0)
            continue;
        if ((keep = malloc(sizeof(*keep))) == NULL)
            return false;
        *keep = wl->status_conditions[i];
        memset(&wl->status_conditions[i], 0, sizeof(*keep)); /* moved */
        break;
    }
    for (size_t i = 0; i < wl->nstatus_conditions; i++) {
        condition_t *c = &wl->status_conditions[i];
        unshare(t, w->interned, &c->type);
        unshare(t, w->interned, &c->status);
        unshare(t, w->interned, &c->reason);
        unshare(t, w->interned, &c->message);
        condition_fini(c);
    }
    free(wl->status_conditions);
    wl->status_conditions = keep;
    wl->nstatus_conditions = keep != NULL ? 1 : 0;
    return true;
}

void ctrl_wl_retire(const ctrl_record_kind_t *rk, ctrl_wl_t *w)
{
    util_intern_t *t = rk->strings;
    workload_t *wl = &w->wl;
    bool reserved, on_hold;

    if (w->retired || !w->valid || !wl->conditions.finished)
        return;
    ctrl_wl_strip(rk, w);
    reserved = ctrl_wl_reserved(w);
    on_hold = ctrl_wl_on_hold(w);
    if (!retire_conditions(t, w))
        return; /* out of memory: kept whole, which is only less compact */
    w->was_reserved = reserved;
    w->was_on_hold = on_hold;
    w->retired = true;
    podsets_free(t, w);
    if (wl->admission != NULL) {
        admission_t *a = wl->admission;
        unshare(t, w->interned, &a->cluster_queue);
        for (size_t i = 0; i < a->nassignments; i++) {
            pod_set_assignment_t *psa = &a->assignments[i];
            unshare(t, w->interned, &psa->name);
            for (size_t k = 0; k < psa->flavors.len; k++) {
                unshare(t, w->interned, &psa->flavors.items[k].key);
                unshare(t, w->interned, &psa->flavors.items[k].value);
            }
            for (size_t k = 0; k < psa->usage.len; k++)
                unshare(t, w->interned, &psa->usage.items[k].name);
        }
        admission_fini(a);
        free(a);
        wl->admission = NULL;
    }
    for (size_t i = 0; i < wl->nreclaimable_pods; i++)
        free(wl->reclaimable_pods[i].name);
    free(wl->reclaimable_pods);
    wl->reclaimable_pods = NULL;
    wl->nreclaimable_pods = 0;
    free(wl->cluster_name);
    wl->cluster_name = NULL;
    strv_free(wl->nominated_clusters, wl->nnominated_clusters);
    wl->nominated_clusters = NULL;
    wl->nnominated_clusters = 0;
    strv_free(wl->unhealthy_nodes, wl->nunhealthy_nodes);
    wl->unhealthy_nodes = NULL;
    wl->nunhealthy_nodes = 0;
    free(wl->meta.generate_name);
    wl->meta.generate_name = NULL;
}

const condition_t *ctrl_wl_cond(const ctrl_wl_t *w, const char *type)
{
    for (size_t i = 0; i < w->wl.nstatus_conditions; i++)
        if (strcmp(w->wl.status_conditions[i].type, type) == 0)
            return &w->wl.status_conditions[i];
    return NULL;
}

bool ctrl_wl_is(const ctrl_wl_t *w, const char *type)
{
    const condition_t *c = ctrl_wl_cond(w, type);

    return c != NULL && strcmp(c->status, "True") == 0;
}

bool ctrl_wl_reserved(const ctrl_wl_t *w)
{
    if (w->retired)
        return w->was_reserved;
    return w->valid && w->wl.admission != NULL && ctrl_wl_is(w, "QuotaReserved");
}

bool ctrl_wl_on_hold(const ctrl_wl_t *w)
{
    const condition_t *c = ctrl_wl_cond(w, "QuotaReserved");

    if (w->retired)
        return w->was_on_hold;
    return c != NULL && strcmp(c->status, "False") == 0 && c->reason != NULL &&
           strcmp(c->reason, "OnHold") == 0;
}

/* One status.conditions[] item as the API writes it (observedGeneration only when set). */
static json_t *cond_json(const condition_t *c)
{
    char ts[32];
    json_t *o = json_pack("{s:s,s:s}", "type", c->type, "status", c->status);

    if (o == NULL)
        return NULL;
    if ((c->reason != NULL && json_object_set_new(o, "reason", json_string(c->reason))) ||
        (c->message != NULL && json_object_set_new(o, "message", json_string(c->message))) ||
        (c->has_transition_time &&
         json_object_set_new(o, "lastTransitionTime",
                             json_string(cond_time_str(c->transition_time, ts, sizeof(ts))))) ||
        (c->observed_generation > 0 &&
         json_object_set_new(o, "observedGeneration", json_integer(c->observed_generation)))) {
        json_decref(o);
        return NULL;
    }
    return o;
}

json_t *ctrl_wl_json(const ctrl_wl_t *w)
{
    const object_meta_t *m = &w->wl.meta;
    json_t *conds, *status, *out;
    char ts[32];

    if (w->retired)
        return NULL; /* its admission and conditions are gone: no status is built from it */
    if ((conds = json_array()) == NULL)
        return NULL;
    for (size_t i = 0; i < w->wl.nstatus_conditions; i++) {
        if (json_array_append_new(conds, cond_json(&w->wl.status_conditions[i]))) {
            json_decref(conds);
            return NULL;
        }
    }
    out = json_pack("{s:{s:s?,s:s?,s:s?},s:{s:b,s:s?},s:{s:o}}", "metadata", "name", m->name,
                    "namespace", m->namespace, "resourceVersion", m->resource_version, "spec",
                    "active", w->wl.active, "queueName", w->wl.queue_name, "status", "conditions",
                    conds);
    if (out == NULL)
        return NULL;
    status = json_object_get(out, "status");
    if ((m->generation > 0 && json_object_set_new(json_object_get(out, "metadata"), "generation",
                                                  json_integer(m->generation))) ||
        (w->wl.admission != NULL &&
         json_object_set_new(status, "admission", wlstatus_admission_json(w->wl.admission))) ||
        (w->has_requeue &&
         json_object_set_new(
             status, "requeueState",
             w->requeue_at > 0 ? json_pack("{s:i,s:s}", "count", (int)w->requeue_count, "requeueAt",
                                           cond_time_str(w->requeue_at, ts, sizeof(ts)))
                               : json_pack("{s:i}", "count", (int)w->requeue_count)))) {
        json_decref(out);
        return NULL;
    }
    if (w->wl.nunhealthy_nodes > 0) {
        json_t *list = json_array();
        if (list == NULL || json_object_set_new(status, "unhealthyNodes", list)) {
            json_decref(out);
            return NULL;
        }
        for (size_t i = 0; i < w->wl.nunhealthy_nodes; i++) {
            if (json_array_append_new(list,
                                      json_pack("{s:s?}", "name", w->wl.unhealthy_nodes[i]))) {
                json_decref(out);
                return NULL;
            }
        }
    }
    return out;
}

/* ---- jobs of every kind ----------------------------------------------------------------- */

/*
 * Everything here is read through the kind's table entry (jobs/framework.h), so a JobSet and a
 * batch/v1 Job are one record type; the pod templates are read for the counts and the digest and
 * then dropped with the server's JSON. What a write needs beyond this record (the templates, to
 * build a Workload or to start) comes from a fresh GET.
 */
/* j->reclaim from the kind's reclaimable() over `view`, paired with pod sets ps[0..npod_sets)
 * by name; false on out-of-memory. */
static bool reclaim_of(const jobs_kind_t *k, const json_t *view, const jobs_podset_t *ps,
                       ctrl_job_t *j)
{
    jobs_reclaim_t r[JOBS_PODSETS_MAX];
    size_t n = 0;

    k->reclaimable(view, r, &n);
    for (size_t i = 0; i < n; i++) {
        for (size_t p = 0; p < j->npod_sets; p++) {
            if (r[i].count <= 0 || strcmp(ps[p].name, r[i].name) != 0)
                continue;
            if (j->reclaim == NULL) {
                j->reclaim = calloc(j->npod_sets, sizeof(*j->reclaim));
                if (j->reclaim == NULL)
                    return false;
            }
            j->reclaim[p] = r[i].count;
        }
    }
    return true;
}

bool ctrl_job_resolve(const ctrl_record_kind_t *rk, ctrl_job_t *j, json_t *obj)
{
    const jobs_kind_t *k = rk->job;
    jobs_podset_t ps[JOBS_PODSETS_MAX];
    err_msg_t msg = {{0}};
    json_t *view = NULL;
    size_t n = 0;
    err_t rc;

    free(j->invalid);
    j->invalid = NULL;
    free(j->reclaim);
    j->reclaim = NULL;
    j->valid = false;
    j->unresolved = false;
    j->npod_sets = 0;
    j->pods_ready = false;
    j->digest = 0;
    memset(ps, 0, sizeof(ps));
    rc = jobs_resolve(k, obj, rk->find, rk->find_data, &view, &msg);
    if (rc == ERR_NOMEM)
        return false;
    j->unresolved = rc == ERR_NOT_FOUND;
    if (rc == ERR_OK)
        rc = k->pod_sets(view, ps, &n, &msg);
    if (rc == ERR_OK && n > 0 && n <= JOBS_PODSETS_MAX) {
        j->valid = true;
        j->npod_sets = (uint8_t)n;
        for (size_t i = 0; i < n; i++)
            j->counts[i] = ps[i].count;
    } else {
        j->invalid = strdup(msg.text[0] ? msg.text : "no pod set");
    }
    if (view != NULL && j->valid && k->reclaimable != NULL && !reclaim_of(k, view, ps, j)) {
        json_decref(view);
        return false;
    }
    if (view != NULL) {
        j->pods_ready = k->pods_ready(view);
        j->digest = j->valid ? jobs_digest(k, view) : 0;
    }
    json_decref(view);
    return j->valid || j->invalid != NULL;
}

static ctrl_job_t *job_decode(const ctrl_record_kind_t *rk, json_t *obj)
{
    const jobs_kind_t *k = rk->job;
    ctrl_job_t *j = calloc(1, sizeof(*j));
    json_t *labels = json_object_get(json_object_get(obj, "metadata"), "labels");
    json_t *start = json_object_get(json_object_get(obj, "status"), "startTime"), *stopping;
    const char *message = NULL;
    bool oom = false;

    if (j == NULL)
        return NULL;
    min_meta(obj, &j->meta, &oom);
    owner_of(obj, &j->owner, &oom);
    j->queue_name = dup_str(json_object_get(labels, JOB_LABEL_QUEUE_NAME), &oom);
    j->priority = dup_str(json_object_get(labels, JOB_LABEL_PRIORITY_CLASS), &oom);
    if (k->resolve != NULL) {
        j->raw = json_incref(obj);
        oom = oom || j->raw == NULL;
    }
    oom = oom || !ctrl_job_resolve(rk, j, obj);
    j->suspended = k->suspended(obj);
    j->active = k->active(obj);
    j->skip = k->skip != NULL && k->skip(obj);
    j->has_start_time = k->start_time_locks_template && start != NULL && !json_is_null(start);
    stopping = json_object_get(json_object_get(json_object_get(obj, "metadata"), "annotations"),
                               PODSET_ANNOTATION_STOPPING);
    j->stopping = strcmp(k->framework, "batch/job") == 0 && json_is_string(stopping) &&
                  strcmp(json_string_value(stopping), "true") == 0;
    j->phase = k->phase(obj, &message);
    if (j->phase != JOBS_RUNNING) {
        j->message = strdup(message != NULL ? message : "");
        oom = oom || j->message == NULL;
    }
    if (k->admit == JOBS_ADMIT_POD) {
        j->pod = ctrl_pod_skeleton(obj);
        oom = oom || j->pod == NULL;
    }
    if (oom) {
        ctrl_record_free(rk, j);
        return NULL;
    }
    return j;
}

/* ---- Pods (pods.c reads these) --------------------------------------------------------- */

/* Copy member `key` of `from` into `to` when present. */
static int copy_member(json_t *to, const json_t *from, const char *key)
{
    json_t *v = json_object_get(from, key);

    return v == NULL ? 0 : json_object_set_new(to, key, json_deep_copy(v));
}

json_t *ctrl_pod_skeleton(const json_t *pod)
{
    static const char *const meta_keys[] = {"name",
                                            "namespace",
                                            "uid",
                                            "resourceVersion",
                                            "creationTimestamp",
                                            "deletionTimestamp",
                                            "deletionGracePeriodSeconds",
                                            "labels",
                                            "annotations",
                                            "finalizers",
                                            "ownerReferences"};
    const json_t *meta = json_object_get(pod, "metadata"), *spec = json_object_get(pod, "spec"),
                 *status = json_object_get(pod, "status");
    json_t *out = json_pack("{s:{},s:{},s:{}}", "metadata", "spec", "status");
    json_t *m, *ann;
    char role[JOBS_POD_ROLE_MAX + 1];
    int bad = out == NULL;

    if (bad)
        return NULL;
    m = json_object_get(out, "metadata");
    for (size_t i = 0; i < sizeof(meta_keys) / sizeof(meta_keys[0]); i++)
        bad |= copy_member(m, meta, meta_keys[i]);
    bad |= copy_member(json_object_get(out, "spec"), spec, "schedulingGates");
    bad |= copy_member(json_object_get(out, "spec"), spec, "nodeName");
    bad |= copy_member(json_object_get(out, "status"), status, "phase");
    bad |= copy_member(json_object_get(out, "status"), status, "message");
    bad |= copy_member(json_object_get(out, "status"), status, "conditions");
    /* The role needs the containers the skeleton drops: computed now, kept as the annotation
     * (which wins in jobs_pod_role_hash() when the webhook set it already). */
    if (!bad && jobs_pod_role_hash(pod, role, NULL) == ERR_OK) {
        ann = json_object_get(m, "annotations");
        if (!json_is_object(ann)) {
            ann = json_object();
            bad |= json_object_set_new(m, "annotations", ann);
        }
        bad |= ann == NULL || json_object_set_new(ann, JOBS_POD_ROLE_HASH, json_string(role));
    }
    if (bad) {
        json_decref(out);
        return NULL;
    }
    return out;
}

/* ---- dispatch ---------------------------------------------------------------------------- */

static bool is(const ctrl_record_kind_t *rk, const char *kind)
{
    return strcmp(rk->kind, kind) == 0;
}

void *ctrl_record_decode(const ctrl_record_kind_t *rk, json_t *obj)
{
    if (rk->job != NULL)
        return job_decode(rk, obj);
    if (is(rk, "Workload"))
        return wl_decode(rk, obj);
    return qobj_decode(rk, obj);
}

void ctrl_record_free(const ctrl_record_kind_t *rk, void *rec)
{
    if (rec == NULL)
        return;
    if (rk->job != NULL) {
        ctrl_job_t *j = rec;
        object_meta_fini(&j->meta);
        free(j->invalid);
        ctrl_owner_fini(&j->owner);
        free(j->queue_name);
        free(j->priority);
        free(j->message);
        free(j->reclaim);
        json_decref(j->pod);
        json_decref(j->raw);
        free(j);
    } else if (is(rk, "Workload")) {
        ctrl_wl_t *w = rec;
        wl_unintern(rk->strings, w);
        podsets_free(rk->strings, w);
        workload_fini(&w->wl);
        free(w->invalid);
        ctrl_owner_fini(&w->owner);
        free(w->no_effect);
        free(w);
    } else {
        qobj_free(rec);
    }
}

uint64_t ctrl_rv_num(const char *rv)
{
    char *end = NULL;
    unsigned long long v;

    if (rv == NULL || rv[0] == '\0')
        return 0;
    v = strtoull(rv, &end, 10);
    return end != NULL && *end == '\0' ? (uint64_t)v : 0;
}

bool ctrl_qobj_feeds_engine(const ctrl_qobj_t *old, const ctrl_qobj_t *rec)
{
    const object_meta_t *a, *b;

    if (old == NULL || rec == NULL)
        return true;
    if (!old->valid || !rec->valid) /* an invalid object only gets logged: say so once */
        return old->valid != rec->valid ||
               strcmp(old->invalid ? old->invalid : "", rec->invalid ? rec->invalid : "") != 0;
    if (old->obj.kind != rec->obj.kind ||
        (rec->obj.kind != KIND_CLUSTER_QUEUE && rec->obj.kind != KIND_LOCAL_QUEUE &&
         rec->obj.kind != KIND_COHORT))
        return true;
    a = object_meta_const(&old->obj);
    b = object_meta_const(&rec->obj);
    return a->generation <= 0 || a->generation != b->generation || a->deleting != b->deleting ||
           !kv_list_equal(&a->labels, &b->labels) ||
           !kv_list_equal(&a->annotations, &b->annotations);
}
