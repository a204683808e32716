/* pods -- plain Pods and pod groups under quota: Kueue's pod integration, through the gate. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "ctrl/ctrl_int.h"

#include "ctrl/cond.h"
#include "ctrl/wlstatus.h"
#include "jobs/framework.h"
#include "jobs/job_workload.h"
#include "jobs/kind_serving.h"
#include "jobs/objpath.h"
#include "jobs/podgroup.h"
#include "model/jsonx.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * A Pod is held by the scheduling gate kueue.x-k8s.io/admission, which the pod webhook puts on it
 * at creation (with the label and finalizer kueue.x-k8s.io/managed). It cannot be held again once
 * released -- the API server lets gates be removed, never added -- so where a Job is suspended a
 * Pod is deleted. The unit of admission is a single Pod (its Workload named as Kueue names a Pod's,
 * owned by it) or a pod group (the Pods labelled kueue.x-k8s.io/pod-group-name=G in a namespace:
 * one Workload named G, owned by all of them). Both are reconciled here, one unit at a time, from
 * the Pods' skeletons in the cache (records.h: no containers) and the Workload:
 *
 *   group: excess Pods (beyond the total count)   -> finalizer removed, deleted
 *          inactive Pods (failed, or deleted before they ran) -> finalizer removed
 *   single Pod being deleted  -> Workload finalizer, then the Pod's, removed (Kueue's finalize)
 *   finished (phases)         -> Workload Finished -> Pods' finalizers, Workload's, removed
 *   no Workload               -> released Pods deleted; else create it (a group once complete)
 *   Workload being deleted    -> every Pod deleted, even finished ones -> its finalizer removed
 *   reserved + evicted        -> released Pods: TerminationTarget, deleted -> (none running)
 *                                quota released (admission cleared, requeued)
 *   reserved + admitted       -> each gated Pod: the flavors merged in, the gate removed
 *   not reserved              -> released Pods deleted ("Not admitted by cluster queue")
 *
 * Several writes may go out in one pass, one per Pod (each holds its Pod busy) and at most one on
 * the Workload. A group is queued on the jobs' queue as "@ns/name" ('@' is in no object name);
 * each change of one of its Pods queues it.
 */

#define GROUP_MARK '@'

/* One unit: a single Pod or a pod group, and its Workload. */
typedef struct unit_s {
    ctrl_kind_t kind;
    bool group;
    char ns[256];
    char name[256];          /* the Pod's, or the group's */
    char ukey[CTRL_KEY_MAX]; /* what the jobs' queue reconciles: "ns/pod" or "@ns/group" */
    char wkey[CTRL_KEY_MAX]; /* its Workload's key */
    size_t n, cap;
    json_t **pods;           /* owned array of borrowed skeletons (records) */
    const ctrl_job_t **recs; /* owned array of borrowed records */
    jobs_pod_group_t g;      /* group: read from the skeletons */
    bool have_g;
    bool active; /* a Pod still runs (groups only: a single Pod is never active) */
} unit_t;

static void unit_fini(unit_t *u)
{
    if (u->have_g)
        jobs_pod_group_fini(&u->g);
    free(u->pods);
    free(u->recs);
}

static err_t unit_add(unit_t *u, const ctrl_job_t *j)
{
    if (u->n == u->cap) {
        size_t cap = u->cap ? u->cap * 2 : 8;
        json_t **p = realloc(u->pods, cap * sizeof(*p));
        if (p == NULL)
            return ERR_NOMEM;
        u->pods = p;
        const ctrl_job_t **r = realloc(u->recs, cap * sizeof(*r));
        if (r == NULL)
            return ERR_NOMEM;
        u->recs = r;
        u->cap = cap;
    }
    u->pods[u->n] = j->pod;
    u->recs[u->n] = j;
    u->n++;
    return ERR_OK;
}

static const char *pod_ns(const ctrl_job_t *j)
{
    return j->meta.namespace ? j->meta.namespace : "";
}

/* The group name of cached Pod `j`, or NULL. */
static const char *group_of(const ctrl_job_t *j)
{
    return j->pod != NULL ? jobs_pod_group_name(j->pod) : NULL;
}

/* The group key "ns/group" of cached Pod `j` into buf, or NULL when it is in no group. */
static const char *group_key(const ctrl_job_t *j, char *buf, size_t n)
{
    const char *g = j != NULL ? group_of(j) : NULL;

    if (g == NULL)
        return NULL;
    snprintf(buf, n, "%s/%s", pod_ns(j), g);
    return buf;
}

/* Collect the cached Pods of group `name` in `ns` (the freshest version of each): the group
 * index's members, each checked against its freshest view (an overlay newer than the cache may
 * say otherwise until the watch catches up, and the change then queues the group again). */
static err_t gather(ctrl_t *c, unit_t *u)
{
    char gk[CTRL_KEY_MAX];
    const char *const *keys;
    size_t n;

    snprintf(gk, sizeof(gk), "%s/%s", u->ns, u->name);
    podindex_members(&c->pod_groups, gk, &keys, &n);
    for (size_t i = 0; i < n; i++) {
        const ctrl_job_t *j = ctrl__job(c, u->kind, keys[i]);
        const char *g = j != NULL ? group_of(j) : NULL;
        if (g != NULL && strcmp(g, u->name) == 0 && strcmp(pod_ns(j), u->ns) == 0 &&
            unit_add(u, j) != ERR_OK)
            return ERR_NOMEM;
    }
    return ERR_OK;
}

void ctrl__pods_index(ctrl_t *c, const char *key, const ctrl_job_t *rec, const ctrl_job_t *old)
{
    char ok[CTRL_KEY_MAX], nk[CTRL_KEY_MAX] = "";

    if (podindex_move(&c->pod_groups, key, group_key(old, ok, sizeof(ok)),
                      group_key(rec, nk, sizeof(nk))) != ERR_OK)
        ctrl__log(c, CTRL_LOG_ERROR, "pod %s: out of memory indexing its group %s", key, nk);
}

/* ---- Pod writes ---------------------------------------------------------------------------- */

static bool has_finalizer(const json_t *pod)
{
    size_t i;
    json_t *f;

    json_array_foreach(json_object_get(json_object_get(pod, "metadata"), "finalizers"), i, f)
    {
        if (json_is_string(f) && strcmp(json_string_value(f), JOBS_POD_MANAGED) == 0)
            return true;
    }
    return false;
}

static bool pod_deleting(const json_t *pod)
{
    return json_object_get(json_object_get(pod, "metadata"), "deletionTimestamp") != NULL;
}

/* Merge patch: metadata.finalizers without kueue.x-k8s.io/managed, at the Pod's version. */
static void pod_unfinalize(ctrl_t *c, unit_t *u, const ctrl_job_t *j)
{
    char key[CTRL_KEY_MAX];
    json_t *list = json_array(), *patch = NULL, *f;
    ctrl_op_t *op = NULL;
    size_t i;

    ctrl__meta_key(&j->meta, key, sizeof(key));
    if (list == NULL || ctrl__busy(c, u->kind, key))
        goto out;
    json_array_foreach(json_object_get(json_object_get(j->pod, "metadata"), "finalizers"), i, f)
    {
        if (!(json_is_string(f) && strcmp(json_string_value(f), JOBS_POD_MANAGED) == 0) &&
            json_array_append(list, f))
            goto out;
    }
    patch = json_pack("{s:{s:O,s:s?}}", "metadata", "finalizers", list, "resourceVersion",
                      j->meta.resource_version);
    op = patch != NULL ? ctrl__op_new(c, CTRL_OP_POD_FINALIZER, u->kind, key, u->kind, key) : NULL;
    if (op != NULL)
        ctrl__patch(c, op, NULL, patch);
out:
    json_decref(list);
    json_decref(patch);
}

/* The continuation of a Pod's DELETE: the answer's body (the Pod, or a Status) is not kept --
 * the watch says what became of it. */
static void on_pod_deleted(const kube_result_t *res, void *data)
{
    kube_result_t r = *res;

    if (r.err == ERR_NOT_FOUND)
        r.err = ERR_OK; /* gone already: what we wanted */
    r.body = NULL;
    ctrl__on_done(&r, data);
}

static bool send_delete(ctrl_op_t *op)
{
    char ns[256];
    const char *slash = strchr(op->key, '/');

    if (slash == NULL)
        return false;
    snprintf(ns, sizeof(ns), "%.*s", (int)(slash - op->key), op->key);
    return kube_delete(op->c->client, &op->c->res[op->kind], ns, slash + 1, NULL, on_pod_deleted,
                       op, NULL, NULL) == ERR_OK;
}

