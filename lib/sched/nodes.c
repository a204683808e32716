/* sched nodes -- Nodes, the capacity used on each, and where admitted workloads' pods go. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "sched/sched_int.h"
#include "sched/tas.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * Kueue admits against quota alone; the engine can also know the Nodes (docs/engine.md, "Nodes").
 * What it keeps per node is what admission reads: labels, NoSchedule/NoExecute taints,
 * allocatable per interned resource, cordoned, Ready; and the capacity in use, from two sources:
 *
 *  - pods the driver reports bound (sched_pod_bound(): the operator's bound Pods; the simulator
 *    reports none), each kept with its requests so that its removal is exact;
 *  - the engine's own placement of the workloads it admits (first fit over the nodes in name
 *    order, pods of a podset on the nodes its assigned flavors select), kept on the workload and
 *    released with its quota. When the driver reports a bound pod of a workload the engine
 *    placed, the placement is dropped: the pods are real now (a workload whose pods bind one by
 *    one is counted short until the last binds).
 *
 * Nothing here runs when no node is known (s->nodes == NULL): the engine decides as Kueue does,
 * at the same cost. Node records are never freed before the engine (a deleted node becomes a
 * tombstone, revived by an upsert), so placements keep plain pointers to them.
 */

static sched_nodes_t *nodes_get(sched_t *s)
{
    if (s->nodes == NULL) {
        s->nodes = calloc(1, sizeof(*s->nodes));
        if (s->nodes != NULL) {
            util_hmap_init(&s->nodes->map, 0);
            util_hmap_init(&s->nodes->pod_map, 0);
        }
    }
    return s->nodes;
}

static void snode_free(snode_t *n)
{
    if (n == NULL)
        return;
    free(n->name);
    kv_list_fini(&n->labels);
    sched__taints_fini(n->taints, n->ntaints);
    free(n->alloc);
    free(n->used);
    free(n->tas_used);
    free(n);
}

static void spod_free(spod_t *p)
{
    if (p == NULL)
        return;
    free(p->key);
    free(p->wl);
    free(p->req);
    free(p);
}

void sched__nodes_free(sched_t *s)
{
    sched_nodes_t *ns = s->nodes;

    if (ns == NULL)
        return;
    for (size_t i = 0; i < ns->nrecs; i++)
        snode_free(ns->recs[i]);
    free(ns->recs);
    free(ns->live);
    util_hmap_fini(&ns->map);
    for (size_t i = 0; i < ns->npods; i++)
        spod_free(ns->pods[i]);
    free(ns->pods);
    util_hmap_fini(&ns->pod_map);
    free(ns);
    s->nodes = NULL;
}

/* ---- resource vectors (sorted by resource id) ----------------------------------------------- */

static qnano_t nq_get(const nq_t *v, size_t n, int res)
{
    size_t lo = 0, hi = n;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (v[mid].res == res)
            return v[mid].v;
        if (v[mid].res < res)
            lo = mid + 1;
        else
            hi = mid;
    }
    return 0;
}

static bool nq_has(const nq_t *v, size_t n, int res)
{
    for (size_t i = 0; i < n; i++)
        if (v[i].res == res)
            return true;
    return false;
}

/* Add `d` (may be negative) to the entry of `res` in the sorted vector v (*nv entries, room
 * for *cv); ERR_NOMEM only when a new entry is needed, which a removal never needs. */
static err_t nq_add(nq_t **v, size_t *nv, size_t *cv, int res, qnano_t d)
{
    size_t at = 0;

    while (at < *nv && (*v)[at].res < res)
        at++;
    if (at < *nv && (*v)[at].res == res) {
        (*v)[at].v += d;
        return ERR_OK;
    }
    if (util_grow((void **)v, cv, *nv + 1, sizeof(**v)) != ERR_OK)
        return ERR_NOMEM;
    memmove(&(*v)[at + 1], &(*v)[at], (*nv - at) * sizeof(**v));
    (*v)[at] = (nq_t){res, d};
    (*nv)++;
    return ERR_OK;
}

/* The node's use of `res` (see nq_add). */
static err_t used_add(snode_t *n, int res, qnano_t d)
{
    return nq_add(&n->used, &n->nused, &n->cused, res, d);
}

/* The TAS placements' part of it. */
static err_t tas_used_add(snode_t *n, int res, qnano_t d)
{
    return nq_add(&n->tas_used, &n->ntas_used, &n->ctas_used, res, d);
}

/* Interned copy of a ResourceList, sorted by id. */
static err_t nq_from_list(sched_t *s, const resource_list_t *l, nq_t **out, size_t *nout)
{
    nq_t *v = NULL;
    size_t n = 0;

    *out = NULL;
    *nout = 0;
    if (l == NULL || l->len == 0)
        return ERR_OK;
    v = calloc(l->len, sizeof(*v));
    if (v == NULL)
        return ERR_NOMEM;
    for (size_t i = 0; i < l->len; i++) {
        int id;
        if (l->items[i].name == NULL)
            continue;
        if (sched__intern_res(s, l->items[i].name, &id) != ERR_OK) {
            free(v);
            return ERR_NOMEM;
        }
        size_t at = n;
        while (at > 0 && v[at - 1].res > id) {
            v[at] = v[at - 1];
            at--;
        }
        v[at] = (nq_t){id, l->items[i].value.nano};
        n++;
    }
    *out = v;
    *nout = n;
    return ERR_OK;
}

/* ---- node records -----------------------------------------------------------------------------
 */

