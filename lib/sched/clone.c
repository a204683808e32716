/* sched clone -- an independent deep copy of an engine, for what-if runs (the start-time
 * estimate drives a copy forward in virtual time; lib/obs/estimate.c). */
/* SPDX-License-Identifier: Apache-2.0 */
#include "sched/sched_int.h"

#include <stdlib.h>
#include <string.h>

/*
 * Why a copy of the records, not a replay of the objects: the engine keeps no types.h object,
 * only what it decided from them (interned ids, quota declarations, queues in order, admissions
 * with their usage, flavor-assignment progress, pinned preemptor assignments, maximum execution
 * time already used). A copy carries all of it, so the clone's next cycle decides exactly as the
 * original's would.
 *
 * Method: each record is copied whole (so a scalar field added later is copied without anyone
 * remembering), then every pointer field is cleared at once and filled with a copy of its own,
 * or a reference to what is immutable and shared (strings, a workload's pod sets);
 * cross-record pointers (a workload's queue, the ClusterQueues' vectors of workloads) are mapped
 * by name through the clone's maps. The cohort forest is not copied: the ClusterQueues keep their
 * usage arrays and sched__tree_rebuild() recomputes structure, subtree quotas and cohort usage
 * from them, exactly what the incremental updates maintain. The rebuild also requeues every
 * parked workload, as an operator restart does.
 *
 * Every record enters the clone's arrays as soon as its pointers are NULL or its own, so that
 * sched_free() on a half-built clone frees exactly what was allocated (the OOM path).
 *
 * A pointer field added to a record (sched_int.h) needs its copy here.
 */

static err_t memdup(void **dst, const void *src, size_t n, size_t size)
{
    *dst = NULL;
    if (src == NULL || n == 0)
        return ERR_OK;
    *dst = malloc(n * size);
    if (*dst == NULL)
        return ERR_NOMEM;
    memcpy(*dst, src, n * size);
    return ERR_OK;
}

static err_t push(void ***arr, size_t *n, size_t *cap, void *item)
{
    if (util_grow((void **)arr, cap, *n + 1, sizeof(void *)) != ERR_OK)
        return ERR_NOMEM;
    (*arr)[(*n)++] = item;
    return ERR_OK;
}

/* ---- interning ----------------------------------------------------------------------------- */

static err_t clone_interning(sched_t *d, const sched_t *s)
{
    for (size_t i = 0; i < s->nres; i++) {
        int id;
        if (sched__intern_res(d, s->res_names[i], &id) != ERR_OK)
            return ERR_NOMEM;
    }
    for (size_t i = 0; i < s->nflavors; i++) {
        const flavor_rec_t *f = s->flavors[i];
        flavor_rec_t *c;
        if (sched__intern_flavor(d, f->name, &c) != ERR_OK)
            return ERR_NOMEM;
        c->exists = f->exists;
        if (sched__kv_copy(&c->node_labels, &f->node_labels) != ERR_OK ||
            sched__taints_copy(&c->taints, f->taints, f->ntaints) != ERR_OK)
            return ERR_NOMEM;
        c->ntaints = f->ntaints;
        if (sched__tolerations_copy(&c->tolerations, f->tolerations, f->ntolerations) != ERR_OK)
            return ERR_NOMEM;
        c->ntolerations = f->ntolerations;
        if (memdup((void **)&c->fr_by_res, f->fr_by_res, f->nfr_by_res, sizeof(int)) != ERR_OK)
            return ERR_NOMEM;
        c->nfr_by_res = f->nfr_by_res;
        if (util_strdup(f->topology, &c->topology) != ERR_OK)
            return ERR_NOMEM;
    }
    if (memdup((void **)&d->frs, s->frs, s->nfr, sizeof(fr_rec_t)) != ERR_OK)
        return ERR_NOMEM;
    d->nfr = d->cfr = s->nfr;
    return ERR_OK;
}

