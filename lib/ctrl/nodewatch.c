/* nodewatch -- the operator's Nodes and bound Pods: node capacity for the engine, quota against
 * capacity as metrics and as a ClusterQueue condition. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "ctrl/ctrl_int.h"

#include "ctrl/cond.h"
#include "ctrl/podset.h"
#include "ctrl/wlstatus.h"
#include "inventory/capacity.h"
#include "jobs/framework.h"
#include "model/fragment.h"
#include "model/node.h"
#include "obs/families.h"
#include "util/str.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * On when the Configuration turns on fragmentation-aware admission (SCHED_NODE_FIT_ANNOTATION)
 * or asks for node capacity alone (CTRL_WATCH_NODES_ANNOTATION). Two typed informers:
 *
 *   Nodes: the cache keeps node_t (labels, taints, allocatable, cordon, Ready: model/node.h; the
 *     images, addresses and conditions but Ready are dropped), fed to the engine
 *     (sched_node_upsert) and read by the quota-against-capacity comparison (inventory/capacity.c);
 *   Pods bound to a node and not finished (field selector spec.nodeName!=, phase not Succeeded or
 *     Failed): the cache keeps the node name, the Workload key (annotation kueue.x-k8s.io/workload,
 *     which sluice writes into every pod template it starts) and the pod's effective requests,
 *     fed to the engine (sched_pod_bound): the capacity in use on each node.
 */

typedef struct nw_node_s {
    node_t n;   /* decoded; zeroed when invalid */
    bool valid; /* a Node that did not decode is not fed */
} nw_node_t;

typedef struct nw_pod_s {
    char *node; /* owned: spec.nodeName; NULL: not bound or finished (not fed) */
    char *wl;   /* owned: "ns/name" of its Workload, or NULL */
    resource_list_t req;
} nw_pod_t;

struct ctrl_nodes_s {
    ctrl_t *c;
    kube_informer_t *nodes, *pods; /* owned */
    int open;
    void (*on_closed)(void *data);
    void *closed_data;
};

static const kube_resource_t nodes_res = {"", "v1", "nodes", false};
static const kube_resource_t pods_res = {"", "v1", "pods", true};

/* ---- codecs ------------------------------------------------------------------------------ */

static void *node_dec(json_t *obj, void *data)
{
    nw_node_t *r = calloc(1, sizeof(*r));
    diags_t d;

    (void)data;
    if (r == NULL)
        return NULL;
    diags_init(&d);
    /* The items of a LIST carry no apiVersion and kind: a shallow copy gets them. */
    json_t *o = json_copy(obj);
    err_t rc = ERR_NOMEM;
    if (o != NULL && json_object_set_new(o, "apiVersion", json_string("v1")) == 0 &&
        json_object_set_new(o, "kind", json_string("Node")) == 0)
        rc = node_decode(o, &r->n, &d);
    json_decref(o);
    diags_fini(&d);
    if (rc == ERR_NOMEM) {
        free(r);
        return NULL;
    }
    r->valid = rc == ERR_OK;
    return r;
}

static void node_free_rec(void *value, void *data)
{
    nw_node_t *r = value;

    (void)data;
    if (r != NULL)
        node_fini(&r->n);
    free(r);
}

