/* podset -- start and stop a Job's pod template as Kueue does: merge the admission in, restore. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "ctrl/podset.h"

#include "util/hmap.h"

#include <stdio.h>
#include <string.h>

/*
 * Kueue's RunWithPodSetsInfo / RestorePodSetsInfo on a batch Job, over the JSON object so that
 * every pod field sluice does not model survives untouched. Both work on a deep copy and swap it
 * in at the end, so an error (conflict, out-of-memory) leaves the caller's object as it was.
 */

/* Get or create the object member `key` of `o` (borrowed), NULL on OOM or a non-object there. */
static json_t *obj_member(json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);

    if (v == NULL || json_is_null(v)) {
        v = json_object();
        if (v == NULL || json_object_set_new(o, key, v))
            return NULL;
    }
    return json_is_object(v) ? v : NULL;
}

/* Replace the contents of `dst` with those of `src` (consumed). */
static err_t swap_in(json_t *dst, json_t *src, err_msg_t *msg)
{
    if (json_object_clear(dst) || json_object_update(dst, src)) {
        json_decref(src);
        return err_set(msg, ERR_NOMEM, "job: out of memory");
    }
    json_decref(src);
    return ERR_OK;
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

/* Merge string map `add` into `dst` (an object member `key` of `parent`), refusing a key that
 * exists with another value. */
static err_t merge_map(json_t *parent, const char *key, const char *what, json_t *add,
                       err_msg_t *msg)
{
    const char *k;
    json_t *v, *dst;

    if (add == NULL || json_object_size(add) == 0)
        return ERR_OK;
    dst = obj_member(parent, key);
    if (dst == NULL)
        return err_set(msg, ERR_NOMEM, "job: %s: out of memory or not an object", what);
    json_object_foreach(add, k, v)
    {
        json_t *old = json_object_get(dst, k);
        if (old != NULL && !json_equal(old, v)) {
            const char *a = json_string_value(old), *b = json_string_value(v);
            return err_set(msg, ERR_CONFLICT,
                           "invalid %s: conflict for key=%s, value1=%s, value2=%s", what, k,
                           a ? a : "?", b ? b : "?");
        }
    }
    if (json_object_update(dst, add))
        return err_set(msg, ERR_NOMEM, "job: %s: out of memory", what);
    return ERR_OK;
}

err_t podset_flavor_info(const json_t *assignment, json_t *(*flavor)(void *ctx, const char *name),
                         void *ctx, json_t **nodes, json_t **tols, err_msg_t *msg)
{
    json_t *n = json_object(), *t = json_array(), *seen = json_object();
    json_t *flavors = json_object_get(assignment, "flavors");
    const char *res;
    json_t *fname;
    err_t rc = ERR_OK;

    if (n == NULL || t == NULL || seen == NULL) {
        rc = err_set(msg, ERR_NOMEM, "flavor info: out of memory");
        goto out;
    }
    json_object_foreach(flavors, res, fname)
    {
        const char *name = json_string_value(fname);
        json_t *f, *labels, *ftols, *v;
        const char *k;
        size_t i;

        if (name == NULL || json_object_get(seen, name) != NULL)
            continue;
        if (json_object_set_new(seen, name, json_true())) {
            rc = err_set(msg, ERR_NOMEM, "flavor info: out of memory");
            goto out;
        }
        f = flavor(ctx, name);
        if (f == NULL) {
            rc = err_set(msg, ERR_NOT_FOUND, "ResourceFlavor %s not found", name);
            goto out;
        }
        labels = json_object_get(json_object_get(f, "spec"), "nodeLabels");
        json_object_foreach(labels, k, v)
        {
            json_t *old = json_object_get(n, k);
            if (old != NULL && !json_equal(old, v)) {
                rc = err_set(msg, ERR_CONFLICT,
                             "ResourceFlavor %s: nodeLabels[%s] conflicts with "
                             "another assigned flavor",
                             name, k);
                goto out;
            }
            if (json_object_set(n, k, v)) {
                rc = err_set(msg, ERR_NOMEM, "flavor info: out of memory");
                goto out;
            }
        }
        ftols = json_object_get(json_object_get(f, "spec"), "tolerations");
        json_array_foreach(ftols, i, v)
        {
            if (json_array_append(t, v)) {
                rc = err_set(msg, ERR_NOMEM, "flavor info: out of memory");
                goto out;
            }
        }
    }
    *nodes = n;
    *tols = t;
    n = t = NULL;
out:
    json_decref(n);
    json_decref(t);
    json_decref(seen);
    return rc;
}

err_t podset_start(json_t *job, const podset_info_t *info, err_msg_t *msg)
{
    json_t *copy = json_deep_copy(job), *labels = json_object(), *annotations = json_object();
    json_t *spec, *tmpl, *meta, *pspec, *tols, *v;
    err_t rc = ERR_OK;
    size_t i;

    if (copy == NULL || labels == NULL || annotations == NULL) {
        rc = err_set(msg, ERR_NOMEM, "job: out of memory");
        goto out;
    }
    spec = obj_member(copy, "spec");
    tmpl = spec ? obj_member(spec, "template") : NULL;
    meta = tmpl ? obj_member(tmpl, "metadata") : NULL;
    pspec = tmpl ? obj_member(tmpl, "spec") : NULL;
    if (pspec == NULL || meta == NULL) {
        rc = err_set(msg, ERR_INVALID, "job: spec.template: not an object");
        goto out;
    }
    if (json_object_set_new(labels, PODSET_LABEL_PODSET, json_string(info->name)) ||
        (info->local_queue != NULL &&
         json_object_set_new(labels, PODSET_LABEL_LOCAL_QUEUE, json_string(info->local_queue))) ||
        (info->cluster_queue != NULL && dns_label(info->cluster_queue) &&
         json_object_set_new(labels, PODSET_LABEL_CLUSTER_QUEUE,
                             json_string(info->cluster_queue))) ||
        (info->workload != NULL && json_object_set_new(annotations, PODSET_ANNOTATION_WORKLOAD,
                                                       json_string(info->workload)))) {
        rc = err_set(msg, ERR_NOMEM, "job: out of memory");
        goto out;
    }
    rc = merge_map(pspec, "nodeSelector", "nodeSelector", info->node_selector, msg);
    if (rc == ERR_OK)
        rc = merge_map(meta, "labels", "labels", labels, msg);
    if (rc == ERR_OK)
        rc = merge_map(meta, "annotations", "annotations", annotations, msg);
    if (rc != ERR_OK)
        goto out;
    if (json_array_size(info->tolerations) > 0) {
        tols = json_object_get(pspec, "tolerations");
        if (tols == NULL || json_is_null(tols)) {
            tols = json_array();
            if (tols == NULL || json_object_set_new(pspec, "tolerations", tols)) {
                rc = err_set(msg, ERR_NOMEM, "job: out of memory");
                goto out;
            }
        }
        json_array_foreach(info->tolerations, i, v)
        {
            bool dup = false;
            size_t j;
            json_t *have;
            json_array_foreach(tols, j, have) dup = dup || json_equal(have, v);
            if (!dup && json_array_append(tols, v)) {
                rc = err_set(msg, ERR_NOMEM, "job: out of memory");
                goto out;
            }
        }
    }
    if (json_object_set_new(spec, "suspend", json_false()) ||
        (info->has_count && json_object_set_new(spec, "parallelism", json_integer(info->count)))) {
        rc = err_set(msg, ERR_NOMEM, "job: out of memory");
        goto out;
    }
    rc = swap_in(job, copy, msg);
    copy = NULL;
out:
    json_decref(copy);
    json_decref(labels);
    json_decref(annotations);
    return rc;
}

/* Labels of the job controller that a restore keeps (Kueue keeps them too). */
static bool controller_label(const char *k)
{
    return strcmp(k, "job-name") == 0 || strcmp(k, "controller-uid") == 0 ||
           strncmp(k, "batch.kubernetes.io/", 20) == 0;
}

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

/* The restored form of `job` (a new object), NULL on OOM. */
static json_t *restored(const json_t *job, const json_t *pod_set)
{
    json_t *copy = json_deep_copy(job), *labels = json_object();
    const json_t *wtmpl = json_object_get(pod_set, "template");
    const json_t *wmeta = json_object_get(wtmpl, "metadata");
    const json_t *wspec = json_object_get(wtmpl, "spec");
    json_t *spec, *tmpl, *meta, *pspec, *v, *ann;
    const char *k;

    if (copy == NULL || labels == NULL)
        goto fail;
    spec = obj_member(copy, "spec");
    tmpl = spec ? obj_member(spec, "template") : NULL;
    meta = tmpl ? obj_member(tmpl, "metadata") : NULL;
    pspec = tmpl ? obj_member(tmpl, "spec") : NULL;
    if (meta == NULL || pspec == NULL)
        goto fail;
    json_object_foreach(json_object_get(meta, "labels"), k, v)
    {
        if (controller_label(k) && json_object_set(labels, k, v))
            goto fail;
    }
    if (json_is_object(json_object_get(wmeta, "labels")) &&
        json_object_update(labels, json_object_get(wmeta, "labels")))
        goto fail;
    ann = json_object_get(wmeta, "annotations");
    if (set_or_drop(meta, "labels", labels) || set_or_drop(meta, "annotations", ann) ||
        set_or_drop(pspec, "nodeSelector", json_object_get(wspec, "nodeSelector")) ||
        set_or_drop(pspec, "tolerations", json_object_get(wspec, "tolerations")))
        goto fail;
    /* No template metadata before and nothing to put there: leave none (a Job stored without
     * template metadata must compare equal to its restored form). */
    if (json_object_size(meta) == 0 &&
        json_object_get(json_object_get(json_object_get(job, "spec"), "template"), "metadata") ==
            NULL)
        json_object_del(tmpl, "metadata");
    if (json_object_set_new(spec, "suspend", json_true()))
        goto fail;
    /* Partial admission changed parallelism to the admitted count: put the podset's back. */
    if (json_object_get(json_object_get(json_object_get(copy, "metadata"), "annotations"),
                        "kueue.x-k8s.io/job-min-parallelism") != NULL &&
        json_is_integer(json_object_get(pod_set, "count")) &&
        json_object_set(spec, "parallelism", json_object_get(pod_set, "count")))
        goto fail;
    json_decref(labels);
    return copy;
fail:
    json_decref(labels);
    json_decref(copy);
    return NULL;
}

err_t podset_stop(json_t *job, const json_t *pod_set, bool *changed)
{
    json_t *r = restored(job, pod_set);

    if (r == NULL)
        return ERR_NOMEM;
    if (json_equal(r, job)) {
        json_decref(r);
        *changed = false;
        return ERR_OK;
    }
    if (swap_in(job, r, NULL) != ERR_OK)
        return ERR_NOMEM;
    *changed = true;
    return ERR_OK;
}

bool podset_is_restored(const json_t *job, const json_t *pod_set)
{
    json_t *r = restored(job, pod_set);
    bool same = r != NULL && json_equal(r, job);

    json_decref(r);
    return same;
}

/* Add member `key` of `src` to `dst` unless absent or empty (as set_or_drop() treats them). */
static int digest_part(json_t *dst, const char *key, const json_t *src)
{
    const json_t *v = json_object_get(src, key);

    if (v == NULL || json_is_null(v) || (json_is_object(v) && json_object_size(v) == 0) ||
        (json_is_array(v) && json_array_size(v) == 0))
        return 0;
    return json_object_set_new(dst, key, json_deep_copy(v));
}

uint64_t podset_digest(const json_t *tmpl)
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
        if (!controller_label(k) && json_object_set(labels, k, v))
            goto out;
    }
    if (json_object_size(labels) > 0 && json_object_set(parts, "labels", labels))
        goto out;
    if (digest_part(parts, "annotations", meta) || digest_part(parts, "nodeSelector", pspec) ||
        digest_part(parts, "tolerations", pspec))
        goto out;
    /* Sorted keys: the same content gives the same text whatever order the server sent. */
    text = json_dumps(parts, JSON_COMPACT | JSON_SORT_KEYS);
    if (text != NULL)
        h = util_siphash(1, 3, 0x736c756963650a01ULL, 0x706f647365740a02ULL, text, strlen(text));
out:
    free(text);
    json_decref(parts);
    json_decref(labels);
    return h;
}