/* ---- ClusterQueues and cohorts --------------------------------------------------------------- */

static err_t clone_cq(sched_t *d, const cq_t *s)
{
    cq_t *c = malloc(sizeof(*c));

    if (c == NULL)
        return ERR_NOMEM;
    *c = *s;
    memset(&c->node, 0, sizeof(c->node));
    c->name = c->cohort_name = c->inactive_msg = NULL;
    c->groups = NULL;
    c->ngroups = 0;
    c->quotas = NULL;
    c->rg_by_res = NULL;
    memset(&c->ns_selector, 0, sizeof(c->ns_selector));
    memset(&c->heap, 0, sizeof(c->heap));
    memset(&c->inadm, 0, sizeof(c->inadm));
    memset(&c->admitted, 0, sizeof(c->admitted));
    c->sticky = NULL;
    c->rebuild_cohort = NULL;
    c->acs = NULL;
    c->nacs = 0;
    if (push((void ***)&d->cqs, &d->ncqs, &d->ccqs, c) != ERR_OK) {
        free(c);
        return ERR_NOMEM;
    }
    /* the node: its own quota and usage arrays; links come from the rebuild */
    c->node.is_cq = true;
    c->node.weight = s->node.weight;
    if (memdup((void **)&c->node.fr, s->node.fr, s->node.nfr, sizeof(qfr_t)) != ERR_OK)
        return ERR_NOMEM;
    c->node.nfr = s->node.nfr;
    if (util_strdup(s->name, &c->name) != ERR_OK)
        return ERR_NOMEM;
    c->node.name = c->name;
    if (util_hmap_put(&d->cq_map, c->name, c, NULL) != ERR_OK ||
        util_strdup(s->cohort_name, &c->cohort_name) != ERR_OK ||
        util_strdup(s->inactive_msg, &c->inactive_msg) != ERR_OK)
        return ERR_NOMEM;
    if (s->ngroups > 0) {
        c->groups = calloc(s->ngroups, sizeof(*c->groups));
        if (c->groups == NULL)
            return ERR_NOMEM;
        c->ngroups = s->ngroups;
    }
    for (size_t g = 0; g < s->ngroups; g++) {
        const rgroup_t *sg = &s->groups[g];
        if (memdup((void **)&c->groups[g].res, sg->res, sg->nres, sizeof(int)) != ERR_OK ||
            memdup((void **)&c->groups[g].flavors, sg->flavors, sg->nflavors, sizeof(int)) !=
                ERR_OK)
            return ERR_NOMEM;
        c->groups[g].nres = sg->nres;
        c->groups[g].nflavors = sg->nflavors;
    }
    if (memdup((void **)&c->quotas, s->quotas, s->nquotas, sizeof(quota_decl_t)) != ERR_OK ||
        memdup((void **)&c->rg_by_res, s->rg_by_res, s->nrg_by_res, sizeof(int)) != ERR_OK ||
        sched__selector_copy(&c->ns_selector, &s->ns_selector) != ERR_OK)
        return ERR_NOMEM;
    if (s->nacs > 0) {
        c->acs = calloc(s->nacs, sizeof(*c->acs));
        if (c->acs == NULL)
            return ERR_NOMEM;
    }
    for (size_t i = 0; i < s->nacs; i++) {
        c->nacs = i + 1;
        if (util_strdup(s->acs[i].name, &c->acs[i].name) != ERR_OK ||
            memdup((void **)&c->acs[i].flavors, s->acs[i].flavors, s->acs[i].nflavors,
                   sizeof(int)) != ERR_OK)
            return ERR_NOMEM;
        c->acs[i].nflavors = s->acs[i].nflavors;
    }
    return ERR_OK;
}