static void *pod_dec(json_t *obj, void *data)
{
    nw_pod_t *p = calloc(1, sizeof(*p));
    json_t *meta = json_object_get(obj, "metadata"), *spec = json_object_get(obj, "spec"), *tmpl;
    const char *node = json_string_value(json_object_get(spec, "nodeName"));
    const char *phase = json_string_value(json_object_get(json_object_get(obj, "status"), "phase"));
    const char *ns = json_string_value(json_object_get(meta, "namespace"));
    const char *wl = json_string_value(
        json_object_get(json_object_get(meta, "annotations"), JOBS_ANNOTATION_WORKLOAD));
    pod_set_t ps;
    err_t rc;

    (void)data;
    if (p == NULL)
        return NULL;
    if (node == NULL || node[0] == '\0' ||
        (phase != NULL && (strcmp(phase, "Succeeded") == 0 || strcmp(phase, "Failed") == 0)))
        return p; /* holds nothing on a node */
    memset(&ps, 0, sizeof(ps));
    tmpl = json_pack("{s:O}", "spec", spec != NULL ? spec : json_null());
    if (tmpl == NULL)
        goto nomem;
    rc = fragment_pod_template(tmpl, "spec", &ps, NULL);
    json_decref(tmpl);
    if (rc == ERR_NOMEM)
        goto nomem;
    p->req = ps.pod_requests; /* empty when the spec did not decode: it still takes a pod slot */
    memset(&ps.pod_requests, 0, sizeof(ps.pod_requests));
    pod_set_fini(&ps);
    if ((p->node = strdup(node)) == NULL)
        goto nomem;
    if (wl != NULL && (p->wl = util_asprintf("%s/%s", ns ? ns : "default", wl)) == NULL)
        goto nomem;
    return p;
nomem:
    pod_set_fini(&ps);
    resource_list_fini(&p->req);
    free(p->node);
    free(p);
    return NULL;
}

static void pod_free_rec(void *value, void *data)
{
    nw_pod_t *p = value;

    (void)data;
    if (p == NULL)
        return;
    free(p->node);
    free(p->wl);
    resource_list_fini(&p->req);
    free(p);
}

/* ---- feeding the engine ------------------------------------------------------------------- */

/*
 * Failed-node replacement (Kueue's TASReplaceNodeOnPodTermination, docs/operator.md): a Node
 * deleted, or not Ready with none of a topology-aware workload's Pods left bound to it (they
 * terminated), is a failed node of every admitted workload whose topologyAssignment names it.
 * Checked when the Node goes and when a Pod leaves a NotReady Node.
 *
 * As Kueue's node controller, the failure is first written down: the Workload's
 * status.unhealthyNodes = [{name}]. Only the answer of that write reports it to the engine
 * (ctrl__nodes_unhealthy, through ctrl__engine_wl), whose next cycle replaces the node (REPLACE,
 * written as status.admission with unhealthyNodes removed, admit.c) or evicts the workload
 * (NodeFailures; the eviction removes the list too). So a restart between the failure and the
 * replacement finds the failure in the API and acts on it, even for a Node deleted meanwhile,
 * which no watch event would bring again:
 *
 *   node fails -> PATCH unhealthyNodes [n] -(answer)-> engine: n failed -> cycle
 *        -> REPLACE: PATCH admission + unhealthyNodes null | EVICT NodeFailures (list removed)
 *   restart: Workload listed with unhealthyNodes [n], Nodes and Pods listed -> engine: n failed
 *
 * A second failed node while one is recorded is Kueue's "multiple node failures" eviction: it is
 * reported to the engine at once (the engine evicts a workload with two failed nodes), as is a
 * failure while another write on the Workload is in flight, or when the write fails.
 */
/* status.unhealthyNodes holds at most 8 (the CRD's maxItems; the decoder enforces it). */
#define NW_UNHEALTHY_MAX 8

/* Write `w`'s status.unhealthyNodes as nodes[0..n) (removed when n is 0); `failed`, when not
 * NULL, is the node whose failure this records (reported to the engine at the answer). False
 * when nothing was sent (out of memory). */
static bool write_unhealthy(ctrl_t *c, const char *key, const char *const *nodes, size_t n,
                            const char *failed)
{
    json_t *patch = wlstatus_unhealthy_patch(nodes, n);
    ctrl_op_t *op = patch != NULL ? ctrl__op_new(c, CTRL_OP_WL_UNHEALTHY, CTRL_WORKLOAD, key,
                                                 CTRL_WORKLOAD, key)
                                  : NULL;

    if (op == NULL) {
        json_decref(patch);
        return false;
    }
    if (failed != NULL && (op->data = json_string(failed)) == NULL) {
        ctrl__op_free(op);
        json_decref(patch);
        return false;
    }
    ctrl__patch(c, op, "status", patch);
    json_decref(patch);
    return true;
}

