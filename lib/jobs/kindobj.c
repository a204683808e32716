/* kindobj -- an object of a job integration kind as a typed object (decode, Workload, rules). */
/* SPDX-License-Identifier: Apache-2.0 */
#include "jobs/kindobj.h"

#include "jobs/kind_serving.h"
#include "jobs/podgroup.h"
#include "util/err.h"
#include "util/jcopy.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define QUEUE_NAME_LABEL "kueue.x-k8s.io/queue-name"
#define ELASTIC_JOB_ANN  "kueue.x-k8s.io/elastic-job"
#define RAY_HEAD_PODSET  "head"

const jobs_kind_t *kindobj_kind(const json_t *root)
{
    const json_t *av = json_is_object(root) ? json_object_get(root, "apiVersion") : NULL;
    const json_t *kv = json_is_object(root) ? json_object_get(root, "kind") : NULL;
    const jobs_kind_t *k;

    if (!json_is_string(av) || !json_is_string(kv))
        return NULL;
    k = jobs_kind_find(json_string_value(av), json_string_value(kv));
    if (k == NULL || (strcmp(k->group, "batch") == 0 && strcmp(k->kind, "Job") == 0))
        return NULL;
    return k;
}

/* ---- Kueue's webhook rules of the Ray kinds ------------------------------------------------ */

static bool has_queue_name(const object_t *o)
{
    const char *q = kv_list_get(&o->u.integ.meta.labels, QUEUE_NAME_LABEL);
    return q != NULL && q[0] != '\0';
}

static bool elastic(const object_t *o)
{
    const char *v = kv_list_get(&o->u.integ.meta.annotations, ELASTIC_JOB_ANN);
    return v != NULL && strcmp(v, "true") == 0;
}

/*
 * raycluster.ValidateCreate over a RayClusterSpec at `path` ("spec" for a RayCluster,
 * "spec.rayClusterSpec" for a RayJob). A Workload holds at most JOBS_PODSETS_MAX pod sets: the
 * head and one per worker group. "head" is the head group's pod-set name, so no worker group may
 * take it. Autoscaling would let the cluster grow past its admitted quota; Kueue allows it only
 * for an elastic job (workload slices), with a message that differs between the two kinds.
 */
static void ray_cluster_rules(const object_t *o, const json_t *spec, const char *path,
                              bool is_cluster, diags_t *d)
{
    const json_t *auto_v = json_object_get(spec, "enableInTreeAutoscaling");
    const json_t *groups = json_object_get(spec, "workerGroupSpecs");
    char p[256];
    size_t n = json_is_array(groups) ? json_array_size(groups) : 0;

    if (json_is_true(auto_v) && !elastic(o)) {
        snprintf(p, sizeof(p), "%s.enableInTreeAutoscaling", path);
        if (is_cluster)
            diags_error(d, p,
                        "a kueue-managed RayCluster can use autoscaling only as an elastic job: "
                        "enable the ElasticJobsViaWorkloadSlices feature gate and set the "
                        "\"" ELASTIC_JOB_ANN "\": \"true\" annotation");
        else
            diags_error(d, p,
                        "a kueue managed job should only use autoscaling when workload slicing "
                        "is enabled");
    }
    if (n + 1 > JOBS_PODSETS_MAX) {
        snprintf(p, sizeof(p), "%s.workerGroupSpecs", path);
        diags_error(d, p, "Too many: %zu: must have at most %d items", n + 1, JOBS_PODSETS_MAX);
    }
    for (size_t i = 0; i < n; i++) {
        const json_t *name = json_object_get(json_array_get(groups, i), "groupName");
        if (json_is_string(name) && strcmp(json_string_value(name), RAY_HEAD_PODSET) == 0) {
            snprintf(p, sizeof(p), "%s.workerGroupSpecs[%zu].groupName", path, i);
            diags_error(d, p, "Forbidden: \"%s\" is reserved for the head group", RAY_HEAD_PODSET);
        }
    }
}

/* RayJob: Kueue runs it on a cluster of its own, created for it and deleted after it. A RayJob
 * that names an existing cluster (clusterSelector, and no rayClusterSpec) is not Kueue's. */
