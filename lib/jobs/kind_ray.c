/* kind_ray -- RayJob and RayCluster (ray.io/v1) as Kueue's ray integrations admit them. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "jobs/kind_ray.h"

#include "jobs/framework_int.h"
#include "jobs/objpath.h"
#include "model/quantity.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

/*
 * A RayCluster is a head pod and worker groups; a RayJob carries a RayCluster spec in
 * spec.rayClusterSpec, from which KubeRay creates the cluster once the RayJob runs, plus, in its
 * default submission mode, a Kubernetes Job that submits the Ray job. Kueue reads them so:
 *
 *   pod set      template                                      count
 *   head         headGroupSpec.template (+ sidecars, below)    1
 *   <group>      workerGroupSpecs[i].template                  replicas (nil: 1) x numOfHosts
 *   submitter    RayJob spec.submitterPodTemplate (K8sJobMode) 1
 *
 * in this order; a worker group's pod set is its groupName lower-cased. Kueue's webhooks refuse
 * a managed Ray object with more pod sets than a Workload holds (JOBS_PODSETS_MAX) or a worker
 * group called "head".
 *
 * Autoscaling: Kueue counts `replicas`, never minReplicas or maxReplicas. Quota is reserved for
 * the size the cluster has when admitted, and "the cluster should do its best to use them": the
 * webhooks refuse enableInTreeAutoscaling on a managed object unless it is an elastic job
 * (feature gate ElasticJobsViaWorkloadSlices and the kueue.x-k8s.io/elastic-job annotation),
 * where each scale-up becomes a new Workload slice. sluice has no workload slices, so its
 * webhook rules (kindobj.c) refuse autoscaling as Kueue does without them; an object admitted
 * anyway (webhook off) is counted at `replicas`, like Kueue outside slicing.
 *
 * What KubeRay adds to pods at creation, which the spec does not show but quota must count, is
 * added to the Workload's copy of the head template by podset_template(), as Kueue does:
 *  - in-tree autoscaling: KubeRay's "autoscaler" sidecar, with autoscalerOptions.resources or
 *    KubeRay's default (500m CPU, 512Mi, requests = limits);
 *  - GCS fault tolerance (annotation ray.io/ft-enabled=true, or gcsFaultToleranceOptions):
 *    the Redis cleanup Job KubeRay runs on deletion, counted as at least 200m CPU and 256Mi on the
 *    head's Ray container (the first), keeping the larger of each;
 *  - a RayJob in SidecarMode: the "ray-job-submitter" container KubeRay puts into the head pod,
 *    with KubeRay's default submitter resources (requests 500m / 200Mi, limits 1 / 1Gi).
 * A RayJob in K8sJobMode without submitterPodTemplate gets KubeRay's default submitter pod
 * (that container, the head's first image, restartPolicy Never). Kueue writes that template into
 * spec.submitterPodTemplate when it starts the RayJob, so that the submitter's pod set has a
 * template to take the flavor's node selector: that write is the kind's prepare(), which the
 * framework applies to its own copy before it reads the pod sets (jobs_workload_build,
 * jobs_start, jobs_stop, jobs_digest); pod_sets() itself never writes and, on an unprepared
 * RayJob, lends the head's template to the submitter pod set.
 *
 * Finished: a RayJob when status.jobDeploymentStatus is Complete or Failed, successfully when
 * status.jobStatus is SUCCEEDED, with status.message; a RayCluster never finishes. Active: a
 * RayJob unless its deployment status is New ("") or Suspended; a RayCluster when status.state
 * is "ready". Pods ready: the (RayJob's) cluster state is "ready".
 *
 * Skipped: a RayJob with spec.clusterSelector runs on an existing cluster and is not Kueue's; a
 * RayCluster whose controller is a RayJob is that RayJob's, admitted with it.
 */

#define SUBMITTER_CONTAINER  "ray-job-submitter"
#define AUTOSCALER_CONTAINER "autoscaler"
#define FT_ANNOTATION        "ray.io/ft-enabled"

/* ---- reading the spec ---------------------------------------------------------------------- */

