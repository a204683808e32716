/* kind_trainjob -- TrainJob (trainer.kubeflow.org/v1alpha1, Kubeflow Trainer) as a framework
 * entry: pod sets from the training runtime it names, admission in its own runtimePatches. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "jobs/framework.h"

#include "jobs/framework_int.h"

#include <stdio.h>
#include <string.h>

/*
 * A TrainJob has no pod template. Trainer builds a JobSet for it from the JobSet template of
 * the runtime spec.runtimeRef names (a ClusterTrainingRuntime by default, or a TrainingRuntime
 * in the TrainJob's namespace), after
 *
 *   1. the TrainJob's spec.runtimePatches[], in order, strategic-merged into the template's
 *      spec (replicated Jobs, containers, env, volumes ... merged by name; tolerations and other
 *      lists replaced; maps merged);
 *   2. the step counts: every replicated Job runs its template's parallelism (default 1) pods;
 *      the trainer step (template label trainer.kubeflow.org/trainjob-ancestor-step: trainer)
 *      the runtime's mlPolicy.numNodes (default 1) when it has an mlPolicy; spec.trainer.numNodes
 *      overrides that -- for an MPI runtime on the replicated Job named `node` (one node fewer,
 *      at least 1, with runLauncherAsNode), else on the trainer step; parallelism and
 *      completions are then that count, and the trainer and initializer steps run 1 replica;
 *   3. spec.trainer.resourcesPerNode merged key by key into the resources of the container
 *      named `node` of the trainer step (when the runtime has an mlPolicy; with MPI's
 *      runLauncherAsNode also of the replicated Job `node`), and spec.trainer's image, command
 *      and args on that container of the trainer step.
 *
 * Kueue (pkg/controller/jobs/trainjob) reads that JobSet with the JobSet integration's rules:
 * one pod set per replicated Job. Here tj_resolve() builds it as the view's
 * spec.replicatedJobs, and tj_pod_sets() reads the view as the JobSet entry reads a JobSet.
 *
 * The pod templates are the runtime's, shared by every TrainJob that names it, so an admission
 * cannot be merged into them. Kueue's webhook adds to every TrainJob one runtimePatches[] entry
 * of its own (manager kueue.x-k8s.io/manager); a start writes into it, per replicated Job, the
 * admission's labels, annotation, node selector and tolerations and releases the TrainJob, a
 * stop empties it again and holds the TrainJob. Trainer's webhook lets runtimePatches change
 * only while the TrainJob is suspended, so a start is two writes, as in Kueue:
 *
 *   held, entry != admission --tj_start()--> held, entry = admission      (first update)
 *   held, entry = admission  --tj_start()--> released                     (second update)
 *
 * The first call leaves the TrainJob held; the caller writes it and starts it again. Trainer
 * applies the patch when it builds the JobSet, so the pods get them. As Kueue, the patch's
 * tolerations are the flavor's alone: a patch replaces the list, so the runtime's own tolerations
 * are then not in the pods.
 */

#define TJ_GROUP           "trainer.kubeflow.org"
#define TJ_MANAGER         "kueue.x-k8s.io/manager"
#define TJ_ANCESTOR        "trainer.kubeflow.org/trainjob-ancestor-step"
#define TJ_NODE            "node"
#define TJ_CLUSTER_RUNTIME "ClusterTrainingRuntime"

static const jobs_dep_kind_t tj_deps[] = {
    {TJ_GROUP, "v1alpha1", TJ_CLUSTER_RUNTIME, "clustertrainingruntimes", false},
    {TJ_GROUP, "v1alpha1", "TrainingRuntime", "trainingruntimes", true},
};

/* ---- the runtime reference ------------------------------------------------------------------ */

/* spec.runtimeRef: apiGroup and kind default as the CRD defaults them (trainer.kubeflow.org,
 * ClusterTrainingRuntime), so an object written before defaulting reads the same. */
