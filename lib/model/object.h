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
    KIND_PRIORITY_CLASS,
    KIND_JOB,
    KIND_CONFIGURATION,
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
        priority_class_t pc;
        job_t job;
        configuration_t config;
    } u;
} object_t;

/* Kueue's kind name ("ClusterQueue") for `kind`; "" for KIND_UNKNOWN. */
const char *kind_name(kind_t kind);

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

/* Release everything `obj` owns and zero it; NULL-safe. */
void object_fini(object_t *obj);

/* ---- lifetimes of the types in types.h (all NULL-safe; each zeroes what it releases) ----- */

/* Free an array of `n` owned strings and the array itself. */
void strv_free(char **v, size_t n);
void kv_list_fini(kv_list_t *l);
void resource_list_fini(resource_list_t *l);
void label_selector_fini(label_selector_t *s);
void selector_req_fini(selector_req_t *r);
void taint_fini(taint_t *t);
void toleration_fini(toleration_t *t);
void container_fini(container_t *c);
void pod_spec_fini(pod_spec_t *s);
void object_meta_fini(object_meta_t *m);
void resource_group_fini(resource_group_t *g);
void pod_set_fini(pod_set_t *p);
void admission_fini(admission_t *a);
void admission_check_rule_fini(admission_check_rule_t *r);
void condition_fini(condition_t *c);
void pod_set_update_fini(pod_set_update_t *u);
void admission_check_state_fini(admission_check_state_t *s);
void namespace_fini(namespace_t *n);
void flavor_fini(flavor_t *f);
void cluster_queue_fini(cluster_queue_t *cq);
void cohort_fini(cohort_t *c);
void local_queue_fini(local_queue_t *lq);
void workload_priority_class_fini(workload_priority_class_t *w);
void priority_class_fini(priority_class_t *p);
void workload_fini(workload_t *w);
void job_fini(job_t *j);
void configuration_fini(configuration_t *c);

/* Deep copies into zeroed `dst`; ERR_NOMEM leaves `dst` zeroed. */
err_t kv_list_copy(kv_list_t *dst, const kv_list_t *src);
err_t resource_list_copy(resource_list_t *dst, const resource_list_t *src);
err_t pod_spec_copy(pod_spec_t *dst, const pod_spec_t *src);

/* Value for `key` in a sorted list (borrowed), NULL when absent. */
const char *kv_list_get(const kv_list_t *l, const char *key);

/* Set `key` to `value` keeping the list sorted (copies both); ERR_NOMEM on failure. */
err_t kv_list_set(kv_list_t *l, const char *key, const char *value);

/* Quantity for `name` in a sorted list (borrowed), NULL when absent. */
const quantity_t *resource_list_get(const resource_list_t *l, const char *name);

#endif
