/* validate_int -- internals shared by the validate_*.c files (lib/model only). */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_VALIDATE_INT_H
#define SLUICE_VALIDATE_INT_H

#include "model/diag.h"
#include "model/names.h"
#include "model/object.h"
#include "model/validate.h"

#include <stdbool.h>
#include <stddef.h>

/*
 * validate.c dispatches by kind to validate_queue.c (ResourceFlavor, ClusterQueue, Cohort,
 * LocalQueue), validate_workload.c and validate_job.c; validate_meta.c holds the helpers and the
 * rules on metadata that several kinds share. Every message goes through validate__err() or
 * validate__err_not_supported() with a literal format: test_validate reads these files and
 * requires a test case for each format.
 */

/* Longest field path we build; label keys are at most 317 bytes, so this is never reached by
 * valid input and only truncates paths of absurd invalid input. */
#define VPATH 1024

#define QUEUE_NAME_LABEL        "kueue.x-k8s.io/queue-name"
#define PRIORITY_CLASS_LABEL    "kueue.x-k8s.io/priority-class"
#define MAX_EXEC_TIME_LABEL     "kueue.x-k8s.io/max-exec-time-seconds"
#define PREBUILT_WORKLOAD_LABEL "kueue.x-k8s.io/prebuilt-workload-name"
#define MIN_PARALLELISM_ANN     "kueue.x-k8s.io/job-min-parallelism"
#define SYNC_COMPLETIONS_ANN    "kueue.x-k8s.io/job-completions-equal-parallelism"
#define ELASTIC_JOB_ANN         "kueue.x-k8s.io/elastic-job"
#define STOPPING_ANN            "kueue.x-k8s.io/stopping"
#define GATED_BY_ANN            "kueue.x-k8s.io/admission-gated-by"

#define MSG_IMMUTABLE    "field is immutable"
#define MSG_NEGATIVE     "must be greater than or equal to 0"
#define MSG_LEND_NOMINAL "must be less than or equal to the nominalQuota"
#define MSG_EFFECTS      "supported taint effect values: 'NoSchedule', 'PreferNoSchedule', 'NoExecute'"

#define ANNOTATIONS_MAX_BYTES (256 * 1024)

/* Room for the podSet names of one Workload (the CRD allows 18). */
#define VNAMES_MAX 64

/* ---- validate_meta.c: helpers --------------------------------------------------------------- */

/* Format a field path into `buf` (VPATH bytes), truncating absurdly long ones. */
void validate__pathf(char *buf, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Append an error to `d` unless the same path and message is already there (the CRD and the
 * webhook state some rules twice at the same path; each is reported once). */
void validate__err(diags_t *d, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* field.NotSupported: `Unsupported value: "x": supported values: "a", "b"` (`values` in the
 * order given); without values just `Unsupported value: "x"`. */
void validate__err_not_supported(diags_t *d, const char *path, const char *value,
                                 const char *const *values, size_t n);

bool validate__is_alnum_byte(unsigned char c);
/* NULL equals only NULL. */
bool validate__str_eq(const char *a, const char *b);
/* An absent and an empty optional string compare equal (as Kubernetes compares them). */
bool validate__str_eq_empty(const char *a, const char *b);
bool validate__strv_has(const char *const *v, size_t n, const char *s);
/* Sort `v` (borrowed strings) and drop duplicates, as Go's sets.List does; returns the count. */
size_t validate__sorted_set(const char **v, size_t n);

/* Value of an annotation / label of `m` (borrowed; "" for a key without value), NULL when
 * absent. */
const char *validate__meta_annotation(const object_meta_t *m, const char *key);
const char *validate__meta_label(const object_meta_t *m, const char *key);
/* The kueue.x-k8s.io/elastic-job annotation is "true". */
bool validate__elastic_enabled(const object_meta_t *m);

/* Structural schema of x-kubernetes-list-type map (one key field, `key_at(items, i)` gives item
 * i's key) and set (strings): `<list>[i]: Duplicate value: ...` for second occurrences. */
void validate__list_map(diags_t *d, const char *list_path, const char *field, size_t n,
                        const char *(*key_at)(const void *items, size_t i), const void *items);
void validate__list_set(diags_t *d, const char *list_path, char *const *items, size_t n);

/* MSG_NEGATIVE at `path` when `q` < 0. */
void validate__quantity_nonneg(diags_t *d, const char *path, quantity_t q);

/* ---- validate_meta.c: names, selectors, tolerations, admission gates ------------------------ */

/* One error per message of `m` at `path`; or one error with the messages joined by `sep`. */
void validate__emit_each(diags_t *d, const char *path, const names_msgs_t *m);
void validate__emit_joined(diags_t *d, const char *path, const names_msgs_t *m, const char *sep);
/* ValidateLabelName, ValidateLabels, ValidateAnnotations, ValidateLabelSelector. */
void validate__label_name(diags_t *d, const char *path, const char *key);
void validate__labels(diags_t *d, const char *path, const kv_list_t *labels);
void validate__annotations(diags_t *d, const char *path, const kv_list_t *ann);
void validate__label_selector(diags_t *d, const char *path, const label_selector_t *s);

/* "NoSchedule", "PreferNoSchedule", "NoExecute"; "" otherwise. */
const char *validate__effect_name(taint_effect_t e);
/* The CRD rules of a toleration list (each once, at the list's path) and the webhook's key rule. */
void validate__tolerations_cel(diags_t *d, const char *path, const toleration_t *t, size_t n);
void validate__toleration_keys(diags_t *d, const char *path, const toleration_t *t, size_t n);

/* kueue.x-k8s.io/admission-gated-by (Workload and Job): the value's format; on update, gates may
 * only be removed. */
void validate__gated_by_format(diags_t *d, const char *value);
void validate__gated_by_update(diags_t *d, const object_meta_t *old, const object_meta_t *m);

/* ---- one file per kind; `old` is NULL on create --------------------------------------------- */

void validate__flavor(const flavor_t *rf, diags_t *d);
void validate__flavor_update(const flavor_t *old, const flavor_t *rf, diags_t *d);
void validate__cluster_queue(const cluster_queue_t *cq, const cluster_queue_t *old, diags_t *d);
void validate__cohort(const cohort_t *co, diags_t *d);
void validate__topology(const topology_t *t, diags_t *d);
void validate__topology_update(const topology_t *old, const topology_t *t, diags_t *d);
void validate__admission_check(const admission_check_t *ac, const admission_check_t *old,
                               diags_t *d);
void validate__local_queue_update(const local_queue_t *old, const local_queue_t *lq, diags_t *d);
void validate__workload(const workload_t *wl, const workload_t *old, diags_t *d);
void validate__workload_update(const workload_t *old, const workload_t *wl, diags_t *d);
void validate__job(const job_t *j, diags_t *d);
void validate__job_update(const job_t *old, const job_t *j, const validate_env_t *env, diags_t *d);
/* jobframework's rules over an integration object's metadata (KIND_INTEGRATION). */
void validate__integration(const object_t *o, diags_t *d);
void validate__integration_update(const object_t *old, const object_t *o, const validate_env_t *env,
                                  diags_t *d);

#endif
