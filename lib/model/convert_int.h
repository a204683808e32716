/* convert_int -- what convert.c and convert_tas.c share: the cursor, paths, errors, splicing. */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_CONVERT_INT_H
#define SLUICE_CONVERT_INT_H

#include "model/convert.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#define CONVERT__PATH_MAX 512

/* One conversion pass over one object. */
typedef struct convert__cur_s {
    const convert_opts_t *opts; /* borrowed, never NULL */
    err_msg_t *msg;             /* borrowed, may be NULL */
    char who[320];              /* "Workload team/train-1", for messages */
    char path[CONVERT__PATH_MAX];
    size_t len;
    size_t *budget; /* topology domains left to materialise (v1beta2 -> v1beta1) */
    size_t own_budget;
} convert__cur_t;

/* Append ".key" ("key" at the root) / "[i]" to the path; return the mark to pop back to. */
size_t convert__push_key(convert__cur_t *c, const char *key);
size_t convert__push_index(convert__cur_t *c, size_t i);
void convert__pop(convert__cur_t *c, size_t mark);

/* Format "<who>: <path>: <detail>" into the message; returns `code`. */
err_t convert__fail(convert__cur_t *c, err_t code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* As convert__fail() at path + "." + key. */
err_t convert__fail_at(convert__cur_t *c, const char *key, err_t code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Report a note at path + "." + key (`key` may be NULL: the current path). */
void convert__note(convert__cur_t *c, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Does JSON string `v` equal `s` exactly (length-aware: strings may hold NUL bytes)? */
bool convert__str_is(const json_t *v, const char *s);

/* A new object {key: value}; `value` is stolen (released on failure too). NULL on OOM. */
json_t *convert__obj1(const char *key, json_t *value);

/* Replace key `old` of `obj` with the entries of `entries` (stolen; NULL = none), at the same
 * position; when `old` is absent the entries are appended. ERR_NOMEM leaves `obj` unusable (the
 * caller discards its copy). */
err_t convert__splice(json_t *obj, const char *old, json_t *entries);

/* ERR_INVALID (at path.key) when `obj` has any of `keys` (NULL-terminated): a field of the other
 * version in the source object. `version` names the source version. */
err_t convert__foreign(convert__cur_t *c, const json_t *obj, const char *const *keys,
                       const char *version);

/* The object at obj[key]: *out = NULL when absent or null; ERR_INVALID when another type. */
err_t convert__object_at(convert__cur_t *c, json_t *obj, const char *key, json_t **out);

/* ERR_INVALID (at path.key[i], with the text `what`) unless every element of the array `list`,
 * which is obj[key], is a string. */
err_t convert__all_strings(convert__cur_t *c, const json_t *list, const char *key,
                           const char *what);

/* status.admission.podSetAssignments[].topologyAssignment `ta` (its path pushed): v1beta1
 * {levels, domains} -> v1beta2 {levels, slices} and back, in place. */
err_t convert__tas_to_v2(convert__cur_t *c, json_t *ta);
err_t convert__tas_to_v1(convert__cur_t *c, json_t *ta);

/* The length of `v` serialised by Go's encoding/json (compact; strings escaped as Go escapes
 * them), which Kueue compares to choose a topology encoding. Only for trees of objects, arrays,
 * strings, integers, booleans and null. */
size_t convert__go_json_size(const json_t *v);

#endif