static void ray_job_rules(const object_t *o, const json_t *root, diags_t *d)
{
    const json_t *spec = json_object_get(root, "spec");
    const json_t *sel = json_object_get(spec, "clusterSelector");
    const json_t *cluster = json_object_get(spec, "rayClusterSpec");
    bool has_sel = json_is_object(sel) && json_object_size(sel) > 0;
    bool has_cluster = json_is_object(cluster);

    if (has_sel && has_cluster) {
        diags_error(d, "spec.clusterSelector",
                    "a kueue managed job should not use an existing cluster");
        return;
    }
    if (has_sel)
        return;
    if (!has_cluster) {
        diags_error(d, "spec.rayClusterSpec",
                    "Required value: rayClusterSpec is required for Kueue-managed jobs that don't "
                    "use clusterSelector");
        return;
    }
    if (!json_is_true(json_object_get(spec, "shutdownAfterJobFinishes")))
        diags_error(d, "spec.shutdownAfterJobFinishes",
                    "a kueue managed job should delete the cluster after finishing");
    ray_cluster_rules(o, cluster, "spec.rayClusterSpec", false, d);
}

/* LeaderWorkerSet: spec.replicas (default 1) within [0, 1000000], Kueue's bound. */
static void lws_rules(const json_t *root, diags_t *d)
{
    const json_t *r = json_object_get(json_object_get(root, "spec"), "replicas");
    json_int_t n = json_is_integer(r) ? json_integer_value(r) : 1;

    if (n < 0)
        diags_error(d, "spec.replicas", "invalid LeaderWorkerSet replicas: must be >= 0, got %lld",
                    (long long)n);
    else if (n > 1000000)
        diags_error(d, "spec.replicas",
                    "invalid LeaderWorkerSet replicas: must be <= 1000000, got %lld", (long long)n);
}

/* The shape of pod template `t`'s spec (Kueue's role hash of it, jobs_pod_role_hash(): the fields
 * ValidateImmutablePodGroupPodSpec compares) into `out` (16 bytes): "" when there is no
 * template, "?" when it cannot be computed. ERR_NOMEM only. */
static err_t template_shape(const json_t *t, char *out)
{
    char hash[JOBS_POD_ROLE_MAX + 1];
    json_t *spec_only;
    err_msg_t msg;
    err_t rc;

    out[0] = '\0';
    if (!json_is_object(t))
        return ERR_OK;
    /* The spec alone: a role-hash annotation on the template must not stand in for it. */
    spec_only = json_pack("{s:O?}", "spec", json_object_get(t, "spec"));
    if (spec_only == NULL)
        return ERR_NOMEM;
    rc = jobs_pod_role_hash(spec_only, hash, &msg);
    json_decref(spec_only);
    if (rc == ERR_NOMEM)
        return ERR_NOMEM;
    snprintf(out, 16, "%s", rc == ERR_OK ? hash : "?");
    return ERR_OK;
}

/* What the serving kinds' update rules compare (validate_update(): Kueue's
 * ValidateImmutablePodGroupPodSpec, LWSImmutableGroupSize, the StatefulSet's replica rules):
 * a LeaderWorkerSet's group size and leader / worker template shapes, a StatefulSet's
 * spec.replicas, status.replicas and template shape. ERR_NOMEM only. */
static err_t serving_shapes(const jobs_kind_t *k, object_t *o, const json_t *root)
{
    const json_t *spec = json_object_get(root, "spec");
    integration_t *it = &o->u.integ;

    if (k == &jobs_kind_leaderworkerset) {
        const json_t *lwt = json_object_get(spec, "leaderWorkerTemplate");
        const json_t *size = json_object_get(lwt, "size");
        it->group_size = json_is_integer(size) ? (int32_t)json_integer_value(size) : 1;
        if (template_shape(json_object_get(lwt, "leaderTemplate"), it->template_shapes[0]) !=
                ERR_OK ||
            template_shape(json_object_get(lwt, "workerTemplate"), it->template_shapes[1]) !=
                ERR_OK)
            return ERR_NOMEM;
    } else if (k == &jobs_kind_statefulset) {
        const json_t *r = json_object_get(spec, "replicas");
        const json_t *sr = json_object_get(json_object_get(root, "status"), "replicas");
        it->group_size = json_is_integer(r) ? (int32_t)json_integer_value(r) : 1;
        it->status_replicas = json_is_integer(sr) ? (int32_t)json_integer_value(sr) : 0;
        if (template_shape(json_object_get(spec, "template"), it->template_shapes[1]) != ERR_OK)
            return ERR_NOMEM;
    }
    return ERR_OK;
}