static size_t live_pos(const sched_nodes_t *ns, const char *name, bool *found)
{
    size_t lo = 0, hi = ns->nlive;

    *found = false;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int r = strcmp(ns->live[mid]->name, name);
        if (r == 0) {
            *found = true;
            return mid;
        }
        if (r < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The record of `name`, created (a tombstone) when absent; NULL on OOM. */
static snode_t *node_rec(sched_t *s, const char *name)
{
    sched_nodes_t *ns = nodes_get(s);
    snode_t *n;

    if (ns == NULL)
        return NULL;
    n = util_hmap_get(&ns->map, name);
    if (n != NULL)
        return n;
    if (util_grow((void **)&ns->recs, &ns->crecs, ns->nrecs + 1, sizeof(*ns->recs)) != ERR_OK)
        return NULL;
    n = calloc(1, sizeof(*n));
    if (n == NULL)
        return NULL;
    if ((n->name = strdup(name)) == NULL || util_hmap_put(&ns->map, n->name, n, NULL) != ERR_OK) {
        snode_free(n);
        return NULL;
    }
    ns->recs[ns->nrecs++] = n;
    return n;
}

/* Something that frees node capacity or adds nodes happened: with fragmentation-aware admission
 * on, workloads parked for want of a node may fit now, whatever their cohort. */
static void nodes_changed(sched_t *s)
{
    if (s->cfg.node_fit || s->ntopos > 0)
        s->requeue_all = true; /* TAS placements read node capacity too */
}

err_t sched_node_upsert(sched_t *s, const sched_node_spec_t *spec, err_msg_t *msg)
{
    kv_list_t labels = {0};
    taint_t *taints = NULL;
    nq_t *alloc = NULL;
    size_t nalloc = 0;
    snode_t *n;
    sched_nodes_t *ns;

    if (spec->name == NULL || spec->name[0] == '\0')
        return err_set(msg, ERR_INVALID, "Node: metadata.name: required");
    if ((spec->labels != NULL && sched__kv_copy(&labels, spec->labels) != ERR_OK) ||
        sched__taints_copy(&taints, spec->taints, spec->ntaints) != ERR_OK ||
        nq_from_list(s, spec->allocatable, &alloc, &nalloc) != ERR_OK ||
        (n = node_rec(s, spec->name)) == NULL)
        goto nomem;
    ns = s->nodes;
    if (!n->exists) {
        bool found;
        size_t at = live_pos(ns, n->name, &found);
        if (util_grow((void **)&ns->live, &ns->clive, ns->nlive + 1, sizeof(*ns->live)) != ERR_OK)
            goto nomem;
        memmove(&ns->live[at + 1], &ns->live[at], (ns->nlive - at) * sizeof(*ns->live));
        ns->live[at] = n;
        ns->nlive++;
        n->exists = true;
    }
    kv_list_fini(&n->labels);
    n->labels = labels;
    sched__taints_fini(n->taints, n->ntaints);
    n->taints = taints;
    n->ntaints = spec->ntaints;
    free(n->alloc);
    n->alloc = alloc;
    n->nalloc = nalloc;
    n->unschedulable = spec->unschedulable;
    n->ready = spec->ready;
    nodes_changed(s);
    return ERR_OK;
nomem:
    kv_list_fini(&labels);
    sched__taints_fini(taints, spec->ntaints);
    free(alloc);
    return err_set(msg, ERR_NOMEM, "Node %s: out of memory", spec->name);
}

err_t sched_node_delete(sched_t *s, const char *name, err_msg_t *msg)
{
    sched_nodes_t *ns = s->nodes;
    snode_t *n = ns != NULL ? util_hmap_get(&ns->map, name) : NULL;
    bool found;
    size_t at;

    if (n == NULL || !n->exists)
        return err_set(msg, ERR_NOT_FOUND, "Node %s not found", name);
    at = live_pos(ns, name, &found);
    if (found) {
        memmove(&ns->live[at], &ns->live[at + 1], (ns->nlive - at - 1) * sizeof(*ns->live));
        ns->nlive--;
    }
    n->exists = false;
    /* Pods and placements on it keep counting on the tombstone: they are gone from the cluster
     * when the driver says so. */
    return ERR_OK;
}

/* ---- bound pods ------------------------------------------------------------------------------ */

static void pod_apply(sched_t *s, spod_t *p, int sign)
{
    int pods = sched__find_res(s, "pods");

    for (size_t i = 0; i < p->nreq; i++)
        if (p->req[i].res != pods)
            (void)used_add(p->node, p->req[i].res, sign * p->req[i].v); /* entry exists on -1 */
    if (pods != SCHED__NONE)
        (void)used_add(p->node, pods, sign * (qnano_t)1000000000);
    p->node->npods = sign > 0 ? p->node->npods + 1 : p->node->npods - 1;
}

/* Make room for a pod's contribution on `n` before applying it (so applying cannot fail). */
static err_t pod_reserve(sched_t *s, snode_t *n, const nq_t *req, size_t nreq)
{
    int pods;

    if (sched__intern_res(s, "pods", &pods) != ERR_OK)
        return ERR_NOMEM;
    for (size_t i = 0; i < nreq; i++)
        if (!nq_has(n->used, n->nused, req[i].res) && used_add(n, req[i].res, 0) != ERR_OK)
            return ERR_NOMEM;
    if (!nq_has(n->used, n->nused, pods) && used_add(n, pods, 0) != ERR_OK)
        return ERR_NOMEM;
    return ERR_OK;
}

static void pod_remove(sched_t *s, spod_t *p)
{
    sched_nodes_t *ns = s->nodes;

    pod_apply(s, p, -1);
    util_hmap_del(&ns->pod_map, p->key);
    ns->pods[p->idx] = ns->pods[ns->npods - 1];
    ns->pods[p->idx]->idx = p->idx;
    ns->npods--;
    spod_free(p);
}

err_t sched_pod_bound(sched_t *s, const char *key, const char *node, const char *workload,
                      const resource_list_t *requests, err_msg_t *msg)
{
    sched_nodes_t *ns;
    spod_t *p = NULL, *old;
    snode_t *n;

    if (key == NULL || node == NULL || node[0] == '\0')
        return err_set(msg, ERR_INVALID, "Pod %s: no node", key ? key : "");
    if ((n = node_rec(s, node)) == NULL)
        goto nomem;
    ns = s->nodes;
    if ((p = calloc(1, sizeof(*p))) == NULL || (p->key = strdup(key)) == NULL ||
        util_strdup(workload, &p->wl) != ERR_OK ||
        nq_from_list(s, requests, &p->req, &p->nreq) != ERR_OK ||
        pod_reserve(s, n, p->req, p->nreq) != ERR_OK)
        goto nomem;
    p->node = n;
    old = util_hmap_get(&ns->pod_map, key);
    if (old == NULL &&
        util_grow((void **)&ns->pods, &ns->cpods, ns->npods + 1, sizeof(*ns->pods)) != ERR_OK)
        goto nomem;
    if (old != NULL) {
        /* The same pod again (an update): replace its contribution. */
        p->idx = old->idx;
        pod_apply(s, old, -1);
        if (util_hmap_put(&ns->pod_map, p->key, p, NULL) != ERR_OK) {
            pod_apply(s, old, +1);
            goto nomem;
        }
        ns->pods[p->idx] = p;
        spod_free(old);
    } else {
        if (util_hmap_put(&ns->pod_map, p->key, p, NULL) != ERR_OK)
            goto nomem;
        p->idx = ns->npods;
        ns->pods[ns->npods++] = p;
    }
    pod_apply(s, p, +1);
    if (workload != NULL) {
        wl_t *w = util_hmap_get(&s->wl_map, workload);
        if (w != NULL && w->nplace > 0) {
            sched__nodes_unplace(s, w);
            nodes_changed(s); /* its assumed placement may have been elsewhere */
        }
    }
    return ERR_OK;
nomem:
    spod_free(p);
    return err_set(msg, ERR_NOMEM, "Pod %s: out of memory", key);
}

err_t sched_pod_unbound(sched_t *s, const char *key, err_msg_t *msg)
{
    spod_t *p = s->nodes != NULL ? util_hmap_get(&s->nodes->pod_map, key) : NULL;

    if (p == NULL)
        return err_set(msg, ERR_NOT_FOUND, "Pod %s not bound", key);
    pod_remove(s, p);
    nodes_changed(s);
    return ERR_OK;
}

/* ---- eligibility and fit ------------------------------------------------------------------------
 */

bool sched__node_selectable(const snode_t *n)
{
    return n->exists && !n->unschedulable && n->ready;
}

/* Does flavor `f` select node `n` for pods tolerating `tols` (plus the flavor's tolerations)? */
static bool flavor_takes(const flavor_rec_t *f, const snode_t *n, const toleration_t *tols,
                         size_t ntols)
{
    return selector_map_matches(&f->node_labels, &n->labels) &&
           selector_untolerated(n->taints, n->ntaints, tols, ntols, f->tolerations,
                                f->ntolerations) == NULL;
}

/* How many pods of podset `ps` fit in the free capacity of `n`. */
static int64_t fit_count(const sched_t *s, const snode_t *n, const wps_t *ps)
{
    int pods = sched__find_res(s, "pods");
    int64_t best = INT64_MAX;

    for (size_t r = 0; r < ps->nreqs; r++) {
        const req_t *q = &ps->reqs[r];
        qnano_t free;
        if (q->res == pods || q->per_pod <= 0)
            continue;
        free = nq_get(n->alloc, n->nalloc, q->res) - nq_get(n->used, n->nused, q->res);
        if (free < q->per_pod)
            return 0;
        if (free / q->per_pod < best)
            best = (int64_t)(free / q->per_pod);
    }
    if (pods != SCHED__NONE && nq_has(n->alloc, n->nalloc, pods)) {
        qnano_t free = nq_get(n->alloc, n->nalloc, pods) - nq_get(n->used, n->nused, pods);
        int64_t k = free > 0 ? (int64_t)(free / 1000000000) : 0;
        if (k < best)
            best = k;
    }
    return best;
}

/* Is `n` a node for podset `pi` of `w` under assignment `p` (every flavor it was given selects
 * the node, taints tolerated, the podset's own nodeSelector and required affinity hold)? */
static bool node_for(const sched_t *s, const snode_t *n, const wps_t *ps, const ps_assign_t *p)
{
    if (!sched__node_selectable(n))
        return false;
    for (size_t k = 0; k < p->nreqs; k++) {
        if (p->flavor[k] == SCHED__NONE)
            continue;
        if (!flavor_takes(s->flavors[p->flavor[k]], n, ps->tolerations, ps->ntolerations))
            return false;
    }
    if (p->nreqs == 0 && selector_untolerated(n->taints, n->ntaints, ps->tolerations,
                                              ps->ntolerations, NULL, 0) != NULL)
        return false;
    return selector_map_matches(&ps->node_selector, &n->labels) &&
           selector_terms_match(ps->terms, ps->nterms, &n->labels);
}

static void place_apply(sched_t *s, const wl_t *w, const wplace_t *pl, int sign)
{
    const wps_t *ps = &w->ps[pl->ps];
    int pods = sched__find_res(s, "pods");

    /* the entries exist: place_one / the plain placement made room before the first apply */
    for (size_t r = 0; r < ps->nreqs; r++) {
        qnano_t d = sign * ps->reqs[r].per_pod * pl->count;
        if (ps->reqs[r].res == pods)
            continue;
        (void)used_add(pl->node, ps->reqs[r].res, d);
        if (pl->tas)
            (void)tas_used_add(pl->node, ps->reqs[r].res, d);
    }
    if (pods != SCHED__NONE) {
        (void)used_add(pl->node, pods, sign * (qnano_t)pl->count * 1000000000);
        if (pl->tas)
            (void)tas_used_add(pl->node, pods, sign * (qnano_t)pl->count * 1000000000);
    }
    pl->node->npods = (size_t)((int64_t)pl->node->npods + sign * (int64_t)pl->count);
}

void sched__nodes_unplace(sched_t *s, wl_t *w)
{
    if (w->nplace > 0 && s->ntopos > 0)
        s->requeue_all = true; /* node capacity freed: a TAS placement may fit now */
    for (size_t i = 0; i < w->nplace; i++)
        place_apply(s, w, &w->place[i], -1);
    free(w->place);
    w->place = NULL;
    w->nplace = 0;
    w->unplaced = 0;
}

static err_t place_push(wl_t *w, size_t *cap, snode_t *n, size_t ps, int32_t count, bool tas)
{
    if (util_grow((void **)&w->place, cap, w->nplace + 1, sizeof(*w->place)) != ERR_OK)
        return ERR_NOMEM;
    w->place[w->nplace++] = (wplace_t){.node = n, .ps = (uint32_t)ps, .tas = tas, .count = count};
    return ERR_OK;
}

/* Count `count` pods of podset ps of w on n from a topology assignment (room made first, so
 * that applying cannot fail). */
static err_t place_one(sched_t *s, wl_t *w, size_t *cap, snode_t *n, size_t ps, int32_t count)
{
    const wps_t *p = &w->ps[ps];
    int pods;

    if (pod_reserve(s, n, NULL, 0) != ERR_OK)
        return ERR_NOMEM;
    pods = sched__find_res(s, "pods");
    if (tas_used_add(n, pods, 0) != ERR_OK)
        return ERR_NOMEM;
    for (size_t r = 0; r < p->nreqs; r++)
        if ((!nq_has(n->used, n->nused, p->reqs[r].res) &&
             used_add(n, p->reqs[r].res, 0) != ERR_OK) ||
            tas_used_add(n, p->reqs[r].res, 0) != ERR_OK)
            return ERR_NOMEM;
    if (place_push(w, cap, n, ps, count, true) != ERR_OK)
        return ERR_NOMEM;
    place_apply(s, w, &w->place[w->nplace - 1], +1);
    return ERR_OK;
}

static err_t place_topology(sched_t *s, wl_t *w, size_t pi, const ps_assign_t *p,
                            const topology_assignment_t *ta, size_t *cap);

/* "nvidia.com/gpu 8, cpu 32" into buf. */
static const char *per_pod_text(const sched_t *s, const wps_t *ps, char *buf, size_t size)
{
    size_t len = 0;
    int pods = sched__find_res(s, "pods");

    buf[0] = '\0';
    for (size_t r = 0; r < ps->nreqs && len < size; r++) {
        char q[QUANTITY_STR_MAX];
        const char *res = s->res_names[ps->reqs[r].res];
        int w;
        if (ps->reqs[r].res == pods || ps->reqs[r].per_pod <= 0)
            continue;
        w = snprintf(buf + len, size - len, "%s%s %s", len ? ", " : "", res,
                     sched__fmt_q(ps->reqs[r].per_pod, sched__res_format(res), q));
        if (w < 0)
            break;
        len += (size_t)w;
    }
    return buf;
}

static const char *flavors_text(const sched_t *s, const ps_assign_t *p, char *buf, size_t size)
{
    size_t len = 0;

    buf[0] = '\0';
    for (size_t k = 0; k < p->nreqs && len < size; k++) {
        bool seen = false;
        int w;
        if (p->flavor[k] == SCHED__NONE)
            continue;
        for (size_t j = 0; j < k; j++)
            seen = seen || p->flavor[j] == p->flavor[k];
        if (seen)
            continue;
        w = snprintf(buf + len, size - len, "%s%s", len ? ", " : "",
                     s->flavors[p->flavor[k]]->name);
        if (w < 0)
            break;
        len += (size_t)w;
    }
    return buf;
}

err_t sched__nodes_place(sched_t *s, wl_t *w, const assignment_t *a, bool all, bool *placed,
                         char **why)
{
    sched_nodes_t *ns = s->nodes;
    size_t cap = 0;
    err_t rc = ERR_OK;

    *placed = true;
    if (why != NULL)
        *why = NULL;
    sched__nodes_unplace(s, w);
    if (ns == NULL)
        return ERR_OK;
    for (size_t i = 0; i < a->nps && i < w->nps && rc == ERR_OK; i++) {
        const ps_assign_t *p = &a->ps[i];
        const wps_t *ps = &w->ps[i];
        int64_t left = p->count, eligible = 0, room = 0;
        if (p->topo != NULL) {
            /* a TAS placement: its pods go to the domains it names, nothing else */
            if ((rc = place_topology(s, w, i, p, p->topo, &cap)) == ERR_CONFLICT) {
                rc = ERR_OK;
                *placed = false;
                if (why != NULL && (*why = util_asprintf("couldn't place pod set %s on the "
                                                         "nodes of its topology assignment",
                                                         ps->name)) == NULL)
                    rc = ERR_NOMEM;
                break;
            }
            continue;
        }
        for (size_t k = 0; k < ns->nlive && rc == ERR_OK; k++) {
            snode_t *n = ns->live[k];
            int64_t fit;
            if (!node_for(s, n, ps, p))
                continue;
            eligible++;
            fit = fit_count(s, n, ps);
            room += fit > left ? left : fit;
            if (fit <= 0 || left == 0)
                continue;
            if (fit > left)
                fit = left;
            if ((rc = pod_reserve(s, n, NULL, 0)) != ERR_OK ||
                (rc = place_push(w, &cap, n, i, (int32_t)fit, false)) != ERR_OK)
                break;
            for (size_t r = 0; r < ps->nreqs && rc == ERR_OK; r++)
                if (!nq_has(n->used, n->nused, ps->reqs[r].res))
                    rc = used_add(n, ps->reqs[r].res, 0);
            if (rc != ERR_OK) {
                w->nplace--;
                break;
            }
            place_apply(s, w, &w->place[w->nplace - 1], +1);
            left -= fit;
        }
        if (rc != ERR_OK || left == 0)
            continue;
        w->unplaced += (int32_t)left;
        if (!all)
            continue;
        *placed = false;
        if (why != NULL) {
            char req[256], fl[256];
            per_pod_text(s, ps, req, sizeof(req));
            flavors_text(s, p, fl, sizeof(fl));
            if (room == 0)
                *why = util_asprintf("couldn't place pod set %s on a node: its per-pod request "
                                     "(%s) fits no %s node of flavor %s (%lld node%s selected)",
                                     ps->name, req, eligible ? "free" : "selected",
                                     fl[0] ? fl : "(none)", (long long)eligible,
                                     eligible == 1 ? "" : "s");
            else
                *why = util_asprintf("couldn't place pod set %s on nodes: only %lld of its %d "
                                     "pods (%s each) fit on the %lld node%s of flavor %s",
                                     ps->name, (long long)room, p->count, req, (long long)eligible,
                                     eligible == 1 ? "" : "s", fl[0] ? fl : "(none)");
            if (*why == NULL)
                rc = ERR_NOMEM;
        }
        break;
    }
    if (rc != ERR_OK || !*placed)
        sched__nodes_unplace(s, w);
    return rc;
}

/* ---- topology-aware scheduling ----------------------------------------------------------------
 *
 * A TAS flavor's pod sets are placed by Kueue's algorithm (tas.c) over the nodes the flavor and
 * the pod set select (node labels, taints, the pod's selector and required affinity, Ready and
 * schedulable, as Kueue's TAS cache keeps them), each with its free capacity for the pod's
 * requested resources and for "pods" (a node that lists no pod capacity limits nothing). The
 * result is Kueue's topologyAssignment; the pods then count on the nodes of its domains (on the
 * lowest level's nodes in name order, first fit: with kubernetes.io/hostname as the lowest level
 * that is exactly one node per domain).
 */

/* The value of label `key` on n, NULL when absent. */
static const char *label_of(const snode_t *n, const char *key)
{
    return kv_list_get(&n->labels, key);
}

/* Does n sit in the domain `vals` (one value per level) of topology assignment `ta`? */
static bool in_domain(const snode_t *n, const topology_assignment_t *ta, size_t d)
{
    for (size_t l = 0; l < ta->nlevels; l++) {
        const char *v = label_of(n, ta->levels[l]);
        if (v == NULL || strcmp(v, ta->values[d * ta->nlevels + l]) != 0)
            return false;
    }
    return true;
}

/* Per-pod request of pod set ps for resource `res` ("pods": one pod). */
static qnano_t per_pod_of(const wps_t *ps, int res, int pods)
{
    if (res == pods)
        return (qnano_t)1000000000;
    for (size_t r = 0; r < ps->nreqs; r++)
        if (ps->reqs[r].res == res)
            return ps->reqs[r].per_pod;
    return 0;
}

/*
 * Kueue's assumedUsage: the pods of pod set j (an earlier one of the same workload on the same
 * TAS flavor) in the domains of its assignment ta are taken off the free capacity of the nodes
 * offered to the pod set being placed (src[k] is node k, its free capacity free_[k * nres ..]). A
 * domain's usage goes on its first such node: the algorithm sums the free capacity of a leaf's
 * nodes (tas.c), and every node of one domain of ta is in the same leaf, so which node carries it
 * does not matter. A domain with no such node offers nothing to this pod set anyway.
 */
static void assumed_sub(const sched_t *s, const wps_t *ps, const topology_assignment_t *ta,
                        const snode_t *const *src, qnano_t *free_, size_t nn, const int *rid,
                        size_t nres)
{
    int pods = sched__find_res(s, "pods");

    for (size_t d = 0; d < ta->ndomains; d++) {
        size_t k = 0;
        while (k < nn && !in_domain(src[k], ta, d))
            k++;
        if (k == nn)
            continue;
        for (size_t r = 0; r < nres; r++)
            if (rid[r] != SCHED__NONE)
                free_[k * nres + r] -= per_pod_of(ps, rid[r], pods) * ta->counts[d];
    }
}

/*
 * Kueue's simulate-empty pass takes the TAS usage off the nodes and keeps the rest (pods that are
 * not topology-aware, Kueue's non-TAS usage). Here TAS usage is the engine's placements from
 * topology assignments (snode_t.tas_used) and the bound pods of workloads admitted with one,
 * found when needed by their workload (no state to keep right when pods are reported before
 * their workload's admission, as after a restart), indexed by node for one placement.
 */
typedef struct tas_pods_s {
    const spod_t **v; /* owned array: bound pods of TAS-admitted workloads, by node */
    size_t n;
} tas_pods_t;

static bool wl_topology_admitted(const wl_t *w)
{
    if (w == NULL || w->acq == NULL)
        return false;
    for (size_t i = 0; i < w->adm.nassignments; i++)
        if (w->adm.assignments[i].topology != NULL)
            return true;
    return false;
}

static int pod_node_cmp(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t)(*(const spod_t *const *)a)->node,
              y = (uintptr_t)(*(const spod_t *const *)b)->node;

    return x < y ? -1 : x > y;
}

static err_t tas_pods_index(const sched_t *s, tas_pods_t *tp)
{
    const sched_nodes_t *ns = s->nodes;

    tp->v = NULL;
    tp->n = 0;
    if (ns == NULL || ns->npods == 0)
        return ERR_OK;
    if ((tp->v = malloc(ns->npods * sizeof(*tp->v))) == NULL)
        return ERR_NOMEM;
    for (size_t i = 0; i < ns->npods; i++) {
        const spod_t *p = ns->pods[i];
        if (p->wl != NULL && wl_topology_admitted(util_hmap_get(&s->wl_map, p->wl)))
            tp->v[tp->n++] = p;
    }
    qsort(tp->v, tp->n, sizeof(*tp->v), pod_node_cmp);
    return ERR_OK;
}

/* What the bound TAS pods on n use of `res`. */
static qnano_t tas_pods_use(const tas_pods_t *tp, const snode_t *n, int res, int pods)
{
    size_t lo = 0, hi = tp->n;
    qnano_t sum = 0;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if ((uintptr_t)tp->v[mid]->node < (uintptr_t)n)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (; lo < tp->n && tp->v[lo]->node == n; lo++)
        sum += res == pods ? (qnano_t)1000000000 : nq_get(tp->v[lo]->req, tp->v[lo]->nreq, res);
    return sum;
}

/* n's free capacity of rid[0..nres) into fv as a TAS placement reads it: allocatable less what
 * is used ("pods" not listed: no limit); with `empty` (a simulate-empty pass) less only what is
 * not topology-aware usage. */
static void node_free(const snode_t *n, const int *rid, size_t nres, int pods,
                      const tas_pods_t *empty, qnano_t *fv)
{
    for (size_t r = 0; r < nres; r++) {
        bool listed = rid[r] != SCHED__NONE && nq_has(n->alloc, n->nalloc, rid[r]);
        qnano_t alloc = listed ? nq_get(n->alloc, n->nalloc, rid[r]) : 0;
        qnano_t used = rid[r] == SCHED__NONE ? 0 : nq_get(n->used, n->nused, rid[r]);
        if (empty != NULL && rid[r] != SCHED__NONE)
            used -=
                nq_get(n->tas_used, n->ntas_used, rid[r]) + tas_pods_use(empty, n, rid[r], pods);
        if (rid[r] == pods && !listed)
            fv[r] = (qnano_t)INT32_MAX * 1000000000; /* no pod limit listed */
        else
            fv[r] = alloc > used ? alloc - used : 0;
    }
}

/* One pod set (pi, its TAS flavor `flavor`) of a placement by sched__tas_place_all, with its
 * group's leader pod set li (SIZE_MAX: none; Kueue's podset groups, tas.c tas_place_group(): the
 * nodes are the ones pi selects, the leader's request is its own) into *lout: earlier[j] is pod
 * set j's assignment when it is placed already (NULL when not); `empty` the TAS pods of a
 * simulate-empty pass, NULL for free capacity. */
static err_t tas_place_one(const sched_t *s, const wl_t *w, const assignment_t *as, size_t pi,
                           size_t li, int flavor, const tas_pods_t *empty,
                           topology_assignment_t *const *earlier, topology_assignment_t **out,
                           topology_assignment_t **lout, char **why)
{
    const ps_assign_t *p = &as->ps[pi];
    const wps_t *ps = &w->ps[pi], *lps = li == SIZE_MAX ? NULL : &w->ps[li];
    const flavor_rec_t *f = s->flavors[flavor];
    const topo_rec_t *t = sched__topo_find(s, f->topology);
    const sched_nodes_t *ns = s->nodes;
    int pods = sched__find_res(s, "pods");
    size_t nres = 0, nn = 0, nl;
    const char **res = NULL, **vals = NULL;
    qnano_t *per = NULL, *free_ = NULL, *lper = NULL;
    int *rid = NULL;
    tas_node_t *nodes = NULL;
    const snode_t **src = NULL;
    topology_assignment_t *a = NULL, *la = NULL;
    size_t nmax = ps->nreqs + (lps != NULL ? lps->nreqs : 0) + 1;
    err_msg_t msg = {{0}};
    err_t rc = ERR_NOMEM;

    *out = NULL;
    if (lout != NULL)
        *lout = NULL;
    *why = NULL;
    if (t == NULL) {
        *why = util_asprintf("there is no Topology \"%s\" for TAS flavor \"%s\"",
                             f->topology ? f->topology : "", f->name);
        return *why == NULL ? ERR_NOMEM : ERR_INVALID;
    }
    nl = t->nlevels;
    /* resources: the pod's non-zero requests (sorted by name), the leader's others, then "pods" */
    res = calloc(nmax, sizeof(*res));
    rid = calloc(nmax, sizeof(*rid));
    per = calloc(nmax, sizeof(*per));
    lper = calloc(nmax, sizeof(*lper));
    if (res == NULL || rid == NULL || per == NULL || lper == NULL)
        goto out;
    nres = sched__tas_resources(s, ps, lps, res, rid, per);
    for (size_t r = 0; lps != NULL && r < nres; r++)
        lper[r] = per_pod_of(lps, rid[r], pods);
    if (ns != NULL && ns->nlive > 0) {
        nodes = calloc(ns->nlive, sizeof(*nodes));
        vals = calloc(ns->nlive * nl, sizeof(*vals));
        free_ = calloc(ns->nlive * nres, sizeof(*free_));
        src = calloc(ns->nlive, sizeof(*src));
        if (nodes == NULL || vals == NULL || free_ == NULL || src == NULL)
            goto out;
        for (size_t k = 0; k < ns->nlive; k++) {
            const snode_t *n = ns->live[k];
            qnano_t *fv = &free_[nn * nres];
            if (!node_for(s, n, ps, p))
                continue;
            for (size_t l = 0; l < nl; l++)
                vals[nn * nl + l] = label_of(n, t->levels[l]);
            node_free(n, rid, nres, pods, empty, fv);
            nodes[nn].values = &vals[nn * nl];
            nodes[nn].free = fv;
            src[nn++] = n;
        }
        for (size_t j = 0; j < as->nps && j < w->nps; j++)
            if (j != pi && j != li && earlier[j] != NULL &&
                sched__tas_flavor(s, &as->ps[j]) == flavor)
                assumed_sub(s, &w->ps[j], earlier[j], src, free_, nn, rid, nres);
    }
    tas_input_t in = {.topology = t->name,
                      .levels = (const char *const *)t->levels,
                      .nlevels = nl,
                      .resources = res,
                      .nres = nres,
                      .nodes = nodes,
                      .nnodes = nn};
    tas_request_t req = sched__tas_request(ps, p->count, per, SCHED_LAYERS_ALL);
    if ((a = calloc(1, sizeof(*a))) == NULL ||
        (lps != NULL && (la = calloc(1, sizeof(*la))) == NULL))
        goto out;
    rc = tas_place_group(&in, &req, lps != NULL ? lper : NULL, a, la, &msg);
    if (rc == ERR_OK) {
        *out = a;
        a = NULL;
        if (lps != NULL) {
            *lout = la;
            la = NULL;
        }
    } else if (rc != ERR_NOMEM && (*why = strdup(msg.text)) == NULL) {
        rc = ERR_NOMEM;
    }
out:
    free(a);
    free(la);
    free(res);
    free(rid);
    free(per);
    free(lper);
    free(nodes);
    free(vals);
    free(free_);
    free(src);
    return rc;
}

/* Free the n assignments of topo[] and set them NULL. */
static void topos_clear(topology_assignment_t **topo, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        topology_assignment_fini(topo[i]);
        free(topo[i]);
        topo[i] = NULL;
    }
}

