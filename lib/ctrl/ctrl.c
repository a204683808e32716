/* ctrl -- the operator: informers feed the engine, decisions become API writes. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "ctrl/ctrl.h"

#include "ctrl/cond.h"
#include "ctrl/ctrl_int.h"
#include "ctrl/podsready.h"
#include "ctrl/queuestatus.h"
#include "ctrl/wlstatus.h"
#include "jobs/job_workload.h"
#include "jobs/podgroup.h"
#include "model/diag.h"
#include "util/util.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/*
 * Data flow (one thread, the loop):
 *
 *   informer event (a typed record, records.h) --> engine upsert/delete (queue objects,
 *       Workloads, from the complete decode, then stripped) + queue the Job/Workload
 *   --> kick: a 1 ms timer coalesces everything into one pass:
 *   pass: reconcile the due Jobs and Workloads (workqueue.h) -> engine cycles (paced) ->
 *         decisions -> writes (within the write budget, writer.h)
 *   write done --> remember the written object (overlay) until the cache catches up -> kick;
 *                  a failed write backs its reconciler's key off
 *
 * Overlay: the informer's cache lags behind our own writes. A decision taken on the lagging
 * copy would be wrong (e.g. re-admitting a Workload whose quota we just released), so every
 * reader uses ctrl__wl()/ctrl__job(): our last written version until the cache holds one at
 * least as new. resourceVersions are compared as integers (etcd revisions, what every API
 * server sends).
 */

static const char *const kind_api[CTRL__KINDS][2] = {
    [CTRL_NAMESPACE] = {"v1", "Namespace"},
    [CTRL_TOPOLOGY] = {"kueue.x-k8s.io/v1beta2", "Topology"},
    [CTRL_FLAVOR] = {"kueue.x-k8s.io/v1beta2", "ResourceFlavor"},
    [CTRL_COHORT] = {"kueue.x-k8s.io/v1beta2", "Cohort"},
    [CTRL_CQ] = {"kueue.x-k8s.io/v1beta2", "ClusterQueue"},
    [CTRL_LQ] = {"kueue.x-k8s.io/v1beta2", "LocalQueue"},
    [CTRL_WPC] = {"kueue.x-k8s.io/v1beta2", "WorkloadPriorityClass"},
    [CTRL_PC] = {"scheduling.k8s.io/v1", "PriorityClass"},
    [CTRL_AC] = {"kueue.x-k8s.io/v1beta2", "AdmissionCheck"},
    [CTRL_WORKLOAD] = {"kueue.x-k8s.io/v1beta2", "Workload"},
};

static const kube_resource_t events_res = {"", "v1", "events", true};

static const kube_resource_t kind_res[CTRL__KINDS] = {
    [CTRL_NAMESPACE] = {"", "v1", "namespaces", false},
    [CTRL_TOPOLOGY] = {"kueue.x-k8s.io", "v1beta2", "topologies", false},
    [CTRL_FLAVOR] = {"kueue.x-k8s.io", "v1beta2", "resourceflavors", false},
    [CTRL_COHORT] = {"kueue.x-k8s.io", "v1beta2", "cohorts", false},
    [CTRL_CQ] = {"kueue.x-k8s.io", "v1beta2", "clusterqueues", false},
    [CTRL_LQ] = {"kueue.x-k8s.io", "v1beta2", "localqueues", true},
    [CTRL_WPC] = {"kueue.x-k8s.io", "v1beta2", "workloadpriorityclasses", false},
    [CTRL_PC] = {"scheduling.k8s.io", "v1", "priorityclasses", false},
    [CTRL_AC] = {"kueue.x-k8s.io", "v1beta2", "admissionchecks", false},
    [CTRL_WORKLOAD] = {"kueue.x-k8s.io", "v1beta2", "workloads", true},
};

/* ---- small helpers ----------------------------------------------------------------------- */

void ctrl__log(ctrl_t *c, int level, const char *fmt, ...)
{
    char text[1024];
    va_list ap;

    if (level > (int)c->cfg->log_level)
        return;
    va_start(ap, fmt);
    vsnprintf(text, sizeof(text), fmt, ap);
    va_end(ap);
    if (c->log != NULL)
        c->log(c->log_data, level, text);
    else
        fprintf(stderr, "%s\n", text);
}

int64_t ctrl__now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

const char *ctrl__meta_key(const object_meta_t *m, char *buf, size_t n)
{
    if (m->namespace != NULL && m->namespace[0] != '\0')
        snprintf(buf, n, "%s/%s", m->namespace, m->name ? m->name : "");
    else
        snprintf(buf, n, "%s", m->name ? m->name : "");
    return buf;
}

static const object_meta_t *rec_meta(ctrl_kind_t kind, const void *rec)
{
    if (kind == CTRL_WORKLOAD)
        return &((const ctrl_wl_t *)rec)->wl.meta;
    if (kind >= CTRL_JOB)
        return &((const ctrl_job_t *)rec)->meta;
    return NULL;
}

/* The freshest of the cached record and our own last write of `key` (Workload or Job). Never
 * frees anything: callers may hold either record (overlays are dropped by overlay_settle(),
 * from the informer's handlers only). */
static void *view(ctrl_t *c, ctrl_kind_t kind, const char *key)
{
    void *cached = c->inf[kind] != NULL ? kube_informer_value(c->inf[kind], key) : NULL;
    void *ov = util_hmap_get(&c->overlay[kind], key);
    uint64_t a, b;

    if (ov == NULL)
        return cached;
    if (cached == NULL)
        return ov;
    a = ctrl_rv_num(rec_meta(kind, cached)->resource_version);
    b = ctrl_rv_num(rec_meta(kind, ov)->resource_version);
    return a == 0 || b == 0 || a >= b ? cached : ov;
}

/* The cache has a new version of `key`: our own copy is no longer needed once the cache holds
 * one at least as new. Called from the informer's handlers, where nobody holds a record. */
static void overlay_settle(ctrl_t *c, ctrl_kind_t kind, const char *key)
{
    void *ov = util_hmap_get(&c->overlay[kind], key);

    if (ov != NULL && view(c, kind, key) != ov)
        ctrl_record_free(&c->rkind[kind], util_hmap_del(&c->overlay[kind], key));
}

ctrl_wl_t *ctrl__wl(ctrl_t *c, const char *key)
{
    return view(c, CTRL_WORKLOAD, key);
}

ctrl_job_t *ctrl__job(ctrl_t *c, ctrl_kind_t kind, const char *key)
{
    return ctrl__is_job(c, kind) ? view(c, kind, key) : NULL;
}

bool ctrl__is_job(const ctrl_t *c, ctrl_kind_t kind)
{
    return kind >= CTRL_JOB && (int)kind < c->nkinds;
}

const jobs_kind_t *ctrl__jobs_kind(const ctrl_t *c, ctrl_kind_t kind)
{
    return ctrl__is_job(c, kind) ? c->rkind[kind].job : NULL;
}

/* Is apiVersion `av` ("group/version", or "version" for core) of API group `group`? */
static bool in_group(const char *av, const char *group)
{
    const char *slash = strchr(av, '/');
    size_t n = strlen(group);

    if (slash == NULL)
        return n == 0;
    return (size_t)(slash - av) == n && strncmp(av, group, n) == 0;
}

ctrl_kind_t ctrl__job_kind(const ctrl_t *c, const char *api_version, const char *kind)
{
    if (api_version == NULL || kind == NULL)
        return CTRL__KINDS;
    for (int k = CTRL_JOB; k < c->nkinds; k++)
        if (strcmp(c->rkind[k].job->kind, kind) == 0 && in_group(api_version, c->res[k].group))
            return (ctrl_kind_t)k;
    return CTRL__KINDS;
}

const ctrl_qobj_t *ctrl__qrec(ctrl_t *c, ctrl_kind_t kind, const char *key)
{
    const ctrl_qobj_t *q = kube_informer_value(c->inf[kind], key);

    return q != NULL && q->valid ? q : NULL;
}

const object_t *ctrl__q(ctrl_t *c, ctrl_kind_t kind, const char *key)
{
    const ctrl_qobj_t *q = ctrl__qrec(c, kind, key);

    return q != NULL ? &q->obj : NULL;
}

/* Remember `rec` (a Workload or Job decoded from a write's answer, owned) as what we wrote
 * last. */
static void overlay_put(ctrl_t *c, ctrl_kind_t kind, const char *key, void *rec)
{
    void *old = NULL;

    if (util_hmap_put(&c->overlay[kind], key, rec, &old) != ERR_OK) {
        ctrl__log(c, CTRL_LOG_ERROR, "out of memory recording %s", key);
        ctrl_record_free(&c->rkind[kind], rec);
        return;
    }
    ctrl_record_free(&c->rkind[kind], old);
}

