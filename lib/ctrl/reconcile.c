/* reconcile -- Jobs and Workloads, level-based: Kueue's ReconcileGenericJob for the Job kind. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "ctrl/ctrl_int.h"

#include "ctrl/cond.h"
#include "ctrl/jobparent.h"
#include "ctrl/podset.h"
#include "ctrl/podsready.h"
#include "ctrl/wlstatus.h"
#include "jobs/job_workload.h"
#include "model/selector.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * Each call looks at the freshest known Job and Workload (ctrl__view) and makes at most one
 * write, then waits for its answer (the busy set) and for the next event. The order follows
 * Kueue's reconciler (reference section 3.5):
 *
 *   job finished           -> Workload Finished (Succeeded/Failed) -> finalizer removed
 *   no Workload            -> job running? suspend it : create the Workload
 *   Workload finished      -> finalizer removed (the Job stays as it is)
 *   reserved + evicted     -> suspend -> (no active pods) clear startTime -> restore template
 *                             -> release the quota: admission cleared, requeued
 *   reserved + admitted    -> start: unsuspend with the flavors merged into the template
 *   not reserved           -> running? suspend ("Not admitted by cluster queue") : restore
 *
 * A Job is only ever started from a Workload object that shows the admission: the durable
 * record comes first, always.
 */

/* ---- helpers ----------------------------------------------------------------------------- */

static bool has_finalizer(json_t *obj)
{
    json_t *f;
    size_t i;

    json_array_foreach(json_object_get(json_object_get(obj, "metadata"), "finalizers"), i, f)
    {
        if (json_is_string(f) && strcmp(json_string_value(f), JOB_FINALIZER_RESOURCE_IN_USE) == 0)
            return true;
    }
    return false;
}

static bool is_deleting(json_t *obj)
{
    return json_object_get(json_object_get(obj, "metadata"), "deletionTimestamp") != NULL;
}

/* Remove our finalizer from Workload `key` (merge patch of the whole list, at its version). */
static void remove_finalizer(ctrl_t *c, const char *key, json_t *wl)
{
    json_t *meta = json_object_get(wl, "metadata"), *list = json_array(), *f, *patch;
    ctrl_op_t *op;
    size_t i;

    if (list == NULL)
        return;
    json_array_foreach(json_object_get(meta, "finalizers"), i, f)
    {
        if (!(json_is_string(f) &&
              strcmp(json_string_value(f), JOB_FINALIZER_RESOURCE_IN_USE) == 0))
            json_array_append(list, f);
    }
    patch = json_pack("{s:{s:o,s:s}}", "metadata", "finalizers", list, "resourceVersion",
                      kube_object_rv(wl));
    op = patch ? ctrl__op_new(c, CTRL_OP_WL_FINALIZER, CTRL_WORKLOAD, key, CTRL_WORKLOAD, key)
               : NULL;
    if (op != NULL)
        ctrl__patch(c, op, NULL, patch);
    json_decref(patch);
}

/* Write a status patch `patch` (consumed) on Workload `key` as `kind`. */
static void wl_status(ctrl_t *c, ctrl_op_kind_t kind, const char *key, json_t *patch, json_t *data)
{
    ctrl_op_t *op;

    if (patch == NULL) {
        ctrl__log(c, CTRL_LOG_ERROR, "workload %s: out of memory building a status", key);
        return;
    }
    op = ctrl__op_new(c, kind, CTRL_WORKLOAD, key, CTRL_WORKLOAD, key);
    if (op != NULL) {
        op->data = json_incref(data);
        ctrl__patch(c, op, "status", patch);
    }
    json_decref(patch);
}

/* ---- Job writes (read-modify-write with retry on conflict) ------------------------------- */

