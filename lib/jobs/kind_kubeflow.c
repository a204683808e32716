/* kind_kubeflow -- the Kubeflow training jobs as framework entries: PyTorchJob, TFJob, XGBoostJob,
 * PaddleJob, JAXJob (kubeflow.org/v1) and MPIJob (kubeflow.org/v2beta1). */
/* SPDX-License-Identifier: Apache-2.0 */
#include "jobs/framework.h"

#include "jobs/framework_int.h"

#include <stdio.h>
#include <string.h>

/*
 * Every one of these kinds has the same shape (Kueue's kubeflowjob package and its mpijob
 * integration): a map spec.<x>ReplicaSpecs from replica type ("Master", "Worker", ...) to
 * {replicas, template}, spec.runPolicy.suspend, status.conditions of the training operator
 * (Created, Running, Restarting, Succeeded, Suspended, Failed) and status.replicaStatuses, a map
 * from replica type to {active, succeeded, failed}. Kueue admits one pod set per replica type
 * present, named by the type lower-cased, in the kind's fixed order (not the map's), of
 * `replicas` pods (default 1); no partial admission. The operator creates the pods from the
 * templates once the job is released, so a start merges the flavors into each template.
 * Kinds differ only in the map's name and the order of the types, so each entry's pod_sets is a
 * one-line wrapper over kf_pod_sets().
 */

typedef struct kf_shape_s {
    const char *specs;        /* the replica-spec map's member of spec */
    const char *const *order; /* replica types in Kueue's order, NULL-terminated */
} kf_shape_t;

static err_t kf_pod_sets(const kf_shape_t *shape, json_t *obj, jobs_podset_t *out, size_t *n,
                         err_msg_t *msg)
{
    json_t *specs = JOBS_AT(obj, "spec", shape->specs);
    size_t count = 0;

    for (size_t i = 0; shape->order[i] != NULL; i++) {
        const char *type = shape->order[i];
        json_t *rs = json_object_get(specs, type);
        jobs_podset_t *ps = &out[count];
        err_t rc;

        if (!json_is_object(rs))
            continue; /* absent or null: no pod set of that type */
        memset(ps, 0, sizeof(*ps));
        snprintf(ps->path, sizeof(ps->path), "spec.%s.%s.template", shape->specs, type);
        rc = jobs__podset_name(ps, type, ps->path, msg);
        if (rc != ERR_OK)
            return rc;
        ps->tmpl = json_object_get(rs, "template");
        if (!json_is_object(ps->tmpl))
            return err_set(msg, ERR_INVALID, "%s: Required value", ps->path);
        ps->count = jobs__int32(json_object_get(rs, "replicas"), 1);
        if (ps->count < 0)
            return err_set(msg, ERR_INVALID, "spec.%s.%s.replicas: must be non-negative",
                           shape->specs, type);
        count++;
    }
    if (count == 0)
        return err_set(msg, ERR_INVALID, "spec.%s: Required value: no replica of a known type",
                       shape->specs);
    *n = count;
    return ERR_OK;
}

static bool kf_suspended(const json_t *obj)
{
    return json_is_true(JOBS_AT(obj, "spec", "runPolicy", "suspend"));
}

static err_t kf_set_suspended(json_t *obj, bool suspend, err_msg_t *msg)
{
    return JOBS_SET_BOOL(obj, suspend, msg, "spec", "runPolicy", "suspend");
}

/* The first condition Succeeded or Failed with status True decides. */
static jobs_phase_t kf_phase(const json_t *obj, const char **message)
{
    return jobs__phase_first(JOBS_AT(obj, "status", "conditions"), "Succeeded", "Failed", message);
}

/* Some replica type has active pods. */
static bool kf_active(const json_t *obj)
{
    const char *type;
    json_t *st;

    json_object_foreach(JOBS_AT(obj, "status", "replicaStatuses"), type, st)
    {
        if (jobs__int32(json_object_get(st, "active"), 0) != 0)
            return true;
    }
    return false;
}

/* Kueue takes the operator's word: Running=True means every pod is up. */
static bool kf_pods_ready(const json_t *obj)
{
    return jobs__condition(JOBS_AT(obj, "status", "conditions"), "Running", NULL);
}

/* runPolicy.schedulingPolicy.priorityClass comes before the templates' priorityClassName. */
static const char *kf_priority_class(const json_t *obj)
{
    return json_string_value(
        JOBS_AT(obj, "spec", "runPolicy", "schedulingPolicy", "priorityClass"));
}

#define KF_ENTRY(id, fw, ver, kind_, res, specs_, ...)                                     \
    static const char *const id##_order[] = {__VA_ARGS__, NULL};                           \
    static const kf_shape_t id##_shape = {specs_, id##_order};                             \
    static err_t id##_pod_sets(json_t *obj, jobs_podset_t *out, size_t *n, err_msg_t *msg) \
    {                                                                                      \
        return kf_pod_sets(&id##_shape, obj, out, n, msg);                                 \
    }                                                                                      \
    const jobs_kind_t jobs__kind_##id = {                                                  \
        .framework = fw,                                                                   \
        .group = "kubeflow.org",                                                           \
        .version = ver,                                                                    \
        .kind = kind_,                                                                     \
        .resource = res,                                                                   \
        .pod_sets = id##_pod_sets,                                                         \
        .suspended = kf_suspended,                                                         \
        .set_suspended = kf_set_suspended,                                                 \
        .phase = kf_phase,                                                                 \
        .active = kf_active,                                                               \
        .pods_ready = kf_pods_ready,                                                       \
        .priority_class = kf_priority_class,                                               \
    }

/* Replica types and their order as Kueue's OrderedReplicaTypes() of each kind. */
KF_ENTRY(pytorchjob, "kubeflow.org/pytorchjob", "v1", "PyTorchJob", "pytorchjobs",
         "pytorchReplicaSpecs", "Master", "Worker");
KF_ENTRY(tfjob, "kubeflow.org/tfjob", "v1", "TFJob", "tfjobs", "tfReplicaSpecs", "Chief", "Master",
         "PS", "Worker", "Evaluator");
KF_ENTRY(xgboostjob, "kubeflow.org/xgboostjob", "v1", "XGBoostJob", "xgboostjobs",
         "xgbReplicaSpecs", "Master", "Worker");
KF_ENTRY(paddlejob, "kubeflow.org/paddlejob", "v1", "PaddleJob", "paddlejobs", "paddleReplicaSpecs",
         "Master", "Worker");
KF_ENTRY(jaxjob, "kubeflow.org/jaxjob", "v1", "JAXJob", "jaxjobs", "jaxReplicaSpecs", "Worker");
/* The MPI operator's v2beta1 API has the same shape under another map. */
KF_ENTRY(mpijob, "kubeflow.org/mpijob", "v2beta1", "MPIJob", "mpijobs", "mpiReplicaSpecs",
         "Launcher", "Worker");
