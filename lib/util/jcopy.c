/* jcopy -- a shallow copy of a JSON value that fails whole on out-of-memory. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "util/jcopy.h"

json_t *util_json_copy(json_t *v)
{
    json_t *c = json_copy(v);

    /* jansson 2.14's shallow copy ignores the result of adding each member: a copy smaller
     * than the original is one that ran out of memory. */
    if (c != NULL && ((json_is_object(v) && json_object_size(c) != json_object_size(v)) ||
                      (json_is_array(v) && json_array_size(c) != json_array_size(v)))) {
        json_decref(c);
        return NULL;
    }
    return c;
}