/* Stopping: the condition TerminationTarget (reason, message in op->data) into the Pod's
 * status, as Kueue writes it before deleting. An existing one is replaced. */
static err_t mutate_terminate(json_t *obj, void *data, bool *changed, err_msg_t *msg)
{
    ctrl_op_t *op = data;
    char ts[32];
    json_t *cond, *status, *conds;
    size_t i;
    json_t *old;

    *changed = false;
    if (pod_deleting(obj))
        return ERR_OK;
    cond_time_str(ctrl__now_ms() / 1000, ts, sizeof(ts));
    cond =
        jobs_pod_termination_condition(json_string_value(json_object_get(op->data, "reason")),
                                       json_string_value(json_object_get(op->data, "message")), ts);
    status = objpath_ensure(obj, "status", (char *)NULL);
    conds = status != NULL ? json_object_get(status, "conditions") : NULL;
    if (cond == NULL || status == NULL) {
        json_decref(cond);
        return err_set(msg, ERR_NOMEM, "out of memory");
    }
    if (!json_is_array(conds)) {
        conds = json_array();
        if (json_object_set_new(status, "conditions", conds)) {
            json_decref(cond);
            return err_set(msg, ERR_NOMEM, "out of memory");
        }
    }
    json_array_foreach(conds, i, old)
    {
        const char *t = json_string_value(json_object_get(old, "type"));
        if (t != NULL && strcmp(t, JOBS_POD_TERMINATION_TARGET) == 0) {
            json_array_remove(conds, i);
            break;
        }
    }
    if (json_array_append(
            conds,
            json_array_get(json_object_get(json_object_get(cond, "status"), "conditions"), 0))) {
        json_decref(cond);
        return err_set(msg, ERR_NOMEM, "out of memory");
    }
    json_decref(cond);
    *changed = op->changed = true;
    return ERR_OK;
}

/* The status write answered: now the DELETE (a Pod already gone or going is fine). */
static void on_terminated(const kube_result_t *res, void *data)
{
    ctrl_op_t *op = data;
    ctrl_t *c = op->c;

    if (res->err != ERR_OK || c->closing || c->writes_stopped || pod_deleting(res->body)) {
        kube_result_t r = *res;
        if (r.err == ERR_NOT_FOUND)
            r.err = ERR_OK;
        r.canceled = r.canceled || c->closing || c->writes_stopped;
        ctrl__on_done(&r, op);
        return;
    }
    op->verb = "delete";
    op->sub = NULL;
    if (!send_delete(op)) {
        kube_result_t r;
        memset(&r, 0, sizeof(r));
        r.err = err_set(&r.msg, ERR_IO, "pod %s: delete not submitted", op->key);
        r.reason = "";
        op->verb = NULL;
        ctrl__on_done(&r, op);
    }
}

static bool send_stop(ctrl_op_t *op)
{
    char ns[256];
    const char *slash = strchr(op->key, '/');

    if (slash == NULL)
        return false;
    snprintf(ns, sizeof(ns), "%.*s", (int)(slash - op->key), op->key);
    return kube_update_retry(op->c->client, &op->c->res[op->kind], ns, slash + 1, "status",
                             mutate_terminate, 0, on_terminated, op, NULL) == ERR_OK;
}

/* Stop Pod `j`: TerminationTarget with Kueue's stop `reason`, then DELETE. */
static void pod_stop(ctrl_t *c, unit_t *u, const ctrl_job_t *j, const char *reason,
                     const char *message)
{
    char key[CTRL_KEY_MAX];
    ctrl_op_t *op;

    ctrl__meta_key(&j->meta, key, sizeof(key));
    if (ctrl__busy(c, u->kind, key))
        return;
    op = ctrl__op_new(c, CTRL_OP_POD_STOP, u->kind, key, u->kind, key);
    if (op == NULL)
        return;
    op->data = json_pack("{s:s,s:s}", "reason", reason, "message", message ? message : "");
    op->verb = "update";
    op->sub = "status";
    op->send = send_stop;
    if (op->data == NULL) {
        ctrl__op_free(op);
        return;
    }
    ctrl__event(c, u->kind, &j->meta, "Normal", "Stopped", "%s", message ? message : reason);
    ctrl__log(c, CTRL_LOG_INFO, "pod %s: stopping (%s): %s", key, reason, message ? message : "");
    ctrl__submit(c, op);
}

/* Delete Pod `j` as it is (an excess member of a group). */
static void pod_delete(ctrl_t *c, unit_t *u, const ctrl_job_t *j)
{
    char key[CTRL_KEY_MAX];
    ctrl_op_t *op;

    ctrl__meta_key(&j->meta, key, sizeof(key));
    if (ctrl__busy(c, u->kind, key))
        return;
    op = ctrl__op_new(c, CTRL_OP_POD_DELETE, u->kind, key, u->kind, key);
    if (op == NULL)
        return;
    op->verb = "delete";
    op->send = send_delete;
    ctrl__log(c, CTRL_LOG_INFO, "pod %s: deleted: beyond its group's total count", key);
    ctrl__submit(c, op);
}

/* Finished / quota released on the unit's Workload `w`, from a JSON view of its status. */
static void wl_patch_finish(ctrl_t *c, unit_t *u, const ctrl_wl_t *w, const char *reason,
                            const char *message)
{
    json_t *view = ctrl_wl_json(w);

    ctrl__wl_status(c, CTRL_OP_WL_FINISH, u->wkey,
                    view != NULL ? wlstatus_finish_patch(view, reason, message ? message : "",
                                                         ctrl__now_ms() / 1000)
                                 : NULL);
    json_decref(view);
}

static void wl_patch_release(ctrl_t *c, unit_t *u, const ctrl_wl_t *w)
{
    json_t *view = ctrl_wl_json(w);

    ctrl__wl_status(c, CTRL_OP_WL_RELEASE, u->wkey,
                    view != NULL ? wlstatus_release_patch(view, ctrl__now_ms() / 1000) : NULL);
    json_decref(view);
}

/* Start: op->data {localQueue, clusterQueue, workload, podSets: [{name}], group}, op->nodes and
 * op->tols per pod set (as reconcile.c's start of a job). */
static err_t mutate_start(json_t *obj, void *data, bool *changed, err_msg_t *msg)
{
    ctrl_op_t *op = data;
    json_t *d = op->data, *sets = json_object_get(d, "podSets");
    jobs_start_info_t info[JOBS_PODSETS_MAX];
    size_t n = json_array_size(sets);
    err_t e;

    *changed = false;
    if (n > JOBS_PODSETS_MAX)
        n = JOBS_PODSETS_MAX;
    if (!jobs_pod_gated(obj) || pod_deleting(obj))
        return ERR_OK; /* released already, or going away */
    memset(info, 0, sizeof(info));
    for (size_t i = 0; i < n; i++) {
        info[i].name = json_string_value(json_object_get(json_array_get(sets, i), "name"));
        info[i].local_queue = json_string_value(json_object_get(d, "localQueue"));
        info[i].cluster_queue = json_string_value(json_object_get(d, "clusterQueue"));
        info[i].workload = json_string_value(json_object_get(d, "workload"));
        info[i].node_selector = json_array_get(op->nodes, i);
        info[i].tolerations = json_array_get(op->tols, i);
    }
    if (json_is_true(json_object_get(d, "group"))) {
        e = jobs_pod_group_start_pod(obj, info, n, changed, &op->mutate_msg);
    } else {
        e = jobs_start(&jobs_kind_pod, obj, info, n, &op->mutate_msg);
        *changed = e == ERR_OK;
    }
    if (e == ERR_CONFLICT || e == ERR_INVALID) {
        op->mutate_failed = true;
        return err_set(msg, ERR_INVALID, "%s", op->mutate_msg.text);
    }
    if (e != ERR_OK)
        return err_set(msg, e, "%s", op->mutate_msg.text);
    op->changed = *changed;
    return ERR_OK;
}

static bool send_start(ctrl_op_t *op)
{
    char ns[256];
    const char *slash = strchr(op->key, '/');
    err_msg_t msg = {{0}};

    if (slash == NULL)
        return false;
    snprintf(ns, sizeof(ns), "%.*s", (int)(slash - op->key), op->key);
    if (kube_update_retry(op->c->client, &op->c->res[op->kind], ns, slash + 1, NULL, mutate_start,
                          0, ctrl__on_done, op, &msg) != ERR_OK) {
        ctrl__log(op->c, CTRL_LOG_ERROR, "pod %s: %s", op->key, msg.text);
        return false;
    }
    return true;
}

