/* framework -- Kueue's job integrations as one table: a kind is an entry, not a controller. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "jobs/framework.h"

#include "jobs/framework_int.h"
#include "jobs/job_workload.h"
#include "model/fragment.h"
#include "model/names.h"
#include "util/alloc.h"
#include "util/hmap.h"
#include "util/str.h"

#include <errno.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * What Kueue's jobframework does for every GenericJob, over a kind's table entry:
 *
 *   object --pod_sets()--> [name, template, count, minCount] --build--> Workload
 *   object + admission --jobs_start()--> templates merged, counts set, released
 *   object + Workload.spec.podSets --jobs_stop()--> held, templates restored
 *
 * Start and stop work on a deep copy of the object and swap it in at the end, so an error
 * (a conflict, out-of-memory) leaves the caller's object as it was, and so that a kind's
 * pod_sets() can hand out templates borrowed from the copy that the merge then edits in place.
 */

/* ---- JSON helpers shared by the kinds ------------------------------------------------------ */

json_t *jobs__at(const json_t *obj, const char *const *keys)
{
    json_t *v = (json_t *)obj;

    for (size_t i = 0; keys[i] != NULL && v != NULL; i++)
        v = json_is_object(v) ? json_object_get(v, keys[i]) : NULL;
    return v;
}

int32_t jobs__int32(const json_t *v, int32_t def)
{
    if (json_is_integer(v)) {
        json_int_t i = json_integer_value(v);
        return i >= INT32_MIN && i <= INT32_MAX ? (int32_t)i : def;
    }
    if (json_is_real(v)) {
        double d = json_real_value(v);
        if (d >= INT32_MIN && d <= INT32_MAX && d == (double)(int32_t)d)
            return (int32_t)d;
    }
    return def;
}

json_t *jobs__member(json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);

    if (v == NULL || json_is_null(v)) {
        v = json_object();
        if (v == NULL || json_object_set_new(o, key, v))
            return NULL;
    }
    return json_is_object(v) ? v : NULL;
}

/* jobs__member() telling its two failures apart: ERR_INVALID when something else than an object
 * is at `key` (or `o` is no object), ERR_NOMEM when creating it failed. */
static err_t member(json_t *o, const char *key, json_t **out, err_msg_t *msg)
{
    json_t *v = json_object_get(o, key);

    if (!json_is_object(o) || (v != NULL && !json_is_null(v) && !json_is_object(v)))
        return err_set(msg, ERR_INVALID, "%s: must be of type object", key);
    *out = jobs__member(o, key);
    return *out != NULL ? ERR_OK : err_set(msg, ERR_NOMEM, "out of memory");
}

err_t jobs__object_member(json_t *o, const char *key, json_t **out, err_msg_t *msg)
{
    return member(o, key, out, msg);
}

err_t jobs__set_bool(json_t *obj, const char *const *keys, bool v, err_msg_t *msg)
{
    json_t *o = obj;
    err_t rc = ERR_OK;
    size_t i;

    for (i = 0; keys[i + 1] != NULL && rc == ERR_OK; i++)
        rc = member(o, keys[i], &o, msg);
    if (rc == ERR_OK && !json_is_object(o))
        rc = err_set(msg, ERR_INVALID, "object: must be of type object");
    if (rc != ERR_OK)
        return rc;
    if (json_object_set_new(o, keys[i], json_boolean(v)))
        return err_set(msg, ERR_NOMEM, "out of memory");
    return ERR_OK;
}

bool jobs__condition(const json_t *conds, const char *type, const char **message)
{
    size_t i;
    json_t *c;

    json_array_foreach(conds, i, c)
    {
        const char *t = json_string_value(json_object_get(c, "type"));
        const char *s = json_string_value(json_object_get(c, "status"));
        if (t != NULL && s != NULL && strcmp(t, type) == 0 && strcmp(s, "True") == 0) {
            if (message != NULL) {
                const char *m = json_string_value(json_object_get(c, "message"));
                *message = m != NULL ? m : "";
            }
            return true;
        }
    }
    return false;
}