/* Tell the engine that node `node` of workload `key` failed (its next cycle acts). */
static void engine_failed(ctrl_t *c, const char *key, const char *node)
{
    err_msg_t msg = {{0}};
    err_t rc = sched_workload_node_failed(c->sched, key, node, &msg);

    if (rc == ERR_NOMEM)
        ctrl__log(c, CTRL_LOG_ERROR, "workload %s: node %s failed: out of memory", key, node);
    else if (rc == ERR_OK)
        ctrl__kick(c);
}

/* Node `node` of admitted workload `key` failed: recorded in its status.unhealthyNodes first
 * when nothing is recorded and no write of ours is in flight, else told to the engine now. */
static void wl_node_failed(ctrl_t *c, const char *key, const char *node, bool deleted)
{
    const ctrl_wl_t *w = ctrl__wl(c, key);

    ctrl__log(c, CTRL_LOG_INFO, "workload %s: node %s failed (%s)", key, node,
              deleted ? "deleted" : "not Ready, its pods there gone");
    if (w != NULL && w->valid && !w->retired && w->wl.nunhealthy_nodes == 0 &&
        !ctrl__busy(c, CTRL_WORKLOAD, key) &&
        write_unhealthy(c, key, (const char *const[]){node}, 1, node))
        return;
    engine_failed(c, key, node);
}

typedef struct failed_s {
    ctrl_t *c;
    const char *node;
    bool deleted;
} failed_t;

static void on_failed_workload(void *ud, const char *key)
{
    failed_t *f = ud;

    wl_node_failed(f->c, key, f->node, f->deleted);
}

static void node_failed(ctrl_t *c, const char *node, bool deleted)
{
    failed_t f = {.c = c, .node = node, .deleted = deleted};
    err_msg_t msg;

    if (node == NULL || (!deleted && (c->nodes == NULL || !kube_informer_synced(c->nodes->pods))))
        return; /* which pods are still there is known once the Pods are listed */
    if (sched_node_workloads(c->sched, node, !deleted, on_failed_workload, &f, &msg) == ERR_NOMEM)
        ctrl__log(c, CTRL_LOG_ERROR, "out of memory looking for workloads on node %s", node);
}

/* Are the Nodes and the bound Pods listed (what a failure is judged by)? */
static bool nodes_synced(const ctrl_t *c)
{
    return c->nodes != NULL && kube_informer_synced(c->nodes->nodes) &&
           kube_informer_synced(c->nodes->pods);
}

/* Is node `name` healthy for workload `key` (Kueue's node controller with
 * TASReplaceNodeOnPodTermination): known and Ready, or not Ready with the workload's Pods still
 * bound to it? */
static bool node_healthy_for(const ctrl_t *c, const char *key, const char *name)
{
    sched_node_info_t info;
    size_t i, bound = 0;

    if (sched_node_find(c->sched, name, &i) != ERR_OK ||
        sched_node_at(c->sched, i, &info) != ERR_OK)
        return false; /* gone */
    if (info.ready)
        return true;
    sched_workload_on_node(c->sched, key, name, &bound);
    return bound > 0;
}

void ctrl__nodes_unhealthy(ctrl_t *c, const char *key, const ctrl_wl_t *w)
{
    const char *keep[NW_UNHEALTHY_MAX];
    size_t nkeep = 0, n = w->wl.nunhealthy_nodes;

    if (n == 0 || !nodes_synced(c))
        return; /* fed again once they are (on_synced) */
    for (size_t i = 0; i < n; i++) {
        const char *name = w->wl.unhealthy_nodes[i];
        size_t bound;
        if (name == NULL)
            continue;
        if (node_healthy_for(c, key, name)) {
            ctrl__log(c, CTRL_LOG_INFO, "workload %s: node %s healthy again", key, name);
            continue;
        }
        if (nkeep < NW_UNHEALTHY_MAX)
            keep[nkeep++] = name;
        if (sched_workload_on_node(c->sched, key, name, &bound))
            engine_failed(c, key, name); /* no-op when the engine knows it already */
    }
    if (nkeep < n && !ctrl__busy(c, CTRL_WORKLOAD, key) &&
        !write_unhealthy(c, key, keep, nkeep, NULL))
        ctrl__log(c, CTRL_LOG_ERROR, "workload %s: out of memory writing status.unhealthyNodes",
                  key);
}

