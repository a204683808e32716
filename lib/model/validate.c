/* validate -- Kueue's validation rules (CRD CEL rules and webhook rules) over typed objects. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "model/validate.h"

#include "model/tasreq.h"
#include "model/validate_int.h"

#include <stdlib.h>
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

/* ---- pod-template settings ----------------------------------------------------------------- */

/* The job kinds whose Kueue webhook checks podset groups (ValidatePodSetGroupingTopology). */
static const char *const group_kinds[] = {"JobSet",     "LeaderWorkerSet", "MPIJob",
                                          "RayCluster", "RayJob",          NULL};

/* Kueue's TAS annotation rules: a Job's (ValidateTASPodSetRequest), and the podset groups of a
 * Workload's or another job kind's pod sets (ValidatePodSetGroupingTopology; the engine places a
 * group's leader and workers together, lib/sched/tas.c). Where Kueue's webhook does not check
 * groups (a Workload, the other kinds) a broken group is a warning saying what the engine does
 * with it; for the kinds it checks, an error. */
static void check_pod_templates(const object_t *obj, diags_t *d)
{
    const workload_t *wl = NULL;
    bool warn = true;
    tasreq_podset_t *ps;
    char(*paths)[VPATH];

    if (obj->kind == KIND_JOB) {
        const job_t *j = &obj->u.job;
        int32_t count =
            j->has_completions && j->completions < j->parallelism ? j->completions : j->parallelism;
        tasreq_validate(&j->template_annotations, "spec.template.metadata.annotations", count, d);
        return;
    }
    if (obj->kind == KIND_WORKLOAD)
        wl = &obj->u.wl;
    else if (obj->kind == KIND_INTEGRATION && obj->u.integ.built)
        wl = &obj->u.integ.wl;
    if (wl == NULL || wl->npod_sets == 0)
        return;
    for (size_t k = 0; obj->kind == KIND_INTEGRATION && group_kinds[k] != NULL; k++)
        if (obj->u.integ.kind != NULL && strcmp(obj->u.integ.kind, group_kinds[k]) == 0)
            warn = false;
    ps = calloc(wl->npod_sets, sizeof(*ps));
    paths = calloc(wl->npod_sets, sizeof(*paths));
    if (ps == NULL || paths == NULL) {
        d->oom = true;
        goto out;
    }
    for (size_t i = 0; i < wl->npod_sets; i++) {
        const pod_set_t *p = &wl->pod_sets[i];
        ps[i].name = p->name ? p->name : "main";
        ps[i].ann = &p->template_annotations;
        ps[i].count = p->count;
        if (obj->kind == KIND_WORKLOAD) {
            validate__pathf(paths[i], "spec.podSets[%zu].template.metadata.annotations", i);
            ps[i].path = paths[i];
        }
        /* the slice layers the engine reads from any pod template: Kueue's rules, warned */
        if (obj->kind == KIND_WORKLOAD)
            tasreq_validate_layers(ps[i].ann, paths[i], p->count, true, d);
        else if (kv_list_get(ps[i].ann, TASREQ_CONSTRAINTS) != NULL) {
            char at[VPATH];
            validate__pathf(at, "pod set %s: template.metadata.annotations", ps[i].name);
            tasreq_validate_layers(ps[i].ann, at, p->count, true, d);
        }
    }
    tasreq_validate_groups(ps, wl->npod_sets, warn, d);
out:
    free(ps);
    free(paths);
}

/* ---- entry points ------------------------------------------------------------------------ */

err_t validate_no_effect(const object_t *obj, diags_t *d)
{
    check_pod_templates(obj, d);
    return d->oom ? ERR_NOMEM : ERR_OK;
}

err_t validate_object(const object_t *obj, diags_t *d)
{
    check_pod_templates(obj, d);
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
