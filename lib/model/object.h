/* object -- decode any supported Kubernetes object from a jansson tree, with path-precise errors.
 */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_OBJECT_H
#define SLUICE_OBJECT_H

#include "model/diag.h"
#include "model/types.h"

#include <jansson.h>

typedef enum {
    KIND_UNKNOWN = 0,
    KIND_NAMESPACE,
    KIND_RESOURCE_FLAVOR,
    KIND_CLUSTER_QUEUE,
    KIND_LOCAL_QUEUE,
    KIND_COHORT,
    KIND_WORKLOAD_PRIORITY_CLASS,
    KIND_WORKLOAD,
    KIND_TOPOLOGY,
    KIND_PRIORITY_CLASS,
    KIND_JOB,
    KIND_ADMISSION_CHECK,
    KIND_CONFIGURATION,
    /* An object of a job integration kind (JobSet, PyTorchJob, RayJob, ...): integration_t. It
     * is never produced by object_decode(), only by object_decode_integration(). */
    KIND_INTEGRATION,
} kind_t;

/* One decoded object of any supported kind. */
typedef struct object_s {
    kind_t kind;
    char *api_version; /* owned, as written, e.g. "kueue.x-k8s.io/v1beta2" */
    union {
        namespace_t ns;
        flavor_t flavor;
        cluster_queue_t cq;
        local_queue_t lq;
        cohort_t cohort;
        workload_priority_class_t wpc;
        workload_t wl;
        topology_t topology;
        priority_class_t pc;
        job_t job;
        configuration_t config;
        admission_check_t ac;
        integration_t integ;
    } u;
} object_t;

/* Kueue's kind name ("ClusterQueue") for `kind`; "" for KIND_UNKNOWN. */
const char *kind_name(kind_t kind);

/* The kind of `obj` as its document names it: kind_name(obj->kind), or an integration object's
 * own kind ("JobSet"); borrowed. */
const char *object_kind_name(const object_t *obj);

/* The metadata of `obj` (borrowed from it); NULL for KIND_UNKNOWN. */
object_meta_t *object_meta(object_t *obj);

/* As object_meta(), read-only. */
const object_meta_t *object_meta_const(const object_t *obj);

/* Decode `root` (borrowed) into `out`. Every problem is appended to `diags` with its full field
 * path (unknown kind, wrong types, missing required fields, bad enums and quantities; unknown
 * fields are errors, known-but-unused Kueue fields are warnings). Returns ERR_OK when no error
 * diagnostic was added, ERR_INVALID otherwise (out is then finalised and zeroed), ERR_NOMEM on
 * allocation failure. */
err_t object_decode(json_t *root, object_t *out, diags_t *diags);

/* As object_decode(), for an object read back from the API server, whose (newer) schema may
 * store fields sluice does not know -- not ours to refuse: when the only errors are unknown
 * fields, they are dropped from a copy (`root` is not changed), reported in `diags` as warnings,
 * and the copy decoded. */
err_t object_decode_stored(json_t *root, object_t *out, diags_t *diags);

/* As object_decode(), except that on ERR_INVALID `out` keeps what was decoded (every field with
 * an error as if absent) when that is still a whole object, fit for the validators and the
 * cross-checks: when the kind was known and every error is an unknown field, an unsupported enum
 * value or a malformed quantity. Otherwise `out` is zeroed, as by object_decode(). For a caller
 * that checks the rest of the object in the same pass (`sluice check`); it object_fini()s `out`
 * either way. */
err_t object_decode_keep(json_t *root, object_t *out, diags_t *diags);

/* Decode the envelope of `root` (borrowed), an object of job integration kind `kind` of API group
 * `group` (the caller found it in lib/jobs' kind table), into `out` as KIND_INTEGRATION:
 * apiVersion and kind (strings), metadata (namespaced, name or generateName required) with the
 * same rules as a Job's. The rest of the object is not read here. Returns as object_decode(). */
err_t object_decode_integration(json_t *root, const char *group, const char *kind, object_t *out,
                                diags_t *diags);

/* Release everything `obj` owns and zero it; NULL-safe. (The lifetimes of the types of each kind
 * are types.h's.) */
void object_fini(object_t *obj);

#endif