static err_t tj_needs(const json_t *obj, jobs_ref_t *ref, err_msg_t *msg)
{
    const json_t *rr = JOBS_AT(obj, "spec", "runtimeRef");
    const json_t *g = json_object_get(rr, "apiGroup"), *k = json_object_get(rr, "kind");
    const char *name = json_string_value(json_object_get(rr, "name"));
    const char *group = json_is_string(g) ? json_string_value(g) : TJ_GROUP;
    const char *kind = json_is_string(k) ? json_string_value(k) : TJ_CLUSTER_RUNTIME;
    const char *ns = json_string_value(JOBS_AT(obj, "metadata", "namespace"));
    size_t which;

    if (name == NULL || name[0] == '\0')
        return err_set(msg, ERR_INVALID, "spec.runtimeRef.name: Required value");
    for (which = 0; which < sizeof(tj_deps) / sizeof(tj_deps[0]); which++)
        if (strcmp(group, TJ_GROUP) == 0 && strcmp(kind, tj_deps[which].kind) == 0)
            break;
    if (which == sizeof(tj_deps) / sizeof(tj_deps[0]))
        return err_set(msg, ERR_INVALID, "spec.runtimeRef: unsupported runtime: %s.%s", kind,
                       group);
    ref->kind = &tj_deps[which];
    ref->namespace = tj_deps[which].namespaced ? (ns != NULL ? ns : "") : NULL;
    ref->name = name;
    ref->what = "runtime";
    return ERR_OK;
}

/* ---- runtimePatches: a strategic merge over JSON -------------------------------------------- */

/* Does every item of non-empty array `a` carry a string "name" (a list Kubernetes merges by
 * name: replicated Jobs, containers, env, volumes, scheduling gates)? */
static bool named_items(const json_t *a)
{
    size_t i;
    json_t *v;

    if (json_array_size(a) == 0)
        return false;
    json_array_foreach(a, i, v)
    {
        if (!json_is_string(json_object_get(v, "name")))
            return false;
    }
    return true;
}

static err_t smp_merge(json_t *dst, const json_t *patch, bool append, err_msg_t *msg);

/* Merge named list `patch` into named list `dst` item by item; an item naming none of `dst` is
 * appended when `append`, else dropped (a patch of a replicated Job the runtime lacks). */
static err_t merge_named(json_t *dst, const json_t *patch, bool append, err_msg_t *msg)
{
    size_t i, j;
    json_t *pv, *dv;

    json_array_foreach(patch, i, pv)
    {
        const char *name = json_string_value(json_object_get(pv, "name"));
        json_t *match = NULL;
        json_array_foreach(dst, j, dv)
        {
            if (match == NULL && strcmp(json_string_value(json_object_get(dv, "name")), name) == 0)
                match = dv;
        }
        if (match != NULL) {
            err_t rc = smp_merge(match, pv, true, msg);
            if (rc != ERR_OK)
                return rc;
        } else if (append && json_array_append_new(dst, json_deep_copy(pv))) {
            return err_set(msg, ERR_NOMEM, "out of memory");
        }
    }
    return ERR_OK;
}

/* Strategic-merge object `patch` into object `dst` in place: a null deletes, objects merge key
 * by key, named lists merge by name (merge_named), anything else replaces. */
static err_t smp_merge(json_t *dst, const json_t *patch, bool append, err_msg_t *msg)
{
    const char *key;
    json_t *pv;

    json_object_foreach((json_t *)patch, key, pv)
    {
        json_t *dv = json_object_get(dst, key);
        err_t rc = ERR_OK;

        if (json_is_null(pv))
            json_object_del(dst, key);
        else if (json_is_object(pv) && json_is_object(dv))
            rc = smp_merge(dv, pv, true, msg);
        else if (named_items(pv) && named_items(dv))
            rc = merge_named(dv, pv, append, msg);
        else if (json_object_set_new(dst, key, json_deep_copy(pv)))
            rc = err_set(msg, ERR_NOMEM, "out of memory");
        if (rc != ERR_OK)
            return rc;
    }
    return ERR_OK;
}

/* ---- Trainer's rules ------------------------------------------------------------------------ */