static err_t mutate_job(json_t *obj, void *data, bool *changed, err_msg_t *msg)
{
    ctrl_op_t *op = data;
    json_t *spec = json_object_get(obj, "spec");
    bool suspended = json_is_true(json_object_get(spec, "suspend"));
    int rc;

    *changed = false;
    switch (op->op) {
    case CTRL_OP_JOB_START: {
        json_t *wl = op->data;
        json_t *adm = json_object_get(json_object_get(wl, "status"), "admission");
        json_t *psa = json_array_get(json_object_get(adm, "podSetAssignments"), 0);
        json_t *ps = json_array_get(json_object_get(json_object_get(wl, "spec"), "podSets"), 0);
        podset_info_t info = {0};
        err_t e;

        if (!suspended)
            return ERR_OK; /* already running */
        info.name = json_string_value(json_object_get(psa, "name"));
        info.name = info.name ? info.name : "main";
        info.local_queue =
            json_string_value(json_object_get(json_object_get(wl, "spec"), "queueName"));
        info.cluster_queue = json_string_value(json_object_get(adm, "clusterQueue"));
        info.workload = json_string_value(json_object_get(json_object_get(wl, "metadata"), "name"));
        info.node_selector = op->nodes;
        info.tolerations = op->tols;
        if (json_object_get(json_object_get(json_object_get(obj, "metadata"), "annotations"),
                            JOB_ANNOTATION_MIN_PARALLELISM) != NULL &&
            json_is_integer(json_object_get(psa, "count")) &&
            json_integer_value(json_object_get(psa, "count")) <
                json_integer_value(json_object_get(ps, "count"))) {
            info.has_count = true;
            info.count = (int32_t)json_integer_value(json_object_get(psa, "count"));
        }
        e = podset_start(obj, &info, &op->mutate_msg);
        if (e == ERR_CONFLICT) {
            op->mutate_failed = true;
            return err_set(msg, ERR_INVALID, "%s", op->mutate_msg.text);
        }
        if (e != ERR_OK)
            return err_set(msg, e, "%s", op->mutate_msg.text);
        *changed = op->changed = true;
        return ERR_OK;
    }
    case CTRL_OP_JOB_SUSPEND:
        if (suspended)
            return ERR_OK;
        if (!json_is_object(spec) || json_object_set_new(spec, "suspend", json_true()))
            return err_set(msg, ERR_NOMEM, "job: out of memory");
        *changed = op->changed = true;
        return ERR_OK;
    case CTRL_OP_JOB_RESTORE:
        if (!suspended)
            return ERR_OK; /* started again meanwhile: the next pass decides */
        rc = podset_stop(obj, op->data);
        if (rc < 0)
            return err_set(msg, ERR_NOMEM, "job: out of memory");
        *changed = op->changed = rc == 1;
        return ERR_OK;
    default:
        return err_set(msg, ERR_INVALID, "job: unexpected operation");
    }
}

/* Split "ns/name" `key` into `ns` (size n) and return the name, or NULL without a '/'. */
static const char *split_key(const char *key, char *ns, size_t n)
{
    const char *slash = strchr(key, '/');

    if (slash == NULL)
        return NULL;
    snprintf(ns, n, "%.*s", (int)(slash - key), key);
    return slash + 1;
}

static bool send_job(ctrl_op_t *op)
{
    char ns[256];
    const char *name = split_key(op->key, ns, sizeof(ns));
    err_msg_t msg = {{0}};

    if (name == NULL || kube_update_retry(op->c->client, &op->c->res[CTRL_JOB], ns, name, NULL,
                                          mutate_job, 0, ctrl__on_done, op, &msg) != ERR_OK) {
        ctrl__log(op->c, CTRL_LOG_ERROR, "job %s: %s", op->key, msg.text);
        return false;
    }
    return true;
}

static void job_write(ctrl_t *c, ctrl_op_kind_t kind, const char *job_key, json_t *data,
                      json_t *nodes, json_t *tols)
{
    ctrl_op_t *op = ctrl__op_new(c, kind, CTRL_JOB, job_key, CTRL_JOB, job_key);

    if (op == NULL)
        return;
    op->data = json_incref(data);
    op->nodes = json_incref(nodes);
    op->tols = json_incref(tols);
    op->verb = "update";
    op->send = send_job;
    ctrl__submit(c, op);
}