void ctrl__nodes_unhealthy_done(ctrl_t *c, ctrl_op_t *op, const kube_result_t *res)
{
    const char *failed = json_string_value(op->data);
    ctrl_wl_t *w = util_hmap_get(&c->overlay[CTRL_WORKLOAD], op->key);

    if (res->err == ERR_OK && w != NULL) {
        ctrl__engine_wl(c, op->key, w); /* reports the recorded node (ctrl__nodes_unhealthy) */
        return;
    }
    if (failed == NULL)
        return;
    if (res->err != ERR_OK)
        ctrl__log(c, CTRL_LOG_ERROR,
                  "workload %s: node %s failed: status.unhealthyNodes not written (%s): "
                  "replaced without the record",
                  op->key, failed, res->msg.text);
    engine_failed(c, op->key, failed);
}

/* Every cached Workload with status.unhealthyNodes looked at again (the Nodes and Pods are
 * listed, or a node is Ready again). */
static void unhealthy_sweep(ctrl_t *c)
{
    const char *key;
    void *rec;

    if (!nodes_synced(c))
        return;
    CTRL_FOREACH(c, CTRL_WORKLOAD, key, rec)
    {
        const ctrl_wl_t *w = ctrl__wl(c, key);
        if (w != NULL && w->valid && !w->retired && w->wl.nunhealthy_nodes > 0 &&
            ctrl_wl_reserved(w) && !w->wl.conditions.evicted && !w->wl.conditions.finished)
            ctrl__nodes_unhealthy(c, key, w);
    }
}

/* Is node `name` known to the engine and not Ready? */
static bool node_not_ready(const ctrl_t *c, const char *name)
{
    sched_node_info_t info;
    size_t i;

    return name != NULL && sched_node_find(c->sched, name, &i) == ERR_OK &&
           sched_node_at(c->sched, i, &info) == ERR_OK && !info.ready;
}

static void feed_node(ctrl_t *c, const char *key, const nw_node_t *r)
{
    sched_node_info_t info;
    size_t at;
    bool was_ready = sched_node_find(c->sched, key, &at) == ERR_OK &&
                     sched_node_at(c->sched, at, &info) == ERR_OK && info.ready;
    err_msg_t msg;
    err_t rc;

    if (r == NULL || !r->valid) {
        rc = sched_node_delete(c->sched, key, &msg);
        if (rc == ERR_NOT_FOUND)
            rc = ERR_OK;
    } else {
        sched_node_spec_t spec = {.name = r->n.meta.name,
                                  .labels = &r->n.meta.labels,
                                  .taints = r->n.taints,
                                  .ntaints = r->n.ntaints,
                                  .allocatable = &r->n.allocatable,
                                  .unschedulable = r->n.unschedulable,
                                  .ready = !r->n.has_ready || r->n.ready};
        rc = sched_node_upsert(c->sched, &spec, &msg);
    }
    if (rc == ERR_NOMEM)
        c->refeed = true;
    if (rc == ERR_OK && (r == NULL || !r->valid || (r->n.has_ready && !r->n.ready)))
        node_failed(c, key, r == NULL || !r->valid);
    else if (rc == ERR_OK && !was_ready)
        unhealthy_sweep(c); /* Ready again, or back: healthy for the Workloads listing it */
    ctrl__kick(c);
}

static void feed_pod(ctrl_t *c, const char *key, const nw_pod_t *p)
{
    err_msg_t msg;
    err_t rc;

    if (p == NULL || p->node == NULL) {
        rc = sched_pod_unbound(c->sched, key, &msg);
        if (rc == ERR_NOT_FOUND)
            rc = ERR_OK;
    } else {
        rc = sched_pod_bound(c->sched, key, p->node, p->wl, &p->req, &msg);
    }
    if (rc == ERR_NOMEM)
        c->refeed = true;
    if (p == NULL || p->node == NULL)
        ctrl__kick(c); /* capacity freed */
}

