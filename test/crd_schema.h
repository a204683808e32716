/* crd_schema -- test-only checker for CustomResourceDefinitions and the objects they describe. */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_TEST_CRD_SCHEMA_H
#define SLUICE_TEST_CRD_SCHEMA_H

#include "model/diag.h"
#include "util/err.h"

#include <jansson.h>
#include <regex.h>
#include <stdbool.h>
#include <stddef.h>

/*
 * Two halves, both following what kube-apiserver (apiextensions.k8s.io/v1) does:
 *
 *  - crd_schema_check() / crd_check(): is a CRD acceptable and its openAPIV3Schema structural
 *    (every node typed except under x-kubernetes-int-or-string / -preserve-unknown-fields, items
 *    on arrays, no additionalProperties beside properties, nothing structural inside
 *    anyOf/allOf/oneOf/not, metadata only at the root, list-map keys required or defaulted,
 *    defaults and enum values valid against their own schema, patterns that compile).
 *  - crd_schema_validate(): does an object satisfy a schema (type, enum, required, bounds,
 *    pattern, formats, list-set/list-map uniqueness, unknown fields). CEL rules
 *    (x-kubernetes-validations) are checked for shape only, never evaluated.
 *
 * Problems go to a diags_t (lib/model/diag.h) with Kubernetes-style paths: schema paths look like
 * "spec.versions[0].schema.openAPIV3Schema.properties[spec].type", instance paths like
 * "spec.resourceGroups[0].flavors[1].name".
 */

/* Append to `d` every way in which `schema` (an openAPIV3Schema, located at `path`) is not a
 * structural schema Kubernetes accepts. */
void crd_schema_check(const json_t *schema, const char *path, diags_t *d);

/* Append to `d` every way in which `instance` (at `path`, "" for a whole object) violates
 * `schema`. A missing required field whose schema has a default is accepted, as the API server
 * defaults before it validates. Fields the schema does not declare are errors (the API server
 * would drop them silently, or refuse them under strict field validation). */
void crd_schema_validate(const json_t *schema, const json_t *instance, const char *path,
                         diags_t *d);

/* Append to `d` every problem of the CustomResourceDefinition object `crd`: names, scope,
 * versions (one storage version, served), subresources, printer columns and selectable fields
 * that resolve in the schema, each version's schema (crd_schema_check), the conversion stanza
 * (None, or Webhook with review versions and one clientConfig), and served versions whose
 * schemas differ while conversion is "None" (only a conversion webhook maps their fields). */
void crd_check(const json_t *crd, diags_t *d);

/* The openAPIV3Schema of served version `version` of `crd` (borrowed), or NULL. */
const json_t *crd_version_schema(const json_t *crd, const char *version);

/* Compile a schema `pattern` (Go RE2 syntax, the subset CRDs use) into a POSIX extended regex.
 * On success `*out` must be released with regfree(). ERR_UNSUPPORTED for constructs that have
 * no POSIX equivalent, ERR_PARSE when regcomp refuses the translation; `msg` says which. */
err_t crd_pattern_compile(const char *pattern, regex_t *out, err_msg_t *msg);

/* CRDs loaded from a directory. */
typedef struct crd_set_s {
    json_t *crds;  /* owned: array of CustomResourceDefinition objects */
    json_t *files; /* owned: array of the file path each CRD came from (same index) */
} crd_set_t;

/* Load every *.yaml / *.yml file of `dir` (not recursive) into `set` (which must be zeroed);
 * documents that are not CustomResourceDefinitions are an error. */
err_t crd_set_load_dir(crd_set_t *set, const char *dir, err_msg_t *msg);

/* Release the CRDs. NULL-safe; the set is zeroed afterwards. */
void crd_set_fini(crd_set_t *set);

/* The CRD of `group` and `kind` in `set` (borrowed), or NULL. */
const json_t *crd_set_find(const crd_set_t *set, const char *group, const char *kind);

/* Validate manifest object `obj` against the CRDs in `set`. Objects of groups other than
 * kueue.x-k8s.io (Job, Namespace, PriorityClass, config.kueue.x-k8s.io Configuration, ...) are
 * skipped: returns false and adds nothing. A kueue.x-k8s.io object whose kind has no CRD, or
 * whose version is not served, is an error. Returns true when the object was checked. */
bool crd_set_validate_object(const crd_set_t *set, const json_t *obj, diags_t *d);

/* Counters filled by crd_set_validate_tree(). */
typedef struct crd_scan_stats_s {
    size_t files;     /* YAML files read */
    size_t documents; /* non-empty documents */
    size_t checked;   /* objects validated against a CRD */
} crd_scan_stats_t;

/* Validate every object of every *.yaml / *.yml file under `dir` (recursive; a missing directory
 * counts as empty). Each problem goes to `d` with path "FILE: doc N (Kind name): field". */
err_t crd_set_validate_tree(const crd_set_t *set, const char *dir, diags_t *d,
                            crd_scan_stats_t *stats, err_msg_t *msg);

#endif
