/* extowner -- owners of integrations.externalFrameworks kinds: their metadata, read on demand. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "ctrl/ctrl_int.h"

#include "ctrl/jobparent.h"
#include "jobs/job_workload.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * Kueue walks a job's controller owners up to the topmost one it manages
 * (FindAncestorJobManagedByKueue): an owner of an enabled integration, or of an
 * externalFrameworks kind ("AppWrapper.v1beta2.workload.codeflare.dev"), that has a queue name
 * (or manageJobsWithoutQueueName). It reads an external owner as PartialObjectMetadata -- its
 * uid, labels and owner references -- and never its spec: another controller (AppWrapper's) owns
 * it and makes its Workload. sluice does not watch those kinds, so it reads an external owner
 * with a GET when a child's reconcile needs it, and keeps what it read for EXT_TTL_MS:
 *
 *   child reconciled -> cached, fresh?  yes -> the walk goes on with it
 *                                       no  -> GET (child busy) -> cached -> child again
 *
 * The resource is named as Kubernetes' RESTMapper guesses it without discovery
 * (UnsafeGuessKindToResource: the kind lower-cased, plus "s", "es" after an s, "ies" for a final
 * y) -- the plural every CRD of these frameworks uses; a kind with another plural is not found
 * (logged) and its children are left alone, as Kueue leaves a child whose owner it cannot read.
 * The Workloads such an owner's controller makes are found by their controller owner's uid
 * (c->ext_wls, kept from the Workload cache's changes).
 */

#define EXT_TTL_MS 10000

/* One owner read (or being read), "ns/apiVersion/Kind/name" in c->ext_owners. */
typedef struct ext_entry_s {
    ctrl_extowner_t o;
    char *group, *version, *plural; /* owned: the resource the GET reads */
    kube_resource_t res;
    uint64_t fetched; /* loop ms of the answer; 0 while none */
    bool inflight;
} ext_entry_t;

static void entry_free(ext_entry_t *e)
{
    if (e == NULL)
        return;
    free(e->o.uid);
    free(e->o.queue_name);
    ctrl_owner_fini(&e->o.owner);
    free(e->group);
    free(e->version);
    free(e->plural);
    free(e);
}

void ctrl__extowner_fini(ctrl_t *c)
{
    void *e;

    for (size_t pos = 0; util_hmap_next(&c->ext_owners, &pos, NULL, &e);)
        entry_free(e);
    util_hmap_fini(&c->ext_owners);
}

/* The plural Kubernetes guesses for `kind` into buf. */
static void guess_plural(const char *kind, char *buf, size_t n)
{
    size_t len = strlen(kind), i;

    for (i = 0; i < len && i + 4 < n; i++)
        buf[i] = (char)tolower((unsigned char)kind[i]);
    buf[i] = '\0';
    if (i > 0 && buf[i - 1] == 's')
        snprintf(buf + i, n - i, "es");
    else if (i > 0 && buf[i - 1] == 'y')
        snprintf(buf + i - 1, n - i + 1, "ies");
    else
        snprintf(buf + i, n - i, "s");
}

static char *dup_json(const json_t *v)
{
    return json_is_string(v) ? strdup(json_string_value(v)) : NULL;
}

/* The answer: an object (found), 404 (not found), or an error (forgotten: asked again later). */
static void on_got(const kube_result_t *res, void *data)
{
    ctrl_op_t *op = data;
    ctrl_t *c = op->c;
    ext_entry_t *e = util_hmap_get(&c->ext_owners, json_string_value(op->data));
    kube_result_t r = *res;
    const json_t *meta = json_object_get(res->body, "metadata"), *ref;
    size_t i;

    r.body = NULL;
    if (e != NULL) {
        e->inflight = false;
        if (res->err == ERR_OK || res->err == ERR_NOT_FOUND) {
            e->fetched = uv_now(c->loop) ? uv_now(c->loop) : 1;
            e->o.found = res->err == ERR_OK;
            free(e->o.uid);
            free(e->o.queue_name);
            ctrl_owner_fini(&e->o.owner);
            e->o.uid = dup_json(json_object_get(meta, "uid"));
            e->o.queue_name =
                dup_json(json_object_get(json_object_get(meta, "labels"), JOB_LABEL_QUEUE_NAME));
            json_array_foreach(json_object_get(meta, "ownerReferences"), i, ref)
            {
                if (!json_is_true(json_object_get(ref, "controller")))
                    continue;
                e->o.owner.api_version = dup_json(json_object_get(ref, "apiVersion"));
                e->o.owner.kind = dup_json(json_object_get(ref, "kind"));
                e->o.owner.name = dup_json(json_object_get(ref, "name"));
                e->o.owner.uid = dup_json(json_object_get(ref, "uid"));
                break;
            }
            if (res->err == ERR_NOT_FOUND)
                ctrl__log(c, CTRL_LOG_INFO,
                          "%s: not found (integrations.externalFrameworks owner, read as "
                          "%s/%s %s): its children are left alone",
                          json_string_value(op->data), e->group, e->version, e->plural);
            r.err = ERR_OK; /* an answer either way */
        } else {
            util_hmap_del(&c->ext_owners, json_string_value(op->data));
            entry_free(e);
        }
    }
    ctrl__on_done(&r, op); /* marks the child again (the op holds it busy) */
}