static bool is_rayjob(const json_t *obj)
{
    const char *kind = json_string_value(JOBS_AT(obj, "kind"));
    if (kind != NULL)
        return strcmp(kind, "RayJob") == 0;
    /* No kind (a template built in a test): a RayJob nests its cluster spec. */
    return JOBS_AT(obj, "spec", "rayClusterSpec") != NULL;
}

/* The RayClusterSpec of `obj`, and the path to it for messages. */
static json_t *cluster_spec(const json_t *obj, bool rayjob, const char **path)
{
    *path = rayjob ? "spec.rayClusterSpec" : "spec";
    return rayjob ? JOBS_AT(obj, "spec", "rayClusterSpec") : JOBS_AT(obj, "spec");
}

/* spec.submissionMode, defaulted as the CRD does. */
static const char *submission_mode(const json_t *obj)
{
    const char *mode = json_string_value(JOBS_AT(obj, "spec", "submissionMode"));
    return mode != NULL && mode[0] != '\0' ? mode : "K8sJobMode";
}

/* Kueue's effectiveWorkerCount: replicas (nil: 1) times numOfHosts when above 1. */
static err_t worker_count(const json_t *wg, int32_t *out)
{
    const json_t *r = json_object_get(wg, "replicas"), *h = json_object_get(wg, "numOfHosts");
    int32_t replicas = jobs__int32(r, INT32_MIN), hosts = jobs__int32(h, INT32_MIN);
    if ((r != NULL && replicas == INT32_MIN) || (h != NULL && hosts == INT32_MIN))
        return ERR_INVALID;
    if (r == NULL)
        replicas = 1;
    if (h == NULL)
        hosts = 1;
    if (replicas < 0)
        return ERR_INVALID;
    if (hosts > 1) {
        int64_t c = (int64_t)replicas * hosts;
        if (c > INT32_MAX)
            return ERR_OVERFLOW;
        replicas = (int32_t)c;
    }
    *out = replicas;
    return ERR_OK;
}

/* KubeRay's default submitter container resources (common/job.go). */
static json_t *submitter_resources(void)
{
    return json_pack("{s:{s:s,s:s},s:{s:s,s:s}}", "limits", "cpu", "1", "memory", "1Gi", "requests",
                     "cpu", "500m", "memory", "200Mi");
}

/* KubeRay's default submitter pod template: one container with the head's first image. */
static json_t *default_submitter_template(const json_t *cspec)
{
    const char *image = json_string_value(json_object_get(
        json_array_get(JOBS_AT(cspec, "headGroupSpec", "template", "spec", "containers"), 0),
        "image"));
    json_t *res = submitter_resources();
    if (res == NULL)
        return NULL;
    json_t *c = json_pack("{s:s,s:s,s:o}", "name", SUBMITTER_CONTAINER, "image",
                          image != NULL ? image : "", "resources", res);
    if (c == NULL)
        return NULL; /* json_pack's "o" consumed res */
    return json_pack("{s:{},s:{s:[o],s:s}}", "metadata", "spec", "containers", c, "restartPolicy",
                     "Never");
}

/* A RayJob in K8sJobMode without spec.submitterPodTemplate gets KubeRay's default there. */
static err_t rayjob_prepare(json_t *obj, err_msg_t *msg)
{
    const char *path;
    json_t *cspec = cluster_spec(obj, true, &path);
    if (!is_rayjob(obj) || strcmp(submission_mode(obj), "K8sJobMode") != 0 ||
        !json_is_object(cspec) || JOBS_AT(obj, "spec", "submitterPodTemplate") != NULL)
        return ERR_OK;
    json_t *tmpl = default_submitter_template(cspec);
    if (tmpl == NULL || json_object_set_new(JOBS_AT(obj, "spec"), "submitterPodTemplate", tmpl))
        return err_set(msg, ERR_NOMEM, "out of memory");
    return ERR_OK;
}

