/* reconcile -- jobs of every kind and Workloads, level-based: Kueue's ReconcileGenericJob. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "ctrl/ctrl_int.h"

#include "ctrl/cond.h"
#include "ctrl/jobparent.h"
#include "ctrl/podset.h"
#include "ctrl/podsready.h"
#include "ctrl/wlstatus.h"
#include "jobs/framework.h"
#include "jobs/job_workload.h"
#include "jobs/objpath.h"
#include "model/selector.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * Each call looks at the freshest known job and Workload (ctrl__job, ctrl__wl) and makes at most
 * one write, then waits for its answer (the busy set) and for the next event. A job is any kind
 * of the framework table (jobs/framework.h): what differs between a batch/v1 Job and a JobSet --
 * where the pod sets are, how to hold and release it, when it is finished -- is the kind's
 * entry; this file is the same for all of them. The order follows Kueue's reconciler (reference
 * section 3.5):
 *
 *   job finished           -> Workload Finished (Succeeded/Failed) -> finalizer removed
 *   no Workload            -> job running? suspend it : create the Workload
 *   Workload finished      -> finalizer removed (the Job stays as it is)
 *   reserved + evicted     -> suspend -> (no active pods) clear startTime -> restore template
 *                             -> release the quota: admission cleared, requeued
 *   reserved + admitted    -> start: unsuspend with the flavors merged into the template
 *   not reserved           -> running? suspend ("Not admitted by cluster queue") : restore
 *
 * A job is only ever started from a Workload object that shows the admission: the durable
 * record comes first, always.
 */

/* The kind of op->kind (a job kind). */
#define OP_KIND(op) ctrl__jobs_kind((op)->c, (op)->kind)

/* ---- helpers ----------------------------------------------------------------------------- */

/* Split "ns/name" `key` into `ns` (size n) and return the name, or NULL without a '/'. */
static const char *split_key(const char *key, char *ns, size_t n)
{
    const char *slash = strchr(key, '/');

    if (slash == NULL)
        return NULL;
    snprintf(ns, n, "%.*s", (int)(slash - key), key);
    return slash + 1;
}

/* Remove our finalizer from Workload `key` (merge patch of the whole list, at its version). */
static void remove_finalizer(ctrl_t *c, const char *key, const ctrl_wl_t *w)
{
    json_t *patch = ctrl__finalizer_patch(&w->wl.meta);
    ctrl_op_t *op;

    op = patch ? ctrl__op_new(c, CTRL_OP_WL_FINALIZER, CTRL_WORKLOAD, key, CTRL_WORKLOAD, key)
               : NULL;
    if (op != NULL)
        ctrl__patch(c, op, NULL, patch);
    json_decref(patch);
}

/* Write a status patch `patch` (consumed) on Workload `key` as `kind`. */
static void wl_status(ctrl_t *c, ctrl_op_kind_t kind, const char *key, json_t *patch)
{
    ctrl_op_t *op;

    if (patch == NULL) {
        ctrl__log(c, CTRL_LOG_ERROR, "workload %s: out of memory building a status", key);
        return;
    }
    op = ctrl__op_new(c, kind, CTRL_WORKLOAD, key, CTRL_WORKLOAD, key);
    if (op != NULL)
        ctrl__patch(c, op, "status", patch);
    json_decref(patch);
}

/* A status patch from the JSON view of `w` built by `fn` (consumed), written as `kind`. */
#define WL_PATCH(c, kind, key, w, call)                               \
    do {                                                              \
        json_t *view_ = ctrl_wl_json(w);                              \
        json_t *wl = view_;                                           \
        wl_status((c), (kind), (key), view_ != NULL ? (call) : NULL); \
        json_decref(view_);                                           \
    } while (0)

/* ---- Job writes (read-modify-write with retry on conflict) ------------------------------- */

/* Start: op->data is {localQueue, clusterQueue, workload, podSets: [{name[, count]}]} and
 * op->nodes / op->tols hold each pod set's node selector (object) and tolerations (array), in
 * the same order (start_job()). */
/* One metadata map of a template: `add`'s keys merged in, a different existing value is a
 * conflict (Kueue's podset merge). */
static err_t merge_meta(json_t *meta, const char *field, const json_t *add, err_msg_t *msg)
{
    const char *k;
    json_t *v, *have = json_object_get(meta, field);

    if (json_object_size(add) == 0)
        return ERR_OK;
    if (!json_is_object(have)) {
        have = json_object();
        if (have == NULL || json_object_set_new(meta, field, have) != 0)
            return err_set(msg, ERR_NOMEM, "out of memory");
    }
    json_object_foreach((json_t *)add, k, v)
    {
        const json_t *cur = json_object_get(have, k);
        if (cur != NULL && !json_equal(cur, v))
            return err_set(msg, ERR_CONFLICT,
                           "invalid %s: conflict for key=%s, value1=%s, "
                           "value2=%s",
                           field, k, json_string_value(cur), json_string_value(v));
        if (json_object_set(have, k, v) != 0)
            return err_set(msg, ERR_NOMEM, "out of memory");
    }
    return ERR_OK;
}

/* The labels and annotations of the admission checks' podSetUpdates (op->data podSets[i]
 * "labels"/"annotations", start_job()) into the started object's pod templates. Kinds that
 * start through their own patch (a TrainJob's runtimePatches) take the node selector and
 * tolerations only. */
static err_t start_check_metadata(const jobs_kind_t *k, json_t *obj, const json_t *sets,
                                  err_msg_t *msg)
{
    jobs_podset_t ps[JOBS_PODSETS_MAX];
    size_t np = 0;
    bool any = false;
    size_t i;
    const json_t *s;

    json_array_foreach((json_t *)sets, i, s) any =
        any || json_object_get(s, "labels") != NULL || json_object_get(s, "annotations") != NULL;
    if (!any || k->start != NULL || k->pod_sets == NULL)
        return ERR_OK;
    memset(ps, 0, sizeof(ps));
    if (k->pod_sets(obj, ps, &np, msg) != ERR_OK)
        return ERR_OK; /* started as it could be: the pod sets were read by jobs_start() */
    json_array_foreach((json_t *)sets, i, s)
    {
        const char *name = json_string_value(json_object_get(s, "name"));
        for (size_t p = 0; p < np && name != NULL; p++) {
            json_t *meta;
            err_t e;
            if (strcmp(ps[p].name, name) != 0 || !json_is_object(ps[p].tmpl))
                continue;
            meta = json_object_get(ps[p].tmpl, "metadata");
            if (!json_is_object(meta)) {
                meta = json_object();
                if (meta == NULL || json_object_set_new(ps[p].tmpl, "metadata", meta) != 0)
                    return err_set(msg, ERR_NOMEM, "out of memory");
            }
            e = merge_meta(meta, "labels", json_object_get(s, "labels"), msg);
            if (e == ERR_OK)
                e = merge_meta(meta, "annotations", json_object_get(s, "annotations"), msg);
            if (e != ERR_OK)
                return e;
        }
    }
    return ERR_OK;
}