static bool send_get(ctrl_op_t *op)
{
    ext_entry_t *e = util_hmap_get(&op->c->ext_owners, json_string_value(op->data));
    const char *name = json_string_value(json_object_get(op->body, "name"));
    const char *ns = json_string_value(json_object_get(op->body, "namespace"));

    return e != NULL && name != NULL &&
           kube_get(op->c->client, &e->res, ns, name, NULL, on_got, op, NULL, NULL) == ERR_OK;
}

ctrl_ext_t ctrl__extowner(ctrl_t *c, const char *ns, const ctrl_owner_t *ref, ctrl_kind_t kind,
                          const char *key, const ctrl_extowner_t **out)
{
    char ekey[CTRL_KEY_MAX * 2], plural[128];
    const char *slash = ref->api_version ? strchr(ref->api_version, '/') : NULL;
    ext_entry_t *e;
    ctrl_op_t *op;
    uint64_t now = uv_now(c->loop);

    if (slash == NULL || ref->kind == NULL || ref->name == NULL)
        return CTRL_EXT_GONE;
    snprintf(ekey, sizeof(ekey), "%s/%s/%s/%s", ns, ref->api_version, ref->kind, ref->name);
    e = util_hmap_get(&c->ext_owners, ekey);
    if (e != NULL && e->fetched != 0 && now - e->fetched < EXT_TTL_MS) {
        if (!e->o.found)
            return CTRL_EXT_GONE;
        *out = &e->o;
        return CTRL_EXT_FOUND;
    }
    if (e != NULL && e->inflight)
        return CTRL_EXT_PENDING;
    if (e == NULL) {
        e = calloc(1, sizeof(*e));
        guess_plural(ref->kind, plural, sizeof(plural));
        if (e == NULL ||
            (e->group = strndup(ref->api_version, (size_t)(slash - ref->api_version))) == NULL ||
            (e->version = strdup(slash + 1)) == NULL || (e->plural = strdup(plural)) == NULL ||
            util_hmap_put(&c->ext_owners, ekey, e, NULL) != ERR_OK) {
            entry_free(e);
            ctrl__log(c, CTRL_LOG_ERROR, "out of memory reading %s", ekey);
            return CTRL_EXT_PENDING;
        }
        e->res.group = e->group;
        e->res.version = e->version;
        e->res.resource = e->plural;
        e->res.namespaced = true;
    }
    op = ctrl__op_new(c, CTRL_OP_EXT_OWNER, kind, key, kind, key);
    if (op == NULL)
        return CTRL_EXT_PENDING;
    op->data = json_string(ekey);
    op->body = json_pack("{s:s,s:s}", "namespace", ns, "name", ref->name);
    op->verb = "get";
    op->send = send_get;
    if (op->data == NULL || op->body == NULL) {
        ctrl__op_free(op);
        return CTRL_EXT_PENDING;
    }
    e->inflight = true;
    ctrl__submit(c, op);
    return CTRL_EXT_PENDING;
}

/* ---- the Workloads external owners' controllers make --------------------------------------- */

/* The index key of Workload `w`: its controller owner's uid when that owner is of an external
 * framework kind, else NULL. */
static const char *ext_wl_owner(const ctrl_t *c, const ctrl_wl_t *w)
{
    if (w == NULL || w->owner.uid == NULL ||
        !jobparent_external(c->cfg, w->owner.api_version, w->owner.kind))
        return NULL;
    return w->owner.uid;
}

void ctrl__extowner_wl_changed(ctrl_t *c, const char *key, const ctrl_wl_t *rec,
                               const ctrl_wl_t *old)
{
    if (c->cfg->integrations.nexternal == 0)
        return;
    if (podindex_move(&c->ext_wls, key, ext_wl_owner(c, old), ext_wl_owner(c, rec)) != ERR_OK)
        ctrl__log(c, CTRL_LOG_ERROR, "workload %s: out of memory indexing its owner", key);
}

const ctrl_wl_t *ctrl__extowner_workload(ctrl_t *c, const char *uid)
{
    const char *const *keys;
    const ctrl_wl_t *best = NULL;
    size_t n;

    podindex_members(&c->ext_wls, uid, &keys, &n);
    for (size_t i = 0; i < n; i++) {
        const ctrl_wl_t *w = ctrl__wl(c, keys[i]);
        if (w == NULL || !w->valid || w->wl.conditions.finished)
            continue;
        /* Kueue's getLatestNotFinishedWorkloadForObject: the newest one. */
        if (best == NULL || w->wl.meta.creation_time > best->wl.meta.creation_time ||
            (w->wl.meta.creation_time == best->wl.meta.creation_time &&
             strcmp(w->wl.meta.name ? w->wl.meta.name : "",
                    best->wl.meta.name ? best->wl.meta.name : "") > 0))
            best = w;
    }
    return best;
}