/* What starting the Pods of admitted Workload `w` writes into each (see mutate_start()); NULL
 * with the reason in msg. ERR_NOT_FOUND: a flavor is not known yet. */
static err_t start_data(ctrl_t *c, const ctrl_wl_t *w, bool group, json_t **data, json_t **nodes,
                        json_t **tols, err_msg_t *msg)
{
    const admission_t *a = w->wl.admission;
    json_t *ns = json_array(), *ts = json_array(), *sets = json_array(), *d = NULL;
    err_t rc = ns && ts && sets ? ERR_OK : err_set(msg, ERR_NOMEM, "out of memory");

    if (rc == ERR_OK && (a == NULL || a->nassignments == 0))
        rc = err_set(msg, ERR_INVALID, "no pod set assignment");
    for (size_t i = 0; rc == ERR_OK && i < a->nassignments; i++) {
        json_t *n = NULL, *t = NULL;
        rc = ctrl__flavor_info(c, &a->assignments[i], &n, &t, msg);
        if (rc != ERR_OK)
            break;
        if (json_array_append_new(ns, n) | json_array_append_new(ts, t) ||
            json_array_append_new(
                sets, json_pack("{s:s}", "name",
                                a->assignments[i].name ? a->assignments[i].name : "main")))
            rc = err_set(msg, ERR_NOMEM, "out of memory");
    }
    if (rc == ERR_OK) {
        d = json_pack("{s:s?,s:s,s:s,s:O,s:b}", "localQueue", w->wl.queue_name, "clusterQueue",
                      a->cluster_queue, "workload", w->wl.meta.name, "podSets", sets, "group",
                      group);
        if (d == NULL)
            rc = err_set(msg, ERR_NOMEM, "out of memory");
    }
    json_decref(sets);
    if (rc != ERR_OK) {
        json_decref(ns);
        json_decref(ts);
        return rc;
    }
    *data = d;
    *nodes = ns;
    *tols = ts;
    return ERR_OK;
}

/* Start the gated members of `u` (a group: its kept ones) with admitted Workload `w`. */
static void start_pods(ctrl_t *c, unit_t *u, const ctrl_wl_t *w)
{
    json_t *data = NULL, *nodes = NULL, *tols = NULL;
    err_msg_t msg = {{0}};
    err_t rc = ERR_OK;

    for (size_t i = 0; i < u->n; i++) {
        const ctrl_job_t *j = u->recs[i];
        char key[CTRL_KEY_MAX];
        if (!jobs_pod_gated(j->pod) || pod_deleting(j->pod) ||
            (u->have_g && u->g.verdict[i] != JOBS_POD_KEEP))
            continue;
        ctrl__meta_key(&j->meta, key, sizeof(key));
        if (ctrl__busy(c, u->kind, key))
            continue;
        if (data == NULL) {
            rc = start_data(c, w, u->group, &data, &nodes, &tols, &msg);
            if (rc != ERR_OK)
                break;
        }
        if (!ctrl__job_update(c, CTRL_OP_JOB_START, u->kind, key, data, nodes, tols, send_start))
            break;
    }
    if (rc == ERR_NOT_FOUND)
        ctrl__log(c, CTRL_LOG_INFO, "pods of %s: waiting: %s", u->wkey, msg.text);
    else if (rc == ERR_CONFLICT)
        wl_patch_finish(c, u, w, "FailedToStart", msg.text);
    else if (rc != ERR_OK)
        ctrl__log(c, CTRL_LOG_ERROR, "pods of %s: cannot start: %s", u->wkey, msg.text);
    json_decref(data);
    json_decref(nodes);
    json_decref(tols);
}

/* Stop every member that must be (jobs_pod_stop_needed()); the number that had to. */
static size_t stop_pods(ctrl_t *c, unit_t *u, bool wl_deleted, const char *reason,
                        const char *message)
{
    size_t n = 0;

    for (size_t i = 0; i < u->n; i++) {
        if (!jobs_pod_stop_needed(u->pods[i], wl_deleted))
            continue;
        n++;
        pod_stop(c, u, u->recs[i], reason, message);
    }
    return n;
}

/* Remove the managed finalizer of every member that has it; the number that had it. */
static size_t unfinalize_pods(ctrl_t *c, unit_t *u)
{
    size_t n = 0;

    for (size_t i = 0; i < u->n; i++) {
        if (!has_finalizer(u->pods[i]))
            continue;
        n++;
        pod_unfinalize(c, u, u->recs[i]);
    }
    return n;
}

/* ---- a group's Workload -------------------------------------------------------------------- */

/* The group's Pods, listed fresh (the cache keeps no containers): build its Workload and POST
 * it. op->data is the unit key "@ns/name". */
static void on_group_listed(const kube_result_t *res, void *data)
{
    ctrl_op_t *op = data;
    ctrl_t *c = op->c;
    json_t *items = json_object_get(res->body, "items"), **pods = NULL, *body = NULL, *refs, *meta;
    jobs_pod_group_t g;
    workload_t wl = {0};
    err_msg_t msg = {{0}};
    kube_result_t r;
    size_t n = json_array_size(items);
    const json_t *first = NULL;
    char ns[256];
    err_t rc;

    memset(&r, 0, sizeof(r));
    memset(&g, 0, sizeof(g));
    r.reason = "";
    if (res->err != ERR_OK || c->closing || c->writes_stopped) {
        r = *res;
        r.canceled = r.canceled || c->closing || c->writes_stopped;
        ctrl__on_done(&r, op);
        return;
    }
    pods = calloc(n ? n : 1, sizeof(*pods));
    if (pods == NULL) {
        rc = err_set(&msg, ERR_NOMEM, "out of memory");
        goto fail;
    }
    for (size_t i = 0; i < n; i++)
        pods[i] = json_array_get(items, i);
    rc = n == 0 ? err_set(&msg, ERR_NOT_FOUND, "no Pod of the group left")
                : jobs_pod_group_read(pods, n, &g, &msg);
    if (rc == ERR_OK)
        rc = jobs_pod_group_workload(&g, (const char *const *)c->cfg->integrations.label_keys, &wl,
                                     &msg);
    for (size_t i = 0; rc == ERR_OK && i < g.npods && first == NULL; i++)
        if (g.verdict[i] == JOBS_POD_KEEP)
            first = g.pods[i];
    if (rc == ERR_OK)
        rc = ctrl__resolve_priority(c, first, &wl, &msg);
    if (rc == ERR_OK) {
        body = wlstatus_for_job(&wl, &jobs_kind_pod, first, g.sets, g.nsets, "v1", &msg);
        if (body == NULL)
            rc = msg.text[0] ? ERR_INVALID : err_set(&msg, ERR_NOMEM, "out of memory");
    }
    /* Owned by every kept Pod (none the controller), marked as a group's (Kueue's shape). */
    meta = json_object_get(body, "metadata");
    refs = rc == ERR_OK ? json_array() : NULL;
    if (rc == ERR_OK && (refs == NULL || json_object_set_new(meta, "ownerReferences", refs) ||
                         objpath_set_str(body, JOBS_POD_IS_GROUP_WORKLOAD, "true", "metadata",
                                         "annotations", (char *)NULL) != ERR_OK))
        rc = err_set(&msg, ERR_NOMEM, "out of memory");
    for (size_t i = 0; rc == ERR_OK && i < g.npods; i++) {
        json_t *pm = json_object_get(g.pods[i], "metadata");
        if (g.verdict[i] != JOBS_POD_KEEP)
            continue;
        if (json_array_append_new(
                refs,
                json_pack("{s:s,s:s,s:s?,s:s?,s:b}", "apiVersion", "v1", "kind", "Pod", "name",
                          json_string_value(json_object_get(pm, "name")), "uid",
                          json_string_value(json_object_get(pm, "uid")), "blockOwnerDeletion", 1)))
            rc = err_set(&msg, ERR_NOMEM, "out of memory");
    }
    if (rc != ERR_OK)
        goto fail;
    json_decref(op->body);
    op->body = body;
    body = NULL;
    snprintf(ns, sizeof(ns), "%s", g.namespace ? g.namespace : "");
    if (kube_create(c->client, &c->res[CTRL_WORKLOAD], ns, op->body, ctrl__on_done, op, NULL,
                    &msg) != ERR_OK) {
        rc = ERR_IO;
        goto fail;
    }
    goto out;
fail:
    ctrl__log(c, CTRL_LOG_ERROR, "pod group %s: no Workload: %s", json_string_value(op->data),
              msg.text);
    r.err = err_set(&r.msg, rc == ERR_NOMEM ? ERR_NOMEM : ERR_INVALID, "%s", msg.text);
    op->verb = NULL; /* not the API's answer */
    ctrl__on_done(&r, op);
out:
    json_decref(body);
    workload_fini(&wl);
    jobs_pod_group_fini(&g);
    free(pods);
}