/* Overlay `add`'s keys on object member `key` of `dst` (resources.requests / limits). */
static err_t overlay(json_t *dst, const char *key, const json_t *add, err_msg_t *msg)
{
    json_t *to;
    err_t rc;

    if (!json_is_object(add) || json_object_size(add) == 0)
        return ERR_OK;
    if ((rc = jobs__object_member(dst, key, &to, msg)) != ERR_OK)
        return rc;
    if (json_object_update(to, (json_t *)add))
        return err_set(msg, ERR_NOMEM, "out of memory");
    return ERR_OK;
}

/* The `node` container of replicated Job `rj`, or NULL. */
static json_t *node_container(json_t *rj)
{
    size_t i;
    json_t *c;

    json_array_foreach(JOBS_AT(rj, "template", "spec", "template", "spec", "containers"), i, c)
    {
        const char *name = json_string_value(json_object_get(c, "name"));
        if (name != NULL && strcmp(name, TJ_NODE) == 0)
            return c;
    }
    return NULL;
}

/* What the trainer step's `node` container gets from spec.trainer: image, command, args and, when
 * `resources`, resourcesPerNode merged into its resources (claims merged by name). */
static err_t node_overrides(json_t *c, const json_t *trainer, bool step, bool resources,
                            err_msg_t *msg)
{
    static const char *const keys[] = {"image", "command", "args"};
    const json_t *rpn = json_object_get(trainer, "resourcesPerNode");
    json_t *res;
    err_t rc;

    for (size_t i = 0; step && i < sizeof(keys) / sizeof(keys[0]); i++) {
        json_t *v = json_object_get(trainer, keys[i]);
        if (v != NULL && !json_is_null(v) && json_object_set(c, keys[i], v))
            return err_set(msg, ERR_NOMEM, "out of memory");
    }
    if (!resources || !json_is_object(rpn))
        return ERR_OK;
    if ((rc = jobs__object_member(c, "resources", &res, msg)) != ERR_OK)
        return rc;
    if ((rc = overlay(res, "requests", json_object_get(rpn, "requests"), msg)) != ERR_OK ||
        (rc = overlay(res, "limits", json_object_get(rpn, "limits"), msg)) != ERR_OK)
        return rc;
    if (named_items(json_object_get(rpn, "claims"))) {
        json_t *claims = json_object_get(res, "claims");
        if (named_items(claims))
            return merge_named(claims, json_object_get(rpn, "claims"), true, msg);
        if (json_object_set(res, "claims", json_object_get(rpn, "claims")))
            return err_set(msg, ERR_NOMEM, "out of memory");
    }
    return ERR_OK;
}

/* Trainer's counts and overrides on replicated Job `rj` (index `i` of runtime `rname`). */
static err_t trainer_rules(json_t *rj, size_t i, const char *rname, const json_t *ml,
                           const json_t *trainer, err_msg_t *msg)
{
    const char *name = json_string_value(json_object_get(rj, "name"));
    const char *anc = json_string_value(JOBS_AT(rj, "template", "metadata", "labels", TJ_ANCESTOR));
    const json_t *mpi = json_object_get(ml, "mpi");
    const json_t *nn = json_object_get(trainer, "numNodes");
    bool step = anc != NULL && strcmp(anc, "trainer") == 0;
    bool is_node = name != NULL && strcmp(name, TJ_NODE) == 0;
    bool launcher_as_node = json_is_true(json_object_get(mpi, "runLauncherAsNode"));
    json_t *jspec = JOBS_AT(rj, "template", "spec"), *c;
    int32_t count;

    if (!json_is_object(jspec))
        return err_set(msg, ERR_INVALID,
                       "runtime '%s': spec.template.spec.replicatedJobs[%zu].template.spec: "
                       "Required value",
                       rname, i);
    count = jobs__int32(json_object_get(jspec, "parallelism"), 1);
    if (step && json_is_object(ml))
        count = jobs__int32(json_object_get(ml, "numNodes"), 1);
    if (json_is_integer(nn) || json_is_real(nn)) {
        int32_t n = jobs__int32(nn, count);
        if (json_is_object(mpi) && is_node)
            count = launcher_as_node ? (n - 1 > 1 ? n - 1 : 1) : n;
        else if (!json_is_object(mpi) && step)
            count = n;
    }
    if (anc != NULL &&
        (step || strcmp(anc, "dataset-initializer") == 0 ||
         strcmp(anc, "model-initializer") == 0) &&
        json_object_set_new(rj, "replicas", json_integer(1)))
        return err_set(msg, ERR_NOMEM, "out of memory");
    c = node_container(rj);
    if (c != NULL && (step || (launcher_as_node && is_node))) {
        err_t rc = node_overrides(
            c, trainer, step, (step && json_is_object(ml)) || (launcher_as_node && is_node), msg);
        if (rc != ERR_OK)
            return rc == ERR_NOMEM ? rc
                                   : err_prefix(msg, rc,
                                                "runtime '%s': spec.template.spec."
                                                "replicatedJobs[%zu] container node: ",
                                                rname, i);
    }
    if (json_object_set_new(jspec, "parallelism", json_integer(count)) ||
        json_object_set_new(jspec, "completions", json_integer(count)))
        return err_set(msg, ERR_NOMEM, "out of memory");
    return ERR_OK;
}