jobs_phase_t jobs__phase_first(const json_t *conds, const char *succeeded, const char *failed,
                               const char **message)
{
    size_t i;
    json_t *c;

    json_array_foreach(conds, i, c)
    {
        const char *t = json_string_value(json_object_get(c, "type"));
        const char *s = json_string_value(json_object_get(c, "status"));
        const char *m = json_string_value(json_object_get(c, "message"));
        if (t == NULL || s == NULL || strcmp(s, "True") != 0)
            continue;
        if (strcmp(t, succeeded) != 0 && strcmp(t, failed) != 0)
            continue;
        if (message != NULL)
            *message = m != NULL ? m : "";
        return strcmp(t, failed) == 0 ? JOBS_FAILED : JOBS_SUCCEEDED;
    }
    return JOBS_RUNNING;
}

err_t jobs__podset_name(jobs_podset_t *ps, const char *name, const char *path, err_msg_t *msg)
{
    size_t n = name != NULL ? strlen(name) : 0;

    if (n == 0 || n > JOBS_PODSET_NAME_MAX)
        return err_set(msg, ERR_INVALID, "%s: pod-set name must be 1 to %d characters", path,
                       JOBS_PODSET_NAME_MAX);
    for (size_t i = 0; i <= n; i++)
        ps->name[i] = name[i] >= 'A' && name[i] <= 'Z' ? (char)(name[i] - 'A' + 'a') : name[i];
    return ERR_OK;
}

bool jobs__positive_int32(const char *s, int32_t *out)
{
    char *end;
    long long v;

    if (s == NULL || *s == '\0' || *s == ' ' || *s == '\t')
        return false;
    errno = 0;
    v = strtoll(s, &end, 10);
    if (errno != 0 || *end != '\0' || v <= 0 || v > INT32_MAX)
        return false;
    *out = (int32_t)v;
    return true;
}

/* ---- name ---------------------------------------------------------------------------------- */

/*
 * Kueue (pkg/controller/jobframework/workload_names.go) hashes kind, group, owner name and uid
 * joined by newlines, keeps 5 hex digits, and cuts "<lower(kind)>-<name>" so the whole name fits
 * the limit: 253 - 1 ("-") - 5 = 247 bytes of prefix. The cut is by bytes and nothing is trimmed
 * after it, so a name may end up with "--" or ".-" in the middle; Kueue does the same.
 */
err_t jobs_workload_name(const jobs_kind_t *k, const char *name, const char *uid, size_t max,
                         char *buf, size_t size, err_msg_t *msg)
{
    static const char hex[] = "0123456789abcdef";
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0;
    EVP_MD_CTX *ctx;
    size_t prefix_max, plen = 0;
    int ok;

    if (max < 7 || size < max + 1)
        return err_set(msg, ERR_INVALID, "workload name: buffer of %zu bytes for %zu", size, max);
    if (uid == NULL)
        uid = "";
    ctx = EVP_MD_CTX_new();
    if (ctx == NULL)
        return err_set(msg, ERR_NOMEM, "workload name: out of memory");
    ok = EVP_DigestInit_ex(ctx, EVP_sha1(), NULL) &&
         EVP_DigestUpdate(ctx, k->kind, strlen(k->kind)) && EVP_DigestUpdate(ctx, "\n", 1) &&
         EVP_DigestUpdate(ctx, k->group, strlen(k->group)) && EVP_DigestUpdate(ctx, "\n", 1) &&
         EVP_DigestUpdate(ctx, name, strlen(name)) && EVP_DigestUpdate(ctx, "\n", 1) &&
         EVP_DigestUpdate(ctx, uid, strlen(uid)) && EVP_DigestFinal_ex(ctx, md, &mdlen);
    EVP_MD_CTX_free(ctx);
    if (!ok || mdlen < 3)
        return err_set(msg, ERR_UNSUPPORTED, "workload name: SHA-1 unavailable in OpenSSL");

    prefix_max = max - 6;
    for (const char *p = k->kind; *p != '\0' && plen < prefix_max; p++)
        buf[plen++] = *p >= 'A' && *p <= 'Z' ? (char)(*p - 'A' + 'a') : *p;
    if (plen < prefix_max)
        buf[plen++] = '-';
    for (const char *p = name; *p != '\0' && plen < prefix_max; p++)
        buf[plen++] = *p;
    buf[plen++] = '-';
    for (int i = 0; i < 5; i++)
        buf[plen++] = hex[(md[i / 2] >> (i % 2 ? 0 : 4)) & 0xf];
    buf[plen] = '\0';
    return ERR_OK;
}