/* Is pod set i of w (with pods in a) placed topology-aware on TAS flavor f, in a group? */
static bool tas_grouped(const sched_t *s, const cq_t *cq, const wl_t *w, const assignment_t *a,
                        size_t i, int f)
{
    return a->ps[i].count > 0 && w->ps[i].tas_group != NULL &&
           sched__tas_requested(s, cq, &w->ps[i]) && sched__tas_flavor(s, &a->ps[i]) == f;
}

/*
 * Kueue's podset groups (FindTopologyAssignmentsForFlavor: the TAS requests of one flavor grouped
 * by podset-group-name, each group placed at its first pod set): pod set i's partner j, the other
 * pod set of its group on the same TAS flavor, and which of the two is the leader (Kueue's
 * findLeaderAndWorkers: the one with fewer pods, the second on a tie). A group is placed together
 * only as validation allows it: exactly two pod sets, the leader of one pod; otherwise (a
 * Workload written by hand) each is placed alone. *partner = SIZE_MAX when i is not grouped.
 */
static void tas_partner(const sched_t *s, const cq_t *cq, const wl_t *w, const assignment_t *a,
                        size_t i, int f, size_t *partner, size_t *leader)
{
    size_t n = 0, j = SIZE_MAX, first, second;

    *partner = *leader = SIZE_MAX;
    if (!tas_grouped(s, cq, w, a, i, f))
        return;
    for (size_t k = 0; k < a->nps && k < w->nps; k++) {
        if (k == i || !tas_grouped(s, cq, w, a, k, f) ||
            strcmp(w->ps[k].tas_group, w->ps[i].tas_group) != 0)
            continue;
        j = k;
        n++;
    }
    if (n != 1)
        return;
    first = i < j ? i : j;
    second = i < j ? j : i;
    *leader = a->ps[second].count > a->ps[first].count ? first : second;
    if (a->ps[*leader].count != 1)
        return;
    *partner = j;
}