/* ---- the view ------------------------------------------------------------------------------- */

/*
 * The view is the TrainJob with, in spec.replicatedJobs, the replicated Jobs of the JobSet
 * Trainer would build for it: apiVersion, kind, metadata and status shared with the TrainJob,
 * spec a shallow copy of its spec (so spec.suspend reads the same), replicatedJobs new.
 */
static err_t tj_resolve(const json_t *obj, const json_t *rt, json_t **view, err_msg_t *msg)
{
    const char *rname = json_string_value(JOBS_AT(rt, "metadata", "name"));
    const json_t *tspec = JOBS_AT(rt, "spec", "template", "spec");
    const json_t *ml = JOBS_AT(rt, "spec", "mlPolicy");
    const json_t *trainer = JOBS_AT(obj, "spec", "trainer");
    const json_t *ospec = json_object_get(obj, "spec");
    json_t *js = NULL, *spec = NULL, *v = NULL, *rjobs, *p, *rj;
    const char *key;
    err_t rc = ERR_OK;
    size_t i;

    if (rname == NULL)
        rname = "";
    if (json_array_size(json_object_get(tspec, "replicatedJobs")) == 0)
        return err_set(msg, ERR_INVALID,
                       "runtime '%s': spec.template.spec.replicatedJobs: Required value", rname);
    js = json_deep_copy(tspec);
    if (js == NULL)
        return err_set(msg, ERR_NOMEM, "out of memory");
    json_array_foreach(JOBS_AT(obj, "spec", "runtimePatches"), i, p)
    {
        const json_t *ps = JOBS_AT(p, "trainingRuntimeSpec", "template", "spec");
        if (rc == ERR_OK && json_is_object(ps))
            rc = smp_merge(js, ps, false, msg);
    }
    rjobs = json_object_get(js, "replicatedJobs");
    if (rc == ERR_OK && !json_is_array(rjobs))
        rc = err_set(msg, ERR_INVALID,
                     "spec.runtimePatches: runtime '%s': spec.template.spec.replicatedJobs: "
                     "must be of type array",
                     rname);
    json_array_foreach(rjobs, i, rj)
    {
        if (rc == ERR_OK && !json_is_object(rj))
            rc = err_set(msg, ERR_INVALID,
                         "runtime '%s': spec.template.spec.replicatedJobs[%zu]: must be of type "
                         "object",
                         rname, i);
        if (rc == ERR_OK)
            rc = trainer_rules(rj, i, rname, json_is_object(ml) ? ml : NULL, trainer, msg);
    }
    if (rc != ERR_OK)
        goto out;
    /* Member by member: json_copy() of jansson 2.14 drops members it fails to copy. */
    spec = json_object();
    v = json_object();
    if (spec == NULL || v == NULL)
        goto nomem;
    json_object_foreach((json_t *)ospec, key, p)
    {
        if (json_object_set(spec, key, p))
            goto nomem;
    }
    if (json_object_set(spec, "replicatedJobs", rjobs))
        goto nomem;
    json_object_foreach((json_t *)obj, key, p)
    {
        if (strcmp(key, "spec") != 0 && json_object_set(v, key, p))
            goto nomem;
    }
    if (json_object_set_new(v, "spec", spec)) {
        spec = NULL;
        goto nomem;
    }
    *view = v;
    json_decref(js);
    return ERR_OK;
nomem:
    rc = err_set(msg, ERR_NOMEM, "out of memory");
    json_decref(spec);
    json_decref(v);
out:
    json_decref(js);
    return rc;
}

