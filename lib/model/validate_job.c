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
                     diag_quote(s, qs, sizeof(qs)));
            return false;
        }
        v = v * 10 + (uint64_t)(*p - '0');
    }
    *out = neg ? (int64_t)(0 - v) : (int64_t)v;
    return true;
syntax:
    snprintf(msg, cap, "strconv.Atoi: parsing %s: invalid syntax", diag_quote(s, qs, sizeof(qs)));
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
             diag_quote(s, qs, sizeof(qs)));
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
static const char *prebuilt_path(const object_meta_t *m, const char **value)
{
    const char *ann = validate__meta_annotation(m, PREBUILT_WORKLOAD_LABEL);

    if (ann != NULL && ann[0] != '\0' && strlen(ann) > 63) {
        *value = ann;
        return ANN_PATH(PREBUILT_WORKLOAD_LABEL);
    }
    *value = validate__meta_label(m, PREBUILT_WORKLOAD_LABEL);
    return LABEL_PATH(PREBUILT_WORKLOAD_LABEL);
}

/* Kinds Kueue runs with a prebuilt Workload (jobframework supportedPrebuiltWlJobGVKs) and kinds
 * that may be elastic (supportedElasticJobGVKs), as "<apiVersion>, Kind=<kind>" (Go's
 * GroupVersionKind.String()). */
static const char *const prebuilt_gvks[] = {
    "batch/v1, Kind=Job",
    "jobset.x-k8s.io/v1alpha2, Kind=JobSet",
    "kubeflow.org/v1, Kind=TFJob",
    "kubeflow.org/v1, Kind=PaddleJob",
    "kubeflow.org/v1, Kind=PyTorchJob",
    "kubeflow.org/v1, Kind=XGBoostJob",
    "trainer.kubeflow.org/v1alpha1, Kind=TrainJob",
    "kubeflow.org/v2beta1, Kind=MPIJob",
    "ray.io/v1, Kind=RayJob",
    "v1, Kind=Pod",
    "ray.io/v1, Kind=RayCluster",
    "ray.io/v1, Kind=RayService",
    "workload.codeflare.dev/v1beta2, Kind=AppWrapper",
};
static const char *const elastic_gvks[] = {
    "batch/v1, Kind=Job",
    "ray.io/v1, Kind=RayCluster",
    "ray.io/v1, Kind=RayJob",
    "ray.io/v1, Kind=RayService",
};

/* jobframework.ValidateJobOnCreate over the metadata of an object of `gvk` (GroupVersionKind
 * string; NULL for a batch/v1 Job, which supports everything). */
static void check_common(const object_meta_t *m, const char *gvk, diags_t *d)
{
    const char *v;
    const char *path;
    char msg[512], qs[300];
    int64_t n;

    check_crd_name_label(d, LABEL_PATH(QUEUE_NAME_LABEL),
                         validate__meta_label(m, QUEUE_NAME_LABEL));
    path = prebuilt_path(m, &v);
    check_crd_name_label(d, path, v);
    if (gvk != NULL && v != NULL && v[0] != '\0' &&
        !validate__strv_has(prebuilt_gvks, sizeof(prebuilt_gvks) / sizeof(prebuilt_gvks[0]), gvk))
        validate__err(d, path, "Forbidden: Is not supported for %s",
                      diag_quote(gvk, qs, sizeof(qs)));
    v = validate__meta_label(m, MAX_EXEC_TIME_LABEL);
    if (v != NULL) {
        if (!go_atoi(v, &n, msg, sizeof(msg)))
            validate__err(d, LABEL_PATH(MAX_EXEC_TIME_LABEL), "%s", msg);
        else if (n <= 0)
            validate__err(d, LABEL_PATH(MAX_EXEC_TIME_LABEL), "should be greater than 0");
    }
    if (gvk != NULL && validate__elastic_enabled(m) &&
        !validate__strv_has(elastic_gvks, sizeof(elastic_gvks) / sizeof(elastic_gvks[0]), gvk))
        validate__err(d, ANN_PATH(ELASTIC_JOB_ANN),
                      "Forbidden: elastic job is not supported for %s",
                      diag_quote(gvk, qs, sizeof(qs)));
    validate__gated_by_format(d, validate__meta_annotation(m, GATED_BY_ANN));
}