/* ---- Workload creation ------------------------------------------------------------------- */

typedef struct lookup_s {
    ctrl_t *c;
    object_t objs[8]; /* decoded on demand, freed after the lookup */
    size_t n;
} lookup_t;

static const void *lookup_decode(lookup_t *l, ctrl_kind_t kind, json_t *obj)
{
    if (obj == NULL || l->n == sizeof(l->objs) / sizeof(l->objs[0]))
        return NULL;
    if (ctrl__decode(l->c, kind, obj, &l->objs[l->n], NULL) != ERR_OK)
        return NULL;
    l->n++;
    return kind == CTRL_WPC ? (const void *)&l->objs[l->n - 1].u.wpc
                            : (const void *)&l->objs[l->n - 1].u.pc;
}

static const workload_priority_class_t *lookup_wpc(void *ctx, const char *name)
{
    lookup_t *l = ctx;
    return lookup_decode(l, CTRL_WPC, ctrl_get(l->c, CTRL_WPC, NULL, name));
}

static const priority_class_t *lookup_pc(void *ctx, const char *name)
{
    lookup_t *l = ctx;
    return lookup_decode(l, CTRL_PC, ctrl_get(l->c, CTRL_PC, NULL, name));
}

static const priority_class_t *lookup_pc_at(void *ctx, size_t i)
{
    lookup_t *l = ctx;
    const char *key;
    json_t *obj;
    size_t n = 0;

    /* Only globalDefault classes matter to the caller; decode those, skip the rest cheaply. */
    CTRL_FOREACH(l->c->inf[CTRL_PC], key, obj)
    {
        if (n++ == i) {
            if (!json_is_true(json_object_get(obj, "globalDefault"))) {
                static const priority_class_t none = {0};
                return &none;
            }
            return lookup_decode(l, CTRL_PC, obj);
        }
    }
    return NULL;
}

static bool send_create(ctrl_op_t *op)
{
    const char *ns =
        json_string_value(json_object_get(json_object_get(op->body, "metadata"), "namespace"));
    err_msg_t msg = {{0}};

    if (kube_create(op->c->client, &op->c->res[CTRL_WORKLOAD], ns, op->body, ctrl__on_done, op,
                    NULL, &msg) != ERR_OK) {
        ctrl__log(op->c, CTRL_LOG_ERROR, "create Workload %s: %s", op->key, msg.text);
        return false;
    }
    return true;
}

static void create_workload(ctrl_t *c, const char *job_key, json_t *job, const job_t *j,
                            const char *wl_key)
{
    workload_t wl = {0};
    lookup_t l = {.c = c};
    job_priority_lookup_t lookup = {&l, lookup_wpc, lookup_pc, lookup_pc_at};
    err_msg_t msg = {{0}};
    json_t *obj = NULL;
    ctrl_op_t *op;
    err_t rc;

    rc = job_workload_build(j, &wl, &msg);
    if (rc == ERR_OK) {
        rc = job_workload_priority(j, &lookup, &wl, &msg);
        if (rc == ERR_NOT_FOUND)
            ctrl__event(c, CTRL_JOB, job, "Warning", "WorkloadPriorityClassNotFound", "%s",
                        msg.text);
    }
    for (size_t i = 0; i < l.n; i++)
        object_fini(&l.objs[i]);
    if (rc != ERR_OK) {
        ctrl__log(c, CTRL_LOG_ERROR, "job %s: no Workload: %s", job_key, msg.text);
        workload_fini(&wl);
        return;
    }
    obj = wlstatus_for_job(&wl, job, c->job_api_version, "Job");
    workload_fini(&wl);
    op = obj ? ctrl__op_new(c, CTRL_OP_WL_CREATE, CTRL_WORKLOAD, wl_key, CTRL_JOB, job_key) : NULL;
    if (op != NULL) {
        op->data = json_incref(job);
        op->verb = "create";
        op->body = json_incref(obj);
        op->send = send_create;
        ctrl__submit(c, op);
    }
    json_decref(obj);
}