static bool send_group_create(ctrl_op_t *op)
{
    const char *ukey = json_string_value(op->data);
    const char *slash = ukey != NULL ? strchr(ukey, '/') : NULL;
    char ns[256], sel[512];
    kube_list_opts_t lo;

    if (slash == NULL || ukey[0] != GROUP_MARK)
        return false;
    snprintf(ns, sizeof(ns), "%.*s", (int)(slash - ukey - 1), ukey + 1);
    snprintf(sel, sizeof(sel), "%s=%s", JOBS_POD_GROUP_NAME, slash + 1);
    memset(&lo, 0, sizeof(lo));
    lo.label_selector = sel;
    /* op->busy is "<pod kind>:@ns/name" (group_create()). */
    return kube_list(op->c->client, &op->c->res[atoi(op->busy)], ns, &lo, on_group_listed, op, NULL,
                     NULL) == ERR_OK;
}

static void group_create(ctrl_t *c, unit_t *u)
{
    ctrl_op_t *op = ctrl__op_new(c, CTRL_OP_WL_CREATE, CTRL_WORKLOAD, u->wkey, u->kind, u->ukey);

    if (op == NULL)
        return;
    op->data = json_string(u->ukey);
    op->verb = "create";
    op->send = send_group_create;
    if (op->data == NULL)
        ctrl__op_free(op);
    else
        ctrl__submit(c, op);
}

/* ---- the unit's reconcile ------------------------------------------------------------------ */

/*
 * Does a Pod of group `u` still run, as Kueue's IsActive() with its default feature gates: phase
 * Running, and not stuck terminating -- a Pod being deleted counts until its deletionTimestamp +
 * deletionGracePeriodSeconds has passed (FastQuotaReleaseInPodIntegration, alpha and off, would
 * stop counting it at once, as jobs_pod_group_active() does). So a preempted group's quota goes
 * back once its Pods have actually stopped, or once their kubelet is clearly gone.
 */
static bool group_active(const unit_t *u, int64_t now_s)
{
    for (size_t i = 0; i < u->n; i++) {
        const json_t *m = json_object_get(u->pods[i], "metadata");
        const char *phase =
            json_string_value(json_object_get(json_object_get(u->pods[i], "status"), "phase"));
        const char *del = json_string_value(json_object_get(m, "deletionTimestamp"));
        const json_t *grace = json_object_get(m, "deletionGracePeriodSeconds");
        int64_t at;
        if (phase == NULL || strcmp(phase, "Running") != 0)
            continue;
        if (del != NULL && json_is_integer(grace) && jsonx_parse_time(del, &at) &&
            now_s > at + (int64_t)json_integer_value(grace))
            continue; /* stuck terminating */
        return true;
    }
    return false;
}

/*
 * A held unit moved to another LocalQueue (its Pods' queue-name label: a StatefulSet's or a
 * LeaderWorkerSet's new queue name, written into its Pods by the owner's reconcile below, or a
 * plain Pod's): so does its Workload, as Kueue's reconcilers update spec.queueName of a Workload
 * without quota reservation (an admitted one keeps its queue: the webhooks refuse the change once
 * a replica is ready). The group's Pods agree on the queue name (jobs_pod_group_read() refuses a
 * group whose Pods do not), so the first kept Pod's label is the group's.
 */
static void sync_queue(ctrl_t *c, unit_t *u, const ctrl_wl_t *w)
{
    const char *want = NULL, *have = w->wl.queue_name;
    json_t *patch;
    ctrl_op_t *op;

    for (size_t i = 0; i < u->n && want == NULL; i++)
        if (!u->have_g || u->g.verdict[i] == JOBS_POD_KEEP)
            want = u->recs[i]->queue_name;
    if (want == NULL || want[0] == '\0' || (have != NULL && strcmp(want, have) == 0))
        return;
    patch = json_pack("{s:{s:s?},s:{s:s}}", "metadata", "resourceVersion",
                      w->wl.meta.resource_version, "spec", "queueName", want);
    op = patch ? ctrl__op_new(c, CTRL_OP_WL_QUEUE, CTRL_WORKLOAD, u->wkey, CTRL_WORKLOAD, u->wkey)
               : NULL;
    if (op != NULL) {
        ctrl__log(c, CTRL_LOG_INFO, "workload %s: LocalQueue %s -> %s (its Pods' queue name)",
                  u->wkey, have ? have : "", want);
        ctrl__patch(c, op, NULL, patch);
    }
    json_decref(patch);
}

/* Kueue's reconciler step 4 for a pod group (its ReclaimablePods): the Workload's
 * status.reclaimablePods follow the group's kept Pods that succeeded, per role (pod set), each
 * count capped at its pod set's count (LimitReclaimablePodsToPodSetSizes), so that their quota
 * goes back while the rest of the group runs (the engine counts the Workload less them). None
 * for a serving group. True when a write went out. */
static bool group_reclaimable(ctrl_t *c, unit_t *u, const ctrl_wl_t *w)
{
    jobs_reclaimable_t rec[JOBS_PODSETS_MAX];
    int32_t counts[JOBS_PODSETS_MAX] = {0};
    size_t n = 0;

    if (!u->group || !u->have_g || jobs_pod_group_reclaimable(&u->g, rec, &n, NULL) != ERR_OK)
        return false;
    for (size_t i = 0; i < w->npodsets && i < JOBS_PODSETS_MAX; i++)
        for (size_t r = 0; w->podsets[i].name != NULL && r < n; r++)
            if (strcmp(rec[r].name, w->podsets[i].name) == 0)
                counts[i] = rec[r].count;
    return ctrl__write_reclaimable(c, u->wkey, w, counts);
}

/* Is the Workload of the group of Pod `j` made by its owner (a StatefulSet's, a LeaderWorkerSet
 * replica's: see owned_workloads()), not from the group's Pods? */
static bool owner_made(ctrl_t *c, const ctrl_job_t *j)
{
    const char *parent = objpath_annotation(j->pod, JOBS_POD_SUSPENDING_PARENT);
    const jobs_kind_t *k = parent != NULL ? jobs_kind_named(parent) : NULL;

    return (k == &jobs_kind_leaderworkerset || k == &jobs_kind_statefulset) &&
           ctrl_framework_enabled(c->cfg, k->framework);
}

