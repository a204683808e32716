/* decode_int -- internals shared by the object decoders (decode_*.c, object.c); no other user. */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_DECODE_INT_H
#define SLUICE_DECODE_INT_H

#include "model/jsonx.h"
#include "model/object.h"

#include <jansson.h>
#include <stdbool.h>
#include <string.h>

/*
 * Conventions of every decoder here:
 * - the cursor's path already names the value being decoded (the caller pushed the key);
 * - JSON null is treated as "absent", as encoding/json does for Kubernetes objects;
 * - every problem is reported through the cursor and decoding continues, so one pass reports
 *   everything; outputs hold Kueue's defaults where a field is absent.
 */

/* One decode pass: the cursor plus the API version being read. */
typedef struct decode_s {
    jsonx_t jx;
    bool v1beta1; /* kueue.x-k8s.io/v1beta1 or config.kueue.x-k8s.io/v1beta1 */
} decode_t;

/* CRD list limits (kubebuilder MaxItems / MaxProperties of Kueue v1beta2). */
#define DEC_MAX_RESOURCE_GROUPS     16
#define DEC_MAX_FLAVORS             64
#define DEC_MAX_RESOURCES           64
#define DEC_MAX_POD_SETS            18
#define DEC_MAX_NODE_LABELS         8
#define DEC_MAX_TAINTS              8
#define DEC_MAX_TOLERATIONS         8
#define DEC_MAX_ADMISSION_CHECKS    64
#define DEC_MAX_CONDITIONS          16
#define DEC_MAX_SELECTOR_TERMS      64
#define DEC_MAX_WL_ADMISSION_CHECKS 8  /* Workload status.admissionChecks */
#define DEC_MAX_NOMINATED_CLUSTERS  20 /* Workload status.nominatedClusterNames */
#define DEC_MAX_UNHEALTHY_NODES     8  /* Workload status.unhealthyNodes */
#define DEC_MAX_TOPOLOGY_LEVELS     16 /* Topology spec.levels */
/* Lists of plain Kubernetes objects have no CRD bound; this ceiling keeps hostile input from
 * costing unbounded memory while staying far above anything real. */
#define DEC_MAX_LIST 4096

/* Is member `key` of object `obj` missing or null? */
bool decode__absent(const json_t *obj, const char *key);

/* Report "Required value" at path + "." + key for each of the NULL-terminated `keys` that is
 * missing or null in object `obj`, in order. */
void decode__required(decode_t *d, const json_t *obj, const char *const *keys);
#define DECODE_REQUIRED(d, obj, ...) \
    decode__required(d, obj, (const char *const[]){__VA_ARGS__, NULL})

/* Is `key` one of the NULL-terminated `names`? Each name is also offered as a suggestion for
 * `key` (jsonx_known), should it turn out unknown. */
bool decode__in(decode_t *d, const char *key, const char *const *names);

/* Is member `key` the field `name`? When not, `name` is offered as a suggestion (jsonx_known). */
bool decode__is(decode_t *d, const char *key, const char *name);

/* Decode one list item `v` (an object) into `item`, a zeroed element of the caller's array; the
 * path already ends in "[i]". `ctx` is what the caller passed to decode__list(). */
typedef void (*decode_item_fn)(decode_t *d, const json_t *v, void *item, void *ctx);

/* Length of list `v` if it is an array of at most `max` items, else 0 (the type error or "Too
 * many" is reported). `nonempty` (the CRD's MinItems=1): an empty list is reported as
 * "Required value: must have at least 1 item". */
size_t decode__list_len(decode_t *d, const json_t *v, size_t max, bool nonempty);

/* Decode list `v` (checked as by decode__list_len) into a new array of `size`-byte elements,
 * each filled by `item` with "[i]" pushed on the path; an item that is not an object is reported
 * ("must be of type object") and left zeroed. Returns the array (the caller owns it and
 * finalises each element) and sets *n to its length; returns NULL with *n untouched when the list
 * is empty or unusable, or on allocation failure (recorded on the cursor). */
void *decode__list(decode_t *d, const json_t *v, size_t max, bool nonempty, size_t size,
                   decode_item_fn item, void *ctx, size_t *n);

/* metadata (ObjectMeta). `v` may be NULL (absent). `namespaced` kinds keep metadata.namespace;
 * cluster-scoped kinds drop it with a warning. `need_name`: name or generateName required. */
void decode__meta(decode_t *d, const json_t *v, object_meta_t *m, bool namespaced, bool need_name);

/* Pod template metadata: labels and annotations decoded, the other ObjectMeta fields tolerated. */
void decode__template_meta(decode_t *d, const json_t *v, kv_list_t *labels, kv_list_t *annotations);

