/* validate -- Kueue's validation rules (CRD CEL rules and webhook rules) over typed objects. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "model/validate.h"

#include "model/tasreq.h"
#include "model/validate_int.h"

#include <string.h>

/*
 * Layout: one file per kind, like the decoders (validate_queue.c, validate_workload.c,
 * validate_job.c), and validate_meta.c for the helpers and the metadata rules they share
 * (Kubernetes' label key/value and DNS-1123 rules, selectors, tolerations, admission gates). Each
 * kind lists the CRD CEL rules (x-kubernetes-validations on Kueue's v1beta2 CRDs) and then the
 * webhook rules in the order Kueue's webhook appends them, so a user sees problems in the order
 * Kueue would print them.
 *
 * Where the CRD and the webhook both reject the same thing at different paths (a borrowingLimit
 * without a cohort: CEL at "spec", the webhook at the limit itself) both are reported, as each
 * layer of a real API server would. Exact duplicates (same path and message, e.g. the preemption
 * rule, which the CRD and the webhook both state at spec.preemption) are reported once.
 */

/* ---- settings with no effect --------------------------------------------------------------- */

/* Kueue's topology-aware scheduling annotations of a pod template (constants.go) that sluice does
 * not act on: the engine places pod sets by topology (lib/sched/tas.c) but has no leader/worker
 * pod-set groups, so that one is accepted with a warning rather than silently. */
static const char *const tas_annotations[] = {
    "kueue.x-k8s.io/podset-group-name",
    NULL,
};

#define TAS_GROUPS_NO_EFFECT \
    "has no effect: topology-aware pod-set groups (podset-group-name) are not supported by sluice"

/* Warn each unsupported topology annotation of `ann`, the annotations at `path`
 * ("...metadata.annotations"); with `podset` (a kind whose templates have kind-specific paths)
 * the warning is at "spec" and names the pod set. */
static void warn_topology(diags_t *d, const char *path, const char *podset, const kv_list_t *ann)
{
    char p[VPATH];

    for (size_t i = 0; tas_annotations[i] != NULL; i++) {
        if (kv_list_get(ann, tas_annotations[i]) == NULL)
            continue;
        if (podset != NULL) {
            diags_warn(d, "spec", "pod set %s: annotation %s " TAS_GROUPS_NO_EFFECT, podset,
                       tas_annotations[i]);
            continue;
        }
        validate__pathf(p, "%s[%s]", path, tas_annotations[i]);
        diags_warn(d, p, TAS_GROUPS_NO_EFFECT);
    }
}

static void warn_no_effect(const object_t *obj, diags_t *d)
{
    char p[VPATH];

    if (obj->kind == KIND_JOB) {
        const job_t *j = &obj->u.job;
        int32_t count =
            j->has_completions && j->completions < j->parallelism ? j->completions : j->parallelism;
        tasreq_validate(&j->template_annotations, "spec.template.metadata.annotations", count, d);
        warn_topology(d, "spec.template.metadata.annotations", NULL, &j->template_annotations);
    } else if (obj->kind == KIND_WORKLOAD) {
        for (size_t i = 0; i < obj->u.wl.npod_sets; i++) {
            const pod_set_t *ps = &obj->u.wl.pod_sets[i];
            validate__pathf(p, "spec.podSets[%zu].template.metadata.annotations", i);
            warn_topology(d, p, NULL, &ps->template_annotations);
        }
    } else if (obj->kind == KIND_INTEGRATION && obj->u.integ.built) {
        for (size_t i = 0; i < obj->u.integ.wl.npod_sets; i++) {
            const pod_set_t *ps = &obj->u.integ.wl.pod_sets[i];
            warn_topology(d, NULL, ps->name ? ps->name : "main", &ps->template_annotations);
        }
    }
}

/* ---- entry points ------------------------------------------------------------------------ */

err_t validate_no_effect(const object_t *obj, diags_t *d)
{
    warn_no_effect(obj, d);
    return d->oom ? ERR_NOMEM : ERR_OK;
}

err_t validate_podset_no_effect(const char *podset, const kv_list_t *ann, diags_t *d)
{
    warn_topology(d, NULL, podset, ann);
    return d->oom ? ERR_NOMEM : ERR_OK;
}

err_t validate_object(const object_t *obj, diags_t *d)
{
    warn_no_effect(obj, d);
    switch (obj->kind) {
    case KIND_RESOURCE_FLAVOR:
        validate__flavor(&obj->u.flavor, d);
        break;
    case KIND_CLUSTER_QUEUE:
        validate__cluster_queue(&obj->u.cq, NULL, d);
        break;
    case KIND_COHORT:
        validate__cohort(&obj->u.cohort, d);
        break;
    case KIND_TOPOLOGY:
        validate__topology(&obj->u.topology, d);
        break;
    case KIND_ADMISSION_CHECK:
        validate__admission_check(&obj->u.ac, NULL, d);
        break;
    case KIND_WORKLOAD:
        validate__workload(&obj->u.wl, NULL, d);
        break;
    case KIND_JOB:
        validate__job(&obj->u.job, d);
        break;
    case KIND_INTEGRATION:
        validate__integration(obj, d);
        break;
    default:
        /* LocalQueue, WorkloadPriorityClass, PriorityClass, Namespace, Configuration: Kueue
         * has no create-time rule beyond the schema, which the decoder checks. */
        break;
    }
    /* The rules append to `d` and a failed append leaves d->oom set: one check here. */
    return d->oom ? ERR_NOMEM : ERR_OK;
}

err_t validate_update_env(const object_t *old, const object_t *obj, const validate_env_t *env,
                          diags_t *d)
{
    if (old == NULL || old->kind != obj->kind)
        return validate_object(obj, d);
    switch (obj->kind) {
    case KIND_RESOURCE_FLAVOR:
        validate__flavor_update(&old->u.flavor, &obj->u.flavor, d);
        break;
    case KIND_LOCAL_QUEUE:
        validate__local_queue_update(&old->u.lq, &obj->u.lq, d);
        break;
    case KIND_TOPOLOGY:
        validate__topology_update(&old->u.topology, &obj->u.topology, d);
        break;
    case KIND_ADMISSION_CHECK:
        validate__admission_check(&obj->u.ac, &old->u.ac, d);
        break;
    case KIND_WORKLOAD:
        validate__workload_update(&old->u.wl, &obj->u.wl, d);
        break;
    case KIND_CLUSTER_QUEUE:
        /* The concurrentAdmissionPolicy immutability rule concerns an alpha field sluice does
         * not decode; the onFlavors rule tolerates unchanged legacy values. */
        validate__cluster_queue(&obj->u.cq, &old->u.cq, d);
        break;
    case KIND_JOB:
        validate__job_update(&old->u.job, &obj->u.job, env, d);
        break;
    case KIND_INTEGRATION:
        if (old->u.integ.kind == NULL || obj->u.integ.kind == NULL ||
            strcmp(old->u.integ.kind, obj->u.integ.kind) != 0)
            return validate_object(obj, d);
        validate__integration_update(old, obj, env, d);
        break;
    default:
        /* Cohort: the create rules again. */
        return validate_object(obj, d);
    }
    return d->oom ? ERR_NOMEM : ERR_OK;
}

err_t validate_update(const object_t *old, const object_t *obj, diags_t *d)
{
    return validate_update_env(old, obj, NULL, d);
}
