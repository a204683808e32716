/* node -- decode core/v1 Node objects (the fields capacity planning reads). */
/* SPDX-License-Identifier: Apache-2.0 */
#include "model/node.h"

#include "model/decode_int.h"

#include <stdlib.h>
#include <string.h>

void node_fini(node_t *n)
{
    if (n == NULL)
        return;
    object_meta_fini(&n->meta);
    TYPES_FREE_ARRAY(n->taints, n->ntaints, taint_fini);
    resource_list_fini(&n->capacity);
    resource_list_fini(&n->allocatable);
    free(n->kubelet_version);
    memset(n, 0, sizeof(*n));
}

bool node_is(const json_t *root)
{
    const json_t *av = json_object_get(root, "apiVersion"), *kind = json_object_get(root, "kind");

    return json_is_string(av) && json_is_string(kind) && strcmp(json_string_value(av), "v1") == 0 &&
           strcmp(json_string_value(kind), "Node") == 0;
}

/* spec: taints and unschedulable; podCIDR, providerID and the rest are not quota's business. */
static void decode_spec(decode_t *d, const json_t *v, node_t *n)
{
    jsonx_t *jx = &d->jx;

    if (!jsonx_want_object(jx, v))
        return;
    DECODE_FIELDS(d, v, key, val)
    {
        if (DECODE_IS(key, "taints"))
            decode__taints(d, val, DEC_MAX_LIST, &n->taints, &n->ntaints);
        else if (DECODE_IS(key, "unschedulable"))
            jsonx_bool(jx, val, &n->unschedulable);
    }
}

/* One status.conditions item: only Ready is kept. */
static void decode_condition(decode_t *d, const json_t *v, void *item, void *ctx)
{
    node_t *n = ctx;
    const json_t *type = json_object_get(v, "type"), *status = json_object_get(v, "status");

    (void)item;
    if (!json_is_string(type) || strcmp(json_string_value(type), "Ready") != 0)
        return;
    if (!json_is_string(status)) {
        jsonx_error_at(&d->jx, "status", "must be of type string, got %s", jsonx_type_name(status));
        return;
    }
    n->has_ready = true;
    n->ready = strcmp(json_string_value(status), "True") == 0;
}

/* A throwaway element for decode__list(): conditions are folded into the node itself. */
typedef struct node_cond_s {
    char unused;
} node_cond_t;

static void decode_status(decode_t *d, const json_t *v, node_t *n)
{
    jsonx_t *jx = &d->jx;

    if (!jsonx_want_object(jx, v))
        return;
    DECODE_FIELDS(d, v, key, val)
    {
        if (DECODE_IS(key, "capacity")) {
            jsonx_resource_list(jx, val, &n->capacity);
        } else if (DECODE_IS(key, "allocatable")) {
            jsonx_resource_list(jx, val, &n->allocatable);
        } else if (DECODE_IS(key, "conditions")) {
            size_t len = 0;
            free(decode__list(d, val, DEC_MAX_LIST, false, sizeof(node_cond_t), decode_condition, n,
                              &len));
        } else if (DECODE_IS(key, "nodeInfo") && jsonx_want_object(jx, val)) {
            const json_t *kv = json_object_get(val, "kubeletVersion");
            if (kv != NULL && !json_is_null(kv)) {
                size_t mark = jsonx_push_key(jx, "kubeletVersion");
                jsonx_string(jx, kv, &n->kubelet_version);
                jsonx_pop(jx, mark);
            }
        }
    }
}

err_t node_decode(json_t *root, node_t *out, diags_t *diags)
{
    decode_t d;
    size_t errs = diags->nerrors;

    memset(out, 0, sizeof(*out));
    memset(&d, 0, sizeof(d));
    jsonx_init(&d.jx, diags);
    if (!jsonx_want_object(&d.jx, root))
        return diags->oom ? ERR_NOMEM : ERR_INVALID;
    if (!node_is(root)) {
        diags_error(diags, "kind", "not a v1 Node");
        return diags->oom ? ERR_NOMEM : ERR_INVALID;
    }
    decode__meta(&d, json_object_get(root, "metadata"), &out->meta, false, true);
    DECODE_FIELDS(&d, root, key, val)
    {
        if (decode__is(&d, key, "spec"))
            decode_spec(&d, val, out);
        else if (decode__is(&d, key, "status"))
            decode_status(&d, val, out);
        else if (!decode__in(&d, key,
                             (const char *const[]){"apiVersion", "kind", "metadata", NULL}))
            jsonx_unknown(&d.jx, key);
    }
    if (d.jx.nomem || diags->oom) {
        node_fini(out);
        return ERR_NOMEM;
    }
    if (diags->nerrors > errs) {
        node_fini(out);
        return ERR_INVALID;
    }
    return ERR_OK;
}