static void ray_rules(const jobs_kind_t *k, const object_t *o, const json_t *root, diags_t *d)
{
    if (strcmp(k->kind, "RayJob") == 0)
        ray_job_rules(o, root, d);
    else if (strcmp(k->kind, "RayCluster") == 0 && json_is_object(json_object_get(root, "spec")))
        ray_cluster_rules(o, json_object_get(root, "spec"), "spec", true, d);
}

/* The kind's own webhook rules. Kueue's Ray webhooks check an object with a queue name, or any
 * when it manages objects without one (manageJobsWithoutQueueName): for an unlabelled Ray object
 * the findings go to o->u.integ.unlabelled_rules, reported by the cross-object checks when a
 * Configuration of the same run says so. ERR_NOMEM only. */
static err_t kind_rules(const jobs_kind_t *k, object_t *o, const json_t *root, diags_t *d)
{
    if (strcmp(k->group, "leaderworkerset.x-k8s.io") == 0 &&
        strcmp(k->kind, "LeaderWorkerSet") == 0) {
        lws_rules(root, d);
    }
    if (serving_shapes(k, o, root) != ERR_OK)
        return ERR_NOMEM;
    if (strcmp(k->group, "ray.io") != 0)
        return ERR_OK;
    if (has_queue_name(o)) {
        ray_rules(k, o, root, d);
        return ERR_OK;
    }
    diags_t *later = calloc(1, sizeof(*later));
    if (later == NULL)
        return ERR_NOMEM;
    diags_init(later);
    ray_rules(k, o, root, later);
    if (later->oom || later->len == 0) {
        bool oom = later->oom;
        diags_fini(later);
        free(later);
        return oom ? ERR_NOMEM : ERR_OK;
    }
    o->u.integ.unlabelled_rules = later;
    return ERR_OK;
}

/* ---- decode --------------------------------------------------------------------------------- */

/* Is `api_version` the kind's own "group/version"? jobs_kind_find() also finds other versions. */
static bool version_is(const jobs_kind_t *k, const char *api_version)
{
    size_t glen = strlen(k->group);

    if (api_version == NULL)
        return false;
    if (glen == 0) /* the core group: "v1" */
        return strcmp(api_version, k->version) == 0;
    return strncmp(api_version, k->group, glen) == 0 && api_version[glen] == '/' &&
           strcmp(api_version + glen + 1, k->version) == 0;
}

/* An object that only has a generateName gets its name from the API server; its Workload is
 * built as for a name equal to the generateName (`sluice check` has no server). Returns a new
 * reference to `root` itself, or to a shallow copy with metadata.name set; NULL on OOM. */
static json_t *named(json_t *root)
{
    json_t *meta = json_object_get(root, "metadata");
    const json_t *name = json_object_get(meta, "name");
    const json_t *gen = json_object_get(meta, "generateName");
    json_t *copy, *mcopy;

    if ((json_is_string(name) && json_string_length(name) > 0) || !json_is_string(gen))
        return json_incref(root);
    copy = util_json_copy(root);
    mcopy = util_json_copy(meta);
    if (copy == NULL || mcopy == NULL || json_object_set(mcopy, "name", (json_t *)gen) != 0) {
        json_decref(mcopy);
        json_decref(copy);
        return NULL;
    }
    if (json_object_set_new(copy, "metadata", mcopy) != 0) { /* consumes mcopy */
        json_decref(copy);
        return NULL;
    }
    return copy;
}

