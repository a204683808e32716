/* apply -- apply one scenario change to the engine: objects, and workloads with their events. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "sim/run_int.h"

#include "jobs/job_workload.h"
#include "model/object.h"
#include "model/selector.h"
#include "util/grow.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * Kubernetes objects map one to one onto engine calls, except Jobs: a managed Job becomes the
 * Workload Kueue would build for it (lib/jobs), renamed after the Job so that events name it
 * `namespace/jobname` as the contract says. A Workload object runs as written, minus any status
 * it carries: every workload of a scenario starts pending at its `at`.
 */

static const char default_ns[] = "default";

static const char *ns_or_default(const char *ns)
{
    return ns != NULL && ns[0] != '\0' ? ns : default_ns;
}

/* ---- priority lookups for Jobs (Kueue's ExtractPriority, via lib/jobs) ---------------------- */

typedef struct prio_ctx_s {
    sim_run_t *r;
} prio_ctx_t;

/* The live document of class `name` in `live` (name -> doc index + 1, 0 = deleted). */
static const object_t *live_object(sim_run_t *r, const util_hmap_t *live, const char *name)
{
    size_t v = 0;
    if (!util_hmap_get_index(live, name, &v) || v == 0)
        return NULL;
    return &r->sc->docs[v - 1].obj;
}

static const workload_priority_class_t *lookup_wpc(void *ctx, const char *name)
{
    sim_run_t *r = ((prio_ctx_t *)ctx)->r;
    const object_t *o = live_object(r, &r->wpc_live, name);
    return o != NULL ? &o->u.wpc : NULL;
}

static const priority_class_t *lookup_pc(void *ctx, const char *name)
{
    sim_run_t *r = ((prio_ctx_t *)ctx)->r;
    const object_t *o = live_object(r, &r->pc_live, name);
    return o != NULL ? &o->u.pc : NULL;
}

/* The idx-th live PriorityClass, in document order. */
static const priority_class_t *lookup_pc_at(void *ctx, size_t idx)
{
    sim_run_t *r = ((prio_ctx_t *)ctx)->r;
    size_t seen = 0;

    for (size_t i = 0; i < r->npc_docs; i++) {
        const object_t *o = &r->sc->docs[r->pc_docs[i]].obj;
        if (o->u.pc.meta.name == NULL || live_object(r, &r->pc_live, o->u.pc.meta.name) != o)
            continue;
        if (seen++ == idx)
            return &o->u.pc;
    }
    return NULL;
}

/* ---- workloads ----------------------------------------------------------------------------- */

/* Is LocalQueue ns/name alive now? */
static bool lq_alive(sim_run_t *r, const char *ns, const char *name)
{
    char key[512];
    size_t v = 0;

    snprintf(key, sizeof(key), "%s/%s", ns, name);
    return util_hmap_get_index(&r->lq_live, key, &v) && v == 1;
}

/* Does Configuration.managedJobsNamespaceSelector select namespace `ns`? (into *managed) Absent,
 * Kueue's default applies: every namespace but kube-system and kueue-system. A namespace has the
 * label kubernetes.io/metadata.name = its name, as the API server sets it. */
static err_t ns_managed(sim_run_t *r, const configuration_t *conf, const char *ns, bool *managed)
{
    const object_t *o = live_object(r, &r->ns_live, ns);
    kv_list_t labels = {NULL, 0};

    if (!conf->managed_jobs_namespace_selector.present) {
        *managed = strcmp(ns, "kube-system") != 0 && strcmp(ns, "kueue-system") != 0;
        return ERR_OK;
    }
    if ((o != NULL && kv_list_copy(&labels, &o->u.ns.meta.labels) != ERR_OK) ||
        kv_list_set(&labels, "kubernetes.io/metadata.name", ns) != ERR_OK) {
        kv_list_fini(&labels);
        return ERR_NOMEM;
    }
    *managed = selector_matches(&conf->managed_jobs_namespace_selector, &labels);
    kv_list_fini(&labels);
    return ERR_OK;
}

