/* objpath -- labels, annotations and nested fields the kinds of lib/jobs read and write. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "jobs/objpath.h"

#include "jobs/framework_int.h"

#include <stdarg.h>

const char *objpath_label(const json_t *obj, const char *key)
{
    return json_string_value(JOBS_AT(obj, "metadata", "labels", key));
}

const char *objpath_annotation(const json_t *obj, const char *key)
{
    return json_string_value(JOBS_AT(obj, "metadata", "annotations", key));
}

/* The object at the keys of `ap` under `obj`, created where missing or null (jobs__member(), as
 * the framework's own writes); NULL with *why = ERR_NOMEM or ERR_INVALID (a step is not an
 * object). */
static json_t *ensure(json_t *obj, err_t *why, va_list ap)
{
    json_t *cur = obj;
    const char *key;
    *why = ERR_INVALID;
    if (!json_is_object(cur))
        return NULL;
    while ((key = va_arg(ap, const char *)) != NULL) {
        json_t *next = json_object_get(cur, key);
        if (next != NULL && !json_is_null(next) && !json_is_object(next))
            return NULL;
        if ((cur = jobs__member(cur, key)) == NULL) {
            *why = ERR_NOMEM;
            return NULL;
        }
    }
    return cur;
}

json_t *objpath_ensure(json_t *obj, ...)
{
    va_list ap;
    err_t why;
    va_start(ap, obj);
    json_t *v = ensure(obj, &why, ap);
    va_end(ap);
    return v;
}

err_t objpath_set_str(json_t *obj, const char *key, const char *value, ...)
{
    va_list ap;
    err_t why;
    va_start(ap, value);
    json_t *parent = ensure(obj, &why, ap);
    va_end(ap);
    if (parent == NULL)
        return why;
    if (json_object_set_new(parent, key, json_string(value)))
        return ERR_NOMEM;
    return ERR_OK;
}