/* Did the kind's rules already report something at `path` (items `from`.. of `diags`)? */
static bool reported_at(const diags_t *diags, size_t from, const char *path)
{
    for (size_t i = from; i < diags->len; i++)
        if (strcmp(diags->items[i].path, path) == 0)
            return true;
    return false;
}

/* The framework's message reads "<Kind> <name>: <path>: <message>" (or without the path); the
 * document's label already names the object, so the diagnostic gets the path and the message,
 * unless the kind's rules (items `from`.. of `diags`) said why at that path already. */
static err_t report_build_error(const jobs_kind_t *k, const object_meta_t *m, const char *text,
                                size_t from, diags_t *diags)
{
    char prefix[320], path[512];
    const char *colon;
    size_t plen;

    snprintf(prefix, sizeof(prefix), "%s %s: ", k->kind,
             m->name != NULL            ? m->name
             : m->generate_name != NULL ? m->generate_name
                                        : "");
    plen = strlen(prefix);
    if (strncmp(text, prefix, plen) == 0)
        text += plen;
    colon = strstr(text, ": ");
    if (colon != NULL && (size_t)(colon - text) < sizeof(path) &&
        strcspn(text, " ") >= (size_t)(colon - text)) {
        snprintf(path, sizeof(path), "%.*s", (int)(colon - text), text);
        if (reported_at(diags, from, path))
            return ERR_OK;
        return diags_error(diags, path, "%s", colon + 2);
    }
    return diags_error(diags, "", "%s", text);
}

/* ---- objects other kinds read (training runtimes) ------------------------------------------ */

/* The group of `api_version` ("group/version") is `group`? */
static bool group_of(const char *api_version, const char *group)
{
    size_t glen = strlen(group);

    return api_version != NULL && strncmp(api_version, group, glen) == 0 &&
           api_version[glen] == '/';
}

const jobs_dep_kind_t *kindobj_dep_kind(const json_t *root)
{
    const char *av = json_string_value(json_object_get(root, "apiVersion"));
    const char *kind = json_string_value(json_object_get(root, "kind"));
    const jobs_kind_t *k;

    for (size_t i = 0; kind != NULL && (k = jobs_kind_at(i)) != NULL; i++)
        for (size_t j = 0; j < k->ndeps; j++)
            if (strcmp(k->deps[j].kind, kind) == 0 && group_of(av, k->deps[j].group))
                return &k->deps[j];
    return NULL;
}

err_t kindobj_deps_add(kindobj_deps_t *d, json_t *root)
{
    if (d->objs == NULL && (d->objs = json_array()) == NULL)
        return ERR_NOMEM;
    return json_array_append(d->objs, root) ? ERR_NOMEM : ERR_OK;
}

/* Namespaces compare with "" and absent read as "default" (what the API server would set). */
static bool same_namespace(const char *a, const char *b)
{
    return strcmp(a != NULL && a[0] != '\0' ? a : "default",
                  b != NULL && b[0] != '\0' ? b : "default") == 0;
}

const json_t *kindobj_deps_find(void *data, const jobs_ref_t *ref)
{
    const kindobj_deps_t *d = data;
    const json_t *found = NULL, *o;
    size_t i;

    json_array_foreach(d->objs, i, o)
    {
        const json_t *md = json_object_get(o, "metadata");
        const char *name = json_string_value(json_object_get(md, "name"));
        if (kindobj_dep_kind(o) != ref->kind || name == NULL || strcmp(name, ref->name) != 0)
            continue;
        if (ref->kind->namespaced &&
            !same_namespace(json_string_value(json_object_get(md, "namespace")), ref->namespace))
            continue;
        found = o; /* the last one: a later document is a later version */
    }
    return found;
}

void kindobj_deps_fini(kindobj_deps_t *d)
{
    json_decref(d->objs);
    d->objs = NULL;
}

/* ---- decode --------------------------------------------------------------------------------- */

/* The Workload of `obj` (a named copy of root) into out->u.integ.wl and its priority class,
 * read from its resolved view for a kind with resolve(). *missing says the object it names was
 * not found (nothing built, *msg says which). */