/* jobframework.ValidateJobOnCreate. */
static void check_job_common(const job_t *j, diags_t *d)
{
    check_common(&j->meta, NULL, d);
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

/* jobframework.ValidateJobOnUpdate over the metadata of `old` and `m` (and whether each is held).
 */
static void check_common_update(const object_meta_t *om, const object_meta_t *m, bool old_susp,
                                bool susp, const validate_env_t *env, diags_t *d)
{
    const char *oq = validate__meta_label(om, QUEUE_NAME_LABEL);
    const char *nq = validate__meta_label(m, QUEUE_NAME_LABEL);
    const char *opc = validate__meta_label(om, PRIORITY_CLASS_LABEL);
    const char *npc = validate__meta_label(m, PRIORITY_CLASS_LABEL);
    const char *ov, *nv, *path;

    if (!susp && !validate__str_eq_empty(oq, nq))
        validate__err(d, LABEL_PATH(QUEUE_NAME_LABEL), MSG_IMMUTABLE);
    if ((nq == NULL || nq[0] == '\0') && oq != NULL && oq[0] != '\0' && env != NULL &&
        env->default_queue_exists != NULL &&
        env->default_queue_exists(env->ctx, om->namespace ? om->namespace : ""))
        validate__err(d, LABEL_PATH(QUEUE_NAME_LABEL),
                      "queue-name must not be empty in namespace with default queue");
    if (!susp && !validate__elastic_enabled(om)) {
        (void)prebuilt_path(om, &ov);
        path = prebuilt_path(m, &nv);
        if (!validate__str_eq_empty(ov, nv))
            validate__err(d, path, MSG_IMMUTABLE);
    }
    if ((!susp || !old_susp) &&
        !validate__str_eq_empty(validate__meta_label(om, MAX_EXEC_TIME_LABEL),
                                validate__meta_label(m, MAX_EXEC_TIME_LABEL)))
        validate__err(d, LABEL_PATH(MAX_EXEC_TIME_LABEL), MSG_IMMUTABLE);
    if (!susp && (opc == NULL || opc[0] == '\0') && npc != NULL && npc[0] != '\0')
        validate__err(d, LABEL_PATH(PRIORITY_CLASS_LABEL),
                      "WorkloadPriorityClass cannot be added to a non-suspended workload");
    else if ((npc == NULL || npc[0] == '\0') && opc != NULL && opc[0] != '\0')
        validate__err(d, LABEL_PATH(PRIORITY_CLASS_LABEL),
                      "WorkloadPriorityClass cannot be removed from a workload");
    if (validate__elastic_enabled(om) != validate__elastic_enabled(m))
        validate__err(d, ANN_PATH(ELASTIC_JOB_ANN), MSG_IMMUTABLE);
    validate__gated_by_update(d, om, m);
}

void validate__job_update(const job_t *old, const job_t *j, const validate_env_t *env, diags_t *d)
{
    bool susp = job_suspended(j), old_susp = job_suspended(old);

    check_job_common(j, d);
    if (!validate__str_eq(validate__meta_annotation(&old->meta, MIN_PARALLELISM_ANN),
                          validate__meta_annotation(&j->meta, MIN_PARALLELISM_ANN)))
        check_job_partial_admission(j, d);
    check_job_sync_completions(j, d);

    check_common_update(&old->meta, &j->meta, old_susp, susp, env, d);

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

/* ---- objects of the other job integration kinds (JobSet, PyTorchJob, RayJob, ...) --------- */

/* "<apiVersion>, Kind=<kind>" of `o` into buf. */
static const char *gvk_of(const object_t *o, char *buf, size_t cap)
{
    snprintf(buf, cap, "%s, Kind=%s", o->api_version != NULL ? o->api_version : "",
             o->u.integ.kind != NULL ? o->u.integ.kind : "");
    return buf;
}

/* A serving owner's webhook (Deployment, StatefulSet, LeaderWorkerSet) checks its queue name,
 * the elastic-job annotation and the admission gates -- not jobframework's whole
 * ValidateJobOnCreate (no prebuilt workload, no maximum execution time: a service runs). */
static void check_serving(const object_meta_t *m, const char *gvk, diags_t *d)
{
    char qs[300];

    check_crd_name_label(d, LABEL_PATH(QUEUE_NAME_LABEL),
                         validate__meta_label(m, QUEUE_NAME_LABEL));
    if (validate__elastic_enabled(m) &&
        !validate__strv_has(elastic_gvks, sizeof(elastic_gvks) / sizeof(elastic_gvks[0]), gvk))
        validate__err(d, ANN_PATH(ELASTIC_JOB_ANN),
                      "Forbidden: elastic job is not supported for %s",
                      diag_quote(gvk, qs, sizeof(qs)));
    validate__gated_by_format(d, validate__meta_annotation(m, GATED_BY_ANN));
}

/* Its update: the queue name is immutable once a replica is ready, and cannot be removed; the
 * priority-class rule with "no replica ready" as suspended. */
static void check_serving_update(const object_meta_t *om, const object_meta_t *m, bool old_idle,
                                 diags_t *d)
{
    const char *oq = validate__meta_label(om, QUEUE_NAME_LABEL);
    const char *nq = validate__meta_label(m, QUEUE_NAME_LABEL);
    const char *opc = validate__meta_label(om, PRIORITY_CLASS_LABEL);
    const char *npc = validate__meta_label(m, PRIORITY_CLASS_LABEL);

    if ((!old_idle || nq == NULL || nq[0] == '\0') && !validate__str_eq_empty(oq, nq))
        validate__err(d, LABEL_PATH(QUEUE_NAME_LABEL), MSG_IMMUTABLE);
    if (!old_idle && (opc == NULL || opc[0] == '\0') && npc != NULL && npc[0] != '\0')
        validate__err(d, LABEL_PATH(PRIORITY_CLASS_LABEL),
                      "WorkloadPriorityClass cannot be added to a non-suspended workload");
    else if ((npc == NULL || npc[0] == '\0') && opc != NULL && opc[0] != '\0')
        validate__err(d, LABEL_PATH(PRIORITY_CLASS_LABEL),
                      "WorkloadPriorityClass cannot be removed from a workload");
    validate__gated_by_update(d, om, m);
}

/* ---- a plain Pod (Kueue's pod webhook, its own rules besides jobframework's) ---------------- */

#define POD_MANAGED_LABEL    "kueue.x-k8s.io/managed"
#define POD_GROUP_NAME_LABEL "kueue.x-k8s.io/pod-group-name"
#define POD_GROUP_TOTAL_ANN  "kueue.x-k8s.io/pod-group-total-count"
#define POD_RETRIABLE_ANN    "kueue.x-k8s.io/retriable-in-group"
#define POD_GROUP_BOTH_LABEL                                                                       \
    "Required value: both the '" POD_GROUP_TOTAL_ANN "' annotation and the '" POD_GROUP_NAME_LABEL \
    "' label should be set"
#define POD_GROUP_BOTH_ANN                                                                         \
    "Required value: both the '" POD_GROUP_TOTAL_ANN "' annotation and the '" POD_GROUP_NAME_LABEL \
    "' annotation should be set"

static bool is_pod(const object_t *o)
{
    return o->u.integ.kind != NULL && strcmp(o->u.integ.kind, "Pod") == 0 &&
           o->u.integ.group != NULL && o->u.integ.group[0] == '\0';
}

/* The Pod's group name, NULL when none (empty is none): the annotation of that name, else the
 * label (Kueue's GetPodGroupName with WorkloadIdentifierAnnotations, beta and on). */
static const char *pod_group(const object_meta_t *m)
{
    const char *g = validate__meta_annotation(m, POD_GROUP_NAME_LABEL);
    if (g == NULL || g[0] == '\0')
        g = validate__meta_label(m, POD_GROUP_NAME_LABEL);
    return g != NULL && g[0] != '\0' ? g : NULL;
}

/* Does the group name come from the annotation (then errors name it there)? */
static bool pod_group_by_annotation(const object_meta_t *m)
{
    const char *g = validate__meta_annotation(m, POD_GROUP_NAME_LABEL);
    return g != NULL && g[0] != '\0';
}

/* The Pod is unretriable in its group (retriable-in-group "false"). */
static bool pod_unretriable(const object_meta_t *m)
{
    const char *v = validate__meta_annotation(m, POD_RETRIABLE_ANN);
    return v != NULL && strcmp(v, "false") == 0;
}

/* validateManagedLabel, validatePodGroupMetadata and validatePrebuiltWorkloadName, on create
 * and update. */
static void check_pod(const object_meta_t *m, diags_t *d)
{
    const char *managed = validate__meta_label(m, POD_MANAGED_LABEL);
    const char *group = pod_group(m);
    bool by_ann = pod_group_by_annotation(m);
    const char *gpath = by_ann ? ANN_PATH(POD_GROUP_NAME_LABEL) : LABEL_PATH(POD_GROUP_NAME_LABEL);
    const char *total = validate__meta_annotation(m, POD_GROUP_TOTAL_ANN);
    const char *prebuilt, *ppath;
    char msg[512];
    int64_t n;

    if (managed != NULL && strcmp(managed, "true") != 0)
        validate__err(d, LABEL_PATH(POD_MANAGED_LABEL),
                      "Forbidden: managed label value can only be 'true'");
    /* The prebuilt Workload of a Pod of a group is the group's (annotation before label). */
    prebuilt = validate__meta_annotation(m, PREBUILT_WORKLOAD_LABEL);
    ppath = ANN_PATH(PREBUILT_WORKLOAD_LABEL);
    if (prebuilt == NULL || prebuilt[0] == '\0') {
        prebuilt = validate__meta_label(m, PREBUILT_WORKLOAD_LABEL);
        ppath = LABEL_PATH(PREBUILT_WORKLOAD_LABEL);
    }
    if (group != NULL && prebuilt != NULL && prebuilt[0] != '\0' && strcmp(prebuilt, group) != 0)
        validate__err(d, ppath, "prebuilt workload and pod group should be equal");
    if (group == NULL) {
        if (total != NULL)
            validate__err(d, gpath, POD_GROUP_BOTH_LABEL);
        return;
    }
    check_crd_name_label(d, gpath, group);
    if (total == NULL) {
        if (by_ann)
            validate__err(d, ANN_PATH(POD_GROUP_TOTAL_ANN), POD_GROUP_BOTH_ANN);
        else
            validate__err(d, ANN_PATH(POD_GROUP_TOTAL_ANN), POD_GROUP_BOTH_LABEL);
        return;
    }
    /* The group's total count: strconv.Atoi, then at least 1. */
    if (!go_atoi(total, &n, msg, sizeof(msg)))
        validate__err(d, ANN_PATH(POD_GROUP_TOTAL_ANN), "%s", msg);
    else if (n < 1)
        validate__err(d, ANN_PATH(POD_GROUP_TOTAL_ANN),
                      "incorrect annotation value '" POD_GROUP_TOTAL_ANN
                      "=%s': group total count should be greater than zero",
                      total);
}

/* The group name cannot change once set; an unretriable Pod of a group stays so. */
static void check_pod_update(const object_meta_t *om, const object_meta_t *m, diags_t *d)
{
    const char *og = pod_group(om);

    if (og != NULL && !validate__str_eq_empty(og, pod_group(m)))
        validate__err(d,
                      pod_group_by_annotation(m) ? ANN_PATH(POD_GROUP_NAME_LABEL)
                                                 : LABEL_PATH(POD_GROUP_NAME_LABEL),
                      MSG_IMMUTABLE);
    if (pod_group(m) != NULL && pod_unretriable(om) && !pod_unretriable(m))
        validate__err(d, ANN_PATH(POD_RETRIABLE_ANN),
                      "Forbidden: unretriable pod group can't be converted to retriable");
}

/* A managed (queue-named) serving owner's shape on update, as Kueue's webhooks keep it (its
 * Workloads' pod sets are never recomputed): a LeaderWorkerSet's group size
 * (LWSImmutableGroupSize, beta and on) and its leader and worker pod-spec shapes; a
 * StatefulSet's pod-spec shape and its replicas, which may only go to 0 or come from 0 -- and
 * not from 0 while Pods of the scale-down remain (status.replicas), nor while its Workload from
 * before exists and is not on hold (`env`, when it can tell). Kueue names each changed
 * field below the template's spec; sluice compares the shape as a whole (the role hash) and
 * names the template's spec (the template itself when one is added or removed). */
static void check_serving_shape_update(const integration_t *old, const integration_t *it, bool lws,
                                       const validate_env_t *env, diags_t *d)
{
    static const char *const lws_paths[2] = {"spec.leaderWorkerTemplate.leaderTemplate",
                                             "spec.leaderWorkerTemplate.workerTemplate"};
    const char *q = validate__meta_label(&it->meta, QUEUE_NAME_LABEL);
    char p[128];

    if (q == NULL || q[0] == '\0')
        return;
    if (lws && old->group_size != it->group_size)
        validate__err(d, "spec.leaderWorkerTemplate.size", MSG_IMMUTABLE);
    if (!lws && old->group_size != 0 && it->group_size != 0 && old->group_size != it->group_size)
        validate__err(d, "spec.replicas", MSG_IMMUTABLE);
    if (!lws && old->group_size == 0 && it->group_size > 0 && it->status_replicas > 0)
        validate__err(d, "spec.replicas", "Forbidden: scaling down is still in progress");
    else if (!lws && old->group_size == 0 && it->group_size > 0 && env != NULL &&
             env->serving_workload_left != NULL && old->meta.name != NULL &&
             env->serving_workload_left(env->ctx, old->meta.namespace, old->meta.name,
                                        old->meta.uid))
        validate__err(d, "spec.replicas",
                      "Forbidden: workload from previous scale-down is still being deleted");
    for (int i = lws ? 0 : 1; i < 2; i++) {
        const char *a = old->template_shapes[i], *b = it->template_shapes[i];
        if (strcmp(a, b) == 0)
            continue;
        snprintf(p, sizeof(p), "%s%s", lws ? lws_paths[i] : "spec.template",
                 a[0] == '\0' || b[0] == '\0' ? "" : ".spec");
        validate__err(d, p, MSG_IMMUTABLE);
    }
}

static bool is_kind(const object_t *o, const char *kind)
{
    return o->u.integ.kind != NULL && strcmp(o->u.integ.kind, kind) == 0;
}

void validate__integration(const object_t *o, diags_t *d)
{
    char gvk[300];

    if (o->u.integ.serving)
        check_serving(&o->u.integ.meta, gvk_of(o, gvk, sizeof(gvk)), d);
    else
        check_common(&o->u.integ.meta, gvk_of(o, gvk, sizeof(gvk)), d);
    if (is_pod(o))
        check_pod(&o->u.integ.meta, d);
}

void validate__integration_update(const object_t *old, const object_t *o, const validate_env_t *env,
                                  diags_t *d)
{
    validate__integration(o, d);
    if (is_pod(o))
        check_pod_update(&old->u.integ.meta, &o->u.integ.meta, d);
    if (is_kind(o, "LeaderWorkerSet") && is_kind(old, "LeaderWorkerSet"))
        check_serving_shape_update(&old->u.integ, &o->u.integ, true, env, d);
    if (is_kind(o, "StatefulSet") && is_kind(old, "StatefulSet"))
        check_serving_shape_update(&old->u.integ, &o->u.integ, false, env, d);
    if (o->u.integ.serving)
        check_serving_update(&old->u.integ.meta, &o->u.integ.meta, old->u.integ.suspended, d);
    else
        check_common_update(&old->u.integ.meta, &o->u.integ.meta, old->u.integ.suspended,
                            o->u.integ.suspended, env, d);
}
