/* jsonx -- read typed fields from jansson trees, tracking the field path for diagnostics. */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_JSONX_H
#define SLUICE_JSONX_H

#include "model/diag.h"
#include "model/quantity.h"
#include "model/types.h"
#include "util/suggest.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * A jsonx_t is the cursor of one decode pass: the diagnostics list it reports into, the path of
 * the field being read ("spec.resourceGroups[0].flavors[1]") and a sticky out-of-memory flag.
 * Readers report type errors at the current path and leave their output untouched on error, so a
 * decoder can keep going and report every problem of a document in one pass.
 *
 * Usage: size_t mark = jsonx_push_key(jx, "spec"); ...read...; jsonx_pop(jx, mark);
 */

#define JSONX_PATH_MAX 1024

/* How many known names of one member key jsonx_known() keeps for the suggestion. */
#define JSONX_SUGGEST_NAMES 96

typedef struct jsonx_s {
    diags_t *diags; /* borrowed */
    char path[JSONX_PATH_MAX];
    size_t len;
    bool nomem; /* an allocation failed; the decode result must be discarded */
    /* "did you mean": the member key being matched against the known names (jsonx_known) and
     * those names; jsonx_unknown() picks the closest only when the key turns out unknown, so a
     * known key costs a pointer per name compared, not an edit distance. */
    const char *sugg_key;                        /* borrowed from the tree being decoded */
    const char *sugg_names[JSONX_SUGGEST_NAMES]; /* static storage; beyond: not suggested */
    size_t sugg_n;
} jsonx_t;

/* Start a cursor at the root path "" reporting into `diags` (borrowed). */
void jsonx_init(jsonx_t *jx, diags_t *diags);

/* Append ".key" (or "key" at the root) to the path; returns the mark to pop back to. */
size_t jsonx_push_key(jsonx_t *jx, const char *key);

/* Append "[i]" to the path; returns the mark to pop back to. */
size_t jsonx_push_index(jsonx_t *jx, size_t i);

/* Truncate the path back to `mark` (from a push). */
void jsonx_pop(jsonx_t *jx, size_t mark);

/* Append an error / a warning at the current path. */
void jsonx_error(jsonx_t *jx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void jsonx_warn(jsonx_t *jx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Error at the current path + "." + key (the key is pushed and popped). */
void jsonx_error_at(jsonx_t *jx, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* "Required value" at path + "." + key. */
void jsonx_required(jsonx_t *jx, const char *key);

/* `unknown field "key"` at the current path (the caller has pushed `key`), with `; did you mean
 * "name"?` when a known name offered by jsonx_known() for this very `key` is close. */
void jsonx_unknown(jsonx_t *jx, const char *key);

/* Offer `name` (static storage) as a field that member `key` (borrowed from the tree) was
 * compared with and is not: the closest such name is suggested if `key` turns out unknown. */
void jsonx_known(jsonx_t *jx, const char *key, const char *name);

/* Warning at the current path (the caller has pushed `key`): a known Kueue field that sluice
 * accepts but does not act on. */
void jsonx_unused(jsonx_t *jx, const char *key);

/* Record an allocation failure (sticky). Always returns false. */
bool jsonx_oom(jsonx_t *jx);

/* "object", "array", "string", "integer", "number", "boolean" or "null" for v. */
const char *jsonx_type_name(const json_t *v);

/* Is `v` an object / array? Otherwise reports `must be of type object|array, got T`. */
bool jsonx_want_object(jsonx_t *jx, const json_t *v);
bool jsonx_want_array(jsonx_t *jx, const json_t *v);

/* Is `v` an array of at most `max` items? Reports the type error or, Kubernetes style,
 * `Too many: N: must have at most MAX items`. */
bool jsonx_want_array_max(jsonx_t *jx, const json_t *v, size_t max);

/* A strict JSON string (no conversion) copied into *out (previous value freed). */
bool jsonx_string(jsonx_t *jx, const json_t *v, char **out);

/* Where Kubernetes expects a string but YAML may have produced a scalar (label values,
 * quantities...), convert the way sigs.k8s.io/yaml does: integers in decimal, reals with Go's
 * strconv.FormatFloat(f, 'g', -1, 64), booleans as "true"/"false". */
bool jsonx_string_conv(jsonx_t *jx, const json_t *v, char **out);

/* Format `v` (a JSON scalar: string, integer, real, boolean) the sigs.k8s.io/yaml way into a
 * new string (caller frees). NULL on OOM or when `v` is not a scalar. */
char *jsonx_scalar_to_string(const json_t *v);

/* Go strconv.FormatFloat(f, 'g', -1, 64) of a finite double into buf (at least 32 bytes). */
char *jsonx_format_go_float(double f, char *buf, size_t size);

/* A boolean. */
bool jsonx_bool(jsonx_t *jx, const json_t *v, bool *out);

/* An integer within [INT32_MIN, INT32_MAX] (a real with an integral value is accepted, as
 * encoding/json does for whole-number floats like 4.0). */
bool jsonx_int32(jsonx_t *jx, const json_t *v, int32_t *out);

/* An integer within int64 (same rules). */
bool jsonx_int64(jsonx_t *jx, const json_t *v, int64_t *out);

/* A Kubernetes Quantity: a string or a JSON number; reports `invalid quantity "12x"`. */
bool jsonx_quantity(jsonx_t *jx, const json_t *v, quantity_t *out);

/* A string that must be one of `values` (NULL-terminated); *out = its index. Otherwise
 * `Unsupported value: "Foo": supported values: "A", "B"`, and `; did you mean "A"?` when one is
 * close. */
bool jsonx_enum(jsonx_t *jx, const json_t *v, const char *const *values, int *out);

/* A map of string to string (labels, annotations, nodeLabels, nodeSelector): values are
 * converted with jsonx_string_conv(); at most `max` entries (0 = unlimited). Replaces *out. */
bool jsonx_kv_map(jsonx_t *jx, const json_t *v, size_t max, kv_list_t *out);

/* An array of strings (at most `max`, 0 = unlimited). `conv` converts scalars like label values.
 * Replaces *out / *n. */
bool jsonx_string_array(jsonx_t *jx, const json_t *v, size_t max, bool conv, char ***out,
                        size_t *n);

/* A ResourceList: resource name -> quantity, sorted by name. Replaces *out. */
bool jsonx_resource_list(jsonx_t *jx, const json_t *v, resource_list_t *out);

/* An RFC 3339 timestamp ("2024-05-01T10:00:00Z", fractions and offsets allowed) as seconds since
 * the epoch. */
bool jsonx_time(jsonx_t *jx, const json_t *v, int64_t *out);

/* Parse RFC 3339 text into seconds since the epoch; false when malformed. */
bool jsonx_parse_time(const char *s, int64_t *out);

/* ERR_INVALID with "path.key: unknown field" in `msg` for the first member of object `o` not in
 * `known` (NULL-terminated); ERR_OK when every member is known. For the strict configuration
 * readers, which refuse what they do not know rather than collect diagnostics. */
err_t jsonx_known_fields(const json_t *o, const char *const *known, const char *path,
                         err_msg_t *msg);

#endif