static void mark(ctrl_t *c, ctrl_wq_t *q, const char *key)
{
    if (ctrl_wq_add(q, key) != ERR_OK) {
        ctrl__log(c, CTRL_LOG_ERROR, "out of memory marking %s (all reconciled again)", key);
        c->refeed = true; /* refeed() marks everything once memory is back */
    }
    ctrl__kick(c);
}

void ctrl__mark_job(ctrl_t *c, ctrl_kind_t kind, const char *key)
{
    char b[CTRL_KEY_MAX + 8];

    ctrl__kind_key(kind, key, b, sizeof(b));
    mark(c, &c->jobs_q, b);
}

void ctrl__mark_wl(ctrl_t *c, const char *key)
{
    mark(c, &c->wls_q, key);
}

void ctrl__mark_wl_and_job(ctrl_t *c, const char *key)
{
    char owner[CTRL_KEY_MAX];
    ctrl_kind_t kind;
    const ctrl_wl_t *w = ctrl__wl(c, key);

    ctrl__mark_wl(c, key);
    if (w != NULL && ctrl__owner_job(c, w, &kind, owner, sizeof(owner), NULL) != NULL)
        ctrl__mark_job(c, kind, owner);
}

json_t *ctrl__finalizer_patch(const object_meta_t *m)
{
    json_t *list = json_array();

    if (list == NULL)
        return NULL;
    for (size_t i = 0; i < m->nfinalizers; i++) {
        if (strcmp(m->finalizers[i], JOB_FINALIZER_RESOURCE_IN_USE) != 0 &&
            json_array_append_new(list, json_string(m->finalizers[i]))) {
            json_decref(list);
            return NULL;
        }
    }
    return json_pack("{s:{s:o,s:s?}}", "metadata", "finalizers", list, "resourceVersion",
                     m->resource_version);
}

void ctrl__kind_key(ctrl_kind_t kind, const char *key, char *buf, size_t n)
{
    snprintf(buf, n, "%d:%s", (int)kind, key);
}

bool ctrl__busy(ctrl_t *c, ctrl_kind_t kind, const char *key)
{
    char b[CTRL_KEY_MAX + 8];

    ctrl__kind_key(kind, key, b, sizeof(b));
    return util_hmap_get(&c->busy, b) != NULL;
}

/* The busy map's value: the op kind holding the key, with this bit when a reconcile passed
 * over the key meanwhile (ctrl__busy_again()). */
#define BUSY_AGAIN ((size_t)1 << 16)

bool ctrl__busy_again(ctrl_t *c, ctrl_kind_t kind, const char *key)
{
    char b[CTRL_KEY_MAX + 8];
    size_t op;

    ctrl__kind_key(kind, key, b, sizeof(b));
    if (!util_hmap_get_index(&c->busy, b, &op))
        return false;
    if (!(op & BUSY_AGAIN) && util_hmap_put_index(&c->busy, b, op | BUSY_AGAIN) != ERR_OK)
        c->refeed = true; /* not remembered: refeed() reconciles everything once memory is back */
    return true;
}

/* "<kind>:<key>" is no longer busy: when a reconcile passed over it meanwhile, queue it again. */
static void busy_release(ctrl_t *c, const char *b)
{
    size_t op = 0;
    bool again = util_hmap_get_index(&c->busy, b, &op) && (op & BUSY_AGAIN);
    const char *colon = strchr(b, ':');

    util_hmap_del(&c->busy, b);
    if (!again || c->closing || colon == NULL)
        return;
    if (atoi(b) == CTRL_WORKLOAD)
        mark(c, &c->wls_q, colon + 1);
    else if (ctrl__is_job(c, (ctrl_kind_t)atoi(b)))
        mark(c, &c->jobs_q, b); /* the jobs' queue is keyed by "<kind>:<key>" */
}

err_t ctrl__busy_set(ctrl_t *c, ctrl_kind_t kind, const char *key)
{
    char b[CTRL_KEY_MAX + 8];

    ctrl__kind_key(kind, key, b, sizeof(b));
    return util_hmap_put_index(&c->busy, b, CTRL_OP_WL_VERIFY);
}

bool ctrl__admitting(ctrl_t *c, const char *key)
{
    char b[CTRL_KEY_MAX + 8];
    size_t op;

    ctrl__kind_key(CTRL_WORKLOAD, key, b, sizeof(b));
    return util_hmap_get_index(&c->busy, b, &op) &&
           ((op & ~BUSY_AGAIN) == CTRL_OP_WL_ADMIT || (op & ~BUSY_AGAIN) == CTRL_OP_WL_VERIFY);
}

void ctrl__busy_clear(ctrl_t *c, ctrl_kind_t kind, const char *key)
{
    char b[CTRL_KEY_MAX + 8];

    ctrl__kind_key(kind, key, b, sizeof(b));
    busy_release(c, b);
}

err_t ctrl__eviction_set(ctrl_t *c, const char *key, json_t *e)
{
    void *old = NULL;

    if (e == NULL)
        return ERR_NOMEM;
    if (util_hmap_put(&c->evictions, key, e, &old) != ERR_OK) {
        json_decref(e);
        return ERR_NOMEM;
    }
    json_decref(old);
    return ERR_OK;
}

json_t *ctrl__eviction(ctrl_t *c, const char *key)
{
    return util_hmap_get(&c->evictions, key);
}

void ctrl__eviction_drop(ctrl_t *c, const char *key)
{
    json_decref(util_hmap_del(&c->evictions, key));
}

/* Free the evictions map and the JSON it owns. */
static void evictions_fini(ctrl_t *c)
{
    void *e;

    for (size_t pos = 0; util_hmap_next(&c->evictions, &pos, NULL, &e);)
        json_decref(e);
    util_hmap_fini(&c->evictions);
}

const char *ctrl__owner_job(ctrl_t *c, const ctrl_wl_t *w, ctrl_kind_t *kind, char *buf, size_t n,
                            const char **uid)
{
    const ctrl_owner_t *o = &w->owner;
    ctrl_kind_t k = ctrl__job_kind(c, o->api_version, o->kind);

    /* The Workload names its owner with the version sluice wrote (the kind's, or the
     * configured Job resource's): another version is someone else's object. */
    if (k == CTRL__KINDS || strcmp(o->api_version, c->api_version[k]) != 0 || o->name == NULL)
        return NULL;
    if (kind != NULL)
        *kind = k;
    if (uid != NULL)
        *uid = o->uid;
    snprintf(buf, n, "%s/%s", w->wl.meta.namespace ? w->wl.meta.namespace : "", o->name);
    return buf;
}

/* ---- engine feeding ---------------------------------------------------------------------- */