static void on_node_add(kube_informer_t *inf, const char *key, void *value, json_t *raw, void *data)
{
    ctrl_nodes_t *nw = data;

    (void)inf;
    (void)raw;
    feed_node(nw->c, key, value);
}

static void on_node_update(kube_informer_t *inf, const char *key, void *old, void *value,
                           json_t *raw, void *data)
{
    (void)old;
    on_node_add(inf, key, value, raw, data);
}

static void on_node_delete(kube_informer_t *inf, const char *key, void *old, json_t *raw,
                           void *data)
{
    ctrl_nodes_t *nw = data;

    (void)inf;
    (void)old;
    (void)raw;
    feed_node(nw->c, key, NULL);
}

static void on_pod_add(kube_informer_t *inf, const char *key, void *value, json_t *raw, void *data)
{
    ctrl_nodes_t *nw = data;

    (void)inf;
    (void)raw;
    feed_pod(nw->c, key, value);
}

/* A Pod left node `was`: when that node is not Ready, its workloads may have no Pod left there. */
static void pod_left(ctrl_t *c, const nw_pod_t *was, const nw_pod_t *now)
{
    if (was != NULL && was->node != NULL && was->wl != NULL &&
        (now == NULL || now->node == NULL || strcmp(now->node, was->node) != 0) &&
        node_not_ready(c, was->node))
        node_failed(c, was->node, false);
}

static void on_pod_update(kube_informer_t *inf, const char *key, void *old, void *value,
                          json_t *raw, void *data)
{
    ctrl_nodes_t *nw = data;

    on_pod_add(inf, key, value, raw, data);
    pod_left(nw->c, old, value);
}

static void on_pod_delete(kube_informer_t *inf, const char *key, void *old, json_t *raw, void *data)
{
    ctrl_nodes_t *nw = data;

    (void)inf;
    (void)raw;
    feed_pod(nw->c, key, NULL);
    pod_left(nw->c, old, NULL);
}

/* The Pods are listed: the NotReady Nodes seen before may have none of a workload's left. */
static void on_pods_synced(kube_informer_t *inf, void *data)
{
    ctrl_nodes_t *nw = data;
    sched_node_info_t info;

    (void)inf;
    for (size_t i = 0; i < sched_node_count(nw->c->sched); i++)
        if (sched_node_at(nw->c->sched, i, &info) == ERR_OK && !info.ready)
            node_failed(nw->c, info.name, false);
    unhealthy_sweep(nw->c); /* when the Nodes are listed too */
}

/* The Nodes are listed: the failures recorded in the Workloads can be judged (with the Pods). */
static void on_nodes_synced(kube_informer_t *inf, void *data)
{
    ctrl_nodes_t *nw = data;

    (void)inf;
    unhealthy_sweep(nw->c);
}

static void on_error(kube_informer_t *inf, const kube_result_t *res, const char *verb, void *data)
{
    ctrl_nodes_t *nw = data;

    ctrl__on_informer_error(inf, res, verb, nw->c);
}

/* ---- lifecycle ------------------------------------------------------------------------------ */

bool ctrl__nodes_wanted(const ctrl_config_t *cfg)
{
    const char *v = kv_list_get(&cfg->kueue.meta.annotations, SCHED_NODE_FIT_ANNOTATION);

    if (v != NULL && strcmp(v, "true") == 0)
        return true;
    v = kv_list_get(&cfg->kueue.meta.annotations, CTRL_WATCH_NODES_ANNOTATION);
    return v != NULL && strcmp(v, "true") == 0;
}