static err_t start_object(ctrl_op_t *op, const jobs_kind_t *k, json_t *obj, err_msg_t *msg)
{
    json_t *d = op->data, *sets = json_object_get(d, "podSets");
    jobs_start_info_t info[JOBS_PODSETS_MAX];
    size_t n = json_array_size(sets);
    err_t e;

    memset(info, 0, sizeof(info));
    for (size_t i = 0; i < n && i < JOBS_PODSETS_MAX; i++) {
        json_t *ps = json_array_get(sets, i), *count = json_object_get(ps, "count");
        info[i].name = json_string_value(json_object_get(ps, "name"));
        info[i].local_queue = json_string_value(json_object_get(d, "localQueue"));
        info[i].cluster_queue = json_string_value(json_object_get(d, "clusterQueue"));
        info[i].workload = json_string_value(json_object_get(d, "workload"));
        info[i].node_selector = json_array_get(op->nodes, i);
        info[i].tolerations = json_array_get(op->tols, i);
        if (json_is_integer(count)) {
            info[i].has_count = true;
            info[i].count = (int32_t)json_integer_value(count);
        }
    }
    e = jobs_start(k, obj, info, n < JOBS_PODSETS_MAX ? n : JOBS_PODSETS_MAX, &op->mutate_msg);
    if (e == ERR_OK)
        e = start_check_metadata(k, obj, sets, &op->mutate_msg);
    if (e == ERR_CONFLICT || e == ERR_INVALID) {
        op->mutate_failed = true;
        return err_set(msg, ERR_INVALID, "%s", op->mutate_msg.text);
    }
    if (e != ERR_OK)
        return err_set(msg, e, "%s", op->mutate_msg.text);
    return ERR_OK;
}

/* Does kind `k` mark a stop with the annotation kueue.x-k8s.io/stopping (batch/v1 Job)? */
static bool stopping_kind(const jobs_kind_t *k)
{
    return strcmp(k->framework, "batch/job") == 0;
}

static err_t mutate_job(json_t *obj, void *data, bool *changed, err_msg_t *msg)
{
    ctrl_op_t *op = data;
    const jobs_kind_t *k = OP_KIND(op);
    bool suspended;
    err_t e;

    *changed = false;
    if (k == NULL)
        return err_set(msg, ERR_INVALID, "job: kind not watched");
    suspended = k->suspended(obj);
    switch (op->op) {
    case CTRL_OP_JOB_START:
        if (!suspended)
            return ERR_OK; /* already running */
        e = start_object(op, k, obj, msg);
        if (e != ERR_OK)
            return e;
        *changed = op->changed = true;
        return ERR_OK;
    case CTRL_OP_JOB_SUSPEND:
        if (suspended)
            return ERR_OK;
        e = k->set_suspended(obj, true, msg);
        if (e != ERR_OK)
            return e;
        /* A stop (not a child's suspension, op->data set) of a batch/v1 Job marks it stopping
         * until its template is restored, as Kueue's Job.Stop() does. */
        if (op->data == NULL && stopping_kind(k) &&
            objpath_set_str(obj, PODSET_ANNOTATION_STOPPING, "true", "metadata", "annotations",
                            (char *)NULL) != ERR_OK)
            return err_set(msg, ERR_NOMEM, "out of memory");
        *changed = op->changed = true;
        return ERR_OK;
    case CTRL_OP_JOB_RESTORE:
        if (!suspended)
            return ERR_OK; /* started again meanwhile: the next pass decides */
        e = jobs_stop(k, obj, op->data, changed, msg);
        if (e != ERR_OK)
            return e;
        if (stopping_kind(k)) {
            /* Restored: no longer stopping (Kueue deletes the annotation in the same write). */
            json_t *ann = json_object_get(json_object_get(obj, "metadata"), "annotations");
            if (json_object_get(ann, PODSET_ANNOTATION_STOPPING) != NULL) {
                json_object_del(ann, PODSET_ANNOTATION_STOPPING);
                *changed = true;
            }
        }
        op->changed = *changed;
        return ERR_OK;
    default:
        return err_set(msg, ERR_INVALID, "job: unexpected operation");
    }
}

static bool send_job(ctrl_op_t *op)
{
    char ns[256];
    const char *name = split_key(op->key, ns, sizeof(ns));
    err_msg_t msg = {{0}};

    if (name == NULL || kube_update_retry(op->c->client, &op->c->res[op->kind], ns, name, NULL,
                                          mutate_job, 0, ctrl__on_done, op, &msg) != ERR_OK) {
        ctrl__log(op->c, CTRL_LOG_ERROR, "job %s: %s", op->key, msg.text);
        return false;
    }
    return true;
}

bool ctrl__job_update(ctrl_t *c, ctrl_op_kind_t op_kind, ctrl_kind_t kind, const char *key,
                      json_t *data, json_t *nodes, json_t *tols, ctrl_send_fn send)
{
    ctrl_op_t *op = ctrl__op_new(c, op_kind, kind, key, kind, key);

    if (op == NULL)
        return false;
    op->data = json_incref(data);
    op->nodes = json_incref(nodes);
    op->tols = json_incref(tols);
    op->verb = "update";
    op->send = send;
    ctrl__submit(c, op);
    return true;
}

static void job_write(ctrl_t *c, ctrl_op_kind_t op_kind, ctrl_kind_t kind, const char *job_key,
                      json_t *data, json_t *nodes, json_t *tols)
{
    ctrl__job_update(c, op_kind, kind, job_key, data, nodes, tols, send_job);
}

/* Restoring a job's templates needs the Workload's pod sets, which the cache does not keep: GET
 * the Workload (op->data holds its key), then the read-modify-write of the job. A failed GET
 * ends the op as a failed write (its key backs off). */
static void on_restore_wl(const kube_result_t *res, void *data)
{
    ctrl_op_t *op = data;
    json_t *ps = json_object_get(json_object_get(res->body, "spec"), "podSets");

    if (res->err != ERR_OK || json_array_size(ps) == 0 || op->c->closing || op->c->writes_stopped) {
        kube_result_t r = *res;
        if (r.err == ERR_OK) {
            r.err = ERR_NOT_FOUND; /* no pod set to restore from: decide again */
            r.canceled = op->c->closing || op->c->writes_stopped;
        }
        ctrl__on_done(&r, op);
        return;
    }
    json_decref(op->data);
    op->data = json_incref(ps);
    if (!send_job(op)) {
        kube_result_t r;
        memset(&r, 0, sizeof(r));
        r.err = err_set(&r.msg, ERR_IO, "job %s: restore not submitted", op->key);
        r.reason = "";
        op->verb = NULL;
        ctrl__on_done(&r, op);
    }
}

/* GET the object of `kind` whose key op->data holds, answering to `cb`. */
static bool get_data_key(ctrl_op_t *op, ctrl_kind_t kind, kube_done_cb cb)
{
    char ns[256];
    const char *key = json_string_value(op->data);
    const char *name = key ? split_key(key, ns, sizeof(ns)) : NULL;

    return name != NULL &&
           kube_get(op->c->client, &op->c->res[kind], ns, name, NULL, cb, op, NULL, NULL) == ERR_OK;
}

/* Submit `op` (verb `verb`, sent by `send`) with op->data = `data_key`; released on OOM. */
static void submit_with_key(ctrl_t *c, ctrl_op_t *op, const char *data_key, const char *verb,
                            bool (*send)(ctrl_op_t *op))
{
    if (op == NULL)
        return;
    op->data = json_string(data_key);
    op->verb = verb;
    op->send = send;
    if (op->data == NULL) {
        c->refeed = true; /* dropped for memory: refeed() reconciles again (test_ctrl_oom) */
        ctrl__op_free(op);
    } else {
        ctrl__submit(c, op);
    }
}

static bool send_restore(ctrl_op_t *op)
{
    return get_data_key(op, CTRL_WORKLOAD, on_restore_wl);
}