/* ---- resolve ------------------------------------------------------------------------------- */

/*
 * A TrainJob carries no pod template: Trainer builds its JobSet from the training runtime it
 * names. Kueue's integration reads that runtime with its client on every PodSets() call; here
 * the caller finds it (informer cache, the documents of a check) and the kind folds the two
 * into one view, so that every reader below keeps reading one object.
 */
err_t jobs_resolve(const jobs_kind_t *k, json_t *obj, jobs_find_fn find, void *data, json_t **view,
                   err_msg_t *msg)
{
    const json_t *dep;
    jobs_ref_t ref;
    err_t rc;

    if (k->resolve == NULL || k->needs == NULL) {
        *view = json_incref(obj);
        return ERR_OK;
    }
    memset(&ref, 0, sizeof(ref));
    if ((rc = k->needs(obj, &ref, msg)) != ERR_OK)
        return rc;
    dep = find != NULL ? find(data, &ref) : NULL;
    if (dep == NULL)
        return err_set(msg, ERR_NOT_FOUND, "%s '%s' not found", ref.what, ref.name);
    return k->resolve(obj, dep, view, msg);
}

/* ---- build --------------------------------------------------------------------------------- */

err_t jobs__workload_meta(const jobs_kind_t *k, const object_meta_t *m,
                          const char *const *copy_labels, workload_t *wl, err_msg_t *msg)
{
    char name[JOB_WORKLOAD_NAME_MAX + 1];
    const char *pc;
    err_t rc;

    if (m->name == NULL || m->name[0] == '\0')
        return err_set(msg, ERR_INVALID, "%s without metadata.name", k->kind);
    rc = jobs_workload_name(k, m->name, m->uid, JOB_WORKLOAD_NAME_MAX, name, sizeof(name), msg);
    if (rc != ERR_OK)
        return rc;
    wl->active = true;
    if (util_strdup(name, &wl->meta.name) != ERR_OK ||
        util_strdup(m->namespace, &wl->meta.namespace) != ERR_OK)
        goto nomem;
    wl->meta.finalizers = calloc(1, sizeof(char *));
    if (wl->meta.finalizers == NULL)
        goto nomem;
    wl->meta.nfinalizers = 1;
    if (util_strdup(JOB_FINALIZER_RESOURCE_IN_USE, &wl->meta.finalizers[0]) != ERR_OK)
        goto nomem;
    for (size_t i = 0; copy_labels != NULL && copy_labels[i] != NULL; i++) {
        const char *v = kv_list_get(&m->labels, copy_labels[i]);
        if (v != NULL && kv_list_set(&wl->meta.labels, copy_labels[i], v) != ERR_OK)
            goto nomem;
    }
    if (m->uid != NULL && names_is_label_value(m->uid) &&
        kv_list_set(&wl->meta.labels, JOB_LABEL_JOB_UID, m->uid) != ERR_OK)
        goto nomem;
    for (size_t i = 0; i < m->annotations.len; i++)
        if (strncmp(m->annotations.items[i].key, "provreq.kueue.x-k8s.io/", 23) == 0 &&
            kv_list_set(&wl->meta.annotations, m->annotations.items[i].key,
                        m->annotations.items[i].value) != ERR_OK)
            goto nomem;
    if (util_strdup(kv_list_get(&m->labels, JOB_LABEL_QUEUE_NAME), &wl->queue_name) != ERR_OK)
        goto nomem;
    wl->has_max_exec_seconds = jobs__positive_int32(
        kv_list_get(&m->labels, JOB_LABEL_MAX_EXEC_TIME), &wl->max_exec_seconds);
    pc = kv_list_get(&m->labels, JOB_LABEL_PRIORITY_CLASS);
    if (pc != NULL && pc[0] != '\0') {
        if (util_strdup(pc, &wl->priority_class) != ERR_OK)
            goto nomem;
        wl->priority_source = PRIORITY_SOURCE_WORKLOAD_PRIORITY_CLASS;
        wl->priority_kind = PRIORITY_SOURCE_WORKLOAD_PRIORITY_CLASS;
    }
    return ERR_OK;
nomem:
    return err_set(msg, ERR_NOMEM, "out of memory");
}

/* Pod set `i` of `obj` (read as `ps`) into `out`: the Workload's copy of its template, turned
 * into Kueue's by the kind's podset_template(), then decoded. */