/* Upsert (or delete when `q` is NULL) the queue-side object `name` (`ns` for LocalQueues). */
static void feed_obj(ctrl_t *c, ctrl_kind_t kind, const char *ns, const char *name,
                     const ctrl_qobj_t *q)
{
    err_msg_t msg = {{0}};
    err_t rc = ERR_OK;

    if (q == NULL) {
        switch (kind) {
        case CTRL_NAMESPACE:
            rc = sched_namespace_delete(c->sched, name, &msg);
            break;
        case CTRL_TOPOLOGY:
            if (!c->tas)
                return;
            rc = sched_topology_delete(c->sched, name, &msg);
            break;
        case CTRL_FLAVOR:
            rc = sched_flavor_delete(c->sched, name, &msg);
            break;
        case CTRL_COHORT:
            rc = sched_cohort_delete(c->sched, name, &msg);
            break;
        case CTRL_CQ:
            rc = sched_cq_delete(c->sched, name, &msg);
            break;
        case CTRL_LQ:
            rc = sched_lq_delete(c->sched, ns ? ns : "", name, &msg);
            break;
        case CTRL_WPC:
            rc = sched_wpc_delete(c->sched, name, &msg);
            break;
        case CTRL_PC:
            rc = sched_pc_delete(c->sched, name, &msg);
            break;
        case CTRL_AC:
            rc = sched_check_delete(c->sched, name, &msg);
            break;
        default:
            return;
        }
        if (rc != ERR_OK && rc != ERR_NOT_FOUND)
            ctrl__log(c, CTRL_LOG_ERROR, "engine: delete %s %s: %s", kind_api[kind][1], name,
                      msg.text);
        c->queue_dirty = true;
        return;
    }
    if (!q->valid) {
        ctrl__log(c, CTRL_LOG_ERROR, "ignoring %s %s%s%s: %s", kind_api[kind][1], ns ? ns : "",
                  ns ? "/" : "", name, q->invalid);
        return;
    }
    /* Settings that have no effect never pass silently (said again when the spec changes). */
    if (q->no_effect != NULL)
        ctrl__log(c, CTRL_LOG_INFO, "%s %s%s%s: %s", kind_api[kind][1], ns ? ns : "", ns ? "/" : "",
                  name, q->no_effect);
    if (!c->cfg->kueue.fair_sharing && ((kind == CTRL_CQ && q->obj.u.cq.has_fair_weight) ||
                                        (kind == CTRL_COHORT && q->obj.u.cohort.has_fair_weight)))
        ctrl__log(c, CTRL_LOG_INFO,
                  "%s %s: spec.fairSharing: has no effect: fair sharing is off (the "
                  "Configuration has no fairSharing)",
                  kind_api[kind][1], name);
    if (!c->cfg->kueue.afs && ((kind == CTRL_CQ && q->obj.u.cq.afs_usage_based) ||
                               (kind == CTRL_LQ && q->obj.u.lq.has_fair_weight)))
        ctrl__log(c, CTRL_LOG_INFO,
                  "%s %s%s%s: %s: has no effect: admission fair sharing is off (the "
                  "Configuration has no admissionFairSharing)",
                  kind_api[kind][1], ns ? ns : "", ns ? "/" : "", name,
                  kind == CTRL_CQ ? "spec.admissionScope" : "spec.fairSharing");
    if (!c->tas &&
        ((kind == CTRL_FLAVOR && q->obj.u.flavor.topology_name != NULL) || kind == CTRL_TOPOLOGY))
        ctrl__log(c, CTRL_LOG_INFO,
                  "%s %s: %s: has no effect: topology-aware scheduling is off (the API server "
                  "served no %s/%s topologies when sluice started)",
                  kind_api[kind][1], name,
                  kind == CTRL_TOPOLOGY ? "spec.levels" : "spec.topologyName",
                  c->res[CTRL_TOPOLOGY].group, c->res[CTRL_TOPOLOGY].version);
    switch (kind) {
    case CTRL_NAMESPACE:
        rc = sched_namespace_upsert(c->sched, &q->obj.u.ns, &msg);
        break;
    case CTRL_TOPOLOGY:
        if (!c->tas)
            return;
        rc = sched_topology_upsert(c->sched, &q->obj.u.topology, &msg);
        /* TAS places pods on Nodes: watch them (and the bound Pods) from the first Topology */
        if (rc == ERR_OK && ctrl__nodes_for_tas(c, &msg) != ERR_OK)
            ctrl__log(c, CTRL_LOG_ERROR, "Topology %s: watching Nodes: %s", name, msg.text);
        break;
    case CTRL_FLAVOR:
        rc = sched_flavor_upsert(c->sched, &q->obj.u.flavor, &msg);
        break;
    case CTRL_COHORT:
        rc = sched_cohort_upsert(c->sched, &q->obj.u.cohort, &msg);
        break;
    case CTRL_CQ:
        rc = sched_cq_upsert(c->sched, &q->obj.u.cq, &msg);
        break;
    case CTRL_LQ:
        rc = sched_lq_upsert(c->sched, &q->obj.u.lq, &msg);
        /* admission fair sharing: the usage persisted in its status (once: a restart) */
        if (rc == ERR_OK && c->cfg->kueue.afs && q->keep != NULL) {
            char key[CTRL_KEY_MAX];
            snprintf(key, sizeof(key), "%s/%s", ns ? ns : "default", name);
            if (queuestatus_lq_afs_seed(c->sched, key, q->keep) != ERR_OK)
                rc = err_set(&msg, ERR_NOMEM, "LocalQueue %s: out of memory", key);
        }
        break;
    case CTRL_WPC:
        rc = sched_wpc_upsert(c->sched, &q->obj.u.wpc, &msg);
        break;
    case CTRL_PC:
        rc = sched_pc_upsert(c->sched, &q->obj.u.pc, &msg);
        break;
    case CTRL_AC:
        /* Active as its controller says (an external one sets the condition; sluice's own,
         * the ProvisioningRequest check, is not run yet): no condition is not active, as in
         * Kueue, so a ClusterQueue naming it waits (AdmissionCheckInactive). */
        rc = sched_check_upsert(c->sched, name, q->obj.u.ac.active == CHECK_ACTIVE_TRUE, &msg);
        break;
    default:
        break;
    }
    if (rc != ERR_OK)
        ctrl__log(c, CTRL_LOG_ERROR, "engine: %s %s: %s", kind_api[kind][1], name, msg.text);
    if (rc == ERR_NOMEM)
        c->refeed = true; /* the cache has it, the engine not: refeed() tries again */
    c->queue_dirty = true;
}

void ctrl__unadmit(ctrl_t *c, const char *key)
{
    /* EVICTING then evicted: the engine's own path for "no longer holds quota, queue again",
     * which keeps the queue-order timestamp (a never-written admission moves nobody). */
    if (sched_workload_evict(c->sched, key, NULL) == ERR_OK) {
        int64_t now = ctrl__now_ms();
        ctrl__metrics_release(c, key, now);
        sched_evicted(c->sched, key, now, NULL);
    }
    c->queue_dirty = true;
}

/*
 * The engine follows the API's record of each Workload, with two rules that make a restart, a
 * lost write or someone else's edit converge:
 *   API reserved (status.admission + QuotaReserved, not finished, active) but engine pending
 *     -> forget and re-add: a new Workload with an admission is taken as admitted;
 *   API not reserved but engine admitted, and no admission write of ours in flight
 *     -> back to pending;
 *   API on hold (QuotaReserved=False OnHold, not reserved: a StatefulSet at zero replicas)
 *     -> out of the engine, as Kueue's queues leave it (workload.IsAdmissible).
 * An eviction in progress is left to its writes (release calls sched_evicted()); with no write
 * of ours in flight, an API that shows it not reserved released it.
 */