static void restore_job(ctrl_t *c, ctrl_kind_t kind, const char *job_key, const char *wl_key)
{
    submit_with_key(c, ctrl__op_new(c, CTRL_OP_JOB_RESTORE, kind, job_key, kind, job_key), wl_key,
                    "update", send_restore);
}

/* ---- Workload creation ------------------------------------------------------------------- */

static const workload_priority_class_t *lookup_wpc(void *ctx, const char *name)
{
    const object_t *o = ctrl__q(ctx, CTRL_WPC, name);
    return o != NULL ? &o->u.wpc : NULL;
}

static const priority_class_t *lookup_pc(void *ctx, const char *name)
{
    const object_t *o = ctrl__q(ctx, CTRL_PC, name);
    return o != NULL ? &o->u.pc : NULL;
}

static const priority_class_t *lookup_pc_at(void *ctx, size_t i)
{
    ctrl_t *c = ctx;
    const char *key;
    const ctrl_qobj_t *q;
    size_t n = 0;

    CTRL_FOREACH(c, CTRL_PC, key, q)
    {
        if (n++ == i) {
            static const priority_class_t none = {0};
            return q->valid ? &q->obj.u.pc : &none;
        }
    }
    return NULL;
}

/* The priority of `wl` built from `obj` (Kueue's ExtractPriority, job_workload_priority()):
 * the object's priority-class label, else the first pod set's priorityClassName, else the
 * globalDefault PriorityClass. */
static err_t resolve_priority(ctrl_t *c, const json_t *obj, workload_t *wl, err_msg_t *msg)
{
    job_priority_lookup_t lookup = {c, lookup_wpc, lookup_pc, lookup_pc_at};
    const char *label = json_string_value(json_object_get(
        json_object_get(json_object_get(obj, "metadata"), "labels"), JOB_LABEL_PRIORITY_CLASS));
    job_t view;
    err_t rc;

    /* job_workload_priority() reads the label and the pod spec's priorityClassName only. */
    memset(&view, 0, sizeof(view));
    if (label != NULL && kv_list_set(&view.meta.labels, JOB_LABEL_PRIORITY_CLASS, label) != ERR_OK)
        return err_set(msg, ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < wl->npod_sets && view.spec.priority_class_name == NULL; i++) {
        char *pcn = wl->pod_sets[i].spec.priority_class_name;
        if (pcn != NULL && pcn[0] != '\0')
            view.spec.priority_class_name = pcn; /* borrowed */
    }
    rc = job_workload_priority(&view, &lookup, wl, msg);
    kv_list_fini(&view.meta.labels);
    return rc;
}

/* The Workload for job `job_key` of `kind`, `obj` the object from a fresh GET: a new object, or
 * NULL with the reason in msg (an Event when a named priority class is missing). */
static json_t *build_workload(ctrl_t *c, ctrl_kind_t kind, const char *job_key, json_t *obj,
                              err_msg_t *msg)
{
    const jobs_kind_t *k = ctrl__jobs_kind(c, kind);
    const ctrl_job_t *j = ctrl__job(c, kind, job_key);
    jobs_podset_t ps[JOBS_PODSETS_MAX];
    workload_t wl = {0};
    json_t *out = NULL, *prepared = NULL, *resolved = NULL;
    size_t n = 0;
    err_t rc;

    if (k == NULL) {
        err_set(msg, ERR_INVALID, "kind not watched");
        goto out;
    }
    /* A TrainJob is read from its view with the training runtime it names (deps.c's cache). */
    rc = jobs_resolve(k, obj, c->rkind[kind].find, c->rkind[kind].find_data, &resolved, msg);
    if (rc != ERR_OK)
        goto out;
    obj = resolved;
    rc =
        jobs_workload_build(k, obj, (const char *const *)c->cfg->integrations.label_keys, &wl, msg);
    if (rc == ERR_OK) {
        rc = resolve_priority(c, obj, &wl, msg);
        if (rc == ERR_NOT_FOUND && j != NULL)
            ctrl__event(c, kind, &j->meta, "Warning", "WorkloadPriorityClassNotFound", "%s",
                        msg->text);
    }
    /* The pod-set templates as jobs_workload_build() read them: of the object prepared (a
     * RayJob without submitterPodTemplate gets KubeRay's default submitter, not the head's). */
    if (rc == ERR_OK && k->prepare != NULL) {
        prepared = json_deep_copy(obj);
        rc =
            prepared == NULL ? err_set(msg, ERR_NOMEM, "out of memory") : k->prepare(prepared, msg);
        if (rc == ERR_OK)
            obj = prepared;
    }
    if (rc == ERR_OK)
        rc = k->pod_sets(obj, ps, &n, msg);
    if (rc == ERR_OK) {
        out = wlstatus_for_job(&wl, k, obj, ps, n, c->api_version[kind], msg);
        if (out == NULL && msg->text[0] == '\0')
            err_set(msg, ERR_NOMEM, "out of memory");
    }
out:
    if (out == NULL)
        ctrl__log(c, CTRL_LOG_ERROR, "%s %s: no Workload: %s", k ? c->noun[kind] : "job", job_key,
                  msg->text);
    workload_fini(&wl);
    json_decref(prepared);
    json_decref(resolved);
    return out;
}

/* The job's kind: WL_CREATE holds the job busy ("<kind>:<key>"). */
static ctrl_kind_t create_kind(const ctrl_op_t *op)
{
    return (ctrl_kind_t)atoi(op->busy);
}

/* The job, fetched fresh (the cache keeps no pod template): build the Workload and POST it. */
static void on_job_fetched(const kube_result_t *res, void *data)
{
    ctrl_op_t *op = data;
    ctrl_t *c = op->c;
    char ns[256];
    err_msg_t msg = {{0}};
    kube_result_t r;

    memset(&r, 0, sizeof(r));
    r.reason = "";
    if (res->err != ERR_OK || c->closing || c->writes_stopped) {
        r = *res;
        r.canceled = r.canceled || c->closing || c->writes_stopped;
        ctrl__on_done(&r, op);
        return;
    }
    op->body = build_workload(c, create_kind(op), json_string_value(op->data), res->body, &msg);
    if (op->body == NULL) {
        r.err = err_set(&r.msg, ERR_INVALID, "%s", msg.text);
        op->verb = NULL;       /* not the API's answer: nothing to diagnose about the server */
        ctrl__on_done(&r, op); /* the Job's key backs off; a change to the Job comes back */
        return;
    }
    split_key(op->key, ns, sizeof(ns));
    if (kube_create(c->client, &c->res[CTRL_WORKLOAD], ns, op->body, ctrl__on_done, op, NULL,
                    &msg) != ERR_OK) {
        r.err = err_set(&r.msg, ERR_IO, "create Workload %s: %s", op->key, msg.text);
        op->verb = NULL;
        ctrl__on_done(&r, op);
    }
}

static bool send_create(ctrl_op_t *op)
{
    return get_data_key(op, create_kind(op), on_job_fetched);
}

static void create_workload(ctrl_t *c, ctrl_kind_t kind, const char *job_key, const char *wl_key)
{
    submit_with_key(c, ctrl__op_new(c, CTRL_OP_WL_CREATE, CTRL_WORKLOAD, wl_key, kind, job_key),
                    job_key, "create", send_create);
}

/* ---- the job reconciler ------------------------------------------------------------------ */