static err_t clone_cohort(sched_t *d, const cohort_rec_t *s)
{
    cohort_rec_t *c = calloc(1, sizeof(*c));

    if (c == NULL)
        return ERR_NOMEM;
    if (push((void ***)&d->cohorts, &d->ncohorts, &d->ccohorts, c) != ERR_OK) {
        free(c);
        return ERR_NOMEM;
    }
    c->exists = s->exists;
    c->node.weight = s->node.weight;
    c->nquotas = s->nquotas;
    if (util_strdup(s->name, &c->name) != ERR_OK)
        return ERR_NOMEM;
    c->node.name = c->name;
    if (util_hmap_put(&d->cohort_map, c->name, c, NULL) != ERR_OK ||
        util_strdup(s->parent_name, &c->parent_name) != ERR_OK ||
        memdup((void **)&c->quotas, s->quotas, s->nquotas, sizeof(quota_decl_t)) != ERR_OK)
        return ERR_NOMEM;
    return ERR_OK;
}

/* ---- queues, namespaces, priority classes ------------------------------------------------- */

static err_t clone_lq(sched_t *d, const lq_t *s)
{
    lq_t *c = calloc(1, sizeof(*c));

    if (c == NULL)
        return ERR_NOMEM;
    if (push((void ***)&d->lqs, &d->nlqs, &d->clqs, c) != ERR_OK) {
        free(c);
        return ERR_NOMEM;
    }
    c->stop_policy = s->stop_policy;
    c->weight = s->weight;
    if (sched__afs_copy(&c->afs, &s->afs) != ERR_OK)
        return ERR_NOMEM;
    if (util_strdup(s->key, &c->key) != ERR_OK || util_strdup(s->cq, &c->cq) != ERR_OK ||
        util_hmap_put(&d->lq_map, c->key, c, NULL) != ERR_OK)
        return ERR_NOMEM;
    return ERR_OK;
}

static err_t clone_ns(sched_t *d, const ns_rec_t *s)
{
    ns_rec_t *c = calloc(1, sizeof(*c));

    if (c == NULL)
        return ERR_NOMEM;
    if (push((void ***)&d->nss, &d->nnss, &d->cnss, c) != ERR_OK) {
        free(c);
        return ERR_NOMEM;
    }
    if (util_strdup(s->name, &c->name) != ERR_OK ||
        sched__kv_copy(&c->labels, &s->labels) != ERR_OK ||
        util_hmap_put(&d->ns_map, c->name, c, NULL) != ERR_OK)
        return ERR_NOMEM;
    return ERR_OK;
}

static err_t clone_prio(prio_rec_t ***arr, size_t *n, size_t *cap, util_hmap_t *map,
                        const prio_rec_t *s)
{
    prio_rec_t *c = calloc(1, sizeof(*c));

    if (c == NULL)
        return ERR_NOMEM;
    if (push((void ***)arr, n, cap, c) != ERR_OK) {
        free(c);
        return ERR_NOMEM;
    }
    c->value = s->value;
    c->global_default = s->global_default;
    if (util_strdup(s->name, &c->name) != ERR_OK || util_hmap_put(map, c->name, c, NULL) != ERR_OK)
        return ERR_NOMEM;
    return ERR_OK;
}

/* ---- workloads --------------------------------------------------------------------------------
 */

static cq_t *map_cq(const sched_t *d, const cq_t *s)
{
    return s != NULL ? util_hmap_get(&d->cq_map, s->name) : NULL;
}