/* ---- the entry ------------------------------------------------------------------------------ */

/* The view's replicated Jobs, read as the JobSet entry reads a JobSet's; the field paths name
 * the runtime's template. */
static err_t tj_pod_sets(json_t *obj, jobs_podset_t *out, size_t *n, err_msg_t *msg)
{
    json_t *rjobs = JOBS_AT(obj, "spec", "replicatedJobs");
    const char *rt = json_string_value(JOBS_AT(obj, "spec", "runtimeRef", "name"));
    char prefix[JOBS_PATH_MAX / 2];

    if (rjobs == NULL)
        return err_set(msg, ERR_INVALID,
                       "spec.runtimeRef: the pod sets come from the training runtime, not "
                       "resolved here");
    snprintf(prefix, sizeof(prefix), "runtime '%s': spec.template.spec", rt != NULL ? rt : "");
    return jobs__jobset_pod_sets(rjobs, prefix, out, n, msg);
}

static bool tj_suspended(const json_t *obj)
{
    return json_is_true(JOBS_AT(obj, "spec", "suspend"));
}

static err_t tj_set_suspended(json_t *obj, bool suspend, err_msg_t *msg)
{
    return JOBS_SET_BOOL(obj, suspend, msg, "spec", "suspend");
}

/* Complete=True is a success, Failed=True a failure, Complete looked at first (Kueue). */
static jobs_phase_t tj_phase(const json_t *obj, const char **message)
{
    json_t *conds = JOBS_AT(obj, "status", "conditions");

    if (jobs__condition(conds, "Complete", message))
        return JOBS_SUCCEEDED;
    if (jobs__condition(conds, "Failed", message))
        return JOBS_FAILED;
    return JOBS_RUNNING;
}

/* Some child Job has active pods. */
static bool tj_active(const json_t *obj)
{
    return jobs__any_active(JOBS_AT(obj, "status", "jobsStatus"));
}

/* Kueue's TrainJob.PodsReady: the replicated Jobs' replicas (of the view) all ready or
 * succeeded, counted in status.jobsStatus. An unresolved TrainJob is not ready. */
static bool tj_pods_ready(const json_t *obj)
{
    const json_t *rjobs = JOBS_AT(obj, "spec", "replicatedJobs");
    int64_t replicas = 0, ready = 0;
    size_t i;
    json_t *v;

    if (!json_is_array(rjobs))
        return false;
    json_array_foreach(rjobs, i, v)
    {
        replicas += jobs__int32(json_object_get(v, "replicas"), 1);
    }
    json_array_foreach(JOBS_AT(obj, "status", "jobsStatus"), i, v)
    {
        ready += jobs__int32(json_object_get(v, "ready"), 0);
        ready += jobs__int32(json_object_get(v, "succeeded"), 0);
    }
    return replicas == ready;
}

/* Kueue's TrainJob.ReclaimablePods, on the view: the JobSet's rule over status.jobsStatus. */
static void tj_reclaimable(const json_t *view, jobs_reclaim_t *out, size_t *n)
{
    jobs__jobset_reclaimable(JOBS_AT(view, "spec", "replicatedJobs"),
                             JOBS_AT(view, "status", "jobsStatus"), out, n);
}

/* ---- start and stop: Kueue's runtimePatches entry ------------------------------------------- */

/* Kueue's entry of spec.runtimePatches in `obj` (created, as Kueue's webhook creates it, when
 * `create`), borrowed; NULL with *rc set when there is none or it cannot be made. */