/* ---- the Job reconciler ------------------------------------------------------------------ */

/* Is `job` managed: queue-name label, or manageJobsWithoutQueueName in a selected namespace? */
static bool managed(ctrl_t *c, const job_t *j)
{
    json_t *ns;
    object_t o;
    bool ok = false;

    if (kv_list_get(&j->meta.labels, JOB_LABEL_QUEUE_NAME) != NULL)
        return true;
    if (!c->cfg->kueue.manage_jobs_without_queue_name)
        return false;
    ns = ctrl_get(c, CTRL_NAMESPACE, NULL, j->meta.namespace);
    if (ns == NULL || ctrl__decode(c, CTRL_NAMESPACE, ns, &o, NULL) != ERR_OK)
        return false;
    if (kv_list_get(&o.u.ns.meta.labels, "kubernetes.io/metadata.name") == NULL)
        kv_list_set(&o.u.ns.meta.labels, "kubernetes.io/metadata.name", j->meta.namespace);
    ok = selector_matches(&c->cfg->kueue.managed_jobs_namespace_selector, &o.u.ns.meta.labels);
    object_fini(&o);
    return ok;
}

static const char *job_condition_message(json_t *job, const char *type)
{
    json_t *cnd = cond_find(json_object_get(json_object_get(job, "status"), "conditions"), type);
    const char *m = json_string_value(json_object_get(cnd, "message"));
    return m ? m : "";
}

static json_t *flavor_get(void *ctx, const char *name)
{
    return ctrl_get(ctx, CTRL_FLAVOR, NULL, name);
}

/* Start `job` for the admitted Workload `wl` (key `wl_key`). */
static void start_job(ctrl_t *c, const char *job_key, const char *wl_key, json_t *wl)
{
    json_t *adm = json_object_get(json_object_get(wl, "status"), "admission");
    json_t *psa = json_array_get(json_object_get(adm, "podSetAssignments"), 0);
    json_t *nodes = NULL, *tols = NULL;
    err_msg_t msg = {{0}};
    err_t rc;

    rc = podset_flavor_info(psa, flavor_get, c, &nodes, &tols, &msg);
    if (rc == ERR_NOT_FOUND) {
        ctrl__log(c, CTRL_LOG_INFO, "job %s: waiting: %s", job_key, msg.text);
        return; /* the flavor's informer event brings us back */
    }
    if (rc != ERR_OK) {
        /* Flavors that contradict each other cannot be satisfied: as a template conflict. */
        wl_status(c, CTRL_OP_WL_FINISH, wl_key,
                  wlstatus_finish_patch(wl, "FailedToStart", msg.text, ctrl__now_ms() / 1000),
                  NULL);
        return;
    }
    job_write(c, CTRL_OP_JOB_START, job_key, wl, nodes, tols);
    json_decref(nodes);
    json_decref(tols);
}

/* The Workload's spec.podSets[0] (borrowed). */
static json_t *pod_set0(json_t *wl)
{
    return json_array_get(json_object_get(json_object_get(wl, "spec"), "podSets"), 0);
}

