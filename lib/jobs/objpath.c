/* objpath -- reach and create fields of an API object's JSON by path, for the kinds in lib/jobs. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "jobs/objpath.h"

#include <math.h>
#include <stdarg.h>

static json_t *walk(const json_t *obj, va_list ap)
{
    const json_t *cur = obj;
    const char *key;
    while ((key = va_arg(ap, const char *)) != NULL) {
        if (!json_is_object(cur))
            return NULL;
        cur = json_object_get(cur, key);
    }
    return (json_t *)cur;
}

json_t *objpath_get(const json_t *obj, ...)
{
    va_list ap;
    va_start(ap, obj);
    json_t *v = walk(obj, ap);
    va_end(ap);
    return v;
}

const char *objpath_str(const json_t *obj, ...)
{
    va_list ap;
    va_start(ap, obj);
    json_t *v = walk(obj, ap);
    va_end(ap);
    return json_string_value(v);
}

const char *objpath_label(const json_t *obj, const char *key)
{
    return objpath_str(obj, "metadata", "labels", key, (char *)NULL);
}

const char *objpath_annotation(const json_t *obj, const char *key)
{
    return objpath_str(obj, "metadata", "annotations", key, (char *)NULL);
}

bool objpath_int32(const json_t *obj, int32_t *out, ...)
{
    va_list ap;
    va_start(ap, out);
    json_t *v = walk(obj, ap);
    va_end(ap);
    if (json_is_integer(v)) {
        json_int_t i = json_integer_value(v);
        if (i < INT32_MIN || i > INT32_MAX)
            return false;
        *out = (int32_t)i;
        return true;
    }
    if (json_is_real(v)) {
        double d = json_real_value(v);
        if (!isfinite(d) || d != floor(d) || d < INT32_MIN || d > INT32_MAX)
            return false;
        *out = (int32_t)d;
        return true;
    }
    return false;
}

/* The object at the keys of `ap` under `obj`, created where missing; NULL with *why = ERR_NOMEM
 * or ERR_INVALID (a step is not an object). */
static json_t *ensure(json_t *obj, err_t *why, va_list ap)
{
    json_t *cur = obj;
    const char *key;
    *why = ERR_INVALID;
    if (!json_is_object(cur))
        return NULL;
    while ((key = va_arg(ap, const char *)) != NULL) {
        json_t *next = json_object_get(cur, key);
        if (next == NULL) {
            next = json_object();
            if (json_object_set_new(cur, key, next)) {
                *why = ERR_NOMEM; /* `next` consumed, NULL or not */
                return NULL;
            }
        } else if (!json_is_object(next)) {
            return NULL;
        }
        cur = next;
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
