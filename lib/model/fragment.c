/* fragment -- decode the parts of objects sluice does not model whole: metadata, pod templates. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "model/fragment.h"

#include "model/decode_int.h"
#include "model/requests.h"

#include <string.h>

/* The verdict of a pass over `diags`: its first error, or out-of-memory, into `msg`. */
static err_t first_error(const decode_t *d, const diags_t *diags, err_msg_t *msg)
{
    if (d->jx.nomem || diags->oom)
        return err_set(msg, ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < diags->len; i++) {
        const diag_t *g = &diags->items[i];
        if (!g->warning)
            return err_set(msg, ERR_INVALID, "%s: %s", g->path, g->message);
    }
    return ERR_OK;
}

err_t fragment_meta(const json_t *root, object_meta_t *out, err_msg_t *msg)
{
    diags_t diags;
    decode_t d;
    err_t rc;

    memset(out, 0, sizeof(*out));
    memset(&d, 0, sizeof(d));
    diags_init(&diags);
    jsonx_init(&d.jx, &diags);
    if (!json_is_object(root)) {
        diags_fini(&diags);
        return err_set(msg, ERR_INVALID, "object: must be of type object");
    }
    decode__meta(&d, json_object_get(root, "metadata"), out, true, false);
    rc = first_error(&d, &diags, msg);
    diags_fini(&diags);
    if (rc != ERR_OK)
        object_meta_fini(out);
    return rc;
}

err_t fragment_pod_template(const json_t *tmpl, const char *path, pod_set_t *ps, err_msg_t *msg)
{
    kv_list_t labels = {0}, annotations = {0};
    pod_spec_t spec;
    resource_list_t requests = {0};
    diags_t diags;
    decode_t d;
    size_t mark;
    err_t rc;

    memset(&spec, 0, sizeof(spec));
    memset(&d, 0, sizeof(d));
    diags_init(&diags);
    jsonx_init(&d.jx, &diags);
    mark = jsonx_push_key(&d.jx, path != NULL && path[0] != '\0' ? path : "template");
    if (tmpl == NULL || json_is_null(tmpl))
        jsonx_error(&d.jx, "Required value");
    else
        decode__pod_template(&d, tmpl, &labels, &annotations, &spec);
    rc = first_error(&d, &diags, msg);
    if (rc == ERR_OK) {
        rc = requests_pod(&spec, &requests, msg);
        if (rc != ERR_OK && rc != ERR_NOMEM)
            rc = err_prefix(msg, rc, "%s: ", d.jx.path);
    }
    jsonx_pop(&d.jx, mark);
    diags_fini(&diags);
    if (rc != ERR_OK) {
        kv_list_fini(&labels);
        kv_list_fini(&annotations);
        pod_spec_fini(&spec);
        resource_list_fini(&requests);
        return rc;
    }
    kv_list_fini(&ps->template_labels);
    kv_list_fini(&ps->template_annotations);
    pod_spec_fini(&ps->spec);
    resource_list_fini(&ps->pod_requests);
    ps->template_labels = labels;
    ps->template_annotations = annotations;
    ps->spec = spec;
    ps->pod_requests = requests;
    return ERR_OK;
}