/* metav1.LabelSelector; sets present = true. */
void decode__label_selector(decode_t *d, const json_t *v, label_selector_t *s);

/* One selector requirement (matchExpressions item); `node` allows Gt/Lt (NodeSelectorRequirement).
 */
bool decode__selector_req(decode_t *d, const json_t *v, bool node, selector_req_t *r);

/* corev1.Taint list of a ResourceFlavor, at most `max` items; an effect outside the CRD's CEL
 * rule is reported with Kueue's message at the list's path. */
void decode__taints(decode_t *d, const json_t *v, size_t max, taint_t **out, size_t *n);

/* corev1.Toleration list, at most `max` items. `crd`: a Kueue CRD list (ResourceFlavor,
 * podSetUpdates) whose operator and effect sets are CEL rules, reported once with Kueue's
 * messages at the list's path; otherwise a PodSpec list (Kubernetes' "Unsupported value"). */
void decode__tolerations(decode_t *d, const json_t *v, size_t max, bool crd, toleration_t **out,
                         size_t *n);

/* PodTemplateSpec: metadata labels/annotations + spec. `spec_required` reports a missing spec. */
void decode__pod_template(decode_t *d, const json_t *v, kv_list_t *labels, kv_list_t *annotations,
                          pod_spec_t *spec);

/* PodSpec: the fields admission uses are decoded, other PodSpec fields tolerated. */
void decode__pod_spec(decode_t *d, const json_t *v, pod_spec_t *spec);

/* Compute pod_requests of a decoded podset; reports overflow at the current path. */
void decode__pod_set_requests(decode_t *d, pod_set_t *ps);

/* Kinds. `root` is the whole object (apiVersion and kind already checked). */
void decode__namespace(decode_t *d, const json_t *root, namespace_t *out);
void decode__priority_class(decode_t *d, const json_t *root, priority_class_t *out);
void decode__configuration(decode_t *d, const json_t *root, configuration_t *out);
void decode__flavor(decode_t *d, const json_t *root, flavor_t *out);
void decode__cluster_queue(decode_t *d, const json_t *root, cluster_queue_t *out);
void decode__cohort(decode_t *d, const json_t *root, cohort_t *out);
void decode__local_queue(decode_t *d, const json_t *root, local_queue_t *out);
void decode__topology(decode_t *d, const json_t *root, topology_t *out);
void decode__wpc(decode_t *d, const json_t *root, workload_priority_class_t *out);
void decode__admission_check(decode_t *d, const json_t *root, admission_check_t *out);
void decode__workload(decode_t *d, const json_t *root, workload_t *out);
void decode__job(decode_t *d, const json_t *root, job_t *out);

/* Iterate the members of object `obj` with the key pushed on the path and nulls skipped; declares
 * `const char *key` and `json_t *val` for the body:
 *   DECODE_FIELDS(d, obj, key, val) { if (DECODE_IS(key, "x")) ...; else jsonx_unknown(...); }
 * `continue` moves to the next member. The body must not `break` or `return` (the key is popped
 * after each iteration). */
#define DECODE_CAT_(a, b) a##b
#define DECODE_CAT(a, b)  DECODE_CAT_(a, b)
#define DECODE_FIELDS(d, obj, key, val)                                                      \
    DECODE_FIELDS_(d, obj, key, val, DECODE_CAT(it_, __LINE__), DECODE_CAT(mark_, __LINE__), \
                   DECODE_CAT(once_, __LINE__))
/* Four nested loops: the member iterator, then one pass each to declare key and val, then the
 * pass of the body, whose increment pops the key (so `continue` pops it too). */
#define DECODE_FIELDS_(d, obj, key, val, it, mark, once)                                           \
    for (void *it = json_object_iter((json_t *)(obj)); it != NULL;                                 \
         it = json_object_iter_next((json_t *)(obj), it))                                          \
        for (const char *key = json_object_iter_key(it), *once = NULL; once == NULL; once = key)   \
            for (json_t *val = json_object_iter_value(it); val != NULL; val = NULL)                \
                for (size_t mark = json_is_null(val) ? (size_t)-1 : jsonx_push_key(&(d)->jx, key); \
                     mark != (size_t)-1; jsonx_pop(&(d)->jx, mark), mark = (size_t)-1)

/* Is `key` the field `name`? Used in DECODE_FIELDS bodies, whose decode pass is `d`: the names it
 * is compared with become the "did you mean" of an unknown key. */
#define DECODE_IS(key, name) decode__is(d, (key), (name))

#endif