static err_t build_pod_set(const jobs_kind_t *k, const json_t *obj, size_t i,
                           const jobs_podset_t *ps, pod_set_t *out, err_msg_t *msg)
{
    char path[JOBS_PATH_MAX + JOBS_PODSET_NAME_MAX + 16];
    json_t *copy = NULL;
    err_t rc;

    if (ps->path[0] != '\0')
        snprintf(path, sizeof(path), "%s", ps->path);
    else
        snprintf(path, sizeof(path), "podSets[%s].template", ps->name);
    out->name = strdup(ps->name);
    if (out->name == NULL)
        return err_set(msg, ERR_NOMEM, "out of memory");
    out->count = ps->count;
    out->has_min_count = ps->min_count > 0;
    out->min_count = out->has_min_count ? ps->min_count : 0;
    if (!json_is_object(ps->tmpl))
        return err_set(msg, ERR_INVALID, "%s: Required value", path);
    /* Only a kind that amends the Workload's template needs its own copy (a deep copy is most
     * of the cost of a build: jansson's loop check formats every node's address). */
    if (k->podset_template == NULL)
        return fragment_pod_template(ps->tmpl, path, out, msg);
    copy = json_deep_copy(ps->tmpl);
    if (copy == NULL)
        return err_set(msg, ERR_NOMEM, "out of memory");
    rc = k->podset_template(obj, i, copy, msg);
    if (rc == ERR_OK)
        rc = fragment_pod_template(copy, path, out, msg);
    json_decref(copy);
    return rc;
}

/* *view = `obj` as start and stop see it: `obj` itself, or for a kind with prepare() a prepared
 * copy, also in *hold for the caller to drop (NULL otherwise), so that reading never writes into
 * the caller's object. */
static err_t prepared(const jobs_kind_t *k, json_t *obj, json_t **view, json_t **hold,
                      err_msg_t *msg)
{
    err_t rc;

    *view = obj;
    *hold = NULL;
    if (k->prepare == NULL)
        return ERR_OK;
    if ((*hold = json_deep_copy(obj)) == NULL)
        return err_set(msg, ERR_NOMEM, "out of memory");
    if ((rc = k->prepare(*hold, msg)) != ERR_OK) {
        json_decref(*hold);
        *hold = NULL;
        return rc;
    }
    *view = *hold;
    return ERR_OK;
}

err_t jobs_workload_build(const jobs_kind_t *k, json_t *obj, const char *const *copy_labels,
                          workload_t *out, err_msg_t *msg)
{
    jobs_podset_t ps[JOBS_PODSETS_MAX];
    object_meta_t m;
    workload_t wl;
    json_t *hold;
    size_t n = 0;
    err_t rc;

    memset(out, 0, sizeof(*out));
    memset(&wl, 0, sizeof(wl));
    memset(ps, 0, sizeof(ps));
    if ((rc = prepared(k, obj, &obj, &hold, msg)) != ERR_OK)
        return rc;
    rc = fragment_meta(obj, &m, msg);
    if (rc != ERR_OK) {
        json_decref(hold);
        return rc;
    }
    rc = jobs__workload_meta(k, &m, copy_labels, &wl, msg);
    if (rc == ERR_OK)
        rc = k->pod_sets(obj, ps, &n, msg);
    if (rc == ERR_OK && n == 0)
        rc = err_set(msg, ERR_INVALID, "%s %s: no pod set", k->kind, m.name);
    if (rc != ERR_OK)
        goto fail;
    wl.pod_sets = calloc(n, sizeof(*wl.pod_sets));
    if (wl.pod_sets == NULL) {
        rc = err_set(msg, ERR_NOMEM, "out of memory");
        goto fail;
    }
    wl.npod_sets = n;
    for (size_t i = 0; i < n && rc == ERR_OK; i++)
        rc = build_pod_set(k, obj, i, &ps[i], &wl.pod_sets[i], msg);
    if (rc != ERR_OK) {
        if (rc != ERR_NOMEM)
            rc = err_prefix(msg, rc, "%s %s: ", k->kind, m.name);
        goto fail;
    }
    object_meta_fini(&m);
    json_decref(hold);
    *out = wl;
    return ERR_OK;
fail:
    object_meta_fini(&m);
    workload_fini(&wl);
    json_decref(hold);
    return rc;
}

