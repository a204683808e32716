/* decode_stored -- decode an object read back from the API server, whose schema may be newer. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "model/object.h"

#include <stdlib.h>
#include <string.h>

/* Delete the member at dotted `path` ("spec.template.spec.foo", "a.b[2].c") of `root`; false
 * when it is not there. */
static bool drop_path(json_t *root, const char *path)
{
    char seg[256];
    const char *p = path;
    json_t *cur = root;

    while (cur != NULL && *p != '\0') {
        size_t n = strcspn(p, ".[");
        if (n == 0 || n >= sizeof(seg))
            return false;
        memcpy(seg, p, n);
        seg[n] = '\0';
        p += n;
        if (*p == '\0')
            return json_object_del(cur, seg) == 0;
        cur = json_object_get(cur, seg);
        while (*p == '[') {
            char *end = NULL;
            unsigned long i = strtoul(p + 1, &end, 10);
            if (end == NULL || *end != ']')
                return false;
            cur = json_array_get(cur, i);
            p = end + 1;
        }
        if (*p == '.')
            p++;
    }
    return false;
}

static bool is_unknown_field(const diag_t *d)
{
    return !d->warning && strncmp(d->message, "unknown field", 13) == 0;
}

err_t object_decode_stored(json_t *root, object_t *out, diags_t *diags)
{
    diags_t first;
    json_t *copy = NULL;
    bool only_unknown, decoded;
    err_t rc;

    diags_init(&first);
    rc = object_decode(root, out, &first);
    decoded = rc == ERR_OK;
    only_unknown = rc == ERR_INVALID && first.nerrors > 0 && !first.oom;
    for (size_t i = 0; i < first.len && only_unknown; i++)
        only_unknown = first.items[i].warning || is_unknown_field(&first.items[i]);
    if (only_unknown && (copy = json_deep_copy(root)) == NULL)
        rc = ERR_NOMEM;
    for (size_t i = 0; i < first.len && copy != NULL && only_unknown; i++)
        if (is_unknown_field(&first.items[i]) && !drop_path(copy, first.items[i].path))
            only_unknown = false; /* not found again where the decoder saw it: keep the errors */
    for (size_t i = 0; i < first.len && rc != ERR_NOMEM; i++) {
        const diag_t *it = &first.items[i];
        if ((it->warning || (only_unknown && is_unknown_field(it)))
                ? diags_warn(diags, it->path, "%s", it->message) != ERR_OK
                : diags_error(diags, it->path, "%s", it->message) != ERR_OK)
            rc = ERR_NOMEM;
    }
    if (first.oom)
        rc = ERR_NOMEM;
    if (rc == ERR_NOMEM && decoded)
        object_fini(out);
    if (rc != ERR_NOMEM && only_unknown && copy != NULL)
        rc = object_decode(copy, out, diags);
    json_decref(copy);
    diags_fini(&first);
    if (diags->oom && rc == ERR_OK) {
        object_fini(out);
        rc = ERR_NOMEM;
    }
    return rc;
}
