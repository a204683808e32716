/* objpath -- reach and create fields of an API object's JSON by path, for the kinds in lib/jobs. */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_JOBS_OBJPATH_H
#define SLUICE_JOBS_OBJPATH_H

#include "util/err.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

/*
 * The kinds read a handful of fields each ("spec.rayClusterSpec.headGroupSpec.template",
 * "metadata.labels"), from objects that come from the API server, a webhook request or a YAML
 * file: any field may be absent or of the wrong type, and absent and wrong are treated alike
 * (NULL) by the readers, which never fail. The paths are NULL-terminated lists of keys.
 */

/* The value at `keys...` (NULL-terminated) under `obj`, or NULL when a step is missing or is not
 * an object. Borrowed from `obj`. */
json_t *objpath_get(const json_t *obj, ...) __attribute__((sentinel));

/* The string at `keys...`, or NULL when absent or not a string. Borrowed. */
const char *objpath_str(const json_t *obj, ...) __attribute__((sentinel));

/* metadata.labels[key] / metadata.annotations[key] of `obj` when it is a string, else NULL
 * (borrowed). */
const char *objpath_label(const json_t *obj, const char *key);
const char *objpath_annotation(const json_t *obj, const char *key);

/* The integer at `keys...` into *out when it is an integer within int32 (or a real with an
 * integral value, as encoding/json accepts); false (and *out untouched) otherwise. */
bool objpath_int32(const json_t *obj, int32_t *out, ...) __attribute__((sentinel));

/* The object at `keys...` under `obj`, created (as empty objects) where missing. NULL on OOM or
 * when a step exists and is not an object (nothing is replaced). Borrowed. */
json_t *objpath_ensure(json_t *obj, ...) __attribute__((sentinel));

/* Set string `value` at key `key` of the object at `keys...` (created where missing).
 * ERR_NOMEM, or ERR_INVALID when a step is not an object. */
err_t objpath_set_str(json_t *obj, const char *key, const char *value, ...)
    __attribute__((sentinel));

#endif