void ctrl__engine_wl(ctrl_t *c, const char *key, ctrl_wl_t *w)
{
    const ctrl_wl_t *fresh = ctrl__wl(c, key);
    err_msg_t msg = {{0}};
    sched_wl_info_t info;
    sched_wl_opts_t opts = {0};
    bool known, reserved, backoff_at;
    json_t *view_json = NULL;
    const condition_t *rq;
    err_t rc;

    if (w == NULL) {
        ctrl__metrics_release(c, key, ctrl__now_ms());
        if (sched_workload_delete(c->sched, key, ctrl__now_ms(), &msg) == ERR_OK)
            c->queue_dirty = true;
        return;
    }
    if (fresh != NULL && fresh != w &&
        ctrl_rv_num(fresh->wl.meta.resource_version) > ctrl_rv_num(w->wl.meta.resource_version))
        goto out; /* an older version than one we already know: nothing to learn from it */
    if (!w->valid) {
        ctrl__log(c, CTRL_LOG_ERROR, "ignoring Workload %s: %s", key, w->invalid);
        goto out;
    }
    if (w->retired)
        goto out; /* its finish was fed before ctrl_wl_retire() kept nothing the engine reads */
    if (w->stripped) {
        /* Fed already, its pod sets freed: an upsert would give the engine a Workload that
         * requests nothing. Only out of memory brings one here (a write's answer that could not
         * be decoded leaves the older record in the overlay); the watch event feeds it. */
        ctrl__log(c, CTRL_LOG_DEBUG, "workload %s: not fed again (its record was stripped)", key);
        goto out;
    }
    known = sched_workload_info(c->sched, key, &info, NULL) == ERR_OK;
    reserved = ctrl_wl_reserved(w) && !w->wl.conditions.finished && w->wl.active;
    if (!reserved && ctrl_wl_on_hold(w) && !(known && ctrl__admitting(c, key))) {
        /* On hold is the answer to a write (ours, or someone's): no admission of ours in flight
         * predates it, so it is final even while the hold write itself still holds the key. */
        if (known) {
            ctrl__metrics_release(c, key, ctrl__now_ms());
            if (sched_workload_delete(c->sched, key, ctrl__now_ms(), &msg) == ERR_OK)
                c->queue_dirty = true;
        }
        goto out;
    }
    if (known && !reserved &&
        ((info.state == SCHED_WL_ADMITTED && ctrl__busy(c, CTRL_WORKLOAD, key)) ||
         (info.state == SCHED_WL_EVICTING && ctrl__admitting(c, key))))
        /* A view that predates a write of ours in flight: our admission (or its verification),
         * or anything while the engine holds it admitted. An EVICTING one -- picked as a victim
         * while its admission was in flight -- keeps its quota until the eviction is written
         * and released; but once no admission of ours is in flight, a view that shows it not
         * reserved is final (a release by someone else races our own release write, which then
         * fails: skipping that view left it EVICTING for good). */
        goto out;
    opts.created = w->wl.meta.creation_time * 1000;
    opts.admitted_at = w->wl.conditions.admitted_time * 1000;
    /* A check in Retry or Rejected on a Workload holding no quota (its controller wrote it
     * after an eviction's reset): Kueue's scheduler leaves it inadmissible. */
    for (size_t i = 0; !reserved && i < w->wl.ncheck_states; i++)
        opts.failed_checks = opts.failed_checks ||
                             w->wl.check_states[i].state == CHECK_STATE_RETRY ||
                             w->wl.check_states[i].state == CHECK_STATE_REJECTED;
    rq = ctrl_wl_cond(w, "Requeued");
    /* Kueue's queue waits for requeueState.requeueAt too, when a Retry check moved it later on
     * a Workload already requeued (backoffWaitingTimeExpired): held until readiness.c ends it. */
    backoff_at = !reserved && w->requeue_at * 1000 > ctrl__now_ms();
    if (c->cfg->pods_ready.enabled || backoff_at || w->wl.conditions.evicted ||
        (rq != NULL && strcmp(rq->status, "False") == 0)) {
        /* After a PodsReady timeout: queued by eviction time (requeuingStrategy.timestamp);
         * after it or a Retry admission check with a delay, held out of the queue until the
         * backoff is over (Requeued=False). */
        view_json = ctrl_wl_json(w);
        if (view_json != NULL) {
            opts.created = podsready_queue_ts(&c->cfg->pods_ready, view_json, opts.created);
            opts.hold = podsready_held(view_json) || backoff_at;
        }
    }
    if (known && reserved &&
        (info.state == SCHED_WL_PENDING || info.state == SCHED_WL_DEACTIVATED)) {
        ctrl__log(c, CTRL_LOG_DEBUG, "workload %s: engine pending, API admitted: re-adding", key);
        sched_workload_delete(c->sched, key, ctrl__now_ms(), NULL);
    } else if (known && !reserved && !w->wl.conditions.finished && w->wl.active &&
               info.state == SCHED_WL_ADMITTED) {
        ctrl__log(c, CTRL_LOG_DEBUG, "workload %s: engine admitted, API pending: requeued", key);
        ctrl__unadmit(c, key);
    } else if (known && info.state == SCHED_WL_EVICTING && !reserved) {
        /* Released by another writer (or a write whose answer was lost). */
        ctrl__metrics_release(c, key, ctrl__now_ms());
        sched_evicted(c->sched, key, ctrl__now_ms(), NULL);
    } else if (known && (w->wl.conditions.finished || !w->wl.active)) {
        /* The upsert below frees the quota of a finished or deactivated one. */
        ctrl__metrics_release(c, key, ctrl__now_ms());
    }
    rc = sched_workload_upsert(c->sched, &w->wl, &opts, &msg);
    if (rc == ERR_NOMEM) {
        /* Kept whole (not stripped) so that refeed() can give it to the engine again: without
         * that the Workload would wait unseen until its next change. */
        ctrl__log(c, CTRL_LOG_ERROR, "engine: workload %s: %s (tried again)", key, msg.text);
        c->refeed = true;
        c->queue_dirty = true;
        json_decref(view_json);
        return;
    }
    if (rc == ERR_OK && reserved && !w->wl.conditions.evicted &&
        util_hmap_get(&c->evictions, key) == NULL && w->wl.nunhealthy_nodes > 0)
        ctrl__nodes_unhealthy(c, key, w); /* failed nodes recorded before a restart, or by us */
    if (rc != ERR_OK)
        ctrl__log(c, CTRL_LOG_ERROR, "engine: workload %s: %s", key, msg.text);
    else if (reserved && !w->wl.conditions.evicted && util_hmap_get(&c->evictions, key) == NULL &&
             w->wl.ncheck_states > 0)
        ctrl__checks_sync(c, key, w); /* Ready, Retry or Rejected checks */
    else if (reserved && (w->wl.conditions.evicted || util_hmap_get(&c->evictions, key) != NULL) &&
             sched_workload_info(c->sched, key, &info, NULL) == ERR_OK &&
             info.state == SCHED_WL_ADMITTED)
        /* Evicted in the API (by us before a restart, or by a timeout), or an eviction of ours
         * not written yet (decided while the admission was being verified, which re-adds it):
         * the quota stays until the Job has stopped and the release is written, then
         * sched_evicted() requeues it. */
        sched_workload_evict(c->sched, key, NULL);
    if (rc == ERR_OK && w->wl.ncheck_states > 0 && !w->wl.conditions.finished &&
        (!reserved || w->wl.conditions.evicted) && !ctrl__busy(c, CTRL_WORKLOAD, key) &&
        util_hmap_get(&c->evictions, key) == NULL)
        /* A check set to Retry after the eviction: requeueAt moves later (an eviction of ours
         * in flight carries its own; its answer comes back here). */
        ctrl__checks_requeue_at(c, key, w);
    c->queue_dirty = true;
out:
    json_decref(view_json);
    ctrl_wl_strip(&c->rkind[CTRL_WORKLOAD], w);
    ctrl_wl_retire(&c->rkind[CTRL_WORKLOAD], w); /* a finished one: only what its readers read */
}

/* The queue-side kinds are listed: feed them in dependency order (flavors and cohorts before
 * the ClusterQueues naming them, queues before Workloads), then list Workloads and Jobs, which
 * go into the engine as they arrive (the restart rebuild). */
static void feed_queues(ctrl_t *c)
{
    const char *key;
    const ctrl_qobj_t *q;
    err_msg_t msg = {{0}};

    /* Topology-aware scheduling is on when the server serves Topologies (their CRD installed);
     * decided once, before any flavor or Workload reaches the engine (it reads the setting when
     * they are upserted). A CRD installed later takes a restart, as in Kueue. */
    c->tas = c->synced[CTRL_TOPOLOGY];
    if (c->tas) {
        sched_config_t sc;
        sched_config_from(&sc, &c->cfg->kueue);
        sc.tas = true;
        if (sched_set_config(c->sched, &sc) != ERR_OK) {
            ctrl__log(c, CTRL_LOG_ERROR,
                      "engine: out of memory turning on topology-aware "
                      "scheduling: it stays off");
            c->tas = false;
        }
    }
    for (int k = 0; k < CTRL_WORKLOAD; k++) {
        CTRL_FOREACH(c, k, key, q)
        {
            const object_meta_t *m = q->valid ? object_meta_const(&q->obj) : NULL;
            feed_obj(c, k, m ? m->namespace : NULL, m ? m->name : key, q);
        }
    }
    c->queues_fed = true;
    for (int k = CTRL_WORKLOAD; k < c->nkinds; k++) {
        if (kube_informer_start(c->inf[k], &msg) != ERR_OK)
            ctrl__log(c, CTRL_LOG_ERROR, "informer %s: %s", c->res[k].resource, msg.text);
    }
}

/* After an allocation failure kept objects out of the engine or dropped a reconcile (a key not
 * queued, a write not made: c->refeed): feed the queue-side objects again (upserts of what the
 * engine has are no-ops) and every Workload record not yet taken by the engine
 * (ctrl__engine_wl() strips a record once the engine has it, and keeps it whole when the engine
 * could not take it), then reconcile every Workload and job once more -- reconcilers are
 * level-based, so a second look at what is done changes nothing. Runs from the periodic timer,
 * so a failure is retried once a second until memory is back. */
static void refeed(ctrl_t *c)
{
    const char *key;
    const ctrl_qobj_t *q;
    ctrl_wl_t *w;

    c->refeed = false;
    ctrl__nodes_refeed(c);
    for (int k = 0; k < CTRL_WORKLOAD; k++) {
        CTRL_FOREACH(c, k, key, q)
        {
            const object_meta_t *m = q->valid ? object_meta_const(&q->obj) : NULL;
            feed_obj(c, k, m ? m->namespace : NULL, m ? m->name : key, q);
        }
    }
    CTRL_FOREACH(c, CTRL_WORKLOAD, key, w)
    {
        if (!w->stripped)
            ctrl__engine_wl(c, key, w);
        if (c->fed)
            ctrl__mark_wl(c, key);
    }
    if (c->fed) {
        void *rec;
        for (int k = CTRL_JOB; k < c->nkinds; k++)
            CTRL_FOREACH(c, k, key, rec) ctrl__mark_job(c, k, key);
    }
    ctrl__kick(c);
}

/* Workloads and Jobs are listed too: reconcile everything once, then cycles may run. */
static void feed_done(ctrl_t *c)
{
    const char *key;
    void *rec;

    size_t jobs = 0;

    CTRL_FOREACH(c, CTRL_WORKLOAD, key, rec) ctrl__mark_wl(c, key);
    for (int k = CTRL_JOB; k < c->nkinds; k++) {
        CTRL_FOREACH(c, k, key, rec) ctrl__mark_job(c, k, key);
        jobs += kube_informer_len(c->inf[k]);
    }
    c->fed = true;
    c->queue_dirty = true;
    ctrl__log(c, CTRL_LOG_INFO, "caches synced: %zu workloads, %zu jobs, %zu cluster queues",
              kube_informer_len(c->inf[CTRL_WORKLOAD]), jobs, kube_informer_len(c->inf[CTRL_CQ]));
}

/* ---- informer handlers ------------------------------------------------------------------- */

static ctrl_kind_t inf_kind(ctrl_t *c, kube_informer_t *inf)
{
    for (int k = 0; k < c->nkinds; k++)
        if (c->inf[k] == inf)
            return (ctrl_kind_t)k;
    return CTRL__KINDS;
}

