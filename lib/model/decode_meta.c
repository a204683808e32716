/* decode_meta -- ObjectMeta, label selectors, and the small cluster kinds (Namespace,
 * PriorityClass). */
/* SPDX-License-Identifier: Apache-2.0 */
#include "model/decode_int.h"

#include <stdlib.h>
#include <string.h>

bool decode__absent(const json_t *obj, const char *key)
{
    const json_t *v = json_object_get(obj, key);

    return v == NULL || json_is_null(v);
}

void decode__required(decode_t *d, const json_t *obj, const char *const *keys)
{
    for (size_t i = 0; keys[i] != NULL; i++)
        if (decode__absent(obj, keys[i]))
            jsonx_required(&d->jx, keys[i]);
}

bool decode__in(decode_t *d, const char *key, const char *const *names)
{
    for (size_t i = 0; names[i] != NULL; i++)
        if (decode__is(d, key, names[i]))
            return true;
    return false;
}

bool decode__is(decode_t *d, const char *key, const char *name)
{
    if (strcmp(key, name) == 0)
        return true;
    jsonx_known(&d->jx, key, name);
    return false;
}

size_t decode__list_len(decode_t *d, const json_t *v, size_t max, bool nonempty)
{
    if (!jsonx_want_array_max(&d->jx, v, max))
        return 0;
    if (nonempty && json_array_size(v) == 0)
        jsonx_error(&d->jx, "Required value: must have at least 1 item");
    return json_array_size(v);
}

void *decode__list(decode_t *d, const json_t *v, size_t max, bool nonempty, size_t size,
                   decode_item_fn item, void *ctx, size_t *n)
{
    size_t len = decode__list_len(d, v, max, nonempty);
    char *items;

    if (len == 0)
        return NULL;
    items = calloc(len, size);
    if (items == NULL) {
        jsonx_oom(&d->jx);
        return NULL;
    }
    for (size_t i = 0; i < len; i++) {
        size_t mark = jsonx_push_index(&d->jx, i);
        const json_t *iv = json_array_get(v, i);
        if (jsonx_want_object(&d->jx, iv))
            item(d, iv, items + i * size, ctx);
        jsonx_pop(&d->jx, mark);
    }
    *n = len;
    return items;
}

/* ObjectMeta fields that are legal in any manifest but carry nothing admission needs. */
static const char *const meta_tolerated[] = {
    "selfLink", "deletionGracePeriodSeconds", "ownerReferences", "managedFields", NULL,
};

/* The full ObjectMeta field list, for pod templates where only labels/annotations matter. */
static const char *const meta_all[] = {
    "name",
    "generateName",
    "namespace",
    "selfLink",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "labels",
    "annotations",
    "ownerReferences",
    "finalizers",
    "managedFields",
    NULL,
};

void decode__meta(decode_t *d, const json_t *v, object_meta_t *m, bool namespaced, bool need_name)
{
    jsonx_t *jx = &d->jx;
    size_t mark = jsonx_push_key(jx, "metadata");

    if (v == NULL || json_is_null(v)) {
        if (need_name)
            jsonx_required(jx, "name");
        jsonx_pop(jx, mark);
        return;
    }
    if (!jsonx_want_object(jx, v)) {
        jsonx_pop(jx, mark);
        return;
    }
    DECODE_FIELDS(d, v, key, val)
    {
        if (DECODE_IS(key, "name"))
            jsonx_string(jx, val, &m->name);
        else if (DECODE_IS(key, "generateName"))
            jsonx_string(jx, val, &m->generate_name);
        else if (DECODE_IS(key, "namespace"))
            jsonx_string(jx, val, &m->namespace);
        else if (DECODE_IS(key, "uid"))
            jsonx_string(jx, val, &m->uid);
        else if (DECODE_IS(key, "resourceVersion"))
            jsonx_string(jx, val, &m->resource_version);
        else if (DECODE_IS(key, "generation"))
            jsonx_int64(jx, val, &m->generation);
        else if (DECODE_IS(key, "creationTimestamp"))
            jsonx_time(jx, val, &m->creation_time);
        else if (DECODE_IS(key, "deletionTimestamp")) {
            int64_t t;
            if (jsonx_time(jx, val, &t))
                m->deleting = true;
        } else if (DECODE_IS(key, "labels"))
            jsonx_kv_map(jx, val, 0, &m->labels);
        else if (DECODE_IS(key, "annotations"))
            jsonx_kv_map(jx, val, 0, &m->annotations);
        else if (DECODE_IS(key, "finalizers"))
            jsonx_string_array(jx, val, DEC_MAX_LIST, false, &m->finalizers, &m->nfinalizers);
        else if (!decode__in(d, key, meta_tolerated))
            jsonx_unknown(jx, key);
    }
    /* A type error on name was reported already; "" counts as missing, as in Kubernetes. */
    if (need_name && (decode__absent(v, "name") || (m->name != NULL && m->name[0] == '\0')) &&
        (m->generate_name == NULL || m->generate_name[0] == '\0'))
        jsonx_required(jx, "name");
    if (!namespaced && m->namespace != NULL) {
        /* The API server ignores metadata.namespace on cluster-scoped kinds; say so. */
        jsonx_push_key(jx, "namespace");
        jsonx_warn(jx, "ignored: this kind is cluster-scoped");
        free(m->namespace);
        m->namespace = NULL;
    }
    jsonx_pop(jx, mark);
}