/* One step of stopping `job` (reference 3.7); true when it is fully stopped and restored. */
static bool stop_step(ctrl_t *c, const char *job_key, json_t *job, const job_t *j, json_t *wl,
                      const char *why)
{
    if (!j->suspend) {
        ctrl__event(c, CTRL_JOB, job, "Normal", "Stopped", "%s", why);
        job_write(c, CTRL_OP_JOB_SUSPEND, job_key, NULL, NULL, NULL);
        return false;
    }
    if (j->active > 0)
        return false; /* the pods are still going away; restore once they are gone */
    if (wl != NULL && !podset_is_restored(job, pod_set0(wl))) {
        if (json_object_get(json_object_get(job, "status"), "startTime") != NULL &&
            !json_is_null(json_object_get(json_object_get(job, "status"), "startTime"))) {
            /* The template is immutable while startTime is set (Kubernetes rule). */
            ctrl_op_t *op =
                ctrl__op_new(c, CTRL_OP_JOB_CLEAR_START, CTRL_JOB, job_key, CTRL_JOB, job_key);
            json_t *patch = json_pack("{s:{s:n}}", "status", "startTime");
            if (op != NULL && patch != NULL)
                ctrl__patch(c, op, "status", patch);
            else
                ctrl__op_free(op);
            json_decref(patch);
            return false;
        }
        job_write(c, CTRL_OP_JOB_RESTORE, job_key, pod_set0(wl), NULL, NULL);
        return false;
    }
    return true;
}

/* waitForPodsReady: bring the Workload's PodsReady condition in line with the Job's ready pods
 * (reference 3.5 step 8, before the eviction handling as in Kueue). True when a write went out. */
static bool sync_pods_ready(ctrl_t *c, const char *wkey, json_t *wl, json_t *job)
{
    podsready_cond_t want = podsready_condition(wl, podsready_job_ready(job));
    bool changed = false;
    json_t *patch = wlstatus_cond_patch(wl, "PodsReady", want.status, want.reason, want.message,
                                        ctrl__now_ms() / 1000, &changed);

    if (!changed)
        return false;
    ctrl__log(c, CTRL_LOG_DEBUG, "workload %s: PodsReady=%s %s", wkey, want.status, want.reason);
    wl_status(c, CTRL_OP_WL_PODSREADY, wkey, patch, NULL);
    return true;
}

/* A suspended Job's kueue.x-k8s.io/priority-class label changed: its not-reserved Workload
 * follows (Kueue's UpdateWorkloadPriority), with the WorkloadPriorityClass's value. */
static void sync_priority(ctrl_t *c, const char *job_key, const char *wkey, json_t *wl,
                          const job_t *j)
{
    const char *want = kv_list_get(&j->meta.labels, JOB_LABEL_PRIORITY_CLASS);
    json_t *ref = json_object_get(json_object_get(wl, "spec"), "priorityClassRef"), *wpc, *patch;
    const char *kind = json_string_value(json_object_get(ref, "kind"));
    const char *name = json_string_value(json_object_get(ref, "name"));
    json_t *value;
    ctrl_op_t *op;

    if (want == NULL || want[0] == '\0' ||
        (kind != NULL && strcmp(kind, "WorkloadPriorityClass") == 0 && name != NULL &&
         strcmp(name, want) == 0))
        return;
    wpc = ctrl_get(c, CTRL_WPC, NULL, want);
    value = json_object_get(wpc, "value");
    if (!json_is_integer(value)) {
        ctrl__log(c, CTRL_LOG_DEBUG, "job %s: WorkloadPriorityClass %s not found: priority kept",
                  job_key, want);
        return;
    }
    patch = json_pack("{s:{s:s},s:{s:{s:s,s:s,s:s},s:O}}", "metadata", "resourceVersion",
                      kube_object_rv(wl), "spec", "priorityClassRef", "group", "kueue.x-k8s.io",
                      "kind", "WorkloadPriorityClass", "name", want, "priority", value);
    op = patch ? ctrl__op_new(c, CTRL_OP_WL_PRIORITY, CTRL_WORKLOAD, wkey, CTRL_WORKLOAD, wkey)
               : NULL;
    if (op != NULL) {
        ctrl__log(c, CTRL_LOG_INFO, "workload %s: priority class %s (%lld) from job %s", wkey, want,
                  (long long)json_integer_value(value), job_key);
        ctrl__patch(c, op, NULL, patch);
    }
    json_decref(patch);
}

