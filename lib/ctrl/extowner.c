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
 * The resource is found as Kueue's RESTMapper finds it, by API discovery: GET
 * /apis/<group>/<version> (an APIResourceList: each resource's name, kind and scope; the
 * subresources, "appwrappers/status", skipped) once per group/version, kept in c->ext_disc:
 *
 *   owner to read -> its group/version discovered?  no  -> discovery GET (child busy; other
 *                                                          children waiting are marked again)
 *                    yes, kind listed               -> its plural and scope -> the owner's GET
 *                    yes, kind not listed           -> discovered again at most once per
 *                                                      DISC_REFRESH_MS (a CRD installed later),
 *                                                      else not found: children left alone
 *                    discovery failed               -> the plural Kubernetes guesses
 *                                                      (UnsafeGuessKindToResource: lower case +
 *                                                      s / es / ies), logged; asked again after
 *                                                      DISC_REFRESH_MS
 *
 * An owner that is not found (logged) leaves its children alone, as Kueue leaves a child whose
 * owner it cannot read.
 * The Workloads such an owner's controller makes are found by their controller owner's uid
 * (c->ext_wls, kept from the Workload cache's changes).
 */

#define EXT_TTL_MS      10000
#define DISC_REFRESH_MS 10000

/* One group/version's discovery, "group/version" in c->ext_disc. */
typedef struct ext_disc_s {
    json_t *kinds;    /* owned: kind -> [plural, namespaced] of the last answer; NULL: it failed */
    json_t *waiters;  /* owned: [[kind, key], ...] children to mark again at the answer */
    uint64_t fetched; /* loop ms of the last answer; 0 while none */
    bool inflight;
} ext_disc_t;

/* One owner read (or being read), "ns/apiVersion/Kind/name" in c->ext_owners. */
typedef struct ext_entry_s {
    ctrl_extowner_t o;
    char *group, *version, *plural; /* owned: the resource the GET reads (plural: once known) */
    kube_resource_t res;
    uint64_t fetched; /* loop ms of the answer; 0 while none */
    bool inflight;
    json_t *waiters; /* owned: [[kind, key], ...] other children to mark again at the answer */
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
    json_decref(e->waiters);
    free(e);
}

static void disc_free(ext_disc_t *d)
{
    if (d == NULL)
        return;
    json_decref(d->kinds);
    json_decref(d->waiters);
    free(d);
}

void ctrl__extowner_fini(ctrl_t *c)
{
    void *e;

    for (size_t pos = 0; util_hmap_next(&c->ext_owners, &pos, NULL, &e);)
        entry_free(e);
    util_hmap_fini(&c->ext_owners);
    for (size_t pos = 0; util_hmap_next(&c->ext_disc, &pos, NULL, &e);)
        disc_free(e);
    util_hmap_fini(&c->ext_disc);
}

/* Remember the child `kind` `key` in `*waiters` (created when NULL), to be marked again. */
static void wait_on(ctrl_t *c, json_t **waiters, ctrl_kind_t kind, const char *key)
{
    if ((*waiters == NULL && (*waiters = json_array()) == NULL) ||
        json_array_append_new(*waiters, json_pack("[i,s]", (int)kind, key)) != 0)
        c->refeed = true; /* out of memory: everything is reconciled again */
}

/* Mark every child in `*waiters` again and forget them. */
static void wake(ctrl_t *c, json_t **waiters)
{
    size_t i;
    json_t *w;

    json_array_foreach(*waiters, i, w)
    {
        ctrl__mark_job(c, (ctrl_kind_t)json_integer_value(json_array_get(w, 0)),
                       json_string_value(json_array_get(w, 1)));
    }
    json_decref(*waiters);
    *waiters = NULL;
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
        wake(c, &e->waiters);
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

/* ---- API discovery of the owners' resources ---------------------------------------------- */

/* The APIResourceList `body` as kind -> [plural, namespaced] (subresources skipped), or NULL
 * when it is not one. */
static json_t *disc_kinds(const json_t *body)
{
    const json_t *list = json_object_get(body, "resources"), *r;
    json_t *kinds;
    size_t i;

    if (!json_is_array(list) || (kinds = json_object()) == NULL)
        return NULL;
    json_array_foreach(list, i, r)
    {
        const char *name = json_string_value(json_object_get(r, "name"));
        const char *kind = json_string_value(json_object_get(r, "kind"));

        if (name == NULL || kind == NULL || name[0] == '\0' || strchr(name, '/') != NULL ||
            json_object_get(kinds, kind) != NULL)
            continue;
        if (json_object_set_new(
                kinds, kind,
                json_pack("[s,b]", name, json_is_true(json_object_get(r, "namespaced")))) != 0) {
            json_decref(kinds);
            return NULL;
        }
    }
    return kinds;
}

/* The discovery answer: the group/version's kinds, or failed (its owners' plurals guessed). */
static void on_disc(const kube_result_t *res, void *data)
{
    ctrl_op_t *op = data;
    ctrl_t *c = op->c;
    const char *gv = json_string_value(op->data);
    ext_disc_t *d = util_hmap_get(&c->ext_disc, gv);
    kube_result_t r = *res;

    r.body = NULL;
    r.err = ERR_OK; /* an answer either way: the child decides again */
    if (d != NULL && !res->canceled) {
        d->inflight = false;
        d->fetched = uv_now(c->loop) ? uv_now(c->loop) : 1;
        json_decref(d->kinds);
        d->kinds = res->err == ERR_OK ? disc_kinds(res->body) : NULL;
        if (d->kinds == NULL)
            ctrl__log(c, CTRL_LOG_INFO,
                      "API discovery of %s failed (%s): the resources of its "
                      "integrations.externalFrameworks owners are guessed from their kinds",
                      gv, res->err == ERR_OK ? "not an APIResourceList" : res->msg.text);
        wake(c, &d->waiters);
    } else if (d != NULL) {
        d->inflight = false;
        wake(c, &d->waiters);
    }
    ctrl__on_done(&r, op); /* marks the child again (the op holds it busy) */
}

static bool send_disc(ctrl_op_t *op)
{
    char path[CTRL_KEY_MAX + 8];

    snprintf(path, sizeof(path), "/apis/%s", json_string_value(op->data));
    return kube_get_raw(op->c->client, path, NULL, on_disc, op, NULL, NULL) == ERR_OK;
}

typedef enum { RES_KNOWN, RES_WAIT, RES_ABSENT } res_t;

/* Give `e` the plural and scope of `kind` in its group/version: known (from discovery, or
 * guessed when discovery failed), being discovered for the child `ckind` `key` (RES_WAIT), or
 * not served (RES_ABSENT). */
static res_t resolve(ctrl_t *c, ext_entry_t *e, const char *kind, ctrl_kind_t ckind,
                     const char *key)
{
    char gv[CTRL_KEY_MAX], guess[128];
    uint64_t now = uv_now(c->loop);
    const json_t *known;
    const char *plural = guess;
    bool namespaced = true;
    ext_disc_t *d;
    ctrl_op_t *op;
    char *copy;

    snprintf(gv, sizeof(gv), "%s/%s", e->group, e->version);
    d = util_hmap_get(&c->ext_disc, gv);
    if (d == NULL) {
        if ((d = calloc(1, sizeof(*d))) == NULL ||
            util_hmap_put(&c->ext_disc, gv, d, NULL) != ERR_OK) {
            free(d);
            ctrl__log(c, CTRL_LOG_ERROR, "out of memory discovering %s", gv);
            c->refeed = true;
            return RES_WAIT;
        }
    }
    if (d->inflight) {
        wait_on(c, &d->waiters, ckind, key);
        return RES_WAIT;
    }
    if (d->fetched != 0) {
        known = d->kinds != NULL ? json_object_get(d->kinds, kind) : NULL;
        if (known != NULL) {
            plural = json_string_value(json_array_get(known, 0));
            namespaced = json_is_true(json_array_get(known, 1));
        } else if (now - d->fetched < DISC_REFRESH_MS) {
            if (d->kinds != NULL)
                return RES_ABSENT;
            guess_plural(kind, guess, sizeof(guess));
        } else {
            plural = NULL; /* discovered again below */
        }
        if (plural != NULL) {
            if (e->plural == NULL || strcmp(e->plural, plural) != 0) {
                if ((copy = strdup(plural)) == NULL) {
                    c->refeed = true; /* out of memory: everything is reconciled again */
                    return RES_WAIT;
                }
                free(e->plural);
                e->plural = copy;
            }
            e->res.resource = e->plural;
            e->res.namespaced = namespaced;
            return RES_KNOWN;
        }
    }
    op = ctrl__op_new(c, CTRL_OP_EXT_OWNER, ckind, key, ckind, key);
    if (op == NULL || (op->data = json_string(gv)) == NULL) {
        ctrl__op_free(op);
        c->refeed = true;
        return RES_WAIT;
    }
    op->verb = "get";
    op->send = send_disc;
    d->inflight = true;
    if (!ctrl__submit(c, op))
        d->inflight = false;
    return RES_WAIT;
}

/* ---- reading an owner ---------------------------------------------------------------------- */

/* Forget the owners read more than EXT_TTL_MS ago (at most once per EXT_TTL_MS): a read is
 * reused only while fresh, so a stale entry is dead weight, and owners come and go (an
 * AppWrapper per training run) -- the map stays bounded by the owners read in one interval. */
static void sweep(ctrl_t *c, uint64_t now)
{
    const char *k;
    void *v;

    if (now - c->ext_swept < EXT_TTL_MS)
        return;
    c->ext_swept = now;
    for (size_t pos = 0; util_hmap_next(&c->ext_owners, &pos, &k, &v);) {
        ext_entry_t *e = v;
        if (!e->inflight && e->waiters == NULL && e->fetched != 0 &&
            now - e->fetched >= EXT_TTL_MS) {
            util_hmap_del(&c->ext_owners, k);
            entry_free(e);
        }
    }
}

ctrl_ext_t ctrl__extowner(ctrl_t *c, const char *ns, const ctrl_owner_t *ref, ctrl_kind_t kind,
                          const char *key, const ctrl_extowner_t **out)
{
    char ekey[CTRL_KEY_MAX * 2];
    const char *slash = ref->api_version ? strchr(ref->api_version, '/') : NULL;
    ext_entry_t *e;
    ctrl_op_t *op;
    uint64_t now = uv_now(c->loop);

    if (slash == NULL || ref->kind == NULL || ref->name == NULL)
        return CTRL_EXT_GONE;
    sweep(c, now);
    snprintf(ekey, sizeof(ekey), "%s/%s/%s/%s", ns, ref->api_version, ref->kind, ref->name);
    e = util_hmap_get(&c->ext_owners, ekey);
    if (e != NULL && e->fetched != 0 && now - e->fetched < EXT_TTL_MS) {
        if (!e->o.found)
            return CTRL_EXT_GONE;
        *out = &e->o;
        return CTRL_EXT_FOUND;
    }
    if (e != NULL && e->inflight) {
        wait_on(c, &e->waiters, kind, key);
        return CTRL_EXT_PENDING;
    }
    if (e == NULL) {
        e = calloc(1, sizeof(*e));
        if (e == NULL ||
            (e->group = strndup(ref->api_version, (size_t)(slash - ref->api_version))) == NULL ||
            (e->version = strdup(slash + 1)) == NULL ||
            util_hmap_put(&c->ext_owners, ekey, e, NULL) != ERR_OK) {
            entry_free(e);
            ctrl__log(c, CTRL_LOG_ERROR, "out of memory reading %s", ekey);
            c->refeed = true;
            return CTRL_EXT_PENDING;
        }
        e->res.group = e->group;
        e->res.version = e->version;
    }
    switch (resolve(c, e, ref->kind, kind, key)) {
    case RES_WAIT:
        return CTRL_EXT_PENDING;
    case RES_ABSENT:
        ctrl__log(c, CTRL_LOG_INFO,
                  "%s: kind %s is not served by %s/%s (API discovery; "
                  "integrations.externalFrameworks owner): its children are left alone",
                  ekey, ref->kind, e->group, e->version);
        e->fetched = now ? now : 1;
        e->o.found = false;
        return CTRL_EXT_GONE;
    case RES_KNOWN:
        break;
    }
    op = ctrl__op_new(c, CTRL_OP_EXT_OWNER, kind, key, kind, key);
    if (op == NULL || (op->data = json_string(ekey)) == NULL ||
        (op->body = json_pack("{s:s,s:s}", "namespace", ns, "name", ref->name)) == NULL) {
        ctrl__op_free(op);
        c->refeed = true; /* out of memory: everything is reconciled again */
        return CTRL_EXT_PENDING;
    }
    op->verb = "get";
    op->send = send_get;
    e->inflight = true;
    if (!ctrl__submit(c, op))
        e->inflight = false; /* not sent: asked again at the refeed */
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