/* Place every TAS pod set of w under a into topo[] (sched__tas_place_all's search). */
static err_t place_all(const sched_t *s, const cq_t *cq, const wl_t *w, const assignment_t *a,
                       bool empty, topology_assignment_t **topo, size_t *failed, char **why)
{
    tas_pods_t tp = {NULL, 0};
    err_t rc = ERR_OK;

    if (empty && tas_pods_index(s, &tp) != ERR_OK)
        return ERR_NOMEM;
    for (size_t i = 0; i < a->nps && i < w->nps && rc == ERR_OK; i++) {
        const ps_assign_t *p = &a->ps[i];
        size_t j, li, wi = i;
        int f;
        if (p->count == 0 || !sched__tas_requested(s, cq, &w->ps[i]))
            continue;
        f = sched__tas_flavor(s, p);
        tas_partner(s, cq, w, a, i, f, &j, &li);
        if (j != SIZE_MAX && j < i)
            continue; /* placed with its group's first pod set */
        *failed = i;
        if (f == SCHED__NONE) {
            /* Kueue's ErrNoTASFlavorAssigned: the pod set's resources got no TAS flavor */
            *why = util_asprintf("no topology-aware flavor assigned");
            rc = *why == NULL ? ERR_NOMEM : ERR_NOT_FOUND;
            break;
        }
        if (j == SIZE_MAX)
            li = SIZE_MAX;
        else if (li == i)
            wi = j;
        rc = tas_place_one(s, w, a, wi, li, f, empty ? &tp : NULL, topo, &topo[wi],
                           li == SIZE_MAX ? NULL : &topo[li], why);
        if (rc == ERR_OK)
            *failed = SIZE_MAX;
        else if (rc != ERR_NOMEM)
            rc = ERR_CONFLICT;
    }
    free(tp.v);
    return rc;
}