void ctrl__reconcile_job(ctrl_t *c, const char *key)
{
    json_t *job = ctrl__view(c, CTRL_JOB, key), *wl;
    object_t o;
    const job_t *j;
    err_msg_t msg = {{0}};
    char wname[JOB_WORKLOAD_NAME_MAX + 1], wkey[CTRL_KEY_MAX];
    const char *parent_kind = NULL, *parent_name = NULL;
    bool reserved, evicted;

    if (job == NULL || ctrl__busy(c, CTRL_JOB, key))
        return;
    if (ctrl__decode(c, CTRL_JOB, job, &o, &msg) != ERR_OK) {
        ctrl__log(c, CTRL_LOG_DEBUG, "job %s: not reconciled: %s", key, msg.text);
        return;
    }
    j = &o.u.job;
    if (jobparent_managed(job, &parent_kind, &parent_name)) {
        /* A child Job: the parent's Workload admits its pods (reference section 3.1). */
        ctrl__log(c, CTRL_LOG_DEBUG, "job %s: owned by %s %s: no Workload of its own", key,
                  parent_kind, parent_name ? parent_name : "");
        goto out;
    }
    if (!managed(c, j) || j->meta.namespace == NULL || j->meta.name == NULL ||
        job_workload_name(j->meta.name, j->meta.uid, JOB_WORKLOAD_NAME_MAX, wname, sizeof(wname),
                          &msg) != ERR_OK)
        goto out;
    snprintf(wkey, sizeof(wkey), "%s/%s", j->meta.namespace, wname);
    if (ctrl__busy(c, CTRL_WORKLOAD, wkey))
        goto out;
    wl = ctrl__view(c, CTRL_WORKLOAD, wkey);

    if (j->complete || j->failed_cond) {
        if (wl != NULL && !wlstatus_cond(wl, "Finished")) {
            const char *reason = j->complete ? "Succeeded" : "Failed";
            wl_status(c, CTRL_OP_WL_FINISH, wkey,
                      wlstatus_finish_patch(
                          wl, reason,
                          job_condition_message(job, j->complete ? "Complete" : "Failed"),
                          ctrl__now_ms() / 1000),
                      job);
        } else if (wl != NULL && has_finalizer(wl)) {
            remove_finalizer(c, wkey, wl);
        }
        goto out;
    }
    if (wl == NULL) {
        if (!j->suspend)
            stop_step(c, key, job, j, NULL, "Not admitted by cluster queue");
        else if (j->active == 0 && !j->meta.deleting)
            create_workload(c, key, job, j, wkey);
        goto out;
    }
    if (is_deleting(wl)) {
        if (stop_step(c, key, job, j, NULL, "Workload is being deleted") && has_finalizer(wl))
            remove_finalizer(c, wkey, wl);
        goto out;
    }
    if (wlstatus_cond(wl, "Finished")) {
        if (has_finalizer(wl))
            remove_finalizer(c, wkey, wl);
        goto out;
    }
    if (c->cfg->pods_ready.enabled && sync_pods_ready(c, wkey, wl, job))
        goto out;
    reserved = wlstatus_reserved(wl);
    evicted = wlstatus_cond(wl, "Evicted") ||
              json_is_false(json_object_get(json_object_get(wl, "spec"), "active"));
    if (reserved && evicted) {
        json_t *ev =
            cond_find(json_object_get(json_object_get(wl, "status"), "conditions"), "Evicted");
        const char *why = json_string_value(json_object_get(ev, "message"));
        if (stop_step(c, key, job, j, wl, why ? why : "Evicted"))
            wl_status(c, CTRL_OP_WL_RELEASE, wkey,
                      wlstatus_release_patch(wl, ctrl__now_ms() / 1000), job);
    } else if (reserved && wlstatus_cond(wl, "Admitted")) {
        if (j->suspend)
            start_job(c, key, wkey, wl);
    } else if (!reserved) {
        const char *want = kv_list_get(&j->meta.labels, JOB_LABEL_QUEUE_NAME);
        const char *have =
            json_string_value(json_object_get(json_object_get(wl, "spec"), "queueName"));
        if (!stop_step(c, key, job, j, wl, "Not admitted by cluster queue"))
            goto out;
        if (want != NULL && (have == NULL || strcmp(want, have) != 0)) {
            /* A suspended Job moved to another LocalQueue: so does its Workload. */
            json_t *patch = json_pack("{s:{s:s},s:{s:s}}", "metadata", "resourceVersion",
                                      kube_object_rv(wl), "spec", "queueName", want);
            ctrl_op_t *op =
                patch ? ctrl__op_new(c, CTRL_OP_WL_QUEUE, CTRL_WORKLOAD, wkey, CTRL_WORKLOAD, wkey)
                      : NULL;
            if (op != NULL)
                ctrl__patch(c, op, NULL, patch);
            json_decref(patch);
        } else {
            sync_priority(c, key, wkey, wl, j);
        }
    }
out:
    object_fini(&o);
}