const char *jobs_priority_class(const jobs_kind_t *k, json_t *obj)
{
    jobs_podset_t ps[JOBS_PODSETS_MAX];
    const char *name = k->priority_class != NULL ? k->priority_class(obj) : NULL;
    size_t n = 0;

    if (name != NULL && name[0] != '\0')
        return name;
    memset(ps, 0, sizeof(ps));
    if (k->pod_sets(obj, ps, &n, NULL) != ERR_OK)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        name = json_string_value(JOBS_AT(ps[i].tmpl, "spec", "priorityClassName"));
        if (name != NULL && name[0] != '\0')
            return name;
    }
    return NULL;
}

/* ---- start --------------------------------------------------------------------------------- */

bool jobs__any_active(const json_t *statuses)
{
    size_t i;
    json_t *st;

    json_array_foreach(statuses, i, st)
    {
        if (jobs__int32(json_object_get(st, "active"), 0) > 0)
            return true;
    }
    return false;
}

err_t jobs__swap_in(json_t *dst, json_t *src, err_msg_t *msg)
{
    err_t rc = ERR_OK;

    if (json_object_clear(dst) || json_object_update(dst, src))
        rc = err_set(msg, ERR_NOMEM, "out of memory");
    json_decref(src);
    return rc;
}

/* Is `s` a DNS-1123 label (what a label value may hold here: the CQ label is only set then)? */
static bool dns_label(const char *s)
{
    size_t n = strlen(s);

    if (n == 0 || n > 63)
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        bool alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
        if (!alnum && !(c == '-' && i > 0 && i + 1 < n))
            return false;
    }
    return true;
}

/* Merge string map `add` into the object member `key` of `parent`, refusing a key that exists
 * with another value (Kueue's podset.Merge). */
static err_t merge_map(json_t *parent, const char *key, json_t *add, err_msg_t *msg)
{
    const char *k;
    json_t *v, *dst;
    err_t rc;

    if (add == NULL || json_object_size(add) == 0)
        return ERR_OK;
    rc = member(parent, key, &dst, msg);
    if (rc != ERR_OK)
        return rc;
    json_object_foreach(add, k, v)
    {
        json_t *old = json_object_get(dst, k);
        if (old != NULL && !json_equal(old, v)) {
            const char *a = json_string_value(old), *b = json_string_value(v);
            return err_set(msg, ERR_CONFLICT,
                           "invalid %s: conflict for key=%s, value1=%s, value2=%s", key, k,
                           a ? a : "?", b ? b : "?");
        }
    }
    if (json_object_update(dst, add))
        return err_set(msg, ERR_NOMEM, "%s: out of memory", key);
    return ERR_OK;
}

/* Append the tolerations of `add` that `pspec` does not have yet. */
static err_t merge_tolerations(json_t *pspec, const json_t *add, err_msg_t *msg)
{
    json_t *tols, *v, *have;
    size_t i, j;

    if (json_array_size(add) == 0)
        return ERR_OK;
    tols = json_object_get(pspec, "tolerations");
    if (tols == NULL || json_is_null(tols)) {
        tols = json_array();
        if (tols == NULL || json_object_set_new(pspec, "tolerations", tols))
            return err_set(msg, ERR_NOMEM, "out of memory");
    }
    if (!json_is_array(tols))
        return err_set(msg, ERR_INVALID, "tolerations: not an array");
    json_array_foreach(add, i, v)
    {
        bool dup = false;
        json_array_foreach(tols, j, have) dup = dup || json_equal(have, v);
        if (!dup && json_array_append(tols, v))
            return err_set(msg, ERR_NOMEM, "out of memory");
    }
    return ERR_OK;
}

err_t jobs_start_metadata(const jobs_start_info_t *info, json_t *labels, json_t *annotations,
                          err_msg_t *msg)
{
    if ((info->name != NULL &&
         json_object_set_new(labels, JOBS_LABEL_PODSET, json_string(info->name))) ||
        (info->local_queue != NULL &&
         json_object_set_new(labels, JOBS_LABEL_LOCAL_QUEUE, json_string(info->local_queue))) ||
        (info->cluster_queue != NULL && dns_label(info->cluster_queue) &&
         json_object_set_new(labels, JOBS_LABEL_CLUSTER_QUEUE, json_string(info->cluster_queue))) ||
        (info->workload != NULL &&
         json_object_set_new(annotations, JOBS_ANNOTATION_WORKLOAD, json_string(info->workload))))
        return err_set(msg, ERR_NOMEM, "out of memory");
    return ERR_OK;
}