static err_t too_many(const char *path, size_t n, err_msg_t *msg)
{
    return err_set(msg, ERR_INVALID,
                   "%s.workerGroupSpecs: Too many: %zu: must have at most %d items", path, n,
                   JOBS_PODSETS_MAX);
}

static err_t ray_pod_sets(json_t *obj, jobs_podset_t *out, size_t *n, err_msg_t *msg)
{
    bool rayjob = is_rayjob(obj);
    const char *path;
    json_t *cspec = cluster_spec(obj, rayjob, &path);
    if (!json_is_object(cspec))
        return err_set(msg, ERR_INVALID, "%s: Required value", path);

    json_t *head = JOBS_AT(cspec, "headGroupSpec", "template");
    if (!json_is_object(head))
        return err_set(msg, ERR_INVALID, "%s.headGroupSpec.template: Required value", path);
    json_t *groups = json_object_get(cspec, "workerGroupSpecs");
    if (groups != NULL && !json_is_array(groups))
        return err_set(msg, ERR_INVALID, "%s.workerGroupSpecs: must be of type array", path);
    bool submitter = rayjob && strcmp(submission_mode(obj), "K8sJobMode") == 0;
    size_t total = 1 + json_array_size(groups) + (submitter ? 1 : 0);
    if (total > JOBS_PODSETS_MAX)
        return too_many(path, total, msg);

    jobs_podset_t sets[JOBS_PODSETS_MAX];
    memset(sets, 0, sizeof(sets));
    size_t k = 0;
    snprintf(sets[k].name, sizeof(sets[k].name), "%s", JOBS_RAY_HEAD);
    snprintf(sets[k].path, sizeof(sets[k].path), "%s.headGroupSpec.template", path);
    sets[k].tmpl = head;
    sets[k].count = 1;
    k++;

    size_t i;
    json_t *wg;
    json_array_foreach(groups, i, wg)
    {
        /* Kueue's NewPodSetReference: the group name lower-cased. */
        char field[JOBS_PATH_MAX];
        snprintf(field, sizeof(field), "%s.workerGroupSpecs[%zu].groupName", path, i);
        err_t e = jobs__podset_name(&sets[k], json_string_value(json_object_get(wg, "groupName")),
                                    field, msg);
        if (e != ERR_OK)
            return e;
        snprintf(sets[k].path, sizeof(sets[k].path), "%s.workerGroupSpecs[%zu].template", path, i);
        sets[k].tmpl = json_object_get(wg, "template");
        if (!json_is_object(sets[k].tmpl))
            return err_set(msg, ERR_INVALID, "%s.workerGroupSpecs[%zu].template: Required value",
                           path, i);
        e = worker_count(wg, &sets[k].count);
        if (e != ERR_OK)
            return err_set(msg, e,
                           "%s.workerGroupSpecs[%zu]: replicas and numOfHosts must be "
                           "non-negative integers whose product fits int32",
                           path, i);
        k++;
    }

    if (submitter) {
        /* Until prepare() writes KubeRay's default submitter, the head's template stands in
         * (one pod either way): the framework reads a prepared copy. */
        json_t *tmpl = JOBS_AT(obj, "spec", "submitterPodTemplate");
        if (tmpl == NULL)
            tmpl = head;
        if (!json_is_object(tmpl))
            return err_set(msg, ERR_INVALID, "spec.submitterPodTemplate: must be of type object");
        snprintf(sets[k].name, sizeof(sets[k].name), "%s", JOBS_RAY_SUBMITTER);
        snprintf(sets[k].path, sizeof(sets[k].path), "spec.submitterPodTemplate");
        sets[k].tmpl = tmpl;
        sets[k].count = 1;
        k++;
    }

    memcpy(out, sets, k * sizeof(sets[0]));
    *n = k;
    return ERR_OK;
}

/* ---- the Workload's copy of the head template ---------------------------------------------- */