static void reconcile_unit(ctrl_t *c, unit_t *u)
{
    const ctrl_job_t *first = u->recs[0];
    const ctrl_wl_t *w;
    jobs_phase_t phase = JOBS_RUNNING;
    char message[160] = "";
    err_msg_t msg = {{0}};
    bool reserved, evicted;

    if (first->skip || !ctrl__job_managed(c, first))
        return;
    if (u->group) {
        err_t rc = jobs_pod_group_read(u->pods, u->n, &u->g, &msg);
        u->have_g = true;
        if (rc != ERR_OK) {
            ctrl__log(c, rc == ERR_NOMEM ? CTRL_LOG_ERROR : CTRL_LOG_INFO, "pod group %s: %s",
                      u->ukey + 1, msg.text);
            return;
        }
        /* Members beyond the total count go; failed ones and those deleted before they ran
         * let go of their finalizer (Kueue's removeExcessPods, finalizePods). */
        for (size_t i = 0; i < u->n; i++) {
            if (u->g.verdict[i] == JOBS_POD_KEEP)
                continue;
            if (has_finalizer(u->pods[i]))
                pod_unfinalize(c, u, u->recs[i]);
            else if (u->g.verdict[i] == JOBS_POD_EXCESS && !pod_deleting(u->pods[i]))
                pod_delete(c, u, u->recs[i]);
        }
        phase = jobs_pod_group_phase(&u->g, message, sizeof(message));
        u->active = group_active(u, ctrl__now_ms() / 1000);
    } else {
        if (!first->valid)
            return;
        phase = first->phase;
        snprintf(message, sizeof(message), "%s", first->message ? first->message : "");
    }
    if (ctrl__busy(c, CTRL_WORKLOAD, u->wkey))
        return;
    w = ctrl__wl(c, u->wkey);
    if (w != NULL && !w->valid)
        return;
    if (!u->group && pod_deleting(first->pod)) {
        /* Kueue's finalize of a deleted Pod: an evicted Workload's quota is released (a single
         * Pod is never active), then the Workload lets go, then the Pod. */
        if (w != NULL && ctrl_wl_reserved(w) && !w->wl.conditions.finished &&
            (w->wl.conditions.evicted || !w->wl.active))
            wl_patch_release(c, u, w);
        else if (w != NULL && w->finalizer)
            ctrl__wl_remove_finalizer(c, u->wkey, w);
        else
            unfinalize_pods(c, u);
        return;
    }
    if (phase != JOBS_RUNNING) {
        if (w != NULL && !w->wl.conditions.finished)
            wl_patch_finish(c, u, w, phase == JOBS_SUCCEEDED ? "Succeeded" : "Failed", message);
        else if (unfinalize_pods(c, u) == 0 && w != NULL && w->finalizer)
            ctrl__wl_remove_finalizer(c, u->wkey, w);
        return;
    }
    if (w == NULL && u->group && owner_made(c, first)) {
        ctrl__log(c, CTRL_LOG_DEBUG, "pod group %s: waiting for its LeaderWorkerSet's Workload",
                  u->ukey + 1);
        return;
    }
    if (w == NULL) {
        if (stop_pods(c, u, false, "NoMatchingWorkload", "missing workload") > 0)
            return;
        if (!u->group)
            ctrl__create_workload(c, u->kind, u->ukey, u->wkey);
        else if (u->g.complete)
            group_create(c, u);
        else
            ctrl__log(c, CTRL_LOG_DEBUG, "pod group %s: %s", u->ukey + 1, u->g.why);
        return;
    }
    if (w->wl.meta.deleting) {
        if (stop_pods(c, u, true, "WorkloadDeleted", "Workload is deleted") == 0) {
            if (w->finalizer)
                ctrl__wl_remove_finalizer(c, u->wkey, w);
            else if (u->group)
                unfinalize_pods(c, u);
        }
        return;
    }
    if (w->wl.conditions.finished) {
        if (unfinalize_pods(c, u) == 0 && w->finalizer)
            ctrl__wl_remove_finalizer(c, u->wkey, w);
        return;
    }
    if (group_reclaimable(c, u, w))
        return;
    if (c->cfg->pods_ready.enabled &&
        ctrl__sync_pods_ready(c, u->wkey, w,
                              u->group ? jobs_pod_group_pods_ready(&u->g) : first->pods_ready))
        return;
    reserved = ctrl_wl_reserved(w);
    evicted = w->wl.conditions.evicted || !w->wl.active;
    if (reserved && evicted) {
        const condition_t *ev = ctrl_wl_cond(w, "Evicted");
        if (stop_pods(c, u, false, "WorkloadEvicted",
                      ev != NULL && ev->message ? ev->message : "Evicted") == 0 &&
            !u->active)
            wl_patch_release(c, u, w);
    } else if (reserved && w->wl.conditions.admitted) {
        start_pods(c, u, w);
    } else if (!reserved) {
        if (stop_pods(c, u, false, "NotAdmitted", "Not admitted by cluster queue") == 0)
            sync_queue(c, u, w);
    }
}

/* ---- serving owners: StatefulSet, LeaderWorkerSet ------------------------------------------ */

/*
 * A StatefulSet's (a LeaderWorkerSet's) Pods reach the pod webhook marked pod-suspending-parent by
 * the owner's webhook and are created gated, but without a group: Kueue's owner reconcilers write
 * into each the pod group it belongs to (jobs_serving_pod_default(): the Workload's name as group
 * and prebuilt Workload, the total count, role, fast admission, serving, the managed label). Here
 * each event of the owner (its status moves as its controller creates Pods) GETs it, LISTs its
 * Pods (a StatefulSet's by its selector and controller uid, a LeaderWorkerSet's by its name
 * label) and updates those not marked yet; from then on they are a pod group like any other.
 */

/* The Pod kind's index, or CTRL__KINDS when `pod` is not enabled. */
static ctrl_kind_t pod_kind(const ctrl_t *c)
{
    for (int k = CTRL_JOB; k < c->nkinds; k++)
        if (c->rkind[k].job->admit == JOBS_ADMIT_POD)
            return (ctrl_kind_t)k;
    return CTRL__KINDS;
}

/* Mark one Pod: op->data {kind: the owner's ctrl kind, owner: the owner object}. */
static err_t mutate_mark(json_t *obj, void *data, bool *changed, err_msg_t *msg)
{
    ctrl_op_t *op = data;
    ctrl_kind_t ok = (ctrl_kind_t)json_integer_value(json_object_get(op->data, "kind"));
    const jobs_kind_t *k = ctrl__jobs_kind(op->c, ok);

    *changed = false;
    if (k == NULL)
        return err_set(msg, ERR_INVALID, "pod %s: owner kind not watched", op->key);
    if (pod_deleting(obj))
        return ERR_OK;
    return jobs_serving_pod_default(k, json_object_get(op->data, "owner"), obj,
                                    json_is_true(json_object_get(op->data, "unqueued")), changed,
                                    msg);
}

static bool send_mark(ctrl_op_t *op)
{
    char ns[256];
    const char *slash = strchr(op->key, '/');

    if (slash == NULL)
        return false;
    snprintf(ns, sizeof(ns), "%.*s", (int)(slash - op->key), op->key);
    return kube_update_retry(op->c->client, &op->c->res[op->kind], ns, slash + 1, NULL, mutate_mark,
                             0, ctrl__on_done, op, NULL) == ERR_OK;
}

/* Is `pod` the owner's: a StatefulSet's by controller uid; a LeaderWorkerSet's Pods were listed
 * by its name label (their controllers are its StatefulSets). */
static bool owned_by(const jobs_kind_t *k, const json_t *pod, const char *uid)
{
    size_t i;
    json_t *ref;

    if (k != &jobs_kind_statefulset)
        return true;
    json_array_foreach(json_object_get(json_object_get(pod, "metadata"), "ownerReferences"), i, ref)
    {
        const char *u = json_string_value(json_object_get(ref, "uid"));
        if (json_is_true(json_object_get(ref, "controller")) && u != NULL && uid != NULL &&
            strcmp(u, uid) == 0)
            return true;
    }
    return false;
}

void ctrl__pods_mark_done(ctrl_t *c, const ctrl_op_t *op, const kube_result_t *res)
{
    const json_t *m = json_object_get(json_object_get(op->data, "owner"), "metadata");
    const char *ns = json_string_value(json_object_get(m, "namespace"));
    const char *name = json_string_value(json_object_get(m, "name"));
    ctrl_kind_t ok = (ctrl_kind_t)json_integer_value(json_object_get(op->data, "kind"));
    char key[CTRL_KEY_MAX], b[CTRL_KEY_MAX + 8];

    /* Until it is marked the Pod is not in the cache (the Pod informer sees managed Pods only),
     * so nothing of its own would bring it back: its owner looks again after a backoff. */
    if (res->err == ERR_OK || res->canceled || res->err == ERR_NOT_FOUND || ns == NULL ||
        name == NULL || !ctrl__is_job(c, ok))
        return;
    snprintf(key, sizeof(key), "%s/%s", ns, name);
    ctrl__kind_key(ok, key, b, sizeof(b));
    ctrl__log(c, CTRL_LOG_INFO, "pod %s: not marked into the group of %s %s, looked at again",
              op->key, c->noun[ok], key);
    if (ctrl_wq_fail(&c->jobs_q, b, uv_now(c->loop)) != ERR_OK)
        ctrl__log(c, CTRL_LOG_ERROR, "out of memory requeueing %s", b);
}

/* The owner's Pods are listed: mark those that need it, each a write of its own. The owner's
 * op ends here (without an answer body: nothing of the owner was written). */