static json_t *kueue_patch(json_t *obj, bool create, err_t *rc, err_msg_t *msg)
{
    json_t *spec, *patches, *p;
    size_t i;

    if ((*rc = jobs__object_member(obj, "spec", &spec, msg)) != ERR_OK)
        return NULL;
    patches = json_object_get(spec, "runtimePatches");
    json_array_foreach(patches, i, p)
    {
        const char *m = json_string_value(json_object_get(p, "manager"));
        if (m != NULL && strcmp(m, TJ_MANAGER) == 0 && json_is_object(p))
            return p;
    }
    if (!create)
        return NULL;
    if (patches != NULL && !json_is_null(patches) && !json_is_array(patches)) {
        *rc = err_set(msg, ERR_INVALID, "spec.runtimePatches: must be of type array");
        return NULL;
    }
    if (!json_is_array(patches)) {
        patches = json_array();
        if (json_object_set_new(spec, "runtimePatches", patches))
            goto nomem;
    }
    p = json_pack("{s:s}", "manager", TJ_MANAGER);
    if (json_array_append_new(patches, p))
        goto nomem;
    return p;
nomem:
    *rc = err_set(msg, ERR_NOMEM, "out of memory");
    return NULL;
}

/* trainingRuntimeSpec.template.spec of Kueue's entry `entry`, created when missing. */
static err_t entry_spec(json_t *entry, json_t **out, err_msg_t *msg)
{
    json_t *at = entry;
    err_t rc = ERR_OK;

    if ((rc = jobs__object_member(at, "trainingRuntimeSpec", &at, msg)) == ERR_OK &&
        (rc = jobs__object_member(at, "template", &at, msg)) == ERR_OK)
        rc = jobs__object_member(at, "spec", &at, msg);
    if (rc == ERR_INVALID)
        return err_prefix(msg, rc,
                          "spec.runtimePatches[manager=" TJ_MANAGER "].trainingRuntimeSpec: ");
    *out = at;
    return rc;
}

/* {template: {spec: {template: {metadata, spec}}}} of one replicated Job's patch. */
static json_t *job_patch(const jobs_start_info_t *info, err_msg_t *msg, err_t *rc)
{
    json_t *labels = json_object(), *ann = json_object(), *pspec = json_object(), *item;

    *rc = ERR_OK;
    if (labels == NULL || ann == NULL || pspec == NULL)
        goto nomem;
    if ((*rc = jobs_start_metadata(info, labels, ann, msg)) != ERR_OK)
        goto fail;
    if ((json_object_size(info->node_selector) > 0 &&
         json_object_set(pspec, "nodeSelector", info->node_selector)) ||
        (json_array_size(info->tolerations) > 0 &&
         json_object_set(pspec, "tolerations", info->tolerations)))
        goto nomem;
    item = json_pack("{s:s, s:{s:{s:{s:{s:o, s:o}, s:o}}}}", "name", info->name, "template", "spec",
                     "template", "metadata", "labels", labels, "annotations", ann, "spec", pspec);
    if (item == NULL) {
        *rc = err_set(msg, ERR_NOMEM, "out of memory");
        return NULL;
    }
    return item;
nomem:
    *rc = err_set(msg, ERR_NOMEM, "out of memory");
fail:
    json_decref(labels);
    json_decref(ann);
    json_decref(pspec);
    return NULL;
}

/* Does `have` say all that `want` says: equal scalars, every member of an object (more members
 * allowed: an API server may default fields of the written patch), arrays item by item? A
 * strict comparison would write the patch again and again when the server adds a default. */
static bool says(const json_t *have, const json_t *want)
{
    const char *key;
    json_t *v;
    size_t i;
    bool ok = true;

    if (json_is_object(want)) {
        if (!json_is_object(have))
            return false;
        json_object_foreach((json_t *)want, key, v)
        {
            ok = ok && says(json_object_get(have, key), v);
        }
        return ok;
    }
    if (json_is_array(want)) {
        if (!json_is_array(have) || json_array_size(have) != json_array_size(want))
            return false;
        json_array_foreach(want, i, v)
        {
            ok = ok && says(json_array_get(have, i), v);
        }
        return ok;
    }
    return json_equal(have, want);
}