/* Append container `name` with `resources` (consumed) to tmpl.spec.containers. */
static err_t add_container(json_t *tmpl, const char *name, json_t *resources)
{
    json_t *spec = objpath_ensure(tmpl, "spec", (char *)NULL);
    json_t *containers = json_object_get(spec, "containers");
    if (spec == NULL || resources == NULL) {
        json_decref(resources);
        return spec == NULL && resources != NULL ? ERR_INVALID : ERR_NOMEM;
    }
    if (containers == NULL) {
        containers = json_array();
        if (json_object_set_new(spec, "containers", containers)) {
            json_decref(resources);
            return ERR_NOMEM;
        }
    } else if (!json_is_array(containers)) {
        json_decref(resources);
        return ERR_INVALID;
    }
    json_t *c = json_pack("{s:s,s:o}", "name", name, "resources", resources);
    if (c == NULL || json_array_append_new(containers, c))
        return ERR_NOMEM;
    return ERR_OK;
}

/* requests[key] = max(requests[key], want), as Kueue's MergeResourceListKeepMax. */
static err_t keep_max(json_t *requests, const char *key, const char *want, err_msg_t *msg)
{
    quantity_t w, have;
    err_t e = quantity_parse(want, strlen(want), &w, msg);
    if (e != ERR_OK)
        return e;
    const char *cur = json_string_value(json_object_get(requests, key));
    if (cur != NULL && quantity_parse(cur, strlen(cur), &have, NULL) == ERR_OK &&
        quantity_cmp(have, w) >= 0)
        return ERR_OK;
    return json_object_set_new(requests, key, json_string(want)) ? ERR_NOMEM : ERR_OK;
}

static bool gcs_ft_enabled(const json_t *obj, const json_t *cspec)
{
    const char *v = objpath_annotation(obj, FT_ANNOTATION);
    if (v != NULL && strlen(v) == 4 && strncasecmp(v, "true", 4) == 0)
        return true;
    return json_object_get(cspec, "gcsFaultToleranceOptions") != NULL;
}

static err_t ray_podset_template(const json_t *obj, size_t i, json_t *tmpl, err_msg_t *msg)
{
    if (i != 0)
        return ERR_OK; /* only the head pod gets what KubeRay adds */
    bool rayjob = is_rayjob(obj);
    const char *path;
    json_t *cspec = cluster_spec(obj, rayjob, &path);
    err_t e;

    if (gcs_ft_enabled(obj, cspec)) {
        json_t *ray = json_array_get(JOBS_AT(tmpl, "spec", "containers"), 0);
        if (!json_is_object(ray))
            return err_set(msg, ERR_INVALID,
                           "cannot account for Redis cleanup resources: head pod "
                           "template must include the Ray container");
        json_t *requests = objpath_ensure(ray, "resources", "requests", (char *)NULL);
        if (requests == NULL)
            return err_set(msg, ERR_INVALID,
                           "%s.headGroupSpec.template.spec.containers[0]."
                           "resources.requests: must be of type object",
                           path);
        if ((e = keep_max(requests, "cpu", "200m", msg)) != ERR_OK ||
            (e = keep_max(requests, "memory", "256Mi", msg)) != ERR_OK)
            return e == ERR_NOMEM ? err_set(msg, e, "out of memory") : e;
    }
    if (json_is_true(json_object_get(cspec, "enableInTreeAutoscaling"))) {
        json_t *res = JOBS_AT(cspec, "autoscalerOptions", "resources");
        res = res != NULL
                  ? json_deep_copy(res)
                  : json_pack("{s:{s:s,s:s},s:{s:s,s:s}}", "requests", "cpu", "500m", "memory",
                              "512Mi", "limits", "cpu", "500m", "memory", "512Mi");
        if ((e = add_container(tmpl, AUTOSCALER_CONTAINER, res)) != ERR_OK)
            return err_set(msg, e, "head template: cannot add the autoscaler sidecar");
    }
    if (rayjob && strcmp(submission_mode(obj), "SidecarMode") == 0) {
        if ((e = add_container(tmpl, SUBMITTER_CONTAINER, submitter_resources())) != ERR_OK)
            return err_set(msg, e, "head template: cannot add the submitter sidecar");
    }
    return ERR_OK;
}

/* ---- state ----------------------------------------------------------------------------------- */