/* Does Kueue manage a Job or integration object without a queue-name label in namespace `ns`?
 * Its defaulting webhook gives it the LocalQueue "default" of its namespace when one exists
 * (*use_default); manageJobsWithoutQueueName manages it anyway (it then waits for a LocalQueue
 * that does not exist). Otherwise Kueue leaves it alone: ERR_NOT_FOUND. */
static err_t unlabelled_managed(sim_run_t *r, const char *ns, bool *use_default)
{
    const configuration_t *conf = r->sc->config;
    bool managed = false;

    *use_default = lq_alive(r, ns, "default");
    if (*use_default)
        return ERR_OK;
    if (conf == NULL || !conf->manage_jobs_without_queue_name)
        return ERR_NOT_FOUND;
    if (ns_managed(r, conf, ns, &managed) != ERR_OK)
        return ERR_NOMEM;
    return managed ? ERR_OK : ERR_NOT_FOUND;
}

/* The Workload of an integration object (JobSet, PyTorchJob, ...), built when the scenario was
 * loaded (lib/jobs, the operator's code), as a shallow copy the caller releases with
 * free_workload(): named after the object as a Job's is, its queue defaulted as a Job's, its
 * priority resolved as a Job's -- from the priority-class label, else the PriorityClass the kind
 * names (a Kubeflow job's schedulingPolicy, else the first pod set's priorityClassName:
 * jobs_priority_class()), else a globalDefault class. */
static err_t build_integration_workload(sim_run_t *r, const integration_t *it, const char *name,
                                        workload_t *out, err_msg_t *msg)
{
    const char *ns = ns_or_default(it->meta.namespace);
    prio_ctx_t pctx = {r};
    job_priority_lookup_t lookup = {&pctx, lookup_wpc, lookup_pc, lookup_pc_at};
    job_t prio;
    bool use_default = false;
    err_t rc;

    *out = it->wl;
    out->meta.name = (char *)name;
    out->meta.namespace = (char *)ns;
    out->priority_class = NULL; /* owned by `out` from here: set by job_workload_priority() */
    if (out->queue_name == NULL || out->queue_name[0] == '\0') {
        rc = unlabelled_managed(r, ns, &use_default);
        if (rc != ERR_OK)
            return rc;
        if (use_default)
            out->queue_name = (char *)"default";
    }
    memset(&prio, 0, sizeof(prio));
    prio.meta = it->meta;
    prio.spec.priority_class_name = it->priority_class_name;
    rc = job_workload_priority(&prio, &lookup, out, msg);
    if (rc != ERR_OK)
        free(out->priority_class);
    return rc;
}

/* Build the engine's view of the workload in `doc` into zeroed `out` (owned by the caller);
 * `rname` (borrowed: it must outlive `out`) names a replica's workload of a per-replica serving
 * owner, NULL the document's one workload. Returns ERR_NOT_FOUND for a Job Kueue would not
 * manage (no queue, or a missing priority class): it then has no workload at all. */
