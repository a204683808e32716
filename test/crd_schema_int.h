/* crd_schema_int -- helpers shared by crd_schema.c and crd_structural.c only. */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_TEST_CRD_SCHEMA_INT_H
#define SLUICE_TEST_CRD_SCHEMA_INT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* Size of the path buffers; a longer path is truncated, which only shortens a message. */
#define CRD_PATH_LEN 1024

/* out = "path.name" (or "name" when path is empty); out holds CRD_PATH_LEN bytes. */
void crd__path_field(char *out, const char *path, const char *name);

/* out = "path[i]". */
void crd__path_index(char *out, const char *path, size_t i);

/* out = "path.child[key]", the way Kubernetes prints schema paths (properties[spec]). */
void crd__path_key(char *out, const char *path, const char *child, const char *key);

/* String member `key` of `obj` (borrowed), NULL when absent or not a string. */
const char *crd__jstr(const json_t *obj, const char *key);

/* True when member `key` of `obj` is the JSON literal true. */
bool crd__jtrue(const json_t *obj, const char *key);

/* OpenAPI name of the JSON type of `v` ("object", "integer", "number", ...). */
const char *crd__json_kind(const json_t *v);

/* True when `v` is an integer or an integral real within int64; stores it in `out`. */
bool crd__json_integral(const json_t *v, long long *out);

/* `v` as a double, for comparisons with schema bounds only (never quantities). */
double crd__json_num(const json_t *v);

/* True for string, integer, number and boolean. */
bool crd__is_scalar_type(const char *type);

/* DNS-1123 subdomain: dot-separated lowercase labels, at most 253 characters. */
bool crd__dns_subdomain(const char *s);

/* DNS-1035 label: a lowercase DNS label that starts with a letter. */
bool crd__dns1035_label(const char *s);

#endif