static bool ray_suspended(const json_t *obj)
{
    return json_is_true(JOBS_AT(obj, "spec", "suspend"));
}

static err_t ray_set_suspended(json_t *obj, bool suspend, err_msg_t *msg)
{
    json_t *spec = objpath_ensure(obj, "spec", (char *)NULL);
    if (spec == NULL || json_object_set_new(spec, "suspend", json_boolean(suspend)))
        return err_set(msg, spec == NULL ? ERR_INVALID : ERR_NOMEM, "spec.suspend: cannot set");
    return ERR_OK;
}

static bool str_is(const char *s, const char *want)
{
    return s != NULL && strcmp(s, want) == 0;
}

static jobs_phase_t rayjob_phase(const json_t *obj, const char **message)
{
    const char *deploy = json_string_value(JOBS_AT(obj, "status", "jobDeploymentStatus"));
    if (!str_is(deploy, "Complete") && !str_is(deploy, "Failed"))
        return JOBS_RUNNING;
    if (message != NULL)
        *message = json_string_value(JOBS_AT(obj, "status", "message"));
    return str_is(json_string_value(JOBS_AT(obj, "status", "jobStatus")), "SUCCEEDED")
               ? JOBS_SUCCEEDED
               : JOBS_FAILED;
}

static jobs_phase_t raycluster_phase(const json_t *obj, const char **message)
{
    (void)obj;
    (void)message;
    return JOBS_RUNNING;
}

static bool rayjob_active(const json_t *obj)
{
    const char *deploy = json_string_value(JOBS_AT(obj, "status", "jobDeploymentStatus"));
    return deploy != NULL && deploy[0] != '\0' && strcmp(deploy, "Suspended") != 0;
}

static bool raycluster_active(const json_t *obj)
{
    return str_is(json_string_value(JOBS_AT(obj, "status", "state")), "ready");
}

static bool rayjob_pods_ready(const json_t *obj)
{
    return str_is(json_string_value(JOBS_AT(obj, "status", "rayClusterStatus", "state")), "ready");
}

static bool rayjob_skip(const json_t *obj)
{
    return json_object_size(JOBS_AT(obj, "spec", "clusterSelector")) > 0;
}

/* A RayCluster whose controller owner is a RayJob. */
static bool raycluster_skip(const json_t *obj)
{
    size_t i;
    json_t *ref;
    json_array_foreach(JOBS_AT(obj, "metadata", "ownerReferences"), i, ref)
    {
        const char *api = json_string_value(json_object_get(ref, "apiVersion"));
        if (json_is_true(json_object_get(ref, "controller")) &&
            str_is(json_string_value(json_object_get(ref, "kind")), "RayJob") && api != NULL &&
            strncmp(api, "ray.io/", 7) == 0)
            return true;
    }
    return false;
}

const jobs_kind_t jobs_kind_rayjob = {
    .framework = "ray.io/rayjob",
    .group = "ray.io",
    .version = "v1",
    .kind = "RayJob",
    .resource = "rayjobs",
    .pod_sets = ray_pod_sets,
    .suspended = ray_suspended,
    .set_suspended = ray_set_suspended,
    .set_count = NULL, /* Kueue admits Ray objects whole */
    .phase = rayjob_phase,
    .active = rayjob_active,
    .pods_ready = rayjob_pods_ready,
    .skip = rayjob_skip,
    .podset_template = ray_podset_template,
    .prepare = rayjob_prepare,
};

const jobs_kind_t jobs_kind_raycluster = {
    .framework = "ray.io/raycluster",
    .group = "ray.io",
    .version = "v1",
    .kind = "RayCluster",
    .resource = "rayclusters",
    .pod_sets = ray_pod_sets,
    .suspended = ray_suspended,
    .set_suspended = ray_set_suspended,
    .set_count = NULL,
    .phase = raycluster_phase,
    .active = raycluster_active,
    .pods_ready = raycluster_active, /* Kueue: state "ready" for both */
    .skip = raycluster_skip,
    .podset_template = ray_podset_template,
};