static void on_owner_pods(const kube_result_t *res, void *data)
{
    ctrl_op_t *op = data;
    ctrl_t *c = op->c;
    const jobs_kind_t *k = ctrl__jobs_kind(c, op->kind);
    ctrl_kind_t pk = pod_kind(c);
    json_t *owner = op->data, *pod;
    const char *uid = json_string_value(json_object_get(json_object_get(owner, "metadata"), "uid"));
    kube_result_t r = *res;
    const ctrl_job_t *oj = ctrl__job(c, op->kind, op->key);
    /* manageJobsWithoutQueueName: an owner without a queue name that is managed anyway. */
    bool unqueued = oj != NULL && oj->queue_name == NULL && ctrl__job_managed(c, oj);
    size_t i;

    r.body = NULL;
    if (res->err != ERR_OK || c->closing || c->writes_stopped || k == NULL || pk == CTRL__KINDS) {
        r.canceled = r.canceled || c->closing || c->writes_stopped;
        ctrl__on_done(&r, op);
        return;
    }
    json_array_foreach(json_object_get(res->body, "items"), i, pod)
    {
        json_t *copy;
        bool changed = false;
        char key[CTRL_KEY_MAX];
        ctrl_op_t *mop;
        const json_t *pm = json_object_get(pod, "metadata");
        if (!owned_by(k, pod, uid) || pod_deleting(pod))
            continue;
        copy = json_deep_copy(pod);
        if (copy == NULL ||
            jobs_serving_pod_default(k, owner, copy, unqueued, &changed, NULL) != ERR_OK ||
            !changed) {
            json_decref(copy);
            continue;
        }
        json_decref(copy);
        snprintf(key, sizeof(key), "%s/%s", json_string_value(json_object_get(pm, "namespace")),
                 json_string_value(json_object_get(pm, "name")));
        if (ctrl__busy(c, pk, key))
            continue; /* its mark in flight; a failure has the owner look again */
        mop = ctrl__op_new(c, CTRL_OP_POD_MARK, pk, key, pk, key);
        if (mop == NULL)
            break;
        mop->data = json_pack("{s:i,s:O,s:b}", "kind", (json_int_t)op->kind, "owner", owner,
                              "unqueued", unqueued);
        mop->verb = "update";
        mop->send = send_mark;
        if (mop->data == NULL) {
            ctrl__op_free(mop);
            break;
        }
        ctrl__log(c, CTRL_LOG_INFO, "pod %s: joins the pod group of %s %s", key, c->noun[op->kind],
                  op->key);
        ctrl__submit(c, mop);
    }
    ctrl__on_done(&r, op);
}

/* ---- a LeaderWorkerSet's Workloads (Kueue's LeaderWorkerSet reconciler) -------------------- */

/*
 * Kueue makes a LeaderWorkerSet's Workloads from the LeaderWorkerSet itself, one per replica
 * (leaderworkerset-<name>-<i>-<hash>: pod sets leader x 1 + worker x (size - 1), or main x size;
 * owned by the LeaderWorkerSet as controller; annotations job-owner-gvk, job-owner-name,
 * component-workload-index), before any of its Pods exists. Its Pods name that Workload as their
 * group and prebuilt Workload (jobs_serving_pod_default()) and wait for it; it is admitted,
 * started through its Pods, evicted and released as any group's. At each event of the owner:
 *
 *   replica i < spec.replicas without a Workload  -> POST it (from the owner just read)
 *   its Workload without quota reservation        -> spec.queueName follows the owner's label
 *   the Workloads of indices >= spec.replicas     -> finalizer removed, deleted (a scale-down;
 *                                                    looked up upwards from spec.replicas while
 *                                                    one exists: every index below a former
 *                                                    replica count had one)
 *
 * Kueue finds them by an owner index and creates the surge replicas of a rolling update too;
 * here they are found by name, and a rolling update's surge is not counted.
 */

/* The create answered: Event CreatedWorkload on the owner (op->data "ns/name#i", the owner's kind
 * in op->busy), then the shared continuation, which marks "ns/name#i" -- the key its failure
 * backs off; the owner's reconcile takes it for the owner's (reconcile_owner()). */
static void on_owned_created(const kube_result_t *res, void *data)
{
    ctrl_op_t *op = data;
    ctrl_t *c = op->c;
    const char *rk = json_string_value(op->data), *hash = rk ? strrchr(rk, '#') : NULL;
    char okey[CTRL_KEY_MAX];
    ctrl_kind_t kind = (ctrl_kind_t)atoi(op->busy);
    const ctrl_job_t *j;

    if (res->err == ERR_OK && hash != NULL && !c->closing) {
        snprintf(okey, sizeof(okey), "%.*s", (int)(hash - rk), rk);
        j = ctrl__job(c, kind, okey);
        if (j != NULL)
            ctrl__event(c, kind, &j->meta, "Normal", "CreatedWorkload", "Created Workload: %s",
                        op->key);
    }
    ctrl__on_done(res, op);
}

static bool send_owned_create(ctrl_op_t *op)
{
    char ns[256];
    const char *slash = strchr(op->key, '/');

    if (slash == NULL || op->body == NULL)
        return false;
    snprintf(ns, sizeof(ns), "%.*s", (int)(slash - op->key), op->key);
    return kube_create(op->c->client, &op->c->res[CTRL_WORKLOAD], ns, op->body, on_owned_created,
                       op, NULL, NULL) == ERR_OK;
}

/* The body of replica `i`'s Workload from `owner` (of `kind`): a new object, or NULL (msg). */
static json_t *owned_workload(ctrl_t *c, ctrl_kind_t kind, json_t *owner, int32_t i, err_msg_t *msg)
{
    const jobs_kind_t *k = ctrl__jobs_kind(c, kind);
    jobs_podset_t ps[JOBS_PODSETS_MAX];
    workload_t wl = {0};
    json_t *body = NULL;
    size_t n = 0;
    err_t rc;

    rc = jobs_serving_workload(k, owner, i, (const char *const *)c->cfg->integrations.label_keys,
                               &wl, msg);
    if (rc == ERR_OK)
        rc = ctrl__resolve_priority(c, owner, &wl, msg);
    if (rc == ERR_OK)
        rc = k->pod_sets(owner, ps, &n, msg);
    if (rc == ERR_OK)
        body = wlstatus_for_job(&wl, k, owner, ps, n, c->api_version[kind], msg);
    for (size_t a = 0; body != NULL && a < wl.meta.annotations.len; a++) {
        if (objpath_set_str(body, wl.meta.annotations.items[a].key,
                            wl.meta.annotations.items[a].value, "metadata", "annotations",
                            (char *)NULL) != ERR_OK) {
            json_decref(body);
            body = NULL;
            err_set(msg, ERR_NOMEM, "out of memory");
        }
    }
    if (body == NULL && msg != NULL && msg->text[0] == '\0')
        err_set(msg, ERR_NOMEM, "out of memory");
    workload_fini(&wl);
    return body;
}

/* POST replica `i`'s Workload `wkey`. It holds "<kind>:<owner key>#<i>" busy ('#' is in no object
 * name), so one create per replica is in flight; its answer marks that key, which a failure backs
 * off, and whose reconcile is the owner's. */
static void owned_create(ctrl_t *c, ctrl_kind_t kind, const char *okey, json_t *owner, int32_t i,
                         const char *wkey)
{
    char busy[CTRL_KEY_MAX + 16];
    err_msg_t msg = {{0}};
    ctrl_op_t *op;

    snprintf(busy, sizeof(busy), "%s#%d", okey, (int)i);
    if (ctrl__busy(c, kind, busy))
        return;
    op = ctrl__op_new(c, CTRL_OP_WL_CREATE, CTRL_WORKLOAD, wkey, kind, busy);
    if (op == NULL)
        return;
    op->data = json_string(busy);
    op->body = op->data != NULL ? owned_workload(c, kind, owner, i, &msg) : NULL;
    if (op->body == NULL) {
        ctrl__log(c, CTRL_LOG_ERROR, "%s %s: no Workload for replica %d: %s", c->noun[kind], okey,
                  (int)i, msg.text[0] ? msg.text : "out of memory");
        ctrl__op_free(op);
        return;
    }
    op->verb = "create";
    op->send = send_owned_create;
    ctrl__submit(c, op);
}