err_t sched__tas_place_all(const sched_t *s, const cq_t *cq, const wl_t *w, const assignment_t *a,
                           bool empty, assignment_t *keep, size_t *failed, char **why)
{
    topology_assignment_t **topo = calloc(a->nps ? a->nps : 1, sizeof(*topo));
    err_t rc;

    *failed = SIZE_MAX;
    *why = NULL;
    if (topo == NULL)
        return ERR_NOMEM;
    rc = place_all(s, cq, w, a, empty, topo, failed, why);
    for (size_t i = 0; rc == ERR_OK && keep != NULL && i < a->nps; i++) {
        if (topo[i] == NULL)
            continue;
        topology_assignment_fini(keep->ps[i].topo);
        free(keep->ps[i].topo);
        keep->ps[i].topo = topo[i];
        topo[i] = NULL;
    }
    topos_clear(topo, a->nps);
    free(topo);
    return rc;
}

/* ---- topology-aware preemption ---------------------------------------------------------------
 *
 * Kueue's preemption search removes each candidate from its snapshot, TAS usage included, and
 * asks whether the preemptor is placed then (preemption.go workloadFits, with the TAS requests).
 * Here a candidate's use of the nodes is the engine's placement of its pods (the simulator, and
 * the operator until the pods bind) and its bound pods (the operator's Pods, by workload key):
 * both are taken off the nodes for one check and put back, exactly (integer sums), so the nodes
 * are as before. The bound pods of admitted workloads are indexed by workload once per search.
 */