/* Is `j` managed: queue-name label, or manageJobsWithoutQueueName in a selected namespace? */
static bool managed(ctrl_t *c, const ctrl_job_t *j)
{
    const object_t *ns;

    if (j->queue_name != NULL)
        return true;
    if (!c->cfg->kueue.manage_jobs_without_queue_name)
        return false;
    ns = ctrl__q(c, CTRL_NAMESPACE, j->meta.namespace);
    return ns != NULL &&
           selector_matches(&c->cfg->kueue.managed_jobs_namespace_selector, &ns->u.ns.meta.labels);
}

/* Node labels and tolerations of every distinct flavor a pod set is assigned. */
static err_t flavor_info(ctrl_t *c, const pod_set_assignment_t *psa, json_t **nodes, json_t **tols,
                         err_msg_t *msg)
{
    json_t *n = json_object(), *t = json_array();
    err_t rc = ERR_OK;

    if (n == NULL || t == NULL) {
        rc = err_set(msg, ERR_NOMEM, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < psa->flavors.len && rc == ERR_OK; i++) {
        const char *fname = psa->flavors.items[i].value, *k;
        const ctrl_qobj_t *f = ctrl__qrec(c, CTRL_FLAVOR, fname);
        json_t *v, *tol;
        size_t j;
        if (f == NULL) {
            rc = err_set(msg, ERR_NOT_FOUND, "ResourceFlavor %s not found", fname);
            break;
        }
        json_object_foreach(json_object_get(f->keep, "nodeLabels"), k, v)
        {
            json_t *have = json_object_get(n, k);
            if (have != NULL && !json_equal(have, v)) {
                rc = err_set(msg, ERR_CONFLICT,
                             "invalid nodeSelector: conflict for key=%s, value1=%s, value2=%s", k,
                             json_string_value(have), json_string_value(v));
                break;
            }
            if (json_object_set(n, k, v))
                rc = err_set(msg, ERR_NOMEM, "out of memory");
        }
        json_array_foreach(json_object_get(f->keep, "tolerations"), j, tol)
        {
            bool dup = false;
            size_t x;
            json_t *h;
            json_array_foreach(t, x, h) dup = dup || json_equal(h, tol);
            if (!dup && json_array_append(t, tol))
                rc = err_set(msg, ERR_NOMEM, "out of memory");
        }
    }
out:
    if (rc != ERR_OK) {
        json_decref(n);
        json_decref(t);
        return rc;
    }
    *nodes = n;
    *tols = t;
    return ERR_OK;
}

static const char *node_label(void *ctx, const char *node, const char *key)
{
    return ctrl__node_label(ctx, node, key);
}

/* The node selector of pod set assignment `psa`'s topology assignment (podset.h) into `nodes`,
 * over the levels of its TAS flavor's Topology and the cached Nodes' labels. */
static err_t topology_selector(ctrl_t *c, const pod_set_assignment_t *psa, json_t *nodes,
                               err_msg_t *msg)
{
    const topology_t *t = NULL;

    for (size_t i = 0; i < psa->flavors.len && t == NULL; i++) {
        const object_t *f = ctrl__q(c, CTRL_FLAVOR, psa->flavors.items[i].value), *o;
        if (f != NULL && f->u.flavor.topology_name != NULL &&
            (o = ctrl__q(c, CTRL_TOPOLOGY, f->u.flavor.topology_name)) != NULL)
            t = &o->u.topology;
    }
    return podset_topology_selector(psa->topology, t ? t->levels : NULL, t ? t->nlevels : 0,
                                    node_label, c, nodes, NULL, msg);
}

/* Start job `job_key` of `kind` for the admitted Workload `w` (key `wl_key`): every pod set
 * gets the node labels and tolerations of its own assigned flavors. */
static void start_job(ctrl_t *c, ctrl_kind_t kind, const char *job_key, const char *wl_key,
                      const ctrl_wl_t *w)
{
    const jobs_kind_t *k = ctrl__jobs_kind(c, kind);
    const admission_t *a = w->wl.admission;
    json_t *nodes = json_array(), *tols = json_array(), *sets = json_array(), *info = NULL;
    err_msg_t msg = {{0}};
    err_t rc = nodes && tols && sets ? ERR_OK : ERR_NOMEM;

    if (a->nassignments == 0)
        rc = ERR_INVALID;
    for (size_t i = 0; i < a->nassignments && rc == ERR_OK; i++) {
        const pod_set_assignment_t *psa = &a->assignments[i];
        const ctrl_podset_t *ps = NULL;
        json_t *n = NULL, *t = NULL, *item;
        for (size_t p = 0; p < w->npodsets && ps == NULL; p++)
            if (psa->name != NULL && w->podsets[p].name != NULL &&
                strcmp(w->podsets[p].name, psa->name) == 0)
                ps = &w->podsets[p];
        rc = flavor_info(c, psa, &n, &t, &msg);
        if (rc == ERR_OK && psa->topology != NULL &&
            (rc = topology_selector(c, psa, n, &msg)) != ERR_OK) {
            json_decref(n);
            json_decref(t);
        }
        if (rc != ERR_OK)
            break;
        item = json_pack("{s:s}", "name", psa->name ? psa->name : "main");
        /* Kueue's TASLabel on the template of a pod set placed by topology */
        if (item != NULL && psa->topology != NULL &&
            json_object_set_new(item, "labels", json_pack("{s:s}", PODSET_LABEL_TAS, "true"))) {
            json_decref(item);
            item = NULL;
        }
        if (item != NULL && w->wl.ncheck_states > 0) {
            /* The admission checks' podSetUpdates go into the template with the flavors'. */
            json_t *labels = json_object(), *annotations = json_object();
            rc = labels && annotations
                     ? ctrl__checks_podset_updates(&w->wl, psa->name ? psa->name : "main", n, t,
                                                   labels, annotations, &msg)
                     : err_set(&msg, ERR_NOMEM, "out of memory");
            json_t *have = json_object_get(item, "labels"); /* the TAS label */
            if ((json_object_size(labels) > 0 &&
                 (have != NULL ? json_object_update_missing(have, labels)
                               : json_object_set(item, "labels", labels))) ||
                (json_object_size(annotations) > 0 &&
                 json_object_set(item, "annotations", annotations)))
                rc = err_set(&msg, ERR_NOMEM, "out of memory");
            json_decref(labels);
            json_decref(annotations);
            if (rc != ERR_OK) {
                json_decref(item);
                json_decref(n);
                json_decref(t);
                break;
            }
        }
        /* Partial admission: a pod set that allows it runs the admitted count. */
        if (item != NULL && k->set_count != NULL && psa->has_count && ps != NULL &&
            ps->has_min_count && psa->count < ps->count &&
            json_object_set_new(item, "count", json_integer(psa->count))) {
            json_decref(item);
            item = NULL;
        }
        /* The _new appends take their value even when they fail: no leak on any path. */
        if (json_array_append_new(nodes, n) | json_array_append_new(tols, t) |
            json_array_append_new(sets, item))
            rc = err_set(&msg, ERR_NOMEM, "out of memory");
    }
    if (rc == ERR_NOT_FOUND) {
        ctrl__log(c, CTRL_LOG_INFO, "%s %s: waiting: %s", c->noun[kind], job_key, msg.text);
        goto out; /* the flavor's informer event brings us back */
    }
    if (rc == ERR_CONFLICT) {
        /* Flavors that contradict each other cannot be satisfied: as a template conflict. */
        WL_PATCH(c, CTRL_OP_WL_FINISH, wl_key, w,
                 wlstatus_finish_patch(wl, "FailedToStart", msg.text, ctrl__now_ms() / 1000));
        goto out;
    }
    if (rc == ERR_OK)
        info = json_pack("{s:s?,s:s,s:s,s:O}", "localQueue", w->wl.queue_name, "clusterQueue",
                         a->cluster_queue, "workload", w->wl.meta.name, "podSets", sets);
    if (info != NULL)
        job_write(c, CTRL_OP_JOB_START, kind, job_key, info, nodes, tols);
    else if (rc != ERR_INVALID)
        ctrl__log(c, CTRL_LOG_ERROR, "%s %s: out of memory starting it", c->noun[kind], job_key);
out:
    json_decref(info);
    json_decref(sets);
    json_decref(nodes);
    json_decref(tols);
}

/* Is the held job `j` back to its Workload's pod sets (templates and, after a partial
 * admission, counts)? */
static bool restored(const ctrl_job_t *j, const ctrl_wl_t *w)
{
    if (j->digest != w->podset_digest || j->stopping)
        return false;
    for (size_t i = 0; i < w->npodsets && i < j->npod_sets; i++)
        if (w->podsets[i].has_min_count && j->counts[i] != w->podsets[i].count)
            return false;
    return true;
}

/* One step of stopping the job (reference 3.7); true when it is fully stopped and restored. */
static bool stop_step(ctrl_t *c, ctrl_kind_t kind, const char *job_key, const ctrl_job_t *j,
                      const char *wl_key, const ctrl_wl_t *w, const char *why)
{
    if (!j->suspended) {
        ctrl__event(c, kind, &j->meta, "Normal", "Stopped", "%s", why);
        job_write(c, CTRL_OP_JOB_SUSPEND, kind, job_key, NULL, NULL, NULL);
        return false;
    }
    if (j->active)
        return false; /* the pods are still going away; restore once they are gone */
    if (w != NULL && !restored(j, w)) {
        if (j->has_start_time) {
            /* A Job's template is immutable while startTime is set (Kubernetes rule). */
            ctrl_op_t *op = ctrl__op_new(c, CTRL_OP_JOB_CLEAR_START, kind, job_key, kind, job_key);
            json_t *patch = json_pack("{s:{s:n}}", "status", "startTime");
            if (op != NULL && patch != NULL)
                ctrl__patch(c, op, "status", patch);
            else
                ctrl__op_free(op);
            json_decref(patch);
            return false;
        }
        restore_job(c, kind, job_key, wl_key);
        return false;
    }
    return true;
}

/* waitForPodsReady: bring the Workload's PodsReady condition in line with the job's ready pods
 * (reference 3.5 step 8, before the eviction handling as in Kueue). True when a write went out. */
static bool sync_pods_ready(ctrl_t *c, const char *wkey, const ctrl_wl_t *w, const ctrl_job_t *j)
{
    json_t *view = ctrl_wl_json(w), *patch = NULL;
    podsready_cond_t want;
    bool changed = false;

    if (view == NULL)
        return false;
    want = podsready_condition(view, j->pods_ready);
    patch = wlstatus_cond_patch(view, "PodsReady", want.status, want.reason, want.message,
                                ctrl__now_ms() / 1000, &changed);
    json_decref(view);
    if (!changed)
        return false;
    ctrl__log(c, CTRL_LOG_DEBUG, "workload %s: PodsReady=%s %s", wkey, want.status, want.reason);
    wl_status(c, CTRL_OP_WL_PODSREADY, wkey, patch);
    return true;
}

/* Write status.reclaimablePods from `counts` (JOBS_PODSETS_MAX, one per pod set of the Workload,
 * each capped at its pod set's count, as Kueue's LimitReclaimablePodsToPodSetSizes) unless the
 * Workload already says so. True when a write went out. */
bool ctrl__write_reclaimable(ctrl_t *c, const char *wkey, const ctrl_wl_t *w, const int32_t *counts)
{
    json_t *want = json_array(), *patch;
    size_t have = 0, i;
    bool same = true;

    if (want == NULL)
        return false;
    for (i = 0; i < w->npodsets && i < JOBS_PODSETS_MAX; i++) {
        const ctrl_podset_t *ps = &w->podsets[i];
        int32_t n = counts[i] < ps->count ? counts[i] : ps->count;
        bool found = false;
        if (n <= 0 || ps->name == NULL)
            continue;
        have++;
        for (size_t r = 0; r < w->wl.nreclaimable_pods && !found; r++) {
            const reclaimable_pod_t *rp = &w->wl.reclaimable_pods[r];
            found = rp->name != NULL && strcmp(rp->name, ps->name) == 0 && rp->count == n;
        }
        same = same && found;
        if (json_array_append_new(want, json_pack("{s:s,s:i}", "name", ps->name, "count", n))) {
            json_decref(want);
            return false;
        }
    }
    if (same && have == w->wl.nreclaimable_pods) {
        json_decref(want);
        return false;
    }
    patch = json_pack("{s:{s:o}}", "status", "reclaimablePods", want);
    ctrl__log(c, CTRL_LOG_INFO, "workload %s: %zu pod set(s) with reclaimable pods", wkey, have);
    wl_status(c, CTRL_OP_WL_RECLAIM, wkey, patch);
    return true;
}

/* Kueue's reconciler step 4: the Workload's status.reclaimablePods follow the job's pods done
 * for good (its kind's reclaimable()), so that the engine releases their quota while the rest
 * runs (sched_workload_upsert). True when a write went out. */
static bool sync_reclaimable(ctrl_t *c, const char *wkey, const ctrl_wl_t *w, const ctrl_job_t *j)
{
    int32_t counts[JOBS_PODSETS_MAX] = {0};

    for (size_t i = 0;
         j->reclaim != NULL && i < j->npod_sets && i < w->npodsets && i < JOBS_PODSETS_MAX; i++)
        counts[i] = j->reclaim[i];
    return ctrl__write_reclaimable(c, wkey, w, counts);
}

/* A held job's kueue.x-k8s.io/priority-class label changed: its not-reserved Workload follows
 * (Kueue's UpdateWorkloadPriority), with the WorkloadPriorityClass's value. */
static void sync_priority(ctrl_t *c, const char *job_key, const char *wkey, const ctrl_wl_t *w,
                          const ctrl_job_t *j)
{
    const char *want = j->priority;
    const object_t *wpc;
    json_t *patch;
    ctrl_op_t *op;

    if (want == NULL || want[0] == '\0' ||
        (w->wl.priority_kind == PRIORITY_SOURCE_WORKLOAD_PRIORITY_CLASS &&
         w->wl.priority_class != NULL && strcmp(w->wl.priority_class, want) == 0))
        return;
    wpc = ctrl__q(c, CTRL_WPC, want);
    if (wpc == NULL) {
        ctrl__log(c, CTRL_LOG_DEBUG, "job %s: WorkloadPriorityClass %s not found: priority kept",
                  job_key, want);
        return;
    }
    patch = json_pack("{s:{s:s?},s:{s:{s:s,s:s,s:s},s:i}}", "metadata", "resourceVersion",
                      w->wl.meta.resource_version, "spec", "priorityClassRef", "group",
                      "kueue.x-k8s.io", "kind", "WorkloadPriorityClass", "name", want, "priority",
                      (int)wpc->u.wpc.value);
    op = patch ? ctrl__op_new(c, CTRL_OP_WL_PRIORITY, CTRL_WORKLOAD, wkey, CTRL_WORKLOAD, wkey)
               : NULL;
    if (op != NULL) {
        ctrl__log(c, CTRL_LOG_INFO, "workload %s: priority class %s (%d) from job %s", wkey, want,
                  (int)wpc->u.wpc.value, job_key);
        ctrl__patch(c, op, NULL, patch);
    }
    json_decref(patch);
}

/* Is `j` the child of an object Kueue admits as a whole (its controller owner of an enabled
 * kind or an external framework): the parent's Workload covers its pods (reference 3.1). */
static bool child(ctrl_t *c, const ctrl_job_t *j)
{
    return jobparent_kind(c->cfg, j->owner.api_version, j->owner.kind);
}

/* ---- child jobs (Kueue's FindAncestorJobManagedByKueue + shouldSuspendChildJob) ---------- */

/* Kueue walks controller owners up to this many levels (managedOwnersChainLimit). */
#define CHILD_CHAIN_MAX 10

/*
 * A job whose controller owner is of a kind Kueue admits whole is a child: walk its owners to the
 * topmost one that is managed (has a queue name, or manageJobsWithoutQueueName holds). An owner
 * of a watched kind is read from its cache; one of an integrations.externalFrameworks kind
 * (AppWrapper, ...) is read with a GET (extowner.c) -- the child is looked at again when it has
 * been read. None managed: it is a top-level job after all (false: the caller reconciles it as
 * one). One: the ancestor's Workload covers it (for an external ancestor, the newest not finished
 * Workload its controller made, found by owner uid), and while that Workload is missing, finished
 * or not admitted a running child is suspended ("Kueue managed child job suspended"); an
 * admitted ancestor's children are left to its controller. An owner of a watched kind not cached
 * yet is looked at again after a backoff; a uid that does not match, or an owner of a kind
 * neither watched nor external, stops the walk.
 */
bool ctrl__child_job(ctrl_t *c, ctrl_kind_t kind, const char *key, const ctrl_job_t *j)
{
    const ctrl_owner_t *ref = &j->owner;
    const ctrl_job_t *top = NULL;
    const ctrl_extowner_t *top_ext = NULL;
    ctrl_kind_t top_kind = CTRL__KINDS;
    const char *ns = j->meta.namespace ? j->meta.namespace : "";
    char pkey[CTRL_KEY_MAX], wname[JOB_WORKLOAD_NAME_MAX + 1], wkey[CTRL_KEY_MAX];
    const ctrl_wl_t *w;

    for (int depth = 0; depth < CHILD_CHAIN_MAX && ref->kind != NULL; depth++) {
        ctrl_kind_t pk = ctrl__job_kind(c, ref->api_version, ref->kind);
        const ctrl_job_t *p;
        if (pk == CTRL__KINDS) {
            const ctrl_extowner_t *e = NULL;
            if (!jobparent_external(c->cfg, ref->api_version, ref->kind))
                break;
            switch (ctrl__extowner(c, ns, ref, kind, key, &e)) {
            case CTRL_EXT_PENDING:
                return true; /* reconciled again once it has been read */
            case CTRL_EXT_GONE:
                if (top == NULL && top_ext == NULL)
                    return true; /* as Kueue: an owner it cannot read leaves the child alone */
                e = NULL;
                break;
            case CTRL_EXT_FOUND:
                break;
            }
            if (e == NULL || (ref->uid != NULL && e->uid != NULL && strcmp(ref->uid, e->uid)))
                break; /* gone, or the reference names another object of that name */
            /* Kueue's test for an ancestor: a queue name, or manageJobsWithoutQueueName. */
            if ((e->queue_name != NULL && e->queue_name[0] != '\0') ||
                c->cfg->kueue.manage_jobs_without_queue_name) {
                top_ext = e;
                top = NULL;
            }
            ref = &e->owner;
            continue;
        }
        snprintf(pkey, sizeof(pkey), "%s/%s", ns, ref->name ? ref->name : "");
        p = ctrl__job(c, pk, pkey);
        if (p == NULL) {
            char b[CTRL_KEY_MAX + 8];
            if (top != NULL || top_ext != NULL)
                break;
            ctrl__kind_key(kind, key, b, sizeof(b));
            if (ctrl_wq_fail(&c->jobs_q, b, uv_now(c->loop)) != ERR_OK)
                ctrl__log(c, CTRL_LOG_ERROR, "out of memory requeueing %s", key);
            return true;
        }
        if (ref->uid != NULL && p->meta.uid != NULL && strcmp(ref->uid, p->meta.uid))
            break; /* the reference names another object of that name */
        if (!p->skip && managed(c, p)) {
            top = p;
            top_kind = pk;
            top_ext = NULL;
        }
        ref = &p->owner;
    }
    if (top == NULL && top_ext == NULL)
        return false;
    if (j->phase != JOBS_RUNNING || j->suspended)
        return true;
    if (top_ext != NULL) {
        w = top_ext->uid != NULL ? ctrl__extowner_workload(c, top_ext->uid) : NULL;
    } else {
        if (top->meta.name == NULL ||
            jobs_workload_name(ctrl__jobs_kind(c, top_kind), top->meta.name, top->meta.uid,
                               JOB_WORKLOAD_NAME_MAX, wname, sizeof(wname), NULL) != ERR_OK)
            return true;
        snprintf(wkey, sizeof(wkey), "%s/%s", top->meta.namespace ? top->meta.namespace : "",
                 wname);
        w = ctrl__wl(c, wkey);
    }
    if (w != NULL && !w->wl.conditions.finished && ctrl_wl_reserved(w) && w->wl.conditions.admitted)
        return true;
    ctrl__event(c, kind, &j->meta, "Normal", "Suspended", "Kueue managed child job suspended");
    ctrl__log(c, CTRL_LOG_INFO, "%s %s: suspended: its %s %s is not admitted", c->noun[kind], key,
              top_ext != NULL ? "owner" : c->noun[top_kind],
              top_ext != NULL ? (j->owner.name ? j->owner.name : "") : top->meta.name);
    {
        json_t *child_mark = json_string("child"); /* no stopping annotation: nothing to restore */
        if (child_mark != NULL)
            job_write(c, CTRL_OP_JOB_SUSPEND, kind, key, child_mark, NULL, NULL);
        json_decref(child_mark);
    }
    return true;
}

void ctrl__reconcile_job(ctrl_t *c, ctrl_kind_t kind, const char *key)
{
    const jobs_kind_t *k = ctrl__jobs_kind(c, kind);
    const ctrl_job_t *j = ctrl__job(c, kind, key);
    const ctrl_wl_t *w;
    const object_meta_t *m;
    char wname[JOB_WORKLOAD_NAME_MAX + 1], wkey[CTRL_KEY_MAX];
    err_msg_t msg = {{0}};
    bool reserved, evicted;

    if (k != NULL && k->admit != JOBS_ADMIT_OBJECT) {
        ctrl__reconcile_pods(c, kind, key); /* held by its gate: pods.c */
        return;
    }
    if (k != NULL && k->resolve != NULL && j == NULL)
        ctrl__deps_report(c, kind, key, true, NULL); /* deleted: forget what it was told */
    if (k == NULL || j == NULL || ctrl__busy(c, kind, key))
        return;
    if (k->resolve != NULL && (!j->unresolved || managed(c, j)))
        ctrl__deps_report(c, kind, key, !j->unresolved, j->invalid);
    if (!j->valid) {
        ctrl__log(c, CTRL_LOG_DEBUG, "%s %s: not reconciled: %s", c->noun[kind], key, j->invalid);
        return;
    }
    m = &j->meta;
    if (child(c, j) && ctrl__child_job(c, kind, key, j)) {
        ctrl__log(c, CTRL_LOG_DEBUG, "%s %s: owned by %s %s: no Workload of its own", c->noun[kind],
                  key, j->owner.kind, j->owner.name ? j->owner.name : "");
        return;
    }
    if (j->skip || !managed(c, j) || m->namespace == NULL || m->name == NULL ||
        jobs_workload_name(k, m->name, m->uid, JOB_WORKLOAD_NAME_MAX, wname, sizeof(wname), &msg) !=
            ERR_OK)
        return;
    snprintf(wkey, sizeof(wkey), "%s/%s", m->namespace, wname);
    if (ctrl__busy(c, CTRL_WORKLOAD, wkey))
        return;
    w = ctrl__wl(c, wkey);

    if (j->phase != JOBS_RUNNING) {
        if (w != NULL && !w->wl.conditions.finished) {
            WL_PATCH(c, CTRL_OP_WL_FINISH, wkey, w,
                     wlstatus_finish_patch(wl, j->phase == JOBS_SUCCEEDED ? "Succeeded" : "Failed",
                                           j->message ? j->message : "", ctrl__now_ms() / 1000));
        } else if (w != NULL && w->finalizer) {
            remove_finalizer(c, wkey, w);
        }
        return;
    }
    if (w == NULL) {
        if (!j->suspended)
            stop_step(c, kind, key, j, wkey, NULL, "Not admitted by cluster queue");
        else if (!j->active && !m->deleting)
            create_workload(c, kind, key, wkey);
        return;
    }
    if (!w->valid)
        return;
    if (w->wl.meta.deleting) {
        if (stop_step(c, kind, key, j, wkey, NULL, "Workload is being deleted") && w->finalizer)
            remove_finalizer(c, wkey, w);
        return;
    }
    if (w->wl.conditions.finished) {
        if (w->finalizer)
            remove_finalizer(c, wkey, w);
        return;
    }
    if (sync_reclaimable(c, wkey, w, j))
        return;
    if (c->cfg->pods_ready.enabled && sync_pods_ready(c, wkey, w, j))
        return;
    reserved = ctrl_wl_reserved(w);
    evicted = w->wl.conditions.evicted || !w->wl.active;
    if (reserved && evicted) {
        const condition_t *ev = ctrl_wl_cond(w, "Evicted");
        /* A deactivation whose Evicted condition is not written yet (a Job that never started
         * stops at once) releases after it: the release reads the eviction's reason. */
        if (stop_step(c, kind, key, j, wkey, w, ev && ev->message ? ev->message : "Evicted") &&
            (w->wl.conditions.evicted || ctrl__eviction(c, wkey) == NULL))
            WL_PATCH(c, CTRL_OP_WL_RELEASE, wkey, w,
                     wlstatus_release_patch(wl, ctrl__now_ms() / 1000));
    } else if (reserved && w->wl.conditions.admitted) {
        if (j->suspended && j->stopping)
            stop_step(c, kind, key, j, wkey, w, "Stopping"); /* restore first, then start */
        else if (j->suspended)
            start_job(c, kind, key, wkey, w);
    } else if (!reserved) {
        const char *want = j->queue_name;
        const char *have = w->wl.queue_name;
        if (!stop_step(c, kind, key, j, wkey, w, "Not admitted by cluster queue"))
            return;
        if (want != NULL && (have == NULL || strcmp(want, have) != 0)) {
            /* A held job moved to another LocalQueue: so does its Workload. */
            json_t *patch = json_pack("{s:{s:s?},s:{s:s}}", "metadata", "resourceVersion",
                                      w->wl.meta.resource_version, "spec", "queueName", want);
            ctrl_op_t *op =
                patch ? ctrl__op_new(c, CTRL_OP_WL_QUEUE, CTRL_WORKLOAD, wkey, CTRL_WORKLOAD, wkey)
                      : NULL;
            if (op != NULL)
                ctrl__patch(c, op, NULL, patch);
            json_decref(patch);
        } else {
            sync_priority(c, key, wkey, w, j);
        }
    }
}

/* ---- the Workload reconciler ------------------------------------------------------------- */

static bool send_delete(ctrl_op_t *op)
{
    char ns[256];
    const char *name = split_key(op->key, ns, sizeof(ns));

    return name != NULL && kube_delete(op->c->client, &op->c->res[CTRL_WORKLOAD], ns, name, NULL,
                                       ctrl__on_done, op, NULL, NULL) == ERR_OK;
}

void ctrl__reconcile_wl(ctrl_t *c, const char *key)
{
    const ctrl_wl_t *w = ctrl__wl(c, key);
    const ctrl_job_t *j;
    char owner[CTRL_KEY_MAX];
    const char *uid = NULL;
    ctrl_kind_t kind;

    if (w == NULL)
        return;
    if (ctrl__busy(c, CTRL_WORKLOAD, key)) {
        ctrl__log(c, CTRL_LOG_DEBUG, "workload %s: reconcile skipped (a write in flight)", key);
        return;
    }
    ctrl__prov_wl(c, key, w); /* the ProvisioningRequest checks (provctl.c) */
    if (ctrl__owner_job(c, w, &kind, owner, sizeof(owner), &uid) != NULL) {
        j = ctrl__job(c, kind, owner);
        if (j != NULL && (uid == NULL || (j->meta.uid != NULL && strcmp(uid, j->meta.uid) == 0))) {
            ctrl__mark_job(c, kind, owner);
            /* A serving owner's Workload (a LeaderWorkerSet replica's) is started and stopped
             * through its pod group (pods.c); before its Pods exist, as a Workload created
             * directly (below). */
            if (ctrl__jobs_kind(c, kind)->admit != JOBS_ADMIT_PODS || ctrl__pods_wl(c, key))
                return;
            goto direct;
        }
        /* Orphaned: its job is gone. Release the finalizer, then delete it (the garbage
         * collector would too; doing it here does not depend on one running). */
        if (w->finalizer) {
            remove_finalizer(c, key, w);
        } else if (!w->wl.meta.deleting) {
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
    if (ctrl__pods_wl(c, key))
        return; /* a pod group's: its Pods' reconcile (pods.c) */
    if (ctrl__pods_orphan(c, key, w))
        return; /* a pod group's whose Pods are all gone */
direct:
    /* A Workload created directly: nothing to start or stop. */
    if (!w->valid)
        return;
    if (w->wl.meta.deleting) {
        if (w->finalizer)
            remove_finalizer(c, key, w);
        return;
    }
    if (ctrl_wl_reserved(w) && w->wl.conditions.evicted && !w->wl.conditions.finished)
        WL_PATCH(c, CTRL_OP_WL_RELEASE, key, w, wlstatus_release_patch(wl, ctrl__now_ms() / 1000));
}

/* ---- continuations ----------------------------------------------------------------------- */

void ctrl__job_done(ctrl_t *c, ctrl_op_t *op, const kube_result_t *res)
{
    err_msg_t msg = {{0}};
    const ctrl_job_t *j;
    ctrl_kind_t kind;
    ctrl_wl_t *w;

    switch (op->op) {
    case CTRL_OP_WL_CREATE:
        j = ctrl__job(c, create_kind(op), json_string_value(op->data));
        if (res->err == ERR_OK) {
            c->stats.created++;
            if (j != NULL)
                ctrl__event(c, create_kind(op), &j->meta, "Normal", "CreatedWorkload",
                            "Created Workload: %s", op->key);
        }
        break;
    case CTRL_OP_WL_RELEASE:
        if (res->err == ERR_OK) {
            c->stats.released++;
            ctrl__eviction_drop(c, op->key);
            ctrl__metrics_release(c, op->key, ctrl__now_ms());
            if (sched_evicted(c->sched, op->key, ctrl__now_ms(), &msg) != ERR_OK)
                ctrl__log(c, CTRL_LOG_DEBUG, "engine: evicted %s: %s", op->key, msg.text);
            w = util_hmap_get(&c->overlay[CTRL_WORKLOAD], op->key);
            if (w != NULL)
                ctrl__engine_wl(c, op->key, w);
            ctrl__log(c, CTRL_LOG_INFO, "workload %s: quota released, requeued", op->key);
        }
        break;
    case CTRL_OP_WL_FINISH:
        if (res->err == ERR_OK) {
            char owner[CTRL_KEY_MAX];
            c->stats.finished++;
            ctrl__estimate_finished(c, op->key); /* its runtime, for start-time estimates */
            ctrl__metrics_release(c, op->key, ctrl__now_ms());
            sched_workload_finish(c->sched, op->key, ctrl__now_ms(), NULL);
            c->queue_dirty = true;
            w = util_hmap_get(&c->overlay[CTRL_WORKLOAD], op->key);
            j = w != NULL && ctrl__owner_job(c, w, &kind, owner, sizeof(owner), NULL) != NULL
                    ? ctrl__job(c, kind, owner)
                    : NULL;
            if (j != NULL)
                ctrl__event(c, kind, &j->meta, "Normal", "FinishedWorkload",
                            "Workload '%s' is declared finished", op->key);
            ctrl__log(c, CTRL_LOG_INFO, "workload %s: finished", op->key);
        }
        break;
    case CTRL_OP_WL_REPLACE:
        if (res->err != ERR_OK)
            ctrl__log(c, CTRL_LOG_ERROR,
                      "workload %s: replaced topology assignment not written (%s): the engine "
                      "keeps it, the API the old one until a restart",
                      op->key, res->msg.text);
        break;
    case CTRL_OP_WL_UNHEALTHY:
        ctrl__nodes_unhealthy_done(c, op, res);
        break;
    case CTRL_OP_WL_BACKOFF:
    case CTRL_OP_WL_PRIORITY:
    case CTRL_OP_WL_HOLD:
        if (res->err == ERR_OK) {
            /* Feed the engine now (unheld / new priority / on hold or out of it) rather than at
             * the watch event. */
            w = util_hmap_get(&c->overlay[CTRL_WORKLOAD], op->key);
            if (w != NULL)
                ctrl__engine_wl(c, op->key, w);
            if (op->op == CTRL_OP_WL_BACKOFF)
                ctrl__log(c, CTRL_LOG_INFO, "workload %s: requeue backoff finished", op->key);
        }
        break;
    case CTRL_OP_JOB_START:
        if (op->mutate_failed) {
            const char *wname = json_string_value(json_object_get(op->data, "workload"));
            char wkey[CTRL_KEY_MAX], ns[256];
            const ctrl_wl_t *cur;
            split_key(op->key, ns, sizeof(ns));
            snprintf(wkey, sizeof(wkey), "%s/%s", ns, wname ? wname : "");
            cur = ctrl__wl(c, wkey);
            ctrl__log(c, CTRL_LOG_ERROR, "%s %s: cannot start: %s", c->noun[op->kind], op->key,
                      op->mutate_msg.text);
            if (cur != NULL && !cur->wl.conditions.finished && !ctrl__busy(c, CTRL_WORKLOAD, wkey))
                WL_PATCH(c, CTRL_OP_WL_FINISH, wkey, cur,
                         wlstatus_finish_patch(wl, "FailedToStart", op->mutate_msg.text,
                                               ctrl__now_ms() / 1000));
        } else if (res->err == ERR_OK && op->changed && json_is_object(res->body) &&
                   OP_KIND(op)->suspended(res->body)) {
            /* A kind started in two writes (TrainJob: its runtimePatches entry may change only
             * while it is held): the admission is written, the release is the next pass's. */
            ctrl__log(c, CTRL_LOG_INFO, "%s %s: admission written while held; released next",
                      c->noun[op->kind], op->key);
        } else if (res->err == ERR_OK && op->changed) {
            const char *cq = json_string_value(json_object_get(op->data, "clusterQueue"));
            j = util_hmap_get(&c->overlay[op->kind], op->key);
            c->stats.started++;
            if (j != NULL)
                ctrl__event(c, op->kind, &j->meta, "Normal", "Started",
                            "Admitted by clusterQueue %s", cq ? cq : "");
            ctrl__log(c, CTRL_LOG_INFO, "%s %s: started", c->noun[op->kind], op->key);
        }
        break;
    case CTRL_OP_JOB_SUSPEND:
        if (res->err == ERR_OK && op->changed && json_is_object(res->body) &&
            !OP_KIND(op)->suspended(res->body)) {
            /* The server dropped the field (batch/v1 before Kubernetes 1.21): asking again
             * would loop. Say why, and wait for the job's next change instead. */
            ctrl__log(c, CTRL_LOG_ERROR,
                      "%s %s: the API server dropped spec.suspend (batch/v1 Jobs before "
                      "Kubernetes 1.21 cannot be suspended; see --job-resource)",
                      c->noun[op->kind], op->key);
            return;
        }
        if (res->err == ERR_OK && op->changed) {
            c->stats.stopped++;
            ctrl__log(c, CTRL_LOG_INFO, "%s %s: suspended", c->noun[op->kind], op->key);
        }
        break;
    default:
        break;
    }
    /* Whatever happened, look at the job (and through it the Workload) again. */
    if (ctrl__is_job(c, op->kind))
        ctrl__mark_job(c, op->kind, op->key);
    else if (op->op == CTRL_OP_WL_CREATE)
        ctrl__mark_job(c, create_kind(op), json_string_value(op->data));
    else
        ctrl__mark_wl(c, op->key);
}

/* ---- shared with pods.c and children.c ----------------------------------------------------- */

bool ctrl__job_managed(ctrl_t *c, const ctrl_job_t *j)
{
    return managed(c, j);
}

err_t ctrl__flavor_info(ctrl_t *c, const pod_set_assignment_t *psa, json_t **nodes, json_t **tols,
                        err_msg_t *msg)
{
    return flavor_info(c, psa, nodes, tols, msg);
}

err_t ctrl__resolve_priority(ctrl_t *c, const json_t *obj, workload_t *wl, err_msg_t *msg)
{
    return resolve_priority(c, obj, wl, msg);
}

void ctrl__create_workload(ctrl_t *c, ctrl_kind_t kind, const char *job_key, const char *wl_key)
{
    create_workload(c, kind, job_key, wl_key);
}

void ctrl__wl_remove_finalizer(ctrl_t *c, const char *key, const ctrl_wl_t *w)
{
    remove_finalizer(c, key, w);
}

void ctrl__wl_status(ctrl_t *c, ctrl_op_kind_t kind, const char *key, json_t *patch)
{
    wl_status(c, kind, key, patch);
}

bool ctrl__sync_pods_ready(ctrl_t *c, const char *wkey, const ctrl_wl_t *w, bool pods_ready)
{
    ctrl_job_t view;

    memset(&view, 0, sizeof(view));
    view.pods_ready = pods_ready; /* all sync_pods_ready() reads of the job */
    return sync_pods_ready(c, wkey, w, &view);
}