static err_t build_workload(sim_run_t *r, const sim_doc_t *doc, const char *rname, workload_t *out,
                            err_msg_t *msg)
{
    const object_t *o = &doc->obj;
    err_t rc;

    if (o->kind == KIND_INTEGRATION) {
        if (!o->u.integ.built)
            return ERR_NOT_FOUND; /* one Kueue leaves alone (kindobj_decode()) */
        /* A pod group's workload is named after the group (doc->group). */
        const char *name = rname != NULL        ? rname
                           : doc->group != NULL ? doc->group
                                                : o->u.integ.meta.name;
        return build_integration_workload(r, &o->u.integ, name, out, msg);
    }
    if (o->kind == KIND_WORKLOAD) {
        /* Shallow copy: the engine copies what it keeps, and nothing here is freed. */
        *out = o->u.wl;
        out->meta.namespace = (char *)ns_or_default(o->u.wl.meta.namespace);
        out->admission = NULL;
        memset(&out->conditions, 0, sizeof(out->conditions));
        out->accumulated_exec_seconds = 0;
        return ERR_OK;
    }

    const job_t *job = &o->u.job;
    const char *ns = ns_or_default(job->meta.namespace);
    const char *queue = kv_list_get(&job->meta.labels, JOB_LABEL_QUEUE_NAME);
    const configuration_t *conf = r->sc->config;
    job_t copy = *job;
    kv_list_t labels = {NULL, 0};
    prio_ctx_t pctx = {r};
    job_priority_lookup_t lookup = {&pctx, lookup_wpc, lookup_pc, lookup_pc_at};
    char *name = NULL;

    copy.meta.namespace = (char *)ns;
    if (queue == NULL) {
        /* Kueue's defaulting webhook gives a Job without a queue the LocalQueue "default" of its
         * namespace when one exists; manageJobsWithoutQueueName manages it anyway (it then waits
         * for a LocalQueue that does not exist). Otherwise Kueue leaves the Job alone. */
        if (lq_alive(r, ns, "default")) {
            if (kv_list_copy(&labels, &job->meta.labels) != ERR_OK ||
                kv_list_set(&labels, JOB_LABEL_QUEUE_NAME, "default") != ERR_OK) {
                kv_list_fini(&labels);
                return ERR_NOMEM;
            }
            copy.meta.labels = labels;
        } else if (conf == NULL || !conf->manage_jobs_without_queue_name) {
            return ERR_NOT_FOUND;
        } else {
            bool managed = false;
            if (ns_managed(r, conf, ns, &managed) != ERR_OK)
                return ERR_NOMEM;
            if (!managed)
                return ERR_NOT_FOUND;
        }
    }
    rc = job_workload_build(&copy, out, msg);
    if (rc == ERR_OK) {
        rc = job_workload_priority(&copy, &lookup, out, msg);
        if (rc == ERR_OK) {
            name = strdup(job->meta.name);
            if (name == NULL)
                rc = ERR_NOMEM;
        }
        if (rc == ERR_OK) {
            free(out->meta.name);
            out->meta.name = name;
        } else {
            workload_fini(out);
        }
    }
    kv_list_fini(&labels);
    return rc;
}

static bool per_replica(const sim_doc_t *doc);

static void free_workload(const sim_doc_t *doc, workload_t *wl)
{
    if (doc->obj.kind == KIND_JOB)
        workload_fini(wl);
    else if (doc->obj.kind == KIND_INTEGRATION)
        free(wl->priority_class); /* the rest is borrowed from the document */
}

/* Queue-order tie-break of replica `ri` of document `di` (ri 0 for a document's one workload):
 * document order first (scenario-format.md), then replica order. */
static uint64_t doc_seq(size_t di, int32_t ri)
{
    return ((uint64_t)di + 1) << 32 | (uint32_t)ri;
}

/* Create or update the workload of document `di` (replica `ri` named `rname`, or NULL and 0
 * for the document's one workload). */