static int bound_cmp(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t)((const tas_bound_t *)a)->w,
              y = (uintptr_t)((const tas_bound_t *)b)->w;

    return x < y ? -1 : x > y;
}

static err_t bound_index(const sched_t *s, tas_pre_t *tp)
{
    const sched_nodes_t *ns = s->nodes;
    size_t n = 0;

    tp->indexed = true;
    if (ns == NULL || ns->npods == 0)
        return ERR_OK;
    tp->bound = malloc(ns->npods * sizeof(*tp->bound));
    if (tp->bound == NULL) {
        tp->indexed = false;
        return ERR_NOMEM;
    }
    for (size_t i = 0; i < ns->npods; i++) {
        const wl_t *w = ns->pods[i]->wl != NULL ? util_hmap_get(&s->wl_map, ns->pods[i]->wl) : NULL;
        if (w != NULL && w->acq != NULL)
            tp->bound[n++] = (tas_bound_t){w, ns->pods[i]};
    }
    tp->nbound = n;
    /* grouped by workload; the order inside a group does not matter (sums) */
    qsort(tp->bound, n, sizeof(*tp->bound), bound_cmp);
    return ERR_OK;
}

/* Take w's node usage off the nodes (sign -1) or put it back (+1); never fails (the entries
 * exist: they hold the usage being moved). */
static void wl_nodes_apply(sched_t *s, const tas_pre_t *tp, const wl_t *w, int sign)
{
    size_t lo = 0, hi = tp->nbound;

    for (size_t i = 0; i < w->nplace; i++)
        place_apply(s, w, &w->place[i], sign);
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if ((uintptr_t)tp->bound[mid].w < (uintptr_t)w)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (; lo < tp->nbound && tp->bound[lo].w == w; lo++)
        pod_apply(s, tp->bound[lo].p, sign);
}

err_t sched__tas_fits_after(sched_t *s, tas_pre_t *tp, const targets_t *removed, bool *fits)
{
    size_t failed;
    char *why = NULL;
    err_t rc;

    if (!tp->indexed && bound_index(s, tp) != ERR_OK)
        return ERR_NOMEM;
    for (size_t i = 0; i < removed->len; i++)
        wl_nodes_apply(s, tp, removed->items[i].w, -1);
    rc = sched__tas_place_all(s, tp->cq, tp->w, tp->a, false, NULL, &failed, &why);
    for (size_t i = removed->len; i-- > 0;)
        wl_nodes_apply(s, tp, removed->items[i].w, +1);
    free(why);
    if (rc == ERR_NOMEM)
        return ERR_NOMEM;
    *fits = rc == ERR_OK;
    return ERR_OK;
}

void sched__tas_pre_fini(tas_pre_t *tp)
{
    free(tp->bound);
    tp->bound = NULL;
    tp->nbound = 0;
    tp->indexed = false;
}

/* Count the pods of podset pi on the nodes of ta's domains (first fit inside a domain; a pod
 * that fits no node of its domain goes on its first node, as the assignment says it runs
 * there). ERR_CONFLICT when a domain has no node of the pod set at all. */