/* Delete Workload `wkey` of a replica beyond the owner's count (its finalizer first). */
static void owned_delete(ctrl_t *c, const char *wkey, const ctrl_wl_t *w)
{
    ctrl_op_t *op;

    if (ctrl__busy(c, CTRL_WORKLOAD, wkey))
        return;
    if (w->finalizer) {
        ctrl__wl_remove_finalizer(c, wkey, w);
        return;
    }
    if (w->wl.meta.deleting)
        return;
    op = ctrl__op_new(c, CTRL_OP_WL_DELETE, CTRL_WORKLOAD, wkey, CTRL_WORKLOAD, wkey);
    if (op == NULL)
        return;
    op->verb = "delete";
    op->send = send_delete;
    ctrl__log(c, CTRL_LOG_INFO, "workload %s: deleted: its replica is beyond spec.replicas", wkey);
    ctrl__submit(c, op);
}

/* Workload `wkey` (held: no quota reservation) into LocalQueue `queue`. */
static void owned_queue(ctrl_t *c, const char *wkey, const ctrl_wl_t *w, const char *queue)
{
    json_t *patch;
    ctrl_op_t *op;

    if (ctrl__busy(c, CTRL_WORKLOAD, wkey) || !w->valid || w->wl.meta.deleting ||
        ctrl_wl_reserved(w) || queue == NULL || queue[0] == '\0' ||
        (w->wl.queue_name != NULL && strcmp(w->wl.queue_name, queue) == 0))
        return;
    patch = json_pack("{s:{s:s?},s:{s:s}}", "metadata", "resourceVersion",
                      w->wl.meta.resource_version, "spec", "queueName", queue);
    op = patch ? ctrl__op_new(c, CTRL_OP_WL_QUEUE, CTRL_WORKLOAD, wkey, CTRL_WORKLOAD, wkey) : NULL;
    if (op != NULL) {
        ctrl__log(c, CTRL_LOG_INFO, "workload %s: LocalQueue %s -> %s (its owner's queue name)",
                  wkey, w->wl.queue_name ? w->wl.queue_name : "", queue);
        ctrl__patch(c, op, NULL, patch);
    }
    json_decref(patch);
}

/*
 * Kueue's isRollingUpdateWithSurge: while a LeaderWorkerSet rolls out with maxSurge above 0 and
 * not every replica is updated yet, LeaderWorkerSet runs surge replicas beyond spec.replicas
 * (status.replicas counts them), and their Workloads are kept (made) too. maxSurge is read as
 * Kueue reads it (IntOrString.IntValue(): a number, or a string of digits; "25%" is 0).
 */
static int32_t lws_replicas(const json_t *owner, int32_t n)
{
    const json_t *spec = json_object_get(owner, "spec"), *st = json_object_get(owner, "status");
    const json_t *ms = json_object_get(
        json_object_get(json_object_get(spec, "rolloutStrategy"), "rollingUpdateConfiguration"),
        "maxSurge");
    const json_t *sr = json_object_get(st, "replicas"),
                 *ur = json_object_get(st, "updatedReplicas");
    long long surge = 0;

    if (json_is_integer(ms)) {
        surge = json_integer_value(ms);
    } else if (json_is_string(ms)) {
        char *end;
        surge = strtoll(json_string_value(ms), &end, 10);
        if (*end != '\0' || end == json_string_value(ms))
            surge = 0;
    }
    if (surge > 0 && (json_is_integer(ur) ? json_integer_value(ur) : 0) < n &&
        json_is_integer(sr) && json_integer_value(sr) > n && json_integer_value(sr) <= INT32_MAX)
        return (int32_t)json_integer_value(sr);
    return n;
}

/*
 * A StatefulSet's one Workload across a scale to zero and back (Kueue's StatefulSet reconciler):
 * at zero replicas it is kept, its quota given back with QuotaReserved=False reason OnHold
 * "StatefulSet scaled to zero; workload on hold" (status.admission removed, Admitted=False), and
 * an on-hold Workload is queued nowhere (ctrl__engine_wl()); at the scale-up it leaves the hold,
 * QuotaReserved=False PendingEvaluation "Workload no longer on hold; waiting for quota
 * reservation", and is queued again as it was made (Kueue does not update its pod set count
 * either). A finished or deactivated Workload is left alone.
 */
static void sts_hold(ctrl_t *c, const char *wkey, const ctrl_wl_t *w, int32_t replicas)
{
    json_t *view, *patch = NULL;
    bool changed = false;

    if (ctrl__busy(c, CTRL_WORKLOAD, wkey) || !w->valid || w->wl.meta.deleting ||
        w->wl.conditions.finished || !w->wl.active)
        return;
    if (replicas == 0 && !ctrl_wl_reserved(w))
        return;
    if (replicas > 0 && !ctrl_wl_on_hold(w))
        return;
    view = ctrl_wl_json(w);
    if (view != NULL && replicas == 0)
        patch = wlstatus_unreserve_patch(
            view, "OnHold", "StatefulSet scaled to zero; workload on hold", ctrl__now_ms() / 1000);
    else if (view != NULL)
        patch = wlstatus_pending_patch(view, "PendingEvaluation",
                                       "Workload no longer on hold; waiting for quota reservation",
                                       ctrl__now_ms() / 1000, &changed);
    json_decref(view);
    if (patch == NULL)
        return; /* out of memory: the owner's next event tries again */
    ctrl__log(c, CTRL_LOG_INFO, "workload %s: %s", wkey,
              replicas == 0 ? "on hold: its StatefulSet is scaled to zero"
                            : "no longer on hold: its StatefulSet is scaled up");
    ctrl__wl_status(c, CTRL_OP_WL_HOLD, wkey, patch);
}

/* The Workloads of LeaderWorkerSet `okey` (of `kind`), `owner` just read from the API. */
static void owned_workloads(ctrl_t *c, ctrl_kind_t kind, const char *okey, json_t *owner)
{
    const jobs_kind_t *k = ctrl__jobs_kind(c, kind);
    int32_t n = jobs_serving_workloads(k, owner);
    const char *slash = strchr(okey, '/');
    const char *queue = objpath_label(owner, "kueue.x-k8s.io/queue-name");
    char name[JOBS_SERVING_NAME_BUF], wkey[CTRL_KEY_MAX];
    err_msg_t msg = {{0}};

    if (slash == NULL)
        return;
    if (k == &jobs_kind_leaderworkerset)
        n = lws_replicas(owner, n);
    /* A StatefulSet has one Workload (index 0), whatever its replicas. */
    for (int32_t i = 0; i < (k == &jobs_kind_statefulset ? 1 : INT32_MAX); i++) {
        const ctrl_wl_t *w;
        if (jobs_serving_workload_name(k, owner, i, name, sizeof(name), &msg) != ERR_OK) {
            ctrl__log(c, CTRL_LOG_ERROR, "%s %s: %s", c->noun[kind], okey, msg.text);
            return;
        }
        snprintf(wkey, sizeof(wkey), "%.*s/%s", (int)(slash - okey), okey, name);
        w = ctrl__wl(c, wkey);
        if (k == &jobs_kind_statefulset) {
            /* One Workload, kept at zero replicas (on hold). */
            if (w == NULL && n > 0)
                owned_create(c, kind, okey, owner, i, wkey);
            else if (w != NULL)
                sts_hold(c, wkey, w, n);
            if (w != NULL && n > 0)
                owned_queue(c, wkey, w, queue);
            continue;
        }
        if (i >= n && w == NULL)
            break;
        if (i >= n)
            owned_delete(c, wkey, w);
        else if (w == NULL)
            owned_create(c, kind, okey, owner, i, wkey);
        else
            owned_queue(c, wkey, w, queue);
    }
}