/* Create c->nodes (its informers, not started). */
static err_t nodes_create(ctrl_t *c, err_msg_t *msg)
{
    kube_codec_t ncodec = {node_dec, node_free_rec, NULL}, pcodec = {pod_dec, pod_free_rec, NULL};
    kube_informer_typed_handlers_t nh = {on_node_add, on_node_update, on_node_delete,
                                         on_nodes_synced, on_error};
    kube_informer_typed_handlers_t ph = {on_pod_add, on_pod_update, on_pod_delete, on_pods_synced,
                                         on_error};
    kube_informer_opts_t popts = {
        .field_selector = "spec.nodeName!=,status.phase!=Succeeded,status.phase!=Failed"};
    ctrl_nodes_t *nw = calloc(1, sizeof(*nw));
    if (nw == NULL)
        return err_set(msg, ERR_NOMEM, "nodes: out of memory");
    nw->c = c;
    nw->nodes = kube_informer_new_typed(c->client, &nodes_res, NULL, &ncodec, &nh, nw);
    nw->pods = kube_informer_new_typed(c->client, &pods_res, &popts, &pcodec, &ph, nw);
    if (nw->nodes == NULL || nw->pods == NULL) {
        kube_informer_close(nw->nodes, NULL, NULL);
        kube_informer_close(nw->pods, NULL, NULL);
        free(nw);
        return err_set(msg, ERR_NOMEM, "nodes: out of memory");
    }
    nw->open = 2;
    c->nodes = nw;
    return ERR_OK;
}

err_t ctrl__nodes_new(ctrl_t *c, err_msg_t *msg)
{
    return ctrl__nodes_wanted(c->cfg) ? nodes_create(c, msg) : ERR_OK;
}

err_t ctrl__nodes_for_tas(ctrl_t *c, err_msg_t *msg)
{
    err_t rc;

    if (c->nodes != NULL || c->closing)
        return ERR_OK;
    rc = nodes_create(c, msg);
    if (rc != ERR_OK)
        return rc;
    ctrl__log(c, CTRL_LOG_INFO, "topology-aware scheduling: watching Nodes and bound Pods");
    return ctrl__nodes_start(c, msg);
}

err_t ctrl__nodes_start(ctrl_t *c, err_msg_t *msg)
{
    err_t rc;

    if (c->nodes == NULL)
        return ERR_OK;
    rc = kube_informer_start(c->nodes->nodes, msg);
    if (rc == ERR_OK)
        rc = kube_informer_start(c->nodes->pods, msg);
    return rc;
}

static void on_part_closed(void *data)
{
    ctrl_nodes_t *nw = data;
    void (*cb)(void *) = nw->on_closed;
    void *cb_data = nw->closed_data;

    if (--nw->open > 0)
        return;
    free(nw);
    if (cb != NULL)
        cb(cb_data);
}

void ctrl__nodes_close(ctrl_t *c, void (*on_closed)(void *data), void *data)
{
    ctrl_nodes_t *nw = c->nodes;

    if (nw == NULL)
        return;
    c->nodes = NULL;
    nw->on_closed = on_closed;
    nw->closed_data = data;
    kube_informer_close(nw->nodes, on_part_closed, nw);
    kube_informer_close(nw->pods, on_part_closed, nw);
}

void ctrl__nodes_refeed(ctrl_t *c)
{
    const char *key;
    void *v;

    if (c->nodes == NULL)
        return;
    for (size_t pos = 0; kube_informer_next(c->nodes->nodes, &pos, &key, &v);)
        feed_node(c, key, v);
    for (size_t pos = 0; kube_informer_next(c->nodes->pods, &pos, &key, &v);)
        feed_pod(c, key, v);
}

/* Is `r` the valid Node whose kubernetes.io/hostname label is `hostname`? */
static bool is_host(const nw_node_t *r, const char *hostname)
{
    const char *h =
        r != NULL && r->valid ? kv_list_get(&r->n.meta.labels, PODSET_LABEL_HOSTNAME) : NULL;

    return h != NULL && strcmp(h, hostname) == 0;
}

const char *ctrl__node_label(ctrl_t *c, const char *hostname, const char *key)
{
    const nw_node_t *r;
    const char *k;
    void *v;

    if (c->nodes == NULL)
        return NULL;
    r = kube_informer_value(c->nodes->nodes, hostname); /* usually the node's name */
    if (is_host(r, hostname))
        return kv_list_get(&r->n.meta.labels, key);
    for (size_t pos = 0; kube_informer_next(c->nodes->nodes, &pos, &k, &v);) {
        if (is_host(v, hostname))
            return kv_list_get(&((const nw_node_t *)v)->n.meta.labels, key);
    }
    return NULL;
}