static err_t place_topology(sched_t *s, wl_t *w, size_t pi, const ps_assign_t *p,
                            const topology_assignment_t *ta, size_t *cap)
{
    sched_nodes_t *ns = s->nodes;
    const wps_t *ps = &w->ps[pi];

    for (size_t d = 0; d < ta->ndomains; d++) {
        int64_t left = ta->counts[d];
        snode_t *first = NULL;
        for (size_t k = 0; ns != NULL && k < ns->nlive && left > 0; k++) {
            snode_t *n = ns->live[k];
            int64_t fit;
            if (!in_domain(n, ta, d) || !node_for(s, n, ps, p))
                continue;
            if (first == NULL)
                first = n;
            fit = fit_count(s, n, ps);
            if (fit <= 0)
                continue;
            if (fit > left)
                fit = left;
            if (place_one(s, w, cap, n, pi, (int32_t)fit) != ERR_OK)
                return ERR_NOMEM;
            left -= fit;
        }
        if (left > 0 && first == NULL && ta->nlevels > 0 &&
            strcmp(ta->levels[ta->nlevels - 1], TAS_HOSTNAME_LABEL) == 0) {
            /* a node not known (yet): named by its hostname, counted when it comes (an
             * operator restart may read Workloads before Nodes) */
            first = node_rec(s, ta->values[d * ta->nlevels + ta->nlevels - 1]);
            if (first == NULL)
                return ERR_NOMEM;
        }
        if (left > 0 && first == NULL)
            return ERR_CONFLICT;
        if (left > 0 && place_one(s, w, cap, first, pi, (int32_t)left) != ERR_OK)
            return ERR_NOMEM;
    }
    return ERR_OK;
}

err_t sched__nodes_place_admission(sched_t *s, wl_t *w)
{
    size_t cap = 0;
    const admission_t *adm = &w->adm;

    for (size_t i = 0; i < adm->nassignments; i++) {
        const pod_set_assignment_t *pa = &adm->assignments[i];
        int ids[64];
        ps_assign_t p = {.flavor = ids};
        size_t pi = 0;
        err_t rc;
        if (pa->topology == NULL || pa->name == NULL)
            continue;
        while (pi < w->nps && strcmp(w->ps[pi].name, pa->name) != 0)
            pi++;
        if (pi == w->nps)
            continue;
        for (size_t k = 0; k < pa->flavors.len && p.nreqs < 64; k++) {
            const flavor_rec_t *f = util_hmap_get(&s->flavor_map, pa->flavors.items[k].value);
            if (f != NULL)
                ids[p.nreqs++] = f->id;
        }
        if (nodes_get(s) == NULL)
            return ERR_NOMEM;
        rc = place_topology(s, w, pi, &p, pa->topology, &cap);
        if (rc == ERR_NOMEM)
            return ERR_NOMEM;
        /* ERR_CONFLICT: a domain above the hostname level with no node known: not counted */
    }
    return ERR_OK;
}

/* ---- for failed-node replacement (replace.c) ------------------------------------------------ */

bool sched__node_for(const sched_t *s, const snode_t *n, const wps_t *ps, const ps_assign_t *p)
{
    return node_for(s, n, ps, p);
}

void sched__node_tas_free(const snode_t *n, const int *rid, size_t nres, int pods, qnano_t *fv)
{
    node_free(n, rid, nres, pods, NULL, fv);
}

size_t sched__tas_resources(const sched_t *s, const wps_t *ps, const wps_t *lps, const char **res,
                            int *rid, qnano_t *per)
{
    int pods = sched__find_res(s, "pods");
    size_t nres = 0;

    for (size_t r = 0; r < ps->nreqs; r++) {
        if (ps->reqs[r].res == pods || ps->reqs[r].per_pod <= 0)
            continue;
        res[nres] = s->res_names[ps->reqs[r].res];
        rid[nres] = ps->reqs[r].res;
        per[nres++] = ps->reqs[r].per_pod;
    }
    for (size_t r = 0; lps != NULL && r < lps->nreqs; r++) {
        size_t k = 0;
        if (lps->reqs[r].res == pods || lps->reqs[r].per_pod <= 0)
            continue;
        while (k < nres && rid[k] != lps->reqs[r].res)
            k++;
        if (k == nres) {
            res[nres] = s->res_names[lps->reqs[r].res];
            rid[nres] = lps->reqs[r].res;
            per[nres++] = 0;
        }
    }
    res[nres] = "pods";
    rid[nres] = pods;
    per[nres++] = (qnano_t)1000000000;
    return nres;
}

tas_request_t sched__tas_request(const wps_t *ps, int32_t count, const qnano_t *per, int layers)
{
    tas_request_t req = {.count = count, .per_pod = per, .slice_size = 1};

    switch (ps->tas_mode) {
    case TASREQ_MODE_REQUIRED:
        req.mode = TAS_MODE_REQUIRED;
        req.level = ps->tas_level;
        break;
    case TASREQ_MODE_PREFERRED:
        req.mode = TAS_MODE_PREFERRED;
        req.level = ps->tas_level;
        break;
    default: /* unconstrained, slices only, or implied by a TAS-only ClusterQueue */
        req.mode = TAS_MODE_UNCONSTRAINED;
        break;
    }
    if (ps->tas_slice_level == NULL || layers == SCHED_LAYERS_NONE)
        return req;
    if (layers > 0 && (size_t)layers <= ps->tas_ninner) {
        req.slice_level = ps->tas_inner_level[layers - 1];
        req.slice_size = ps->tas_inner_size[layers - 1];
        return req;
    }
    req.slice_level = ps->tas_slice_level;
    req.slice_size = ps->tas_slice_size;
    if (layers == SCHED_LAYERS_ALL) {
        for (size_t k = 0; k < ps->tas_ninner; k++) {
            req.inner[k].level = ps->tas_inner_level[k];
            req.inner[k].size = ps->tas_inner_size[k];
        }
        req.ninner = ps->tas_ninner;
    }
    return req;
}

err_t sched__nodes_place_topology(sched_t *s, wl_t *w, size_t pi, const ps_assign_t *p,
                                  const topology_assignment_t *ta)
{
    size_t cap = w->nplace; /* the array holds at least that many: util_grow reallocates */

    if (nodes_get(s) == NULL)
        return ERR_NOMEM;
    return place_topology(s, w, pi, p, ta, &cap);
}

void sched__nodes_unplace_from(sched_t *s, wl_t *w, size_t base)
{
    while (w->nplace > base)
        place_apply(s, w, &w->place[--w->nplace], -1);
}

void sched__nodes_unplace_on(sched_t *s, wl_t *w, const snode_t *n)
{
    size_t k = 0;

    for (size_t i = 0; i < w->nplace; i++) {
        if (w->place[i].node == n)
            place_apply(s, w, &w->place[i], -1);
        else
            w->place[k++] = w->place[i];
    }
    w->nplace = k;
}

bool sched__nodes_known(const sched_t *s)
{
    return s->nodes != NULL && s->nodes->nlive > 0;
}

/* ---- clone -------------------------------------------------------------------------------------
 */