static err_t workload_apply_one(sim_run_t *r, size_t di, const char *rname, int32_t ri,
                                sim_ms_t now, bool *queues_changed, err_msg_t *msg)
{
    const sim_doc_t *doc = &r->sc->docs[di];
    workload_t wl;
    char key[600];
    size_t w;
    sched_wl_info_t info;
    err_t rc;

    memset(&wl, 0, sizeof(wl));
    rc = build_workload(r, doc, rname, &wl, msg);
    if (rc == ERR_NOT_FOUND)
        return ERR_OK; /* not managed: Kueue leaves it alone, and so do we */
    if (rc != ERR_OK)
        return err_prefix(msg, rc, "%s: ", doc->label);
    snprintf(key, sizeof(key), "%s/%s", wl.meta.namespace, wl.meta.name);
    w = sim_rec_wl_find(r->rec, key);
    if (w != SIM_NONE && r->rec->wls[w].state != SIM_WL_DELETED) {
        /* An update. A workload that has finished or was deactivated stays so. */
        if (r->rec->wls[w].state == SIM_WL_FINISHED || r->rec->wls[w].state == SIM_WL_DEACTIVATED)
            goto out;
        /* A workload in requeue backoff stays held; after one its queue order is the
         * requeuingStrategy's (ready.c). */
        sched_wl_opts_t opts = {
            .created = sim__ready_queue_ts(r, w), .seq = r->wr[w].seq, .hold = r->wr[w].held};
        rc = sched_workload_upsert(r->s, &wl, &opts, msg);
        if (rc != ERR_OK)
            goto fail;
        r->wr[w].doc = di;
        r->wr[w].runtime = doc->has_runtime ? doc->runtime : -1;
        if (sim_rec_wl_queue(r->rec, w, wl.meta.namespace, wl.queue_name) != ERR_OK) {
            rc = ERR_NOMEM;
            goto out;
        }
        if (sched_workload_info(r->s, key, &info, NULL) == ERR_OK)
            r->rec->wls[w].priority = info.priority;
        *queues_changed = true;
        rc = sim__run_sample_later(r, w);
        goto out;
    }
    /* Ties of creation time keep document order (scenario-format.md): seq is the document. */
    sched_wl_opts_t opts = {.created = now, .seq = doc_seq(di, ri)};
    rc = sched_workload_upsert(r->s, &wl, &opts, msg);
    if (rc != ERR_OK)
        goto fail;
    rc = sched_workload_info(r->s, key, &info, msg);
    if (rc != ERR_OK)
        goto fail;
    size_t h;
    if (sim__run_holder(r, info.cluster_queue, &h) != ERR_OK ||
        sim_rec_wl_add(r->rec, key, wl.meta.namespace,
                       wl.priority_class != NULL ? wl.priority_class : "", info.priority, h, now,
                       &w) != ERR_OK ||
        sim_rec_wl_queue(r->rec, w, wl.meta.namespace, wl.queue_name) != ERR_OK ||
        sim__run_wr_grow(r) != ERR_OK) {
        rc = ERR_NOMEM;
        goto out;
    }
    r->wr[w] = (sim_wlrun_t){.doc = di,
                             .runtime = doc->has_runtime ? doc->runtime : -1,
                             .seq = doc_seq(di, ri),
                             .check_evicted_at = -1};
    if (info.state == SCHED_WL_DEACTIVATED) {
        /* Created with spec.active: false -- it never queues. */
        r->done++;
        rc = sim_rec_wl_leave(r->rec, w, SIM_WL_DEACTIVATED, now);
        goto out;
    }
    rc = sim__run_sample_later(r, w);
    goto out;
fail:
    if (rc != ERR_NOMEM)
        rc = err_prefix(msg, rc, "%s: ", doc->label);
out:
    free_workload(doc, &wl);
    return rc;
}

err_t sim__run_wl_reupsert(sim_run_t *r, size_t w, sim_ms_t created, bool hold, bool active,
                           err_msg_t *msg)
{
    size_t di = r->wr[w].doc;
    const sim_doc_t *doc = &r->sc->docs[di];
    const char *slash = strchr(r->rec->wls[w].name, '/');
    workload_t wl;
    err_t rc;

    memset(&wl, 0, sizeof(wl));
    /* A replica's workload is named by its record ("ns/<name>-<i>"). */
    rc = build_workload(r, doc, per_replica(doc) && slash != NULL ? slash + 1 : NULL, &wl, msg);
    if (rc == ERR_OK) {
        sched_wl_opts_t opts = {.created = created, .seq = r->wr[w].seq, .hold = hold};
        wl.active = active;
        rc = sched_workload_upsert(r->s, &wl, &opts, msg);
    }
    free_workload(doc, &wl);
    return rc;
}