static bool send_delete(ctrl_op_t *op)
{
    char ns[256];
    const char *name = split_key(op->key, ns, sizeof(ns));

    return name != NULL && kube_delete(op->c->client, &op->c->res[CTRL_WORKLOAD], ns, name, NULL,
                                       ctrl__on_done, op, NULL, NULL) == ERR_OK;
}

/* ---- the Workload reconciler ------------------------------------------------------------- */

void ctrl__reconcile_wl(ctrl_t *c, const char *key)
{
    json_t *wl = ctrl__view(c, CTRL_WORKLOAD, key), *job;
    char owner[CTRL_KEY_MAX];
    const char *uid = NULL, *juid;

    if (wl == NULL || ctrl__busy(c, CTRL_WORKLOAD, key))
        return;
    if (ctrl__owner_job(c, wl, owner, sizeof(owner), &uid) != NULL) {
        job = ctrl__view(c, CTRL_JOB, owner);
        juid = json_string_value(json_object_get(json_object_get(job, "metadata"), "uid"));
        if (job != NULL && (uid == NULL || (juid != NULL && strcmp(uid, juid) == 0))) {
            ctrl__mark_job(c, owner);
            return;
        }
        /* Orphaned: its Job is gone. Release the finalizer, then delete it (the garbage
         * collector would too; doing it here does not depend on one running). */
        if (has_finalizer(wl)) {
            remove_finalizer(c, key, wl);
        } else if (!is_deleting(wl)) {
            ctrl_op_t *op =
                ctrl__op_new(c, CTRL_OP_WL_DELETE, CTRL_WORKLOAD, key, CTRL_WORKLOAD, key);
            if (op != NULL) {
                op->verb = "delete";
                op->send = send_delete;
                ctrl__submit(c, op);
            }
        }
        return;
    }
    /* A Workload created directly: nothing to start or stop. */
    if (is_deleting(wl)) {
        if (has_finalizer(wl))
            remove_finalizer(c, key, wl);
        return;
    }
    if (wlstatus_reserved(wl) && wlstatus_cond(wl, "Evicted") && !wlstatus_cond(wl, "Finished"))
        wl_status(c, CTRL_OP_WL_RELEASE, key, wlstatus_release_patch(wl, ctrl__now_ms() / 1000),
                  NULL);
}

/* ---- continuations ----------------------------------------------------------------------- */