err_t sched__nodes_clone(sched_t *d, const sched_t *s)
{
    const sched_nodes_t *src = s->nodes;

    if (src == NULL)
        return ERR_OK;
    for (size_t i = 0; i < src->nrecs; i++) {
        const snode_t *o = src->recs[i];
        snode_t *n = node_rec(d, o->name);
        if (n == NULL || sched__kv_copy(&n->labels, &o->labels) != ERR_OK ||
            sched__taints_copy(&n->taints, o->taints, o->ntaints) != ERR_OK)
            return ERR_NOMEM;
        n->ntaints = o->ntaints;
        if (o->nalloc > 0 && (n->alloc = malloc(o->nalloc * sizeof(nq_t))) == NULL)
            return ERR_NOMEM;
        if (o->nalloc > 0)
            memcpy(n->alloc, o->alloc, o->nalloc * sizeof(nq_t));
        n->nalloc = o->nalloc;
        if (o->nused > 0 && (n->used = malloc(o->nused * sizeof(nq_t))) == NULL)
            return ERR_NOMEM;
        if (o->nused > 0)
            memcpy(n->used, o->used, o->nused * sizeof(nq_t));
        n->nused = n->cused = o->nused;
        if (o->ntas_used > 0 && (n->tas_used = malloc(o->ntas_used * sizeof(nq_t))) == NULL)
            return ERR_NOMEM;
        if (o->ntas_used > 0)
            memcpy(n->tas_used, o->tas_used, o->ntas_used * sizeof(nq_t));
        n->ntas_used = n->ctas_used = o->ntas_used;
        n->npods = o->npods;
        n->unschedulable = o->unschedulable;
        n->ready = o->ready;
        n->exists = o->exists;
    }
    if (nodes_get(d) == NULL)
        return ERR_NOMEM;
    d->nodes->live = malloc((src->nlive ? src->nlive : 1) * sizeof(snode_t *));
    if (d->nodes->live == NULL)
        return ERR_NOMEM;
    d->nodes->clive = src->nlive ? src->nlive : 1;
    for (size_t i = 0; i < src->nlive; i++)
        d->nodes->live[d->nodes->nlive++] = util_hmap_get(&d->nodes->map, src->live[i]->name);
    for (size_t i = 0; i < src->npods; i++) {
        const spod_t *o = src->pods[i];
        spod_t *p = calloc(1, sizeof(*p));
        if (p == NULL)
            return ERR_NOMEM;
        if (util_grow((void **)&d->nodes->pods, &d->nodes->cpods, d->nodes->npods + 1,
                      sizeof(spod_t *)) != ERR_OK) {
            free(p);
            return ERR_NOMEM;
        }
        p->idx = d->nodes->npods;
        d->nodes->pods[d->nodes->npods++] = p;
        p->node = util_hmap_get(&d->nodes->map, o->node->name);
        if (util_strdup(o->key, &p->key) != ERR_OK || util_strdup(o->wl, &p->wl) != ERR_OK ||
            (o->nreq > 0 && (p->req = malloc(o->nreq * sizeof(nq_t))) == NULL))
            return ERR_NOMEM;
        if (o->nreq > 0)
            memcpy(p->req, o->req, o->nreq * sizeof(nq_t));
        p->nreq = o->nreq;
        if (util_hmap_put(&d->nodes->pod_map, p->key, p, NULL) != ERR_OK)
            return ERR_NOMEM;
    }
    return ERR_OK;
}

err_t sched__wl_place_clone(const sched_t *d, wl_t *c, const wl_t *s)
{
    c->place = NULL;
    c->nplace = 0;
    if (s->nplace == 0)
        return ERR_OK;
    c->place = malloc(s->nplace * sizeof(wplace_t));
    if (c->place == NULL)
        return ERR_NOMEM;
    for (size_t i = 0; i < s->nplace; i++) {
        c->place[i] = s->place[i];
        c->place[i].node = util_hmap_get(&d->nodes->map, s->place[i].node->name);
    }
    c->nplace = s->nplace;
    return ERR_OK;
}

/* ---- queries ------------------------------------------------------------------------------------
 */

size_t sched_node_count(const sched_t *s)
{
    return s->nodes != NULL ? s->nodes->nlive : 0;
}

static void info_of(const snode_t *n, sched_node_info_t *out)
{
    out->name = n->name;
    out->labels = &n->labels;
    out->taints = n->taints;
    out->ntaints = n->ntaints;
    out->unschedulable = n->unschedulable;
    out->ready = n->ready;
    out->pods = n->npods;
}

err_t sched_node_at(const sched_t *s, size_t i, sched_node_info_t *out)
{
    if (i >= sched_node_count(s))
        return ERR_NOT_FOUND;
    info_of(s->nodes->live[i], out);
    return ERR_OK;
}

err_t sched_node_find(const sched_t *s, const char *name, size_t *index)
{
    bool found = false;
    size_t at;

    if (s->nodes == NULL)
        return ERR_NOT_FOUND;
    at = live_pos(s->nodes, name, &found);
    if (!found)
        return ERR_NOT_FOUND;
    *index = at;
    return ERR_OK;
}

void sched_node_resource(const sched_t *s, size_t i, const char *resource, sched_node_res_t *out)
{
    const snode_t *n;
    int res;

    memset(out, 0, sizeof(*out));
    if (i >= sched_node_count(s) || (res = sched__find_res(s, resource)) == SCHED__NONE)
        return;
    n = s->nodes->live[i];
    out->allocatable = nq_get(n->alloc, n->nalloc, res);
    out->used = nq_get(n->used, n->nused, res);
    out->free = out->allocatable > out->used ? out->allocatable - out->used : 0;
    out->listed = nq_has(n->alloc, n->nalloc, res);
}

int64_t sched_node_pods_fit(const sched_t *s, size_t i, const resource_list_t *per_pod)
{
    const snode_t *n;
    int64_t best = INT64_MAX;
    sched_node_res_t r;

    if (i >= sched_node_count(s))
        return 0;
    n = s->nodes->live[i];
    for (size_t k = 0; per_pod != NULL && k < per_pod->len; k++) {
        qnano_t want = per_pod->items[k].value.nano;
        if (want <= 0 || strcmp(per_pod->items[k].name, "pods") == 0)
            continue;
        sched_node_resource(s, i, per_pod->items[k].name, &r);
        if (r.free < want)
            return 0;
        if ((int64_t)(r.free / want) < best)
            best = (int64_t)(r.free / want);
    }
    sched_node_resource(s, i, "pods", &r);
    if (r.listed && (int64_t)(r.free / 1000000000) < best)
        best = (int64_t)(r.free / 1000000000);
    (void)n;
    return best;
}

bool sched_node_selected(const sched_t *s, size_t i, const char *flavor,
                         const toleration_t *tolerations, size_t ntolerations)
{
    const flavor_rec_t *f;

    if (i >= sched_node_count(s))
        return false;
    f = util_hmap_get(&s->flavor_map, flavor);
    if (f == NULL || !f->exists)
        return false;
    return flavor_takes(f, s->nodes->live[i], tolerations, ntolerations);
}

err_t sched_flavor_nodes(const sched_t *s, const char *flavor, const char *resource,
                         sched_flavor_nodes_t *out)
{
    const flavor_rec_t *f = util_hmap_get(&s->flavor_map, flavor);

    memset(out, 0, sizeof(*out));
    if (f == NULL || !f->exists)
        return ERR_NOT_FOUND;
    for (size_t i = 0; i < sched_node_count(s); i++) {
        const snode_t *n = s->nodes->live[i];
        sched_node_res_t r;
        if (!selector_map_matches(&f->node_labels, &n->labels))
            continue;
        out->nodes++;
        sched_node_resource(s, i, resource, &r);
        out->allocatable += r.allocatable;
        if (!sched__node_selectable(n))
            continue;
        out->schedulable++;
        out->free += r.free;
        if (r.free > out->largest_free)
            out->largest_free = r.free;
    }
    return ERR_OK;
}

void sched_workload_placement(const sched_t *s, const char *key, sched_place_cb cb, void *ud)
{
    const wl_t *w = util_hmap_get(&s->wl_map, key);

    for (size_t i = 0; w != NULL && i < w->nplace; i++)
        cb(ud, w->ps[w->place[i].ps].name, w->place[i].node->name, w->place[i].count);
}
