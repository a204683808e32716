/* validate_job -- Kueue's rules for batch/v1 Jobs (labels, annotations, updates). */
/* SPDX-License-Identifier: Apache-2.0 */
#include "model/validate_int.h"

#include "model/names.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* ---- batch/v1 Job ------------------------------------------------------------------------- */

/* Go's strconv.Atoi over the whole string: optional sign, decimal digits, int64 range. On
 * failure writes strconv's error text into `msg`. */
static bool go_atoi(const char *s, int64_t *out, char *msg, size_t cap)
{
    const char *p = s;
    bool neg = false;
    uint64_t v = 0, limit;
    char qs[256];

    if (*p == '+' || *p == '-') {
        neg = *p == '-';
        p++;
    }
    limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    if (*p == '\0')
        goto syntax;
    for (; *p != '\0'; p++) {
        if (*p < '0' || *p > '9')
            goto syntax;
        if (v > (limit - (uint64_t)(*p - '0')) / 10) {
            snprintf(msg, cap, "strconv.Atoi: parsing %s: value out of range",
                     validate__quote(s, qs, sizeof(qs)));
            return false;
        }
        v = v * 10 + (uint64_t)(*p - '0');
    }
    *out = neg ? (int64_t)(0 - v) : (int64_t)v;
    return true;
syntax:
    snprintf(msg, cap, "strconv.Atoi: parsing %s: invalid syntax",
             validate__quote(s, qs, sizeof(qs)));
    return false;
}

/* Go's strconv.ParseBool. */
static bool go_parse_bool(const char *s, bool *out, char *msg, size_t cap)
{
    static const char *const yes[] = {"1", "t", "T", "TRUE", "true", "True", NULL};
    static const char *const no[] = {"0", "f", "F", "FALSE", "false", "False", NULL};
    char qs[256];

    for (size_t i = 0; yes[i] != NULL; i++) {
        if (strcmp(s, yes[i]) == 0) {
            *out = true;
            return true;
        }
        if (strcmp(s, no[i]) == 0) {
            *out = false;
            return true;
        }
    }
    snprintf(msg, cap, "strconv.ParseBool: parsing %s: invalid syntax",
             validate__quote(s, qs, sizeof(qs)));
    return false;
}

static bool job_suspended(const job_t *j)
{
    return j->suspend &&
           !validate__str_eq(validate__meta_annotation(&j->meta, STOPPING_ANN), "true");
}

static int32_t job_pods_count(const job_t *j)
{
    if (j->has_completions && j->completions < j->parallelism)
        return j->completions;
    return j->parallelism;
}

static bool job_sync_completions(const job_t *j)
{
    const char *v = validate__meta_annotation(&j->meta, SYNC_COMPLETIONS_ANN);
    bool b = false;
    char msg[16];

    return v != NULL && go_parse_bool(v, &b, msg, sizeof(msg)) && b;
}

/* ValidateLabelAsCRDName: a DNS-1123 subdomain, messages joined with ",". */
static void check_crd_name_label(diags_t *d, const char *path, const char *value)
{
    names_msgs_t m = {.n = 0};

    if (value == NULL)
        return;
    names_dns1123_subdomain(value, &m);
    validate__emit_joined(d, path, &m, ",");
}

#define LABEL_PATH(key) "metadata.labels[" key "]"
#define ANN_PATH(key)   "metadata.annotations[" key "]"

/* The prebuilt-workload name lives in the annotation when it is too long for a label. */
static const char *prebuilt_path(const job_t *j, const char **value)
{
    const char *ann = validate__meta_annotation(&j->meta, PREBUILT_WORKLOAD_LABEL);

    if (ann != NULL && ann[0] != '\0' && strlen(ann) > 63) {
        *value = ann;
        return ANN_PATH(PREBUILT_WORKLOAD_LABEL);
    }
    *value = validate__meta_label(&j->meta, PREBUILT_WORKLOAD_LABEL);
    return LABEL_PATH(PREBUILT_WORKLOAD_LABEL);
}

/* jobframework.ValidateJobOnCreate. */
static void check_job_common(const job_t *j, diags_t *d)
{
    const char *v;
    const char *path;
    char msg[512];
    int64_t n;

    check_crd_name_label(d, LABEL_PATH(QUEUE_NAME_LABEL),
                         validate__meta_label(&j->meta, QUEUE_NAME_LABEL));
    path = prebuilt_path(j, &v);
    check_crd_name_label(d, path, v);
    v = validate__meta_label(&j->meta, MAX_EXEC_TIME_LABEL);
    if (v != NULL) {
        if (!go_atoi(v, &n, msg, sizeof(msg)))
            validate__err(d, LABEL_PATH(MAX_EXEC_TIME_LABEL), "%s", msg);
        else if (n <= 0)
            validate__err(d, LABEL_PATH(MAX_EXEC_TIME_LABEL), "should be greater than 0");
    }
    validate__gated_by_format(d, validate__meta_annotation(&j->meta, GATED_BY_ANN));
}