/* A job is gone: its Workload is orphaned, reconcile it (finalizer, delete). */
static void job_gone(ctrl_t *c, ctrl_kind_t kind, const ctrl_job_t *j)
{
    const object_meta_t *m = &j->meta;
    char wname[JOB_WORKLOAD_NAME_MAX + 1], key[CTRL_KEY_MAX];

    if (m->name != NULL && m->namespace != NULL &&
        jobs_workload_name(ctrl__jobs_kind(c, kind), m->name, m->uid, JOB_WORKLOAD_NAME_MAX, wname,
                           sizeof(wname), NULL) == ERR_OK) {
        snprintf(key, sizeof(key), "%s/%s", m->namespace, wname);
        ctrl__mark_wl(c, key);
    }
}

/* Settings that have no effect never pass silently: a Workload's are logged when it first
 * shows up and whenever they change (not at each status update). */
static void log_no_effect(ctrl_t *c, const char *kind, const char *key, const char *now,
                          const char *before)
{
    if (now != NULL && (before == NULL || strcmp(now, before) != 0))
        ctrl__log(c, CTRL_LOG_INFO, "%s %s: %s", kind, key, now);
}

static void on_change(ctrl_t *c, kube_informer_t *inf, const char *key, void *rec, void *old)
{
    ctrl_kind_t kind = inf_kind(c, inf);
    char owner[CTRL_KEY_MAX];
    ctrl_kind_t ok;

    if (kind == CTRL__KINDS || c->closing)
        return;
    if (ctrl__is_job(c, kind)) {
        if (ctrl__jobs_kind(c, kind)->admit == JOBS_ADMIT_POD)
            ctrl__pods_index(c, key, rec, old);
        if (ctrl__jobs_kind(c, kind)->admit == JOBS_ADMIT_POD && c->fed)
            ctrl__pods_changed(c, kind, rec, old); /* its pod group, if any */
        if (rec == NULL) {
            ctrl_record_free(&c->rkind[kind], util_hmap_del(&c->overlay[kind], key));
            job_gone(c, kind, old);
        } else {
            overlay_settle(c, kind, key);
        }
        if (c->fed)
            ctrl__mark_job(c, kind, key);
        return;
    }
    switch (kind) {
    case CTRL_WORKLOAD: {
        ctrl_wl_t *w = rec != NULL ? rec : old;
        ctrl__pods_ready_count(c, rec, old);
        /* A job's Workload carries the job's templates, which its webhook checked. */
        if (rec != NULL && w->owner.kind == NULL && !w->pod_owned)
            log_no_effect(c, "Workload", key, w->no_effect,
                          old != NULL ? ((const ctrl_wl_t *)old)->no_effect : NULL);
        if (rec == NULL) {
            ctrl_record_free(&c->rkind[kind], util_hmap_del(&c->overlay[kind], key));
            ctrl__eviction_drop(c, key);
        }
        ctrl__acct_changed(c, old, rec);
        ctrl__extowner_wl_changed(c, key, rec, old);
        ctrl__engine_wl(c, key, rec);
        if (rec != NULL)
            overlay_settle(c, kind, key);
        if (ctrl__owner_job(c, w, &ok, owner, sizeof(owner), NULL) != NULL)
            ctrl__mark_job(c, ok, owner);
        if (c->fed)
            ctrl__mark_wl(c, key);
        break;
    }
    default:
        if (c->queues_fed && ctrl_qobj_feeds_engine(old, rec)) {
            const ctrl_qobj_t *q = rec != NULL ? rec : old;
            const object_meta_t *m = q->valid ? object_meta_const(&q->obj) : NULL;
            const char *slash = strchr(key, '/');
            char ns[256] = "";
            if (slash != NULL)
                snprintf(ns, sizeof(ns), "%.*s", (int)(slash - key), key);
            feed_obj(c, kind, ns[0] ? ns : NULL, m ? m->name : (slash ? slash + 1 : key), rec);
            ctrl__kick(c);
        }
        break;
    }
}

static void on_add(kube_informer_t *inf, const char *key, void *rec, json_t *raw, void *data)
{
    (void)raw;
    on_change(data, inf, key, rec, NULL);
}

static void on_update(kube_informer_t *inf, const char *key, void *old, void *rec, json_t *raw,
                      void *data)
{
    (void)raw;
    on_change(data, inf, key, rec, old);
}

static void on_delete(kube_informer_t *inf, const char *key, void *old, json_t *raw, void *data)
{
    (void)raw;
    on_change(data, inf, key, NULL, old);
}

/* Has every kind before `end` synced (or been skipped)? */
static bool all_synced(const ctrl_t *c, int end)
{
    for (int k = 0; k < end; k++)
        if (!c->synced[k] && !c->skipped[k])
            return false;
    return true;
}

/* A kind synced or was skipped: feed the engine once all queue-side kinds are in, then run once
 * everything is. A skipped kind that syncs later (its CRD installed meanwhile) just adds its
 * objects: they are reconciled as they arrive. */
static void synced_step(ctrl_t *c)
{
    if (!c->queues_fed && all_synced(c, CTRL_WORKLOAD))
        feed_queues(c);
    else if (c->queues_fed && !c->fed && all_synced(c, c->nkinds))
        feed_done(c);
}

static void on_synced(kube_informer_t *inf, void *data)
{
    ctrl_t *c = data;
    ctrl_kind_t k = inf_kind(c, inf);

    if (k == CTRL__KINDS)
        return;
    c->synced[k] = true;
    c->synced_kinds++;
    if (c->skipped[k]) {
        c->skipped[k] = false;
        ctrl__log(c, CTRL_LOG_INFO, "%s: served now: %s", c->res[k].resource,
                  k == CTRL_TOPOLOGY && !c->tas
                      ? "topology-aware scheduling stays off until sluice restarts"
                      : "its objects are managed");
    }
    synced_step(c);
}

void ctrl__kind_skipped(ctrl_t *c, ctrl_kind_t k, const kube_result_t *res)
{
    (void)res;
    if (c->skipped[k] || c->synced[k])
        return;
    c->skipped[k] = true;
    synced_step(c);
}

static void *codec_decode(json_t *obj, void *data)
{
    return ctrl_record_decode(data, obj);
}

static void codec_free(void *rec, void *data)
{
    ctrl_record_free(data, rec);
}

/* ---- the pass ---------------------------------------------------------------------------- */

static void on_tick(uv_timer_t *t);

static void pass(ctrl_t *c)
{
    json_t *jobs, *wls, *v;
    const char *key;

    if (!c->fed || !c->leader || c->writes_stopped || c->closing)
        return;
    c->stats.passes++;
    /* Take the due keys out so reconcilers may queue them again while we iterate. */
    jobs = ctrl_wq_take(&c->jobs_q, uv_now(c->loop));
    wls = ctrl_wq_take(&c->wls_q, uv_now(c->loop));
    json_object_foreach(jobs, key, v)
    {
        /* "<kind>:<ns/name>" */
        const char *colon = strchr(key, ':');
        if (colon != NULL)
            ctrl__reconcile_job(c, (ctrl_kind_t)atoi(key), colon + 1);
    }
    json_object_foreach(wls, key, v) ctrl__reconcile_wl(c, key);
    json_decref(jobs);
    json_decref(wls);
    /* blockAdmission: no cycle while an admitted Workload waits for its pods (Kueue blocks its
     * scheduler the same way); the heads say so in ctrl__statuses(). */
    c->blocked = ctrl__admission_blocked(c);
    /* Decisions are only worth making when they can be written soon: with admission writes
     * waiting for the window, the next cycle follows once they are out (ctrl__on_done kicks). */
    ctrl__verifications(c);
    if (!c->blocked && c->backlog == NULL) {
        /* Cycles are paced: changes that arrive together (a burst of finishes, creations, watch
         * events) are decided together. A cycle runs to quiescence, so pacing delays a decision
         * by at most the pause and saves re-evaluating every parked head of a cohort for each
         * single event in it. */
        uint64_t now = uv_now(c->loop);
        if (now >= c->next_cycle) {
            /* The pause after a cycle grows with what the cycle cost (4x its time), so the
             * engine takes at most a fifth of a core however large the cluster: decisions then
             * come in bigger batches instead of falling behind. */
            uint64_t ns = c->stats.engine_ns, spent;
            ctrl__cycle(c);
            spent = (c->stats.engine_ns - ns) / 1000000 * 4;
            c->next_cycle =
                uv_now(c->loop) + (spent > CTRL_CYCLE_INTERVAL_MS ? spent : CTRL_CYCLE_INTERVAL_MS);
        } else if (!uv_is_active((uv_handle_t *)&c->tick)) {
            uv_timer_start(&c->tick, on_tick, c->next_cycle - now, 0);
        }
    }
    ctrl__evictions(c);
}

static void on_tick(uv_timer_t *t)
{
    pass(container_of(t, ctrl_t, tick));
}