static err_t build(const jobs_kind_t *k, json_t *obj, jobs_find_fn find, void *data, object_t *out,
                   bool *missing, err_msg_t *msg)
{
    json_t *view = NULL;
    err_t rc;

    *missing = false;
    rc = jobs_resolve(k, obj, find, data, &view, msg);
    if (rc == ERR_NOT_FOUND) {
        *missing = true;
        return ERR_OK;
    }
    if (rc == ERR_OK)
        rc = jobs_workload_build(k, view, NULL, &out->u.integ.wl, msg);
    if (rc == ERR_OK) {
        /* Borrowed from the view, copied before it goes. */
        const char *pc = jobs_priority_class(k, view);
        if (pc != NULL && pc[0] != '\0') {
            out->u.integ.priority_class_name = strdup(pc);
            if (out->u.integ.priority_class_name == NULL)
                rc = err_set(msg, ERR_NOMEM, "out of memory");
        }
    }
    json_decref(view);
    return rc;
}

err_t kindobj_decode(const jobs_kind_t *k, json_t *root, object_t *out, diags_t *diags)
{
    return kindobj_decode_with(k, root, NULL, NULL, false, out, diags);
}

err_t kindobj_decode_with(const jobs_kind_t *k, json_t *root, jobs_find_fn find, void *data,
                          bool required, object_t *out, diags_t *diags)
{
    err_msg_t msg = {{0}};
    bool missing = false;
    json_t *obj;
    size_t before;
    err_t rc;

    rc = object_decode_integration(root, k->group, k->kind, out, diags);
    if (rc != ERR_OK)
        return rc;
    out->u.integ.suspended = k->suspended(root);
    if (k->admit == JOBS_ADMIT_PODS) {
        /* A serving owner is never held itself; its webhooks call it suspended while none of
         * its replicas is ready. */
        const json_t *ready = json_object_get(json_object_get(root, "status"), "readyReplicas");
        out->u.integ.serving = true;
        out->u.integ.suspended = !json_is_integer(ready) || json_integer_value(ready) == 0;
        /* A StatefulSet is one Workload (one pod group of all its replicas); a Deployment and a
         * LeaderWorkerSet are one per replica, each with the pod sets pod_sets() reads. */
        if (k != &jobs_kind_statefulset) {
            out->u.integ.per_replica = true;
            out->u.integ.replicas = jobs_serving_workloads(k, root);
        }
    }
    if (!version_is(k, out->api_version) &&
        diags_warn(diags, "apiVersion", "%s/%s is the version sluice reads; %s is read as it",
                   k->group, k->version, out->api_version) != ERR_OK)
        goto nomem;
    before = diags->len;
    if (kind_rules(k, out, root, diags) != ERR_OK)
        goto nomem;
    /* An object Kueue leaves alone although it carries a queue name (a RayJob on an existing
     * cluster) has no Workload: built stays false, and nothing is wrong with it. A manifest is
     * read as written, before any webhook: a Pod's skip() reads the managed label Kueue's
     * webhook would add to it, so it does not apply to Pods here. */
    if (k->admit == JOBS_ADMIT_OBJECT && k->skip != NULL && k->skip(root))
        goto out;
    /* A TrainJob without a lookup (the webhook's rules): no Workload, nothing to say. */
    if (k->resolve != NULL && find == NULL)
        goto out;
    obj = named(root);
    if (obj == NULL)
        goto nomem;
    rc = build(k, obj, find, data, out, &missing, &msg);
    json_decref(obj);
    if (rc == ERR_NOMEM)
        goto nomem;
    if (missing) {
        err_t e =
            required ? diags_error(diags, "spec.runtimeRef", "%s", msg.text)
                     : diags_warn(diags, "spec.runtimeRef",
                                  "%s among the documents: its pod sets are not checked", msg.text);
        if (e != ERR_OK)
            goto nomem;
    } else if (rc == ERR_OK) {
        out->u.integ.built = true;
    } else if (report_build_error(k, &out->u.integ.meta, msg.text, before, diags) != ERR_OK)
        goto nomem;
out:
    if (diags->oom)
        goto nomem;
    return ERR_OK;
nomem:
    object_fini(out);
    return ERR_NOMEM;
}
