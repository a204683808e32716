/* objpath -- labels, annotations and nested fields the kinds of lib/jobs read and write. */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_JOBS_OBJPATH_H
#define SLUICE_JOBS_OBJPATH_H

#include "util/err.h"

#include <jansson.h>

/*
 * Next to framework_int.h's readers (JOBS_AT, jobs__int32, jobs__member: one level), what the
 * Ray, Pod and serving kinds need more: metadata lookups, and objects created along a path of
 * several keys. Paths are NULL-terminated lists of keys; an absent field and one of the wrong type
 * read alike (NULL).
 */

/* metadata.labels[key] / metadata.annotations[key] of `obj` when it is a string, else NULL
 * (borrowed). */
const char *objpath_label(const json_t *obj, const char *key);
const char *objpath_annotation(const json_t *obj, const char *key);

/* The object at `keys...` under `obj`, created (as empty objects) where missing. NULL on OOM or
 * when a step exists and is not an object (nothing is replaced). Borrowed. */
json_t *objpath_ensure(json_t *obj, ...) __attribute__((sentinel));

/* Set string `value` at key `key` of the object at `keys...` (created where missing).
 * ERR_NOMEM, or ERR_INVALID when a step is not an object. */
err_t objpath_set_str(json_t *obj, const char *key, const char *value, ...)
    __attribute__((sentinel));

#endif