static void on_periodic(uv_timer_t *t)
{
    ctrl_t *c = container_of(t, ctrl_t, periodic);

    ctrl__metrics_tick(c);
    ctrl__estimate_tick(c); /* leader or standby: both serve the visibility API */
    if (c->refeed && c->queues_fed && !c->closing)
        refeed(c);
    if (!c->fed || !c->leader || c->writes_stopped || c->closing)
        return;
    ctrl__pods_ready_tick(c);
    ctrl__idle_tick(c);
    ctrl__prov_tick(c);
    pass(c);
    ctrl__statuses(c);
}

void ctrl__kick(ctrl_t *c)
{
    if (c->closing || uv_is_active((uv_handle_t *)&c->tick))
        return;
    uv_timer_start(&c->tick, on_tick, 1, 0);
}

static void maybe_free(ctrl_t *c);

static void overlay_fini(ctrl_t *c, int k)
{
    size_t pos = 0;
    void *rec;

    while (util_hmap_next(&c->overlay[k], &pos, NULL, &rec))
        ctrl_record_free(&c->rkind[k], rec);
    util_hmap_fini(&c->overlay[k]);
}

/* Free what ctrl_new() made besides the informers and the struct itself. */
static void state_free(ctrl_t *c)
{
    for (int k = 0; k < CTRL__KINDS; k++)
        overlay_fini(c, k);
    util_intern_fini(&c->strings); /* after every record (the informers' are gone already) */
    sched_free(c->sched);
    util_hmap_fini(&c->busy);
    podindex_fini(&c->pod_groups);
    ctrl__extowner_fini(c);
    podindex_fini(&c->ext_wls);
    ctrl_wq_fini(&c->jobs_q);
    ctrl_wq_fini(&c->wls_q);
    evictions_fini(c);
    util_hmap_fini(&c->status_checked);
    util_hmap_fini(&c->dep_missing);
    util_hmap_fini(&c->verify);
    problems_free(c->problems);
    ctrl__estimate_fini(c);
    ctrl__metrics_free(c);
    ctrl__acct_close(c);
    ctrl__prov_free(c);
}

/* ---- writes ------------------------------------------------------------------------------ */

ctrl_op_t *ctrl__op_new(ctrl_t *c, ctrl_op_kind_t op, ctrl_kind_t kind, const char *key,
                        ctrl_kind_t busy_kind, const char *busy)
{
    ctrl_op_t *o = calloc(1, sizeof(*o));
    char b[CTRL_KEY_MAX + 8];

    if (o == NULL) {
        c->refeed = true;
        return NULL;
    }
    o->c = c;
    o->op = op;
    o->kind = kind;
    o->key = strdup(key);
    if (busy != NULL) {
        ctrl__kind_key(busy_kind, busy, b, sizeof(b));
        o->busy = strdup(b);
    }
    if (o->key == NULL || (busy != NULL && o->busy == NULL) ||
        (o->busy != NULL && util_hmap_put_index(&c->busy, o->busy, (size_t)op) != ERR_OK)) {
        free(o->key);
        free(o->busy);
        free(o);
        c->refeed = true; /* the reconcile that wanted this write is dropped: refeed() redoes it */
        return NULL;
    }
    c->inflight++;
    return o;
}

void ctrl__op_free(ctrl_op_t *op)
{
    if (op == NULL)
        return;
    ctrl_t *c = op->c;
    if (op->started)
        ctrl_writer_done(&c->writer);
    if (op->busy != NULL)
        busy_release(c, op->busy);
    c->inflight--;
    free(op->key);
    free(op->busy);
    json_decref(op->body);
    json_decref(op->data);
    json_decref(op->nodes);
    json_decref(op->tols);
    free(op);
    if (c->closing)
        maybe_free(c);
}

/* Send what waits in the backlog while the window has room. */
static void drain_backlog(ctrl_t *c)
{
    while (c->backlog != NULL && !c->writes_stopped &&
           ctrl_writer_start(&c->writer, CTRL_WRITE_ADMISSION, uv_now(c->loop), NULL)) {
        ctrl_op_t *op = c->backlog;
        c->backlog = op->next;
        if (c->backlog == NULL)
            c->backlog_tail = NULL;
        op->next = NULL;
        op->started = true;
        if (!op->send(op)) {
            ctrl_writer_done(&c->writer);
            c->stats.write_errors++;
            c->refeed = true; /* not sent (out of memory): refeed() reconciles again */
            ctrl__op_free(op);
        }
    }
}

bool ctrl__can_write(ctrl_t *c, ctrl_write_class_t cls)
{
    if (cls == CTRL_WRITE_ADMISSION && c->backlog != NULL)
        return false;
    return ctrl_writer_ready(&c->writer, cls, uv_now(c->loop));
}

bool ctrl__submit(ctrl_t *c, ctrl_op_t *op)
{
    if ((op->cls != CTRL_WRITE_ADMISSION || c->backlog == NULL) &&
        ctrl_writer_start(&c->writer, op->cls, uv_now(c->loop), NULL)) {
        op->started = true;
        if (op->send(op))
            return true;
        /* Not even sent (the request could not be built: out of memory): the reconcile that
         * wanted it would be lost, so refeed() reconciles everything again. */
        c->stats.write_errors++;
        c->refeed = true;
        ctrl__op_free(op); /* releases the writer's slot */
        return false;
    }
    if (op->cls != CTRL_WRITE_ADMISSION) {
        ctrl__op_free(op);
        return false;
    }
    /* The window is full: wait in line, in decision order, holding the busy key. */
    if (c->backlog_tail != NULL)
        c->backlog_tail->next = op;
    else
        c->backlog = op;
    c->backlog_tail = op;
    return true;
}

/* A serving owner's look (pods.c owned_workloads: create, delete, queue or hold its replicas'
 * Workloads) passes over a Workload that a write holds busy, and no event of the owner need
 * come again: when a write on such a Workload ends, the owner is looked at once more
 * (integration_ctrl_lws waited 30 s for a scaled-down replica's Workload to go in a CI run). */
static void serving_owner_again(ctrl_t *c, const char *wkey)
{
    char owner[CTRL_KEY_MAX];
    ctrl_kind_t kind;
    const ctrl_wl_t *w = ctrl__wl(c, wkey);

    if (w != NULL && ctrl__owner_job(c, w, &kind, owner, sizeof(owner), NULL) != NULL &&
        ctrl__jobs_kind(c, kind)->admit == JOBS_ADMIT_PODS)
        ctrl__mark_job(c, kind, owner);
}

void ctrl__on_done(const kube_result_t *res, void *data)
{
    ctrl_op_t *op = data;
    ctrl_t *c = op->c;
    /* A DELETE answered 404: gone already, and our view lags behind (a watch down or late). */
    bool gone = res->err == ERR_NOT_FOUND && op->verb != NULL && strcmp(op->verb, "delete") == 0;

    ctrl__metrics_write(c, op, res);
    if (op->verb != NULL && !c->closing)
        ctrl_note_result(c, res, op->verb,
                         op->op == CTRL_OP_EVENT ? &events_res
                         : op->res != NULL       ? op->res
                                                 : &c->res[op->kind],
                         op->sub);
    if (res->err != ERR_OK && !res->canceled && op->op != CTRL_OP_EVENT) {
        c->stats.write_errors++;
        if (res->err == ERR_CONFLICT || res->err == ERR_EXISTS)
            c->stats.write_conflicts++;
        /* Conflicts and "already exists" are the optimistic-concurrency outcomes the
         * reconcilers expect (they re-read and decide again): not errors worth a log line. */
        ctrl__log(c,
                  res->err == ERR_CONFLICT || res->err == ERR_EXISTS || gone ? CTRL_LOG_DEBUG
                                                                             : CTRL_LOG_ERROR,
                  "write: %s", op->mutate_failed ? op->mutate_msg.text : res->msg.text);
    }
    if (res->err == ERR_OK && json_is_object(res->body) &&
        (op->kind == CTRL_WORKLOAD || ctrl__is_job(c, op->kind)) && op->op != CTRL_OP_EVENT &&
        op->op != CTRL_OP_PROV && op->op != CTRL_OP_WL_DELETE && !c->closing) {
        /* The answer is the object as written: ours to read until the cache catches up. */
        void *rec = ctrl_record_decode(&c->rkind[op->kind], res->body);
        char key[CTRL_KEY_MAX];
        if (rec == NULL)
            ctrl__log(c, CTRL_LOG_ERROR, "out of memory recording %s", op->key);
        else
            overlay_put(c, op->kind, ctrl__meta_key(rec_meta(op->kind, rec), key, sizeof(key)),
                        rec);
    }
    if (!c->closing) {
        switch (op->op) {
        case CTRL_OP_WL_ADMIT:
        case CTRL_OP_WL_EVICT:
        case CTRL_OP_WL_PENDING:
        case CTRL_OP_WL_DEACTIVATE:
        case CTRL_OP_WL_VERIFY:
            ctrl__admit_done(c, op, res);
            break;
        case CTRL_OP_QUEUE_STATUS:
        case CTRL_OP_QUEUE_FINALIZER:
        case CTRL_OP_EVENT:
        case CTRL_OP_WL_IDLE: /* its next step reads the Workload again */
        case CTRL_OP_PROV:    /* provctl.c's callbacks did their part */
            break;
        case CTRL_OP_POD_OWNER: /* an owner event meanwhile: ctrl__busy_again() */
            break;
        case CTRL_OP_POD_MARK:
            ctrl__pods_mark_done(c, op, res);
            break;
        case CTRL_OP_WL_CHECKS:
            /* Admitted=True written: its Job starts now. The Workload's watch event may have come
             * while this write held it busy, and that reconcile was skipped; no later event
             * would bring the start (integration_ctrl_checks waited 20 s for it in a CI run). */
            ctrl__mark_wl_and_job(c, op->key);
            break;
        default:
            ctrl__job_done(c, op, res);
            break;
        }
    }
    if (!c->closing && op->busy != NULL) {
        /* A write that failed for a reason other than optimistic concurrency (a conflict, an
         * object already created or gone: decide again at once) is retried after the backoff
         * of the key whose reconcile made it (the one it holds busy), so a forbidden or failing
         * write never spins; success resets the backoff. A DELETE of what is gone already backs
         * off too: until the cache shows the deletion, each reconcile would delete again (it
         * spun every 50 ms while a watch was down, test/integration/ctrl_compact.sh). */
        int kind = atoi(op->busy);
        const char *key = strchr(op->busy, ':') + 1;
        ctrl_wq_t *q = ctrl__is_job(c, kind)   ? &c->jobs_q
                       : kind == CTRL_WORKLOAD ? &c->wls_q
                                               : NULL;
        if (q == &c->jobs_q)
            key = op->busy; /* the jobs' queue is keyed by "<kind>:<key>" too */
        if (q != NULL && res->err == ERR_OK)
            ctrl_wq_forget(q, key);
        else if (q != NULL && !res->canceled && res->err != ERR_CONFLICT &&
                 res->err != ERR_EXISTS && (res->err != ERR_NOT_FOUND || gone) &&
                 ctrl_wq_fail(q, key, uv_now(c->loop)) != ERR_OK)
            ctrl__log(c, CTRL_LOG_ERROR, "out of memory requeueing %s", key);
        if (kind == CTRL_WORKLOAD)
            serving_owner_again(c, key);
    }
    bool closing = c->closing;
    ctrl__op_free(op); /* may free `c` while closing */
    if (!closing) {
        drain_backlog(c);
        ctrl__kick(c);
    }
}