void decode__template_meta(decode_t *d, const json_t *v, kv_list_t *labels, kv_list_t *annotations)
{
    jsonx_t *jx = &d->jx;

    if (!jsonx_want_object(jx, v))
        return;
    DECODE_FIELDS(d, v, key, val)
    {
        if (DECODE_IS(key, "labels"))
            jsonx_kv_map(jx, val, 0, labels);
        else if (DECODE_IS(key, "annotations"))
            jsonx_kv_map(jx, val, 0, annotations);
        else if (!decode__in(d, key, meta_all))
            jsonx_unknown(jx, key);
    }
}

/* ---- selectors ------------------------------------------------------------------------------ */

static const char *const label_ops[] = {"In", "NotIn", "Exists", "DoesNotExist", NULL};
static const char *const node_ops[] = {"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt", NULL};

bool decode__selector_req(decode_t *d, const json_t *v, bool node, selector_req_t *r)
{
    jsonx_t *jx = &d->jx;
    bool have_op = false, ok = true;
    size_t errs = jx->diags->nerrors;

    if (!jsonx_want_object(jx, v))
        return false;
    DECODE_FIELDS(d, v, key, val)
    {
        if (DECODE_IS(key, "key")) {
            jsonx_string(jx, val, &r->key);
        } else if (DECODE_IS(key, "operator")) {
            int op;
            if (jsonx_enum(jx, val, node ? node_ops : label_ops, &op)) {
                r->op = (selector_op_t)op;
                have_op = true;
            }
        } else if (DECODE_IS(key, "values")) {
            jsonx_string_array(jx, val, DEC_MAX_LIST, true, &r->values, &r->nvalues);
        } else {
            jsonx_unknown(jx, key);
        }
    }
    if (decode__absent(v, "key")) {
        jsonx_required(jx, "key");
        ok = false;
    }
    if (!have_op && decode__absent(v, "operator")) {
        jsonx_required(jx, "operator");
        ok = false;
    }
    return ok && jx->diags->nerrors == errs;
}

static void label_req_item(decode_t *d, const json_t *v, void *item, void *ctx)
{
    (void)ctx;
    decode__selector_req(d, v, false, item);
}

void decode__label_selector(decode_t *d, const json_t *v, label_selector_t *s)
{
    jsonx_t *jx = &d->jx;

    if (!jsonx_want_object(jx, v))
        return;
    label_selector_fini(s);
    s->present = true;
    DECODE_FIELDS(d, v, key, val)
    {
        if (DECODE_IS(key, "matchLabels"))
            jsonx_kv_map(jx, val, 0, &s->match_labels);
        else if (DECODE_IS(key, "matchExpressions"))
            s->exprs = decode__list(d, val, DEC_MAX_LIST, false, sizeof(*s->exprs), label_req_item,
                                    NULL, &s->nexprs);
        else
            jsonx_unknown(jx, key);
    }
}

/* ---- Namespace ---------------------------------------------------------------------------------
 */

void decode__namespace(decode_t *d, const json_t *root, namespace_t *out)
{
    jsonx_t *jx = &d->jx;

    decode__meta(d, json_object_get(root, "metadata"), &out->meta, false, true);
    DECODE_FIELDS(d, root, key, val)
    {
        if (DECODE_IS(key, "spec") || DECODE_IS(key, "status"))
            jsonx_want_object(jx, val); /* finalizers / phase: nothing admission uses */
        else if (!decode__in(d, key, (const char *const[]){"apiVersion", "kind", "metadata", NULL}))
            jsonx_unknown(jx, key);
    }
}

/* ---- PriorityClass (scheduling.k8s.io/v1) -----------------------------------------------------
 */

void decode__priority_class(decode_t *d, const json_t *root, priority_class_t *out)
{
    static const char *const policies[] = {"PreemptLowerPriority", "Never", NULL};
    jsonx_t *jx = &d->jx;
    bool have_value = false;

    decode__meta(d, json_object_get(root, "metadata"), &out->meta, false, true);
    DECODE_FIELDS(d, root, key, val)
    {
        if (DECODE_IS(key, "value")) {
            have_value = true;
            jsonx_int32(jx, val, &out->value);
        } else if (DECODE_IS(key, "globalDefault")) {
            jsonx_bool(jx, val, &out->global_default);
        } else if (DECODE_IS(key, "description")) {
            char *s = NULL;
            jsonx_string(jx, val, &s);
            free(s);
        } else if (DECODE_IS(key, "preemptionPolicy")) {
            int p;
            jsonx_enum(jx, val, policies, &p);
        } else if (!decode__in(d, key,
                               (const char *const[]){"apiVersion", "kind", "metadata", NULL})) {
            jsonx_unknown(jx, key);
        }
    }
    if (!have_value)
        jsonx_required(jx, "value");
}