/* Delete the workload `key` of document `di`. */
static err_t workload_delete_key(sim_run_t *r, size_t di, const char *key, sim_ms_t now,
                                 err_msg_t *msg)
{
    const sim_doc_t *doc = &r->sc->docs[di];
    size_t w;
    sim_wl_rec_t *rw;
    const char *cq = "";

    w = sim_rec_wl_find(r->rec, key);
    if (w == SIM_NONE)
        return ERR_OK; /* never managed */
    rw = &r->rec->wls[w];
    if (rw->state == SIM_WL_DELETED)
        return ERR_OK;
    if (rw->state == SIM_WL_PENDING || rw->state == SIM_WL_RUNNING) {
        if (rw->cq != SIM_NONE)
            cq = r->rec->holders[rw->cq].name;
        sim_events_deleted(&r->ev, now, key, cq);
        if (sim_rec_wl_leave(r->rec, w, SIM_WL_DELETED, now) != ERR_OK)
            return ERR_NOMEM;
        r->wr[w].gen++;
        r->done++;
    } else {
        /* Finished or deactivated: the object goes, nothing happens. */
        rw->state = SIM_WL_DELETED;
    }
    err_t rc = sched_workload_delete(r->s, key, now, msg);
    if (rc == ERR_OK || rc == ERR_NOT_FOUND)
        rc = verify_release(r->verify, now, key, false, msg);
    if (rc != ERR_OK && rc != ERR_NOT_FOUND)
        return err_prefix(msg, rc, "%s: ", doc->label);
    return ERR_OK;
}

/* The key of replica `ri`'s workload of document `di` into key[600]. */
static void replica_key(const sim_doc_t *doc, int32_t ri, char *key)
{
    const object_meta_t *m = object_meta_const(&doc->obj);
    char name[SIM_REPLICA_NAME_MAX];

    sim_replica_name(m->name, ri, name);
    snprintf(key, 600, "%s/%s", ns_or_default(m->namespace), name);
}

static bool per_replica(const sim_doc_t *doc)
{
    return doc->obj.kind == KIND_INTEGRATION && doc->obj.u.integ.per_replica;
}

/* Delete document `di`'s workloads: its one, or every replica's that ever was. */
static err_t workload_delete(sim_run_t *r, size_t di, sim_ms_t now, err_msg_t *msg)
{
    const sim_doc_t *doc = &r->sc->docs[di];
    const object_meta_t *m = object_meta_const(&doc->obj);
    char key[600];

    if (!per_replica(doc)) {
        snprintf(key, sizeof(key), "%s/%s", ns_or_default(m->namespace),
                 doc->group != NULL ? doc->group : m->name);
        return workload_delete_key(r, di, key, now, msg);
    }
    /* Replicas 0.. up to the most the object ever had: a scale-down left the rest deleted. */
    for (int32_t ri = 0;; ri++) {
        replica_key(doc, ri, key);
        if (sim_rec_wl_find(r->rec, key) == SIM_NONE)
            return ERR_OK;
        err_t rc = workload_delete_key(r, di, key, now, msg);
        if (rc != ERR_OK)
            return rc;
    }
}

/* Create or update document `di`'s workloads. A per-replica serving owner (a Deployment, a
 * LeaderWorkerSet) has one per replica, `<name>-<i>`: an update to more replicas adds the new
 * ones, to fewer deletes those past the count (a scale-down removes the highest indices, as a
 * LeaderWorkerSet does; a Deployment's ReplicaSet picks its own victims, which the simulator
 * does not model). */
