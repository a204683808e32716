/* replay -- lib/verify fed with the Workload records of an API watch (and the queue objects). */
/* SPDX-License-Identifier: Apache-2.0 */
#include "verify/replay.h"

#include "model/diag.h"
#include "model/object.h"
#include "util/hmap.h"
#include "verify/verify.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What the last record of one Workload said. */
typedef struct rwl_s {
    char *cq;       /* owned: the ClusterQueue it holds quota in, NULL when it holds none */
    bool finished;  /* Finished=True */
    bool deleted;   /* a DELETED event */
    bool explained; /* QuotaReserved=False with a reason or message */
} rwl_t;

struct verify_replay_s {
    verify_t *v;
    util_hmap_t wls; /* "ns/name" -> rwl_t * (owned) */
    verify_replay_stats_t st;
};

verify_replay_t *verify_replay_new(void)
{
    verify_replay_t *r = calloc(1, sizeof(*r));

    if (r == NULL)
        return NULL;
    util_hmap_init(&r->wls, 0x7265706c6179ULL);
    if ((r->v = verify_new()) == NULL) {
        free(r);
        return NULL;
    }
    return r;
}

void verify_replay_free(verify_replay_t *r)
{
    const char *key;
    void *v;

    if (r == NULL)
        return;
    for (size_t pos = 0; util_hmap_next(&r->wls, &pos, &key, &v);) {
        rwl_t *w = v;
        free(w->cq);
        free(w);
    }
    util_hmap_fini(&r->wls);
    verify_free(r->v);
    free(r);
}

/* The first error of `d` into `msg` as "what: path: message". */
static err_t first_error(const diags_t *d, const char *what, err_msg_t *msg)
{
    for (size_t i = 0; i < d->len; i++)
        if (!d->items[i].warning)
            return err_set(msg, ERR_INVALID, "%s: %s: %s", what, d->items[i].path,
                           d->items[i].message);
    return err_set(msg, ERR_INVALID, "%s: cannot be decoded", what);
}

err_t verify_replay_queues(verify_replay_t *r, json_t *obj, err_msg_t *msg)
{
    const char *kind = json_string_value(json_object_get(obj, "kind"));
    const char *name = json_string_value(json_object_get(json_object_get(obj, "metadata"), "name"));
    char what[320];
    object_t o;
    diags_t d;
    err_t rc;

    if (kind != NULL && strcmp(kind, "List") == 0) {
        json_t *item;
        size_t i;
        json_array_foreach(json_object_get(obj, "items"), i, item)
        {
            if ((rc = verify_replay_queues(r, item, msg)) != ERR_OK)
                return rc;
        }
        return ERR_OK;
    }
    if (kind == NULL || (strcmp(kind, "ClusterQueue") != 0 && strcmp(kind, "Cohort") != 0))
        return ERR_OK;
    snprintf(what, sizeof(what), "%s %s", kind, name ? name : "(no name)");
    diags_init(&d);
    memset(&o, 0, sizeof(o));
    rc = object_decode_stored(obj, &o, &d);
    if (rc == ERR_INVALID)
        rc = first_error(&d, what, msg);
    else if (rc == ERR_NOMEM)
        rc = err_set(msg, ERR_NOMEM, "%s: out of memory", what);
    else if (o.kind == KIND_CLUSTER_QUEUE)
        rc = verify_cluster_queue(r->v, &o.u.cq, msg);
    else if (o.kind == KIND_COHORT)
        rc = verify_cohort(r->v, &o.u.cohort, msg);
    object_fini(&o);
    diags_fini(&d);
    return rc;
}

/* Is QuotaReserved=False explained (a reason or a message) in `wl`'s status? */
static bool explained(const workload_t *wl)
{
    for (size_t i = 0; i < wl->nstatus_conditions; i++) {
        const condition_t *c = &wl->status_conditions[i];
        if (strcmp(c->type, "QuotaReserved") == 0)
            return strcmp(c->status, "False") == 0 &&
                   ((c->reason != NULL && c->reason[0]) || (c->message != NULL && c->message[0]));
    }
    return false;
}

static rwl_t *state_of(verify_replay_t *r, const char *key)
{
    rwl_t *w = util_hmap_get(&r->wls, key);

    if (w != NULL)
        return w;
    if ((w = calloc(1, sizeof(*w))) == NULL)
        return NULL;
    if (util_hmap_put(&r->wls, key, w, NULL) != ERR_OK) {
        free(w);
        return NULL;
    }
    r->st.workloads++;
    return w;
}