/* c's rare part (wl_rare_t) from s's. */
static err_t clone_rare(const sched_t *d, wl_t *c, const wl_t *s)
{
    const wl_rare_t *sr = s->rare;
    wl_rare_t *r;
    bool oom = false;

    if (sr == NULL)
        return ERR_OK;
    r = c->rare = calloc(1, sizeof(*c->rare)); /* its pointers NULL until copied */
    if (r == NULL)
        return ERR_NOMEM;
    r->pin_cq = map_cq(d, sr->pin_cq);
    if (util_strdup(sr->preemptor, &r->preemptor) != ERR_OK)
        return ERR_NOMEM;
    r->afs_pen = sched__afs_pen_copy(sr->afs_pen, &oom);
    if (oom || sched__wl_unhealthy_clone(r, sr) != ERR_OK)
        return ERR_NOMEM;
    if (sr->pin_counts != NULL) {
        size_t nf = sr->pin_cq != NULL ? s->nps * sr->pin_cq->ngroups : 0;
        if (memdup((void **)&r->pin_counts, sr->pin_counts, s->nps ? s->nps : 1, sizeof(int32_t)) !=
                ERR_OK ||
            memdup((void **)&r->pin_flavors, sr->pin_flavors, nf ? nf : 1, sizeof(int)) != ERR_OK)
            return ERR_NOMEM;
    }
    return ERR_OK;
}

static err_t clone_wl(sched_t *d, const wl_t *s, unsigned flags)
{
    wl_t *c;

    c = malloc(sizeof(*c));
    if (c == NULL)
        return ERR_NOMEM;
    *c = *s;
    c->key = c->ns = c->lq_key = c->prio_class = c->message = NULL;
    c->ps = NULL;
    c->nps = 0;
    memset(&c->adm, 0, sizeof(c->adm));
    c->use = NULL;
    c->checks = NULL;
    c->nchecks = 0;
    c->last_tried = NULL;
    c->place = NULL;
    c->nplace = 0;
    c->rare = NULL;
    c->qcq = map_cq(d, s->qcq);
    c->acq = map_cq(d, s->acq);
    if (flags & SCHED_CLONE_RELEASE_HOLDS)
        c->held = false; /* the rebuild's requeue puts it back in its heap */
    if (push((void ***)&d->wls, &d->nwls, &d->cwls, c) != ERR_OK) {
        sched__wl_free(c);
        return ERR_NOMEM;
    }
    /* the shared strings are immutable: the copy takes references, not copies */
    c->key = sched__str_ref(s->key);
    c->ns = sched__str_ref(s->ns);
    c->lq_key = sched__str_ref(s->lq_key);
    c->prio_class = sched__str_ref(s->prio_class);
    c->message = sched__str_ref(s->message);
    if (util_hmap_put(&d->wl_map, c->key, c, NULL) != ERR_OK)
        return ERR_NOMEM;
    /* the pod sets are immutable too: the copy shares their block (wps_block_t); whoever
     * changes them in place first takes a copy of its own (sched__wl_ps_own) */
    c->ps = sched__ps_ref(s->ps);
    c->nps = s->nps;
    if (s->adm.cluster_queue != NULL || s->adm.nassignments > 0) {
        if (sched__admission_copy(&c->adm, &s->adm) != ERR_OK)
            return ERR_NOMEM;
    }
    if (s->nchecks > 0) {
        c->checks = calloc(s->nchecks, sizeof(char *));
        if (c->checks == NULL)
            return ERR_NOMEM;
        c->nchecks = s->nchecks;
        for (size_t i = 0; i < s->nchecks; i++)
            if (util_strdup(s->checks[i], &c->checks[i]) != ERR_OK)
                return ERR_NOMEM;
    }
    if (memdup((void **)&c->use, s->use, s->nuse, sizeof(use_t)) != ERR_OK ||
        memdup((void **)&c->last_tried, s->last_tried, s->nlast_tried, sizeof(int)) != ERR_OK)
        return ERR_NOMEM;
    if (s->last_tried == NULL)
        c->nlast_tried = 0;
    if (sched__wl_place_clone(d, c, s) != ERR_OK)
        return ERR_NOMEM;
    return clone_rare(d, c, s);
}

/* The same vector in the clone: the same workloads (by key), in the same order, so each
 * workload's qidx/aidx stays right. */