size_t ctrl__nodes_len(const ctrl_t *c, size_t *pods)
{
    *pods = c->nodes != NULL ? kube_informer_len(c->nodes->pods) : 0;
    return c->nodes != NULL ? kube_informer_len(c->nodes->nodes) : 0;
}

/* ---- quota against capacity ------------------------------------------------------------------ */

void ctrl__capacity_fini(ctrl_capacity_t *cap)
{
    capacity_fini(&cap->c);
    free(cap->nodes);
    free(cap->flavors);
    free(cap->cqs);
    free(cap->cohorts);
    memset(cap, 0, sizeof(*cap));
}

err_t ctrl__capacity(ctrl_t *c, ctrl_capacity_t *out)
{
    const char *key;
    const ctrl_qobj_t *q;
    void *v;
    size_t nn = 0, nf = 0, ncq = 0, nco = 0;

    memset(out, 0, sizeof(*out));
    if (c->nodes == NULL)
        return ERR_NOT_FOUND;
    out->nodes = calloc(kube_informer_len(c->nodes->nodes) + 1, sizeof(node_t));
    out->flavors = calloc(kube_informer_len(c->inf[CTRL_FLAVOR]) + 1, sizeof(*out->flavors));
    out->cqs = calloc(kube_informer_len(c->inf[CTRL_CQ]) + 1, sizeof(*out->cqs));
    out->cohorts = calloc(kube_informer_len(c->inf[CTRL_COHORT]) + 1, sizeof(*out->cohorts));
    if (out->nodes == NULL || out->flavors == NULL || out->cqs == NULL || out->cohorts == NULL)
        goto nomem;
    for (size_t pos = 0; kube_informer_next(c->nodes->nodes, &pos, &key, &v);)
        if (((nw_node_t *)v)->valid)
            out->nodes[nn++] = ((nw_node_t *)v)->n; /* a shallow copy: borrowed */
    CTRL_FOREACH(c, CTRL_FLAVOR, key, q)
    if (q->valid && q->obj.u.flavor.meta.name != NULL)
        out->flavors[nf++] = &q->obj.u.flavor;
    CTRL_FOREACH(c, CTRL_CQ, key, q)
    if (q->valid)
        out->cqs[ncq++] = &q->obj.u.cq;
    CTRL_FOREACH(c, CTRL_COHORT, key, q)
    if (q->valid)
        out->cohorts[nco++] = &q->obj.u.cohort;
    if (capacity_compare(out->flavors, nf, out->cqs, ncq, out->cohorts, nco, out->nodes, nn,
                         &out->c, NULL) == ERR_NOMEM)
        goto nomem;
    return ERR_OK;
nomem:
    ctrl__capacity_fini(out);
    return ERR_NOMEM;
}

err_t ctrl__nodes_cq_condition(const ctrl_capacity_t *cap, const char *cq, json_t *status,
                               int64_t now_s)
{
    json_t *conds = json_object_get(status, "conditions");
    const cap_row_t *over = NULL;
    char buf[1024];

    if (!json_is_array(conds))
        return ERR_OK;
    for (size_t i = 0; over == NULL && i < cap->c.nrows; i++) {
        const cap_row_t *r = &cap->c.rows[i];
        if (!capacity_over(r))
            continue;
        for (size_t k = 0; k < r->nowners; k++)
            if (!r->owners[k].cohort && strcmp(r->owners[k].name, cq) == 0)
                over = r;
    }
    if (over == NULL)
        return cond_set(conds, CTRL_COND_QUOTA_OVER_CAPACITY, "False", "WithinCapacity",
                        "The nominal quotas on its flavors fit the allocatable capacity of the "
                        "nodes they select",
                        -1, now_s, NULL);
    snprintf(buf, sizeof(buf), "flavor %s: ", over->flavor->meta.name);
    capacity_message(over, buf + strlen(buf), sizeof(buf) - strlen(buf));
    return cond_set(conds, CTRL_COND_QUOTA_OVER_CAPACITY, "True", "NominalQuotaAboveAllocatable",
                    buf, -1, now_s, NULL);
}