/* Kueue's RunWithPodSetsInfo on one template: node selector, tolerations, labels, annotation. */
static err_t merge_template(const jobs_podset_t *ps, const jobs_start_info_t *info, err_msg_t *msg)
{
    json_t *labels = json_object(), *annotations = json_object(), *meta, *pspec;
    jobs_start_info_t named = *info;
    err_t rc;

    if (labels == NULL || annotations == NULL) {
        rc = err_set(msg, ERR_NOMEM, "out of memory");
        goto out;
    }
    rc = member(ps->tmpl, "metadata", &meta, msg);
    if (rc == ERR_OK)
        rc = member(ps->tmpl, "spec", &pspec, msg);
    if (rc != ERR_OK) {
        if (rc != ERR_NOMEM)
            rc = err_prefix(msg, rc, "%s: ", ps->path[0] != '\0' ? ps->path : ps->name);
        goto out;
    }
    named.name = ps->name; /* the pod set's own spelling of the name */
    if ((rc = jobs_start_metadata(&named, labels, annotations, msg)) != ERR_OK)
        goto out;
    rc = merge_map(pspec, "nodeSelector", info->node_selector, msg);
    if (rc == ERR_OK)
        rc = merge_map(meta, "labels", labels, msg);
    if (rc == ERR_OK)
        rc = merge_map(meta, "annotations", annotations, msg);
    if (rc == ERR_OK)
        rc = merge_tolerations(pspec, info->tolerations, msg);
out:
    json_decref(labels);
    json_decref(annotations);
    return rc;
}

/* Index of the pod set named `name` in ps[0..n), or n. */
static size_t find_pod_set(const jobs_podset_t *ps, size_t n, const char *name)
{
    for (size_t i = 0; i < n && name != NULL; i++)
        if (strcmp(ps[i].name, name) == 0)
            return i;
    return n;
}

err_t jobs_start(const jobs_kind_t *k, json_t *obj, const jobs_start_info_t *info, size_t n,
                 err_msg_t *msg)
{
    jobs_podset_t ps[JOBS_PODSETS_MAX];
    json_t *copy;
    size_t np = 0, i;
    err_t rc;

    if (k->start != NULL)
        return k->start(obj, info, n, msg);
    copy = json_deep_copy(obj);
    if (copy == NULL)
        return err_set(msg, ERR_NOMEM, "out of memory");
    memset(ps, 0, sizeof(ps));
    rc = k->prepare != NULL ? k->prepare(copy, msg) : ERR_OK;
    if (rc == ERR_OK)
        rc = k->pod_sets(copy, ps, &np, msg);
    for (size_t j = 0; j < n && rc == ERR_OK; j++) {
        i = find_pod_set(ps, np, info[j].name);
        if (i == np)
            rc = err_set(msg, ERR_INVALID, "%s has no pod set %s", k->kind,
                         info[j].name != NULL ? info[j].name : "(null)");
        else
            rc = merge_template(&ps[i], &info[j], msg);
    }
    /* Counts after every merge: a kind's set_count() may rewrite the members that hold the
     * templates borrowed above. */
    for (size_t j = 0; j < n && rc == ERR_OK; j++)
        if (info[j].has_count && k->set_count != NULL)
            rc = k->set_count(copy, find_pod_set(ps, np, info[j].name), info[j].count, msg);
    if (rc == ERR_OK)
        rc = k->set_suspended(copy, false, msg);
    if (rc != ERR_OK) {
        json_decref(copy);
        return rc;
    }
    return jobs__swap_in(obj, copy, msg);
}

/* ---- stop ---------------------------------------------------------------------------------- */

/* Set or delete member `key` of `o` to a copy of `v` (NULL or empty object/array = delete). */
static int set_or_drop(json_t *o, const char *key, const json_t *v)
{
    if (v == NULL || json_is_null(v) || (json_is_object(v) && json_object_size(v) == 0) ||
        (json_is_array(v) && json_array_size(v) == 0)) {
        json_object_del(o, key);
        return 0;
    }
    return json_object_set_new(o, key, json_deep_copy(v));
}

