/* jcopy -- a shallow copy of a JSON value that fails whole on out-of-memory. */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_UTIL_JCOPY_H
#define SLUICE_UTIL_JCOPY_H

#include <jansson.h>

/* A shallow copy of `v` (an object or array: a new container holding references to the same
 * members; a scalar: a copy), as json_copy(), or NULL on out of memory or when `v` is NULL.
 * json_copy() itself drops the members it cannot add for memory and returns the partial copy;
 * an object that silently lost its "spec" decodes as a different object. */
json_t *util_json_copy(json_t *v);

#endif