/* validatePartialAdmissionCreate. */
static void check_job_partial_admission(const job_t *j, diags_t *d)
{
    const char *v = validate__meta_annotation(&j->meta, MIN_PARALLELISM_ANN);
    char msg[512];
    int64_t n;

    if (v == NULL)
        return;
    if (!go_atoi(v, &n, msg, sizeof(msg)))
        validate__err(d, ANN_PATH(MIN_PARALLELISM_ANN), "%s", msg);
    else if (n >= job_pods_count(j) || n <= 0)
        validate__err(d, ANN_PATH(MIN_PARALLELISM_ANN), "should be between 0 and %ld",
                      (long)job_pods_count(j) - 1);
    if (validate__elastic_enabled(&j->meta))
        validate__err(d, ANN_PATH(MIN_PARALLELISM_ANN),
                      "partial admission and elastic job cannot be used together");
}

/* validateSyncCompletionCreate. */
static void check_job_sync_completions(const job_t *j, diags_t *d)
{
    const char *v = validate__meta_annotation(&j->meta, SYNC_COMPLETIONS_ANN);
    char msg[512];
    bool on = false;

    if (v == NULL)
        return;
    if (!go_parse_bool(v, &on, msg, sizeof(msg)))
        validate__err(d, ANN_PATH(SYNC_COMPLETIONS_ANN), "%s", msg);
    if (!on)
        return;
    if (!j->indexed)
        validate__err(d, ANN_PATH(SYNC_COMPLETIONS_ANN),
                      "should not be enabled for NonIndexed jobs");
    if (j->parallelism != (j->has_completions ? j->completions : 1))
        validate__err(d, "spec.completions",
                      "should be equal to parallelism when " SYNC_COMPLETIONS_ANN
                      " annotation is true");
}

void validate__job(const job_t *j, diags_t *d)
{
    check_job_common(j, d);
    check_job_partial_admission(j, d);
    check_job_sync_completions(j, d);
}

void validate__job_update(const job_t *old, const job_t *j, const validate_env_t *env, diags_t *d)
{
    const char *oq = validate__meta_label(&old->meta, QUEUE_NAME_LABEL);
    const char *nq = validate__meta_label(&j->meta, QUEUE_NAME_LABEL);
    const char *opc = validate__meta_label(&old->meta, PRIORITY_CLASS_LABEL);
    const char *npc = validate__meta_label(&j->meta, PRIORITY_CLASS_LABEL);
    const char *ov, *nv, *path;
    bool susp = job_suspended(j), old_susp = job_suspended(old);

    check_job_common(j, d);
    if (!validate__str_eq(validate__meta_annotation(&old->meta, MIN_PARALLELISM_ANN),
                          validate__meta_annotation(&j->meta, MIN_PARALLELISM_ANN)))
        check_job_partial_admission(j, d);
    check_job_sync_completions(j, d);

    /* jobframework.ValidateJobOnUpdate */
    if (!susp && !validate__str_eq_empty(oq, nq))
        validate__err(d, LABEL_PATH(QUEUE_NAME_LABEL), MSG_IMMUTABLE);
    if ((nq == NULL || nq[0] == '\0') && oq != NULL && oq[0] != '\0' && env != NULL &&
        env->default_queue_exists != NULL &&
        env->default_queue_exists(env->ctx, old->meta.namespace ? old->meta.namespace : ""))
        validate__err(d, LABEL_PATH(QUEUE_NAME_LABEL),
                      "queue-name must not be empty in namespace with default queue");
    if (!susp && !validate__elastic_enabled(&old->meta)) {
        (void)prebuilt_path(old, &ov);
        path = prebuilt_path(j, &nv);
        if (!validate__str_eq_empty(ov, nv))
            validate__err(d, path, MSG_IMMUTABLE);
    }
    if ((!susp || !old_susp) &&
        !validate__str_eq_empty(validate__meta_label(&old->meta, MAX_EXEC_TIME_LABEL),
                                validate__meta_label(&j->meta, MAX_EXEC_TIME_LABEL)))
        validate__err(d, LABEL_PATH(MAX_EXEC_TIME_LABEL), MSG_IMMUTABLE);
    if (!susp && (opc == NULL || opc[0] == '\0') && npc != NULL && npc[0] != '\0')
        validate__err(d, LABEL_PATH(PRIORITY_CLASS_LABEL),
                      "WorkloadPriorityClass cannot be added to a non-suspended workload");
    else if ((npc == NULL || npc[0] == '\0') && opc != NULL && opc[0] != '\0')
        validate__err(d, LABEL_PATH(PRIORITY_CLASS_LABEL),
                      "WorkloadPriorityClass cannot be removed from a workload");
    if (validate__elastic_enabled(&old->meta) != validate__elastic_enabled(&j->meta))
        validate__err(d, ANN_PATH(ELASTIC_JOB_ANN), MSG_IMMUTABLE);
    validate__gated_by_update(d, &old->meta, &j->meta);

    /* validatePartialAdmissionUpdate (reads spec.suspend as written, as Kueue does). */
    if (validate__meta_annotation(&old->meta, MIN_PARALLELISM_ANN) != NULL && !old->suspend &&
        old->parallelism != j->parallelism)
        validate__err(
            d, "spec.parallelism",
            "Forbidden: cannot change when partial admission is enabled and the job is not "
            "suspended");
    if (old_susp == susp && !susp && job_sync_completions(old) != job_sync_completions(j))
        validate__err(d, ANN_PATH(SYNC_COMPLETIONS_ANN),
                      "Forbidden: field is immutable while the job is not suspended");
}