/* Kueue's RestorePodSpec on one template from the Workload's pod set `item`, keeping the labels
 * the kind's controller owns. */
static err_t restore_template(const jobs_kind_t *k, json_t *tmpl, const json_t *item,
                              err_msg_t *msg)
{
    const json_t *wtmpl = json_object_get(item, "template");
    const json_t *wmeta = json_object_get(wtmpl, "metadata");
    const json_t *wspec = json_object_get(wtmpl, "spec");
    bool had_meta = json_object_get(tmpl, "metadata") != NULL;
    json_t *labels = json_object(), *meta, *pspec, *v;
    const char *key;
    err_t rc = ERR_OK;

    if (labels == NULL)
        goto nomem;
    rc = member(tmpl, "metadata", &meta, msg);
    if (rc == ERR_OK)
        rc = member(tmpl, "spec", &pspec, msg);
    if (rc != ERR_OK)
        goto out;
    json_object_foreach(json_object_get(meta, "labels"), key, v)
    {
        if (k->owned_label != NULL && k->owned_label(key) && json_object_set(labels, key, v))
            goto nomem;
    }
    if (json_is_object(json_object_get(wmeta, "labels")) &&
        json_object_update(labels, json_object_get(wmeta, "labels")))
        goto nomem;
    if (set_or_drop(meta, "labels", labels) ||
        set_or_drop(meta, "annotations", json_object_get(wmeta, "annotations")) ||
        set_or_drop(pspec, "nodeSelector", json_object_get(wspec, "nodeSelector")) ||
        set_or_drop(pspec, "tolerations", json_object_get(wspec, "tolerations")))
        goto nomem;
    /* Nothing left in the template's metadata and none before, or none in the Workload's: leave
     * none (an object stored without template metadata must compare equal to its restored
     * form, also after a start added labels there). */
    if (json_object_size(meta) == 0 && (!had_meta || wmeta == NULL))
        json_object_del(tmpl, "metadata");
    goto out;
nomem:
    rc = err_set(msg, ERR_NOMEM, "out of memory");
out:
    json_decref(labels);
    return rc;
}

/*
 * The Workload's pod set for ps[i] of np: by position when the Workload has as many pod sets as
 * the object (Kueue's RestorePodSetsInfo pairs them by index), else by name; NULL when none.
 */
static const json_t *workload_pod_set(const json_t *pod_sets, const jobs_podset_t *ps, size_t np,
                                      size_t i)
{
    size_t j;
    json_t *item;

    if (json_array_size(pod_sets) == np)
        return json_array_get(pod_sets, i);
    json_array_foreach(pod_sets, j, item)
    {
        const char *name = json_string_value(json_object_get(item, "name"));
        if (name != NULL && strcmp(name, ps[i].name) == 0)
            return item;
    }
    return NULL;
}

err_t jobs_stop(const jobs_kind_t *k, json_t *obj, const json_t *pod_sets, bool *changed,
                err_msg_t *msg)
{
    jobs_podset_t ps[JOBS_PODSETS_MAX];
    json_t *copy;
    size_t np = 0;
    err_t rc;

    if (k->stop != NULL)
        return k->stop(obj, pod_sets, changed, msg);
    copy = json_deep_copy(obj);
    if (copy == NULL)
        return err_set(msg, ERR_NOMEM, "out of memory");
    memset(ps, 0, sizeof(ps));
    rc = k->prepare != NULL ? k->prepare(copy, msg) : ERR_OK;
    if (rc == ERR_OK)
        rc = k->pod_sets(copy, ps, &np, msg);
    for (size_t i = 0; i < np && rc == ERR_OK; i++) {
        const json_t *item = workload_pod_set(pod_sets, ps, np, i);
        if (item != NULL)
            rc = restore_template(k, ps[i].tmpl, item, msg);
    }
    /* Partial admission changed the count to the admitted one: put the Workload's back. */
    for (size_t i = 0; i < np && rc == ERR_OK; i++) {
        const json_t *count = json_object_get(workload_pod_set(pod_sets, ps, np, i), "count");
        if (k->set_count != NULL && ps[i].min_count > 0 && json_is_integer(count))
            rc = k->set_count(copy, i, jobs__int32(count, ps[i].count), msg);
    }
    if (rc == ERR_OK)
        rc = k->set_suspended(copy, true, msg);
    return jobs__commit(obj, copy, rc, changed, msg);
}