err_t verify_replay_record(verify_replay_t *r, json_t *rec, err_msg_t *msg)
{
    const char *type = json_string_value(json_object_get(rec, "type"));
    json_t *obj = type != NULL ? json_object_get(rec, "object") : rec;
    json_t *md = json_object_get(obj, "metadata");
    const char *kind = json_string_value(json_object_get(obj, "kind"));
    const char *ns = json_string_value(json_object_get(md, "namespace"));
    const char *name = json_string_value(json_object_get(md, "name"));
    const char *rv = json_string_value(json_object_get(md, "resourceVersion"));
    bool deleted = type != NULL && strcmp(type, "DELETED") == 0;
    char key[512], where[640];
    err_msg_t vmsg = {{0}};
    const workload_t *wl;
    const char *cq;
    object_t o;
    diags_t d;
    rwl_t *w;
    err_t rc;

    if (type != NULL && strcmp(type, "ADDED") != 0 && strcmp(type, "MODIFIED") != 0 && !deleted)
        return ERR_OK; /* BOOKMARK, ERROR */
    if (type == NULL && (kind == NULL || strcmp(kind, "Workload") != 0))
        return ERR_OK; /* the queues, anything else given along */
    r->st.records++;
    snprintf(key, sizeof(key), "%s/%s", ns ? ns : "", name ? name : "");
    snprintf(where, sizeof(where), "record %zu (Workload %s, resourceVersion %s)", r->st.records,
             key, rv ? rv : "?");
    diags_init(&d);
    memset(&o, 0, sizeof(o));
    rc = object_decode_stored(obj, &o, &d);
    diags_fini(&d);
    if (rc == ERR_NOMEM)
        return err_set(msg, ERR_NOMEM, "%s: out of memory", where);
    if (rc != ERR_OK || o.kind != KIND_WORKLOAD) {
        object_fini(&o);
        r->st.undecodable++;
        return ERR_OK;
    }
    wl = &o.u.wl;
    if ((w = state_of(r, key)) == NULL) {
        object_fini(&o);
        return err_set(msg, ERR_NOMEM, "%s: out of memory", where);
    }
    cq = !deleted && wl->admission != NULL && wl->conditions.quota_reserved &&
                 !wl->conditions.finished
             ? wl->admission->cluster_queue
             : NULL;
    rc = ERR_OK;
    if (w->cq != NULL && (cq == NULL || strcmp(cq, w->cq) != 0)) {
        rc = verify_release(r->v, -1, key, wl->conditions.finished, &vmsg);
        free(w->cq);
        w->cq = NULL;
        r->st.releases++;
    }
    if (rc == ERR_OK && cq != NULL && w->cq == NULL) {
        rc = verify_admit(r->v, -1, key, wl->admission, &vmsg);
        if (rc == ERR_INVALID)
            r->st.violations++;
        else if (rc == ERR_OK)
            r->st.admissions++;
        /* Held in the API even when the admission broke a rule (the checker did not count it):
         * its later records are the same admission, not new ones. */
        if (rc != ERR_NOMEM && (w->cq = strdup(cq)) == NULL)
            rc = ERR_NOMEM;
    }
    /* Reclaimable pods give part of a held admission back (Kueue's ReclaimablePods). */
    if (rc == ERR_OK && cq != NULL && w->cq != NULL)
        rc = verify_reclaim(r->v, key, wl, &vmsg);
    w->finished = w->finished || wl->conditions.finished;
    w->deleted = deleted;
    w->explained = explained(wl);
    object_fini(&o);
    if (rc != ERR_OK)
        return err_set(msg, rc, "%s: %s", where, vmsg.text);
    return ERR_OK;
}

size_t verify_replay_end(verify_replay_t *r, err_msg_t *msg)
{
    const char *key;
    void *v;
    size_t n = 0;

    for (size_t pos = 0; util_hmap_next(&r->wls, &pos, &key, &v);) {
        const rwl_t *w = v;
        if (w->finished || w->deleted || w->cq != NULL || w->explained)
            continue;
        if (n++ == 0)
            err_set(msg, ERR_INVALID,
                    "Workload %s ends neither finished, nor admitted, nor pending with a reason "
                    "(QuotaReserved=False and its reason or message)",
                    key);
    }
    r->st.unexplained = n;
    return n;
}

verify_replay_stats_t verify_replay_stats(const verify_replay_t *r)
{
    return r->st;
}