/* The owner, fetched fresh: its Workloads (a LeaderWorkerSet's), then LIST its Pods. */
static void on_owner_got(const kube_result_t *res, void *data)
{
    ctrl_op_t *op = data;
    ctrl_t *c = op->c;
    const jobs_kind_t *k = ctrl__jobs_kind(c, op->kind);
    ctrl_kind_t pk = pod_kind(c);
    char ns[256], sel[1024] = "";
    const char *slash = strchr(op->key, '/'), *lk;
    size_t n = 0;
    json_t *v;
    kube_list_opts_t lo;

    if (res->err != ERR_OK || c->closing || c->writes_stopped || k == NULL || pk == CTRL__KINDS ||
        slash == NULL) {
        kube_result_t r = *res;
        r.body = NULL;
        r.canceled = r.canceled || c->closing || c->writes_stopped;
        ctrl__on_done(&r, op);
        return;
    }
    json_decref(op->data);
    op->data = json_incref(res->body);
    if (k == &jobs_kind_leaderworkerset || k == &jobs_kind_statefulset)
        owned_workloads(c, op->kind, op->key, res->body);
    if (k == &jobs_kind_statefulset) {
        json_object_foreach(
            json_object_get(json_object_get(json_object_get(res->body, "spec"), "selector"),
                            "matchLabels"),
            lk, v)
        {
            if (json_is_string(v))
                n += (size_t)snprintf(sel + n, n < sizeof(sel) ? sizeof(sel) - n : 0, "%s%s=%s",
                                      n ? "," : "", lk, json_string_value(v));
        }
    } else {
        n = (size_t)snprintf(sel, sizeof(sel), "%s=%s", JOBS_LWS_NAME, slash + 1);
    }
    if (n == 0 || n >= sizeof(sel)) {
        kube_result_t r;
        memset(&r, 0, sizeof(r));
        r.reason = "";
        r.err = err_set(&r.msg, ERR_INVALID, "%s %s: no usable spec.selector.matchLabels",
                        c->noun[op->kind], op->key);
        op->verb = NULL;
        ctrl__on_done(&r, op);
        return;
    }
    snprintf(ns, sizeof(ns), "%.*s", (int)(slash - op->key), op->key);
    memset(&lo, 0, sizeof(lo));
    lo.label_selector = sel;
    op->verb = "list";
    if (kube_list(c->client, &c->res[pk], ns, &lo, on_owner_pods, op, NULL, NULL) != ERR_OK) {
        kube_result_t r;
        memset(&r, 0, sizeof(r));
        r.reason = "";
        r.err = err_set(&r.msg, ERR_IO, "%s %s: pods not listed", c->noun[op->kind], op->key);
        op->verb = NULL;
        ctrl__on_done(&r, op);
    }
}

static bool send_owner(ctrl_op_t *op)
{
    char ns[256];
    const char *slash = strchr(op->key, '/');

    if (slash == NULL)
        return false;
    snprintf(ns, sizeof(ns), "%.*s", (int)(slash - op->key), op->key);
    return kube_get(op->c->client, &op->c->res[op->kind], ns, slash + 1, NULL, on_owner_got, op,
                    NULL, NULL) == ERR_OK;
}

/* A serving owner `key` of `kind` changed: mark its Pods (above). */
static void reconcile_owner(ctrl_t *c, ctrl_kind_t kind, const char *key)
{
    const char *hash = strrchr(key, '#');
    const ctrl_job_t *j;
    ctrl_op_t *op;
    char okey[CTRL_KEY_MAX];

    if (hash != NULL) {
        /* "ns/name#i": a Workload create of the owner's, answered or due after its backoff. */
        snprintf(okey, sizeof(okey), "%.*s", (int)(hash - key), key);
        key = okey;
    }
    j = ctrl__job(c, kind, key);

    /* skip: a StatefulSet another integration made (a LeaderWorkerSet's) is not this one's. */
    /* Managed: a queue name, or manageJobsWithoutQueueName for its namespace (Kueue's
     * WorkloadShouldBeSuspended): its Workload(s) are made without a queue name then. */
    if (j == NULL || !j->valid || j->meta.deleting || j->skip || pod_kind(c) == CTRL__KINDS ||
        ctrl__busy_again(c, kind, key) || !ctrl__job_managed(c, j))
        return;
    op = ctrl__op_new(c, CTRL_OP_POD_OWNER, kind, key, kind, key);
    if (op == NULL)
        return;
    op->verb = "get";
    op->send = send_owner;
    ctrl__submit(c, op);
}

void ctrl__reconcile_pods(ctrl_t *c, ctrl_kind_t kind, const char *key)
{
    unit_t u;
    const ctrl_job_t *j;
    const char *slash, *g;

    if (ctrl__jobs_kind(c, kind)->admit == JOBS_ADMIT_PODS) {
        reconcile_owner(c, kind, key);
        return;
    }
    memset(&u, 0, sizeof(u));
    u.kind = kind;
    snprintf(u.ukey, sizeof(u.ukey), "%s", key);
    if (key[0] == GROUP_MARK) {
        slash = strchr(key, '/');
        if (slash == NULL)
            return;
        u.group = true;
        snprintf(u.ns, sizeof(u.ns), "%.*s", (int)(slash - key - 1), key + 1);
        snprintf(u.name, sizeof(u.name), "%s", slash + 1);
        snprintf(u.wkey, sizeof(u.wkey), "%s/%s", u.ns, u.name);
        if (gather(c, &u) != ERR_OK)
            ctrl__log(c, CTRL_LOG_ERROR, "pod group %s: out of memory", key + 1);
        else if (u.n > 0)
            reconcile_unit(c, &u);
        else
            ctrl__mark_wl(c, u.wkey);
        /* No Pod left: its Workload is the Workload reconciler's (orphaned: ctrl__pods_orphan). */
        unit_fini(&u);
        return;
    }
    j = ctrl__job(c, kind, key);
    if (j == NULL || j->pod == NULL || j->meta.name == NULL || ctrl__busy_again(c, kind, key))
        return;
    g = group_of(j);
    if (g != NULL) {
        char gk[CTRL_KEY_MAX];
        snprintf(gk, sizeof(gk), "%c%s/%s", GROUP_MARK, pod_ns(j), g);
        ctrl__mark_job(c, kind, gk);
        return;
    }
    snprintf(u.ns, sizeof(u.ns), "%s", pod_ns(j));
    snprintf(u.name, sizeof(u.name), "%s", j->meta.name);
    {
        char wname[JOB_WORKLOAD_NAME_MAX + 1];
        if (jobs_workload_name(&jobs_kind_pod, j->meta.name, j->meta.uid, JOB_WORKLOAD_NAME_MAX,
                               wname, sizeof(wname), NULL) != ERR_OK)
            return;
        snprintf(u.wkey, sizeof(u.wkey), "%s/%s", u.ns, wname);
    }
    if (unit_add(&u, j) == ERR_OK)
        reconcile_unit(c, &u);
    unit_fini(&u);
}

void ctrl__pods_changed(ctrl_t *c, ctrl_kind_t kind, const ctrl_job_t *rec, const ctrl_job_t *old)
{
    const ctrl_job_t *js[2] = {rec, old};

    for (size_t i = 0; i < 2; i++) {
        const char *g = js[i] != NULL ? group_of(js[i]) : NULL;
        char gk[CTRL_KEY_MAX];
        if (g == NULL)
            continue;
        snprintf(gk, sizeof(gk), "%c%s/%s", GROUP_MARK, pod_ns(js[i]), g);
        ctrl__mark_job(c, kind, gk);
    }
}

/*
 * A pod group's Workload made from its Pods is owned by them, none the controller (Kueue's shape
 * for a group; a StatefulSet's or a LeaderWorkerSet replica's is its owner's, above). When the
 * last of them is gone -- a finished group's Pods are cleaned up -- the
 * Workload is orphaned: the garbage collector would delete it, and so does this (its finalizer
 * first), so that its quota goes back whether or not a garbage collector runs. The caller has
 * checked that no cached Pod names it as its group (ctrl__pods_wl()).
 */
bool ctrl__pods_orphan(ctrl_t *c, const char *key, const ctrl_wl_t *w)
{
    ctrl_op_t *op;

    if (!w->pod_owned || pod_kind(c) == CTRL__KINDS)
        return false;
    if (w->finalizer) {
        ctrl__wl_remove_finalizer(c, key, w);
    } else if (!w->wl.meta.deleting) {
        op = ctrl__op_new(c, CTRL_OP_WL_DELETE, CTRL_WORKLOAD, key, CTRL_WORKLOAD, key);
        if (op == NULL)
            return true;
        op->verb = "delete";
        op->send = send_delete;
        ctrl__log(c, CTRL_LOG_INFO, "workload %s: deleted: no Pod of its group is left", key);
        ctrl__submit(c, op);
    }
    return true;
}

bool ctrl__pods_wl(ctrl_t *c, const char *key)
{
    const char *const *keys;
    size_t n;
    char gk[CTRL_KEY_MAX];

    podindex_members(&c->pod_groups, key, &keys, &n);
    for (int k = CTRL_JOB; n > 0 && k < c->nkinds; k++) {
        if (c->rkind[k].job->admit != JOBS_ADMIT_POD)
            continue;
        snprintf(gk, sizeof(gk), "%c%s", GROUP_MARK, key);
        ctrl__mark_job(c, (ctrl_kind_t)k, gk);
        return true;
    }
    return false;
}