static err_t clone_vec(const sched_t *d, wlvec_t *dst, const wlvec_t *src)
{
    for (size_t i = 0; i < src->len; i++) {
        wl_t *w = util_hmap_get(&d->wl_map, src->items[i]->key);
        if (w == NULL || sched__wlvec_push(dst, w) != ERR_OK)
            return ERR_NOMEM;
    }
    return ERR_OK;
}

/* ---- the engine ------------------------------------------------------------------------------ */

sched_t *sched_clone(const sched_t *s, unsigned flags)
{
    sched_t *d = sched_new(&s->cfg);

    if (d == NULL || clone_interning(d, s) != ERR_OK)
        goto fail;
    for (size_t i = 0; i < s->ncqs; i++)
        if (clone_cq(d, s->cqs[i]) != ERR_OK)
            goto fail;
    for (size_t i = 0; i < s->ncohorts; i++)
        if (clone_cohort(d, s->cohorts[i]) != ERR_OK)
            goto fail;
    for (size_t i = 0; i < s->nlqs; i++)
        if (clone_lq(d, s->lqs[i]) != ERR_OK)
            goto fail;
    for (size_t i = 0; i < s->nnss; i++)
        if (clone_ns(d, s->nss[i]) != ERR_OK)
            goto fail;
    for (size_t i = 0; i < s->nwpcs; i++)
        if (clone_prio(&d->wpcs, &d->nwpcs, &d->cwpcs, &d->wpc_map, s->wpcs[i]) != ERR_OK)
            goto fail;
    for (size_t i = 0; i < s->npcs; i++)
        if (clone_prio(&d->pcs, &d->npcs, &d->cpcs, &d->pc_map, s->pcs[i]) != ERR_OK)
            goto fail;
    if (sched__nodes_clone(d, s) != ERR_OK || sched__repl_clone(d, s) != ERR_OK)
        goto fail;
    for (size_t i = 0; i < s->nchecks; i++)
        if (sched_check_upsert(d, s->checks[i]->name, s->checks[i]->active, NULL) != ERR_OK)
            goto fail;
    for (size_t i = 0; i < s->ntopos; i++) {
        topology_t t = {.levels = s->topos[i]->levels, .nlevels = s->topos[i]->nlevels};
        t.meta.name = s->topos[i]->name;
        if (sched_topology_upsert(d, &t, NULL) != ERR_OK)
            goto fail;
    }
    for (size_t i = 0; i < s->nwls; i++)
        if (clone_wl(d, s->wls[i], flags) != ERR_OK)
            goto fail;
    d->wls_sorted = s->wls_sorted;
    for (size_t i = 0; i < s->ncqs; i++) {
        const cq_t *sc = s->cqs[i];
        cq_t *dc = d->cqs[i];
        if (clone_vec(d, &dc->heap, &sc->heap) != ERR_OK ||
            clone_vec(d, &dc->inadm, &sc->inadm) != ERR_OK ||
            clone_vec(d, &dc->admitted, &sc->admitted) != ERR_OK)
            goto fail;
        dc->sticky = sc->sticky != NULL ? util_hmap_get(&d->wl_map, sc->sticky->key) : NULL;
    }
    if (clone_vec(d, &d->expiring, &s->expiring) != ERR_OK)
        goto fail;
    d->queues_dirty = s->queues_dirty;
    d->requeue_all = s->requeue_all;
    d->now = s->now;
    d->cycle_no = s->cycle_no;
    d->attempts = s->attempts;
    if (sched__tree_rebuild(d) != ERR_OK)
        goto fail;
    /* The rebuild bumps each ClusterQueue's allocation generation (quota may have grown), which
     * would make every workload's flavor-assignment progress (last_tried, kept per generation)
     * start over; nothing grew: the copy keeps the original's generations and so its progress. */
    for (size_t i = 0; i < s->ncqs; i++)
        d->cqs[i]->alloc_gen = s->cqs[i]->alloc_gen;
    return d;
fail:
    sched_free(d);
    return NULL;
}