static bool send_patch(ctrl_op_t *op)
{
    ctrl_t *c = op->c;
    char ns[256] = "";
    const char *slash = strchr(op->key, '/'), *name = op->key;
    err_msg_t msg = {{0}};

    if (c->res[op->kind].namespaced && slash != NULL) {
        snprintf(ns, sizeof(ns), "%.*s", (int)(slash - op->key), op->key);
        name = slash + 1;
    }
    if (kube_patch(c->client, &c->res[op->kind], ns[0] ? ns : NULL, name, op->sub, KUBE_PATCH_MERGE,
                   op->body, ctrl__on_done, op, NULL, &msg) != ERR_OK) {
        ctrl__log(c, CTRL_LOG_ERROR, "patch %s: %s", op->key, msg.text);
        return false;
    }
    return true;
}

bool ctrl__patch(ctrl_t *c, ctrl_op_t *op, const char *sub, json_t *patch)
{
    op->verb = "patch";
    op->sub = sub != NULL && strcmp(sub, "status") == 0 ? "status" : NULL;
    op->body = json_incref(patch);
    op->send = send_patch;
    return ctrl__submit(c, op);
}

static bool send_event(ctrl_op_t *op)
{
    const char *ns =
        json_string_value(json_object_get(json_object_get(op->body, "metadata"), "namespace"));

    return kube_create(op->c->client, &events_res, ns, op->body, ctrl__on_done, op, NULL, NULL) ==
           ERR_OK;
}

void ctrl__event(ctrl_t *c, ctrl_kind_t kind, const object_meta_t *m, const char *type,
                 const char *reason, const char *fmt, ...)
{
    const char *ns = m->namespace, *name = m->name, *uid = m->uid;
    char text[COND_EVENT_MESSAGE_MAX + 1], ts[32], gen[300];
    json_t *ev;
    ctrl_op_t *op;
    va_list ap;

    if (c->writes_stopped || name == NULL)
        return;
    if (!ctrl__can_write(c, CTRL_WRITE_EVENT)) {
        /* Over the Event budget: admissions matter more than their announcements. */
        ctrl_writer_drop_event(&c->writer);
        return;
    }
    va_start(ap, fmt);
    vsnprintf(text, sizeof(text), fmt, ap);
    va_end(ap);
    text[cond_utf8_cut(text, COND_EVENT_MESSAGE_MAX)] = '\0';
    snprintf(gen, sizeof(gen), "%.240s.", name);
    cond_time_str(ctrl__now_ms() / 1000, ts, sizeof(ts));
    ev = json_pack("{s:{s:s,s:s},s:{s:s,s:s,s:s,s:s,s:s},s:s,s:s,s:s,s:{s:s},s:s,s:s,s:i,s:s}",
                   "metadata", "generateName", gen, "namespace", ns ? ns : "default",
                   "involvedObject", "apiVersion",
                   ctrl__is_job(c, kind) ? c->api_version[kind] : kind_api[kind][0], "kind",
                   ctrl__is_job(c, kind) ? c->rkind[kind].job->kind : kind_api[kind][1], "name",
                   name, "namespace", ns ? ns : "", "uid", uid ? uid : "", "reason", reason,
                   "message", text, "type", type, "source", "component", "sluice", "firstTimestamp",
                   ts, "lastTimestamp", ts, "count", 1, "reportingComponent", "sluice");
    op = ev ? ctrl__op_new(c, CTRL_OP_EVENT, kind, name, 0, NULL) : NULL;
    if (op != NULL) {
        op->verb = "create";
        op->cls = CTRL_WRITE_EVENT;
        op->body = json_incref(ev);
        op->send = send_event;
        ctrl__submit(c, op);
    }
    json_decref(ev);
}

/* ---- lifecycle --------------------------------------------------------------------------- */

/*
 * The job kinds to watch: each kind of the framework table (jobs/framework.h) that
 * integrations.frameworks enables, in the table's order, from CTRL_JOB on. batch/job reads the
 * configured Job resource (--job-resource: tests serve Jobs from a CRD on servers whose batch/v1
 * cannot suspend); the others their own group, version and resource. A framework Kueue knows
 * but sluice has no kind for, or one held through its pods' scheduling gates (plain Pods, the
 * serving kinds), is said once and left alone.
 */
static void job_kinds(ctrl_t *c)
{
    const ctrl_config_t *cfg = c->cfg;
    const jobs_kind_t *k;

    c->nkinds = CTRL_JOB;
    for (size_t i = 0; (k = jobs_kind_at(i)) != NULL && c->nkinds < CTRL__KINDS; i++) {
        int n = c->nkinds;
        /* The serving kinds are admitted through their pods' scheduling gates. A Deployment's
         * Pods are plain Pods (its webhook marks the template; pods.c runs them): no informer.
         * A StatefulSet's and a LeaderWorkerSet's are watched: their events make pods.c mark
         * their Pods into pod groups. */
        if (!ctrl_framework_enabled(cfg, k->framework) ||
            (k->admit == JOBS_ADMIT_PODS && strcmp(k->framework, "deployment") == 0))
            continue;
        c->rkind[n].job = k;
        c->rkind[n].kind = k->kind;
        if (strcmp(k->framework, "batch/job") == 0)
            c->res[n] =
                (kube_resource_t){cfg->job_group, cfg->job_version, cfg->job_resource, true};
        else
            c->res[n] = (kube_resource_t){k->group, k->version, k->resource, true};
        if (c->res[n].group[0] != '\0')
            snprintf(c->api_version[n], sizeof(c->api_version[n]), "%s/%s", c->res[n].group,
                     c->res[n].version);
        else
            snprintf(c->api_version[n], sizeof(c->api_version[n]), "%s", c->res[n].version);
        c->rkind[n].api_version = c->api_version[n];
        for (size_t l = 0; k->kind[l] != '\0' && l + 1 < sizeof(c->noun[n]); l++)
            c->noun[n][l] = (char)tolower((unsigned char)k->kind[l]);
        c->nkinds++;
    }
    for (size_t i = 0; i < cfg->integrations.nframeworks; i++)
        if (jobs_kind_named(cfg->integrations.frameworks[i]) == NULL)
            ctrl__log(c, CTRL_LOG_ERROR,
                      "integrations.frameworks: %s is not supported by sluice run yet: its objects "
                      "are not managed (docs/configuration.md)",
                      cfg->integrations.frameworks[i]);
}