static err_t workload_apply(sim_run_t *r, size_t di, sim_ms_t now, bool *queues_changed,
                            err_msg_t *msg)
{
    const sim_doc_t *doc = &r->sc->docs[di];
    const object_meta_t *m = object_meta_const(&doc->obj);
    char name[SIM_REPLICA_NAME_MAX], key[600];
    int32_t ri;

    if (!per_replica(doc))
        return workload_apply_one(r, di, NULL, 0, now, queues_changed, msg);
    for (ri = 0; ri < doc->obj.u.integ.replicas; ri++) {
        sim_replica_name(m->name, ri, name);
        err_t rc = workload_apply_one(r, di, name, ri, now, queues_changed, msg);
        if (rc != ERR_OK)
            return rc;
    }
    for (;; ri++) {
        replica_key(doc, ri, key);
        size_t w = sim_rec_wl_find(r->rec, key);
        if (w == SIM_NONE)
            return ERR_OK;
        if (r->rec->wls[w].state == SIM_WL_DELETED)
            continue;
        err_t rc = workload_delete_key(r, di, key, now, msg);
        if (rc != ERR_OK)
            return rc;
        *queues_changed = true;
    }
}

/* ---- everything else ------------------------------------------------------------------------ */

static err_t set_lq_live(sim_run_t *r, const local_queue_t *lq, bool live)
{
    char key[512];
    snprintf(key, sizeof(key), "%s/%s", ns_or_default(lq->meta.namespace), lq->meta.name);
    return util_hmap_put_index(&r->lq_live, key, live ? 1 : 0);
}

/* Node `node` was deleted or is not Ready: the simulator has no pods, so the pods of the
 * workloads on it count as terminated at once (Kueue's TASReplaceNodeOnPodTermination) and the
 * node as failed for each of them, in key order (the next cycle replaces it or evicts). */
static err_t node_failed(sim_run_t *r, const char *node)
{
    return sched_node_failed(r->s, node, false, NULL);
}