void ctrl__job_done(ctrl_t *c, ctrl_op_t *op, const kube_result_t *res)
{
    err_msg_t msg = {{0}};
    json_t *wl;

    switch (op->op) {
    case CTRL_OP_WL_CREATE:
        if (res->err == ERR_OK) {
            c->stats.created++;
            ctrl__event(c, CTRL_JOB, op->data, "Normal", "CreatedWorkload", "Created Workload: %s",
                        op->key);
        }
        break;
    case CTRL_OP_WL_RELEASE:
        if (res->err == ERR_OK) {
            c->stats.released++;
            json_object_del(c->evictions, op->key);
            if (sched_evicted(c->sched, op->key, ctrl__now_ms(), &msg) != ERR_OK)
                ctrl__log(c, CTRL_LOG_DEBUG, "engine: evicted %s: %s", op->key, msg.text);
            ctrl__engine_wl(c, op->key);
            ctrl__log(c, CTRL_LOG_INFO, "workload %s: quota released, requeued", op->key);
        }
        break;
    case CTRL_OP_WL_FINISH:
        if (res->err == ERR_OK) {
            c->stats.finished++;
            sched_workload_finish(c->sched, op->key, ctrl__now_ms(), NULL);
            c->queue_dirty = true;
            if (op->data != NULL)
                ctrl__event(c, CTRL_JOB, op->data, "Normal", "FinishedWorkload",
                            "Workload '%s' is declared finished", op->key);
            ctrl__log(c, CTRL_LOG_INFO, "workload %s: finished", op->key);
        }
        break;
    case CTRL_OP_WL_BACKOFF:
    case CTRL_OP_WL_PRIORITY:
        if (res->err == ERR_OK) {
            /* Feed the engine now (unheld / new priority) rather than at the watch event. */
            ctrl__engine_wl(c, op->key);
            if (op->op == CTRL_OP_WL_BACKOFF)
                ctrl__log(c, CTRL_LOG_INFO, "workload %s: requeue backoff finished", op->key);
        }
        break;
    case CTRL_OP_JOB_START:
        wl = op->data;
        if (op->mutate_failed) {
            char wkey[CTRL_KEY_MAX];
            json_t *cur;
            ctrl__key(wl, wkey, sizeof(wkey));
            cur = ctrl__view(c, CTRL_WORKLOAD, wkey);
            ctrl__log(c, CTRL_LOG_ERROR, "job %s: cannot start: %s", op->key, op->mutate_msg.text);
            if (cur != NULL && !ctrl__busy(c, CTRL_WORKLOAD, wkey))
                wl_status(c, CTRL_OP_WL_FINISH, wkey,
                          wlstatus_finish_patch(cur, "FailedToStart", op->mutate_msg.text,
                                                ctrl__now_ms() / 1000),
                          NULL);
        } else if (res->err == ERR_OK && op->changed) {
            const char *cq = json_string_value(json_object_get(
                json_object_get(json_object_get(wl, "status"), "admission"), "clusterQueue"));
            c->stats.started++;
            ctrl__event(c, CTRL_JOB, res->body, "Normal", "Started", "Admitted by clusterQueue %s",
                        cq ? cq : "");
            ctrl__log(c, CTRL_LOG_INFO, "job %s: started", op->key);
        }
        break;
    case CTRL_OP_JOB_SUSPEND:
        if (res->err == ERR_OK && op->changed &&
            !json_is_true(json_object_get(json_object_get(res->body, "spec"), "suspend"))) {
            /* The server dropped the field (batch/v1 before Kubernetes 1.21): asking again
             * would loop. Say why, and wait for the Job's next change instead. */
            ctrl__log(c, CTRL_LOG_ERROR,
                      "job %s: the API server dropped spec.suspend (batch/v1 Jobs before "
                      "Kubernetes 1.21 cannot be suspended; see --job-resource)",
                      op->key);
            return;
        }
        if (res->err == ERR_OK && op->changed) {
            c->stats.stopped++;
            ctrl__log(c, CTRL_LOG_INFO, "job %s: suspended", op->key);
        }
        break;
    default:
        break;
    }
    /* Whatever happened, look at the Job (and through it the Workload) again. */
    if (op->kind == CTRL_JOB)
        ctrl__mark_job(c, op->key);
    else
        ctrl__mark_wl(c, op->key);
}