err_t ctrl_new(kube_client_t *client, const ctrl_config_t *cfg, ctrl_log_fn log, void *log_data,
               ctrl_t **out, err_msg_t *msg)
{
    ctrl_t *c = calloc(1, sizeof(*c));
    sched_config_t sc;
    kube_informer_typed_handlers_t h = {on_add, on_update, on_delete, on_synced,
                                        ctrl__on_informer_error};

    if (c == NULL)
        return err_set(msg, ERR_NOMEM, "controller: out of memory");
    c->client = client;
    c->loop = kube_client_loop(client);
    c->cfg = cfg;
    c->log = log;
    c->log_data = log_data;
    memcpy(c->res, kind_res, sizeof(c->res));
    job_kinds(c);
    sched_config_from(&sc, &cfg->kueue);
    c->sched = sched_new(&sc);
    util_hmap_init(&c->busy, 0);
    podindex_init(&c->pod_groups);
    util_hmap_init(&c->ext_owners, 0);
    util_hmap_init(&c->ext_disc, 0);
    podindex_init(&c->ext_wls);
    util_hmap_init(&c->evictions, 0);
    util_hmap_init(&c->status_checked, 0);
    util_hmap_init(&c->dep_missing, 0);
    util_hmap_init(&c->verify, 0);
    ctrl__estimate_init(c);
    if (ctrl__health_init(c) != ERR_OK || c->sched == NULL || ctrl__metrics_init(c) != ERR_OK ||
        ctrl_wq_init(&c->jobs_q, 0, 0) != ERR_OK || ctrl_wq_init(&c->wls_q, 0, 0) != ERR_OK)
        goto oom;
    for (int k = 0; k < CTRL__KINDS; k++)
        util_hmap_init(&c->overlay[k], 0);
    util_intern_init(&c->strings);
    c->rkind[CTRL_WORKLOAD].strings = &c->strings;
    for (int k = 0; k < c->nkinds; k++) {
        kube_codec_t codec = {codec_decode, codec_free, &c->rkind[k]};
        if (k < CTRL_JOB) {
            c->rkind[k].api_version = kind_api[k][0];
            c->rkind[k].kind = kind_api[k][1];
        }
        /* Pods: only those the pod webhook marked managed (Kueue's pod integration looks at
         * no other), so the cache holds the Pods sluice admits, not every Pod of the cluster. */
        kube_informer_opts_t pod_opts = {.label_selector = JOBS_POD_MANAGED "=true"};
        bool pods = k >= CTRL_JOB && c->rkind[k].job->admit == JOBS_ADMIT_POD;
        c->inf[k] =
            kube_informer_new_typed(client, &c->res[k], pods ? &pod_opts : NULL, &codec, &h, c);
        if (c->inf[k] == NULL)
            goto oom;
    }
    if (ctrl__deps_new(c) != ERR_OK || ctrl__prov_new(c) != ERR_OK)
        goto oom;
    if (ctrl__acct_open(c, msg) != ERR_OK || ctrl__idle_new(c, msg) != ERR_OK ||
        ctrl__nodes_new(c, msg) != ERR_OK) {
        if (c->idle != NULL)
            ctrl__idle_close(c, NULL, NULL);
        for (int k = 0; k < c->nkinds; k++)
            kube_informer_close(c->inf[k], NULL, NULL);
        ctrl__deps_close(c, NULL, NULL);
        ctrl__prov_close(c, NULL, NULL);
        state_free(c); /* closes the accounting log */
        free(c);
        return ERR_IO;
    }
    ctrl_writer_init(&c->writer, NULL, uv_now(c->loop));
    uv_timer_init(c->loop, &c->tick);
    uv_timer_init(c->loop, &c->periodic);
    c->open_handles = 2;
    *out = c;
    return ERR_OK;
oom:
    for (int k = 0; k < c->nkinds; k++)
        kube_informer_close(c->inf[k], NULL, NULL); /* never started: their caches are empty */
    ctrl__deps_close(c, NULL, NULL);
    ctrl__prov_close(c, NULL, NULL);
    state_free(c);
    free(c);
    return err_set(msg, ERR_NOMEM, "controller: out of memory");
}

err_t ctrl_start(ctrl_t *c, err_msg_t *msg)
{
    /* The queue-side kinds first; Workloads and Jobs once those are in the engine. The objects
     * jobs name (training runtimes) with the queue side, so that they are mostly cached when
     * the jobs are listed (deps.c resolves again those listed before). */
    for (int k = 0; k < CTRL_WORKLOAD; k++) {
        err_t rc = kube_informer_start(c->inf[k], msg);
        if (rc != ERR_OK)
            return err_prefix(msg, rc, "informer %s: ", c->res[k].resource);
    }
    if (ctrl__idle_start(c, msg) != ERR_OK)
        return err_prefix(msg, ERR_IO, "idle reclaim: informer pods: ");
    if (ctrl__nodes_start(c, msg) != ERR_OK)
        return err_prefix(msg, ERR_IO, "informer nodes/pods: ");
    err_t rc = ctrl__deps_start(c, msg);
    if (rc == ERR_OK)
        rc = ctrl__prov_start(c, msg);
    if (rc != ERR_OK)
        return rc;
    uv_timer_start(&c->periodic, on_periodic, 1000, 1000);
    return ERR_OK;
}

void ctrl_set_leader(ctrl_t *c, bool leader)
{
    if (leader == c->leader)
        return;
    c->leader = leader;
    ctrl__log(c, CTRL_LOG_INFO, "%s", leader ? "leading: writes enabled" : "not leading");
    if (leader && c->fed) {
        const char *key;
        void *rec;
        CTRL_FOREACH(c, CTRL_WORKLOAD, key, rec) ctrl__mark_wl(c, key);
        for (int k = CTRL_JOB; k < c->nkinds; k++)
            CTRL_FOREACH(c, k, key, rec) ctrl__mark_job(c, k, key);
        c->queue_dirty = true;
    }
    ctrl__kick(c);
}

/* Give up the writes that never left: after a stop nothing new may reach the API. */
static void drop_backlog(ctrl_t *c)
{
    while (c->backlog != NULL) {
        ctrl_op_t *op = c->backlog;
        c->backlog = op->next;
        ctrl__op_free(op);
    }
    c->backlog_tail = NULL;
}

void ctrl_stop_writes(ctrl_t *c)
{
    c->writes_stopped = true;
    drop_backlog(c);
}

bool ctrl_synced(const ctrl_t *c)
{
    return c->fed;
}

size_t ctrl_inflight(const ctrl_t *c)
{
    return c->inflight;
}

ctrl_stats_t ctrl_stats(const ctrl_t *c)
{
    ctrl_stats_t st = c->stats;

    for (int i = 0; i < CTRL_WRITE__CLASSES && i < 4; i++)
        st.writes[i] = c->writer.stats.started[i];
    st.events_dropped = c->writer.stats.dropped_events;
    return st;
}

const sched_t *ctrl_engine(const ctrl_t *c)
{
    return c->sched;
}

const object_t *ctrl_get(const ctrl_t *c, ctrl_kind_t kind, const char *ns, const char *name)
{
    const ctrl_qobj_t *q;

    if (kind >= CTRL_WORKLOAD)
        return NULL;
    q = kube_informer_get(c->inf[kind], ns, name);
    return q != NULL && q->valid ? &q->obj : NULL;
}

static void maybe_free(ctrl_t *c)
{
    if (c->open_handles > 0 || c->inflight > 0)
        return;
    state_free(c);
    if (c->on_closed != NULL)
        c->on_closed(c->on_closed_data);
    free(c);
}

void ctrl__handle_released(ctrl_t *c)
{
    c->open_handles--;
    maybe_free(c);
}

static void on_timer_closed(uv_handle_t *h)
{
    ctrl__handle_released(h->data);
}

static void on_inf_closed(void *data)
{
    ctrl_t *c = data;

    c->open_handles--;
    maybe_free(c);
}

void ctrl_close(ctrl_t *c, void (*on_closed)(void *data), void *data)
{
    if (c == NULL)
        return;
    c->closing = true;
    c->writes_stopped = true;
    drop_backlog(c);
    c->on_closed = on_closed;
    c->on_closed_data = data;
    c->tick.data = c;
    c->periodic.data = c;
    c->open_handles += (size_t)c->nkinds;
    for (int k = 0; k < c->nkinds; k++)
        kube_informer_close(c->inf[k], on_inf_closed, c);
    if (c->idle != NULL) {
        c->open_handles++;
        ctrl__idle_close(c, on_inf_closed, c);
    }
    if (c->nodes != NULL) {
        c->open_handles++;
        ctrl__nodes_close(c, on_inf_closed, c);
    }
    c->open_handles += (size_t)c->ndeps;
    ctrl__deps_close(c, on_inf_closed, c);
    c->open_handles += 2;
    c->open_handles -= 2 - ctrl__prov_close(c, on_inf_closed, c);
    uv_close((uv_handle_t *)&c->tick, on_timer_closed);
    uv_close((uv_handle_t *)&c->periodic, on_timer_closed);
}