static err_t object_apply(sim_run_t *r, const sim_doc_t *doc, sim_ms_t now, bool del,
                          bool *queues_changed, err_msg_t *msg)
{
    const object_t *o = &doc->obj;
    const object_meta_t *m = object_meta_const(o);
    err_t rc = ERR_OK;
    size_t h;

    if (doc->node != NULL) {
        const node_t *n = doc->node;
        sched_node_spec_t spec = {.name = n->meta.name,
                                  .labels = &n->meta.labels,
                                  .taints = n->taints,
                                  .ntaints = n->ntaints,
                                  .allocatable = &n->allocatable,
                                  .unschedulable = n->unschedulable,
                                  .ready = !n->has_ready || n->ready};
        rc = del ? sched_node_delete(r->s, n->meta.name, msg) : sched_node_upsert(r->s, &spec, msg);
        if (rc == ERR_OK && (del || !spec.ready) && node_failed(r, n->meta.name) != ERR_OK)
            return ERR_NOMEM;
    }
    switch (o->kind) {
    case KIND_NAMESPACE:
        rc = del ? sched_namespace_delete(r->s, m->name, msg)
                 : sched_namespace_upsert(r->s, &o->u.ns, msg);
        if (util_hmap_put_index(&r->ns_live, m->name, del ? 0 : (size_t)(doc - r->sc->docs) + 1) !=
            ERR_OK)
            return ERR_NOMEM;
        *queues_changed = true;
        break;
    case KIND_RESOURCE_FLAVOR:
        rc = del ? sched_flavor_delete(r->s, m->name, msg)
                 : sched_flavor_upsert(r->s, &o->u.flavor, msg);
        break;
    case KIND_CLUSTER_QUEUE:
        rc = del ? sched_cq_delete(r->s, m->name, msg) : sched_cq_upsert(r->s, &o->u.cq, msg);
        /* The checker keeps a deleted queue's quotas: nothing is admitted there any more. */
        if (rc == ERR_OK && !del)
            rc = verify_cluster_queue(r->verify, &o->u.cq, msg);
        if (sim_rec_holder(r->rec, m->name, false, &h) != ERR_OK)
            return ERR_NOMEM;
        r->rec->holders[h].weight =
            !del && o->u.cq.has_fair_weight ? o->u.cq.fair_weight.nano : 1000000000;
        if (sim_rec_set_quotas(r->rec, h, del ? NULL : o->u.cq.groups, del ? 0 : o->u.cq.ngroups,
                               now) != ERR_OK ||
            sim_rec_holder_cohort(r->rec, h, del ? NULL : o->u.cq.cohort) != ERR_OK)
            return ERR_NOMEM;
        *queues_changed = true;
        break;
    case KIND_COHORT:
        rc = del ? sched_cohort_delete(r->s, m->name, msg)
                 : sched_cohort_upsert(r->s, &o->u.cohort, msg);
        if (rc == ERR_OK && !del)
            rc = verify_cohort(r->verify, &o->u.cohort, msg);
        if (sim_rec_holder(r->rec, m->name, true, &h) != ERR_OK ||
            sim_rec_set_quotas(r->rec, h, del ? NULL : o->u.cohort.groups,
                               del ? 0 : o->u.cohort.ngroups, now) != ERR_OK ||
            sim_rec_holder_cohort(r->rec, h, del ? NULL : o->u.cohort.parent) != ERR_OK)
            return ERR_NOMEM;
        break;
    case KIND_LOCAL_QUEUE:
        if (del) {
            rc = sched_lq_delete(r->s, ns_or_default(m->namespace), m->name, msg);
        } else {
            local_queue_t lq = o->u.lq;
            lq.meta.namespace = (char *)ns_or_default(m->namespace);
            rc = sched_lq_upsert(r->s, &lq, msg);
        }
        if (set_lq_live(r, &o->u.lq, !del) != ERR_OK)
            return ERR_NOMEM;
        *queues_changed = true;
        break;
    case KIND_WORKLOAD_PRIORITY_CLASS:
        rc = del ? sched_wpc_delete(r->s, m->name, msg) : sched_wpc_upsert(r->s, &o->u.wpc, msg);
        if (util_hmap_put_index(&r->wpc_live, m->name, del ? 0 : (size_t)(doc - r->sc->docs) + 1) !=
            ERR_OK)
            return ERR_NOMEM;
        break;
    case KIND_PRIORITY_CLASS:
        rc = del ? sched_pc_delete(r->s, m->name, msg) : sched_pc_upsert(r->s, &o->u.pc, msg);
        if (util_hmap_put_index(&r->pc_live, m->name, del ? 0 : (size_t)(doc - r->sc->docs) + 1) !=
            ERR_OK)
            return ERR_NOMEM;
        break;
    case KIND_JOB:
    case KIND_WORKLOAD:
    case KIND_INTEGRATION:
        return del ? workload_delete(r, (size_t)(doc - r->sc->docs), now, msg)
                   : workload_apply(r, (size_t)(doc - r->sc->docs), now, queues_changed, msg);
    case KIND_ADMISSION_CHECK:
        /* The simulator plays every check's controller: active unless its status says
         * otherwise (docs/simulator.md, "Admission checks"). */
        rc = del ? sched_check_delete(r->s, m->name, msg)
                 : sched_check_upsert(r->s, m->name, o->u.ac.active != CHECK_ACTIVE_FALSE, msg);
        if (util_hmap_put_index(&r->ac_live, m->name, del ? 0 : (size_t)(doc - r->sc->docs) + 1) !=
            ERR_OK)
            return ERR_NOMEM;
        break;
    case KIND_TOPOLOGY:
        rc = del ? sched_topology_delete(r->s, m->name, msg)
                 : sched_topology_upsert(r->s, &o->u.topology, msg);
        break;
    case KIND_CONFIGURATION:
    case KIND_UNKNOWN:
        break;
    }
    /* Deleting what is already gone (an object deleted twice by two of its versions) is fine. */
    if (del && rc == ERR_NOT_FOUND)
        return ERR_OK;
    if (rc != ERR_OK && rc != ERR_NOMEM)
        return err_prefix(msg, rc, "%s: ", doc->label);
    return rc;
}

err_t sim__run_apply(sim_run_t *r, const sim_change_t *c, sim_ms_t now, bool *queues_changed,
                     err_msg_t *msg)
{
    return object_apply(r, &r->sc->docs[c->doc], now, c->del, queues_changed, msg);
}