err_t jobs__commit(json_t *obj, json_t *copy, err_t rc, bool *changed, err_msg_t *msg)
{
    *changed = false;
    if (rc != ERR_OK || json_equal(copy, obj)) {
        json_decref(copy);
        return rc;
    }
    rc = jobs__swap_in(obj, copy, msg);
    *changed = rc == ERR_OK;
    return rc;
}

/* ---- digest -------------------------------------------------------------------------------- */

/* Does some kind's controller own template label `key`? */
static bool owned_by_any(const char *key)
{
    const jobs_kind_t *k;

    for (size_t i = 0; (k = jobs_kind_at(i)) != NULL; i++)
        if (k->owned_label != NULL && k->owned_label(key))
            return true;
    return false;
}

/* Add member `key` of `src` to `dst` unless absent or empty (as set_or_drop() treats them). The
 * value is shared, not copied: `dst` is only dumped, and copying is most of a digest's cost. */
static int digest_part(json_t *dst, const char *key, const json_t *src)
{
    json_t *v = json_object_get(src, key);

    if (v == NULL || json_is_null(v) || (json_is_object(v) && json_object_size(v) == 0) ||
        (json_is_array(v) && json_array_size(v) == 0))
        return 0;
    return json_object_set(dst, key, v);
}

static uint64_t hash(const void *data, size_t len)
{
    return util_siphash(1, 3, 0x736c756963650a01ULL, 0x706f647365740a02ULL, data, len);
}

uint64_t jobs_template_digest(const json_t *tmpl)
{
    const json_t *meta = json_object_get(tmpl, "metadata");
    const json_t *pspec = json_object_get(tmpl, "spec");
    json_t *parts = json_object(), *labels = json_object(), *v;
    const char *k;
    char *text = NULL;
    uint64_t h = 0;

    if (parts == NULL || labels == NULL)
        goto out;
    json_object_foreach((json_t *)json_object_get(meta, "labels"), k, v)
    {
        if (!owned_by_any(k) && json_object_set(labels, k, v))
            goto out;
    }
    if (json_object_size(labels) > 0 && json_object_set(parts, "labels", labels))
        goto out;
    if (digest_part(parts, "annotations", meta) || digest_part(parts, "nodeSelector", pspec) ||
        digest_part(parts, "tolerations", pspec))
        goto out;
    /* Sorted keys: the same content gives the same text whatever order the server sent. */
    text = util_json_dumps(parts, JSON_COMPACT | JSON_SORT_KEYS);
    if (text != NULL)
        h = hash(text, strlen(text));
out:
    free(text);
    json_decref(parts);
    json_decref(labels);
    return h;
}

/* One pod set's digest is its template's; several are hashed together in order (pod-set names
 * left out: jobs_stop() pairs pod sets by position as Kueue does). */
static uint64_t combine(const uint64_t *d, size_t n)
{
    return n == 0 ? 0 : n == 1 ? d[0] : hash(d, n * sizeof(*d));
}

uint64_t jobs_digest(const jobs_kind_t *k, json_t *obj)
{
    jobs_podset_t ps[JOBS_PODSETS_MAX];
    uint64_t d[JOBS_PODSETS_MAX], digest = 0;
    json_t *hold;
    size_t n = 0;

    memset(ps, 0, sizeof(ps));
    if (prepared(k, obj, &obj, &hold, NULL) != ERR_OK)
        return 0;
    if (k->pod_sets(obj, ps, &n, NULL) == ERR_OK) {
        for (size_t i = 0; i < n; i++)
            d[i] = jobs_template_digest(ps[i].tmpl);
        digest = combine(d, n);
    }
    json_decref(hold);
    return digest;
}

uint64_t jobs_podsets_digest(const json_t *pod_sets)
{
    uint64_t d[JOBS_PODSETS_MAX];
    size_t n = json_array_size(pod_sets);

    if (n > JOBS_PODSETS_MAX)
        return 0;
    for (size_t i = 0; i < n; i++)
        d[i] = jobs_template_digest(json_object_get(json_array_get(pod_sets, i), "template"));
    return combine(d, n);
}