/* Kueue's RunWithPodSetsInfo: per pod set (= replicated Job) its patch; a held TrainJob whose
 * entry does not say that yet stays held (the patch is written first, alone), one whose entry
 * already says it is released. No partial admission (counts are ignored: no set_count). */
static err_t tj_start(json_t *obj, const jobs_start_info_t *info, size_t n, err_msg_t *msg)
{
    json_t *copy = json_deep_copy(obj), *entry, *jobs = json_array(), *at = NULL;
    bool release;
    err_t rc = ERR_OK;

    if (copy == NULL || jobs == NULL) {
        rc = err_set(msg, ERR_NOMEM, "out of memory");
        goto fail;
    }
    for (size_t i = 0; i < n && rc == ERR_OK; i++) {
        if (info[i].name == NULL || info[i].name[0] == '\0')
            rc = err_set(msg, ERR_INVALID, "TrainJob: a pod set without a name");
        else if (json_array_append_new(jobs, job_patch(&info[i], msg, &rc)) && rc == ERR_OK)
            rc = err_set(msg, ERR_NOMEM, "out of memory");
    }
    if (rc != ERR_OK)
        goto fail;
    entry = kueue_patch(copy, true, &rc, msg);
    if (entry == NULL || (rc = entry_spec(entry, &at, msg)) != ERR_OK)
        goto fail;
    /* Held with another patch (or none): step one, the patch alone. Else step two: the patch
     * is there (or the TrainJob already runs), release it. */
    release = !tj_suspended(copy) || says(json_object_get(at, "replicatedJobs"), jobs);
    if (json_object_set_new(at, "replicatedJobs", jobs)) {
        jobs = NULL;
        rc = err_set(msg, ERR_NOMEM, "out of memory");
        goto fail;
    }
    jobs = NULL;
    if (release && (rc = tj_set_suspended(copy, false, msg)) != ERR_OK)
        goto fail;
    return jobs__swap_in(obj, copy, msg);
fail:
    json_decref(jobs);
    json_decref(copy);
    return rc;
}

/* Kueue's Stop + RestorePodSetsInfo: held, and its entry's replicated Jobs removed (the
 * Workload's pod sets are not needed: the runtime's templates were never changed). */
static err_t tj_stop(json_t *obj, const json_t *pod_sets, bool *changed, err_msg_t *msg)
{
    json_t *copy = json_deep_copy(obj), *entry, *at = NULL;
    err_t rc;

    (void)pod_sets;
    if (copy == NULL)
        return err_set(msg, ERR_NOMEM, "out of memory");
    entry = kueue_patch(copy, false, &rc, msg);
    at = JOBS_AT(entry, "trainingRuntimeSpec", "template", "spec");
    if (rc == ERR_OK && json_is_object(at))
        json_object_del(at, "replicatedJobs");
    if (rc == ERR_OK)
        rc = tj_set_suspended(copy, true, msg);
    return jobs__commit(obj, copy, rc, changed, msg);
}

/* Kueue's webhook on create: its own runtimePatches entry, empty (`trainingRuntimeSpec:
 * {template: {spec: {}}}`), once. */
static err_t tj_create_defaults(json_t *obj, err_msg_t *msg)
{
    json_t *entry, *at = NULL;
    err_t rc;

    entry = kueue_patch(obj, true, &rc, msg);
    if (entry == NULL)
        return rc;
    return entry_spec(entry, &at, msg);
}

const jobs_kind_t jobs__kind_trainjob = {
    .framework = "trainer.kubeflow.org/trainjob",
    .group = TJ_GROUP,
    .version = "v1alpha1",
    .kind = "TrainJob",
    .resource = "trainjobs",
    .pod_sets = tj_pod_sets,
    .suspended = tj_suspended,
    .set_suspended = tj_set_suspended,
    .phase = tj_phase,
    .active = tj_active,
    .pods_ready = tj_pods_ready,
    .deps = tj_deps,
    .ndeps = sizeof(tj_deps) / sizeof(tj_deps[0]),
    .needs = tj_needs,
    .resolve = tj_resolve,
    .start = tj_start,
    .stop = tj_stop,
    .create_defaults = tj_create_defaults,
    .reclaimable = tj_reclaimable,
};
